"""Parser, dump and executor throughput on one ~200 MB segment, side by side with peers (a script, not a test).

Generates (once, under benchmarks/data/, not committed) a segment of ~2M records in mixed codecs from
idempotent and transactional producers, written by kafka-python's builder, then measures each case in its
own process on the same file (page cache warm), and prints the table of issue 15 with its targets:

  raw read                   sequential 1 MiB reads of the file
  ours headers+CRC           LogFile.batches(): every header as a RecordBatch, CRC-32C over every batch (compiled)
  ours deep                  LogFile.records() for every batch: every record's offset, timestamp, key, value, headers
  pure headers+CRC / deep    the same with KFORENSICS_PURE_PYTHON=1 (the reference reader)
  kafka-python               kafka.record.MemoryRecords (pure Python), every record
  aiokafka                   aiokafka.record.MemoryRecords (Cython), every record
  dump x10                   `kforensics dump FILE x10` (headers + CRC, text) to a file, start-up included
  dump deep text / json      `kforensics dump --deep-iteration [--json] FILE` to a file, start-up included
  executor batch rows        spark/read.py segment_rows on the file, one core (records covered per second)
  executor record rows       spark/read.py record_rows (content hashes) asked for every batch of the file, one core

    python benchmarks/bench_parser.py [--records 2000000] [--skip-slow] [--repeat 3]
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
import tempfile
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
    if case.startswith(("ours", "pure")):
        from kforensics.parsers.record_batch import RecordBatch, open_log
    elif case == "kafka-python":
        from kafka.record import MemoryRecords
    elif case == "aiokafka":
        from aiokafka.record.memory_records import MemoryRecords
    elif case.startswith("executor"):
        import pyarrow as pa

        from kforensics.spark import read
        from kforensics.spark import schemas as S
    import_s = time.perf_counter() - t_import
    t0 = time.perf_counter()
    if case == "raw read":
        with open(path, "rb", buffering=0) as fh:
            while fh.read(1 << 20):
                pass
    elif case.startswith(("ours", "pure")):
        deep = case.endswith("deep")
        with open_log(path) as log:
            for b in log.batches():
                if isinstance(b, RecordBatch):
                    batches += 1
                    if deep:
                        for _ in log.records(b):
                            records += 1
                    else:
                        records += b.count
    elif case.startswith("executor"):
        if case == "executor batch rows":
            task = pa.RecordBatch.from_pylist([{"task_kind": "segment", "broker": "b1", "topic": "bench",
                                                "partition": 0, "path": path, "base_offset": 0}], schema=S.TASKS)
            outputs = read.segment_rows(iter([task]))
        else:  # every batch of the file asked for (the worst case: a scan asks only for heads and tails)
            from kforensics.parsers.record_batch import RecordBatch, open_log

            with open_log(path) as log:
                wanted = [(b.position, b.size) for b in log.batches(verify_crc=False) if isinstance(b, RecordBatch)]
            task = pa.RecordBatch.from_pydict({"broker": ["b1"] * len(wanted), "topic": ["bench"] * len(wanted),
                                               "partition": [0] * len(wanted), "file": [path] * len(wanted),
                                               "position": [p for p, _ in wanted], "size": [s for _, s in wanted]})
            t0 = time.perf_counter()  # the listing above is the driver's work, not the executor's
            outputs = read.record_rows(iter([task]))
        for out in outputs:
            if case == "executor batch rows":
                counts = out.column("count").to_pylist()
                kinds = out.column("row_kind").to_pylist()
                batches += sum(1 for k in kinds if k == "batch")
                records += sum(c for c, k in zip(counts, kinds, strict=True) if k == "batch" and c)
            else:
                records += out.num_rows
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


def run_dump(case: str, path: Path, records: int, tmp: Path) -> dict:
    """A `kforensics dump` process, timed from outside (start-up included), its output to a file."""
    args = {"dump x10": [str(path)] * 10, "dump deep text": ["--deep-iteration", str(path)],
            "dump deep json": ["--deep-iteration", "--json", str(path)]}[case]
    out_file = tmp / "dump.out"
    t0 = time.perf_counter()
    with out_file.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "kforensics", "dump", *args], stdout=out,
                                stderr=subprocess.DEVNULL)
        _pid, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - t0
    size = out_file.stat().st_size
    out_file.unlink()
    copies = 10 if case == "dump x10" else 1
    return {"case": case, "seconds": elapsed, "batches": 0, "records": records * copies,
            "bytes": path.stat().st_size * copies, "peak_rss_mb": usage.ru_maxrss / 1024, "import_s": 0.0,
            "exit": os.waitstatus_to_exitcode(status), "output_mb": size / 1e6}


def _peak_rss_mb() -> float:
    """This process's peak RSS (VmHWM: unlike ru_maxrss it does not inherit the parent's before exec)."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


