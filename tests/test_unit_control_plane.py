"""The KRaft metadata replay (the models reference_copies, base_snapshots, applied_records, elr_clears,
partition_history, broker_history, live_brokers, topics, features, partition_state of spark/sql/) on inline DataFrames
of decoded metadata records: every election kind, every sentinel, metadata transactions, snapshots as base state, the
reference copy."""

from __future__ import annotations

import json

import pytest
from unit_frames import frame, run_check, run_model, scan_of

from kforensics.spark.schemas import METADATA_RECORD_FIELDS

# a few inline rows each: the session as a small scan sets it (conftest.small_input)
pytestmark = pytest.mark.usefixtures("small_input")

T1 = "AAAAAAAAAAAAAAAAAAAAAQ"
T2 = "AAAAAAAAAAAAAAAAAAAAAg"


class Log:
    """Metadata records of one copy, offsets assigned in order."""

    def __init__(self, broker: str = "m1", cluster: str = "c1", start: int = 0) -> None:
        self.rows: list[dict] = []
        self.broker, self.cluster, self.next = broker, cluster, start
        self.first = start

    def add(self, record_type: str, **fields) -> int:
        offset = self.next
        self.next += 1
        self.rows.append(dict(cluster_id=self.cluster, metadata_broker=self.broker, metadata_offset=offset,
                              record_index=offset, file_first_offset=self.first, timestamp=1000 + offset,
                              record_type=record_type, version=0, file=f"{self.broker}/__cluster_metadata-0/x.log",
                              position=offset * 10, **fields))
        return offset

    def topic(self, name: str = "orders", tid: str = T1) -> int:
        return self.add("TOPIC_RECORD", topic=name, topic_id=tid)

    def partition(self, p: int = 0, tid: str = T1, *, leader: int = 1, isr=(1, 2, 3), replicas=(1, 2, 3),
                  leader_epoch: int = 0, partition_epoch: int = 0, **kw) -> int:
        return self.add("PARTITION_RECORD", topic_id=tid, partition=p, leader=leader, isr=list(isr),
                        replicas=list(replicas), adding_replicas=[], removing_replicas=[], leader_epoch=leader_epoch,
                        partition_epoch=partition_epoch, leader_recovery_state=kw.pop("lrs", 0), **kw)

    def change(self, p: int = 0, tid: str = T1, *, leader: int = -2, **kw) -> int:
        kw.setdefault("leader_recovery_state", -1)
        return self.add("PARTITION_CHANGE_RECORD", topic_id=tid, partition=p, leader=leader, **kw)

    def broker_event(self, record_type: str, broker_id: int, **kw) -> int:
        return self.add(record_type, broker_id=broker_id, broker_epoch=kw.pop("broker_epoch", 10), **kw)


def records(spark, *logs: Log):
    return frame(spark, METADATA_RECORD_FIELDS, [r for log in logs for r in log.rows])


def replay(spark, *logs: Log):
    """A scan over the metadata records of `logs` (its KRaft models built from them)."""
    return scan_of(metadata_records=records(spark, *logs))


def history(spark, *logs: Log) -> list[dict]:
    rows = run_model("partition_history", metadata_records=records(spark, *logs)).orderBy("metadata_offset").collect()
    return [r.asDict() for r in rows]


