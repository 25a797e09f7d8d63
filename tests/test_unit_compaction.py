"""The log rules on a compacted log, on small inline tables: each shape the log cleaner leaves below its checkpoint
is silent, and the genuine problem of the same shape in the dirty tail (or in an uncleaned partition) is found.

The shapes follow apache/kafka trunk (Cleaner.java 08528988, the others c4342d76, unchanged since 4.0's
LogCleaner.scala): Cleaner.java (batch retention: DELETE_EMPTY, RETAIN_EMPTY),
CleanedTransactionMetadata.java (a marker goes once no batch of its transaction is left; an ABORT marker kept with its
AbortedTxn while its data is removed), MemoryRecords.filterTo / buildRetainedRecordsInto (a thinned batch keeps base
offset, last offset, base sequence; KIP-534 delete horizon in baseTimestamp), DefaultRecordBatch.writeEmptyHeader (an
empty batch: count 0, baseTimestamp -1)."""

from __future__ import annotations

import pytest
import unit_frames as frames
from pyspark.testing import assertDataFrameEqual
from unit_frames import (
    batch,
    batches,
    expected_findings,
    findings_view,
    frame,
    marker,
    run_check,
    run_model,
    scan_of,
    txn_data,
)

from kforensics.defaults import DEFAULT_TXN_TIMEOUT_MS
from kforensics.spark.schemas import CHECKPOINT_FIELDS, PARTITION_KEY, SNAPSHOT_FIELDS, TXNINDEX_FIELDS

# a few inline rows each: the session as a small scan sets it (conftest.small_input)
pytestmark = pytest.mark.usefixtures("small_input")

INDEX = "t-0/00000000000000000000.txnindex"
SNAP = "t-0/00000000000000000030.snapshot"
MINUTE = 60_000


def _checkpoints(spark, **cleaner_offsets: int | None):
    """partition_checkpoints rows of topic t: partition (as p0, p1, ...) -> cleaner offset."""
    return frame(spark, [*PARTITION_KEY, *CHECKPOINT_FIELDS],
                 [dict(broker="b1", topic="t", partition=int(p[1:]), cleaner_offset=o) for p, o in
                  cleaner_offsets.items()])


def _idem(base_offset: int, count: int, base_sequence: int, *, last_offset: int | None = None, pid: int = 7,
          **kw) -> dict:
    """An idempotent producer's batch; `last_offset` beyond base + count - 1 for a thinned or empty batch."""
    last = base_offset + count - 1 if last_offset is None else last_offset
    return batch(base_offset, count, producer_id=pid, producer_epoch=0, base_sequence=base_sequence,
                 last_sequence=base_sequence + last - base_offset, last_offset=last, **kw)


def test_sequence_holes_below_the_cleaner_offset_are_counted_not_gaps(spark):
    rows = [
        _idem(0, 2, 0),
        _idem(5, 1, 5, last_offset=6),                             # batches 2-4 deleted: a hole, thinned batch
        _idem(10, 0, 10, last_offset=11, base_timestamp=-1, max_timestamp=500),  # kept empty (RETAIN_EMPTY)
        _idem(20, 2, 12),                                          # continues the empty batch's sequence
        _idem(22, 2, 14, delete_horizon_ms=10**13, base_timestamp=10**13, max_timestamp=700),  # tombstones
        _idem(24, 2, 30),                                          # the dirty tail: a genuine gap
        _idem(0, 2, 0, partition=1), _idem(5, 2, 5, partition=1),  # no cleaner checkpoint: a gap
    ]
    data = run_model("data_batches", batches=batches(spark, rows), partition_checkpoints=_checkpoints(spark, p0=20))
    found = run_check("sequence_holes", data_batches=data)
    details = ("gap_size", "cleaner_offset", "holes", "sequence_numbers", "producer_epochs")
    assertDataFrameEqual(findings_view(found, *details), expected_findings(spark, [
        ("sequence_gap", "error", "b1", "t", 0, "t-0/00000000000000000000.log", 2400, 24, 7, 0, "14", None, None,
         None, None),
        ("sequence_gap", "error", "b1", "t", 1, "t-0/00000000000000000000.log", 500, 5, 7, 0, "3", None, None, None,
         None),
        ("cleaned_sequence_holes", "info", "b1", "t", 0, "t-0/00000000000000000000.log", 500, 5, 7, 0, None, "20", "2",
         "6", "1"),
    ], *details))
    # a delete horizon or an empty batch is no create time: the max timestamp stands in (producers' first write)
    empty = run_model("producers", data_batches=data.filter("partition = 0 AND base_offset IN (10, 22)")).collect()
    horizon = run_model("producers", data_batches=data.filter("partition = 0 AND base_offset = 22")).collect()
    assert [r["first_timestamp"] for r in empty + horizon] == [500, 700]


