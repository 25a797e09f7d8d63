"""Exactly-once on Transactions V2 (issue 39) on small inline tables, one test per rule: markers matched as the
coordinator writes them (TV1 by time, TV2 by the Prepare record's epoch, across a rotation at 32766/32767, and a
compacted coordinator log), fencing by log order and by the coordinator's clock with a tolerance both ways, each
transaction's own timeout and two-phase commit, offset commits applied as the group coordinator applies them
(aborted, pending, out of timestamp order, a tombstone, a tiered log start), aborted copies left out of re-sends,
and the producer-id lineage."""

from __future__ import annotations

import json
import re

import pytest
from pyspark.testing import assertDataFrameEqual
from test_unit_consumer_offsets import CO, CO_LOG, COMMITS, _commit
from test_unit_coordinator import TS_LOG, _records, _txn_record
from unit_frames import batches, expected_findings, findings_view, frame, marker, run_check, run_model, txn_data

from kforensics.spark.schemas import CHECKPOINT_FIELDS, PARTITION_KEY

# a few inline rows each: the session as a small scan sets it (conftest.small_input)
pytestmark = pytest.mark.usefixtures("small_input")

LOG = "t-0/00000000000000000000.log"
TSP = "__transaction_state-3"
CTX = ("cluster_id string, transactional_id string, producer_id bigint, producer_epoch int, first_producer_epoch int, "
       "outcome string, partitions array<string>, txn_start_timestamp bigint, completed_at bigint, "
       "coordinator_broker string, coordinator_partition string, coordinator_last_offset bigint, txn_seq bigint, "
       "partitions_not_in_input array<string>, transaction_version int, marker_producer_id bigint, "
       "marker_producer_epoch int")


def test_coordinator_transactions_name_the_producer_and_epoch_of_their_markers(spark):
    """TV1: the records' epoch; TV2: the Prepare record's (data + 1); a rotation: the old id at 32767 while the
    Complete record names the new one (TransactionMetadata.prepareComplete), also when compaction left only it."""
    rows = [
        _txn_record(0, "v1", 30, 3, "Ongoing", "t-0", 100, 100), _txn_record(1, "v1", 30, 3, "PrepareCommit", "t-0",
                                                                             100, 200),
        _txn_record(2, "v1", 30, 3, "CompleteCommit", "", 100, 300),
        _txn_record(3, "rot", 20, 32766, "Ongoing", "t-0", 400, 400, prev=20, tv=2),
        _txn_record(4, "rot", 20, 32767, "PrepareCommit", "t-0", 400, 500, prev=20, next_pid=21, tv=2),
        _txn_record(5, "rot", 21, 0, "CompleteCommit", "", 400, 600, prev=20, tv=2),
        _txn_record(6, "rot", 21, 0, "Ongoing", "t-0", 700, 700, prev=21, tv=2),  # the new id at 0: markers at 1
        _txn_record(7, "old", 41, 0, "CompleteCommit", "", 800, 900, prev=40, tv=2),   # compacted: only this one left
        _txn_record(8, "tv2", 50, 8, "CompleteCommit", "", 800, 900, prev=50, tv=2),
    ]
    log = _records(spark, rows, broker="b1", partition=3, file=TS_LOG).selectExpr("*", "'c' AS cluster_id")
    out = run_model("coordinator_txns", coordinator_log=log).select(
        "transactional_id", "producer_id", "producer_epoch", "outcome", "transaction_version", "marker_producer_id",
        "marker_producer_epoch")
    assertDataFrameEqual(out, spark.createDataFrame([
        ("v1", 30, 3, "COMMIT", 0, 30, 3), ("rot", 21, 0, "COMMIT", 2, 20, 32767), ("rot", 21, 0, "ONGOING", 2, 21, 1),
        ("old", 41, 0, "COMMIT", 2, 40, 32767), ("tv2", 50, 8, "COMMIT", 2, 50, 8),
    ], "transactional_id string, producer_id bigint, producer_epoch int, outcome string, transaction_version int, "
       "marker_producer_id bigint, marker_producer_epoch int"))