def test_merge_rules_every_sentinel(spark):
    log = Log()
    log.topic()
    log.partition()
    log.change(isr=[1, 2])                                    # ISR shrink: no Leader, epoch kept
    log.change(leader=2)                                      # clean: 2 in ISR [1,2]
    log.change(leader=2)                                      # same leader again: still +1 (merge)
    log.change(leader=-1, isr=[2])                            # offline
    log.change(leader=3, isr=[3], leader_recovery_state=1)    # unclean: 3 not in [2]
    log.change(isr=[3, 1])                                    # recovery state absent (-1): stays RECOVERING
    log.change(leader_recovery_state=0)                       # RECOVERED
    h = history(spark, log)
    assert [r["election"] for r in h] == ["initial", "none", "clean", "clean", "offline", "unclean", "none", "none"]
    assert [r["leader"] for r in h] == [1, 1, 2, 2, -1, 3, 3, 3]
    assert [r["leader_epoch"] for r in h] == [0, 0, 1, 2, 3, 4, 4, 4]
    assert [r["partition_epoch"] for r in h] == [0, 1, 2, 3, 4, 5, 6, 7]
    assert [r["isr"] for r in h] == [[1, 2, 3], [1, 2], [1, 2], [1, 2], [2], [3], [3, 1], [3, 1]]
    assert [r["leader_recovery_state"] for r in h] == ["RECOVERED"] * 5 + ["RECOVERING"] * 2 + ["RECOVERED"]
    assert [r["replicas"] for r in h] == [[1, 2, 3]] * 8
    assert h[5]["previous_leader"] == -1 and h[5]["previous_isr"] == [2] and h[5]["previous_elr"] == []
    assert h[0]["previous_leader"] is None and h[0]["topic"] == "orders"


def test_elr_election_and_reassignment(spark):
    log = Log()
    log.topic()
    log.partition(isr=(1, 2, 3))
    log.change(leader=-1, isr=[], elr=[2, 3], last_known_elr=[])   # KIP-966: ISR empties into the ELR
    log.change(leader=3, isr=[3], elr=[2])                            # elected from the ELR
    log.change(replicas=[3, 2, 4], adding_replicas=[4], removing_replicas=[1])
    log.change(replicas=[3, 2, 4], adding_replicas=[], removing_replicas=[], isr=[3, 4])
    h = history(spark, log)
    assert [r["election"] for r in h] == ["initial", "offline", "elr", "none", "none"]
    assert h[1]["elr"] == [2, 3] and h[1]["last_known_elr"] == []
    assert h[2]["elr"] == [2] and h[2]["previous_elr"] == [2, 3]
    assert h[3]["adding_replicas"] == [4] and h[3]["removing_replicas"] == [1] and h[3]["replicas"] == [3, 2, 4]
    assert h[4]["adding_replicas"] == [] and h[4]["isr"] == [3, 4]


def test_unclean_while_recovering_shows_only_in_replay(spark):
    log = Log()
    log.topic()
    log.partition(isr=(1,), leader=1)
    log.change(leader=2, isr=[2], leader_recovery_state=1)   # unclean, tag says RECOVERING
    log.change(leader=3, isr=[3])                              # unclean again, tag absent: still RECOVERING
    h = history(spark, log)
    assert [r["election"] for r in h] == ["initial", "unclean", "unclean"]
    assert [r["leader_recovery_state"] for r in h] == ["RECOVERED", "RECOVERING", "RECOVERING"]


def test_metadata_transactions(spark):
    log = Log()
    log.topic()
    log.partition()
    log.add("BEGIN_TRANSACTION_RECORD")
    log.change(leader=2)                  # committed
    log.add("END_TRANSACTION_RECORD")
    log.add("BEGIN_TRANSACTION_RECORD")
    log.change(leader=3)                  # aborted: dropped
    log.add("ABORT_TRANSACTION_RECORD")
    log.change(isr=[2, 3])                # outside any transaction
    log.add("BEGIN_TRANSACTION_RECORD")
    log.change(leader=1)                  # never closed: not applied
    h = history(spark, log)
    assert [(r["metadata_offset"], r["leader"], r["leader_epoch"]) for r in h] == [
        (1, 1, 0), (3, 2, 1), (8, 2, 1)]
    assert h[2]["partition_epoch"] == 2


def test_snapshot_is_the_base_state(spark):
    # the copy's log starts at 100; snapshots end at 50 (before the log: gap), 105 and 110 (both continued)
    log = Log(start=100)
    for _ in range(20):
        log.change(leader=-2, isr=[1, 2, 3])
    snaps = []
    for end in (50, 105, 110):
        s = Log(start=0)
        s.topic()
        s.partition(leader=2, leader_epoch=7 + end, partition_epoch=20 + end)
        for r in s.rows:
            r.update(snapshot_offset=end, metadata_offset=end - 1, file=f"m1/{end}.checkpoint")
        snaps.append(s)
    h = history(spark, log, *snaps)
    # the oldest snapshot the log continues from (105): records 105.. apply on top of it
    assert h[0]["file"] == "m1/105.checkpoint" and h[0]["election"] == "snapshot" and h[0]["leader_epoch"] == 112
    assert [r["metadata_offset"] for r in h] == [104, *range(105, 120)]
    assert h[-1]["partition_epoch"] == 125 + 15 and h[-1]["leader_epoch"] == 112


