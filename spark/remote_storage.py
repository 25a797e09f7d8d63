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

from kforensics.defaults import DEFAULT_REMOTE_STUCK_AFTER_MS
from kforensics.spark import schemas as S
from kforensics.spark.findings import finding_columns, findings_sql, fmt_sql, sql_literal
from kforensics.spark.replicas import TP, with_cluster_id_sql
from kforensics.spark.views import run_sql

TOPIC = "__remote_log_metadata"
FINISHED = "COPY_SEGMENT_FINISHED"
STARTED_STATES = ("COPY_SEGMENT_STARTED", "DELETE_SEGMENT_STARTED")
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


# --- findings -------------------------------------------------------------------------------------------
# Each check is a SQL fragment (spark/findings.py) over the shared tables, named in the text as {remote} (the
# remote_segments table), {finished} (finished_copies), {local} (local_logs), {ranges} (epoch_ranges of
# finished_copies), {pairs} (range_pairs) and {epochs} (the leader_epochs table); `remote_fragments` lists the
# five.

# A recreated topic has the same name and another id: its old remote segments are not its history.
_SAME_TOPIC = "(topic_id IS NULL OR local_topic_id IS NULL OR topic_id = local_topic_id)"


def remote_segment_stuck_sql(stuck_after_ms: int = DEFAULT_REMOTE_STUCK_AFTER_MS) -> str:
    """Reads {remote} (broker, topic, partition, topic_id, remote_segment_id, start_offset, end_offset, state,
    last_event_at, file, position); the fragment of `remote_segment_stuck`."""
    after = int(stuck_after_ms)
    columns = finding_columns(
        "remote_segment_stuck", offset="start_offset", producer_id=None, producer_epoch=None,
        message=fmt_sql("Remote segment %s (offsets %d-%d) has been %s for %d ms before the partition's newest remote "
                        "log metadata event.", "remote_segment_id", "start_offset", "end_offset", "state", "stuck_ms"),
        details={"remote_segment_id": "remote_segment_id", "state": "state", "start_offset": "start_offset",
                 "end_offset": "end_offset", "stuck_since": "last_event_at", "newest_event_at": "newest_event_at",
                 "stuck_ms": "stuck_ms", "stuck_after_ms": f"({after})"})
    return f"""
SELECT {columns} FROM (
  SELECT *, newest_event_at - last_event_at AS stuck_ms FROM (
    SELECT *, max(last_event_at) OVER (PARTITION BY broker, topic, topic_id, partition) AS newest_event_at
    FROM {{remote}}))
WHERE state IN ({', '.join(sql_literal(s) for s in STARTED_STATES)}) AND stuck_ms > ({after})"""


def remote_segment_stuck(segments: DataFrame, stuck_after_ms: int = DEFAULT_REMOTE_STUCK_AFTER_MS) -> DataFrame:
    """Needs remote_segments; `remote_segment_stuck` findings: a segment whose latest state is
    COPY_SEGMENT_STARTED or DELETE_SEGMENT_STARTED, entered more than `stuck_after_ms` before the newest
    event of its partition (in the same broker's metadata)."""
    return findings_sql([remote_segment_stuck_sql(stuck_after_ms)], remote=segments)


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


