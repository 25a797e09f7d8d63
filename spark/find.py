"""`kforensics find` on Spark: each partition dir is searched whole by one task, as in one process
(`kforensics.find.search.PartitionSearch`: a partition's copies need its segments in order, for the markers that
close their transactions and the records that supersede them), a remote segment read from a temporary local copy;
the copies and the findings come back to the driver in the order of the tasks."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
from pyspark.sql import SparkSession

from kforensics.find.output import SCHEMA as COPY_SCHEMA
from kforensics.find.query import Query
from kforensics.find.search import FoundFinding, PartitionDirTask, PartitionSearch
from kforensics.spark.executor_files import FLUSH_ROWS, local_file

TASKS = pa.schema([("task", pa.int32()), ("broker", pa.string()), ("topic", pa.string()), ("partition", pa.int32()),
                   ("dir_state", pa.string()), ("path", pa.string()), ("segments", pa.list_(pa.string())),
                   ("cleaner_offset", pa.int64()), ("size", pa.int64())])
#: A copy's row (its columns) or a finding (`finding`: its JSON line), in its task's order (`seq`).
ROWS = pa.schema([("task", pa.int32()), ("seq", pa.int32()), *COPY_SCHEMA, ("finding", pa.string())])


def _search_rows(chunks: Iterator[pa.RecordBatch], query: Query) -> Iterator[pa.RecordBatch]:
    """mapInArrow: partition dir tasks -> the rows of their copies, then their findings."""
    for chunk in chunks:
        for t in chunk.to_pylist():
            task = PartitionDirTask(t["broker"], t["topic"], t["partition"], t["dir_state"], t["path"],
                                    tuple(t["segments"]), t["cleaner_offset"], t["size"])
            search = PartitionSearch(task, query, local_file=local_file)
            rows = [{"task": t["task"], "seq": i, **row} for i, row in enumerate(search.run())]
            rows += [{"task": t["task"], "seq": len(rows) + i, "headers": [],
                      "finding": json.dumps(f.line, default=str)} for i, f in enumerate(search.findings)]
            for start in range(0, len(rows), FLUSH_ROWS):
                yield pa.RecordBatch.from_pylist(rows[start:start + FLUSH_ROWS], schema=ROWS)


def find_on_spark(spark: SparkSession, tasks: list[PartitionDirTask],
                  query: Query) -> Iterator[dict[str, Any] | FoundFinding]:
    """The copies (rows) and findings of every task, task by task as `search.search_all` yields them; the driver
    holds one Spark partition of results at a time."""
    if not tasks:
        return
    from kforensics.spark import schemas as S

    rows = [{"task": i, "broker": t.broker, "topic": t.topic, "partition": t.partition, "dir_state": t.dir_state,
             "path": t.path, "segments": list(t.segments), "cleaner_offset": t.cleaner_offset, "size": t.size}
            for i, t in enumerate(tasks)]
    # as the scan spreads its segments: a few tasks per core, each searching its partition dirs one after another
    # (a task's round trip costs more than a small dir's search), the largest dirs first
    frame = S.frame(spark, TASKS, sorted(rows, key=lambda r: -(r["size"] or 0)))
    parallelism = max(2, spark.sparkContext.defaultParallelism)
    found = frame.repartition(min(len(tasks), parallelism * 4)).mapInArrow(
        functools.partial(_search_rows, query=query), S.ddl(ROWS))
    for r in found.orderBy("task", "seq").toLocalIterator():
        if r["finding"] is not None:
            yield FoundFinding(json.loads(r["finding"]))
            continue
        row = r.asDict(recursive=True)
        for name in ("task", "seq", "finding"):
            del row[name]
        row["key"] = None if row["key"] is None else bytes(row["key"])
        if query.values:
            row["value"] = None if row["value"] is None else bytes(row["value"])
        else:
            del row["value"]
        row["headers"] = [{"key": h["key"], "value": None if h["value"] is None else bytes(h["value"])}
                          for h in row["headers"] or ()]
        yield row
