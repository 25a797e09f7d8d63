"""The records of `__consumer_offsets`, the group coordinator's log: key types 0-23 with their values.

A key is an int16 record type (CoordinatorRecordType; before Kafka 4.0 the schemas called it the key "version")
followed by the key message in the classic encoding; a value is an int16 version followed by the value message.
A null value is a tombstone.

Written from apache/kafka `group-coordinator/src/main/resources/common/message/*.json` and checked field by
field against the release tags 4.0.0, 4.1.1 and 4.2.0-rc1 (in the aiven/inkless mirror, whose commit hashes are
cited; 4.0.1, 4.1.0 and inkless-4.2.1 have the same files): the tables are Kafka 4.2's, with these exceptions.
- Type 0 (LegacyOffsetCommitKey, written by brokers before 2.x) is paired with OffsetCommitValue 0-4; Kafka 4.2's
  LegacyOffsetCommitValue is version 0 only, so the pairing is lenient.
- Type 9 (ShareGroupPartitionMetadata) is Kafka 4.0's; Kafka 4.1 dropped it. Type 18
  (StreamsGroupPartitionMetadata) is from a development branch of KIP-1071 and is in no release.
- ConsumerGroupMetadataValue's tagged CreationTimeMs (tag 1) is from a later stored copy (apache/kafka 266ed846),
  not from 4.2.0-rc1. It is tagged, so older records read the same.
- Share group records (KIP-932) were changed in place at version 0 between Kafka 4.0 (early access) and 4.1.
  ShareGroupMetadataValue gained MetadataHash (KAFKA-17747, 369cc569). ShareGroupStatePartitionMetadataValue
  gained InitializingTopics as its first field (KAFKA-18827, 37f7434e). Each keeps its 4.0 layout as an `older` one,
  read when the bytes do not read as 4.1+'s.
- StreamsGroupMetadataValue (17) is 4.2's. 4.1 wrote Epoch and MetadataHash only; 4.2 added the tagged
  ValidatedTopologyEpoch and LastAssignmentConfigs (KAFKA-19661 4cb5f1ca, KAFKA-19765 36f17cfe). 4.1's bytes
  read as 4.2's layout, so there is no older layout. Kafka 4.0 had no streams group records.
- StreamsGroupCurrentMemberAssignmentValue's TaskIds carry the tagged AssignmentEpochs (4.2, KAFKA-19779 c8882979).
- ConsumerGroupCurrentMemberAssignmentValue's TopicPartitions (AssignedPartitions and PartitionsPendingRevocation)
  carry the tagged AssignmentEpochs of KIP-1251 (Kafka 4.3, KAFKA-20066, apache/kafka#21558): the epoch at which each
  of the topic's partitions was assigned to the member, in the order of Partitions. No stored copy of the 4.3 JSON
  was found; the field is declared as StreamsGroupCurrentMemberAssignmentValue's TaskIds declare theirs (a []int32,
  tag 0, nullable, null by default), which is what the coordinator reads back (`Utils`: a null or short list means
  the member epoch for the partitions it does not cover, #21594). A writer of another tag would leave it an unknown
  tagged field, kept and printed as such, never misread.
- OffsetCommitValue v4 has the tagged `topicId` (Kafka 4.1+, KAFKA-19141 199772ad).
A stored apache/kafka copy of ShareGroupStatePartitionMetadataValue (25002b6a) adds a non-tagged CreateTimestamp
to TopicPartitionsInfo. That copy is in no release and not in trunk up to November 2025, so it is not read.
"""

from __future__ import annotations

from kforensics.parsers.message_schema import Field as F
from kforensics.parsers.message_schema import Message

_GROUP = F("GroupId", "string", "0")
_MEMBER = F("MemberId", "string", "0")


def _key(name: str, *fields: F) -> Message:
    return Message(name, None, "0", "none", fields)


_TOPIC_PARTITIONS = (F("TopicId", "uuid"), F("Partitions", "[]int32"))
#: TopicPartitions of ConsumerGroupCurrentMemberAssignmentValue: the epoch each partition was assigned at (KIP-1251).
_TOPIC_PARTITIONS_WITH_EPOCHS = (*_TOPIC_PARTITIONS, F("AssignmentEpochs", "[]int32", nullable="0+", tagged="0+",
                                                      tag=0, default=None))
