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
import shutil
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from pyspark.sql import DataFrame, SparkSession

from kforensics import scan_output
from kforensics.defaults import (
    DEFAULT_OUT,
    DEFAULT_REMOTE_STUCK_AFTER_MS,
    DEFAULT_RESEND_MIN_RECORDS,
    DEFAULT_RESEND_TAIL,
    DEFAULT_RESEND_WINDOW_MS,
    DEFAULT_TRANSACTION_STATE_PARTITIONS,
    DEFAULT_TXN_TIMEOUT_MS,
)
from kforensics.inputs import parse_inputs
from kforensics.spark.analysis import analyze
from kforensics.spark.read import read_tables

OUTPUT_TABLES = scan_output.OUTPUT_TABLES

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


def ship_package(spark: SparkSession) -> str | None:
    """Send the package to the executors of a cluster (local masters share this interpreter); returns the
    temporary folder of the zip, which the caller deletes once the scan's jobs are done."""
    if spark.sparkContext.master.startswith("local"):
        return None
    folder = tempfile.mkdtemp(prefix="kforensics-zip-")
    try:
        spark.sparkContext.addPyFile(package_zip(os.path.join(folder, "kforensics.zip")))
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return folder


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
             remote_stuck_after_ms: int = DEFAULT_REMOTE_STUCK_AFTER_MS,
             resend_min_records: int = DEFAULT_RESEND_MIN_RECORDS, resend_tail: int = DEFAULT_RESEND_TAIL,
             resend_window_ms: int = DEFAULT_RESEND_WINDOW_MS,
             progress: Callable[[int, int], None] | None = None,
             manifest: scan_output.Manifest | None = None) -> scan_output.ScanSummary:
    """Scan broker log dirs (label, path or URI) and write the Parquet tables under `out`.

    OUT is prepared by `scan_output.prepare` (raises `scan_output.OutputError` when OUT holds anything else than
    an earlier scan's output) unless the caller passes the manifest it prepared; the manifest is marked completed
    only once every table is written, so an interrupted or failed scan never leaves an OUT that looks complete."""
    started = time.perf_counter()
    # the listing first: an unreadable input is a usage error before anything is written
    tables, facts = read_tables(spark, inputs, headers_only=headers_only, topic_glob=topic_glob)
    if manifest is None:
        manifest = scan_output.prepare(out, inputs=inputs, options={
            "headers_only": headers_only, "topic_glob": topic_glob, "txn_timeout_ms": txn_timeout_ms,
            "transaction_state_partitions": transaction_state_partitions,
            "remote_stuck_after_ms": remote_stuck_after_ms, "resend_min_records": resend_min_records,
            "resend_tail": resend_tail, "resend_window_ms": resend_window_ms})
    shipped = ship_package(spark)
    finish = _progress_thread(spark, progress) if progress else None
    try:
        inputs_out = {**tables, "snapshots": tables["snapshot_entries"]}

        def write(name: str, table: DataFrame | Callable[[], DataFrame]) -> None:
            # names the jobs of this thread in Spark's UI and event log (a thread-local property)
            spark.sparkContext.setJobDescription(f"kforensics scan: {name}")
            df = table if isinstance(table, DataFrame) else table()
            if name == "findings":
                # one sorted file; repartition + local sort needs no sampling job, unlike orderBy
                df = df.repartition(1).sortWithinPartitions("broker", "topic", "partition", "offset", "kind")
            # errorifexists: `scan_output.prepare` removed the earlier scan's tables; anything there now is not ours
            df.write.mode("errorifexists").parquet(f"{out.rstrip('/')}/{name}")

        # The first write fills the parse pass's cache. Every other table is a small job whose scheduling
        # latency dominates, so they run side by side (Spark schedules jobs from several threads): the input
        # tables are written while the driver plans the analysis; the analysis outputs are planned (and the
        # intermediate tables they share built, once) in the writing threads.
        write("batches", inputs_out["batches"])
        with ThreadPoolExecutor(max_workers=WRITE_THREADS) as pool:
            futures = [pool.submit(write, name, inputs_out[name]) for name in OUTPUT_TABLES
                       if name in inputs_out and name != "batches"]
            results = analyze(tables, txn_timeout_ms=txn_timeout_ms,
                              transaction_state_partitions=transaction_state_partitions, facts=facts,
                              remote_stuck_after_ms=remote_stuck_after_ms,
                              resend=None if headers_only else {"min_records": resend_min_records,
                                                                "tail": resend_tail, "window_ms": resend_window_ms})
            # findings first: it needs most intermediates and is the longest write
            futures += [pool.submit(write, name, results[name])
                        for name in sorted(results, key=lambda n: (n != "findings", OUTPUT_TABLES.index(n)))]
            for future in futures:
                future.result()
        scan_output.complete(out, manifest)
        summary = scan_output.summarize(out)
        summary.dump_inputs = list(facts.dump_brokers)
    finally:
        spark.sparkContext.setJobDescription(None)  # type: ignore[arg-type]  # the first write ran on this thread
        if finish:
            finish()
        spark.catalog.clearCache()  # the scan's cached tables; a long-lived session scans again from scratch
        if shipped:
            shutil.rmtree(shipped, ignore_errors=True)
    summary.seconds = time.perf_counter() - started
    return summary


def warm_up(spark: SparkSession, inputs: list[tuple[str, str]], *, topic_glob: str | None = None) -> None:
    """Scan `inputs` headers-only, then in full, into a temporary folder that is deleted: runs every code path of
    a scan once (which classes a JVM loads and which methods it compiles depend on them, not on the data)."""
    with tempfile.TemporaryDirectory(prefix="kforensics-warm-") as scratch:
        for headers_only in (True, False):
            run_scan(spark, inputs, os.path.join(scratch, f"out-{headers_only}"), headers_only=headers_only,
                     topic_glob=topic_glob)


def main(argv: list[str] | None = None) -> int:
    """spark-submit entry point: scan and print the summary as JSON."""
    import json

    parser = argparse.ArgumentParser(prog="kforensics.spark.jobs", description="kforensics scan for spark-submit")
    parser.add_argument("dirs", nargs="*", help="[NAME=]DIR broker log dirs (paths or URIs)")
    parser.add_argument("--out", default=DEFAULT_OUT)
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
    print(json.dumps(summary.to_dict(), default=str))
    return 1 if summary.has_problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