def test_markers_matched_by_epoch_under_tv2_across_a_rotation_and_by_time_under_tv1(spark):
    ctx = spark.createDataFrame([
        # TV1: the marker of its epoch between its start and the next transaction's (as before)
        ("c", "v1", 30, 0, 0, "COMMIT", ["t-0"], 1000, 3000, "b9", TSP, 3, 0, [], 0, 30, 0),
        # TV2: a transaction of data epoch 5 (marker 6), and the next (marker 7) whose marker t-1 never got, where
        # a later marker of the producer (8) lies in time within its window
        ("c", "v2", 10, 6, 5, "COMMIT", ["t-0", "t-1"], 4000, 4500, "b9", TSP, 6, 0, [], 2, 10, 6),
        ("c", "v2", 10, 7, 6, "COMMIT", ["t-1"], 5000, 5500, "b9", TSP, 9, 1, [], 2, 10, 7),
        # a rotation: CompleteCommit names 21 at epoch 0, the markers are 20's at 32767
        ("c", "rot", 21, 0, 32766, "COMMIT", ["t-2"], 6000, 6500, "b9", TSP, 12, 0, [], 2, 20, 32767),
    ], CTX).selectExpr("*", "'__transaction_state-7' AS expected_coordinator_partition")
    rows = [txn_data(30, 0, max_timestamp=1100), marker(30, 1, "COMMIT", max_timestamp=2000),
            txn_data(10, 2, epoch=5, max_timestamp=4100), marker(10, 3, "COMMIT", epoch=6, max_timestamp=4400),
            txn_data(10, 0, epoch=5, partition=1, max_timestamp=4100),
            marker(10, 1, "COMMIT", epoch=6, partition=1, max_timestamp=4400),
            txn_data(10, 2, epoch=6, partition=1, max_timestamp=5100),  # no marker at epoch 7
            txn_data(10, 3, epoch=7, partition=1, max_timestamp=5200),
            marker(10, 4, "COMMIT", epoch=8, partition=1, max_timestamp=5300),
            txn_data(20, 0, epoch=32766, partition=2, max_timestamp=6100),
            marker(20, 1, "COMMIT", epoch=32767, partition=2, max_timestamp=6400)]
    ends = spark.createDataFrame([("b1", "t", p, "c", 9000, 0, None) for p in range(3)],
                                 "broker string, topic string, partition int, cluster_id string, "
                                 "log_end_timestamp bigint, log_start_offset bigint, cleaned_up_to bigint")
    checks = run_model("marker_checks", coordinator_txns=ctx, clustered_batches=batches(spark, rows),
                       replica_ends=ends)
    assertDataFrameEqual(checks.select("partition", "transactional_id", "txn_seq", "marker_offset", "marker_epoch",
                                       "data_offset"), spark.createDataFrame([
        (0, "v1", 0, 1, 0, 0), (0, "v2", 0, 3, 6, 2), (1, "v2", 0, 1, 6, 0), (1, "v2", 1, None, None, 2),
        (2, "rot", 0, 1, 32767, 0)],
        "partition int, transactional_id string, txn_seq bigint, marker_offset bigint, marker_epoch int, "
        "data_offset bigint"))
    found = findings_view(run_check("marker", marker_checks=checks), "transactional_id").collect()
    assert [(f["kind"], f["partition"], f["offset"], f["producer_id"], f["producer_epoch"]) for f in found] == [
        ("marker_missing", 1, 2, 10, 7)]