def remote_log_gaps_sql() -> str:
    """Reads {finished} (cluster_id, topic, partition, topic_id, start_offset, end_offset, file, position) and
    {local} (broker, cluster_id, topic, partition, local_log_start_offset, local_topic_id); the fragment of
    `remote_log_gaps`."""
    columns = finding_columns(
        "remote_log_gap", offset="first_missing", producer_id=None, producer_epoch=None,
        message=fmt_sql("Offsets %d-%d are in neither tier: the remote tier ends at %d below them and the local log "
                        "starts at %d.", "first_missing", "last_missing", "remote_end_offset",
                        "local_log_start_offset"),
        details={"missing_offsets": "array(first_missing, last_missing)", "remote_end_offset": "remote_end_offset",
                 "local_log_start_offset": "local_log_start_offset", "topic_id": "topic_id"})
    # the local log as one more interval closes the last gap
    return f"""
WITH intervals AS (
  SELECT broker, cluster_id, topic, partition, topic_id, local_log_start_offset, start_offset, end_offset, file,
         position
  FROM {{finished}} JOIN {{local}} USING (cluster_id, topic, partition)
  WHERE {_SAME_TOPIC} AND start_offset < local_log_start_offset),
bounded AS (
  SELECT * FROM intervals
  UNION ALL
  SELECT broker, cluster_id, topic, partition, topic_id, local_log_start_offset, local_log_start_offset,
         local_log_start_offset, CAST(NULL AS STRING), CAST(NULL AS BIGINT)
  FROM (SELECT DISTINCT broker, cluster_id, topic, partition, topic_id, local_log_start_offset FROM intervals)),
preceded AS (
  SELECT *, max(named_struct('end_offset', end_offset, 'file', file, 'position', position)) OVER (
           PARTITION BY broker, cluster_id, topic, partition ORDER BY start_offset, end_offset
           ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev
  FROM bounded)
SELECT {columns} FROM (
  SELECT broker, cluster_id, topic, partition, topic_id, local_log_start_offset, prev.end_offset + 1 AS first_missing,
         start_offset - 1 AS last_missing, prev.end_offset AS remote_end_offset, prev.file AS file,
         prev.position AS position
  FROM preceded WHERE prev IS NOT NULL AND start_offset > prev.end_offset + 1)"""


def remote_log_gaps(finished: DataFrame, local: DataFrame) -> DataFrame:
    """Needs finished_copies and local_logs; `remote_log_gap` findings: per local replica, the offsets from the
    earliest finished remote segment up to the local log start that no finished remote segment holds (one
    finding per missing range: missing_offsets [first, last], remote_end_offset (the highest remote offset
    below the gap), local_log_start_offset); file and position are the metadata record of the segment ending
    at remote_end_offset."""
    return findings_sql([remote_log_gaps_sql()], finished=finished, local=local)


def epoch_ranges(segments: DataFrame) -> DataFrame:
    """Needs segments with start_offset, end_offset and segment_leader_epochs (`epoch@offset, ...`); adds one
    row per entry: epoch, lo, hi (the offsets the segment says that epoch covers)."""
    lo = "CAST(split(e.entry, '@')[1] AS BIGINT)"
    return run_sql(f"""
SELECT s.*, CAST(split(e.entry, '@')[0] AS INT) AS epoch, {lo} AS lo,
       coalesce(lead({lo}) OVER (PARTITION BY s.metadata_broker, s.topic, s.partition, s.remote_segment_id
                                 ORDER BY e.i) - 1, s.end_offset) AS hi
FROM {{segments}} s LATERAL VIEW posexplode(split(s.segment_leader_epochs, ', ')) e AS i, entry""", segments=segments)


