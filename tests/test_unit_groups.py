"""The group models (spark/sql/group_events.sql, member_versions.sql, group_members.sql, assignment_versions.sql,
group_assignments.sql, consumer_lag.sql, commit_owners.sql) on built records: the classic, consumer (KIP-848), streams (KIP-1071) and share groups of one
`__consumer_offsets` log replayed into group_members and group_assignments (rebalances, member epochs, partitions
pending revocation, tombstones of members, of unknown members and of the group), partition_owned_twice and its
legal shapes, consumer_lag and the member named in a committed_offset finding.

One log holds every group (one replay for the module): each group is a case of its own."""

from __future__ import annotations

import json

import pytest
from group_records import (
    classic,
    current,
    group_records,
    longest,
    member,
    metadata,
    topic_ids,
    topology,
    uuid,
)
from unit_frames import run_check, run_model, scan_of

from kforensics.parsers.findings import FINDING_COLUMNS
from kforensics.spark import output_schemas
from kforensics.spark import schemas as S

ORDERS, PAYMENTS = uuid("orders"), uuid("payments")
CO = "__consumer_offsets-0"

LOG = [
    # classic group `cl`: two rebalances, a member leaves, the same generation written twice, then a tombstone
    classic("cl", 1, {"A": {"t": [0, 1]}}),                       # 0
    classic("cl", 2, {"A": {"t": [0]}, "B": {"t": [1]}}),         # 1
    classic("cl", 3, {"B": {"t": [0, 1]}}),                       # 2
    classic("cl", 3, {"B": {"t": [0, 1]}}),                       # 3
    classic("cl", 0, None),                                       # 4
    # consumer group `kc`: A gives up orders-1 (pending revocation) before B gets it, then A leaves
    metadata("consumer", "kc", 1),                                # 5
    member("consumer", "kc", "A", topics=["orders"]),             # 6
    current("consumer", "kc", "A", 1, {ORDERS: [0, 1]}),          # 7
    member("consumer", "kc", "B", topics=["orders"]),             # 8
    current("consumer", "kc", "A", 2, {ORDERS: [0]}, {ORDERS: [1]}, state=1),  # 9
    current("consumer", "kc", "B", 2, {}, state=2),               # 10
    current("consumer", "kc", "A", 2, {ORDERS: [0]}),             # 11
    current("consumer", "kc", "B", 2, {ORDERS: [1]}),             # 12
    current("consumer", "kc", "A", 0, tombstone=True),            # 13
    member("consumer", "kc", "A", tombstone=True),                # 14
    current("consumer", "kc", "X", 0, tombstone=True),            # 15 a member the group never had: ignored
    # consumer group `k2`: two members hold payments-0 at once (partition_owned_twice)
    current("consumer", "k2", "A", 1, {PAYMENTS: [0]}),           # 16
    current("consumer", "k2", "B", 1, {PAYMENTS: [0]}),           # 17
    # consumer group `k3`: B holds payments-1 while A still has it pending revocation (legal, as the issue says)
    current("consumer", "k3", "A", 2, {}, {PAYMENTS: [1]}, state=1),  # 18
    current("consumer", "k3", "B", 2, {PAYMENTS: [1]}),           # 19
    # classic group `c2`: the leader's assignor gave t-5 to both members of generation 7
    classic("c2", 7, {"A": {"t": [5]}, "B": {"t": [5, 6]}}),      # 20
    # share group `sh`: members share a partition by design
    member("share", "sh", "A", topics=["orders"]),                # 21
    current("share", "sh", "A", 1, {ORDERS: [0]}),                # 22
    current("share", "sh", "B", 1, {ORDERS: [0]}),                # 23
    # streams group `st`: tasks of subtopology 0 read `words`, of 1 `counts-repartition`
    topology("st", {"0": ["words"], "1": ["counts-repartition"]}),  # 24
    current("streams", "st", "A", 3, {"0": [0, 1]}, state=1),     # 25
    current("streams", "st", "B", 3, {"1": [0]}, state=1),        # 26
    current("streams", "st", "A", 4, {"0": [0]}, {"0": [1]}, state=2),  # 27
    # consumer group `gone`: its metadata tombstone ends what is left
    current("consumer", "gone", "A", 1, {ORDERS: [2]}),           # 28
    metadata("consumer", "gone", None),                           # 29
]


