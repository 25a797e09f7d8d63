"""Parser throughput on one ~200 MB segment, side by side with peers (a script, not a test).

Generates (once, under benchmarks/data/, not committed) a segment of ~1.5M records in mixed codecs
from idempotent and transactional producers, written by kafka-python's builder, then measures in
separate processes on the same file (page cache warm):

  raw read            sequential 1 MiB reads of the file
  ours headers+CRC    LogFile.batches(): every header, CRC-32C over every batch
  ours deep           LogFile.records() for every batch (decompress + decode every record)
  kafka-python        kafka.record.MemoryRecords (pure Python), every record
  aiokafka            aiokafka.record.MemoryRecords (Cython), every record

    python benchmarks/bench_parser.py [--records 1500000] [--repeat 1]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import struct
import subprocess
import sys
import time
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"


def generate(path: Path, target_records: int) -> None:
    from kafka.record.default_records import DefaultRecordBatchBuilder

    rng = random.Random(7)
    block = bytearray()
    records_in_block = 0
    offset = 0
    sequences: dict[int, int] = {}
    # ~20 MB of varied batches, then repeated with patched base offsets (outside the CRC).
    while len(block) < 20 << 20:
        codec = rng.choice([0, 1, 2, 3, 4])
        pid = rng.choice([11, 12, 13, 21, 22])
        transactional = pid >= 20
        n = rng.choice([20, 50, 100, 200])
        seq = sequences.get(pid, 0)
        builder = DefaultRecordBatchBuilder(2, codec, transactional, pid, 0, seq, 1 << 30)
        for i in range(n):
            builder.append(i, timestamp=1_763_632_800_000 + offset + i, key=f"key-{rng.randrange(10**6)}".encode(),
                           value=(f'{{"id":{rng.randrange(10**9)},"v":"' + rng.randbytes(rng.randrange(20, 60)).hex()
                                  + '"}').encode(),
                           headers=[("h", b"1")] if i % 3 == 0 else [])
        sequences[pid] = seq + n
        batch = bytearray(builder.build())
        struct.pack_into(">q", batch, 0, offset)
        block += batch
        offset += n
        records_in_block += n
    copies = max(1, round(target_records / records_in_block))
    with path.open("wb") as fh:
        for c in range(copies):
            chunk = bytearray(block)
            pos = 0
            while pos < len(chunk):
                old = struct.unpack_from(">q", chunk, pos)[0]
                struct.pack_into(">q", chunk, pos, old + c * offset)
                pos += 12 + struct.unpack_from(">i", chunk, pos + 8)[0]
            fh.write(chunk)


def run_case(case: str, path: str) -> dict:
    batches = records = 0
    # Every reader's modules are imported before the clock starts: this measures iteration, not start-up
    # (importing our parser with its codecs takes tens of milliseconds, a third of a 150 MB header walk).
    t_import = time.perf_counter()
    if case.startswith("ours"):
        from kforensics.parsers.record_batch import RecordBatch, open_log
    elif case == "kafka-python":
        from kafka.record import MemoryRecords
    elif case == "aiokafka":
        from aiokafka.record.memory_records import MemoryRecords
    import_s = time.perf_counter() - t_import
    t0 = time.perf_counter()
    if case == "raw read":
        with open(path, "rb", buffering=0) as fh:
            while fh.read(1 << 20):
                pass
    elif case.startswith("ours"):
        deep = case == "ours deep"
        with open_log(path) as log:
            for b in log.batches():
                if isinstance(b, RecordBatch):
                    batches += 1
                    if deep:
                        for _ in log.records(b):
                            records += 1
                    else:
                        records += b.count
    else:
        with open(path, "rb") as fh:
            mr = MemoryRecords(fh.read())
        while mr.has_next():
            batch = mr.next_batch()
            batches += 1
            for _ in batch:
                records += 1
    elapsed = time.perf_counter() - t0
    return {"case": case, "seconds": elapsed, "batches": batches, "records": records, "peak_rss_mb": _peak_rss_mb(),
            "import_s": import_s}


def _peak_rss_mb() -> float:
    """This process's peak RSS (VmHWM: unlike ru_maxrss it does not inherit the parent's before exec)."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


CASES = ["raw read", "ours headers+CRC", "ours deep", "kafka-python", "aiokafka"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_500_000)
    parser.add_argument("--case", help=argparse.SUPPRESS)
    parser.add_argument("--path", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case:
        print(json.dumps(run_case(args.case, args.path)))
        return
    DATA.mkdir(exist_ok=True)
    path = DATA / f"bench-{args.records}.log"
    if not path.exists():
        t0 = time.perf_counter()
        generate(path, args.records)
        print(f"generated {path} in {time.perf_counter() - t0:.0f}s", file=sys.stderr)
    size_mb = path.stat().st_size / 1e6
    with open(path, "rb") as fh:  # warm the page cache
        while fh.read(1 << 24):
            pass
    rows = []
    for case in CASES:
        out = subprocess.run([sys.executable, __file__, "--case", case, "--path", str(path)], capture_output=True,
                             text=True)
        if out.returncode:
            rows.append({"case": case, "error": out.stderr.strip().splitlines()[-1]})
            continue
        rows.append(json.loads(out.stdout))
    cpu = os.cpu_count()
    print(f"segment: {size_mb:.0f} MB, {cpu} cores, python {sys.version.split()[0]}")
    print(f"| {'case':<18} | {'MB/s':>8} | {'batches/s':>10} | {'records/s':>11} | {'seconds':>7} | {'peak RSS MB':>11} "
          f"| {'import s':>8} |")
    print(f"|{'-' * 20}|{'-' * 10}|{'-' * 12}|{'-' * 13}|{'-' * 9}|{'-' * 13}|{'-' * 10}|")
    for r in rows:
        if "error" in r:
            print(f"| {r['case']:<18} | error: {r['error']}")
            continue
        s = r["seconds"]
        print(f"| {r['case']:<18} | {size_mb / s:>8.0f} | {r['batches'] / s:>10.0f} | {r['records'] / s:>11.0f} | "
              f"{s:>7.2f} | {r['peak_rss_mb']:>11.0f} | {r['import_s']:>8.3f} |")
    by = {r["case"]: r for r in rows if "error" not in r}
    if {"raw read", "ours headers+CRC", "ours deep", "kafka-python", "aiokafka"} <= set(by):
        raw = size_mb / by["raw read"]["seconds"]
        hdr = size_mb / by["ours headers+CRC"]["seconds"]
        deep = by["ours deep"]["records"] / by["ours deep"]["seconds"]
        kp = by["kafka-python"]["records"] / by["kafka-python"]["seconds"]
        aio = by["aiokafka"]["records"] / by["aiokafka"]["seconds"]
        print(f"headers+CRC = {100 * hdr / raw:.0f}% of raw read (target >= 25%); deep = {deep / kp:.1f}x "
              f"kafka-python (target >= 2x); aiokafka / deep = {aio / deep:.1f} (target <= 2)")


if __name__ == "__main__":
    main()