def test_a_snapshot_entry_naming_a_batch_the_cleaner_deleted(spark):
    def data(pid: int, base_offset: int, count: int, base_sequence: int, partition: int = 0) -> dict:
        return _idem(base_offset, count, base_sequence, pid=pid, partition=partition)

    rows = [data(1, 0, 5, 0), data(2, 22, 2, 0), data(1, 0, 5, 0, partition=1)]
    snapshots = frame(spark, [*PARTITION_KEY, *SNAPSHOT_FIELDS], [
        dict(producer_id=1, last_offset=8, last_sequence=8),    # its batch (5-8) deleted below the checkpoint 20
        dict(producer_id=2, last_offset=25, last_sequence=5),   # its batch (24-25) missing above it: a mismatch
        dict(partition=1, producer_id=1, last_offset=8, last_sequence=8),  # not compacted: a mismatch
    ], broker="b1", topic="t", partition=0, file=SNAP, snapshot_offset=30, producer_epoch=0)
    ends = spark.createDataFrame([("b1", "t", 0, 0, 20), ("b1", "t", 1, 0, None)],
                                 "broker string, topic string, partition int, log_first_offset bigint, "
                                 "cleaner_offset bigint")
    found = run_check("snapshot_mismatch", data_batches=batches(spark, rows), snapshot_entries=snapshots,
                      partition_ends=ends)
    assert sorted((r["partition"], r["producer_id"]) for r in found.collect()) == [(0, 2), (1, 1)]


def test_transactions_in_a_cleaned_range(spark):
    """Below the cleaner offset (20): a transaction whose marker the cleaner removed is complete, an ABORT marker
    whose data it removed keeps its .txnindex entry (no orphan, its range from the entry), an entry whose first
    offset names removed batches agrees, a marker with a delete horizon and no data needs no entry. Above it: a
    wrong first offset, a missing entry, an orphan entry and a hanging transaction are found."""
    t0 = 1_000_000
    rows = [
        txn_data(1, 0, 2, max_timestamp=t0),                                 # its COMMIT removed past the horizon
        marker(2, 5, "ABORT", max_timestamp=t0),                             # its data removed, its entry kept
        txn_data(3, 8, 2, max_timestamp=t0), marker(3, 10, "ABORT", max_timestamp=t0),  # entry's first offset 6
        marker(4, 12, "ABORT", delete_horizon_ms=t0 + 60 * MINUTE, base_timestamp=t0 + 60 * MINUTE,
               max_timestamp=t0),                                            # may go: no entry left
        txn_data(5, 22, 2, max_timestamp=t0), marker(5, 24, "ABORT", max_timestamp=t0),  # entry says 21: dirty
        txn_data(6, 26, 1, max_timestamp=t0), marker(6, 27, "ABORT", max_timestamp=t0),  # no entry
        txn_data(8, 30, 1, max_timestamp=t0),                                # open in the dirty tail
        batch(31, 1, max_timestamp=t0 + 30 * MINUTE),
    ]
    scan = scan_of(batches=batches(spark, rows), partition_checkpoints=_checkpoints(spark, p0=20))
    txns = scan.table("log_transactions")
    assert sorted((r["producer_id"], r["outcome"], r["marker_offset"]) for r in txns.collect()) == [
        (1, "COMMIT", None), (2, "ABORT", 5), (3, "ABORT", 10), (4, "ABORT", 12), (5, "ABORT", 24),
        (6, "ABORT", 27), (8, "OPEN", None)]
    index = frame(spark, [*PARTITION_KEY, *TXNINDEX_FIELDS], [
        dict(producer_id=2, first_offset=3, last_offset=5, last_stable_offset=6),
        dict(producer_id=3, first_offset=6, last_offset=10, last_stable_offset=11),
        dict(producer_id=5, first_offset=21, last_offset=24, last_stable_offset=25),
        dict(producer_id=7, first_offset=28, last_offset=29, last_stable_offset=30),   # no ABORT marker there
    ], broker="b1", topic="t", partition=0, file=INDEX, version=0)
    ends = scan.table("partition_ends")
    table, found = frames.aborted_ranges(scan.table("lso_sweep"), index, ends)
    assert sorted((r["producer_id"], r["first_offset"], r["last_offset"], r["last_stable_offset"],
                   r["txnindex_agrees"]) for r in table.collect()) == [
        (2, 3, 5, 6, True), (3, 8, 10, 11, True), (5, 22, 24, 25, False), (6, 26, 27, 28, False)]
    hanging = run_check("hanging_transaction", timed_transactions=frames.with_timeouts(txns), partition_ends=ends,
                        params={"txn_timeout_ms": DEFAULT_TXN_TIMEOUT_MS})
    assert sorted((r["kind"], r["producer_id"], r["offset"]) for r in found.union(hanging).collect()) == [
        ("hanging_transaction", 8, 30), ("txnindex_mismatch", 5, 22), ("txnindex_missing", 6, 26),
        ("txnindex_orphan", 7, 28)]


