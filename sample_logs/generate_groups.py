"""Write sample_logs/groups-1 (a group and share coordinator's disk) and sample_logs/EXPECTED_GROUPS.json (issue 41).

One broker (KRaft meta.properties, clean shutdown) holding the data its groups consume and the coordinators' logs,
each group in the `__consumer_offsets` partition its id hashes to (GroupMetadataManager.partitionFor: Utils.abs of
Java's String.hashCode, 50 partitions) and each share partition's state in the `__share_group_state` partition its
key "<group>:<topic id>:<partition>" hashes to (ShareCoordinatorService.partitionFor, 50 partitions):

- `billing`, a classic consumer group (GroupMetadataValue v3, protocol "range"), through two rebalances: A alone
  (generation 1), A and B (2), B alone after A left (3); its commits, the last one on payments-1 beyond the log end
  (committed_offset_beyond_log_end, naming member B, which owned payments-1 then);
- `orders-app`, a KIP-848 consumer group: m1 alone (epoch 1); m2 joins and orders-2 goes from m1 to m2 through
  revocation (epoch 2: m1 holds it pending revocation, m2 waits, UNRELEASED_PARTITIONS); m3 joins and at the end of
  the input m1 still holds orders-1 pending revocation (epoch 3): legal, silent;
- `fraud-check`, a KIP-848 consumer group whose two members hold orders-0 at once (partition_owned_twice);
- `wordcount`, a streams group (KIP-1071): subtopology 0 reads `words`, subtopology 1 the repartition topic
  `wordcount-counts-repartition`; s1 runs tasks 0_0 and 0_1, s2 task 1_0;
- `alerts-share`, a share group (KIP-932) whose two members share alerts-0..2 (silent), and its state in
  `__share_group_state`: alerts-0 with a poison record (offset 17 archived after 5 deliveries:
  share_records_archived) and a ShareUpdate by a stale leader (epoch 1 after 2: share_state_stale_leader); alerts-1
  whose log starts at 40 while the share group's state starts at 25 (records deleted before delivery:
  share_records_deleted_undelivered); alerts-2 whose state starts at 150 beyond its log end 80
  (share_state_beyond_log_end).

Record batches are written by kafka-python (through generate.py's writers), the ConsumerProtocol assignment and
subscription bytes by hand with struct, and the coordinator records by kforensics' table-driven encoder
(`parsers.internal_topics.encode_coordinator_record`, held to hand-written bytes by tests/test_message_schema.py), as
generate.py writes its `__share_group_state`. EXPECTED_GROUPS.json is this script's own bookkeeping: the rows the
replay must give and the findings planted, nothing read back.

    python sample_logs/generate_groups.py [OUT_DIR]      (default: the folder this script is in)
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import shutil
import struct
import sys
from pathlib import Path

import generate as g

from kforensics.parsers.internal_topics import CONSUMER_OFFSETS, SHARE_GROUP_STATE, encode_coordinator_record

BROKER = "groups-1"
CLUSTER_ID = "a2ZvcmVuc2ljcy1ncm91cHM"
T0 = g.BASE_TS + 6 * g.HOUR_MS
OFFSETS_PARTITIONS = 50  # offsets.topic.num.partitions
AVAILABLE, ACKNOWLEDGED, ARCHIVED = 0, 2, 4
STATE_NAMES = {AVAILABLE: "AVAILABLE", ACKNOWLEDGED: "ACKNOWLEDGED", ARCHIVED: "ARCHIVED"}


def group_partition(group: str) -> int:
    h = g._java_string_hash(group)
    return (0 if h == -(1 << 31) else abs(h)) % OFFSETS_PARTITIONS


def member_uuid(label: str) -> str:
    """A KIP-848 member id (the client's Uuid, base64url)."""
    return base64.urlsafe_b64encode(hashlib.sha256(label.encode()).digest()[:16]).decode().rstrip("=")


def tid(topic: str) -> str:
    return g.TOPIC_IDS.setdefault(topic, g._topic_id(topic))


# --- the consumer protocol, by hand ------------------------------------------------------------------------------

def _s(text: str | None) -> bytes:
    return struct.pack(">h", -1) if text is None else struct.pack(">h", len(text.encode())) + text.encode()


def assignment(partitions: dict[str, list[int]]) -> str:
    """ConsumerProtocolAssignment v3 (AssignedPartitions, null UserData), base64 as GroupMetadataValue's JSON."""
    out = struct.pack(">hi", 3, len(partitions))
    for topic, ps in partitions.items():
        out += _s(topic) + struct.pack(">i", len(ps)) + b"".join(struct.pack(">i", p) for p in ps)
    return base64.b64encode(out + struct.pack(">i", -1)).decode()


def subscription(topics: list[str], owned: dict[str, list[int]], generation: int, rack: str) -> str:
    """ConsumerProtocolSubscription v3 (Topics, null UserData, OwnedPartitions, GenerationId, RackId)."""
    out = struct.pack(">hi", 3, len(topics)) + b"".join(_s(t) for t in topics) + struct.pack(">ii", -1, len(owned))
    for topic, ps in owned.items():
        out += _s(topic) + struct.pack(">i", len(ps)) + b"".join(struct.pack(">i", p) for p in ps)
    return base64.b64encode(out + struct.pack(">i", generation) + _s(rack)).decode()


# --- the coordinators' logs --------------------------------------------------------------------------------------

class Log:
    """The records of the coordinators, each in its partition, with labels to find their offsets by."""

    def __init__(self) -> None:
        self.entries: dict[tuple[str, int], list[tuple[int, bytes, bytes | None]]] = {}
        self.labels: dict[str, tuple[str, int, int]] = {}  # label -> (topic, partition, offset)

    def add(self, topic: str, partition: int, at: int, record_type: int, key: dict, value: dict | None,
            version: int = 0, label: str | None = None) -> None:
        k, v = encode_coordinator_record(topic, record_type, key, value, version)
        rows = self.entries.setdefault((topic, partition), [])
        if label:
            self.labels[label] = (topic, partition, len(rows))
        rows.append((at, k, v))

    def offset(self, label: str) -> int:
        return self.labels[label][2]

    def where(self, label: str) -> str:
        topic, partition, _ = self.labels[label]
        return f"{topic}-{partition}"


def classic_group(log: Log) -> tuple[list, list, list]:
    """`billing`: expected members, assignments and commits (with who owned the partition)."""
    group, p = "billing", group_partition("billing")
    members = {"A": ("consumer-billing-1-1f0e6a", "billing-a", "consumer-billing-1", "/10.20.0.11"),
               "B": ("consumer-billing-2-9c44d2", None, "consumer-billing-2", "/10.20.0.12")}

    def metadata(at: int, generation: int, owned: dict[str, list[int]], label: str) -> None:
        log.add(CONSUMER_OFFSETS, p, at, 2, {"group": group}, {
            "protocolType": "consumer", "generation": generation, "protocol": "range",
            "leader": members[next(iter(owned))][0], "currentStateTimestamp": at, "members": [
                {"memberId": members[m][0], "groupInstanceId": members[m][1], "clientId": members[m][2],
                 "clientHost": members[m][3], "rebalanceTimeout": 300000, "sessionTimeout": 45000,
                 "subscription": subscription(["payments"], {}, generation - 1, "rack-a"),
                 "assignment": assignment({"payments": ps})} for m, ps in owned.items()]}, version=3, label=label)

    def commit(at: int, partition: int, offset: int) -> None:
        key = {"group": group, "topic": "payments", "partition": partition}
        log.add(CONSUMER_OFFSETS, p, at, 1, key, {"offset": offset, "leaderEpoch": 0, "metadata": "",
                                                  "commitTimestamp": at}, version=3, label=f"billing commit {offset}")

    metadata(T0, 1, {"A": [0, 1]}, "billing gen 1")
    commit(T0 + 10_000, 0, 20)
    commit(T0 + 10_001, 1, 15)
    metadata(T0 + 60_000, 2, {"A": [0], "B": [1]}, "billing gen 2")
    commit(T0 + 70_000, 0, 40)
    commit(T0 + 70_001, 1, 30)
    metadata(T0 + 120_000, 3, {"B": [0, 1]}, "billing gen 3")
    commit(T0 + 130_000, 0, 70)
    commit(T0 + 130_001, 1, 75)  # payments-1 ends at 60
    gen = {1: "billing gen 1", 2: "billing gen 2", 3: "billing gen 3"}
    ends = {1: gen[2], 2: gen[3], 3: None}
    spans = [("A", 1, [0, 1]), ("A", 2, [0]), ("B", 2, [1]), ("B", 3, [0, 1])]
    expected_members = [{"group": group, "group_type": "classic", "member_id": members[m][0],
                         "instance_id": members[m][1], "client_id": members[m][2], "client_host": members[m][3],
                         "rack": "rack-a", "generation": n, "member_epoch": None, "member_state": None,
                         "subscribed_topics": ["payments"], "from": gen[n], "to": ends[n]} for m, n, _ in spans]
    expected_assignments = [{"group": group, "member_id": members[m][0], "topic": "payments", "partition": q,
                             "generation": n, "pending_revocation": False, "from": gen[n], "to": ends[n]}
                            for m, n, ps in spans for q in ps]
    return expected_members, expected_assignments, [members["B"][0], members["B"][2]]


def consumer_groups(log: Log) -> tuple[list, list, list]:
    """`orders-app` (handovers through revocation) and `fraud-check` (orders-0 owned twice)."""
    group, p = "orders-app", group_partition("orders-app")
    orders = tid("orders")
    m = {n: member_uuid(f"orders-app {n}") for n in ("m1", "m2", "m3")}
    at = T0

    def add(record_type: int, key: dict, value: dict | None, label: str | None = None, dt: int = 100) -> None:
        nonlocal at
        at += dt
        log.add(CONSUMER_OFFSETS, p, at, record_type, {"groupId": group, **key}, value, label=label)

    def join(name: str) -> None:
        add(5, {"memberId": m[name]}, {"instanceId": None, "rackId": "rack-b", "clientId": f"orders-app-{name}",
                                       "clientHost": f"/10.30.0.{name[1]}", "subscribedTopicNames": ["orders"],
                                       "rebalanceTimeoutMs": 300000, "serverAssignor": "uniform"},
            label=f"orders-app {name} joins")

    def current(name: str, epoch: int, assigned: list[int], pending: list[int], state: int, label: str) -> None:
        tps = lambda ps: [{"topicId": orders, "partitions": ps}] if ps else []  # noqa: E731
        add(8, {"memberId": m[name]}, {"memberEpoch": epoch, "previousMemberEpoch": epoch - 1, "state": state,
                                       "assignedPartitions": tps(assigned),
                                       "partitionsPendingRevocation": tps(pending)}, label=label)

    def target(epoch: int, targets: dict[str, list[int]]) -> None:
        add(3, {}, {"epoch": epoch})
        for name, ps in targets.items():
            add(7, {"memberId": m[name]}, {"topicPartitions": [{"topicId": orders, "partitions": ps}]})
        add(6, {}, {"assignmentEpoch": epoch})

    def commit(partition: int, offset: int) -> None:
        nonlocal at
        at += 100
        log.add(CONSUMER_OFFSETS, p, at, 1, {"group": group, "topic": "orders", "partition": partition},
                {"offset": offset, "leaderEpoch": 0, "metadata": "", "commitTimestamp": at}, version=3)

    join("m1")
    target(1, {"m1": [0, 1, 2]})
    current("m1", 1, [0, 1, 2], [], 0, "m1 epoch 1")
    for q, o in ((0, 10), (1, 12), (2, 9)):
        commit(q, o)
    at = T0 + 60_000
    join("m2")
    target(2, {"m1": [0, 1], "m2": [2]})
    current("m2", 2, [], [], 2, "m2 epoch 2 waits")
    current("m1", 2, [0, 1], [2], 1, "m1 epoch 2 revoking")
    commit(2, 25)  # m1 commits orders-2 before it gives it up
    current("m1", 2, [0, 1], [], 0, "m1 epoch 2 revoked")
    current("m2", 2, [2], [], 0, "m2 epoch 2 stable")
    for q, o in ((0, 30), (2, 40)):
        commit(q, o)
    at = T0 + 120_000
    join("m3")
    target(3, {"m1": [0], "m2": [2], "m3": [1]})
    current("m3", 3, [], [], 2, "m3 epoch 3 waits")
    current("m1", 3, [0], [1], 1, "m1 epoch 3 revoking")
    commit(0, 50)
    commit(1, 30)
    members = [
        (m["m1"], None, "orders-app m1 joins", "m1 epoch 1", "UNKNOWN"),
        (m["m1"], 1, "m1 epoch 1", "m1 epoch 2 revoking", "STABLE"),
        (m["m1"], 2, "m1 epoch 2 revoking", "m1 epoch 2 revoked", "UNREVOKED_PARTITIONS"),
        (m["m1"], 2, "m1 epoch 2 revoked", "m1 epoch 3 revoking", "STABLE"),
        (m["m1"], 3, "m1 epoch 3 revoking", None, "UNREVOKED_PARTITIONS"),
        (m["m2"], None, "orders-app m2 joins", "m2 epoch 2 waits", "UNKNOWN"),
        (m["m2"], 2, "m2 epoch 2 waits", "m2 epoch 2 stable", "UNRELEASED_PARTITIONS"),
        (m["m2"], 2, "m2 epoch 2 stable", None, "STABLE"),
        (m["m3"], None, "orders-app m3 joins", "m3 epoch 3 waits", "UNKNOWN"),
        (m["m3"], 3, "m3 epoch 3 waits", None, "UNRELEASED_PARTITIONS")]
    expected_members = [{"group": group, "group_type": "consumer", "member_id": mid, "member_epoch": epoch,
                         "member_state": None if state == "UNKNOWN" else state, "client_id": None, "from": f,
                         "to": t} for mid, epoch, f, t, state in members]
    for row in expected_members:
        name = next(n for n, v in m.items() if v == row["member_id"])
        row.update(client_id=f"orders-app-{name}", client_host=f"/10.30.0.{name[1]}", rack="rack-b",
                   subscribed_topics=["orders"], instance_id=None, generation=None)
    owned = [("m1", 0, 1, False, "m1 epoch 1", "m1 epoch 2 revoking"),
             ("m1", 1, 1, False, "m1 epoch 1", "m1 epoch 2 revoking"),
             ("m1", 2, 1, False, "m1 epoch 1", "m1 epoch 2 revoking"),
             ("m1", 0, 2, False, "m1 epoch 2 revoking", "m1 epoch 3 revoking"),
             ("m1", 1, 2, False, "m1 epoch 2 revoking", "m1 epoch 3 revoking"),
             ("m1", 2, 2, True, "m1 epoch 2 revoking", "m1 epoch 2 revoked"),
             ("m1", 0, 3, False, "m1 epoch 3 revoking", None), ("m1", 1, 3, True, "m1 epoch 3 revoking", None),
             ("m2", 2, 2, False, "m2 epoch 2 stable", None)]
    expected_assignments = [{"group": group, "member_id": m[n], "topic": "orders", "partition": q,
                             "member_epoch": e, "pending_revocation": pending, "from": f, "to": t}
                            for n, q, e, pending, f, t in owned]
    # fraud-check: two members of one KIP-848 group hold orders-0 at once
    group, p = "fraud-check", group_partition("fraud-check")
    f = {n: member_uuid(f"fraud-check {n}") for n in ("f1", "f2")}
    at = T0 + 200_000
    log.add(CONSUMER_OFFSETS, p, at, 3, {"groupId": group}, {"epoch": 1})
    for i, n in enumerate(("f1", "f2")):
        log.add(CONSUMER_OFFSETS, p, at + 10 + i, 5, {"groupId": group, "memberId": f[n]}, {
            "clientId": f"fraud-check-{n}", "clientHost": "/10.40.0.1", "subscribedTopicNames": ["orders"]})
    for i, n in enumerate(("f1", "f2")):
        log.add(CONSUMER_OFFSETS, p, at + 20 + i, 8, {"groupId": group, "memberId": f[n]}, {
            "memberEpoch": 1, "previousMemberEpoch": 0, "state": 0,
            "assignedPartitions": [{"topicId": orders, "partitions": [0]}], "partitionsPendingRevocation": []},
            label=f"fraud-check {n} epoch 1")
    planted = [{"kind": "partition_owned_twice", "topic": "orders", "partition": 0, "offset": None, "group": group,
                "group_type": "consumer", "members": sorted(f.values()), "at": "fraud-check f2 epoch 1"}]
    return expected_members, expected_assignments, planted


def streams_group(log: Log) -> list:
    """`wordcount`: its topology and two members' active tasks; the expected assignments."""
    group, p = "wordcount", group_partition("wordcount")
    s = {n: member_uuid(f"wordcount {n}") for n in ("s1", "s2")}
    at = T0 + 300_000
    log.add(CONSUMER_OFFSETS, p, at, 17, {"groupId": group}, {"epoch": 1, "metadataHash": 0})
    log.add(CONSUMER_OFFSETS, p, at + 1, 23, {"groupId": group}, {"epoch": 1, "subtopologies": [
        {"subtopologyId": "0", "sourceTopics": ["words"], "repartitionSinkTopics": ["wordcount-counts-repartition"]},
        {"subtopologyId": "1", "repartitionSourceTopics": [
            {"name": "wordcount-counts-repartition", "partitions": 1, "replicationFactor": -1}],
         "stateChangelogTopics": [{"name": "wordcount-counts-changelog", "partitions": 1, "replicationFactor": -1}]}]})
    for i, n in enumerate(("s1", "s2")):
        log.add(CONSUMER_OFFSETS, p, at + 10 + i, 19, {"groupId": group, "memberId": s[n]}, {
            "clientId": f"wordcount-{n}", "clientHost": "/10.50.0.1", "topologyEpoch": 1, "processId": f"proc-{n}",
            "rebalanceTimeoutMs": 300000})
    tasks = {"s1": [{"subtopologyId": "0", "partitions": [0, 1]}], "s2": [{"subtopologyId": "1", "partitions": [0]}]}
    for i, n in enumerate(("s1", "s2")):
        log.add(CONSUMER_OFFSETS, p, at + 20 + i, 22, {"groupId": group, "memberId": s[n]}, {
            "memberEpoch": 1, "previousMemberEpoch": 0, "state": 1, "activeTasks": tasks[n]},
            label=f"wordcount {n} epoch 1")
    for i, (topic, partition, offset) in enumerate((("words", 0, 40), ("words", 1, 38),
                                                    ("wordcount-counts-repartition", 0, 20))):
        log.add(CONSUMER_OFFSETS, p, at + 30 + i, 1, {"group": group, "topic": topic, "partition": partition},
                {"offset": offset, "leaderEpoch": 0, "metadata": "", "commitTimestamp": at + 30 + i}, version=3)
    return [{"group": group, "member_id": s[n], "topic": topic, "partition": q, "member_epoch": 1,
             "pending_revocation": False, "subtopology_id": sub, "from": f"wordcount {n} epoch 1", "to": None}
            for n, topic, q, sub in (("s1", "words", 0, "0"), ("s1", "words", 1, "0"),
                                     ("s2", "wordcount-counts-repartition", 0, "1"))]


def share_group(log: Log) -> tuple[list, list, list]:
    """`alerts-share`: its members (in __consumer_offsets) and its state (in __share_group_state); the expected share
    partition state rows, assignments and the planted findings."""
    group, p = "alerts-share", group_partition("alerts-share")
    alerts = tid("alerts")
    a = {n: member_uuid(f"alerts-share {n}") for n in ("a1", "a2")}
    at = T0 + 400_000
    log.add(CONSUMER_OFFSETS, p, at, 11, {"groupId": group}, {"epoch": 1, "metadataHash": 0})
    log.add(CONSUMER_OFFSETS, p, at + 1, 15, {"groupId": group}, {"initializedTopics": [
        {"topicId": alerts, "topicName": "alerts", "partitions": [0, 1, 2]}]})
    for i, n in enumerate(("a1", "a2")):
        log.add(CONSUMER_OFFSETS, p, at + 10 + i, 10, {"groupId": group, "memberId": a[n]}, {
            "clientId": f"alerts-{n}", "clientHost": "/10.60.0.1", "subscribedTopicNames": ["alerts"]})
    for i, n in enumerate(("a1", "a2")):
        log.add(CONSUMER_OFFSETS, p, at + 20 + i, 14, {"groupId": group, "memberId": a[n]}, {
            "memberEpoch": 1, "previousMemberEpoch": 0, "state": 0,
            "assignedPartitions": [{"topicId": alerts, "partitions": [0, 1, 2]}]}, label=f"alerts-share {n} epoch 1")
    assignments = [{"group": group, "member_id": a[n], "topic": "alerts", "partition": q, "member_epoch": 1,
                    "pending_revocation": False, "from": f"alerts-share {n} epoch 1", "to": None}
                   for n in ("a1", "a2") for q in (0, 1, 2)]

    def state(partition: int, at: int, snapshot: bool, start: int, leader: int, batches: list, label: str) -> None:
        key = {"groupId": group, "topicId": alerts, "partition": partition}
        value = {"snapshotEpoch": 0, "leaderEpoch": leader, "startOffset": start, "stateBatches": [
            {"firstOffset": f, "lastOffset": last, "deliveryState": s, "deliveryCount": c}
            for f, last, s, c in batches]}
        if snapshot:
            value.update(stateEpoch=0, createTimestamp=at, writeTimestamp=at)
        log.add(SHARE_GROUP_STATE, g.share_state_partition(group, "alerts", partition), at, 0 if snapshot else 1, key,
                value, label=label)

    at += 1000
    state(0, at, True, 0, 2, [], "alerts-0 snapshot")
    state(0, at + 100, False, 10, 2, [(10, 15, ACKNOWLEDGED, 1), (16, 17, AVAILABLE, 2)], "alerts-0 update 1")
    state(0, at + 200, False, 16, 2, [(16, 16, AVAILABLE, 3), (17, 17, ARCHIVED, 5)], "alerts-0 poison")
    state(0, at + 300, False, -1, 1, [(18, 20, ACKNOWLEDGED, 1)], "alerts-0 stale leader")
    state(1, at + 400, True, 25, 0, [(25, 29, AVAILABLE, 1)], "alerts-1 snapshot")
    state(2, at + 500, True, 150, 0, [], "alerts-2 snapshot")
    rows = [(0, 16, 1, [(16, 16, "AVAILABLE", 3), (17, 17, "ARCHIVED", 5), (18, 20, "ACKNOWLEDGED", 1)],
             "alerts-0 stale leader"),
            (1, 25, 0, [(25, 29, "AVAILABLE", 1)], "alerts-1 snapshot"), (2, 150, 0, [(None, None, None, None)],
                                                                          "alerts-2 snapshot")]
    expected_state = [{"group": group, "topic": "alerts", "topic_id": alerts, "partition": q, "start_offset": start,
                       "leader_epoch": leader, "state_epoch": 0, "snapshot_epoch": 0, "first_offset": f,
                       "last_offset": last, "delivery_state": s, "delivery_count": c, "latest": latest}
                      for q, start, leader, batches, latest in rows for f, last, s, c in batches]
    planted = [
        {"kind": "share_records_archived", "topic": "alerts", "partition": 0, "offset": 17, "group": group,
         "first_offset": 17, "last_offset": 17, "delivery_count": 5, "at": "alerts-0 stale leader"},
        {"kind": "share_state_stale_leader", "topic": "alerts", "partition": 0, "offset": None, "group": group,
         "leader_epoch": 1, "recorded_leader_epoch": 2, "at": "alerts-0 stale leader"},
        {"kind": "share_records_deleted_undelivered", "topic": "alerts", "partition": 1, "offset": 25, "group": group,
         "log_start_offset": 40, "deleted_offsets": [25, 39], "at": "alerts-1 snapshot"},
        {"kind": "share_state_beyond_log_end", "topic": "alerts", "partition": 2, "offset": 150, "group": group,
         "log_end_offset": 80, "at": "alerts-2 snapshot"}]
    return expected_state, assignments, planted


# --- the data ----------------------------------------------------------------------------------------------------

#: topic, partition, log start, records (to the log end)
DATA = [("payments", 0, 0, 80), ("payments", 1, 0, 60), ("orders", 0, 0, 50), ("orders", 1, 0, 50),
        ("orders", 2, 0, 50), ("words", 0, 0, 40), ("words", 1, 0, 40), ("wordcount-counts-repartition", 0, 0, 20),
        ("alerts", 0, 0, 30), ("alerts", 1, 40, 60), ("alerts", 2, 0, 80)]


def data_partition(rng: random.Random, topic: str, partition: int, start: int, count: int) -> g.PartitionWriter:
    """Batches of 10 plain records from `start` (a log whose older segments retention deleted starts there)."""
    p = g.PartitionWriter(topic, partition)
    if start:
        p.segments = [g.Segment(start)]
        p.next_offset = p.log_start_offset = start
    p.set_leader_epoch(0)
    ts = T0 - g.HOUR_MS
    for _ in range(count // 10):
        recs = g.records(rng, 10, ts, prefix=topic[:5])
        p.append(g.data_batch(recs), count=10, max_ts=recs[-1][0])
        ts += 10_000
    return p


def _at(log: Log, label: str | None, writers: dict[tuple[str, int], g.PartitionWriter]) -> dict:
    """A labelled record's place: offset, coordinator partition and its batch's file and position."""
    if label is None:
        return {"offset": None}
    topic, partition, offset = log.labels[label]
    batch = writers[(topic, partition)].fact_batches[offset]
    return {"offset": offset, "coordinator_partition": f"{topic}-{partition}", "file": batch["segment"],
            "position": batch["position"], "timestamp": batch["max_timestamp"]}


def main(out: Path) -> dict:
    target = out / BROKER
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    rng = random.Random(20251141)
    log = Log()
    classic_members, classic_assignments, billing_b = classic_group(log)
    consumer_members, consumer_assignments, owned_twice = consumer_groups(log)
    streams_assignments = streams_group(log)
    share_state, share_assignments, share_findings = share_group(log)

    writers: dict[tuple[str, int], g.PartitionWriter] = {}
    for topic, partition, start, count in DATA:
        writers[(topic, partition)] = data_partition(rng, topic, partition, start, count)
    for (topic, partition), entries in sorted(log.entries.items()):
        times = [at for at, _, _ in entries]
        assert times == sorted(times), (topic, partition)  # appended in time order
        writers[(topic, partition)] = g.coordinator_partition(topic, partition, entries)
    partitions = {}
    for (topic, partition), w in sorted(writers.items()):
        w.write(target, active_preallocated=False)  # a clean shutdown: active indexes trimmed
        partitions[w.name] = {"topic": topic, "partition": partition, "topic_id": tid(topic),
                              "log_start_offset": w.log_start_offset, "log_end_offset": w.next_offset,
                              "segments": [{"base_offset": s.base_offset, "log_bytes": len(s.data)}
                                           for s in w.segments]}
    ends = [(t, q, w.next_offset) for (t, q), w in sorted(writers.items())]
    for name in ("replication-offset-checkpoint", "recovery-point-offset-checkpoint"):
        g.write_checkpoint(target / name, ends)
    g.write_checkpoint(target / "log-start-offset-checkpoint", [(t, q, writers[(t, q)].log_start_offset)
                                                                 for t, q, _ in ends])
    g.write_checkpoint(target / "cleaner-offset-checkpoint", [])
    (target / "meta.properties").write_text(
        f"#\n#Thu Nov 20 16:00:00 UTC 2025\nnode.id=1\ndirectory.id=Z3JvdXBzLWJyb2tlci0xAA\nversion=1\n"
        f"cluster.id={CLUSTER_ID}\n")
    (target / ".kafka_cleanshutdown").write_text('{"version":0,"brokerEpoch":7}')

    def placed(rows: list[dict], prefix: str = "") -> list[dict]:
        out_rows = []
        for r in rows:
            r = dict(r)
            f, t = r.pop("from", None), r.pop("to", None)
            start, end = _at(log, f, writers), _at(log, t, writers)
            out_rows.append({**r, f"{prefix}from_offset": start["offset"], f"{prefix}to_offset": end["offset"],
                             "coordinator_partition": start.get("coordinator_partition")})
        return out_rows

    b_commit = _at(log, "billing commit 75", writers)
    findings = [{"kind": "committed_offset_beyond_log_end", "topic": "payments", "partition": 1, "offset": 75,
                 "group": "billing", "log_end_offset": 60, "member_id": billing_b[0], "member_client_id": billing_b[1],
                 "file": b_commit["file"], "position": b_commit["position"],
                 "coordinator_partition": b_commit["coordinator_partition"]}]
    for f in owned_twice + share_findings:
        f = dict(f)
        at = _at(log, f.pop("at"), writers)
        findings.append({**f, "file": at["file"], "position": at["position"],
                         "coordinator_partition": at["coordinator_partition"]})
    state = []
    for r in share_state:
        r = dict(r)
        at = _at(log, r.pop("latest"), writers)
        state.append({**r, "coordinator_partition": at["coordinator_partition"], "coordinator_offset": at["offset"]})
    expected = {
        "generated_by": "sample_logs/generate_groups.py", "broker": BROKER, "cluster_id": CLUSTER_ID,
        "base_timestamp": T0, "partitions": partitions,
        "group_partitions": {grp: f"__consumer_offsets-{group_partition(grp)}"
                             for grp in ("billing", "orders-app", "fraud-check", "wordcount", "alerts-share")},
        "group_members": placed(classic_members + consumer_members),
        "group_assignments": placed(classic_assignments + consumer_assignments + streams_assignments
                                    + share_assignments, "assigned_"),
        "consumer_lag": [
            {"group": "billing", "topic": "payments", "partition": 0, "committed_offset": 70, "log_end_offset": 80,
             "lag": 10, "status": "ok", "owner_member_id": billing_b[0]},
            {"group": "billing", "topic": "payments", "partition": 1, "committed_offset": 75, "log_end_offset": 60,
             "lag": -15, "status": "beyond_log_end", "owner_member_id": billing_b[0]},
            {"group": "orders-app", "topic": "orders", "partition": 0, "committed_offset": 50,
             "log_end_offset": 50, "lag": 0, "status": "ok", "owner_member_id": member_uuid("orders-app m1")},
            {"group": "orders-app", "topic": "orders", "partition": 1, "committed_offset": 30,
             "log_end_offset": 50, "lag": 20, "status": "ok", "owner_member_id": member_uuid("orders-app m1")},
            {"group": "orders-app", "topic": "orders", "partition": 2, "committed_offset": 40,
             "log_end_offset": 50, "lag": 10, "status": "ok", "owner_member_id": member_uuid("orders-app m2")},
            {"group": "wordcount", "topic": "words", "partition": 0, "committed_offset": 40, "log_end_offset": 40,
             "lag": 0, "status": "ok", "owner_member_id": member_uuid("wordcount s1")},
            {"group": "wordcount", "topic": "words", "partition": 1, "committed_offset": 38, "log_end_offset": 40,
             "lag": 2, "status": "ok", "owner_member_id": member_uuid("wordcount s1")},
            {"group": "wordcount", "topic": "wordcount-counts-repartition", "partition": 0, "committed_offset": 20,
             "log_end_offset": 20, "lag": 0, "status": "ok", "owner_member_id": member_uuid("wordcount s2")}],
        "share_partition_state": state,
        "findings": findings,
        # each group's defect was planted on its own: every warning and error finding is an incident of its own
        # (the archived share records, a note, are in none)
        "incidents": g.planted_incidents([(g.finding_key(f["kind"], BROKER, f["topic"], f["partition"], f["offset"]),
                                           None) for f in findings]),
        "legal": [
            {"kind": "classic_rebalances", "group": "billing", "what": "A alone, A and B, B alone after A left"},
            {"kind": "pending_revocation_handover", "group": "orders-app",
             "what": "orders-2 pending revocation by m1 while m2 waits, then m2's; orders-1 pending at the end"},
            {"kind": "share_members_share_partitions", "group": "alerts-share"},
            {"kind": "streams_tasks", "group": "wordcount"}],
    }
    (out / "EXPECTED_GROUPS.json").write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")
    return expected


if __name__ == "__main__":
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent
    folder.mkdir(parents=True, exist_ok=True)
    main(folder)
    total = sum(f.stat().st_size for f in (folder / BROKER).rglob("*") if f.is_file())
    print(f"wrote {folder / BROKER} ({total / 1e3:.1f} KB)", file=sys.stderr)