_TOPIC_METADATA = (
    F("TopicId", "uuid"), F("TopicName", "string"), F("NumPartitions", "int32"),
    F("PartitionMetadata", "[]PartitionMetadata", fields=(F("Partition", "int32"), F("Racks", "[]string"))),
)
_TASK_IDS = (F("SubtopologyId", "string"), F("Partitions", "[]int32"))
#: TaskIds of StreamsGroupCurrentMemberAssignmentValue: the epoch each partition was assigned at (active tasks).
_TASK_IDS_WITH_EPOCHS = (*_TASK_IDS, F("AssignmentEpochs", "[]int32", nullable="0+", tagged="0+", tag=0,
                                       default=None))
_TOPIC_PARTITIONS_INFO = (F("TopicId", "uuid"), F("TopicName", "string"), F("Partitions", "[]int32"))
_TOPIC_ID_NAME = (F("TopicId", "uuid"), F("TopicName", "string"))
_OFFSET_COMMIT_KEY = (F("group", "string", "0"), F("topic", "string", "0"), F("partition", "int32", "0"))
_OFFSET_COMMIT_VALUE = Message("OffsetCommitValue", None, "0-4", "4+", (
    F("offset", "int64"),
    F("leaderEpoch", "int32", "3+", default=-1, ignorable=True),
    F("metadata", "string"),
    F("commitTimestamp", "int64"),
    F("expireTimestamp", "int64", "1", default=-1, ignorable=True),
    F("topicId", "uuid", "4+", tagged="4+", tag=0, ignorable=True),
))
_TOPIC_INFO = (F("Name", "string"), F("Partitions", "int32"), F("ReplicationFactor", "int16"),
               F("TopicConfigs", "[]TopicConfig", fields=(F("key", "string"), F("value", "string"))))