@pytest.fixture(scope="module")
def replay(spark, small_input):
    names = topic_ids(spark, {ORDERS: "orders"})
    meta = S.frame(spark, S.INPUT_TABLES["metadata_records"], [
        {"cluster_id": "c", "record_type": "TOPIC_RECORD", "topic": "payments", "topic_id": PAYMENTS}])
    scan = scan_of(group_records=group_records(spark, LOG), longest_replicas=longest(spark, []),
                   partition_topic_ids=names, metadata_records=meta)
    members = scan.table("group_members").cache()
    assignments = scan.table("group_assignments").cache()
    return {"members": members.collect(), "assignments": assignments.collect(), "members_df": members,
            "assignments_df": assignments,
            "owned_twice": run_check("partition_owned_twice", group_assignments=assignments).collect()}


def _sorted(rows):
    return sorted(rows, key=lambda row: tuple((v is not None, v) for v in row))


def _members(replay, group):
    return _sorted((r.member_id, r.generation, r.member_epoch, r.member_state, r.from_offset, r.to_offset)
                   for r in replay["members"] if r.group == group)


def _owned(replay, group):
    return _sorted((r.member_id, r.topic, r.partition, r.generation if r.generation is not None else r.member_epoch,
                    r.pending_revocation, r.assigned_from_offset, r.assigned_to_offset)
                   for r in replay["assignments"] if r.group == group)


def test_classic_group_through_two_rebalances(replay):
    assert _members(replay, "cl") == [("A", 1, None, None, 0, 1), ("A", 2, None, None, 1, 2),
                                      ("B", 2, None, None, 1, 2), ("B", 3, None, None, 2, 4)]
    assert _owned(replay, "cl") == [
        ("A", "t", 0, 1, False, 0, 1), ("A", "t", 0, 2, False, 1, 2), ("A", "t", 1, 1, False, 0, 1),
        ("B", "t", 0, 3, False, 2, 4), ("B", "t", 1, 2, False, 1, 2), ("B", "t", 1, 3, False, 2, 4)]
    a = next(r for r in replay["members"] if (r.group, r.member_id, r.generation) == ("cl", "A", 1))
    assert (a.group_type, a.client_id, a.client_host, a.subscribed_topics, a.coordinator_partition) == (
        "classic", "client-A", "/10.0.0.0", ["t"], CO)


def test_consumer_group_epochs_revocation_and_leaving(replay):
    assert _members(replay, "kc") == _sorted([
        ("A", None, 1, "STABLE", 7, 9), ("A", None, 2, "STABLE", 11, 13), ("A", None, 2, "UNREVOKED_PARTITIONS", 9, 11),
        ("A", None, None, None, 6, 7), ("B", None, 2, "STABLE", 12, None),
        ("B", None, 2, "UNRELEASED_PARTITIONS", 10, 12), ("B", None, None, None, 8, 10)])
    # orders-0 stays A's from epoch 2 through its next record (merged), until A leaves at 13
    assert _owned(replay, "kc") == [
        ("A", "orders", 0, 1, False, 7, 9), ("A", "orders", 0, 2, False, 9, 13), ("A", "orders", 1, 1, False, 7, 9),
        ("A", "orders", 1, 2, True, 9, 11), ("B", "orders", 1, 2, False, 12, None)]
    a = next(r for r in replay["assignments"] if r.group == "kc" and r.member_id == "A")
    assert (a.group_type, a.topic_id, a.coordinator_broker, a.cluster_id) == ("consumer", ORDERS, "b1", "c")
    b = [r for r in replay["members"] if r.group == "kc" and r.member_id == "B"]
    assert {r.client_id for r in b} == {"client-B"} and {tuple(r.subscribed_topics) for r in b} == {("orders",)}


def test_a_tombstone_of_an_unknown_member_is_ignored_and_the_group_tombstone_ends_its_members(replay):
    assert not [r for r in replay["members"] + replay["assignments"] if r.member_id == "X"]
    assert _members(replay, "gone") == [("A", None, 1, "STABLE", 28, 29)]
    assert _owned(replay, "gone") == [("A", "orders", 2, 1, False, 28, 29)]  # unresolved names stay ids: here named


def test_streams_tasks_are_their_subtopologys_source_topics(replay):
    assert _owned(replay, "st") == [
        ("A", "words", 0, 3, False, 25, 27), ("A", "words", 0, 4, False, 27, None), ("A", "words", 1, 3, False, 25, 27),
        ("A", "words", 1, 4, True, 27, None), ("B", "counts-repartition", 0, 3, False, 26, None)]
    assert {r.subtopology_id for r in replay["assignments"] if r.group == "st"} == {"0", "1"}
    # streams groups number their member states from 1 (streams/MemberState.java)
    assert {r.member_state for r in replay["members"] if r.group == "st"} == {"STABLE", "UNREVOKED_TASKS"}


