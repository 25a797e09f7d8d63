"""The records of `__remote_log_metadata`, tiered storage's TopicBasedRemoteLogMetadataManager topic (KIP-405).

Written from apache/kafka `storage/src/main/resources/message/*Record.json` at commit 1acb5232, the newest stored
versions. That copy is newer than any release found: Kafka 4.0.0, 4.1.1 and 4.2.0-rc1 (aiven/inkless mirror) have
version 0 only, without BrokerLeaderEpoch and EndOffset, so version 1 records come from a Kafka newer than 4.2.
In that copy every record has versions 0-1 (RemoteLogSegmentMetadataRecord 0-1 adds the tagged BrokerLeaderEpoch;
RemoteLogSegmentMetadataUpdateRecord 0-1 and RemotePartitionDeleteMetadataRecord 0-1 add tagged BrokerLeaderEpoch
and EndOffset; RemoteLogSegmentMetadataSnapshotRecord 0-1 adds BrokerLeaderEpoch), and the segment and snapshot
records carry the tagged TxnIndexEmpty from version 0 (as 4.0-4.2 do). Every version is flexible.
Values are framed by RemoteLogMetadataSerde (AbstractApiMessageSerde: frame version 1, apiKey, version).
"""

from __future__ import annotations

from kforensics.parsers.message_schema import Field as F
from kforensics.parsers.message_schema import Message

_TOPIC_ID_PARTITION = (F("Name", "string"), F("Id", "uuid"), F("Partition", "int32"))
_SEGMENT_ID = (F("TopicIdPartition", "TopicIdPartitionEntry", fields=_TOPIC_ID_PARTITION), F("Id", "uuid"))
_LEADER_EPOCHS = (F("LeaderEpoch", "int32"), F("Offset", "int64"))
#: The fields after the segment's id, the same in RemoteLogSegmentMetadataRecord and ...SnapshotRecord.
_SEGMENT_FIELDS = (
    F("StartOffset", "int64"), F("EndOffset", "int64"), F("BrokerId", "int32"),
    F("MaxTimestampMs", "int64"), F("EventTimestampMs", "int64"),
    F("SegmentLeaderEpochs", "[]SegmentLeaderEpochEntry", fields=_LEADER_EPOCHS),
    F("SegmentSizeInBytes", "int32"),
    F("CustomMetadata", "bytes", nullable="0+", default=None),
    F("RemoteLogSegmentState", "int8"),
    F("TxnIndexEmpty", "bool", tagged="0+", tag=0),
    F("BrokerLeaderEpoch", "int32", "1+", tagged="1+", tag=1),
)

MESSAGES: tuple[Message, ...] = (
    Message("RemoteLogSegmentMetadataRecord", 0, "0-1", "0+", (
        F("RemoteLogSegmentId", "RemoteLogSegmentIdEntry", fields=_SEGMENT_ID), *_SEGMENT_FIELDS,
    )),
    Message("RemoteLogSegmentMetadataUpdateRecord", 1, "0-1", "0+", (
        F("RemoteLogSegmentId", "RemoteLogSegmentIdEntry", fields=_SEGMENT_ID),
        F("BrokerId", "int32"), F("EventTimestampMs", "int64"),
        F("CustomMetadata", "bytes", nullable="0+", default=None),
        F("RemoteLogSegmentState", "int8"),
        F("BrokerLeaderEpoch", "int32", "1+", tagged="1+", tag=0, default=-1),
        F("EndOffset", "int64", "1+", tagged="1+", tag=1, default=-1),
    )),
    Message("RemotePartitionDeleteMetadataRecord", 2, "0-1", "0+", (
        F("TopicIdPartition", "TopicIdPartitionEntry", fields=_TOPIC_ID_PARTITION),
        F("BrokerId", "int32"), F("EventTimestampMs", "int64"), F("RemotePartitionDeleteState", "int8"),
        F("BrokerLeaderEpoch", "int32", "1+", tagged="1+", tag=0),
        F("EndOffset", "int64", "1+", tagged="1+", tag=1),
    )),
    Message("RemoteLogSegmentMetadataSnapshotRecord", 3, "0-1", "0+", (
        F("SegmentId", "uuid"), *_SEGMENT_FIELDS,
    )),
)

#: apiKey -> message description.
BY_API_KEY: dict[int, Message] = {m.api_key: m for m in MESSAGES}  # type: ignore[misc]
