"""Parse speed and memory of kafka-dump-log text (parsers/dump_text.py), the input of `kforensics scan FILE`.

Writes a segment of --mb MB (idempotent batches of 100 records, every codec), dumps it with `kforensics dump`
(headers only, and --deep-iteration), then parses each text in a fresh process and prints text size, wall and
CPU time, MB/s, batches/s and peak RSS.

    python benchmarks/bench_dump_text.py --mb 100
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_dump_memory import write_segment  # noqa: E402

PARSE = """
import json, resource, sys, time
from kforensics.parsers.dump_text import DumpBatch, iter_dump_text
started, cpu = time.perf_counter(), time.process_time()
batches = other = 0
with open(sys.argv[1], "rb") as text:
    for item in iter_dump_text(text, sys.argv[1]):
        if isinstance(item, DumpBatch):
            batches += 1
        else:
            other += 1
print(json.dumps({"seconds": time.perf_counter() - started, "cpu": time.process_time() - cpu, "batches": batches, "other": other,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=100, help="segment size in MB")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kforensics-bench-") as tmp:
        segment = Path(tmp) / "bench-0" / "00000000000000000000.log"
        segment.parent.mkdir()
        write_segment(segment, args.mb << 20)
        print(f"segment: {segment.stat().st_size / 1e6:.0f} MB")
        for mode, options in (("headers", []), ("deep", ["--deep-iteration"])):
            text = Path(tmp) / f"{mode}.txt"
            with text.open("wb") as out:
                subprocess.run([sys.executable, "-m", "kforensics", "dump", *options, str(segment)], stdout=out,
                               check=False)
            done = subprocess.run([sys.executable, "-c", PARSE, str(text)], capture_output=True, text=True,
                                  check=True)
            result = json.loads(done.stdout)
            size = text.stat().st_size / 1e6
            print(f"{mode:8s} text {size:8.1f} MB  {result['seconds']:6.1f} s ({result['cpu']:.1f} s CPU)  "
                  f"{size / result['seconds']:6.1f} MB/s  "
                  f"{result['batches'] / result['seconds']:9.0f} batches/s  peak RSS {result['peak_rss_mb']:.0f} MB  "
                  f"({result['batches']} batches, {result['other']} other items)")


if __name__ == "__main__":
    main()