def test_fencing_by_the_coordinators_clock_with_a_tolerance_both_ways_and_by_log_order(spark):
    """A client 40 ms ahead stamps its last batch after its own PrepareCommit (epoch 1 at 5000): within
    --clock-skew; 40 ms behind, before it; a batch 1 s after the fence is a write after it. In a partition, a batch
    of epoch 0 after a marker of epoch 1 is a zombie by log order, whatever the clocks say."""
    log = spark.createDataFrame([("c", 10, 0, 1000), ("c", 10, 1, 5000)],
                                "cluster_id string, producer_id bigint, producer_epoch int, "
                                "last_update_timestamp bigint")
    txn_ids = spark.createDataFrame([("c", 10, "a", "__transaction_state-7")], "cluster_id string, "
                                    "producer_id bigint, transactional_id string, expected_coordinator_partition string")
    rows = [txn_data(10, 0, base_timestamp=5040), txn_data(10, 0, partition=1, base_timestamp=4960),
            txn_data(10, 0, partition=2, base_timestamp=6000)]
    data = batches(spark, [{"cluster_id": "c", **r} for r in rows], clustered=True)
    tables = {"clustered_batches": data, "coordinator_log": log, "transactional_ids": txn_ids}
    fenced = findings_view(run_check("epoch_fenced_write", **tables), "evidence", "clock_skew_ms").collect()
    assert [(f["partition"], f["evidence"], f["clock_skew_ms"]) for f in fenced] == [(2, "coordinator_clock", "200")]
    strict = run_check("epoch_fenced_write", {"clock_skew_ms": 0}, **tables).collect()
    assert sorted(f["partition"] for f in strict) == [0, 2]
    # log order: data 5, marker 6, data 6 (TV2, healthy), then data 5 again (a zombie)
    log_rows = [txn_data(10, 0, epoch=5), marker(10, 1, "COMMIT", epoch=6), txn_data(10, 2, epoch=6),
                marker(10, 3, "COMMIT", epoch=7), txn_data(10, 4, epoch=5)]
    zombies = findings_view(run_check("zombie_epoch", batches=batches(spark, log_rows)), "newer_epoch",
                            "evidence").collect()
    assert [(z["offset"], z["producer_epoch"], z["newer_epoch"], z["evidence"]) for z in zombies] == [
        (4, 5, "7", "log_order")]


TXNS = ("broker string, topic string, partition int, producer_id bigint, producer_epoch int, outcome string, "
        "first_offset bigint, last_data_offset bigint, first_timestamp bigint, file string, position bigint, "
        "transaction_timeout_ms int, transactional_id string")
MIN = 60_000


def test_each_transaction_by_its_own_timeout_and_two_phase_commit(spark):
    txns = spark.createDataFrame([
        ("b1", "t", 0, 1, 0, "OPEN", 10, 12, 0, LOG, 1000, 60 * MIN, "per-id-1h"),     # 30 min old: in its hour
        ("b1", "t", 1, 2, 0, "OPEN", 20, 20, 0, LOG, 2000, None, None),               # 30 min, global 15 min
        ("b1", "t", 2, 3, 0, "OPEN", 30, 31, 0, LOG, 3000, 2**31 - 1, "two-phase"),    # 2 h, prepared (KIP-939)
        ("b1", "t", 3, 4, 0, "OPEN", 40, 41, 0, LOG, 4000, 10_000, "streams"),         # 20 s, Streams' 10 s
    ], TXNS)
    ends = spark.createDataFrame([("b1", "t", 0, 30 * MIN, 100, 100, 100, 0), ("b1", "t", 1, 30 * MIN, 100, 100, 100, 0),
                                  ("b1", "t", 2, 120 * MIN, 100, 100, 100, 0), ("b1", "t", 3, 20_000, 100, 100, 100, 0)],
                                 "broker string, topic string, partition int, log_end_timestamp bigint, "
                                 "log_end_offset bigint, high_watermark bigint, cleaner_offset bigint, "
                                 "log_first_offset bigint")
    timed = {"timed_transactions": txns, "partition_ends": ends}
    hanging = findings_view(run_check("hanging_transaction", {"txn_timeout_ms": 15 * MIN}, **timed),
                            "transaction_timeout_ms")
    assert sorted((r["partition"], r["transaction_timeout_ms"]) for r in hanging.collect()) == [(1, "900000"),
                                                                                                (3, "10000")]
    prepared = findings_view(run_check("prepared_transaction", **timed), "transactional_id", "holds_lso_at")
    assertDataFrameEqual(prepared, expected_findings(spark, [
        ("prepared_transaction", "info", "b1", "t", 2, LOG, 3000, 30, 3, 0, "two-phase", "30")],
        "transactional_id", "holds_lso_at"))
    batch_rows = spark.createDataFrame([("b1", "t", p, 99, 100) for p in range(4)],
                                       "broker string, topic string, partition int, last_offset bigint, size int")
    held = run_check("cleaner_blocked", {"txn_timeout_ms": 15 * MIN}, **timed, log_batches=batch_rows).collect()
    assert sorted((r["partition"], re.search(r"timeout (\d+) ms", r["message"])[1]) for r in held) == [
        (1, str(15 * MIN)), (3, "10000")]


