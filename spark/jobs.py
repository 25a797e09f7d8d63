"""The scan job: read broker disks, analyse, write Parquet tables, return a small summary.

Also the spark-submit entry point:

    spark-submit --master spark://HOST:7077 --py-files kforensics.zip \\
        "$(python -c 'import kforensics.spark.jobs as j; print(j.__file__)')" \\
        broker-1=/data/kafka-1 broker-2=/data/kafka-2 --out /data/kforensics-out

(`python -m kforensics.spark.jobs --zip kforensics.zip` writes that zip.)
"""

from __future__ import annotations

import argparse
import importlib
import os
import tempfile
import threading
import time
import zipfile
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from kforensics.parsers.log_dir import parse_inputs
from kforensics.spark.analysis import analyze
from kforensics.spark.coordinator import DEFAULT_TRANSACTION_STATE_PARTITIONS
from kforensics.spark.read import local_path, read_tables
from kforensics.spark.summary import ScanSummary
from kforensics.spark.transactions import DEFAULT_TXN_TIMEOUT_MS

#: Parquet tables written under OUT (name -> analysis or input table).
OUTPUT_TABLES = ("batches", "segments", "producers", "transactions", "lso", "lso_changes", "aborted_ranges",
                 "snapshots", "txnindex", "leader_epochs", "partition_checkpoints", "replicas", "leader_epoch_lineage",
                 "coordinator_records", "coordinator_transactions", "offset_commits", "consumer_offsets", "findings")


WRITE_THREADS = 4


def package_zip(path: str) -> str:
    """Zip the kforensics package (CLI, parsers, spark) for executors that do not have it installed."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name in ("kforensics", "kforensics.parsers", "kforensics.spark"):
            module = importlib.import_module(name)
            folder = os.path.dirname(module.__file__ or "")
            arc = name.replace(".", "/")
            for file in sorted(os.listdir(folder)):
                if file.endswith(".py"):
                    zf.write(os.path.join(folder, file), f"{arc}/{file}")
    return path


def ship_package(spark: SparkSession) -> None:
    """Send the package to the executors of a cluster (local masters share this interpreter)."""
    if spark.sparkContext.master.startswith("local"):
        return
    path = os.path.join(tempfile.mkdtemp(prefix="kforensics-zip-"), "kforensics.zip")
    spark.sparkContext.addPyFile(package_zip(path))


def _progress_thread(spark: SparkSession, callback: Callable[[int, int], None]) -> Callable[[], None]:
    """Poll Spark's status tracker and report (tasks done, tasks total) of the running stages."""
    tracker = spark.sparkContext.statusTracker()
    stop = threading.Event()
    seen: dict[int, tuple[int, int]] = {}

    def poll() -> None:
        while not stop.wait(0.5):
            for stage_id in tracker.getActiveStageIds():
                info = tracker.getStageInfo(stage_id)
                if info is not None:
                    seen[stage_id] = (info.numCompletedTasks, info.numTasks)
            done = sum(d for d, _ in seen.values())
            total = sum(t for _, t in seen.values())
            callback(done, total)

    thread = threading.Thread(target=poll, daemon=True)
    thread.start()

    def finish() -> None:
        stop.set()
        thread.join()

    return finish


