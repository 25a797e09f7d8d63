"""Tiered storage: the remote tier as `__remote_log_metadata` describes it, against the local logs.

The executors decode every `__remote_log_metadata` record (in every scan mode: the topic is small) into one
row per event. The transforms fold the events into one row per remote segment with its final state, and
judge each topic partition, matched by name and by the topic id of its `partition.metadata`:
the models and checks of spark/sql/ whose header names `applies =
"has_remote_log_metadata"`. Only COPY_SEGMENT_FINISHED segments count as held by the remote tier.

A segment's `segment_leader_epochs` are the leader epoch cache sliced to the segment
(LeaderEpochFileCache.epochEntriesInRange): the first entry is clipped to the segment's start offset, each
later entry is the offset where its epoch began. So epoch `e_i` covers [o_i, o_{i+1} - 1], the last one up
to the segment's end offset.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from kforensics.spark import schemas as S

TOPIC = "__remote_log_metadata"
FINISHED = "COPY_SEGMENT_FINISHED"

EVENT_ROWS = S.REMOTE_EVENT_ROWS
EVENT_DDL = S.ddl(EVENT_ROWS)


def epochs_text(entries: list[tuple[int, int]] | None) -> str | None:
    """`epoch@offset, ...` in offset order, as the replicas table writes a leader-epoch-checkpoint."""
    return None if entries is None else ", ".join(f"{e}@{o}" for e, o in entries)


# --- executors ------------------------------------------------------------------------------------------

def event_rows(tasks: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """mapInArrow: segment tasks of `__remote_log_metadata` -> one row per record (an event) or finding."""
    from kforensics.parsers.findings import Finding
    from kforensics.parsers.remote_log_metadata import iter_remote_log_metadata, remote_log_event
    from kforensics.spark.executor_files import local_file

    rows: list[dict] = []
    for chunk in tasks:
        for task in chunk.to_pylist():
            where = {"broker": task["broker"], "metadata_partition": task["partition"], "file": task["path"]}
            try:
                with local_file(task["path"]) as path:
                    if path is None:
                        continue
                    for item in iter_remote_log_metadata(path):
                        if isinstance(item, Finding):
                            if item.kind not in ("internal_record_undecodable", "internal_record_newer_version"):
                                continue  # damage to the batches themselves is reported by the segment pass
                            rows.append({"row_kind": "finding", **where, "topic": TOPIC, "partition": task["partition"],
                                         "position": item.position, "offset": item.details.get("offset"),
                                         "kind": item.kind, "severity": item.effective_severity,
                                         "message": item.message, "details": json.dumps(dict(item.details))})
                            continue
                        position, offset, timestamp, decoded = item
                        e = remote_log_event(decoded)
                        rows.append({"row_kind": "event", **where, "position": position, "offset": offset,
                                     "timestamp": timestamp, **{k: e[k] for k in (
                                         "record_type", "topic", "topic_id", "partition", "remote_segment_id",
                                         "start_offset", "end_offset", "max_timestamp", "size", "state", "broker_id",
                                         "event_timestamp", "broker_leader_epoch")},
                                     "segment_leader_epochs": epochs_text(e["segment_leader_epochs"])})
                        if len(rows) >= 8192:
                            yield pa.RecordBatch.from_pylist(rows, schema=EVENT_ROWS)
                            rows = []
            except OSError:
                pass  # the parse pass reports the segment as unreadable_file; the events read before stay
    if rows:
        yield pa.RecordBatch.from_pylist(rows, schema=EVENT_ROWS)


def read_events(segment_tasks: DataFrame, present: bool) -> DataFrame:
    """Needs the segment task rows (task_kind, broker, topic, partition, path, ...); the decoded events and
    undecodable-record findings of every `__remote_log_metadata` segment (no job when none is `present`)."""
    events = (segment_tasks.filter((F.col("topic") == TOPIC) & F.col("path").endswith(".log"))
              .mapInArrow(event_rows, EVENT_DDL))
    return events if present else events.limit(0)


# The tables and the five checks are spark/sql/remote_*.sql, finished_copies.sql, local_logs.sql, epoch_ranges.sql
# and range_pairs.sql, over the events decoded here.