def _txn(pid: int, first: int, last: int, outcome: str, first_ts: int = 0) -> tuple:
    return ("b1", CO, 0, pid, first, last, outcome, first_ts)


TXN_ROWS = ("broker string, topic string, partition int, producer_id bigint, first_offset bigint, "
            "last_data_offset bigint, outcome string, first_timestamp bigint")


def test_offset_commits_applied_as_the_group_coordinator_applies_them(spark):
    commits = frame(spark, COMMITS, [
        _commit(0, "g1", 0, 10), _commit(1, "g1", 0, 20, pid=7), _commit(3, "g1", 0, 30, pid=8),  # 30 aborted
        _commit(2, "g1", 1, 40), _commit(4, "g1", 1, 50, pid=9),                                # 50 pending
        _commit(5, "g1", 2, 60, pid=8),                                                         # only aborted
        _commit(6, "g2", 0, 100, ts=9000), _commit(7, "g2", 0, 150, ts=5000),  # a failover: timestamps go back
        _commit(8, "g3", 0, 70, pid=11), _commit(9, "g3", 0, 75),  # 70's COMMIT (at 10) after a plain 75: 75 stays
        _commit(11, "g4", 0, 5, pid=12), _commit(12, "g4", 0, None, tombstone=True),  # a tombstone drops the pending
        _commit(13, "g5", 0, 1, pid=13), _commit(14, "g6", 0, 1, pid=14),  # pending too, see below
    ], topic=CO, partition=0, file=CO_LOG)
    txns = spark.createDataFrame([_txn(7, 1, 1, "COMMIT"), _txn(8, 3, 5, "ABORT"), _txn(9, 4, 4, "OPEN", 1000),
                                  _txn(11, 8, 8, "COMMIT"), _txn(12, 11, 11, "OPEN"), _txn(13, 13, 13, "OPEN", 1000),
                                  _txn(14, 14, 14, "OPEN", 1000)], TXN_ROWS)
    longest = spark.createDataFrame([("c", CO, 0, "b1", 0, 13, 61_000)] + [("c", "d", p, "b1", 0, 55, 0)
                                                                         for p in range(3)],
                                    "cluster_id string, topic string, partition int, longest_broker string, "
                                    "log_start_offset bigint, log_end_offset bigint, log_end_timestamp bigint")
    aborted = spark.createDataFrame([], "broker string, topic string, partition int, producer_id bigint, "
                                        "first_offset bigint, last_offset bigint")
    table = run_model("consumer_offsets", offset_commits=commits, longest_replicas=longest, aborted_ranges=aborted,
                      log_transactions=txns)
    got = {(r["group_id"], r["partition"]): (r["committed_offset"], r["producer_id"], r["transaction_outcome"],
                                             r["status"]) for r in table.collect()}
    assert got == {("g1", 0): (20, 7, "COMMIT", "ok"), ("g1", 1): (40, None, None, "ok"),
                   ("g1", 2): (60, 8, "ABORT", "beyond_log_end"), ("g2", 0): (150, None, None, "beyond_log_end"),
                   ("g3", 0): (75, None, None, "beyond_log_end"), ("g5", 0): (1, 13, "OPEN", "ok"),
                   ("g6", 0): (1, 14, "OPEN", "ok")}
    # an aborted commit is no position of the group: not judged
    beyond = [r for kind in ("committed_offset_beyond_log_end", "committed_offset_below_log_start",
                             "committed_offset_in_aborted_range")
              for r in run_check(kind, consumer_offsets=table).collect()]
    assert sorted(json.loads(r["details"])["group"] for r in beyond) == ["g2", "g3"]
    # 60 s pending at the log end: g1's in a transaction whose id's timeout is 10 s (the group is stuck), g5's with 2
    # min (in flight), g6's a two-phase commit (never)
    ids = spark.createDataFrame([("c", 9, "app", 10_000), ("c", 13, "slow", 120_000), ("c", 14, "2pc", 2**31 - 1)],
                                "cluster_id string, producer_id bigint, transactional_id string, "
                                "transaction_timeout_ms int")
    live = run_model("live_commits", offset_commits=commits, longest_replicas=longest, log_transactions=txns)
    pending = findings_view(run_check("offset_commit_pending", {"txn_timeout_ms": 15 * MIN}, live_commits=live,
                                      longest_replicas=longest, transactional_ids=ids),
                            "group", "transactional_id", "partitions", "committed_offsets", "age_ms_at_log_end")
    assertDataFrameEqual(pending, expected_findings(spark, [
        ("offset_commit_pending", "warning", "b1", CO, 0, CO_LOG, 40, 4, 9, 0, "g1", "app", '["d-1"]', "[50]",
         "60000")], "group", "transactional_id", "partitions", "committed_offsets", "age_ms_at_log_end"))


