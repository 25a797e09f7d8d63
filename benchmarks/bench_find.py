"""`kforensics find --key` against `kforensics dump --deep-iteration`: records/s and peak memory (a script, not a test).

The data is bench_scan.py's scale set (benchmarks/data/scan-x<scale>, ~200 MB per scale unit: many partition dirs,
each segment a copy of one ~5 MB block of v2 batches in every codec, idempotent producers; generated when absent,
shared with bench_scan.py, not committed). One key of the block is searched, so each segment holds its copies.

  dump       `kforensics dump --deep-iteration` of the first --dump-segments segments (the yardstick: records/s)
  find, 1p   `kforensics find --key K --json` over a log dir of the same partition dirs (small: one process)
  find       `kforensics find --key K --json` over the whole set (embedded Spark, local[*]: as the scan decides)

Each row: wall time, records searched (or printed) per second, CPU seconds of the process tree, and the peak RSS of
the command (for the Spark run: the driver's Python and JVM, and the Python workers, sampled every 0.2 s as
bench_scan.py does). The copies `find` prints are counted against what the block holds.

    python benchmarks/bench_find.py [--scale 100] [--partitions 40] [--dump-segments 8]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scan import DATA, _sampled, generate  # noqa: E402


def block_facts(segment: Path) -> tuple[int, bytes, int]:
    """(records of one segment, the key searched: the first record's, how many records of the segment have it)."""
    from kforensics.parsers.record_batch import Record, RecordBatch, open_log

    records, key, copies = 0, None, 0
    with open_log(segment) as log:
        for b in log.batches():
            if not isinstance(b, RecordBatch):
                continue
            records += b.count
            for r in log.records(b):
                if isinstance(r, Record):
                    key = key if key is not None else r.key
                    copies += r.key == key
    return records, key, copies  # type: ignore[return-value]


def measured(cmd: list[str], env: dict[str, str]) -> dict:
    """Run `cmd` with stdout counted (lines) and discarded; wall seconds, lines, peak RSS (tree), CPU seconds."""
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    lines = 0
    with _sampled(proc.pid) as peaks:
        for chunk in iter(lambda: proc.stdout.read(1 << 20), b""):  # type: ignore[union-attr]
            lines += chunk.count(b"\n")
        stderr = proc.stderr.read().decode(errors="replace")  # type: ignore[union-attr]
        code = proc.wait()
    wall = time.perf_counter() - t
    if code not in (0, 1):
        raise SystemExit(f"{' '.join(cmd[:6])}... failed (exit {code}): {stderr[-2000:]}")
    return {"wall": wall, "lines": lines, **peaks}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=100, help="data multiple of ~200 MB (100: the 20 GB set)")
    parser.add_argument("--partitions", type=int, default=40, help="partition dirs per scale unit (bench_scan's)")
    parser.add_argument("--dump-segments", type=int, default=8, help="segments the dump and the 1p find read")
    args = parser.parse_args()
    root = DATA / f"scan-x{args.scale}"
    if not (root / "broker-1").exists():
        t = time.perf_counter()
        size, batches, records = generate(root, args.scale, args.partitions * args.scale)
        print(f"generated x{args.scale}: {size / 1e6:.0f} MB, {batches} batches, {records} records in "
              f"{time.perf_counter() - t:.0f}s", file=sys.stderr)
    segments = sorted(root.rglob("*.log"))
    size = sum(p.stat().st_size for p in segments)
    per_segment, key, per_segment_copies = block_facts(segments[0])
    total_records = per_segment * len(segments)
    sample = segments[:args.dump_segments]
    sample_size = sum(p.stat().st_size for p in sample)
    # the 1p input: a log dir of links to the sampled segments' partition dirs (a small input: one process)
    small = DATA / f"find-sample-x{args.scale}-{args.dump_segments}" / "broker-1"
    small.mkdir(parents=True, exist_ok=True)
    for seg in sample:
        link = small / seg.parent.name
        if not link.exists():
            link.symlink_to(seg.parent)
    env = {**os.environ, "KFORENSICS_SERVER": "off", "KFORENSICS_CACHE_DIR": str(DATA / "no-jvm-cache")}
    kforensics = [sys.executable, "-m", "kforensics"]
    load = os.getloadavg()
    print(f"x{args.scale}: {size / 1e6:.0f} MB in {len(segments)} segments, {total_records} records; key {key!r} "
          f"({per_segment_copies} per segment); load average {load[0]:.1f} at start", file=sys.stderr)
    rows = []
    dump = measured([*kforensics, "dump", "--deep-iteration", *map(str, sample)], env)
    dump_records = per_segment * len(sample)
    rows.append(("dump --deep-iteration", sample_size, dump_records, dump))
    one = measured([*kforensics, "find", f"broker-1={small}", "--key-hex", key.hex(), "--json"], env)
    assert one["lines"] == per_segment_copies * len(sample), one["lines"]
    rows.append(("find --key, one process", sample_size, dump_records, one))
    whole = measured([*kforensics, "find", f"broker-1={root / 'broker-1'}", "--key-hex", key.hex(), "--json"], env)
    assert whole["lines"] == per_segment_copies * len(segments), whole["lines"]
    rows.append(("find --key, Spark local[*]", size, total_records, whole))
    end = os.getloadavg()
    print(f"| x{args.scale} | mode | MB | wall s | records | records/s | CPU s | peak RSS MB (driver+JVM / workers) |")
    print("|---|---|---|---|---|---|---|---|")
    for mode, mb, records, r in rows:
        print(f"| | {mode} | {mb / 1e6:.0f} | {r['wall']:.1f} | {records} | {records / r['wall']:,.0f} | "
              f"{r['cpu_s']:.1f} | {r['driver_mb']:.0f} / {r['workers_mb']:.0f} |")
    ratio = (total_records / whole["wall"]) / (dump_records / dump["wall"])
    print(json.dumps({"scale": args.scale, "find_over_dump": round(ratio, 2), "cores": os.cpu_count(),
                      "load_average_start": round(load[0], 1), "load_average_end": round(end[0], 1)}))


if __name__ == "__main__":
    main()
