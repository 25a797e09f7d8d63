"""The scan job: read broker disks, analyse, write Parquet tables, return a small summary.

Also the spark-submit entry point (docs/deployment.md; tests/test_spark_submit.py runs it):

    python -m kforensics.spark.jobs --zip kforensics.zip
    spark-submit --master spark://HOST:7077 --py-files kforensics.zip \\
        "$(python -c 'import kforensics.spark.jobs as j; print(j.__file__)')" \\
        broker-1=/data/kafka-1 broker-2=/data/kafka-2 --out /data/kforensics-out

The first command writes the zip (the package without its compiled core) that the driver and the executors import.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import shutil
import tempfile
import threading
import time
import uuid
import zipfile
import zipimport
from collections.abc import Callable
from importlib import resources
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession

from kforensics import scan_output
from kforensics.defaults import DEFAULT_OUT
from kforensics.inputs import parse_inputs
from kforensics.parsers.uris import join_uri
from kforensics.scan_options import ScanOptions, add_arguments, from_arguments
from kforensics.spark.driver_read import read_on_driver, reads_on_driver
from kforensics.spark.read import Listing, ReadersParam, import_readers, list_input, read_tables
from kforensics.spark.runner import analyze, known_empty
from kforensics.spark.scan_profile import ScanProfile
from kforensics.spark.schemas import INPUT_TABLES, WRITTEN_INPUTS, ddl
from kforensics.spark.session import (
    PYTHON_CLIENT_SETTINGS,
    SMALL_INPUT_SETTINGS,
    SMALL_TABLES_SETTINGS,
    apply_settings,
    cancel_jobs,
    is_small,
    job_threads,
    job_threads_running,
    remember_jvm_names,
    scan_settings,
    tables_are_small,
)
from kforensics.spark.views import SqlViews

OUTPUT_TABLES = scan_output.OUTPUT_TABLES

WRITE_THREADS = 4


#: What the zip leaves out: the compiled core's builds and sources (an executor loads an installed kforensics' core, or
#: runs the pure-Python reader: parsers/core.py) and bytecode.
NOT_ZIPPED = (".so", ".pyd", ".c", ".pyx", ".pxd", ".h", ".pyc")


def package_zip(path: str) -> str:
    """Zip the kforensics package for executors (and a spark-submit driver) that do not have it installed: every
    module of every subpackage and the files read with importlib.resources (spark/sql/*.sql), from wherever the
    package was imported (a folder, or the zip a spark-submit driver imported it from)."""
    written: set[str] = set()

    def add(folder: resources.abc.Traversable, arc: str) -> None:
        for entry in sorted(folder.iterdir(), key=lambda e: e.name):
            if entry.is_dir():
                if entry.name != "__pycache__":
                    add(entry, f"{arc}/{entry.name}")
            elif not entry.name.endswith(NOT_ZIPPED) and f"{arc}/{entry.name}" not in written:
                written.add(f"{arc}/{entry.name}")  # an installed kforensics holds parsers/ and spark/ in its folder
                zf.writestr(zipfile.ZipInfo(f"{arc}/{entry.name}", date_time=(1980, 1, 1, 0, 0, 0)),
                            entry.read_bytes(), zipfile.ZIP_DEFLATED)

    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name in ("kforensics", "kforensics.parsers", "kforensics.spark"):  # pyproject's package-dir
            add(resources.files(name), name.replace(".", "/"))
    return path


def imported_from_zip() -> bool:
    """Whether this kforensics was imported from a zip: spark-submit's --py-files, which ships it to the executors."""
    import kforensics

    return isinstance(getattr(kforensics.__spec__, "loader", None), zipimport.zipimporter)


def ship_package(spark: SparkSession) -> str | None:
    """Send the package to the executors of a cluster (local masters share this interpreter; a driver started by
    spark-submit --py-files kforensics.zip has shipped it already); returns the temporary folder of the zip, which the
    caller deletes once the scan's jobs are done."""
    if spark.sparkContext.master.startswith("local") or imported_from_zip():
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


#: The findings table's order (nulls first, as Spark sorts ascending).
FINDINGS_ORDER = ("broker", "topic", "partition", "offset", "kind")


def write_table_by_driver(df: DataFrame, path: str, order: tuple[str, ...] | None = None) -> None:
    """Collect a small table as Arrow and write it as one Parquet file of a table folder (a local path, which
    must not exist yet: as Spark's errorifexists; made first, as Spark's writer does, so that the folder of a table
    being computed is there), under a temporary name until it is whole."""
    os.mkdir(path)
    write_arrow_table(empty_arrow_table(df) if known_empty(df) else df.coalesce(1).toArrow(), path, order)


def empty_arrow_table(df: DataFrame) -> pa.Table:
    """What `df.toArrow()` returns for a table of no rows (the same Arrow schema), without running a job."""
    from pyspark.sql.pandas.types import to_arrow_schema

    large = df.sparkSession.conf.get("spark.sql.execution.arrow.useLargeVarTypes", "false") == "true"
    return to_arrow_schema(df.schema, error_on_duplicated_field_names_in_struct=True, timezone="UTC",
                           prefers_large_types=large).empty_table()


def write_arrow_table(table: pa.Table, path: str, order: tuple[str, ...] | None = None) -> None:
    """An Arrow table as one Parquet file of the table folder `path` (made if it is not there), under a temporary
    name until it is whole."""
    os.makedirs(path, exist_ok=True)
    if order:
        table = table.sort_by([(name, "ascending", "at_start") for name in order])
    part = os.path.join(path, "part-00000.parquet")
    pq.write_table(table, f"{part}.tmp")
    os.rename(f"{part}.tmp", part)


def parse_on_driver(spark: SparkSession, listing: Listing, out: str, scratch: str, options: ScanOptions,
                    profile: ScanProfile, readers: Any) -> tuple[dict[str, DataFrame], dict[str, int]]:
    """A small local input's parse pass, run by the driver (`driver_read`): the input tables that are output tables
    are written to OUT (`READ_BACK`), as the executors' parse pass writes them; the others to the folder `scratch`
    (removed by the caller once the scan is done), and returned as DataFrames that read them (not as local relations:
    docs/benchmarks/spark-settings.md). Also returns each input table's row count."""
    with profile.step("parse pass", "kforensics scan: parse pass"):
        tables = read_on_driver(listing, headers_only=options.headers_only, readers=readers)
    for name, source in READ_BACK.items():
        with profile.step(name, f"kforensics scan: {name}"):
            path = join_uri(out, name)
            os.mkdir(path)  # errorifexists, as Spark's writer: `scan_output.prepare` removed the earlier scan's
            write_arrow_table(tables[source], path)
    kept = {}
    for name, table in tables.items():
        if name not in READ_BACK.values():
            path = os.path.join(scratch, name)
            write_arrow_table(table, path)
            kept[name] = spark.read.schema(ddl(table.schema)).parquet(path)
    return kept, {name: table.num_rows for name, table in tables.items()}


def warm_python_workers(spark: SparkSession) -> None:
    """A one-task job whose Python worker imports what the parse pass's workers run (pyarrow, pandas, the
    readers): the first parse task then finds a worker that is ready instead of starting one."""
    spark.sparkContext.parallelize([0], 1).mapPartitions(import_readers).collect()


#: Input tables the analysis reads back from OUT once they are written (name in OUT -> name in `analyze`'s tables).
READ_BACK = {name: source for name, (source, _, _) in WRITTEN_INPUTS.items()}


def run_scan(spark: SparkSession, inputs: list[tuple[str, str]], out: str, options: ScanOptions | None = None, *,
             progress: Callable[[int, int], None] | None = None, manifest: scan_output.Manifest | None = None,
             profile: ScanProfile | None = None, **option_values: object) -> scan_output.ScanSummary:
    """Scan broker log dirs (label, path or URI) and write the Parquet tables under `out`. `options` (or its
    fields as keywords: `run_scan(spark, inputs, out, headers_only=True)`) say what to do; `profile` may hold the
    steps timed before (the session's start).

    OUT is prepared by `scan_output.prepare` (raises `scan_output.OutputError` when OUT holds anything else than
    an earlier scan's output) unless the caller passes the manifest it prepared; the manifest is marked completed
    only once every table is written, so an interrupted or failed scan never leaves an OUT that looks complete.

    Two phases. The parse pass writes the input tables (batches, segments, ...: output tables anyway); the analysis
    then reads them back from OUT, so every analysis plan starts from a scan of a small Parquet table instead of
    the parse pass's lineage, and its jobs are planned and run side by side from several threads."""
    if options is None:
        options = ScanOptions.from_dict(option_values)
    elif option_values:
        raise TypeError("run_scan takes options or their fields as keywords, not both")
    given_out = out
    if "://" not in out:  # one OUT for the manifest and every table: by its text, as scan_output and the server resolve it
        out = os.path.abspath(out)
    started = time.perf_counter()
    remember_jvm_names(spark.sparkContext)
    profile = profile or ScanProfile(spark.sparkContext)
    readers = spark.sparkContext.accumulator(set(), ReadersParam())
    tag = f"kforensics-scan-{uuid.uuid4().hex[:12]}"  # this thread's jobs and its job threads', to cancel them
    spark.sparkContext.addJobTag(tag)
    shipped = finish = scratch = None
    restores: list[Callable[[], None]] = []
    views = SqlViews(spark)
    try:
        # the listing first: an unreadable input is a usage error before anything is written
        with profile.step("listing", "kforensics scan: listing"):
            listing = list_input(inputs, topic_glob=options.topic_glob)
        facts = listing.facts
        small = is_small(facts.input_bytes)
        on_driver = reads_on_driver(listing, spark.sparkContext.master) and "://" not in out
        if manifest is None:
            manifest = scan_output.prepare(out, inputs=inputs, options=options.to_dict())
        finish = _progress_thread(spark, progress) if progress else None
        if on_driver:
            with job_threads(spark, 1) as warming:
                if not options.headers_only:
                    # the record check's Python workers start while the driver parses, not beside the analysis
                    # (docs/benchmarks/spark-settings.md)
                    warming.submit(warm_python_workers, spark)
                scratch = tempfile.mkdtemp(prefix="kforensics-parse-")
                kept, rows = parse_on_driver(spark, listing, out, scratch, options, profile, readers)
            # the group replays only where the parse found group records (the listing sees only the topics)
            facts = dataclasses.replace(facts, has_group_records=rows["group_records"] > 0,
                                        has_share_state_records=rows["share_state_records"] > 0)
        else:
            with profile.step("parse pass plan", "kforensics scan: parse pass"), job_threads(spark, 1) as warming:
                if spark.sparkContext.master.startswith("local"):
                    # the Python workers start and import the readers while the driver plans the parse pass
                    warming.submit(warm_python_workers, spark)
                tables, _ = read_tables(spark, inputs, headers_only=options.headers_only,
                                        topic_glob=options.topic_glob, readers=readers, listing=listing)
        restores.append(apply_settings(spark, scan_settings(spark, SMALL_INPUT_SETTINGS if small else {})))
        # A small scan's tables are written by the driver (one Parquet file each, no commit protocol); a large one's
        # by the executors.
        by_driver = small and "://" not in out
        shipped = ship_package(spark)

        def write(name: str, table: DataFrame | Callable[[], DataFrame]) -> None:  # by_driver: read when it runs
            with profile.step(name, f"kforensics scan: {name}") as step:  # names the thread's jobs in Spark's UI
                planning = time.perf_counter()
                df = table if isinstance(table, DataFrame) else table()
                order = FINDINGS_ORDER if name == "findings" else None
                step["plan_s"] = round(time.perf_counter() - planning, 3)
                if by_driver:
                    write_table_by_driver(df, join_uri(out, name), order)
                    return
                if order:
                    # one sorted file; repartition + local sort needs no sampling job, unlike orderBy
                    df = df.repartition(1).sortWithinPartitions(*order)
                # errorifexists: `scan_output.prepare` removed the earlier scan's tables; anything there now is not
                # ours
                df.write.mode("errorifexists").parquet(join_uri(out, name))

        # The parse pass: the first write fills the parse pass's cache, the other input tables are small jobs
        # whose scheduling latency dominates, so they run side by side (Spark schedules jobs from several threads).
        def keep(name: str) -> DataFrame:
            # a parse pass's table that is no output table: small, computed once from the cache, lineage cut (one
            # partition when small: a union of the parse pass's sources has one per source)
            with profile.step(f"kept {name}", "kforensics scan: parse pass"):
                return (tables[name].coalesce(1) if small else tables[name]).localCheckpoint(eager=True)

        if not on_driver:
            inputs_out = {**tables, "snapshots": tables["snapshot_entries"]}
            write("batches", inputs_out["batches"])
            with job_threads(spark, WRITE_THREADS) as pool:
                writes = [pool.submit(write, name, inputs_out[name]) for name in READ_BACK if name != "batches"]
                kept_futures = {name: pool.submit(keep, name) for name in tables if name not in READ_BACK.values()}
                for future in writes:
                    future.result()
                kept = {name: future.result() for name, future in kept_futures.items()}
        # with the declared schema: Spark reads no footer to infer one
        read_back = {READ_BACK[name]: spark.read.schema(ddl(INPUT_TABLES[READ_BACK[name]]))
                     .parquet(join_uri(out, name)) for name in READ_BACK}
        spark.catalog.clearCache()  # the parse pass's rows: everything the analysis needs is in OUT or kept now
        # The analysis reads batch headers, not records: many GB of segments can make small tables, then analysed as a
        # small input's are but in generated code (docs/benchmarks/spark-settings.md)
        analysis_small = small or tables_are_small(scan_output.table_bytes(out, READ_BACK))
        if analysis_small and not small:
            restores.append(apply_settings(spark, scan_settings(spark, SMALL_TABLES_SETTINGS)))
            by_driver = "://" not in out
        # a driver's parse counted each input table's rows: what provably reads none is not planned (issue 52)
        empty_inputs = frozenset(name for name, n in rows.items() if n == 0) if on_driver else frozenset()
        results = analyze({**kept, **read_back}, options, facts=facts, profile=profile, small=analysis_small,
                          views=views, empty_inputs=empty_inputs)
        with job_threads(spark, WRITE_THREADS) as pool:
            # findings first: it needs most intermediates and is the longest write
            futures = [pool.submit(write, name, results[name])
                       for name in sorted(results, key=lambda n: (n != "findings", OUTPUT_TABLES.index(n)))]
            for future in futures:
                future.result()
        manifest.profile = profile.to_dict()
        manifest.image_times = scan_output.image_times(out)
        manifest.executor_readers = [{"host": host, "python": python, "reader": reader}
                                     for host, python, reader in sorted(readers.value)]
        scan_output.complete(out, manifest)
        summary = scan_output.summarize(out)
        summary.out = given_out  # shown as the operator wrote it
        summary.dump_inputs = list(facts.dump_brokers)
    except BaseException:
        cancel_jobs(spark.sparkContext, {tag})  # the job this thread was waiting on, if an interrupt cut it short
        raise
    finally:
        spark.sparkContext.removeJobTag(tag)
        with contextlib.suppress(Exception):  # a session that died with the scan has no views left to drop
            views.drop()
        for restore in reversed(restores):
            restore()
        if finish:
            finish()
        if not job_threads_running():  # an interrupted scan's left-behind job could hold the cache's lock
            spark.catalog.clearCache()  # the scan's cached tables; a long-lived session scans again from scratch
        for folder in (shipped, scratch):
            if folder:
                shutil.rmtree(folder, ignore_errors=True)
    summary.seconds = time.perf_counter() - started
    return summary


def warm_up(spark: SparkSession, inputs: list[tuple[str, str]], *, topic_glob: str | None = None,
            full_scans: int = 1) -> None:
    """Scan `inputs` headers-only, then `full_scans` times in full, into a temporary folder that is deleted: runs
    every code path of a scan (which classes a JVM loads and which methods it compiles depend on them, not on the
    data). One pass loads the classes; each further one compiles more of the methods the scans call."""
    with tempfile.TemporaryDirectory(prefix="kforensics-warm-") as scratch:
        for i, headers_only in enumerate((True,) + (False,) * full_scans):
            run_scan(spark, inputs, os.path.join(scratch, f"out-{i}"),
                     ScanOptions(headers_only=headers_only, topic_glob=topic_glob))


def main(argv: list[str] | None = None) -> int:
    """spark-submit entry point: scan and print the summary as JSON."""
    import json

    parser = argparse.ArgumentParser(prog="kforensics.spark.jobs", description="kforensics scan for spark-submit")
    parser.add_argument("dirs", nargs="*", help="[NAME=]DIR broker log dirs (paths or URIs)")
    parser.add_argument("--out", default=DEFAULT_OUT)
    add_arguments(parser)  # every option of `kforensics scan`, from ScanOptions
    parser.add_argument("--zip", help="only write the package zip for --py-files to this path")
    args = parser.parse_args(argv)
    if args.zip:
        print(package_zip(args.zip))
        return 0
    try:
        options = from_arguments(args)
    except ValueError as exc:
        parser.error(str(exc))
    builder = SparkSession.builder.appName("kforensics")
    for key, value in PYTHON_CLIENT_SETTINGS.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    summary = run_scan(spark, parse_inputs(args.dirs), args.out, options)
    print(json.dumps(summary.to_dict(), default=str))
    return 1 if summary.has_problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
