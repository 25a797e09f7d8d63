"""`kforensics export` of a whole topic (every partition, every input) on Spark: one task per partition dir runs
the same reader as a single-partition export (`kforensics.export.PartitionReader`), Arrow batches out of
mapInArrow, Parquet written by Spark under a temporary folder that is renamed to PATH when complete."""

from __future__ import annotations

import functools
import json
import os
import shutil
from collections.abc import Iterator

import pyarrow as pa
from pyspark.sql import SparkSession

from kforensics.export import (
    FOLDER_MARKER,
    SCHEMA,
    PartitionReader,
    PartitionSource,
    RowBuffer,
    Selection,
)

DDL = ("broker string, topic string, partition int, offset bigint, timestamp bigint, timestamp_type string, "
       "key binary, value binary, headers array<struct<key:string,value:binary>>, producer_id bigint, "
       "producer_epoch int, sequence int, leader_epoch int, transaction string, file string, position bigint")
SKIPPED = "_skipped"  # a row of this broker name reports a left-out batch (file, position, reason in topic)


def _export_rows(tasks: Iterator[pa.RecordBatch], selection: Selection) -> Iterator[pa.RecordBatch]:
    """mapInArrow: partition tasks (broker, topic, partition, segments) -> SCHEMA rows; left-out batches as rows
    whose broker is SKIPPED."""
    for chunk in tasks:
        for task in chunk.to_pylist():
            reader = PartitionReader(task["broker"], task["topic"], task["partition"], task["segments"].split("\n"))
            buffer = RowBuffer()  # bounded in rows and in bytes
            for row in reader.rows(selection):
                if buffer.add(row):
                    yield pa.RecordBatch.from_pylist(buffer.take(), schema=SCHEMA)
            rows = buffer.take() + [{"broker": SKIPPED, "topic": s.reason, "file": s.file, "position": s.position,
                                     "headers": []} for s in reader.skipped]
            if rows:
                yield pa.RecordBatch.from_pylist(rows, schema=SCHEMA)


def export_on_spark(sources: list[PartitionSource], selection: Selection, out: str, *,
                    master: str | None = None) -> tuple[int, list[str]]:
    """Write the records of `sources` as Parquet under `out` (a folder, absent, empty or an earlier export);
    returns (records written, left-out batches as text)."""
    from kforensics.spark.session import build_session

    spark = SparkSession.getActiveSession() or build_session(master or "local[*]", "kforensics export")
    parent = os.path.dirname(os.path.abspath(out))
    tmp = os.path.join(parent, f".{os.path.basename(os.path.abspath(out))}.kforensics-tmp-{os.getpid()}")
    tasks = spark.createDataFrame([(s.broker, s.topic, s.partition, "\n".join(s.segments)) for s in sources],
                                  "broker string, topic string, partition int, segments string")
    rows = (tasks.repartition(max(1, len(sources)))
            .mapInArrow(functools.partial(_export_rows, selection=selection), DDL).cache())
    try:
        skipped = [f"{r['file']}:{r['position']}: {r['topic']}" for r in
                   rows.filter(rows.broker == SKIPPED).select("file", "position", "topic").collect()]
        data = rows.filter(rows.broker != SKIPPED)
        data.write.option("parquet.block.size", 64 << 20).parquet(tmp)
        count = spark.read.parquet(tmp).count()
        with open(os.path.join(tmp, FOLDER_MARKER), "w", encoding="utf-8") as f:
            json.dump({"tool": "kforensics", "rows": count, "partitions": [[s.broker, s.topic, s.partition]
                                                                            for s in sources]}, f)
        if os.path.isdir(out):  # empty, or an earlier export of ours (check_out_path): only its files go
            for name in os.listdir(out):
                if not (name.startswith(("part-", ".part-", "_SUCCESS", "._SUCCESS")) or name == FOLDER_MARKER):
                    raise OSError(f"{out} holds {name}, which kforensics did not write")
            shutil.rmtree(out)
        os.replace(tmp, out)
    finally:
        rows.unpersist()
        if os.path.isdir(tmp):
            shutil.rmtree(tmp, ignore_errors=True)
    return count, skipped