#: record type -> (key description, value description): CoordinatorRecordType's group coordinator records.
RECORDS: dict[int, tuple[Message, Message]] = {
    0: (_key("LegacyOffsetCommitKey", *_OFFSET_COMMIT_KEY), _OFFSET_COMMIT_VALUE),
    1: (_key("OffsetCommitKey", *_OFFSET_COMMIT_KEY), _OFFSET_COMMIT_VALUE),
    2: (_key("GroupMetadataKey", F("group", "string", "0")), Message("GroupMetadataValue", None, "0-4", "4+", (
        F("protocolType", "string"),
        F("generation", "int32"),
        F("protocol", "string", nullable="0+"),
        F("leader", "string", nullable="0+"),
        F("currentStateTimestamp", "int64", "2+", default=-1, ignorable=True),
        F("members", "[]MemberMetadata", fields=(
            F("memberId", "string"),
            F("groupInstanceId", "string", "3+", nullable="3+", default=None, ignorable=True),
            F("clientId", "string"),
            F("clientHost", "string"),
            F("rebalanceTimeout", "int32", "1+", default=-1, ignorable=True),
            F("sessionTimeout", "int32"),
            F("subscription", "bytes"),
            F("assignment", "bytes"),
        )),
    ))),
    3: (_key("ConsumerGroupMetadataKey", _GROUP), Message("ConsumerGroupMetadataValue", None, "0", "0+", (
        F("Epoch", "int32"),
        F("MetadataHash", "int64", tagged="0+", tag=0, default=0),
        F("CreationTimeMs", "int64", tagged="0+", tag=1, default=-1),
    ))),
    4: (_key("ConsumerGroupPartitionMetadataKey", _GROUP), Message(
        "ConsumerGroupPartitionMetadataValue", None, "0", "0+",
        (F("Topics", "[]TopicMetadata", fields=_TOPIC_METADATA),))),
    5: (_key("ConsumerGroupMemberMetadataKey", _GROUP, _MEMBER), Message(
        "ConsumerGroupMemberMetadataValue", None, "0", "0+", (
            F("InstanceId", "string", nullable="0+"),
            F("RackId", "string", nullable="0+"),
            F("ClientId", "string"),
            F("ClientHost", "string"),
            F("SubscribedTopicNames", "[]string"),
            F("SubscribedTopicRegex", "string", nullable="0+"),
            F("RebalanceTimeoutMs", "int32", default=-1),
            F("ServerAssignor", "string", nullable="0+"),
            F("ClassicMemberMetadata", "ClassicMemberMetadata", nullable="0+", tagged="0+", tag=0, default=None,
              fields=(F("SessionTimeoutMs", "int32"), F("SupportedProtocols", "[]ClassicProtocol", fields=(
                  F("Name", "string"), F("Metadata", "bytes"))))),
        ))),
    6: (_key("ConsumerGroupTargetAssignmentMetadataKey", _GROUP), Message(
        "ConsumerGroupTargetAssignmentMetadataValue", None, "0", "0+", (F("AssignmentEpoch", "int32"),))),
    7: (_key("ConsumerGroupTargetAssignmentMemberKey", _GROUP, _MEMBER), Message(
        "ConsumerGroupTargetAssignmentMemberValue", None, "0", "0+",
        (F("TopicPartitions", "[]TopicPartition", fields=_TOPIC_PARTITIONS),))),
    8: (_key("ConsumerGroupCurrentMemberAssignmentKey", _GROUP, _MEMBER), Message(
        "ConsumerGroupCurrentMemberAssignmentValue", None, "0", "0+", (
            F("MemberEpoch", "int32"), F("PreviousMemberEpoch", "int32"), F("State", "int8"),
            F("AssignedPartitions", "[]TopicPartitions", fields=_TOPIC_PARTITIONS_WITH_EPOCHS),
            F("PartitionsPendingRevocation", "[]TopicPartitions", fields=_TOPIC_PARTITIONS_WITH_EPOCHS),
        ))),
    9: (_key("ShareGroupPartitionMetadataKey", _GROUP), Message(
        "ShareGroupPartitionMetadataValue", None, "0", "0+",
        (F("Topics", "[]TopicMetadata", fields=_TOPIC_METADATA),))),
    10: (_key("ShareGroupMemberMetadataKey", _GROUP, _MEMBER), Message(
        "ShareGroupMemberMetadataValue", None, "0", "0+", (
            F("RackId", "string", nullable="0+"), F("ClientId", "string"), F("ClientHost", "string"),
            F("SubscribedTopicNames", "[]string"),
        ))),
    11: (_key("ShareGroupMetadataKey", _GROUP), Message(
        "ShareGroupMetadataValue", None, "0", "0+", (F("Epoch", "int32"), F("MetadataHash", "int64")),
        older=(Message("ShareGroupMetadataValue", None, "0", "0+", (F("Epoch", "int32"),),
                       written_by="Kafka 4.0"),))),
    12: (_key("ShareGroupTargetAssignmentMetadataKey", _GROUP), Message(
        "ShareGroupTargetAssignmentMetadataValue", None, "0", "0+", (F("AssignmentEpoch", "int32"),))),
    13: (_key("ShareGroupTargetAssignmentMemberKey", _GROUP, _MEMBER), Message(
        "ShareGroupTargetAssignmentMemberValue", None, "0", "0+",
        (F("TopicPartitions", "[]TopicPartition", fields=_TOPIC_PARTITIONS),))),
    14: (_key("ShareGroupCurrentMemberAssignmentKey", _GROUP, _MEMBER), Message(
        "ShareGroupCurrentMemberAssignmentValue", None, "0", "0+", (
            F("MemberEpoch", "int32"), F("PreviousMemberEpoch", "int32"), F("State", "int8"),
            F("AssignedPartitions", "[]TopicPartitions", fields=_TOPIC_PARTITIONS),
        ))),
    15: (_key("ShareGroupStatePartitionMetadataKey", _GROUP), Message(
        "ShareGroupStatePartitionMetadataValue", None, "0", "0+", (
            F("InitializingTopics", "[]TopicPartitionsInfo", fields=_TOPIC_PARTITIONS_INFO),
            F("InitializedTopics", "[]TopicPartitionsInfo", fields=_TOPIC_PARTITIONS_INFO),
            F("DeletingTopics", "[]TopicInfo", fields=_TOPIC_ID_NAME),
        ), older=(Message("ShareGroupStatePartitionMetadataValue", None, "0", "0+", (
            F("InitializedTopics", "[]TopicPartitionsInfo", fields=_TOPIC_PARTITIONS_INFO),
            F("DeletingTopics", "[]TopicInfo", fields=_TOPIC_ID_NAME),
        ), written_by="Kafka 4.0"),))),
    16: (_key("ConsumerGroupRegularExpressionKey", _GROUP, F("RegularExpression", "string", "0")), Message(
        "ConsumerGroupRegularExpressionValue", None, "0", "0+", (
            F("Topics", "[]string"), F("Version", "int64"), F("Timestamp", "int64"),
        ))),
    17: (_key("StreamsGroupMetadataKey", _GROUP), Message("StreamsGroupMetadataValue", None, "0", "0+", (
        F("Epoch", "int32"),
        F("MetadataHash", "int64"),
        F("ValidatedTopologyEpoch", "int32", tagged="0+", tag=0, default=-1),
        F("LastAssignmentConfigs", "[]LastAssignmentConfig", nullable="0+", tagged="0+", tag=1, default=None,
          fields=(F("Key", "string"), F("Value", "string"))),
    ))),
    18: (_key("StreamsGroupPartitionMetadataKey", _GROUP), Message(
        "StreamsGroupPartitionMetadataValue", None, "0", "0+",
        (F("Topics", "[]TopicMetadata", fields=_TOPIC_METADATA),))),
    19: (_key("StreamsGroupMemberMetadataKey", _GROUP, _MEMBER), Message(
        "StreamsGroupMemberMetadataValue", None, "0", "0+", (
            F("InstanceId", "string", nullable="0+"),
            F("RackId", "string", nullable="0+"),
            F("ClientId", "string"),
            F("ClientHost", "string"),
            F("RebalanceTimeoutMs", "int32", default=-1),
            F("TopologyEpoch", "int32"),
            F("ProcessId", "string"),
            F("UserEndpoint", "Endpoint", nullable="0+", default=None,
              fields=(F("Host", "string"), F("Port", "uint16"))),
            F("ClientTags", "[]KeyValue", fields=(F("Key", "string"), F("Value", "string"))),
        ))),
    20: (_key("StreamsGroupTargetAssignmentMetadataKey", _GROUP), Message(
        "StreamsGroupTargetAssignmentMetadataValue", None, "0", "0+", (F("AssignmentEpoch", "int32"),))),
    21: (_key("StreamsGroupTargetAssignmentMemberKey", _GROUP, _MEMBER), Message(
        "StreamsGroupTargetAssignmentMemberValue", None, "0", "0+", (
            F("ActiveTasks", "[]TaskIds", fields=_TASK_IDS),
            F("StandbyTasks", "[]TaskIds", fields=_TASK_IDS),
            F("WarmupTasks", "[]TaskIds", fields=_TASK_IDS),
        ))),
    22: (_key("StreamsGroupCurrentMemberAssignmentKey", _GROUP, _MEMBER), Message(
        "StreamsGroupCurrentMemberAssignmentValue", None, "0", "0+", (
            F("MemberEpoch", "int32"), F("PreviousMemberEpoch", "int32"), F("State", "int8"),
            *(F(name, "[]TaskIds", fields=_TASK_IDS_WITH_EPOCHS) for name in (
                "ActiveTasks", "StandbyTasks", "WarmupTasks", "ActiveTasksPendingRevocation",
                "StandbyTasksPendingRevocation", "WarmupTasksPendingRevocation")),
        ))),
    23: (_key("StreamsGroupTopologyKey", _GROUP), Message("StreamsGroupTopologyValue", None, "0", "0+", (
        F("Epoch", "int32"),
        F("Subtopologies", "[]Subtopology", fields=(
            F("SubtopologyId", "string"),
            F("SourceTopics", "[]string"),
            F("SourceTopicRegex", "[]string"),
            F("StateChangelogTopics", "[]TopicInfo", fields=_TOPIC_INFO),
            F("RepartitionSinkTopics", "[]string"),
            F("RepartitionSourceTopics", "[]TopicInfo", fields=_TOPIC_INFO),
            F("CopartitionGroups", "[]CopartitionGroup", fields=(
                F("SourceTopics", "[]int16"), F("SourceTopicRegex", "[]int16"),
                F("RepartitionSourceTopics", "[]int16"))),
        )),
    ))),
}

