"""The replica comparison's cost (a script, not a test).

Takes bench_scan's ~200 MB partition set (generated under benchmarks/data/ if absent) as broker-1 and
makes REPLICAS-1 more replicas of it: hard-linked copies, except that in the last replica the second
half of one partition's batches carry leader epoch 1 (bytes 12-15, outside the CRC, patched in a copy),
so there is one real divergence to find. Then, in one embedded Spark session:

  scan          kforensics scan --headers-only of all replicas (parse + every check, end to end), with the
                replica pass and with it cut off (replicas deemed impossible): the difference is what it adds
  divergence    the replica pass alone (partition_ends, replica_ends, divergences, replica_divergence findings, the
                replicas table) over the `batches` table the scan wrote: it never reads a log file, only
                batch headers, so this is what comparing replicas adds to a scan

    python benchmarks/bench_divergence.py [--replicas 2]
"""

from __future__ import annotations

import argparse
import os
import shutil
import struct
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scan import DATA, generate  # noqa: E402


def make_replicas(source: Path, root: Path, replicas: int) -> list[tuple[str, str]]:
    """broker-1 .. broker-N under `root`, hard-linked copies of `source` (bench_scan's data stays untouched)."""
    inputs = []
    for r in range(1, replicas + 1):
        target = root / f"broker-{r}"
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(source, target, copy_function=os.link)
        if r > 1 and r == replicas:  # one diverged partition in the last replica
            seg = sorted((target / "bench-0").glob("*.log"))[-1]
            data = bytearray(seg.read_bytes())
            seg.unlink()  # break the hard link before patching
            positions, pos = [], 0
            while pos + 61 <= len(data):
                positions.append(pos)
                pos += 12 + struct.unpack_from(">i", data, 8)[0]
            for p in positions[len(positions) // 2:]:
                struct.pack_into(">i", data, p + 12, 1)
            seg.write_bytes(data)
        inputs.append((f"broker-{r}", str(target)))
    return inputs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicas", type=int, default=2)
    args = parser.parse_args()
    source = DATA / "scan-x1"
    if not (source / "broker-1").is_dir():
        generate(source, 1, 40)
    inputs = make_replicas(source / "broker-1", DATA / "replicas-x1", args.replicas)

    from kforensics.spark import runner
    from kforensics.spark.jobs import run_scan
    from kforensics.spark.session import build_session

    spark = build_session()
    out = tempfile.mkdtemp(prefix="bench-div-")
    run_scan(spark, inputs[:1], out, headers_only=True)  # warm-up: JVM, Python workers, code paths
    # The same scan end to end, with the replica pass and with it cut off (replicas deemed impossible: the
    # divergences model and the replica_divergence family are not planned), in turn.
    real_applies = runner.Scan.applies
    with_pass, without_pass = [], []
    for _ in range(2):
        runner.Scan.applies = lambda scan, c: c != "replicas_possible" and real_applies(scan, c)
        started = time.perf_counter()
        run_scan(spark, inputs, out, headers_only=True)
        without_pass.append(time.perf_counter() - started)
        runner.Scan.applies = real_applies
        started = time.perf_counter()
        summary = run_scan(spark, inputs, out, headers_only=True)
        with_pass.append(time.perf_counter() - started)
    scan_s = min(with_pass)

    tables = {"batches": spark.read.parquet(f"{out}/batches"),
              "brokers": spark.createDataFrame([(b, None, None) for b, _ in inputs],
                                               "broker string, cluster_id string, node_id int"),
              "partition_checkpoints": spark.read.parquet(f"{out}/partition_checkpoints"),
              "leader_epochs": spark.read.parquet(f"{out}/leader_epochs")}
    timings = []
    for _ in range(3):
        started = time.perf_counter()
        scan = runner.Scan(tables, small=False)
        found = scan.family("replica_divergence").collect()
        scan.table("replicas").write.mode("overwrite").parquet(f"{out}/bench-replicas")
        timings.append(time.perf_counter() - started)
    print(f"replicas: {args.replicas}; input {summary.bytes / 1e6:.0f} MB, {summary.batches:,} batches, "
          f"{summary.records:,} records, {summary.partitions} partition replicas")
    print(f"scan --headers-only (all replicas, end to end): {scan_s:.1f} s with the replica pass, "
          f"{min(without_pass):.1f} s without (best of 2 each: {with_pass}, {without_pass}); "
          f"added: {scan_s - min(without_pass):.1f} s")
    print(f"divergence pass alone over the batches table: {min(timings):.1f} s (best of 3: "
          f"{', '.join(f'{t:.1f}' for t in timings)})")
    print(f"divergences found: {[(f['topic'], f['partition'], f['offset'], f['broker']) for f in found]}")
    shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
