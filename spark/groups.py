"""Who consumed what: the groups of `__consumer_offsets` replayed in the coordinator's own order.

The parse pass keeps every group coordinator record but offset commits as a row of `group_records`
(`group_record_rows`, on the executors); the replay is SQL over that table, per `__consumer_offsets` partition of
each cluster's longest replica (the copy the coordinator would load), in offset order. Rules, as Apache Kafka's
group coordinator replays its log: `group-coordinator/.../GroupMetadataManager.java` `replay(...)` read at apache/kafka
0013464c (Kafka 4.2 trunk: streams groups with TasksTupleWithEpochs, tombstones of unknown groups and members
ignored), `GroupCoordinatorShard.replay` (it dispatches by record type), `modern/consumer/ConsumerGroup.java`
`addPartitionEpochs` and `modern/MemberState.java` at apache/kafka 1eb76443 (October 2024), `streams/MemberState.java`
at a9f8d893:

- classic groups: a GroupMetadata record replaces the whole group (every member, its generation, its members'
  subscription and assignment bytes: `replay(GroupMetadataKey, GroupMetadataValue)`); its tombstone removes the
  group. A member's assignment holds from its record to the group's next GroupMetadata record. The assignment bytes
  are the consumer protocol (`parsers/consumer_protocol.py`) for protocol type "consumer" only;
- consumer (KIP-848), share (KIP-932) and streams (KIP-1071) groups: a member is its MemberMetadata record
  (subscription, client, rack) and its CurrentMemberAssignment record (member epoch, state, assigned partitions or
  tasks and those pending revocation), each replacing what the last one of its kind said; a CurrentMemberAssignment
  tombstone leaves the member at epoch -1 with nothing assigned (LEAVE_GROUP_MEMBER_EPOCH), a MemberMetadata
  tombstone removes it; a tombstone of a member or group that does not exist is ignored; the group's Metadata
  tombstone removes the group (Kafka requires it empty by then; whatever is left ends there too);
- target assignments (TargetAssignmentMember records) are what the assignor wants, not what a member holds: not
  ownership;
- KIP-848 records name topics by id: the names come from the group's own PartitionMetadata records (Kafka < 4.1),
  from ShareGroupStatePartitionMetadata, from the partitions' `partition.metadata` in the input and from the KRaft
  metadata log's TopicRecords; an id none of them names keeps a null `topic`;
- a streams task (subtopology, partition) reads that partition of every source and repartition source topic of its
  subtopology in the group's topology in force (StreamsGroupTopology); only active tasks own partitions (standby and
  warmup tasks restore state stores).

A group record that does not decode is already an `internal_record_undecodable` finding of the parse pass (file,
position) and is left out; a classic member whose assignment bytes do not read is a `consumer_protocol_undecodable`
note and owns nothing in the replay. Who owned a partition twice, and the member named in a finding about
a committed offset, are judged from `group_assignments` (spark/sql/).
"""

from __future__ import annotations

import base64
from typing import Any

#: record type (the key's name in snake case, `internal_topics.record_type_name`) prefix -> group type
GROUP_TYPES = (("consumer_group_", "consumer"), ("share_group_", "share"), ("streams_group_", "streams"),
               ("group_metadata", "classic"))
#: CurrentMemberAssignmentValue's State: `modern/MemberState.java` (consumer and share groups) and
#: `streams/MemberState.java` (streams groups, values from 1), Kafka 4.2.
MEMBER_STATES = {"consumer": {0: "STABLE", 1: "UNREVOKED_PARTITIONS", 2: "UNRELEASED_PARTITIONS", 127: "UNKNOWN"},
                 "share": {0: "STABLE", 1: "UNREVOKED_PARTITIONS", 2: "UNRELEASED_PARTITIONS", 127: "UNKNOWN"},
                 "streams": {1: "STABLE", 2: "UNREVOKED_TASKS", 3: "UNRELEASED_TASKS", 127: "UNKNOWN"}}
