"""The records of `__share_group_state`, the share coordinator's log (KIP-932): ShareSnapshot (type 0) and
ShareUpdate (type 1).

A key is an int16 record type and the key message (GroupId, TopicId, Partition) in the classic encoding; a
value is an int16 version and the value message. A null value is a tombstone.

Written from apache/kafka `share-coordinator/src/main/resources/common/message/*.json` at commit 0c9eef59 (the
Kafka 4.2 line: SnapshotEpoch int32, CreateTimestamp and WriteTimestamp in snapshots, the tagged
DeliveryCompleteCount of KIP-1226). The 4.0 early-access layout (SnapshotEpoch uint16, no timestamps) was
replaced in place at version 0 before share groups became production-ready in 4.1; it is not read.
"""

from __future__ import annotations

from kforensics.parsers.message_schema import Field as F, Message

_KEY_FIELDS = (F("GroupId", "string", "0"), F("TopicId", "uuid", "0"), F("Partition", "int32", "0"))
_STATE_BATCH = (F("FirstOffset", "int64"), F("LastOffset", "int64"), F("DeliveryState", "int8"),
                F("DeliveryCount", "int16"))

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
        F("StateBatches", "[]StateBatch", fields=_STATE_BATCH),
    ))),
    1: (Message("ShareUpdateKey", None, "0", "none", _KEY_FIELDS), Message("ShareUpdateValue", None, "0", "0+", (
        F("SnapshotEpoch", "int32"),
        F("LeaderEpoch", "int32"),
        F("StartOffset", "int64"),
        F("DeliveryCompleteCount", "int32", tagged="0+", tag=0, default=-1),
        F("StateBatches", "[]StateBatch", fields=_STATE_BATCH),
    ))),
}

#: DeliveryState ids of a state batch (the schema's "0:Available,2:Acked,4:Archived").
DELIVERY_STATES = {0: "Available", 2: "Acked", 4: "Archived"}