def test_share_group_members_share_partitions(replay):
    assert _owned(replay, "sh") == [("A", "orders", 0, 1, False, 22, None), ("B", "orders", 0, 1, False, 23, None)]


def test_partition_owned_twice_and_its_legal_shapes(replay):
    found = sorted(replay["owned_twice"], key=lambda f: f.position)
    assert [(f.kind, f.severity, f.broker, f.topic, f.partition, f.offset, f.position) for f in found] == [
        ("partition_owned_twice", "warning", "b1", "payments", 0, None, 1700),
        ("partition_owned_twice", "warning", "b1", "t", 5, None, 2000)]
    k2, c2 = (json.loads(f.details) for f in found)
    assert k2 == {"group": "k2", "group_type": "consumer", "topic_id": PAYMENTS, "members": ["A", "B"],
                  "member_epochs": [1, 1], "coordinator_partition": CO, "coordinator_offset": 17,
                  "overlap_from_timestamp": 1_000_017}
    assert c2["members"] == ["A", "B"] and c2["generation"] == 7 and c2["group_type"] == "classic"
    # silent: kc's handover through revocation, k3's pending revocation beside the new owner, the share group


def test_consumer_lag_names_the_last_owner(spark, replay):
    offsets = S.frame(spark, output_schemas.OUTPUT_TABLES["consumer_offsets"], [
        {"group_id": "kc", "cluster_id": "c", "topic": "orders", "partition": p, "committed_offset": 40,
         "commit_timestamp": 5, "coordinator_broker": "b1", "coordinator_partition": CO, "data_broker": "b1",
         "log_end_offset": 50, "status": "ok"} for p in (0, 1)] + [
        {"group_id": "solo", "cluster_id": "c", "topic": "orders", "partition": 0, "committed_offset": 7,
         "coordinator_broker": "b1", "coordinator_partition": CO, "status": "not_in_input"}])
    lso = spark.createDataFrame([("b1", "orders", 0, 45), ("b1", "orders", 1, 50)],
                                "broker string, topic string, partition int, last_stable_offset bigint")
    rows = run_model("consumer_lag", consumer_offsets=offsets, lso=lso, group_assignments=replay["assignments_df"],
                     group_members=replay["members_df"]).collect()
    got = sorted((r.group, r.partition, r.lag, r.last_stable_offset, r.owner_member_id, r.owner_client_id,
                  r.owned_until_offset) for r in rows)
    assert got == [("kc", 0, 10, 45, "A", "client-A", 13), ("kc", 1, 10, 50, "B", "client-B", None),
                   ("solo", 0, None, None, None, None, None)]


def test_committed_offset_findings_name_the_member_at_the_commit(spark, replay):
    """The committed_offset_* checks join commit_owners: the member that owned the partition at the commit record's
    offset in the same __consumer_offsets log (one scan per commit: consumer_offsets holds one per group and
    partition)."""
    def finding(offset: int, partition: int):
        offsets = S.frame(spark, output_schemas.OUTPUT_TABLES["consumer_offsets"], [
            {"group_id": "kc", "cluster_id": "c", "topic": "orders", "partition": partition, "committed_offset": 99,
             "coordinator_broker": "b1", "coordinator_partition": CO, "coordinator_offset": offset,
             "file": f"{CO}/00000000000000000000.log", "position": offset * 100, "in_input": True,
             "data_broker": "b1", "log_start_offset": 0, "log_end_offset": 50, "lag": -49,
             "status": "beyond_log_end", "transactional": False}])
        found = run_check("committed_offset_beyond_log_end", consumer_offsets=offsets,
                          group_assignments=replay["assignments_df"], group_members=replay["members_df"])
        assert found.columns == list(FINDING_COLUMNS)
        (row,) = found.collect()
        return row

    rows = [finding(3, 0), finding(10, 1), finding(12, 1)]
    assert [json.loads(r.details).get("member_id") for r in rows] == [None, "A", "B"]
    details = json.loads(rows[1].details)
    assert {k: details[k] for k in ("group", "coordinator_partition", "coordinator_offset", "member_id",
                                    "member_client_id")} == {
        "group": "kc", "coordinator_partition": CO, "coordinator_offset": 10, "member_id": "A",
        "member_client_id": "client-A"}
    owned = " At the commit, member A (client client-A) owned the partition."
    assert rows[1].message.startswith("Group kc committed offset 99 on orders-1")
    assert rows[1].message.endswith(owned)  # orders-1 pending revocation at 10: still A's
    assert rows[0].message.startswith("Group kc committed offset 99 on orders-0")
    assert "At the commit" not in rows[0].message and "member_client_id" not in json.loads(rows[0].details)