#: Records that end every member of a group: any group type's Metadata tombstone, and a classic GroupMetadata
#: record (a whole new state of the group).
GROUP_METADATA = ("consumer_group_metadata", "share_group_metadata", "streams_group_metadata")
#: The roles of `topic_partitions` entries that are current ownership (`pending_revocation`: still owned, being
#: given up).
OWNED_ROLES = ("assigned", "pending_revocation", "active", "active_pending_revocation")
MAX_OFFSET = 9223372036854775807


# --- executors: one decoded __consumer_offsets record -> rows of `group_records` ----------------------------------

def group_type_of(record_type: str) -> str | None:
    return next((group_type for prefix, group_type in GROUP_TYPES if record_type.startswith(prefix)), None)


def _tp(role: str, *, topic: str | None = None, topic_id: str | None = None, subtopology_id: str | None = None,
        partition: int | None = None) -> dict[str, Any]:
    return {"role": role, "topic": topic, "topic_id": topic_id, "subtopology_id": subtopology_id,
            "partition": partition}


def _by_id(role: str, entries: list[dict] | None) -> list[dict[str, Any]]:
    """TopicPartitions entries ({topicId, partitions}) as topic_partitions entries."""
    return [_tp(role, topic_id=e.get("topicId"), partition=p) for e in entries or () for p in e.get("partitions") or ()]


def _tasks(role: str, entries: list[dict] | None) -> list[dict[str, Any]]:
    """TaskIds entries ({subtopologyId, partitions}) as topic_partitions entries."""
    return [_tp(role, subtopology_id=e.get("subtopologyId"), partition=p)
            for e in entries or () for p in e.get("partitions") or ()]


def _names(entries: list[dict] | None) -> list[dict[str, Any]]:
    """Topic id -> name pairs of a record ({topicId, topicName}), as `topic_name` entries."""
    return [_tp("topic_name", topic=e.get("topicName"), topic_id=e.get("topicId")) for e in entries or ()
            if e.get("topicId") and e.get("topicName")]


def _classic_rows(base: dict[str, Any], value: dict[str, Any] | None) -> list[dict[str, Any]]:
    """A GroupMetadata record: the group's row, then one row per member (and a consumer_protocol_undecodable
    finding row per member bytes that do not read)."""
    from kforensics.parsers.consumer_protocol import (
        CONSUMER_PROTOCOL_TYPE,
        ConsumerProtocolError,
        decode_assignment,
        decode_subscription,
    )

    if value is None:
        return [base]
    if "generation" not in value:
        return []  # a newer value version whose fields did not read: its finding says so
    group = {**base, "generation": value["generation"], "protocol_type": value.get("protocolType"),
             "protocol": value.get("protocol")}
    rows = [group]
    consumer = value.get("protocolType") == CONSUMER_PROTOCOL_TYPE
    for member in value.get("members") or ():
        row = {**group, "member_id": member.get("memberId"), "instance_id": member.get("groupInstanceId"),
               "client_id": member.get("clientId"), "client_host": member.get("clientHost")}
        if consumer:
            for field, read in (("subscription", decode_subscription), ("assignment", decode_assignment)):
                raw = member.get(field)
                try:
                    decoded = read(base64.b64decode(raw) if raw else None)
                except ConsumerProtocolError as exc:
                    rows.append(_protocol_finding(base, value, member, field, str(exc)))
                    continue
                if decoded is None:
                    continue
                if field == "subscription":
                    row.update(subscribed_topics=list(decoded.topics), rack=decoded.rack)
                else:
                    row["topic_partitions"] = [_tp("assigned", topic=t, partition=p) for t, p in decoded.partitions]
        rows.append(row)
    return rows


