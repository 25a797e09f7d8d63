"""Tiered storage: the remote tier as `__remote_log_metadata` describes it, against the local logs.

The executors decode every `__remote_log_metadata` record (in every scan mode: the topic is small) into one
row per event. The transforms fold the events into one row per remote segment with its final state, and
judge each topic partition, matched by name and by the topic id of its `partition.metadata`:
`remote_log_gap`, `remote_segment_stuck`, `remote_leader_epoch_mismatch` and `remote_overlap` (README,
"Findings"). Only COPY_SEGMENT_FINISHED segments count as held by the remote tier.

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
from kforensics.spark.findings import sql_literal
from kforensics.spark.replicas import TP, with_cluster_id_sql
from kforensics.spark.views import run_sql

TOPIC = "__remote_log_metadata"
FINISHED = "COPY_SEGMENT_FINISHED"
# TP (replicas.TP): a data partition across the remote and local tiers (topic ids are compared separately:
# either may be unknown).

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


# --- tables ---------------------------------------------------------------------------------------------

def _last(column: str) -> str:
    """SQL: the value of `column` in the latest record (highest offset in its metadata partition)."""
    return f"max(named_struct('offset', offset, 'v', {column})).v"


#: The columns of the remote_segments table after its key (broker, topic, partition, topic_id).
SEGMENT_COLUMNS = ("remote_segment_id", "start_offset", "end_offset", "max_timestamp", "segment_leader_epochs", "size",
                   "state", "broker_id", "broker_leader_epoch", "first_event_at", "last_event_at", "event_count", "file",
                   "position")


def remote_segments_table(events: DataFrame) -> DataFrame:
    """Needs the events (record_type, topic, topic_id, partition, remote_segment_id, start_offset, end_offset,
    max_timestamp, segment_leader_epochs, size, state, broker_id, event_timestamp, broker_leader_epoch, file,
    position, offset);
    one row per remote segment and broker holding its metadata: topic_id, remote_segment_id, start_offset,
    end_offset, max_timestamp, segment_leader_epochs, size, state (of its latest record), broker_id (the
    broker that copied it), broker_leader_epoch (the record's BrokerLeaderEpoch where its version has the field,
    RemoteLogSegmentMetadataRecord v1 on; else the highest epoch of its entries), first_event_at,
    last_event_at, event_count, and file, position of its latest metadata record."""
    return run_sql(f"""
SELECT broker, topic, partition, topic_id, remote_segment_id, copy.start_offset AS start_offset,
       copy.end_offset AS end_offset, copy.max_timestamp AS max_timestamp,
       copy.segment_leader_epochs AS segment_leader_epochs, copy.size AS size, state, copy.broker_id AS broker_id,
       coalesce(copy.broker_leader_epoch, array_max(transform(split(copy.segment_leader_epochs, ', '),
                                                              e -> cast(split(e, '@')[0] as int))))
         AS broker_leader_epoch,
       first_event_at, last_event_at, event_count, file, position
FROM (
  SELECT broker, topic, partition, topic_id, remote_segment_id,
         min(CASE WHEN record_type = 'segment' THEN struct(offset, start_offset, end_offset, max_timestamp,
             segment_leader_epochs, size, broker_id, broker_leader_epoch) END) AS copy,
         {_last("state")} AS state, min(event_timestamp) AS first_event_at,
         {_last("event_timestamp")} AS last_event_at, count(1) AS event_count, {_last("file")} AS file,
         {_last("position")} AS position
  FROM {{events}} WHERE record_type IN ('segment', 'segment_update')
  GROUP BY broker, topic, partition, topic_id, remote_segment_id)""", events=events)


def remote_partition_deletes_table(events: DataFrame) -> DataFrame:
    """Needs the events; one row per RemotePartitionDeleteMetadataRecord: topic_id, state
    (DELETE_PARTITION_MARKED|STARTED|FINISHED), broker_id, event_timestamp, file, position, offset."""
    return run_sql("""