def test_log_from_zero_needs_no_snapshot_and_unknown_partition(spark):
    log = Log()
    log.topic()
    log.change(leader=2)  # a partition never registered: kept, epochs and election unknown
    snap = Log()
    snap.topic()
    for r in snap.rows:
        r.update(snapshot_offset=1, metadata_offset=0, file="snap")
    h = history(spark, log, snap)
    assert len(h) == 1 and h[0]["leader"] == 2 and h[0]["leader_epoch"] is None and h[0]["election"] is None


def test_reference_copy_is_the_longest(spark):
    long, short = Log("m1"), Log("m2")
    for log in (long, short):
        log.topic()
        log.partition()
    long.change(leader=2)
    h = history(spark, long, short)
    assert {r["metadata_broker"] for r in h} == {"m1"} and len(h) == 2


def test_broker_history_and_live_brokers(spark):
    log = Log()
    log.broker_event("REGISTER_BROKER_RECORD", 1, fenced=1, in_controlled_shutdown=0, rack="r1", incarnation_id="i1")
    log.broker_event("UNFENCE_BROKER_RECORD", 1)
    log.broker_event("REGISTER_BROKER_RECORD", 2, fenced=1)
    log.broker_event("BROKER_REGISTRATION_CHANGE_RECORD", 2, fenced=-1)
    log.broker_event("BROKER_REGISTRATION_CHANGE_RECORD", 2, in_controlled_shutdown=1)
    log.broker_event("BROKER_REGISTRATION_CHANGE_RECORD", 2, fenced=1)
    log.broker_event("REGISTER_BROKER_RECORD", 3, fenced=0)
    log.broker_event("FENCE_BROKER_RECORD", 3)
    log.broker_event("UNREGISTER_BROKER_RECORD", 3)
    scan = replay(spark, log)
    b = [r.asDict() for r in scan.table("broker_history").orderBy("metadata_offset").collect()]
    assert [(r["broker_id"], r["event"], r["fenced"], r["in_controlled_shutdown"]) for r in b] == [
        (1, "registered", True, False), (1, "unfenced", False, False), (2, "registered", True, False),
        (2, "unfenced", False, False), (2, "controlled_shutdown", False, True), (2, "fenced", True, True),
        (3, "registered", False, False), (3, "fenced", True, False), (3, "unregistered", None, None)]
    assert b[0]["rack"] == "r1"
    live = scan.table("live_brokers").collect()
    assert [(r["cluster_id"], r["live_brokers"]) for r in live] == [("c1", [1])]


def _findings(df) -> list[dict]:
    return [{**r.asDict(), **json.loads(r["details"])} for r in df.collect()]


def test_offline_only_while_the_cluster_runs(spark):
    def run(stopped: bool) -> list[dict]:
        log = Log()
        log.broker_event("REGISTER_BROKER_RECORD", 1, fenced=0)
        log.topic()
        log.partition(leader=1, isr=(1,), replicas=(1,))
        log.change(leader=-1)
        if stopped:
            log.broker_event("BROKER_REGISTRATION_CHANGE_RECORD", 1, in_controlled_shutdown=1)
        # partition_state and live_brokers built from the records
        return _findings(run_check("offline_partition", metadata_records=records(spark, log)))

    running = run(False)
    assert len(running) == 1
    f = running[0]
    assert (f["kind"], f["severity"], f["broker"], f["topic"], f["partition"]) == (
        "offline_partition", "error", "m1", "orders", 0)
    assert (f["since_offset"], f["last_leader"], f["isr"], f["replicas"], f["live_brokers"]) == (3, 1, [1], [1], [1])
    assert run(True) == []