def _protocol_finding(base: dict[str, Any], value: dict[str, Any], member: dict[str, Any], field: str,
                      error: str) -> dict[str, Any]:
    import json

    from kforensics.parsers.findings import severity_of

    details = {"group": base["group_id"], "member_id": member.get("memberId"), "generation": value["generation"],
               "protocol": value.get("protocol"), "field": field, "error": error}
    return {"row_kind": "finding", **{k: base[k] for k in ("broker", "topic", "partition", "file", "position",
                                                           "offset", "timestamp")},
            "kind": "consumer_protocol_undecodable", "severity": severity_of("consumer_protocol_undecodable"),
            "message": f"Group {base['group_id']} generation {value['generation']}: member {member.get('memberId')}'s "
                       f"{field} does not read as the consumer protocol ({error}); the replay leaves its partitions "
                       "out.", "details": json.dumps(details)}


def _modern_fields(group_type: str, kind: str, value: dict[str, Any]) -> dict[str, Any] | None:
    """The columns of a consumer, share or streams group record (`kind`: the record type without its group
    prefix); None for a value whose fields did not read (a newer version: its finding says so)."""
    if kind == "metadata":
        return {"group_epoch": value["epoch"]} if "epoch" in value else None
    if kind == "member_metadata":
        if "clientId" not in value:
            return None
        return {"instance_id": value.get("instanceId"), "rack": value.get("rackId"), "client_id": value["clientId"],
                "client_host": value.get("clientHost"), "subscribed_topics": value.get("subscribedTopicNames"),
                "subscribed_topic_regex": value.get("subscribedTopicRegex")}
    if kind == "current_member_assignment":
        if "memberEpoch" not in value:
            return None
        state = value.get("state")
        if group_type == "streams":
            owned = _tasks("active", value.get("activeTasks")) + _tasks(
                "active_pending_revocation", value.get("activeTasksPendingRevocation"))
        else:
            owned = _by_id("assigned", value.get("assignedPartitions")) + _by_id(
                "pending_revocation", value.get("partitionsPendingRevocation"))
        return {"member_epoch": value["memberEpoch"], "previous_member_epoch": value.get("previousMemberEpoch"),
                "member_state": None if state is None else MEMBER_STATES[group_type].get(state, str(state)),
                "topic_partitions": owned}
    if kind == "partition_metadata":
        return {"topic_partitions": _names(value.get("topics"))}
    if kind == "state_partition_metadata":
        return {"topic_partitions": _names([*(value.get("initializingTopics") or ()),
                                            *(value.get("initializedTopics") or ()),
                                            *(value.get("deletingTopics") or ())])}
    if kind == "topology":
        if "subtopologies" not in value:
            return None
        return {"group_epoch": value.get("epoch"), "topic_partitions": [
            _tp("source_topic", topic=t, subtopology_id=s.get("subtopologyId"))
            for s in value["subtopologies"] or ()
            for t in [*(s.get("sourceTopics") or ()), *(r.get("name") for r in s.get("repartitionSourceTopics") or ())]
            if t]}
    return {}


def group_record_rows(where: dict[str, Any], decoded: dict[str, Any]) -> list[dict[str, Any]]:
    """The `group_records` rows (row_kind "group") of one decoded `__consumer_offsets` record
    (`internal_topics.decode_consumer_offsets`), and its consumer_protocol_undecodable finding rows; nothing for an
    offset commit, a record that did not decode or a record type newer than the tables."""
    if "error" in decoded:
        return []
    key, value = decoded["key"], decoded.get("value")
    record_type = key.get("type", "")
    group_type = group_type_of(record_type)
    if group_type is None or record_type == "offset_commit":
        return []
    base = {"row_kind": "group", **where, "group_id": key.get("group"), "group_type": group_type,
            "record_type": record_type, "tombstone": value is None, "member_id": key.get("memberId")}
    if group_type == "classic":
        return _classic_rows(base, value)
    if value is None:
        return [base]
    kind = record_type[len(next(p for p, t in GROUP_TYPES if t == group_type)):]
    fields = _modern_fields(group_type, kind, value)
    return [] if fields is None else [{**base, **fields}]
