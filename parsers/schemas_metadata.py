"""The records of the KRaft `__cluster_metadata` log and its snapshots (MetadataRecordType, apiKeys 0-29).

Written from apache/kafka `metadata/src/main/resources/common/metadata/*.json` at trunk commit 1eb76443
(2024-10-25), with ClearElrRecord (apiKey 28, KIP-966) from a later trunk (commit 9e1f0bb0). RegisterControllerRecord
and ZkMigrationStateRecord were checked against the newest stored versions (commits 2be4c8f5, de929d3e: unchanged).
apiKey 21 is kept in 4.x for logs written during a ZK migration. apiKey 13 is unused. Every record is flexible in
every version.

The tables were then checked field by field against the release tags 4.0.0, 4.1.1 and 4.2.0-rc1 (aiven/inkless
mirror; inkless-4.2.1 has the same files). They equal Kafka 4.2's; 4.0.0 and 4.1.1 declare the same fields.

Kafka 4.3 and 4.4 (metadata.version 4.3-IV0 = level 30, 4.4-IV2 = level 33; MetadataVersion.java at trunk):

- UnregisterControllerRecord (apiKey 29, version 0, KIP-1312, Kafka 4.4; written from metadata.version 4.4-IV2 on)
  is apache/kafka 4425e970's `UnregisterControllerRecord.json`: ControllerId int32, nothing else. Replayed, it ends
  the controller's registration (the RegisterControllerRecord of the same ControllerId).
- CordonedLogDirs (KIP-1066, Kafka 4.3, metadata.version 4.3-IV0): RegisterBrokerRecord version 4 and
  BrokerRegistrationChangeRecord version 3. No stored copy of the final JSON files of 4.3 was found (the stored
  apache/kafka versions of both files stop at versions 3 and 2). What they hold is taken from the review of the
  change itself (apache/kafka#21273, KAFKA-19774: BrokerRegistrationChangeRecord's `CordonedLogDirs`, `[]uuid`,
  versions 3+, tagged 3+, tag 3, after LogDirs' tag 2; the reviewer asked for null, the default, to mean "no
  change", as for every field of a change record), from KAFKA-20441 (apache/kafka#22070, which took the field out
  of BrokerRegistrationRequest v5 again but kept it in the records and in BrokerHeartbeatRequest), and for
  RegisterBrokerRecord from the KIP-1066 prototype (mimaison/kafka 36bd7eb7: versions 4+, tagged 4+, tag 1, after
  LogDirs' tag 0) with the 4.3.1 description of both fields as tagged and nullable. Both are declared nullable with
  a null default: a reader that is nullable reads every encoding a non-nullable writer can write, so the tables
  read the records whichever of the two the release has. Null (the field absent) is a record that carries no
  cordoned dirs; in BrokerRegistrationChangeRecord it means no change, and a list (empty included) replaces the
  broker's cordoned dirs.

Each record's highest version is: RegisterBrokerRecord 4, PartitionRecord 2, PartitionChangeRecord 2,
BrokerRegistrationChangeRecord 3, the others 0.

`TYPE_NAMES` holds MetadataRecordType's enum names, what kafka-dump-log prints as "type".
"""

from __future__ import annotations

from kforensics.parsers.message_schema import Field as F
from kforensics.parsers.message_schema import Message

_ENDPOINT = (F("Name", "string"), F("Host", "string"), F("Port", "uint16"), F("SecurityProtocol", "int16"))
_FEATURE = (F("Name", "string"), F("MinSupportedVersion", "int16"), F("MaxSupportedVersion", "int16"))