#: The consumer protocol's embedded subscription and assignment (clients/src/main/resources/common/message/
#: ConsumerProtocol{Subscription,Assignment}.json, trunk 1eb76443, versions 0-3, classic encoding): what a classic
#: consumer group's member `subscription` and `assignment` bytes hold; kafka-dump-log --offsets-decoder prints
#: them decoded for protocolType "consumer".
CONSUMER_PROTOCOL_SUBSCRIPTION = Message("ConsumerProtocolSubscription", None, "0-3", "none", (
    F("Topics", "[]string"),
    F("UserData", "bytes", nullable="0+", default=None),
    F("OwnedPartitions", "[]TopicPartition", "1+", ignorable=True,
      fields=(F("Topic", "string", "1+"), F("Partitions", "[]int32", "1+"))),
    F("GenerationId", "int32", "2+", default=-1, ignorable=True),
    F("RackId", "string", "3+", nullable="3+", default=None, ignorable=True),
))
CONSUMER_PROTOCOL_ASSIGNMENT = Message("ConsumerProtocolAssignment", None, "0-3", "none", (
    F("AssignedPartitions", "[]TopicPartition", fields=(F("Topic", "string"), F("Partitions", "[]int32"))),
    F("UserData", "bytes", nullable="0+", default=None),
))
