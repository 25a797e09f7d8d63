"""The records of `__share_group_state`, the share coordinator's log (KIP-932): ShareSnapshot (type 0) and
ShareUpdate (type 1).

A key is an int16 record type and the key message (GroupId, TopicId, Partition) in the classic encoding; a
value is an int16 version and the value message. A null value is a tombstone.

Written from apache/kafka `share-coordinator/src/main/resources/common/message/*.json` at commit 0c9eef59 and
checked field by field against the release tags 4.0.0, 4.1.1 and 4.2.0-rc1 (aiven/inkless mirror): the tables are
Kafka 4.2's (SnapshotEpoch int32, CreateTimestamp and WriteTimestamp in snapshots, the tagged DeliveryCompleteCount
of KIP-1226, which 4.1 does not write; its records read the same).
Kafka changed the values in place at version 0 between 4.0 (early access) and 4.1: 4.0 wrote SnapshotEpoch as a
uint16 and no timestamps (KAFKA-18170 c3b7aa6e added the timestamps, 150412d7 made the epoch an int32). Each value
keeps 4.0's layout as an `older` one, read when the bytes do not read as 4.1+'s.
"""

from __future__ import annotations

from kforensics.parsers.message_schema import Field as F
from kforensics.parsers.message_schema import Message

_KEY_FIELDS = (F("GroupId", "string", "0"), F("TopicId", "uuid", "0"), F("Partition", "int32", "0"))
_STATE_BATCH = (F("FirstOffset", "int64"), F("LastOffset", "int64"), F("DeliveryState", "int8"),
                F("DeliveryCount", "int16"))
_STATE_BATCHES = F("StateBatches", "[]StateBatch", fields=_STATE_BATCH)

#: record type -> (key description, value description).
RECORDS: dict[int, tuple[Message, Message]] = {
    0: (Message("ShareSnapshotKey", None, "0", "none", _KEY_FIELDS), Message("ShareSnapshotValue", None, "0", "0+", (
        F("SnapshotEpoch", "int32"),
        F("StateEpoch", "int32"),
        F("LeaderEpoch", "int32"),
        F("StartOffset", "int64"),
        F("DeliveryCompleteCount", "int32", tagged="0+", tag=0, default=-1),
        F("CreateTimestamp", "int64"),
        F("WriteTimestamp", "int64"),
        _STATE_BATCHES,
    ), older=(Message("ShareSnapshotValue", None, "0", "0+", (
        F("SnapshotEpoch", "uint16"), F("StateEpoch", "int32"), F("LeaderEpoch", "int32"), F("StartOffset", "int64"),
        _STATE_BATCHES,
    ), written_by="Kafka 4.0"),))),
    1: (Message("ShareUpdateKey", None, "0", "none", _KEY_FIELDS), Message("ShareUpdateValue", None, "0", "0+", (
        F("SnapshotEpoch", "int32"),
        F("LeaderEpoch", "int32"),
        F("StartOffset", "int64"),
        F("DeliveryCompleteCount", "int32", tagged="0+", tag=0, default=-1),
        _STATE_BATCHES,
    ), older=(Message("ShareUpdateValue", None, "0", "0+", (
        F("SnapshotEpoch", "uint16"), F("LeaderEpoch", "int32"), F("StartOffset", "int64"), _STATE_BATCHES,
    ), written_by="Kafka 4.0"),))),
}

#: DeliveryState ids of a state batch (the schema's "0:Available,2:Acked,4:Archived").
DELIVERY_STATES = {0: "Available", 2: "Acked", 4: "Archived"}
