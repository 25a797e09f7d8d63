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
note and owns nothing in the replay. `partition_owned_twice` and the member named in the committed_offset_*
findings are judged from `group_assignments`.
"""

from __future__ import annotations

import base64
from typing import Any

from pyspark.sql import DataFrame

from kforensics.spark.checks import run_table
from kforensics.spark.findings import FINDING_COLUMNS, sql_literal
from kforensics.spark.views import run_sql

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


# --- the replay (SQL over named tables) ----------------------------------------------------------------------------

#: A group's log: where it was read (each cluster's longest replica of a `__consumer_offsets` partition).
GROUP = "cluster_id, coordinator_partition, group_id"
MEMBER = f"{GROUP}, group_type, member_id"


# GroupMetadataManager.replay(GroupMetadataKey, GroupMetadataValue) puts a whole new classic group (its tombstone
# removes it); replay(XGroupMetadataKey, null) removes a consumer, share or streams group: both end every member.
def group_events(records: DataFrame, longest: DataFrame) -> DataFrame:
    """Needs group_records and longest_replicas; the records of each cluster's longest replica of every
    `__consumer_offsets` partition, with cluster_id, coordinator_broker, coordinator_partition and `next_end`
    (struct o offset, t timestamp: the group's next record that ends every member, null when none follows)."""
    ends = " OR ".join(["(record_type = 'group_metadata' AND member_id IS NULL)",
                        f"(record_type IN ({', '.join(sql_literal(t) for t in GROUP_METADATA)}) AND tombstone)"])
    return run_sql(f"""
        WITH ev AS (
            SELECT *, broker AS coordinator_broker, format_string('%s-%d', topic, partition) AS coordinator_partition
            FROM {{records}} JOIN (SELECT cluster_id, topic, partition, longest_broker AS broker FROM {{longest}})
                             USING (topic, partition, broker))
        SELECT *, min(CASE WHEN {ends} THEN named_struct('o', offset, 't', timestamp) END)
                      OVER (PARTITION BY {GROUP} ORDER BY offset RANGE BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING)
                      AS next_end
        FROM ev""", records=records, longest=longest)


def _islands(rows: str, key: str, same: list[str], first: list[str]) -> str:
    """SQL: `rows` (with from_offset, from_timestamp, to_offset, to_timestamp) with consecutive rows of one `key` merged
    where one ends where the next begins and the columns `same` are equal; `first` columns are the first row's."""
    state = "named_struct(" + ", ".join(f"'{c}', {c}" for c in same) + ")"
    return f"""
        SELECT {key}, {', '.join(same)}, {', '.join(f'min_by({c}, from_offset) AS {c}' for c in first)},
               min(from_offset) AS from_offset, min_by(from_timestamp, from_offset) AS from_timestamp,
               max_by(to_offset, from_offset) AS to_offset, max_by(to_timestamp, from_offset) AS to_timestamp
        FROM (
            SELECT *, sum(new_island) OVER (PARTITION BY {key} ORDER BY from_offset
                                            ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS island
            FROM (
                SELECT *, CASE WHEN lag(to_offset) OVER w = from_offset AND lag(state_) OVER w <=> state_ THEN 0
                               ELSE 1 END AS new_island
                FROM (SELECT *, {state} AS state_ FROM {rows})
                WINDOW w AS (PARTITION BY {key} ORDER BY from_offset)))
        GROUP BY {key}, {', '.join(same)}, island"""


# ConsumerGroupMember.Builder.updateWith(MemberMetadataValue | CurrentMemberAssignmentValue): each record kind replaces
# its own fields only; a CurrentMemberAssignment tombstone sets LEAVE_GROUP_MEMBER_EPOCH (-1) and empties the member.
def group_members_table(events: DataFrame) -> DataFrame:
    """Needs group_events; the `group_members` table: one row per member and state (generation of a classic group;
    member epoch, state and subscription of the others), from the record that set it (from_offset, from_timestamp)
    to the one that ended it (to_offset, to_timestamp; null: still so at the end of the input)."""
    versions = f"""(
        SELECT cluster_id, group_id, 'classic' AS group_type, member_id, instance_id, client_id, client_host, rack,
               generation, CAST(NULL AS INT) AS member_epoch, CAST(NULL AS STRING) AS member_state, subscribed_topics,
               CAST(NULL AS STRING) AS subscribed_topic_regex, offset AS from_offset, timestamp AS from_timestamp,
               next_end.o AS to_offset, next_end.t AS to_timestamp, coordinator_broker, coordinator_partition, file,
               position
        FROM {{events}} WHERE record_type = 'group_metadata' AND member_id IS NOT NULL
        UNION ALL
        SELECT cluster_id, group_id, group_type, member_id, meta.instance_id, meta.client_id, meta.client_host,
               meta.rack, CAST(NULL AS INT) AS generation, asg.member_epoch, asg.member_state, meta.subscribed_topics,
               meta.subscribed_topic_regex, offset AS from_offset, timestamp AS from_timestamp,
               least(next_event, next_end).o AS to_offset, least(next_event, next_end).t AS to_timestamp,
               coordinator_broker, coordinator_partition, file, position
        FROM (
            SELECT *,
                   last(CASE WHEN is_meta AND NOT tombstone THEN named_struct(
                            'instance_id', instance_id, 'client_id', client_id, 'client_host', client_host,
                            'rack', rack, 'subscribed_topics', subscribed_topics,
                            'subscribed_topic_regex', subscribed_topic_regex) END, true) OVER life_ AS meta,
                   last(CASE WHEN is_asg THEN named_struct('member_epoch', member_epoch, 'member_state', member_state,
                                                           'left', tombstone) END, true) OVER life_ AS asg,
                   lead(named_struct('o', offset, 't', timestamp)) OVER (PARTITION BY {MEMBER} ORDER BY offset)
                       AS next_event
            FROM (
                SELECT *, coalesce(sum(CAST(is_meta AND tombstone AS INT)) OVER (
                              PARTITION BY {MEMBER} ORDER BY offset ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING),
                              0) AS life
                FROM (SELECT *, record_type LIKE '%member_metadata' AS is_meta,
                             record_type LIKE '%current_member_assignment' AS is_asg
                      FROM {{events}}
                      WHERE group_type <> 'classic' AND member_id IS NOT NULL
                        AND (record_type LIKE '%member_metadata' OR record_type LIKE '%current_member_assignment')))
            WINDOW life_ AS (PARTITION BY {MEMBER}, life ORDER BY offset
                             ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW))
        WHERE NOT (is_meta AND tombstone) AND NOT coalesce(asg.left, false))"""
    merged = _islands(versions, "cluster_id, coordinator_broker, coordinator_partition, group_id, group_type, "
                                "member_id",
                      ["instance_id", "client_id", "client_host", "rack", "generation", "member_epoch", "member_state",
                       "subscribed_topics", "subscribed_topic_regex"], ["file", "position"])
    return run_sql(f"""
        SELECT cluster_id, group_id AS `group`, group_type, member_id, instance_id, client_id, client_host, rack,
               generation, member_epoch, member_state, subscribed_topics, subscribed_topic_regex, from_offset, from_timestamp,
               to_offset, to_timestamp, coordinator_broker, coordinator_partition, file, position
        FROM ({merged})""", events=events)


def group_assignments_table(events: DataFrame, topic_ids: DataFrame, metadata: DataFrame) -> DataFrame:
    """Needs group_events, partition_topic_ids and metadata_records; the `group_assignments` table: one row per
    member, partition and epoch (generation) of its current assignment, with pending_revocation, from the record that
    gave it (assigned_from_offset, _timestamp) to the one that took it away or replaced the group
    (assigned_to_offset, _timestamp; null: still held at the end of the input)."""
    owned = ", ".join(f"'{r}'" for r in OWNED_ROLES)
    rows = f"""(
        WITH names AS (SELECT * FROM {{names}}),
        classic AS (
            SELECT cluster_id, coordinator_broker, coordinator_partition, group_id, group_type, member_id, tp.topic,
                   CAST(NULL AS STRING) AS topic_id, tp.partition, CAST(NULL AS STRING) AS subtopology_id, generation,
                   CAST(NULL AS INT) AS member_epoch, false AS pending_revocation, offset AS from_offset,
                   timestamp AS from_timestamp, next_end AS until_, file, position
            FROM {{events}} LATERAL VIEW explode(topic_partitions) t_ AS tp
            WHERE record_type = 'group_metadata' AND member_id IS NOT NULL AND tp.role = 'assigned'),
        changes AS (
            SELECT *, min(CASE WHEN record_type LIKE '%current_member_assignment'
                                    OR (record_type LIKE '%member_metadata' AND tombstone)
                               THEN named_struct('o', offset, 't', timestamp) END)
                          OVER (PARTITION BY {MEMBER} ORDER BY offset
                                RANGE BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING) AS next_change
            FROM {{events}}
            WHERE group_type <> 'classic' AND member_id IS NOT NULL
              AND (record_type LIKE '%current_member_assignment' OR record_type LIKE '%member_metadata')),
        modern AS (
            SELECT cluster_id, coordinator_broker, coordinator_partition, group_id, group_type, member_id, tp.topic,
                   tp.topic_id, tp.partition, tp.subtopology_id, CAST(NULL AS INT) AS generation, member_epoch,
                   tp.role LIKE '%pending_revocation' AS pending_revocation, offset AS from_offset,
                   timestamp AS from_timestamp, least(next_change, next_end) AS until_, file, position
            FROM changes LATERAL VIEW explode(topic_partitions) t_ AS tp
            WHERE record_type LIKE '%current_member_assignment' AND NOT tombstone AND tp.role IN ({owned})),
        sources AS (
            SELECT cluster_id, coordinator_partition, group_id, topology_from, topology_to, tp.subtopology_id,
                   tp.topic AS source_topic
            FROM (SELECT *, offset AS topology_from,
                         lead(offset) OVER (PARTITION BY {GROUP} ORDER BY offset) AS topology_to
                  FROM {{events}} WHERE record_type = 'streams_group_topology')
                 LATERAL VIEW explode(topic_partitions) t_ AS tp
            WHERE tp.role = 'source_topic'),
        tasks AS (
            SELECT m.cluster_id, m.coordinator_broker, m.coordinator_partition, m.group_id, m.group_type, m.member_id,
                   coalesce(m.topic, s.source_topic) AS topic, m.topic_id, m.partition, m.subtopology_id,
                   m.generation, m.member_epoch, m.pending_revocation, m.from_offset, m.from_timestamp, m.until_,
                   m.file, m.position
            FROM modern m LEFT JOIN sources s
              ON m.group_type = 'streams' AND s.cluster_id = m.cluster_id
             AND s.coordinator_partition = m.coordinator_partition AND s.group_id = m.group_id
             AND s.subtopology_id = m.subtopology_id AND s.topology_from <= m.from_offset
             AND (s.topology_to IS NULL OR m.from_offset < s.topology_to))
        SELECT r.* EXCEPT (topic, until_), coalesce(r.topic, n.topic) AS topic, until_.o AS to_offset,
               until_.t AS to_timestamp
        FROM (SELECT * FROM classic UNION ALL SELECT * FROM tasks) r LEFT JOIN names n ON r.topic_id = n.topic_id)"""
    merged = _islands(rows, "cluster_id, coordinator_broker, coordinator_partition, group_id, group_type, member_id, "
                            "topic_id, topic, partition, subtopology_id",
                      ["generation", "member_epoch", "pending_revocation"], ["file", "position"])
    return run_sql(f"""
        SELECT cluster_id, group_id AS `group`, group_type, member_id, topic, topic_id, partition,
               subtopology_id, generation, member_epoch, pending_revocation, from_offset AS assigned_from_offset,
               from_timestamp AS assigned_from_timestamp, to_offset AS assigned_to_offset,
               to_timestamp AS assigned_to_timestamp, coordinator_broker, coordinator_partition, file, position
        FROM ({merged})""", events=events, names=run_table(
            "topic_names", partition_topic_ids=topic_ids, metadata_records=metadata, group_events=events))


def consumer_lag_table(offsets: DataFrame, lso: DataFrame, assignments: DataFrame, members: DataFrame) -> DataFrame:
    """Needs consumer_offsets, the lso table, group_assignments and group_members; the `consumer_lag` table: per
    group and partition with a commit at the end of the input, the committed offset against the partition's longest
    replica (log_end_offset, last_stable_offset, lag = log end - committed), and the member that owned it last
    (owner_member_id, its client; owned_until_*: when it stopped, null when it still did)."""
    return run_sql(f"""
        WITH owners AS (
            SELECT * FROM (
                SELECT a.*, row_number() OVER (PARTITION BY cluster_id, coordinator_broker, coordinator_partition,
                                                            `group`, topic, partition
                                               ORDER BY assigned_from_offset DESC, pending_revocation) AS rank_
                FROM {{assignments}} a WHERE topic IS NOT NULL)
            WHERE rank_ = 1),
        who AS (
            SELECT o.cluster_id, o.coordinator_broker, o.coordinator_partition, o.`group`, o.topic, o.partition,
                   o.member_id AS owner_member_id, max_by(m.client_id, m.from_offset) AS owner_client_id,
                   max_by(m.client_host, m.from_offset) AS owner_client_host,
                   first(o.assigned_to_offset) AS owned_until_offset,
                   first(o.assigned_to_timestamp) AS owned_until_timestamp
            FROM owners o LEFT JOIN {{members}} m
              ON m.cluster_id = o.cluster_id AND m.coordinator_partition = o.coordinator_partition
             AND m.`group` = o.`group` AND m.group_type = o.group_type AND m.member_id = o.member_id
             AND m.from_offset <= o.assigned_from_offset
             AND o.assigned_from_offset < coalesce(m.to_offset, {MAX_OFFSET})
            GROUP BY o.cluster_id, o.coordinator_broker, o.coordinator_partition, o.`group`, o.topic, o.partition,
                     o.member_id)
        SELECT c.cluster_id, c.group_id AS `group`, c.topic, c.partition, c.committed_offset,
               c.commit_timestamp AS last_commit_timestamp, c.log_end_offset, l.last_stable_offset,
               c.log_end_offset - c.committed_offset AS lag, c.data_broker, c.status, w.owner_member_id,
               w.owner_client_id, w.owner_client_host, w.owned_until_offset, w.owned_until_timestamp,
               c.coordinator_broker, c.coordinator_partition
        FROM {{offsets}} c
        LEFT JOIN {{lso}} l ON l.broker = c.data_broker AND l.topic = c.topic AND l.partition = c.partition
        LEFT JOIN who w
          ON w.cluster_id = c.cluster_id AND w.coordinator_broker = c.coordinator_broker
         AND w.coordinator_partition = c.coordinator_partition AND w.`group` = c.group_id AND w.topic = c.topic
         AND w.partition = c.partition""", offsets=offsets, lso=lso, assignments=assignments, members=members)


# --- findings ------------------------------------------------------------------------------------------------------


def with_commit_owners(found: DataFrame, assignments: DataFrame, members: DataFrame) -> DataFrame:
    """Needs committed_offset_* finding rows (FINDING_COLUMNS, each on the broker holding the commit, with `group`,
    `coordinator_partition` and `coordinator_offset` in its details), group_assignments and group_members; the same
    findings, each naming the member that owned the partition at the commit where the replay knows it: `member_id`
    and `member_client_id` added to its details and a sentence to its message. (The one join of the group replay
    onto spark/consumer_offsets.py's findings.)"""
    columns = ", ".join(f"f.{c}" for c in FINDING_COLUMNS if c not in ("message", "details"))
    return run_sql(f"""
        WITH f AS (
            SELECT *, get_json_object(details, '$.group') AS group_,
                   get_json_object(details, '$.coordinator_partition') AS coordinator_partition_,
                   CAST(get_json_object(details, '$.coordinator_offset') AS BIGINT) AS coordinator_offset_
            FROM {{found}}),
        owner AS (
            SELECT k.broker, k.group_, k.coordinator_partition_, k.coordinator_offset_, k.topic, k.partition,
                   min_by(named_struct('member_id', a.member_id, 'client_id', m.client_id),
                          named_struct('p', a.pending_revocation, 'f', -a.assigned_from_offset)) AS owner_
            FROM (SELECT DISTINCT broker, group_, coordinator_partition_, coordinator_offset_, topic, partition
                  FROM f) k
            JOIN {{assignments}} a
              ON a.coordinator_broker = k.broker AND a.coordinator_partition = k.coordinator_partition_
             AND a.`group` = k.group_ AND a.topic = k.topic AND a.partition = k.partition
             AND a.assigned_from_offset <= k.coordinator_offset_
             AND k.coordinator_offset_ < coalesce(a.assigned_to_offset, {MAX_OFFSET})
            LEFT JOIN {{members}} m
              ON m.coordinator_broker = a.coordinator_broker AND m.coordinator_partition = a.coordinator_partition
             AND m.`group` = a.`group` AND m.group_type = a.group_type AND m.member_id = a.member_id
             AND m.from_offset <= k.coordinator_offset_
             AND k.coordinator_offset_ < coalesce(m.to_offset, {MAX_OFFSET})
            GROUP BY k.broker, k.group_, k.coordinator_partition_, k.coordinator_offset_, k.topic, k.partition)
        SELECT {columns},
               CASE WHEN owner_ IS NULL THEN f.message
                    ELSE concat(f.message, format_string(' At the commit, member %s (client %s) owned the partition.',
                                                       owner_.member_id, coalesce(owner_.client_id, '?'))) END
                   AS message,
               CASE WHEN owner_ IS NULL THEN f.details
                    ELSE concat(substr(f.details, 1, length(f.details) - 1), ',',
                                substr(to_json(named_struct('member_id', owner_.member_id,
                                                            'member_client_id', owner_.client_id)), 2)) END
                   AS details
        FROM f LEFT JOIN owner o
          ON o.broker = f.broker AND o.group_ = f.group_ AND o.coordinator_partition_ = f.coordinator_partition_
         AND o.coordinator_offset_ = f.coordinator_offset_ AND o.topic = f.topic AND o.partition = f.partition""",
        found=found, assignments=assignments, members=members)