def run_scan(spark: SparkSession, inputs: list[tuple[str, str]], out: str, *, headers_only: bool = False,
             topic_glob: str | None = None, txn_timeout_ms: int = DEFAULT_TXN_TIMEOUT_MS,
             transaction_state_partitions: int = DEFAULT_TRANSACTION_STATE_PARTITIONS,
             progress: Callable[[int, int], None] | None = None) -> ScanSummary:
    """Scan broker log dirs (label, path or URI) and write the Parquet tables under `out`."""
    started = time.perf_counter()
    ship_package(spark)
    finish = _progress_thread(spark, progress) if progress else None
    try:
        tables, facts = read_tables(spark, inputs, headers_only=headers_only, topic_glob=topic_glob)
        inputs_out = {**tables, "snapshots": tables["snapshot_entries"]}

        def write(name: str, table: DataFrame | Callable[[], DataFrame]) -> None:
            # names the jobs of this thread in Spark's UI and event log (a thread-local property)
            spark.sparkContext.setJobDescription(f"kforensics scan: {name}")
            df = table if isinstance(table, DataFrame) else table()
            if name == "findings":
                # one sorted file; repartition + local sort needs no sampling job, unlike orderBy
                df = df.repartition(1).sortWithinPartitions("broker", "topic", "partition", "offset", "kind")
            df.write.mode("overwrite").parquet(f"{out.rstrip('/')}/{name}")

        # The first write fills the parse pass's cache. Every other table is a small job whose scheduling
        # latency dominates, so they run side by side (Spark schedules jobs from several threads): the input
        # tables are written while the driver plans the analysis; the analysis outputs are planned (and the
        # intermediate tables they share built, once) in the writing threads.
        write("batches", inputs_out["batches"])
        with ThreadPoolExecutor(max_workers=WRITE_THREADS) as pool:
            futures = [pool.submit(write, name, inputs_out[name]) for name in OUTPUT_TABLES
                       if name in inputs_out and name != "batches"]
            results = analyze(tables, txn_timeout_ms=txn_timeout_ms,
                              transaction_state_partitions=transaction_state_partitions, facts=facts)
            # findings first: it needs most intermediates and is the longest write
            futures += [pool.submit(write, name, results[name])
                        for name in sorted(results, key=lambda n: (n != "findings", OUTPUT_TABLES.index(n)))]
            for future in futures:
                future.result()
        summary = summarize(spark, out)
        summary.dump_inputs = list(facts.dump_brokers)
    finally:
        spark.sparkContext.setJobDescription(None)  # type: ignore[arg-type]  # the first write ran on this thread
        if finish:
            finish()
        spark.catalog.clearCache()  # the scan's cached tables; a long-lived session scans again from scratch
    summary.seconds = time.perf_counter() - started
    return summary


def warm_up(spark: SparkSession, inputs: list[tuple[str, str]], *, topic_glob: str | None = None) -> None:
    """Scan `inputs` headers-only, then in full, into a temporary folder that is deleted: runs every code path of
    a scan once (which classes a JVM loads and which methods it compiles depend on them, not on the data)."""
    with tempfile.TemporaryDirectory(prefix="kforensics-warm-") as scratch:
        for headers_only in (True, False):
            run_scan(spark, inputs, os.path.join(scratch, f"out-{headers_only}"), headers_only=headers_only,
                     topic_glob=topic_glob)


def summarize(spark: SparkSession, out: str) -> ScanSummary:
    """Small aggregates over the written tables (nothing batch-level reaches the driver). A local OUT is
    streamed from its Parquet files on the driver a few columns at a time, which costs no Spark job (on a small
    scan, the ~14 jobs of the same aggregates in Spark took ~2 s); other URIs are summarised by Spark."""
    base = local_path(out.rstrip("/"))
    return summarize_spark(spark, out) if base is None else summarize_local(base, out)


def _batches(path: str, columns: list[str]) -> Iterator[pa.RecordBatch]:
    """A table's columns, batch by batch (nothing when the table wrote no file)."""
    import pyarrow.dataset as ds

    dataset = ds.dataset(path, format="parquet")  # skips Spark's _SUCCESS and .crc files
    if all(c in dataset.schema.names for c in columns):
        yield from dataset.to_batches(columns=columns)


def summarize_local(base: str, out: str) -> ScanSummary:
    """`summarize` of a local OUT, read with pyarrow."""
    summary = ScanSummary(out=out)
    partitions: set[tuple] = set()
    for batch in _batches(f"{base}/segments", ["broker", "topic", "partition", "batch_count", "record_count", "size"]):
        partitions.update(_rows(batch.select(["broker", "topic", "partition"])))
        summary.segments += batch.num_rows
        summary.batches += pc.sum(batch.column("batch_count")).as_py() or 0
        summary.records += pc.sum(batch.column("record_count")).as_py() or 0
        summary.bytes += pc.sum(batch.column("size")).as_py() or 0
    summary.partitions = len(partitions)
    producers: set[tuple] = set()
    for batch in _batches(f"{base}/producers", ["broker", "topic", "partition", "producer_id"]):
        producers.update(_rows(batch))
    summary.producers = len(producers)
    outcomes = _count_by(f"{base}/transactions", ["outcome"])
    summary.transactions = {outcome: n for (outcome,), n in outcomes.items()}
    kinds = _count_by(f"{base}/findings", ["kind", "severity"])
    summary.findings = [(kind, severity, n) for (kind, severity), n in sorted(kinds.items())]
    named: set[str] = set()
    for batch in _batches(f"{base}/coordinator_transactions", ["partitions_not_in_input"]):
        named.update(p for ps in batch.column(0).to_pylist() for p in ps or ())
    for batch in _batches(f"{base}/consumer_offsets", ["topic", "partition", "in_input"]):
        named.update(f"{topic}-{partition}" for topic, partition, known in _rows(batch) if known is False)
    summary.not_in_input = sorted(named)
    return summary


