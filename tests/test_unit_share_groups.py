"""The share group models (spark/sql/share_events.sql, share_partition_state.sql and the share_groups checks) on
built records: a share partition's ShareSnapshot followed by ShareUpdates (start offset and leader epoch replaced
unless -1, batches combined as PersisterStateBatchCombiner combines them: cut at the start offset, the higher delivery
count then state winning an overlap, adjacent equal batches one), a tombstone removing the state, an update before any
snapshot, and the four share findings with their legal shapes.

One `__share_group_state` log holds every case (one replay for the module), each share partition a case of its own."""

from __future__ import annotations

import json

import pytest
from group_records import longest, share_records, share_state, topic_ids, uuid
from unit_frames import scan_of

ORDERS, PAYMENTS = uuid("orders"), uuid("payments")
AVAILABLE, ACKNOWLEDGED, ARCHIVED = 0, 2, 4


def snap(partition, start, *, topic=ORDERS, group="g", leader=0, batches=(), **kw):
    return share_state(group, topic, partition, snapshot=True, start=start, leader_epoch=leader, batches=batches, **kw)


def update(partition, start, *, topic=ORDERS, group="g", leader=0, batches=(), **kw):
    return share_state(group, topic, partition, snapshot=False, start=start, leader_epoch=leader, batches=batches,
                       **kw)


LOG = [
    # orders-0: a snapshot, then updates merged into it
    snap(0, 0, leader=1, batches=[(0, 9, AVAILABLE, 1)]),                                       # 0
    update(0, -1, leader=1, batches=[(5, 14, ACKNOWLEDGED, 1)]),                     # 1 same count: the state wins
    update(0, 3, leader=-1, batches=[(0, 6, AVAILABLE, 2)]),                         # 2 cut at 3; count 2 wins
    update(0, -1, leader=2, batches=[(15, 15, ARCHIVED, 5), (16, 17, ARCHIVED, 5)]),            # 3 adjacent: one run
    update(0, -1, leader=1),                                                                    # 4 stale leader epoch
    # payments-0: removed by a tombstone
    snap(0, 10, topic=PAYMENTS),                                                                # 5
    snap(0, 0, topic=PAYMENTS, tombstone=True),                                                 # 6
    # orders-1: an update before any snapshot; the log starts at 30 (records 20-29 deleted undelivered)
    update(1, 20, batches=[(20, 24, ACKNOWLEDGED, 1)]),                                         # 7
    # orders-2: the state starts beyond the log end 120
    snap(2, 500),                                                                               # 8
    # orders-3: legal: the start offset at the log start and end; leader epoch -1, then the same epoch again
    snap(3, 40, leader=3, snapshot_epoch=2, state_epoch=4),                                     # 9
    update(3, -1, leader=-1, snapshot_epoch=2),                                                 # 10
    update(3, -1, leader=3, snapshot_epoch=2),                                                  # 11
    # orders-4 of group h: a tombstone forgets the epochs recorded before it
    snap(4, 0, group="h", leader=5),                                                            # 12
    snap(4, 0, group="h", tombstone=True),                                                      # 13
    snap(4, 0, group="h", leader=1),                                                            # 14
    update(4, 0, group="h", leader=1),                                                          # 15
]


@pytest.fixture(scope="module")
def replay(spark, small_input):
    records = share_records(spark, LOG)
    logs = longest(spark, [("orders", 0, 0, 100), ("orders", 1, 30, 100), ("orders", 2, 0, 120), ("orders", 3, 40, 40),
                           ("orders", 4, 0, 50), ("payments", 0, 0, 10)])
    # no metadata log, no group records: topic names from partition.metadata only
    scan = scan_of(share_state_records=records, longest_replicas=logs, partition_topic_ids=topic_ids(
        spark, {ORDERS: "orders"}))
    state = scan.table("share_partition_state").cache()
    found = scan.family("share_groups")
    return {"state": state.collect(), "findings": found.collect()}


def test_snapshot_then_updates(replay):
    rows = sorted((r.partition, r.first_offset or -1, r.last_offset, r.delivery_state, r.delivery_count)
                  for r in replay["state"] if r.topic == "orders" and r.partition == 0)
    assert rows == [(0, 3, 6, "AVAILABLE", 2), (0, 7, 14, "ACKNOWLEDGED", 1), (0, 15, 17, "ARCHIVED", 5)]
    head = next(r for r in replay["state"] if r.partition == 0 and r.topic == "orders")
    assert (head.group, head.topic_id, head.start_offset, head.leader_epoch, head.state_epoch, head.snapshot_epoch,
            head.coordinator_offset, head.coordinator_partition, head.position) == (
        "g", ORDERS, 3, 1, 0, 0, 4, "__share_group_state-0", 400)


def test_a_tombstone_removes_the_state_and_an_update_alone_is_one(replay):
    assert not [r for r in replay["state"] if r.topic_id == PAYMENTS]
    (one,) = [r for r in replay["state"] if r.partition == 1]
    assert (one.start_offset, one.first_offset, one.last_offset, one.delivery_state) == (20, 20, 24, "ACKNOWLEDGED")
    heads = {r.partition: (r.start_offset, r.first_offset, r.leader_epoch, r.state_epoch, r.snapshot_epoch)
             for r in replay["state"] if r.partition in (2, 3, 4)}
    assert heads == {2: (500, None, 0, 0, 0), 3: (40, None, 3, 4, 2), 4: (0, None, 1, 0, 0)}


def test_share_findings_and_their_legal_shapes(replay):
    found = {f.kind: f for f in replay["findings"]}
    assert sorted((f.kind, f.severity, f.topic, f.partition, f.offset) for f in replay["findings"]) == [
        ("share_records_archived", "info", "orders", 0, 15),
        ("share_records_deleted_undelivered", "warning", "orders", 1, 20),
        ("share_state_beyond_log_end", "error", "orders", 2, 500),
        ("share_state_stale_leader", "warning", "orders", 0, None)]
    deleted = json.loads(found["share_records_deleted_undelivered"].details)
    assert deleted == {"group": "g", "topic_id": ORDERS, "share_partition_key": f"g:{ORDERS}:1", "start_offset": 20,
                       "coordinator_partition": "__share_group_state-0", "coordinator_offset": 7,
                       "log_start_offset": 30, "deleted_offsets": [20, 29], "reference_broker": "b1"}
    assert json.loads(found["share_state_beyond_log_end"].details)["log_end_offset"] == 120
    stale = found["share_state_stale_leader"]
    assert (stale.broker, stale.position) == ("b1", 400)
    assert {k: v for k, v in json.loads(stale.details).items() if "leader" in k or k.startswith("recorded")} == {
        "leader_epoch": 1, "recorded_leader_epoch": 2, "recorded_at_offset": 3}
    archived = json.loads(found["share_records_archived"].details)
    assert (archived["first_offset"], archived["last_offset"], archived["record_count"],
            archived["delivery_count"]) == (15, 17, 3, 5)
