"""Where `find`'s search runs, as the scan decides it (`spark/driver_read.py` `reads_on_driver`): a small input of
local files (at most `defaults.SMALL_INPUT_BYTES` of segments to search) in this process, anything else on Spark
(embedded, or `--master`), one task per partition dir. Spark is imported on the Spark path only."""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable, Iterator
from typing import Any

from kforensics import defaults
from kforensics.find.query import Query
from kforensics.find.search import FoundFinding, PartitionDirTask, search_all
from kforensics.find.sources import input_bytes, is_remote


def on_spark(tasks: list[PartitionDirTask], master: str | None) -> bool:
    """Whether the search runs on Spark: a master was named, a segment is remote, or the segments to search weigh
    more than a small input (or a filesystem did not say how much)."""
    size = input_bytes(tasks)
    return master is not None or is_remote(tasks) or size is None or size > defaults.SMALL_INPUT_BYTES


def search(tasks: list[PartitionDirTask], query: Query, *, master: str | None = None,
           spark_conf: dict[str, str] | None = None, verbose: bool = False,
           progress: Callable[[int], None] | None = None) -> Iterator[dict[str, Any] | FoundFinding]:
    """Every copy (a row) and every finding of the search, partition dir by partition dir."""
    if not on_spark(tasks, master):
        yield from search_all(tasks, query, progress)
        return
    yield from _on_spark(tasks, query, master, spark_conf or {}, verbose)


def _on_spark(tasks: list[PartitionDirTask], query: Query, master: str | None, spark_conf: dict[str, str],
              verbose: bool) -> Iterator[dict[str, Any] | FoundFinding]:
    from pyspark.sql import SparkSession

    from kforensics.scan_runner import _stop, spark_log_path, verbose_spark
    from kforensics.spark.find import find_on_spark
    from kforensics.spark.jobs import ship_package
    from kforensics.spark.session import build_session

    log_file = None if verbose_spark(verbose) else spark_log_path(None)
    already_running = SparkSession.getActiveSession() is not None
    root = logging.getLogger()
    # py4j logs through the root logger; unconfigured, that is a traceback on the operator's terminal
    py4j_log = logging.FileHandler(log_file, delay=True) if log_file is not None and not root.handlers else None
    if py4j_log is not None:
        root.addHandler(py4j_log)
    spark = build_session(master, "kforensics find", log_file=log_file, **spark_conf)
    shipped = None
    try:
        shipped = ship_package(spark)  # a cluster's executors may not have kforensics installed
        yield from find_on_spark(spark, tasks, query)
    finally:
        if shipped is not None:
            shutil.rmtree(shipped, ignore_errors=True)
        if not already_running:  # a session this search did not start (tests, notebooks) is not its to stop
            _stop(spark)
        if py4j_log is not None:
            root.removeHandler(py4j_log)
            py4j_log.close()
