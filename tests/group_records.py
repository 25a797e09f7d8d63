"""Builders of `__consumer_offsets` group records and `__share_group_state` records for the replay's unit tests:
encoded by kforensics' table-driven encoder, decoded back and turned into the parse pass's rows
(`groups.group_record_rows`, `share_groups.share_record_rows`), so a test's records go the scan's way."""

from __future__ import annotations

import base64
import struct
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from unit_frames import frame

from kforensics.parsers.internal_topics import (
    CONSUMER_OFFSETS,
    SHARE_GROUP_STATE,
    decode_consumer_offsets,
    decode_share_group_state,
    encode_coordinator_record,
)
from kforensics.spark import schemas as S
from kforensics.spark.groups import group_record_rows
from kforensics.spark.share_groups import share_record_rows

#: record type of each group record (CoordinatorRecordType)
TYPES = {"group_metadata": 2, "consumer_group_metadata": 3, "consumer_group_partition_metadata": 4,
         "consumer_group_member_metadata": 5, "consumer_group_target_assignment_member": 7,
         "consumer_group_current_member_assignment": 8, "share_group_member_metadata": 10,
         "share_group_metadata": 11, "share_group_current_member_assignment": 14,
         "streams_group_metadata": 17, "streams_group_member_metadata": 19,
         "streams_group_current_member_assignment": 22, "streams_group_topology": 23}
BASE_TS = 1_000_000


def uuid(label: str) -> str:
    """A topic id (Kafka's base64url Uuid form) of a label."""
    return base64.urlsafe_b64encode(label.encode().ljust(16, b"_")[:16]).decode().rstrip("=")


def _s(text: str) -> bytes:
    raw = text.encode()
    return struct.pack(">h", len(raw)) + raw


def assignment_bytes(partitions: dict[str, list[int]], version: int = 3) -> bytes:
    """ConsumerProtocolAssignment bytes (the same layout in versions 0-3), written by hand."""
    out = struct.pack(">hi", version, len(partitions))
    for topic, ps in partitions.items():
        out += _s(topic) + struct.pack(">i", len(ps)) + b"".join(struct.pack(">i", p) for p in ps)
    return out + struct.pack(">i", -1)  # null UserData


def subscription_bytes(topics: list[str], version: int = 1) -> bytes:
    """ConsumerProtocolSubscription bytes of version 0 or 1 (no owned partitions)."""
    out = struct.pack(">hi", version, len(topics)) + b"".join(_s(t) for t in topics) + struct.pack(">i", -1)
    return out + (struct.pack(">i", 0) if version >= 1 else b"")


def classic(group: str, generation: int, members: dict[str, dict[str, list[int]]] | None,
            protocol_type: str = "consumer") -> tuple[int, dict, dict | None]:
    """A GroupMetadata record (value v3): members -> their assignment (None: a tombstone)."""
    if members is None:
        return TYPES["group_metadata"], {"group": group}, None
    return TYPES["group_metadata"], {"group": group}, {
        "protocolType": protocol_type, "generation": generation, "protocol": "range",
        "leader": next(iter(members), None), "currentStateTimestamp": -1, "members": [
            {"memberId": m, "groupInstanceId": None, "clientId": f"client-{m}", "clientHost": f"/10.0.0.{i}",
             "rebalanceTimeout": 300000, "sessionTimeout": 45000,
             "subscription": base64.b64encode(subscription_bytes(sorted(a))).decode(),
             "assignment": base64.b64encode(assignment_bytes(a)).decode()}
            for i, (m, a) in enumerate(members.items())]}


def member(kind: str, group: str, member_id: str, *, topics: list[str] = (), tombstone: bool = False
           ) -> tuple[int, dict, dict | None]:
    """A consumer/share/streams MemberMetadata record (`kind` the group type)."""
    value: dict[str, Any] | None = None
    if not tombstone:
        value = {"clientId": f"client-{member_id}", "clientHost": "/10.1.0.1"}
        if kind != "streams":
            value["subscribedTopicNames"] = list(topics)
        else:
            value.update(processId="p1", topologyEpoch=1)
    return TYPES[f"{kind}_group_member_metadata"], {"groupId": group, "memberId": member_id}, value


def current(kind: str, group: str, member_id: str, epoch: int, assigned: dict[str, list[int]] | None = None,
            pending: dict[str, list[int]] | None = None, *, state: int = 0, tombstone: bool = False
            ) -> tuple[int, dict, dict | None]:
    """A CurrentMemberAssignment record: `assigned` / `pending` map topic ids (subtopology ids for streams) to
    partitions."""
    key = {"groupId": group, "memberId": member_id}
    rt = TYPES[f"{kind}_group_current_member_assignment"]
    if tombstone:
        return rt, key, None
    if kind == "streams":
        tasks = lambda d: [{"subtopologyId": s, "partitions": ps} for s, ps in (d or {}).items()]  # noqa: E731
        return rt, key, {"memberEpoch": epoch, "previousMemberEpoch": epoch - 1, "state": state,
                         "activeTasks": tasks(assigned), "activeTasksPendingRevocation": tasks(pending)}
    tps = lambda d: [{"topicId": t, "partitions": ps} for t, ps in (d or {}).items()]  # noqa: E731
    value = {"memberEpoch": epoch, "previousMemberEpoch": epoch - 1, "state": state,
             "assignedPartitions": tps(assigned)}
    if kind == "consumer":
        value["partitionsPendingRevocation"] = tps(pending)
    return rt, key, value