def test_topics_and_features(spark):
    log = Log()
    log.add("FEATURE_LEVEL_RECORD", feature="metadata.version", feature_level=21)
    log.topic("a", T1)
    log.partition(0, T1)
    log.partition(1, T1)
    log.add("REMOVE_TOPIC_RECORD", topic_id=T1)
    log.topic("a", T2)
    log.partition(0, T2)
    scan = replay(spark, log)
    t = sorted((r.asDict() for r in scan.table("topics").collect()), key=lambda r: r["created_offset"])
    assert [(r["topic"], r["topic_id"], r["partitions"], r["created_offset"], r["deleted_offset"]) for r in t] == [
        ("a", T1, 2, 1, 4), ("a", T2, 1, 5, None)]
    f = scan.table("features").collect()
    assert [(r["feature"], r["feature_level"], r["metadata_offset"]) for r in f] == [("metadata.version", 21, 0)]


@pytest.mark.parametrize("lost", [True, False])
def test_unclean_election_finding(spark, lost):
    log = Log()
    log.topic()
    log.partition(leader=1, isr=(1,))
    log.change(leader=2, isr=[2], leader_recovery_state=1)
    log.change(leader_recovery_state=0, isr=[2, 1])  # recovered: no second finding
    starts = spark.createDataFrame([("c1", "orders", 0, 1, 40)],
                                   "cluster_id string, topic string, partition int, leader_epoch int, "
                                   "epoch_start_offset bigint")
    div = spark.createDataFrame([("c1", "orders", 0, 0, 1, [40, 44] if lost else None, "b1")],
                                "cluster_id string, topic string, partition int, a_epoch int, b_epoch int, "
                                "lost_offsets array<bigint>, lost_on string")
    found = _findings(run_check("unclean_leader_election", metadata_records=records(spark, log), epoch_starts=starts,
                                election_losses=div))
    assert len(found) == 1
    f = found[0]
    assert (f["kind"], f["severity"], f["topic"], f["offset"], f["leader"], f["leader_epoch"], f["previous_leader"],
            f["previous_isr"], f["previous_elr"], f["metadata_offset"], f["elected_at"]) == (
        "unclean_leader_election", "error", "orders", 40, 2, 1, 1, [1], [], 2, 1002)
    assert f.get("lost_offsets") == ([40, 44] if lost else None)


def test_stray_dir_names_are_listed() -> None:
    from kforensics.parsers.log_dir import parse_partition_dir_name

    assert parse_partition_dir_name("orders-3.0123456789abcdef0123456789abcdef-stray") == ("orders", 3, "stray")
    assert parse_partition_dir_name("my-topic-0.0123456789abcdef0123456789abcdef-delete") == ("my-topic", 0, "delete")
    assert parse_partition_dir_name("orders-3") == ("orders", 3, "live")


def test_stray_partitions_every_reason(spark):
    log = Log()
    log.topic("orders", T1)
    log.partition(0, T1, replicas=(1, 2))
    log.topic("gone", T2)
    log.partition(0, T2, replicas=(1,))
    log.add("REMOVE_TOPIC_RECORD", topic_id=T2)
    old_orders = "AAAAAAAAAAAAAAAAAAAAAw"
    dirs = spark.createDataFrame([
        ("b1", "orders", 0, "c1", 1, "/d1/orders-0", "live", T1),          # a replica: fine
        ("b3", "orders", 0, "c1", 3, "/d3/orders-0", "live", T1),          # broker 3 is no replica
        ("b2", "orders", 0, "c1", 2, "/d2/orders-0", "live", old_orders),  # an older topic of that name
        ("b1", "gone", 0, "c1", 1, "/d1/gone-0", "live", T2),              # deleted
        ("b2", "orders", 0, "c1", 2, "/d2/orders-0.x-stray", "stray", None),
        ("b9", "orders", 0, "c9", 9, "/d9/orders-0", "live", None),        # another cluster: not judged
    ], "broker string, topic string, partition int, cluster_id string, node_id int, path string, dir_state string, "
       "topic_id string")
    found = sorted((f["broker"], f["file"], f["reason"], f.get("metadata_topic_id")) for f in _findings(
        # partition_state, topics and reference_copies built from the records
        run_check("stray_partition", cluster_dirs=dirs, metadata_records=records(spark, log))))
    assert found == [("b1", "/d1/gone-0", "topic_deleted", None),
                     ("b2", "/d2/orders-0", "topic_recreated", T1),
                     ("b2", "/d2/orders-0.x-stray", "marked_stray", T1),
                     ("b3", "/d3/orders-0", "not_a_replica", T1)]