def remote_epoch_mismatches_with_checkpoint_sql() -> str:
    """Reads {ranges} (epoch_ranges of finished_copies: cluster_id, topic, partition, topic_id, remote_segment_id,
    segment_leader_epochs, file, position, epoch, lo, hi), {local} (broker, cluster_id, topic, partition,
    local_topic_id) and {epochs} (the leader_epochs table: broker, topic, partition, file, epoch, start_offset);
    the fragment of `remote_epoch_mismatches_with_checkpoint`."""
    columns = finding_columns(
        "remote_leader_epoch_mismatch", offset="m.offset", producer_id=None, producer_epoch=None,
        message=fmt_sql("Remote segment %s says offset %d is in leader epoch %d; the local leader-epoch-checkpoint "
                        "says epoch %d.", "remote_segment_id", "m.offset", "m.remote_epoch", "m.expected_epoch"),
        details={"remote_segment_id": "remote_segment_id", "against": sql_literal("leader-epoch-checkpoint"),
                 "remote_epoch": "m.remote_epoch", "expected_epoch": "m.expected_epoch",
                 "segment_leader_epochs": "segment_leader_epochs", "checkpoint_file": "checkpoint_file",
                 "other_remote_segment_id": "CAST(NULL AS STRING)"})
    return f"""
WITH checkpoint AS (
  SELECT broker, topic, partition, file AS checkpoint_file, epoch AS expected_epoch, start_offset AS c_lo,
         lead(start_offset) OVER (PARTITION BY broker, topic, partition ORDER BY start_offset) - 1 AS c_hi
  FROM {{epochs}}),
covered AS (
  SELECT * FROM {{ranges}} JOIN {{local}} USING (cluster_id, topic, partition) WHERE {_SAME_TOPIC})
SELECT {columns} FROM (
  SELECT broker, cluster_id, topic, partition, remote_segment_id, segment_leader_epochs, file, position,
         checkpoint_file,
         min(named_struct('offset', greatest(lo, c_lo), 'remote_epoch', epoch, 'expected_epoch', expected_epoch)) AS m
  FROM covered JOIN checkpoint USING (broker, topic, partition)
  WHERE epoch != expected_epoch AND lo <= coalesce(c_hi, hi) AND c_lo <= hi
  GROUP BY broker, cluster_id, topic, partition, remote_segment_id, segment_leader_epochs, file, position,
           checkpoint_file)"""


def remote_epoch_mismatches_with_checkpoint(ranges: DataFrame, local: DataFrame, epochs: DataFrame) -> DataFrame:
    """Needs epoch_ranges (of finished_copies), local_logs and the leader_epochs table (broker, topic, partition, file, epoch,
    start_offset); `remote_leader_epoch_mismatch` findings (`against`: leader-epoch-checkpoint): a finished
    remote segment that assigns another epoch than the local replica's leader-epoch-checkpoint to an offset
    both cover (the checkpoint covers offsets from its first entry on): offset (the first such offset),
    remote_epoch, expected_epoch (the checkpoint's), segment_leader_epochs, checkpoint_file."""
    return findings_sql([remote_epoch_mismatches_with_checkpoint_sql()], ranges=ranges, local=local, epochs=epochs)


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


def remote_epoch_chain_mismatches_sql() -> str:
    """Reads {pairs} (range_pairs of finished_copies: metadata_broker, cluster_id, topic, partition and the a_/b_
    remote_segment_id, segment_leader_epochs, file, position, epoch, lo, hi); the fragment of
    `remote_epoch_chain_mismatches`."""
    columns = finding_columns(
        "remote_leader_epoch_mismatch", file="b_file", position="b_position", offset="m.offset", producer_id=None,
        producer_epoch=None,
        message=fmt_sql("Remote segment %s says offset %d is in leader epoch %d, but remote segment %s holds epoch %d "
                        "at lower offsets.", "b_remote_segment_id", "m.offset", "m.remote_epoch", "m.other",
                        "m.expected_epoch"),
        details={"remote_segment_id": "b_remote_segment_id", "against": sql_literal("remote segments"),
                 "remote_epoch": "m.remote_epoch", "expected_epoch": "m.expected_epoch",
                 "segment_leader_epochs": "b_segment_leader_epochs", "checkpoint_file": "CAST(NULL AS STRING)",
                 "other_remote_segment_id": "m.other"})
    return f"""
SELECT {columns} FROM (
  SELECT metadata_broker AS broker, cluster_id, topic, partition, b_remote_segment_id, b_segment_leader_epochs, b_file,
         b_position,
         min(named_struct('offset', b_lo, 'remote_epoch', b_epoch, 'expected_epoch', a_epoch,
                          'other', a_remote_segment_id)) AS m
  FROM {{pairs}} WHERE a_hi < b_lo AND a_epoch > b_epoch
  GROUP BY metadata_broker, cluster_id, topic, partition, b_remote_segment_id, b_segment_leader_epochs, b_file,
           b_position)"""


