"""kforensics export of one partition: records per second and peak memory, per format and isolation.

    python benchmarks/bench_export.py [--records N]

Generates (once, under benchmarks/data) a partition dir `bench-<N>/bench-0` holding bench_parser.py's mixed-codec
segment, then runs `kforensics export` on it in a fresh process per case (the page cache warm) and prints the
rate and the peak RSS (bounded memory: it must not grow with the partition).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_parser import DATA, generate  # noqa: E402

CHILD = ("import resource, sys\nfrom kforensics.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit:\n"
         "    pass\nprint(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n")


def run(args: list[str]) -> tuple[float, float]:
    """(seconds, peak RSS in MB) of one export in its own process."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", CHILD, "export", *args], check=True, capture_output=True, text=True)
    return time.perf_counter() - started, int(done.stderr.strip().splitlines()[-1]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=500_000)
    args = parser.parse_args()
    root = DATA / f"bench-{args.records}"
    pdir = root / "bench-0"
    segment = pdir / f"{0:020d}.log"
    if not segment.exists():
        pdir.mkdir(parents=True, exist_ok=True)
        generate(segment, args.records)
    size = segment.stat().st_size
    print(f"{segment}: {size / 1e6:.0f} MB, {args.records:,} records")
    print(f"{'case':<34}{'seconds':>9}{'records/s':>12}{'MB/s':>8}{'peak RSS MB':>13}")
    with tempfile.TemporaryDirectory(prefix="kforensics-bench-") as tmp:
        for fmt in ("jsonl", "parquet", "kcat"):
            for isolation in ("read_uncommitted", "read_committed"):
                out = os.path.join(tmp, f"out.{fmt}.{isolation}")
                seconds, rss = run([str(root), "--topic", "bench", "--partition", "0", "--format", fmt,
                                    "--isolation", isolation, "--out", out])
                print(f"{fmt + ' ' + isolation:<34}{seconds:>9.1f}{args.records / seconds:>12,.0f}"
                      f"{size / 1e6 / seconds:>8.1f}{rss:>13.0f}")


if __name__ == "__main__":
    main()