def test_leader_epoch_unknown_where_the_metadata_covers_it(spark):
    log = Log("m1")
    log.topic()
    log.partition(leader_epoch=3)     # created in the log at epoch 3
    log.change(leader=2)              # epoch 4
    rows = [("m1", "c1", "orders", 0, T1, e, 10 * e, "f", 0, "batch") for e in (2, 3, 4, 5)]
    rows += [("b2", "c1", "orders", 0, T1, 7, 70, "f", 0, "batch"),    # b2's own metadata copy is not in the input
             ("m1", "c1", "orders", 0, "AAAAAAAAAAAAAAAAAAAAAw", 9, 0, "f", 0, "batch")]  # another topic generation
    data = spark.createDataFrame(rows, "broker string, cluster_id string, topic string, partition int, "
                                       "topic_id string, leader_epoch int, offset bigint, file string, "
                                       "position bigint, source string")
    found = sorted((f["broker"], f["leader_epoch"]) for f in _findings(
        run_check("leader_epoch_unknown", metadata_records=records(spark, log), data_leader_epochs=data)))
    assert found == [("m1", 2), ("m1", 5)]


def test_leader_epoch_unknown_is_not_judged_past_what_the_metadata_copy_covers(spark):
    """Issue 47: erickimm-kraft-rolled-segments' copy of its metadata log lacks the segments after its snapshot: the
    leader epochs given there are unknown. The same findings as above become `not_judged` notes (info) naming the
    range the metadata copy lacks; with the copy complete they are judged."""
    log = Log("m1")
    log.topic()
    log.partition(leader_epoch=3)
    log.change(leader=2)
    rows = [("m1", "c1", "orders", 0, T1, e, 10 * e, "f", 0, "batch") for e in (2, 3, 4, 5)]
    data = spark.createDataFrame(rows, "broker string, cluster_id string, topic string, partition int, "
                                       "topic_id string, leader_epoch int, offset bigint, file string, "
                                       "position bigint, source string")
    lacking = spark.createDataFrame(
        [("c1", "m1", 0, (5, 99, True))], "cluster_id string, metadata_broker string, replayed_from bigint, "
        "gap_range struct<first_offset: bigint, last_offset: bigint, proven: boolean>")
    judged = _findings(run_check("leader_epoch_unknown", metadata_records=records(spark, log),
                                 data_leader_epochs=data))
    assert sorted((f["kind"], f["severity"], f["leader_epoch"]) for f in judged) == [
        ("leader_epoch_unknown", "error", 2), ("leader_epoch_unknown", "error", 5)]
    notes = _findings(run_check("leader_epoch_unknown", metadata_records=records(spark, log),
                                data_leader_epochs=data, metadata_coverage=lacking))
    assert sorted((f["kind"], f["severity"], f["rule"], f["incomplete_partition"], f["incomplete_broker"],
                   f["missing_offsets"]) for f in notes) == [
        ("not_judged", "info", "leader_epoch_unknown", "__cluster_metadata-0", "m1", [5, 99])] * 2


def test_elr_election_is_not_unclean(spark):
    log = Log()
    log.topic()
    log.partition(isr=(1, 2))
    log.change(leader=-1, isr=[], elr=[1, 2])
    log.change(leader=2, isr=[2], elr=[1])
    starts = spark.createDataFrame([], "cluster_id string, topic string, partition int, leader_epoch int, "
                                       "epoch_start_offset bigint")
    div = spark.createDataFrame([], "cluster_id string, topic string, partition int, a_epoch int, b_epoch int, "
                                    "lost_offsets array<bigint>, lost_on string")
    assert run_check("unclean_leader_election", metadata_records=records(spark, log), epoch_starts=starts,
                     election_losses=div).count() == 0