CASES = ["raw read", "ours headers+CRC", "ours deep", "pure headers+CRC", "pure deep", "kafka-python", "aiokafka",
         "executor batch rows", "executor record rows"]
DUMPS = ["dump x10", "dump deep text", "dump deep json"]
SLOW = {"pure deep", "kafka-python"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=2_000_000)
    parser.add_argument("--skip-slow", action="store_true", help="skip the pure-Python deep and kafka-python rows")
    parser.add_argument("--repeat", type=int, default=1, help="run each case N times, keep the fastest")
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
        if args.skip_slow and case in SLOW:
            continue
        env = {**os.environ, "KFORENSICS_PURE_PYTHON": "1" if case.startswith("pure") else "0"}
        runs = []
        for _ in range(1 if case in SLOW else args.repeat):
            out = subprocess.run([sys.executable, __file__, "--case", case, "--path", str(path)],
                                 capture_output=True, text=True, env=env)
            if out.returncode:
                runs = [{"case": case, "error": out.stderr.strip().splitlines()[-1]}]
                break
            runs.append(json.loads(out.stdout))
        rows.append(min(runs, key=lambda r: r.get("seconds", 0)))
    by = {r["case"]: r for r in rows if "error" not in r}
    n_records = by["ours deep"]["records"]
    tmp = Path(tempfile.mkdtemp(prefix="kforensics-bench-"))
    for case in DUMPS:
        rows.append(min((run_dump(case, path, n_records, tmp) for _ in range(args.repeat)),
                        key=lambda r: r["seconds"]))
    tmp.rmdir()
    by = {r["case"]: r for r in rows if "error" not in r}
    from kforensics.parsers.core import reader_description

    print(f"segment: {size_mb:.0f} MB, {n_records} records, {cpu_count()} cores, python {sys.version.split()[0]}, "
          f"{reader_description()}")
    print(f"| {'case':<22} | {'MB/s':>8} | {'batches/s':>10} | {'records/s':>11} | {'seconds':>7} | {'peak RSS MB':>11} "
          f"| {'import s':>8} |")
    print(f"|{'-' * 24}|{'-' * 10}|{'-' * 12}|{'-' * 13}|{'-' * 9}|{'-' * 13}|{'-' * 10}|")
    for r in rows:
        if "error" in r:
            print(f"| {r['case']:<22} | error: {r['error']}")
            continue
        s = r["seconds"]
        mb = r.get("bytes", path.stat().st_size) / 1e6
        print(f"| {r['case']:<22} | {mb / s:>8.0f} | {r['batches'] / s:>10.0f} | {r['records'] / s:>11.0f} | "
              f"{s:>7.2f} | {r['peak_rss_mb']:>11.0f} | {r['import_s']:>8.3f} |")

    def rate(case: str) -> float:
        return by[case]["records"] / by[case]["seconds"] if case in by else float("nan")

    raw = size_mb / by["raw read"]["seconds"]
    aio = rate("aiokafka")
    targets = [
        ("header walk + CRC (library) vs raw read", size_mb / by["ours headers+CRC"]["seconds"] / raw, 0.5),
        ("deep iteration (library) vs aiokafka", rate("ours deep") / aio, 1.0),
        ("dump --deep-iteration text vs aiokafka", rate("dump deep text") / aio, 0.5),
        ("dump --deep-iteration --json vs aiokafka", rate("dump deep json") / aio, 0.3),
        ("dump x10 (headers+CRC, text), GB/s wall", by["dump x10"]["bytes"] / by["dump x10"]["seconds"] / 1e9, 2.0),
        ("executor batch rows, M records/s", rate("executor batch rows") / 1e6, 1.5),
        ("executor record rows (hashes), M records/s", rate("executor record rows") / 1e6, 1.5),
    ]
    print()
    print("| target | measured | needed | met |")
    print("|---|---|---|---|")
    for name, value, needed in targets:
        print(f"| {name} | {value:.2f} | >= {needed} | {'yes' if value >= needed else 'NO'} |")


def cpu_count() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


if __name__ == "__main__":
    main()