MESSAGES: tuple[Message, ...] = (
    # Version 1 adds InControlledShutdown; 2 IsMigratingZkBroker (KIP-866); 3 LogDirs (KIP-858); 4 CordonedLogDirs
    # (KIP-1066, Kafka 4.3).
    Message("RegisterBrokerRecord", 0, "0-4", "0+", (
        F("BrokerId", "int32"),
        F("IsMigratingZkBroker", "bool", "2+", default=False),
        F("IncarnationId", "uuid"),
        F("BrokerEpoch", "int64"),
        F("EndPoints", "[]BrokerEndpoint", fields=_ENDPOINT),
        F("Features", "[]BrokerFeature", fields=_FEATURE),
        F("Rack", "string", nullable="0+"),
        F("Fenced", "bool", default=True),
        F("InControlledShutdown", "bool", "1+", default=False),
        F("LogDirs", "[]uuid", "3+", tagged="3+", tag=0),
        F("CordonedLogDirs", "[]uuid", "4+", nullable="4+", tagged="4+", tag=1, default=None),
    )),
    Message("UnregisterBrokerRecord", 1, "0", "0+", (F("BrokerId", "int32"), F("BrokerEpoch", "int64"))),
    Message("TopicRecord", 2, "0", "0+", (F("Name", "string"), F("TopicId", "uuid"))),
    # Version 1 adds Directories (KIP-858); 2 EligibleLeaderReplicas and LastKnownElr (KIP-966).
    Message("PartitionRecord", 3, "0-2", "0+", (
        F("PartitionId", "int32", default=-1),
        F("TopicId", "uuid"),
        F("Replicas", "[]int32"),
        F("Isr", "[]int32"),
        F("RemovingReplicas", "[]int32"),
        F("AddingReplicas", "[]int32"),
        F("Leader", "int32", default=-1),
        F("LeaderRecoveryState", "int8", tagged="0+", tag=0, default=0),
        F("LeaderEpoch", "int32", default=-1),
        F("PartitionEpoch", "int32", default=-1),
        F("Directories", "[]uuid", "1+"),
        F("EligibleLeaderReplicas", "[]int32", "2+", nullable="2+", tagged="2+", tag=1, default=None),
        F("LastKnownElr", "[]int32", "2+", nullable="2+", tagged="2+", tag=2, default=None),
    )),
    Message("ConfigRecord", 4, "0", "0+", (
        F("ResourceType", "int8"), F("ResourceName", "string"), F("Name", "string"),
        F("Value", "string", nullable="0+"),
    )),
    # Version 1 adds Directories (KIP-858); 2 EligibleLeaderReplicas and LastKnownElr (KIP-966).
    Message("PartitionChangeRecord", 5, "0-2", "0+", (
        F("PartitionId", "int32", default=-1),
        F("TopicId", "uuid"),
        F("Isr", "[]int32", nullable="0+", tagged="0+", tag=0, default=None),
        F("Leader", "int32", tagged="0+", tag=1, default=-2),
        F("Replicas", "[]int32", nullable="0+", tagged="0+", tag=2, default=None),
        F("RemovingReplicas", "[]int32", nullable="0+", tagged="0+", tag=3, default=None),
        F("AddingReplicas", "[]int32", nullable="0+", tagged="0+", tag=4, default=None),
        F("LeaderRecoveryState", "int8", tagged="0+", tag=5, default=-1),
        F("Directories", "[]uuid", "1+", nullable="1+", tagged="1+", tag=8, default=None),
        F("EligibleLeaderReplicas", "[]int32", "2+", nullable="2+", tagged="2+", tag=6, default=None),
        F("LastKnownElr", "[]int32", "2+", nullable="2+", tagged="2+", tag=7, default=None),
    )),
    Message("FenceBrokerRecord", 7, "0", "0+", (F("Id", "int32"), F("Epoch", "int64"))),
    Message("UnfenceBrokerRecord", 8, "0", "0+", (F("Id", "int32"), F("Epoch", "int64"))),
    Message("RemoveTopicRecord", 9, "0", "0+", (F("TopicId", "uuid"),)),
    Message("DelegationTokenRecord", 10, "0", "0+", (
        F("Owner", "string"), F("Requester", "string"), F("Renewers", "[]string"),
        F("IssueTimestamp", "int64"), F("MaxTimestamp", "int64"), F("ExpirationTimestamp", "int64"),
        F("TokenId", "string"),
    )),
    Message("UserScramCredentialRecord", 11, "0", "0+", (
        F("Name", "string"), F("Mechanism", "int8"), F("Salt", "bytes"), F("StoredKey", "bytes"),
        F("ServerKey", "bytes"), F("Iterations", "int32"),
    )),
    Message("FeatureLevelRecord", 12, "0", "0+", (F("Name", "string"), F("FeatureLevel", "int16"))),
    Message("ClientQuotaRecord", 14, "0", "0+", (
        F("Entity", "[]EntityData", fields=(F("EntityType", "string"), F("EntityName", "string", nullable="0+"))),
        F("Key", "string"), F("Value", "float64"), F("Remove", "bool"),
    )),
    Message("ProducerIdsRecord", 15, "0", "0+", (
        F("BrokerId", "int32"), F("BrokerEpoch", "int64", default=-1), F("NextProducerId", "int64"),
    )),
    # Version 1 adds InControlledShutdown; 2 LogDirs (KIP-858); 3 CordonedLogDirs (KIP-1066, Kafka 4.3).
    Message("BrokerRegistrationChangeRecord", 17, "0-3", "0+", (
        F("BrokerId", "int32"),
        F("BrokerEpoch", "int64"),
        F("Fenced", "int8", tagged="0+", tag=0),
        F("InControlledShutdown", "int8", "1+", tagged="1+", tag=1),
        F("LogDirs", "[]uuid", "2+", tagged="2+", tag=2),
        F("CordonedLogDirs", "[]uuid", "3+", nullable="3+", tagged="3+", tag=3, default=None),
    )),
    Message("AccessControlEntryRecord", 18, "0", "0+", (
        F("Id", "uuid"), F("ResourceType", "int8"), F("ResourceName", "string"), F("PatternType", "int8"),
        F("Principal", "string"), F("Host", "string"), F("Operation", "int8"), F("PermissionType", "int8"),
    )),
    Message("RemoveAccessControlEntryRecord", 19, "0", "0+", (F("Id", "uuid"),)),
    Message("NoOpRecord", 20, "0", "0+", ()),
    Message("ZkMigrationStateRecord", 21, "0", "0+", (F("ZkMigrationState", "int8"),)),
    Message("RemoveUserScramCredentialRecord", 22, "0", "0+", (F("Name", "string"), F("Mechanism", "int8"))),
    Message("BeginTransactionRecord", 23, "0", "0+", (
        F("Name", "string", nullable="0+", tagged="0+", tag=0, default=None),
    )),
    Message("EndTransactionRecord", 24, "0", "0+", ()),
    Message("AbortTransactionRecord", 25, "0", "0+", (
        F("Reason", "string", nullable="0+", tagged="0+", tag=0, default=None),
    )),
    Message("RemoveDelegationTokenRecord", 26, "0", "0+", (F("TokenId", "string"),)),
    Message("RegisterControllerRecord", 27, "0", "0+", (
        F("ControllerId", "int32"),
        F("IncarnationId", "uuid"),
        F("ZkMigrationReady", "bool"),
        F("EndPoints", "[]ControllerEndpoint", fields=_ENDPOINT),
        F("Features", "[]ControllerFeature", fields=_FEATURE),
    )),
    Message("ClearElrRecord", 28, "0", "0+", (F("TopicName", "string"),)),
    # KIP-1312 (Kafka 4.4): the controller's registration is removed, as UnregisterBrokerRecord removes a broker's.
    Message("UnregisterControllerRecord", 29, "0", "0+", (F("ControllerId", "int32"),)),
)

#: apiKey -> message description.
BY_API_KEY: dict[int, Message] = {m.api_key: m for m in MESSAGES}  # type: ignore[misc]


def enum_name(message_name: str) -> str:
    """MessageGenerator.toSnakeCase upper-cased: an underscore before a capital that follows a small letter."""
    out: list[str] = []
    prev_capital = True
    for c in message_name:
        if c.isupper():
            if not prev_capital:
                out.append("_")
            prev_capital = True
        else:
            prev_capital = False
        out.append(c.upper())
    return "".join(out)


#: apiKey -> MetadataRecordType name (e.g. 5 -> PARTITION_CHANGE_RECORD), what kafka-dump-log prints.
TYPE_NAMES: dict[int, str] = {k: enum_name(m.name) for k, m in BY_API_KEY.items()}
#: MetadataRecordType name -> message description.
BY_TYPE_NAME: dict[str, Message] = {TYPE_NAMES[k]: m for k, m in BY_API_KEY.items()}