def test_a_tiered_partition_starts_in_its_remote_tier(spark):
    """Local logs from 100, finished remote copies from 0: d-0's readers are in the log; on d-1 the
    log-start-offset-checkpoint says 20 (retention moved the log start into the remote tier): 10 is below it."""
    commits = frame(spark, COMMITS, [_commit(0, "reader", 0, 40), _commit(1, "late", 1, 10), _commit(2, "ok", 1, 40)],
                    topic=CO, partition=0, file=CO_LOG)
    longest = spark.createDataFrame([("c", CO, 0, "b1", 0, 3), ("c", "d", 0, "b1", 100, 200),
                                     ("c", "d", 1, "b1", 100, 200)],
                                    "cluster_id string, topic string, partition int, longest_broker string, "
                                    "log_start_offset bigint, log_end_offset bigint")
    aborted = spark.createDataFrame([], "broker string, topic string, partition int, producer_id bigint, "
                                        "first_offset bigint, last_offset bigint")
    remote = spark.createDataFrame([("c", "d", 0, 0), ("c", "d", 0, 50), ("c", "d", 1, 0)],
                                   "cluster_id string, topic string, partition int, start_offset bigint")
    checkpoints = frame(spark, [*PARTITION_KEY, *CHECKPOINT_FIELDS],
                        [dict(broker="b1", topic="d", partition=1, log_start_offset=20)])
    table = run_model("consumer_offsets", offset_commits=commits, longest_replicas=longest, aborted_ranges=aborted,
                      finished_copies=remote, partition_checkpoints=checkpoints)
    assert {r["group_id"]: (r["log_start_offset"], r["status"]) for r in table.collect()} == {
        "reader": (0, "ok"), "late": (20, "below_log_start"), "ok": (20, "ok")}


