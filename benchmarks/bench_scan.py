"""Scan throughput and memory (a script, not a test).

Generates a partition set (~200 MB, ~1.5M records over many partitions at --scale 1; not committed,
under benchmarks/data/) with kafka-python's builder, then measures in one run:

  parser         the single-process parser over the same segments (header walk + CRC-32C, no Spark)
  headers-only   kforensics scan --headers-only (embedded local Spark)
  full           kforensics scan (records decoded, content hashes)
  aiokafka       aiokafka's Cython reader decoding every record of the same segments, one process per core
                 (issue 52's yardstick at scale: a full one-shot scan <= 4x it; printed as `x aiokafka`)

with wall time split into Spark session start and job, the CPU seconds of the measured processes (`CPU s`:
the run's process tree, Python, JVM and Python workers; for the rows through the server, the server's tree while
the client runs), MB/s, batches/s, records/s, and the peak RSS of the driver (Python + its JVM) and of the Python
workers (all sampled from /proc every 0.2 s).

    python benchmarks/bench_scan.py [--scale 1] [--scale 10] [--partitions 40] [--warmup] [--server] [--sample]

The Spark runs see no class-data archive (an empty KFORENSICS_CACHE_DIR), unless --warmup: then
`kforensics warmup sample_logs/broker-1` records one first (timed) and the Spark runs map it.

--server adds two rows per scale: the `kforensics scan` command itself (headers-only, then full) while a
`kforensics serve --warm sample_logs/broker-1` runs (started once, before the first scale, timed). Their time is
the client command's wall time from exec to exit (it starts no session: no session column); their RSS is the
server's (Python + JVM, and its Python workers), sampled while the client runs.

--sample adds the two sample broker disks (sample_logs/broker-1 and broker-2: internal topics, many partitions,
two brokers, every analysis) in both modes, one-shot and, with --server, through the server. Every run also
times a bare start of the embedded session plus one trivial job (`bare session`), the yardstick of issue 26's
targets (a small one-shot full scan <= 2.5x it, through a warm server <= 0.6x it), and prints those ratios.

--floor adds a row per scale that bounds what any one-shot scan can reach with this design: a fresh embedded
session parses the segments headers-only and writes the input tables (batches, segments, txnindex, ...) as a scan
does, and runs none of the analysis (no facts table, no finding check). With --sample it adds the same for the two
sample brokers, in full mode (`full inputs, no analysis`). `bench_query_floor.py` measures the other half: what
the finding checks can cost at the least.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"


def generate(root: Path, scale: int, partitions: int) -> tuple[int, int, int]:
    """Write `partitions` partition dirs totalling ~200 MB x scale; returns (bytes, batches, records)."""
    from kafka.record.default_records import DefaultRecordBatchBuilder

    rng = random.Random(11)
    block = bytearray()
    offset = batches = records = 0
    sequences: dict[int, int] = {}
    while len(block) < (5 << 20):  # one ~5 MB block of varied batches, reused with patched offsets
        codec = rng.choice([0, 1, 2, 3, 4])
        pid = rng.choice([11, 12, 13])
        n = rng.choice([50, 100, 200])
        seq = sequences.get(pid, 0)
        builder = DefaultRecordBatchBuilder(2, codec, False, pid, 0, seq, 1 << 30)
        for i in range(n):
            builder.append(i, timestamp=1_763_632_800_000 + offset + i, key=f"k{rng.randrange(10**6)}".encode(),
                           value=rng.randbytes(rng.randrange(30, 70)).hex().encode(), headers=[])
        sequences[pid] = seq + n
        batch = bytearray(builder.build())
        struct.pack_into(">q", batch, 0, offset)
        block += batch
        offset += n
        batches += 1
        records += n
    copies = max(1, round(scale * 200e6 / len(block)))
    broker = root / "broker-1"
    broker.mkdir(parents=True, exist_ok=True)
    total = [0, 0, 0]
    for c in range(copies):
        part = broker / f"bench-{c % partitions}"
        part.mkdir(exist_ok=True)
        round_in_part = c // partitions
        base = round_in_part * offset
        chunk = bytearray(block)
        pos = 0
        while pos < len(chunk):
            struct.pack_into(">q", chunk, pos, struct.unpack_from(">q", chunk, pos)[0] + base)
            # each copy is a new producer session: bump the epoch so sequences restart legally
            struct.pack_into(">h", chunk, pos + 51, round_in_part)
            pos += 12 + struct.unpack_from(">i", chunk, pos + 8)[0]
        # producer epoch is inside the CRC: recompute it
        from crc32c import crc32c

        pos = 0
        while pos < len(chunk):
            end = pos + 12 + struct.unpack_from(">i", chunk, pos + 8)[0]
            struct.pack_into(">I", chunk, pos + 17, crc32c(bytes(chunk[pos + 21:end])))
            pos = end
        (part / f"{base:020d}.log").write_bytes(chunk)
        total[0] += len(chunk)
        total[1] += batches
        total[2] += records
    return total[0], total[1], total[2]


def _rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _children(pid: int) -> set[int]:
    """A process's children. A JVM forks its Python workers from other threads than its main one, so every
    thread's children file is read (/proc/<pid>/task/*/children)."""
    kids: set[int] = set()
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError, ValueError), open(f"/proc/{pid}/task/{task}/children") as fh:
                kids.update(int(k) for k in fh.read().split())
    return kids