def remote_epoch_chain_mismatches(pairs: DataFrame) -> DataFrame:
    """Needs range_pairs (of finished_copies); `remote_leader_epoch_mismatch` findings (`against`: remote segments): a finished
    segment holding, at offsets above another finished segment's range of epoch E, an epoch lower than E (a
    partition's leader epoch never decreases along its log). Reported on the later segment: offset,
    remote_epoch, expected_epoch (at least E), other_remote_segment_id."""
    return findings_sql([remote_epoch_chain_mismatches_sql()], pairs=pairs)


def remote_overlaps_sql() -> str:
    """Reads {pairs} (range_pairs of finished_copies: metadata_broker, cluster_id, topic, partition and the a_/b_
    remote_segment_id, segment_leader_epochs, start_offset, end_offset, first_event_at, file, position, epoch,
    lo, hi); the fragment of `remote_overlaps`."""
    columns = finding_columns(
        "remote_overlap", file="b_file", position="b_position", offset="first_overlap", producer_id=None,
        producer_epoch=None,
        message=fmt_sql("Remote segments %s and %s both hold offsets %d-%d with different leader epochs (%s vs %s).",
                        "b_remote_segment_id", "a_remote_segment_id", "first_overlap", "last_overlap",
                        "b_segment_leader_epochs", "a_segment_leader_epochs"),
        details={"remote_segment_id": "b_remote_segment_id", "other_remote_segment_id": "a_remote_segment_id",
                 "overlap": "array(first_overlap, last_overlap)", "segment_leader_epochs": "b_segment_leader_epochs",
                 "other_segment_leader_epochs": "a_segment_leader_epochs"})
    return f"""
SELECT {columns} FROM (
  SELECT metadata_broker AS broker, cluster_id, topic, partition, b_remote_segment_id, a_remote_segment_id,
         b_segment_leader_epochs, a_segment_leader_epochs, b_file, b_position,
         greatest(a_start_offset, b_start_offset) AS first_overlap, least(a_end_offset, b_end_offset) AS last_overlap
  FROM {{pairs}}
  WHERE (b_first_event_at > a_first_event_at
         OR (b_first_event_at = a_first_event_at AND b_remote_segment_id > a_remote_segment_id))
    AND a_epoch != b_epoch AND a_lo <= b_hi AND b_lo <= a_hi
  GROUP BY metadata_broker, cluster_id, topic, partition, b_remote_segment_id, a_remote_segment_id,
           b_segment_leader_epochs, a_segment_leader_epochs, b_file, b_position, a_start_offset, a_end_offset,
           b_start_offset, b_end_offset)"""


def remote_overlaps(pairs: DataFrame) -> DataFrame:
    """Needs range_pairs (of finished_copies); `remote_overlap` findings: two finished segments of a partition holding the same
    offsets with different leader-epoch chains (some common offset in different epochs). One finding per pair,
    on the segment copied later: remote_segment_id, other_remote_segment_id, overlap [first, last] (of their
    offset ranges), segment_leader_epochs, other_segment_leader_epochs; offset is the first overlapping one."""
    return findings_sql([remote_overlaps_sql()], pairs=pairs)


def remote_fragments(stuck_after_ms: int) -> list[str]:
    """The fragments of the five tiered-storage checks (remote_segment_stuck, remote_log_gap,
    remote_leader_epoch_mismatch against the leader-epoch-checkpoint and along the remote segments,
    remote_overlap), over the tables named above."""
    return [remote_segment_stuck_sql(stuck_after_ms), remote_log_gaps_sql(), remote_epoch_mismatches_with_checkpoint_sql(),
            remote_epoch_chain_mismatches_sql(), remote_overlaps_sql()]