def _rows(data: pa.RecordBatch | pa.Table) -> Iterator[tuple]:
    return zip(*(column.to_pylist() for column in data.columns), strict=True)


def _count_by(path: str, keys: list[str]) -> Counter[tuple]:
    """Rows of a table per distinct value of `keys`, counted batch by batch."""
    counts: Counter[tuple] = Counter()
    for batch in _batches(path, keys):
        counted = pa.Table.from_batches([batch]).group_by(keys).aggregate([([], "count_all")])
        counts.update({row[:-1]: row[-1] for row in _rows(counted.select([*keys, "count_all"]))})
    return counts


def summarize_spark(spark: SparkSession, out: str) -> ScanSummary:
    """`summarize` with Spark, for an OUT that only the executors can read (hdfs://, ...)."""
    base = out.rstrip("/")
    segments = spark.read.parquet(f"{base}/segments")
    seg = segments.agg(F.countDistinct("broker", "topic", "partition").alias("p"), F.count(F.lit(1)).alias("s"),
                       F.sum("batch_count").alias("b"), F.sum("record_count").alias("r"),
                       F.sum("size").alias("bytes")).first()
    producers = spark.read.parquet(f"{base}/producers").select("broker", "topic", "partition",
                                                                "producer_id").distinct().count()
    txns = {r["outcome"]: r["n"] for r in spark.read.parquet(f"{base}/transactions").groupBy("outcome")
            .agg(F.count(F.lit(1)).alias("n")).collect()}
    findings = [(r["kind"], r["severity"], r["n"]) for r in spark.read.parquet(f"{base}/findings")
                .groupBy("kind", "severity").agg(F.count(F.lit(1)).alias("n")).orderBy("kind", "severity").collect()]
    named = (spark.read.parquet(f"{base}/coordinator_transactions")
             .select(F.explode("partitions_not_in_input").alias("p"))
             .unionByName(spark.read.parquet(f"{base}/consumer_offsets").filter(~F.col("in_input"))
                          .select(F.format_string("%s-%d", "topic", "partition").alias("p"))).distinct())
    return ScanSummary(out=out, partitions=seg["p"] or 0, segments=seg["s"] or 0, batches=seg["b"] or 0,
                       records=seg["r"] or 0, bytes=seg["bytes"] or 0, producers=producers, transactions=txns,
                       findings=findings, not_in_input=sorted(r["p"] for r in named.collect()))


def main(argv: list[str] | None = None) -> int:
    """spark-submit entry point: scan and print the summary as JSON."""
    import json

    parser = argparse.ArgumentParser(prog="kforensics.spark.jobs", description="kforensics scan for spark-submit")
    parser.add_argument("dirs", nargs="*", help="[NAME=]DIR broker log dirs (paths or URIs)")
    parser.add_argument("--out", default="./kforensics-out")
    parser.add_argument("--headers-only", action="store_true")
    parser.add_argument("--topic")
    parser.add_argument("--txn-timeout", type=int, default=DEFAULT_TXN_TIMEOUT_MS)
    parser.add_argument("--transaction-state-partitions", type=int, default=DEFAULT_TRANSACTION_STATE_PARTITIONS)
    parser.add_argument("--zip", help="only write the package zip for --py-files to this path")
    args = parser.parse_args(argv)
    if args.zip:
        print(package_zip(args.zip))
        return 0
    spark = SparkSession.builder.appName("kforensics").getOrCreate()
    summary = run_scan(spark, parse_inputs(args.dirs), args.out, headers_only=args.headers_only,
                       topic_glob=args.topic, txn_timeout_ms=args.txn_timeout,
                       transaction_state_partitions=args.transaction_state_partitions)
    print(json.dumps({k: v for k, v in summary.__dict__.items()}, default=str))
    return 1 if summary.has_problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
