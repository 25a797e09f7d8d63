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