def test_compacted_from_the_metadata_log_or_the_cleaner_checkpoint(spark):
    def end(topic: str, cleaned_up_to: int | None) -> tuple:
        return ("b1", topic, 0, "c", 0, 10, 10, 1, "1@0", 1, 0, cleaned_up_to)

    ends = spark.createDataFrame([end("a", None), end("b", 5), end("c", 5), end("d", None), end("e", None),
                                  end("f", None), end("g", 4)],
                                 "broker string, topic string, partition int, cluster_id string, "
                                 "log_start_offset bigint, log_end_offset bigint, high_watermark bigint, "
                                 "latest_leader_epoch int, leader_epoch_checkpoint string, replica_count bigint, "
                                 "log_end_timestamp bigint, cleaned_up_to bigint")
    div = spark.createDataFrame([], "cluster_id string, topic string, partition int, a_broker string, "
                                    "b_broker string, offset bigint")
    applied = spark.createDataFrame([
        ("c", "a", "TOPIC_RECORD", 1, 0, None), ("c", "a", "CONFIG_RECORD", 2, 0, "compact"),
        ("c", "b", "CONFIG_RECORD", 3, 0, "delete"),                  # the policy says delete: not compacted
        ("c", "e", "CONFIG_RECORD", 4, 0, "compact, delete"),
        ("c", "f", "CONFIG_RECORD", 5, 0, "compact"), ("c", "f", "TOPIC_RECORD", 6, 0, None),  # re-created since
        ("c", "g", "CONFIG_RECORD", 7, 0, "compact"), ("c", "g", "CONFIG_RECORD", 8, 0, None),  # deleted: default
    ], "cluster_id string, topic string, record_type string, metadata_offset bigint, record_index bigint, "
       "config_value string")
    rows = run_model("replicas", replica_ends=ends, divergences=div, applied_records=applied) \
        .select("topic", "compacted", "cleaned_up_to").collect()
    assert sorted(tuple(r) for r in rows) == [("a", True, None), ("b", False, 5), ("c", True, 5), ("d", False, None),
                                              ("e", True, None), ("f", False, None), ("g", True, 4)]
    # no metadata log in the input: applied_records is empty, the cleaner checkpoint decides
    without = run_model("replicas", replica_ends=ends, divergences=div)
    assertDataFrameEqual(without.select("topic", "compacted"), spark.createDataFrame(
        [(t, t in "bcg") for t in "abcdefg"], "topic string, compacted boolean"))