SELECT broker, topic, partition, topic_id, state, broker_id, event_timestamp, file, position, offset
FROM {events} WHERE record_type = 'partition_delete'""", events=events)


# The five checks are spark/sql/remote_*.sql, over the tables built here.


def finished_copies(segments: DataFrame, brokers: DataFrame) -> DataFrame:
    """Needs remote_segments and brokers; the COPY_SEGMENT_FINISHED segments of each data partition from one
    broker's metadata (the broker with the most events of that partition: replicas of the metadata topic hold
    the same records), with cluster_id and `metadata_broker`."""
    key = ", ".join([*TP, "topic_id"])
    return run_sql(f"""
WITH remote AS ({with_cluster_id_sql("{segments}")}),
counts AS (
  SELECT {key}, broker FROM (
    SELECT {key}, broker, row_number() OVER (PARTITION BY {key} ORDER BY sum(event_count) DESC, broker) AS rank
    FROM remote GROUP BY {key}, broker)
  WHERE rank = 1)
SELECT {key}, broker AS metadata_broker, {", ".join(SEGMENT_COLUMNS)}
FROM remote JOIN counts USING ({key}, broker)
WHERE state = {sql_literal(FINISHED)} AND start_offset IS NOT NULL""", segments=segments, brokers=brokers)


def local_logs(segments: DataFrame, topic_ids: DataFrame, brokers: DataFrame) -> DataFrame:
    """Needs the segments table (broker, topic, partition, base_offset, first_batch_base_offset), the
    partitions' topic ids (broker, topic, partition, topic_id) and brokers; per local replica:
    local_log_start_offset (its first segment's first batch) and local_topic_id."""
    logs = """(
  SELECT * FROM (
    SELECT broker, topic, partition, min(coalesce(first_batch_base_offset, base_offset)) AS local_log_start_offset
    FROM {segments} GROUP BY broker, topic, partition)
  LEFT JOIN (SELECT broker, topic, partition, topic_id AS local_topic_id FROM {topic_ids})
  USING (broker, topic, partition))"""
    return run_sql(
        with_cluster_id_sql(logs), segments=segments,
        topic_ids=topic_ids, brokers=brokers)


def epoch_ranges(segments: DataFrame) -> DataFrame:
    """Needs segments with start_offset, end_offset and segment_leader_epochs (`epoch@offset, ...`); adds one
    row per entry: epoch, lo, hi (the offsets the segment says that epoch covers)."""
    lo = "CAST(split(e.entry, '@')[1] AS BIGINT)"
    return run_sql(f"""
SELECT s.*, CAST(split(e.entry, '@')[0] AS INT) AS epoch, {lo} AS lo,
       coalesce(lead({lo}) OVER (PARTITION BY s.metadata_broker, s.topic, s.partition, s.remote_segment_id
                                 ORDER BY e.i) - 1, s.end_offset) AS hi
FROM {{segments}} s LATERAL VIEW posexplode(split(s.segment_leader_epochs, ', ')) e AS i, entry""", segments=segments)


def range_pairs(ranges: DataFrame) -> DataFrame:
    """Needs epoch_ranges; every pair of ranges of two different segments of the same data partition in the
    same broker's metadata, columns prefixed a_ and b_."""
    key = ", ".join(["metadata_broker", *TP, "topic_id"])
    cols = ["remote_segment_id", "segment_leader_epochs", "start_offset", "end_offset", "first_event_at", "file",
            "position", "epoch", "lo", "hi"]
    a, b = (", ".join(f"{c} AS {side}_{c}" for c in cols) for side in "ab")
    return run_sql(f"""
SELECT * FROM (SELECT {key}, {a} FROM {{ranges}}) JOIN (SELECT {key}, {b} FROM {{ranges}}) USING ({key})
WHERE a_remote_segment_id != b_remote_segment_id""", ranges=ranges)


