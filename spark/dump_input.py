"""kafka-dump-log text as scan input: one task per text file, parsed on an executor into the rows a segment task
emits (batch, segment and finding rows of `schemas.SEGMENT_ROWS`), so that the batches and segments tables and
everything built on batches alone work on it.

What needs the files themselves is not in the text: indexes, producer snapshots, .txnindex, checkpoints,
leader-epoch-checkpoint and record contents. The checks that compare against them find nothing to compare for a
dump input, except the .txnindex check, which would report every abort as missing from the index: it is
skipped for dump inputs (the input table `dump_text_inputs` names them; spark/sql/txnindex_markers.sql).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from kforensics.spark import schemas as S

if TYPE_CHECKING:
    from kforensics.spark.executor_files import Rows

TASK_KIND = "dump_text"


def dump_text_rows(tasks: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """mapInArrow: dump-text tasks -> batch, segment and finding rows (SEGMENT_ROWS)."""
    from kforensics.spark.executor_files import Rows, finding_row, unreadable

    out = Rows(S.SEGMENT_ROWS)
    for chunk in tasks:
        for task in chunk.to_pylist():
            try:
                yield from _dump_task_rows(task, out)
            except OSError as exc:
                yield from out.add(finding_row(task, unreadable(task["path"], exc)))
    yield from out.flush()


def _dump_task_rows(task: dict[str, Any], out: Rows) -> Iterator[pa.RecordBatch]:
    """One dump-text task's rows, through `out`."""
    from kforensics.parsers.dump_text import DumpBatch, DumpSegment, iter_dump_text
    from kforensics.parsers.findings import Finding
    from kforensics.spark.executor_files import finding_row, local_file

    uri = task["path"]
    with local_file(uri) as path:
        if path is None:
            yield from out.add(finding_row(task, Finding("unreadable_file", uri, None, f"cannot read {uri}")))
            return
        with open(path, "rb") as lines:
            for item in iter_dump_text(lines, uri):
                if isinstance(item, DumpBatch):
                    yield from out.add(_batch_row(task["broker"], item))
                elif isinstance(item, DumpSegment):
                    yield from out.add(_segment_row(task["broker"], item))
                else:  # a batch's finding names its partition in its details
                    details = dict(item.details)
                    where = {**task, "topic": details.pop("topic", None), "partition": details.pop("partition", None)}
                    yield from out.add(finding_row(where, Finding(item.kind, item.file, item.position, item.message,
                                                                  details, item.severity)))


def dump_rows(task_df: DataFrame, n_dumps: int, topic_glob: str | None) -> DataFrame:
    """Needs the task table of `read.read_tables`; the SEGMENT_ROWS of its `n_dumps` dump-text tasks (one Spark task
    each), only of topics matching `topic_glob` (findings about no partition are kept)."""
    dumps = task_df.filter(F.col("task_kind") == TASK_KIND).repartition(n_dumps)
    rows = dumps.mapInArrow(dump_text_rows, S.ddl(S.SEGMENT_ROWS))
    if topic_glob:  # fnmatch's regex is Java-compatible; rlike searches, hence the ^
        rows = rows.filter(F.col("topic").isNull() | F.col("topic").rlike("^" + fnmatch.translate(topic_glob)))
    return rows


def _batch_row(broker: str, b: Any) -> dict[str, Any]:
    """A DumpBatch as a batch row: every column by name (null where the text does not hold it)."""
    return {"row_kind": "batch", "broker": broker, "topic": b.topic, "partition": b.partition,
            **{name: getattr(b, name) for name, _ in S.BATCH_FIELDS}}


def _segment_row(broker: str, s: Any) -> dict[str, Any]:
    return {"row_kind": "segment", "broker": broker, "topic": s.topic, "partition": s.partition, "file": s.file,
            "segment_base_offset": s.base_offset, "size": s.size, "first_batch_base_offset": s.first_batch_base_offset,
            "last_offset": s.last_offset, "batch_count": s.batch_count, "record_count": s.record_count,
            "valid_bytes": s.valid_bytes}