def test_aborted_copies_are_left_out_of_resends(spark):
    """A moved task's new producer re-writes what the fenced one wrote in an aborted transaction."""
    data = batches(spark, [txn_data(1, 0, 4), txn_data(1, 4, 4), txn_data(2, 9, 4), txn_data(1, 0, 4, partition=1)])
    txns = spark.createDataFrame([("b1", "t", 0, 1, 4, 7, "ABORT"), ("b1", "t", 0, 1, 0, 3, "COMMIT"),
                                  ("b1", "t", 1, 1, 0, 3, "OPEN")],
                                 "broker string, topic string, partition int, producer_id bigint, first_offset bigint, "
                                 "last_data_offset bigint, outcome string")
    kept = run_model("resend_data", data_batches=data, log_transactions=txns).select(
        "partition", "base_offset", "producer_id").collect()
    assert sorted(tuple(r) for r in kept) == [(0, 0, 1), (0, 9, 2), (1, 0, 1)]


def test_producer_lineage_across_rotations_the_coordinator_and_the_data_show(spark):
    """a-1: 5000 rotated to 5001 (PrepareCommit's NextProducerId, CompleteCommit's PreviousProducerId); a-2: only
    3991's newest record survives compaction, and 3990 (no record) ends at epoch 32767 in a partition where 3991
    then starts at epoch 0; 7000 is exhausted too but nothing the coordinator knows follows it."""
    rows = [
        _txn_record(0, "a-1", 5000, 32766, "Ongoing", "t-0", 100, 100, prev=5000, tv=2),
        _txn_record(1, "a-1", 5000, 32767, "PrepareCommit", "t-0", 100, 200, prev=5000, next_pid=5001, tv=2),
        _txn_record(2, "a-1", 5001, 0, "CompleteCommit", "", 100, 300, prev=5000, tv=2),
        _txn_record(3, "a-2", 3991, 2, "CompleteCommit", "", 400, 500, prev=3991, tv=2),
    ]
    log = _records(spark, rows, broker="b1", partition=3, file=TS_LOG).selectExpr("*", "'c' AS cluster_id")
    data = [txn_data(5000, 0, epoch=32766, max_timestamp=150), marker(5000, 1, "COMMIT", epoch=32767),
            txn_data(3990, 0, epoch=32766, partition=1, max_timestamp=10), marker(3990, 1, "COMMIT", epoch=32767,
                                                                                 partition=1),
            txn_data(3991, 2, epoch=0, partition=1, max_timestamp=20), txn_data(3991, 3, epoch=1, partition=1,
                                                                                max_timestamp=30),
            txn_data(7000, 0, epoch=32766, partition=2), marker(7000, 1, "COMMIT", epoch=32767, partition=2),
            txn_data(8000, 2, epoch=0, partition=2)]
    lineage = run_model("producer_lineage", coordinator_log=log,
                        clustered_batches=batches(spark, [{"cluster_id": "c", **r} for r in data], clustered=True))
    assertDataFrameEqual(lineage.select("transactional_id", "producer_id", "first_epoch", "last_epoch",
                                        "previous_producer_id", "next_producer_id", "transaction_version",
                                        "first_coordinator_offset", "last_coordinator_offset", "first_data_offset",
                                        "source"), spark.createDataFrame([
        ("a-1", 5000, 32766, 32767, None, 5001, 2, 0, 2, 0, "coordinator"),
        ("a-1", 5001, 0, 0, 5000, None, 2, 1, 2, None, "coordinator"),
        ("a-2", 3990, 32766, 32767, None, 3991, None, None, None, 0, "data"),
        ("a-2", 3991, 0, 2, 3990, None, 2, 3, 3, 2, "coordinator"),
    ], "transactional_id string, producer_id bigint, first_epoch int, last_epoch int, previous_producer_id bigint, "
       "next_producer_id bigint, transaction_version int, first_coordinator_offset bigint, "
       "last_coordinator_offset bigint, first_data_offset bigint, source string"))
