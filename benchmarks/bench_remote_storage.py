"""What judging the remote tier adds to a scan (a script, not a test).

Copies the two sample brokers into a temporary folder twice: as they are, and without their
`__remote_log_metadata-*` dirs (then the listing shows no remote metadata and the remote analysis plans no
job). In one warm embedded Spark session, scans both copies alternately ROUNDS times (headers-only and full)
and prints each time and the medians: the difference is the decoding of `__remote_log_metadata`, the
remote_segments / remote_partition_deletes tables and the four remote finding checks.

    python benchmarks/bench_remote_storage.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

SAMPLE = Path(__file__).resolve().parent.parent / "sample_logs"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    from kforensics.spark.jobs import run_scan
    from kforensics.spark.session import build_session

    spark = build_session(None)
    with tempfile.TemporaryDirectory(prefix="kforensics-bench-remote-") as tmp:
        root = Path(tmp)
        sets = {}
        for name, keep_remote in (("with remote metadata", True), ("without", False)):
            inputs = []
            for broker in ("broker-1", "broker-2"):
                target = root / name.replace(" ", "_") / broker
                shutil.copytree(SAMPLE / broker, target, ignore=None if keep_remote else
                                shutil.ignore_patterns("__remote_log_metadata-*"))
                inputs.append((broker, str(target)))
            sets[name] = inputs
        for headers_only in (True, False):
            run_scan(spark, sets["without"], str(root / "warm"), headers_only=headers_only)  # warm-up
        times: dict[tuple[str, bool], list[float]] = {}
        for _ in range(args.rounds):
            for headers_only in (True, False):
                for name, inputs in sets.items():
                    started = time.perf_counter()
                    run_scan(spark, inputs, str(root / "out"), headers_only=headers_only)
                    elapsed = time.perf_counter() - started
                    times.setdefault((name, headers_only), []).append(elapsed)
                    print(f"{'headers-only' if headers_only else 'full':13} {name:22} {elapsed:6.1f} s", flush=True)
        print()
        for (name, headers_only), values in times.items():
            print(f"median {'headers-only' if headers_only else 'full':13} {name:22} {statistics.median(values):6.1f} s "
                  f"({', '.join(f'{v:.1f}' for v in values)})")
    spark.stop()


if __name__ == "__main__":
    main()