def test_clear_elr_record(spark):
    log = Log()
    log.topic("orders", T1)
    log.partition(0, T1, isr=(1, 2))
    log.partition(1, T1, isr=(1, 2))
    log.change(0, T1, leader=-1, isr=[], elr=[1, 2], last_known_elr=[])
    log.add("CLEAR_ELR_RECORD", topic="")   # every topic: only partition 0 has an ELR
    log.change(0, T1, leader=1, isr=[1])       # 1 is no longer in the ELR: unclean
    h = history(spark, log)
    p0 = [r for r in h if r["partition"] == 0]
    assert [(r["record_type"], r["elr"], r["partition_epoch"], r["election"]) for r in p0] == [
        ("PARTITION_RECORD", [], 0, "initial"), ("PARTITION_CHANGE_RECORD", [1, 2], 1, "offline"),
        ("CLEAR_ELR_RECORD", [], 2, "none"), ("PARTITION_CHANGE_RECORD", [], 3, "unclean")]
    assert [r["record_type"] for r in h if r["partition"] == 1] == ["PARTITION_RECORD"]


def _voter(node: int) -> dict:
    return {"voter_id": node, "voter_directory_id": f"dir-{node}",
            "endpoints": [{"name": "CONTROLLER", "host": f"c{node}", "port": 9093, "security_protocol": None}],
            "min_supported_version": 0, "max_supported_version": 1}


def test_controller_history_voters_and_registrations(spark):
    # a snapshot ending at 100 holds voters {1, 2, 3} (the baseline); the log from 100 adds 4, removes 3 (and
    # unregisters it, Kafka 4.4), and bumps kraft.version
    snap = Log(start=0)
    snap.add("KRAFT_VOTERS", voters=[_voter(n) for n in (1, 2, 3)])
    for r in snap.rows:
        r.update(snapshot_offset=100, metadata_offset=99, file="m1/100.checkpoint")
    log = Log(start=100)
    log.add("KRAFT_VERSION", kraft_version=1)
    log.add("REGISTER_CONTROLLER_RECORD", controller_id=4, incarnation_id="inc-4",
            endpoints=[{"name": "CONTROLLER", "host": "c4", "port": 9093, "security_protocol": 0}])
    log.add("KRAFT_VOTERS", voters=[_voter(n) for n in (1, 2, 3, 4)])
    log.change(leader=-2, isr=[1, 2])  # not a controller record: not a row
    log.add("KRAFT_VOTERS", voters=[_voter(n) for n in (4, 1, 2)])
    log.add("UNREGISTER_CONTROLLER_RECORD", controller_id=3)
    rows = [r.asDict(recursive=True) for r in run_model("controller_history", metadata_records=records(spark, snap, log))
            .orderBy("metadata_offset").collect()]
    assert [(r["metadata_offset"], r["event"], r["from_snapshot"]) for r in rows] == [
        (99, "voters", True), (100, "kraft_version", False), (101, "controller_registered", False),
        (102, "voters", False), (104, "voters", False), (105, "controller_unregistered", False)]
    baseline, added, removed = rows[0], rows[3], rows[4]
    assert baseline["voter_ids"] == [1, 2, 3] and baseline["added_voters"] is None and baseline["removed_voters"] is None
    assert baseline["voters"][0]["voter_directory_id"] == "dir-1" and baseline["voters"][0]["endpoints"][0]["host"] == "c1"
    assert (added["voter_ids"], added["added_voters"], added["removed_voters"]) == ([1, 2, 3, 4], [4], [])
    assert (removed["voter_ids"], removed["added_voters"], removed["removed_voters"]) == ([1, 2, 4], [], [3])
    assert rows[1]["kraft_version"] == 1
    assert (rows[2]["controller_id"], rows[2]["incarnation_id"], rows[2]["endpoints"][0]["host"]) == (4, "inc-4", "c4")
    assert rows[5]["controller_id"] == 3
