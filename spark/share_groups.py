"""Share groups (KIP-932): each share partition's state replayed from `__share_group_state`, held against the log.

The parse pass keeps every ShareSnapshot and ShareUpdate as a row of `share_state_records` (`share_record_rows`);
the replay is SQL over it, per share partition key (group, topic id, partition) of each cluster's longest replica of
a `__share_group_state` partition, in offset order. Rules, as the share coordinator replays its log
(`share-coordinator/.../ShareCoordinatorShard.java` `replay`, `handleShareSnapshot`, `handleShareUpdate`, `merge`,
`maybeGetWriteStateError`, read at apache/kafka 35098fcf, Kafka 4.1 trunk; `PersisterStateBatchCombiner.java` at
apache/kafka 1eb76443; the tombstone branch of `handleShareSnapshot` and `server/share/fetch/RecordState.java` as Kafka
4.3.1 has them, read in a stored quotation of those files, no stored copy of 4.3 itself being found):

- a ShareSnapshot is the whole state (snapshot epoch, state epoch, leader epoch, start offset, batches); a ShareUpdate
  merges into it: its start offset and leader epoch replace the state's unless -1, and its batches are combined with
  the state's (an update before any snapshot is the state as it is);
- combining batches (`PersisterStateBatchCombiner.combineStateBatches`): batches ending below the start offset are
  dropped and one straddling it is cut there; where batches overlap, the one with the higher delivery count wins, at
  equal counts the higher delivery state; adjacent batches of the same state and count are one;
- a tombstone removes the share partition's state (and the epochs recorded for it);
- the coordinator rejects a write whose leader epoch (not -1) is below the highest it recorded for the share
  partition (FENCED_LEADER_EPOCH): such a ShareUpdate on disk was written by a stale share partition leader;
- delivery states: 0 AVAILABLE, 1 ACQUIRED, 2 ACKNOWLEDGED, 3 ARCHIVING (KIP-1191), 4 ARCHIVED.

The share partition is named by topic id; its name comes from the partitions' `partition.metadata`, the KRaft
metadata log or the group's own records (spark/sql/topic_names.sql), and the log it is held against is the name's
longest replica in the same cluster.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame

from kforensics.spark.checks import run_table
from kforensics.spark.views import run_sql

DELIVERY_STATES = {0: "AVAILABLE", 1: "ACQUIRED", 2: "ACKNOWLEDGED", 3: "ARCHIVING", 4: "ARCHIVED"}
#: A share partition key's log: where it was read and the key (SharePartitionKey).
SHARE_KEY = "cluster_id, coordinator_partition, group_id, topic_id, share_partition"


# --- executors: one decoded __share_group_state record -> a row of `share_state_records` ----------------------------

def share_record_rows(where: dict[str, Any], decoded: dict[str, Any]) -> list[dict[str, Any]]:
    """The `share_state_records` row (row_kind "share") of one decoded `__share_group_state` record
    (`internal_topics.decode_share_group_state`); nothing for a record that did not decode, or a newer record type
    or version whose fields did not read (the parse pass reports both)."""
    if "error" in decoded:
        return []
    key, value = decoded["key"], decoded.get("value")
    if key.get("type") not in ("share_snapshot", "share_update"):
        return []
    row = {"row_kind": "share", **where, "group_id": key.get("groupId"), "topic_id": key.get("topicId"),
           "share_partition": key.get("partition"), "record_type": key["type"], "tombstone": value is None}
    if value is None:
        return [row]
    if "leaderEpoch" not in value:
        return []
    row.update(snapshot_epoch=value.get("snapshotEpoch"), state_epoch=value.get("stateEpoch"),
               leader_epoch=value["leaderEpoch"], start_offset=value.get("startOffset"),
               delivery_complete_count=value.get("deliveryCompleteCount", -1),
               state_batches=[{"first_offset": b.get("firstOffset"), "last_offset": b.get("lastOffset"),
                               "delivery_state": b.get("deliveryState"), "delivery_count": b.get("deliveryCount")}
                              for b in value.get("stateBatches") or ()])
    return [row]


# --- the replay ----------------------------------------------------------------------------------------------------


def share_state_table(records: DataFrame, longest: DataFrame, topic_ids: DataFrame, metadata: DataFrame,
                      events: DataFrame) -> DataFrame:
    """Needs share_state_records, longest_replicas, partition_topic_ids, metadata_records and group_events (for the
    topic names the group records give); the `share_partition_state` table: per share partition with state at the
    end of the input (not removed by a tombstone) its epochs and start offset, one row per batch of its state
    (`first_offset` .. `delivery_count`; one row with null batch columns when it holds none), and its latest record
    (coordinator_offset, timestamp, file, position)."""
    states = " ".join(f"WHEN {k} THEN '{v}'" for k, v in DELIVERY_STATES.items())
    return run_sql(f"""
        WITH names AS (SELECT * FROM {{names}}),
        ev AS (SELECT * FROM {{events}}),
        kept AS (
            -- the last life of each key, from its last snapshot on (a key whose last record is a tombstone has none)
            SELECT * FROM (
                SELECT *, max(life) OVER (PARTITION BY {SHARE_KEY}) AS last_life,
                       max(CASE WHEN record_type = 'share_snapshot' AND NOT tombstone THEN offset END)
                           OVER (PARTITION BY {SHARE_KEY}, life) AS base_
                FROM ev)
            WHERE life = last_life AND NOT tombstone AND offset >= coalesce(base_, -1)),
        carried AS (
            SELECT *,
                   coalesce(last(CASE WHEN start_offset <> -1 THEN start_offset END, true) OVER upto, -1) AS start_now,
                   coalesce(last(CASE WHEN leader_epoch <> -1 THEN leader_epoch END, true) OVER upto, -1)
                       AS leader_now,
                   last(state_epoch, true) OVER upto AS state_epoch_now,
                   row_number() OVER (PARTITION BY {SHARE_KEY} ORDER BY offset DESC) AS from_end
            FROM kept WINDOW upto AS (PARTITION BY {SHARE_KEY} ORDER BY offset
                                      ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)),
        pruned AS (
            -- each record's batches cut at the start offset of every merge from it on
            SELECT *, max(start_now) OVER (PARTITION BY {SHARE_KEY} ORDER BY offset
                                           ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS cut_
            FROM carried),
        batches AS (
            SELECT {SHARE_KEY}, greatest(b.first_offset, cut_) AS first_offset, b.last_offset, b.delivery_state,
                   b.delivery_count
            FROM pruned LATERAL VIEW explode(state_batches) t_ AS b
            WHERE b.last_offset >= cut_ AND b.first_offset <= b.last_offset),
        edges AS (
            SELECT {SHARE_KEY}, lo, lead(lo) OVER (PARTITION BY {SHARE_KEY} ORDER BY lo) - 1 AS hi
            FROM (SELECT DISTINCT {SHARE_KEY}, first_offset AS lo FROM batches
                  UNION SELECT DISTINCT {SHARE_KEY}, last_offset + 1 AS lo FROM batches)),
        pieces AS (
            -- the batch that wins each stretch between two batch edges: the higher delivery count, then state
            SELECT {", ".join(f"e.{c.strip()}" for c in SHARE_KEY.split(","))}, e.lo, e.hi,
                   max(named_struct('count', b.delivery_count, 'state', b.delivery_state)) AS w
            FROM edges e JOIN batches b
              ON b.cluster_id = e.cluster_id AND b.coordinator_partition = e.coordinator_partition
             AND b.group_id = e.group_id AND b.topic_id = e.topic_id AND b.share_partition = e.share_partition
             AND b.first_offset <= e.lo AND e.hi <= b.last_offset
            WHERE e.hi IS NOT NULL
            GROUP BY {", ".join(f"e.{c.strip()}" for c in SHARE_KEY.split(","))}, e.lo, e.hi),
        runs AS (
            SELECT {SHARE_KEY}, min(lo) AS first_offset, max(hi) AS last_offset, w.state AS delivery_state,
                   w.count AS delivery_count
            FROM (SELECT *, sum(new_run) OVER (PARTITION BY {SHARE_KEY} ORDER BY lo
                                               ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS run
                  FROM (SELECT *, CASE WHEN lag(hi) OVER k + 1 = lo AND lag(w.state) OVER k = w.state
                                            AND lag(w.count) OVER k = w.count THEN 0 ELSE 1 END AS new_run
                        FROM pieces WINDOW k AS (PARTITION BY {SHARE_KEY} ORDER BY lo)))
            GROUP BY {SHARE_KEY}, run, w.state, w.count),
        heads AS (
            SELECT {SHARE_KEY}, coordinator_broker, snapshot_epoch, state_epoch_now AS state_epoch,
                   leader_now AS leader_epoch, start_now AS start_offset, offset, timestamp, file, position
            FROM carried WHERE from_end = 1)
        SELECT h.cluster_id, h.group_id AS `group`, n.topic, h.topic_id, h.share_partition AS partition,
               h.snapshot_epoch, h.state_epoch, h.leader_epoch, h.start_offset, r.first_offset, r.last_offset,
               CASE r.delivery_state {states} ELSE CAST(r.delivery_state AS STRING) END AS delivery_state,
               r.delivery_count, h.coordinator_broker, h.coordinator_partition, h.offset AS coordinator_offset,
               h.timestamp, h.file, h.position
        FROM heads h
        LEFT JOIN runs r
          ON r.cluster_id = h.cluster_id AND r.coordinator_partition = h.coordinator_partition
         AND r.group_id = h.group_id AND r.topic_id = h.topic_id AND r.share_partition = h.share_partition
        LEFT JOIN names n ON n.topic_id = h.topic_id""",
        names=run_table("topic_names", partition_topic_ids=topic_ids, metadata_records=metadata, group_events=events),
        events=run_table("share_events", share_state_records=records, longest_replicas=longest))


# --- findings ------------------------------------------------------------------------------------------------------