def metadata(kind: str, group: str, epoch: int | None) -> tuple[int, dict, dict | None]:
    """A group's Metadata record (None: its tombstone)."""
    value = None if epoch is None else {"epoch": epoch, **({"metadataHash": 0} if kind != "consumer" else {})}
    return TYPES[f"{kind}_group_metadata"], {"groupId": group}, value


def topology(group: str, subtopologies: dict[str, list[str]]) -> tuple[int, dict, dict | None]:
    return TYPES["streams_group_topology"], {"groupId": group}, {"epoch": 1, "subtopologies": [
        {"subtopologyId": s, "sourceTopics": topics} for s, topics in subtopologies.items()]}


def _where(topic: str, offset: int, broker: str) -> dict[str, Any]:
    return {"broker": broker, "topic": topic, "partition": 0, "file": f"{topic}-0/00000000000000000000.log",
            "position": offset * 100, "offset": offset, "timestamp": BASE_TS + offset}


def group_records(spark: SparkSession, records: list[tuple[int, dict, dict | None]], *, broker: str = "b1"
                  ) -> DataFrame:
    """The `group_records` table of these records, at offsets 0.. of `__consumer_offsets-0` on `broker`."""
    rows = []
    for offset, (record_type, key, value) in enumerate(records):
        k, v = encode_coordinator_record(CONSUMER_OFFSETS, record_type, key, value, 3 if record_type == 2 else 0)
        rows += [r for r in group_record_rows(_where(CONSUMER_OFFSETS, offset, broker), decode_consumer_offsets(k, v))
                 if r.pop("row_kind") == "group"]
    schema = S.INPUT_TABLES["group_records"]
    return frame(spark, [(f.name, f.type) for f in schema], rows)


def share_state(group: str, topic_id: str, partition: int, *, snapshot: bool, start: int, leader_epoch: int = 0,
                state_epoch: int = 0, snapshot_epoch: int = 0, batches: list[tuple[int, int, int, int]] = (),
                tombstone: bool = False) -> tuple[int, dict, dict | None]:
    """A ShareSnapshot (`snapshot`) or ShareUpdate record; batches are (first, last, delivery state, count)."""
    key = {"groupId": group, "topicId": topic_id, "partition": partition}
    if tombstone:
        return (0 if snapshot else 1), key, None
    value = {"snapshotEpoch": snapshot_epoch, "leaderEpoch": leader_epoch, "startOffset": start, "stateBatches": [
        {"firstOffset": f, "lastOffset": last, "deliveryState": s, "deliveryCount": c} for f, last, s, c in batches]}
    if snapshot:
        value.update(stateEpoch=state_epoch, createTimestamp=BASE_TS, writeTimestamp=BASE_TS)
    return (0 if snapshot else 1), key, value


def share_records(spark: SparkSession, records: list[tuple[int, dict, dict | None]], *, broker: str = "b1"
                  ) -> DataFrame:
    """The `share_state_records` table of these records, at offsets 0.. of `__share_group_state-0`."""
    rows = []
    for offset, (record_type, key, value) in enumerate(records):
        k, v = encode_coordinator_record(SHARE_GROUP_STATE, record_type, key, value)
        rows += [r for r in share_record_rows(_where(SHARE_GROUP_STATE, offset, broker),
                                              decode_share_group_state(k, v)) if r.pop("row_kind") == "share"]
    schema = S.INPUT_TABLES["share_state_records"]
    return frame(spark, [(f.name, f.type) for f in schema], rows)


def longest(spark: SparkSession, rows: list[tuple[str, int, int, int]], *, broker: str = "b1") -> DataFrame:
    """longest_replicas: the coordinator partitions (on `broker`) and data partitions (topic, partition, log start,
    log end), cluster `c`."""
    every = [("c", CONSUMER_OFFSETS, 0, broker, 0, 1000, 0), ("c", SHARE_GROUP_STATE, 0, broker, 0, 1000, 0)] + [
        ("c", t, p, broker, start, end, 0) for t, p, start, end in rows]
    return spark.createDataFrame(every, "cluster_id string, topic string, partition int, longest_broker string, "
                                        "log_start_offset bigint, log_end_offset bigint, log_end_timestamp bigint")


def topic_ids(spark: SparkSession, names: dict[str, str]) -> DataFrame:
    """partition_topic_ids (live rows, without dir_state): topic id -> name."""
    return spark.createDataFrame([("b1", name, 0, tid) for tid, name in names.items()],
                                 "broker string, topic string, partition int, topic_id string")


def empty(spark: SparkSession, name: str) -> DataFrame:
    return S.frame(spark, S.INPUT_TABLES[name], [])
