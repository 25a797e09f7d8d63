"""The records of `__consumer_offsets`, the group coordinator's log: key types 0-23 with their values.

A key is an int16 record type (CoordinatorRecordType; before Kafka 4.0 the schemas called it the key "version")
followed by the key message in the classic encoding; a value is an int16 version followed by the value message.
A null value is a tombstone.

Written from apache/kafka `group-coordinator/src/main/resources/common/message/*.json`:
- 0-2 (classic groups) from trunk commit 1eb76443 (2024-10-25, 4.0 line): OffsetCommitValue 0-4 (4 flexible),
  GroupMetadataValue 0-4 (4 flexible). Type 0 is LegacyOffsetCommitKey (Kafka 4.x names it so; brokers before
  2.x wrote it): its values are OffsetCommitValue's versions 0 and 1, so the same value table serves both.
- 3-16 (KIP-848 consumer groups, KIP-932 share groups) from the "coordinator-value" schemas of Kafka 4.1/4.2
  (commits b091e287, b61b9bdd, d63fb6f7, 266ed846: ConsumerGroupMetadataValue with the tagged MetadataHash
  (KIP-1101, 4.1) and CreationTimeMs (KIP-1282); 7e11ea85: ShareGroupStatePartitionMetadataValue; de929d3e,
  cbf3d00a: share group member and metadata values), the others as of trunk 1eb76443.
- 17-23 (KIP-1071 streams groups, "in development, subject to non-backwards-compatible changes" in these
  schemas): keys from commits c940dbbf, 59bf751f, 7e11ea85, b617af2a, 75a150ae; values from 1291a930
  (StreamsGroupMetadataValue), 5c1644fc (TargetAssignmentMetadata), 75a150ae (TargetAssignmentMember),
  59bf751f (MemberMetadata, Topology) and the kip1071 branch (PartitionMetadata, CurrentMemberAssignment).
OffsetCommitValue's tagged `topicId` (v4, Kafka 4.1) is not in any stored schema version found; a tag 0 in an
OffsetCommitValue is kept as an unknown tagged field, not guessed.
"""

from __future__ import annotations

from kforensics.parsers.message_schema import Field as F, Message

_GROUP = F("GroupId", "string", "0")
_MEMBER = F("MemberId", "string", "0")


def _key(name: str, *fields: F) -> Message:
    return Message(name, None, "0", "none", fields)


_TOPIC_PARTITIONS = (F("TopicId", "uuid"), F("Partitions", "[]int32"))
_TOPIC_METADATA = (
    F("TopicId", "uuid"), F("TopicName", "string"), F("NumPartitions", "int32"),
    F("PartitionMetadata", "[]PartitionMetadata", fields=(F("Partition", "int32"), F("Racks", "[]string"))),
)
_TASK_IDS = (F("SubtopologyId", "string"), F("Partitions", "[]int32"))
_OFFSET_COMMIT_KEY = (F("group", "string", "0"), F("topic", "string", "0"), F("partition", "int32", "0"))
_OFFSET_COMMIT_VALUE = Message("OffsetCommitValue", None, "0-4", "4+", (
    F("offset", "int64"),
    F("leaderEpoch", "int32", "3+", default=-1, ignorable=True),
    F("metadata", "string"),
    F("commitTimestamp", "int64"),
    F("expireTimestamp", "int64", "1", default=-1, ignorable=True),
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
            F("AssignedPartitions", "[]TopicPartitions", fields=_TOPIC_PARTITIONS),
            F("PartitionsPendingRevocation", "[]TopicPartitions", fields=_TOPIC_PARTITIONS),
        ))),
    9: (_key("ShareGroupPartitionMetadataKey", _GROUP), Message(
        "ShareGroupPartitionMetadataValue", None, "0", "0+",
        (F("Topics", "[]TopicMetadata", fields=_TOPIC_METADATA),))),
    10: (_key("ShareGroupMemberMetadataKey", _GROUP, _MEMBER), Message(
        "ShareGroupMemberMetadataValue", None, "0", "0+", (
            F("RackId", "string", nullable="0+"), F("ClientId", "string"), F("ClientHost", "string"),
            F("SubscribedTopicNames", "[]string"),
        ))),
    11: (_key("ShareGroupMetadataKey", _GROUP), Message("ShareGroupMetadataValue", None, "0", "0+",
                                                          (F("Epoch", "int32"),))),
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
            F("InitializedTopics", "[]TopicPartitionsInfo", fields=(
                F("TopicId", "uuid"), F("TopicName", "string"), F("Partitions", "[]int32"))),
            F("DeletingTopics", "[]TopicInfo", fields=(F("TopicId", "uuid"), F("TopicName", "string"))),
        ))),
    16: (_key("ConsumerGroupRegularExpressionKey", _GROUP, F("RegularExpression", "string", "0")), Message(
        "ConsumerGroupRegularExpressionValue", None, "0", "0+", (
            F("Topics", "[]string"), F("Version", "int64"), F("Timestamp", "int64"),
        ))),
    17: (_key("StreamsGroupMetadataKey", _GROUP), Message("StreamsGroupMetadataValue", None, "0", "0+", (
        F("Epoch", "int32"),
        F("MetadataHash", "int64"),
        F("ValidatedTopologyEpoch", "int32", tagged="0+", tag=0, default=-1),
        F("AssignmentConfigs", "[]AssignmentConfig", fields=(F("Key", "string"), F("Value", "string"))),
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
            *(F(name, "[]TaskIds", fields=_TASK_IDS) for name in (
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