def _descendants(pid: int) -> list[int]:
    """All processes below `pid`; reading only the children files keeps the sampler from taking a share of the
    2 cores it measures (walking all of /proc did)."""
    out, todo = [], [pid]
    while todo:
        kids = sorted(_children(todo.pop()))
        out += kids
        todo += kids
    return out


def _tree_mb(pid: int, descendants: list[int]) -> tuple[float, float]:
    """RSS in MB of a driver (its Python process plus the JVM it started) and of its Python workers (among
    `descendants`). Only the JVM that is the driver's direct child counts: a process the JVM spawns (jspawnhelper,
    "java" in its path) shares the JVM's pages until it execs, and counting it would count the JVM twice."""
    workers = [k for k in descendants if "pyspark" in _cmdline(k) and ("daemon" in _cmdline(k)
                                                                       or "worker" in _cmdline(k))]
    driver = _rss_mb(pid) + sum(_rss_mb(k) for k in _children(pid) if "java" in _cmdline(k))
    return driver, sum(_rss_mb(k) for k in workers)


_TICKS = os.sysconf("SC_CLK_TCK")


def _tree_cpu(pid: int, descendants: list[int]) -> float:
    """CPU seconds (user + system) of `pid` and of its `descendants` that are still there, each with its reaped
    children's: a process that exited and was reaped counts in its parent's, once."""
    cpu = 0.0
    for p in (pid, *descendants):
        with contextlib.suppress(OSError, ValueError, IndexError):
            with open(f"/proc/{p}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            cpu += sum(int(f) for f in fields[11:15]) / _TICKS
    return cpu


@contextlib.contextmanager
def _sampled(pid: int) -> Iterator[dict[str, float]]:
    """The peak `_tree_mb` of `pid` while the block runs, sampled every 0.2 s, and the CPU seconds its process tree
    spent meanwhile (`cpu_s`: the largest sample, since a measured child is gone once it has exited; up to 0.2 s
    of its end is missed)."""
    peaks = {"driver_mb": 0.0, "workers_mb": 0.0, "cpu_s": 0.0}
    before = _tree_cpu(pid, _descendants(pid))
    done = threading.Event()

    def sample() -> None:
        descendants = _descendants(pid)
        driver, workers = _tree_mb(pid, descendants)
        peaks["driver_mb"], peaks["workers_mb"] = max(peaks["driver_mb"], driver), max(peaks["workers_mb"], workers)
        peaks["cpu_s"] = max(peaks["cpu_s"], _tree_cpu(pid, descendants) - before)

    def sample_until_done() -> None:
        while not done.wait(0.2):
            sample()

    thread = threading.Thread(target=sample_until_done, daemon=True)
    thread.start()
    try:
        yield peaks
    finally:
        done.set()
        thread.join()
        sample()  # the server's tree, still running


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def run_measured(cmd: list[str], env: dict[str, str]) -> tuple[dict, dict]:
    """Run a child, sampling the peak RSS of the driver (python + JVM) and of the Python workers."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    with _sampled(proc.pid) as peaks:
        out, _ = proc.communicate()
    return json.loads(out.strip().splitlines()[-1]), peaks


def _aiokafka_records(path: str) -> tuple[int, int]:
    """Batches and records of one segment, every record decoded by aiokafka (a worker of the `aiokafka` row)."""
    from aiokafka.record.memory_records import MemoryRecords

    batches = records = 0
    with open(path, "rb") as fh:
        memory = MemoryRecords(fh.read())
    while memory.has_next():
        batches += 1
        for _ in memory.next_batch():
            records += 1
    return batches, records


def child(mode: str, root: str) -> None:
    """Runs in the measured process; prints one JSON line of timings."""
    t0 = time.perf_counter()
    if mode == "aiokafka":  # the decode floor at scale: every record, as many processes as cores
        from multiprocessing import Pool

        paths = [str(p) for p in sorted(Path(root).rglob("*.log"))]
        with Pool(os.cpu_count()) as pool:
            counts = list(pool.imap_unordered(_aiokafka_records, paths, chunksize=4))
        print(json.dumps({"session_s": 0.0, "job_s": time.perf_counter() - t0,
                          "batches": sum(b for b, _ in counts), "records": sum(r for _, r in counts)}))
        return
    if mode == "parser":
        from kforensics.parsers.record_batch import RecordBatch, open_log

        batches = records = 0
        for path in sorted(Path(root).rglob("*.log")):
            with open_log(path) as log:
                for b in log.batches():
                    if isinstance(b, RecordBatch):
                        batches += 1
                        records += b.count
        print(json.dumps({"session_s": 0.0, "job_s": time.perf_counter() - t0, "batches": batches,
                          "records": records}))
        return
    from kforensics.spark.jobs import run_scan
    from kforensics.spark.session import build_session

    spark = build_session(None)
    spark.range(1).count()
    t1 = time.perf_counter()
    if mode == "bare":
        print(json.dumps({"session_s": t1 - t0, "job_s": 0.0, "batches": 0, "records": 0}))
        return
    if mode == "sample-inputs-only":  # the floor of the sample rows: parse pass and input tables, no analysis
        out = str(DATA / f"out-{mode}")
        batches, records = write_inputs(spark, [(b, os.path.join(root, b)) for b in SAMPLE_BROKERS], out,
                                        headers_only=False)
        print(json.dumps({"session_s": t1 - t0, "job_s": time.perf_counter() - t1, "batches": batches,
                          "records": records}))
        return
    if mode.startswith("sample-"):  # root: the sample_logs folder; both brokers
        out = str(DATA / f"out-{mode}")
        summary = run_scan(spark, [(b, os.path.join(root, b)) for b in SAMPLE_BROKERS], out,
                           headers_only=mode == "sample-headers-only")
        print(json.dumps({"session_s": t1 - t0, "job_s": time.perf_counter() - t1, "batches": summary.batches,
                          "records": summary.records, "findings": summary.findings}))
        return
    out = os.path.join(root, "..", f"out-{mode}")
    if mode == "inputs-only":
        batches, records = write_inputs(spark, [("broker-1", os.path.join(root, "broker-1"))], out)
        print(json.dumps({"session_s": t1 - t0, "job_s": time.perf_counter() - t1, "batches": batches,
                          "records": records}))
        return
    summary = run_scan(spark, [("broker-1", os.path.join(root, "broker-1"))], out, headers_only=mode == "headers-only")
    t2 = time.perf_counter()
    print(json.dumps({"session_s": t1 - t0, "job_s": t2 - t1, "batches": summary.batches, "records": summary.records,
                      "findings": summary.findings}))


def _written_counts(out: str | Path) -> tuple[int, int]:
    """(batches, records) of a scan's written `segments` table."""
    import pyarrow.parquet as pq

    segments = pq.read_table(f"{out}/segments", columns=["batch_count", "record_count"])
    return sum(segments.column("batch_count").to_pylist()), sum(segments.column("record_count").to_pylist())


def write_inputs(spark, inputs: list[tuple[str, str]], out: str,  # noqa: ANN001 (pyspark is not imported here)
                 headers_only: bool = True) -> tuple[int, int]:
    """The input half of a scan: `run_scan` with the analysis (and the summary over its tables) switched off, so
    the input tables are parsed and written exactly as a scan does; returns (batches, records)."""
    from unittest import mock

    from kforensics.spark import jobs

    with mock.patch.object(jobs, "analyze", return_value={}), \
            mock.patch.object(jobs.scan_output, "summarize", lambda out: jobs.scan_output.ScanSummary(out=out)):
        jobs.run_scan(spark, inputs, out, headers_only=headers_only)
    return _written_counts(out)


def start_server(env: dict[str, str]) -> tuple[subprocess.Popen, float]:
    """`kforensics serve --warm sample_logs/broker-1`, until it listens; (process, seconds it took)."""
    sample = Path(__file__).resolve().parent.parent / "sample_logs" / "broker-1"
    t = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "kforensics", "serve", "--warm", str(sample), "--idle-timeout", "0"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in proc.stderr:  # type: ignore[union-attr]
        if "listening on" in line:
            break
    else:
        raise SystemExit(f"kforensics serve did not start (exit {proc.wait()})")
    threading.Thread(target=lambda: proc.stderr.read(), daemon=True).start()  # type: ignore[union-attr]
    return proc, time.perf_counter() - t


def run_client(mode: str, root: Path, env: dict[str, str], server_pid: int,
               brokers: tuple[str, ...] = ("broker-1",)) -> tuple[dict, dict]:
    """The `kforensics scan` command, handed to the server: its wall time, and the server's peak RSS meanwhile."""
    out = DATA / f"out-server-{root.name}-{mode}"
    cmd = [sys.executable, "-m", "kforensics", "scan", *(str(root / b) for b in brokers), "--json", "--out", str(out)]
    with _sampled(server_pid) as peaks:
        t = time.perf_counter()
        proc = subprocess.run(cmd + (["--headers-only"] if mode == "headers-only" else []), env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wall = time.perf_counter() - t
    if proc.returncode not in (0, 1) or "scanning on the kforensics server" not in proc.stderr:
        raise SystemExit(f"the scan did not run on the server (exit {proc.returncode}): {proc.stderr[-2000:]}")
    batches, records = _written_counts(out)
    return {"session_s": None, "job_s": wall, "batches": batches, "records": records}, peaks


def generate_heartbeats(root: Path, records_each: int = 100_000) -> tuple[int, int, int]:
    """One partition, two producers one after the other (the second starts a minute after the first stops),
    each writing `records_each` lz4 heartbeat records that cycle over 50 keys x 2 values (issue 16's case: a
    repetitive stream that must stay silent and cost a full scan no more than twice a headers-only one)."""
    from crc32c import crc32c
    from kafka.record.default_records import DefaultRecordBatchBuilder

    part = root / "broker-1" / "heartbeats-0"
    part.mkdir(parents=True, exist_ok=True)
    out = bytearray()
    offset = batches = 0
    ts = 1_763_632_800_000
    for pid in (21, 22):
        for seq in range(0, records_each, 500):
            builder = DefaultRecordBatchBuilder(2, 3, False, pid, 0, seq, 1 << 30)  # codec 3: lz4
            for i in range(500):
                n = seq + i
                builder.append(i, timestamp=ts + n * 10, key=f"member-{n % 50}".encode(),
                               value=b"ALIVE" if (n // 50) % 2 == 0 else b"BUSY", headers=[])
            batch = bytearray(builder.build())
            struct.pack_into(">q", batch, 0, offset)
            struct.pack_into(">I", batch, 17, crc32c(bytes(batch[21:])))
            out += batch
            offset += 500
            batches += 1
        ts += records_each * 10 + 60_000
    (part / f"{0:020d}.log").write_bytes(out)
    return len(out), batches, offset


SAMPLE = Path(__file__).resolve().parent.parent / "sample_logs"
SAMPLE_BROKERS = ("broker-1", "broker-2")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, action="append", help="data multiple of ~200 MB (repeatable)")
    parser.add_argument("--partitions", type=int, default=40)
    parser.add_argument("--warmup", action="store_true", help="record a class-data archive first and use it")
    parser.add_argument("--server", action="store_true", help="also scan through a `kforensics serve` (see above)")
    parser.add_argument("--server-only", action="store_true", help="with --server: skip the parser and embedded rows")
    parser.add_argument("--floor", action="store_true", help="also time parse + input tables only (see above)")
    parser.add_argument("--heartbeats", action="store_true",
                        help="also scan the repetitive-content case: 2 producers x 100,000 lz4 heartbeat records")
    parser.add_argument("--sample", action="store_true", help="also scan the two sample broker disks (see above)")
    parser.add_argument("--repeat", type=int, default=1, help="run each sample row and the bare start this often "
                                                               "(the best time is shown)")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    cache = DATA / ("jvm-cache" if args.warmup else "no-jvm-cache")
    env = {**os.environ, "KFORENSICS_CACHE_DIR": str(cache)}
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    if args.warmup:
        t = time.perf_counter()
        sample = Path(__file__).resolve().parent.parent / "sample_logs" / "broker-1"
        subprocess.run([sys.executable, "-m", "kforensics", "warmup", str(sample)], env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        print(f"warmup (class-data archive recorded): {time.perf_counter() - t:.0f}s", file=sys.stderr)
    server = None
    if args.server:
        env["KFORENSICS_SERVER_SOCKET"] = str(DATA / "server.sock")
        env.pop("KFORENSICS_SERVER", None)
        server, seconds = start_server(env)
        print(f"server started and warmed on sample_logs/broker-1: {seconds:.0f}s", file=sys.stderr)
    rows = []
    bare = min((run_measured([sys.executable, __file__, "--child", "bare", "-"], env) for _ in range(args.repeat)),
               key=lambda r: r[0]["session_s"])
    rows.append(("-", "bare session (start + one trivial job)", 0, bare[0], bare[1], bare[0]["session_s"]))
    bare_s = bare[0]["session_s"]
    print(f"bare session: {bare_s:.1f}s", file=sys.stderr)
    if args.sample:
        size = sum(p.stat().st_size for b in SAMPLE_BROKERS for p in (SAMPLE / b).rglob("*.log"))
        for mode in ("headers-only", "full") + (("inputs-only",) if args.floor else ()):
            result, peaks = min((run_measured([sys.executable, __file__, "--child", f"sample-{mode}", str(SAMPLE)], env)
                                 for _ in range(args.repeat)), key=lambda r: r[0]["session_s"] + r[0]["job_s"])
            total = result["session_s"] + result["job_s"]
            rows.append(("sample", {"inputs-only": "full inputs, no analysis"}.get(mode, mode), size, result, peaks,
                         total))
            print(f"sample {mode}: {total:.1f}s = {total / bare_s:.2f}x bare session", file=sys.stderr)
            if server and mode != "inputs-only":
                result, peaks = min((run_client(mode, SAMPLE, env, server.pid, SAMPLE_BROKERS)
                                     for _ in range(args.repeat)), key=lambda r: r[0]["job_s"])
                rows.append(("sample", f"{mode} via server", size, result, peaks, result["job_s"]))
                print(f"sample {mode} via server: {result['job_s']:.1f}s = {result['job_s'] / bare_s:.2f}x bare "
                      "session", file=sys.stderr)
    for scale in args.scale or ([] if args.sample else [1, 10]):
        root = DATA / f"scan-x{scale}"
        if not (root / "broker-1").exists():
            t = time.perf_counter()
            size, batches, records = generate(root, scale, args.partitions * scale)
            print(f"generated x{scale}: {size / 1e6:.0f} MB, {batches} batches, {records} records in "
                  f"{time.perf_counter() - t:.0f}s", file=sys.stderr)
        size = sum(p.stat().st_size for p in root.rglob("*.log"))
        modes = ("parser", "aiokafka", "headers-only", "full") + (("inputs-only",) if args.floor else ())
        for mode in () if args.server and args.server_only else modes:
            # the child calls run_scan in its own session: it never reaches the server
            result, peaks = run_measured([sys.executable, __file__, "--child", mode, str(root)], env)
            total = result["session_s"] + result["job_s"]
            label = {"inputs-only": "headers-only inputs, no analysis"}.get(mode, mode)
            label = f"{label} + archive" if args.warmup and mode != "parser" else label
            rows.append((scale, label, size, result, peaks, total))
            print(f"x{scale} {mode}: {total:.1f}s", file=sys.stderr)
        for mode in ("headers-only", "full") if server else ():
            result, peaks = run_client(mode, root, env, server.pid)
            rows.append((scale, f"{mode} via server", size, result, peaks, result["job_s"]))
            print(f"x{scale} {mode} via server: {result['job_s']:.1f}s", file=sys.stderr)
    if args.heartbeats:
        root = DATA / "heartbeats"
        if not (root / "broker-1").exists():
            generate_heartbeats(root)
        size = sum(p.stat().st_size for p in root.rglob("*.log"))
        for mode in ("headers-only", "full"):
            result, peaks = run_measured([sys.executable, __file__, "--child", mode, str(root)], env)
            total = result["session_s"] + result["job_s"]
            rows.append(("heartbeats", mode, size, result, peaks, total))
            print(f"heartbeats {mode}: {total:.1f}s, findings {result['findings']}", file=sys.stderr)
    if server:
        server.terminate()
        server.wait()
    print("| data | mode | MB | session s | job s | total s | CPU s | MB/s (job) | batches/s | records/s | "
          "driver RSS MB | workers RSS MB |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    aiokafka_s = {scale: total for scale, mode, _size, _r, _peaks, total in rows if mode == "aiokafka"}
    for scale, mode, size, r, peaks, total in rows:
        job = max(r["job_s"], 1e-9)
        ratio = f" ({total / bare_s:.2f}x bare)" if scale != "-" and mode not in ("parser", "aiokafka") else ""
        session = "—" if r["session_s"] is None else f"{r['session_s']:.1f}"
        floor = aiokafka_s.get(scale)
        if floor and mode.startswith(("full", "headers-only")):
            ratio += f" ({total / floor:.2f}x aiokafka)"
        print(f"| {scale if isinstance(scale, str) else f'x{scale}'} | {mode} | {size / 1e6:.0f} | {session} | {job:.1f} | {total:.1f}{ratio} | "
              f"{peaks['cpu_s']:.1f} | {size / 1e6 / job:.0f} | {r['batches'] / job:.0f} | {r['records'] / job:.0f} | "
              f"{peaks['driver_mb']:.0f} | {peaks['workers_mb']:.0f} |")


if __name__ == "__main__":
    main()
