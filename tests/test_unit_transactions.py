"""The transaction models on small inline tables (spark/sql/transaction_batches.sql, log_transactions.sql,
partition_ends.sql, lso.sql, lso_changes.sql, aborted_ranges.sql and the python model lso_sweep of
spark/transactions.py): transaction grouping, log ends, hanging transactions, the LSO (final and its change points
from the pandas sweep) and aborted ranges against the .txnindex."""

from __future__ import annotations

import pyarrow as pa
import pytest
import unit_frames as frames
from pyspark.testing import assertDataFrameEqual
from unit_frames import (
    BATCHES,
    batch,
    batches,
    expected_findings,
    findings_view,
    frame,
    marker,
    run_check,
    run_model,
    txn_data,
)

from kforensics.defaults import DEFAULT_TXN_TIMEOUT_MS
from kforensics.spark import transactions
from kforensics.spark.schemas import CHECKPOINT_FIELDS, PARTITION_KEY, TXNINDEX_FIELDS

# a few inline rows each: the session as a small scan sets it (conftest.small_input)
pytestmark = pytest.mark.usefixtures("small_input")

LOG = "t-0/00000000000000000000.log"
INDEX = "t-0/00000000000000000000.txnindex"


def test_transaction_index_counts_markers_per_producer(spark):
    rows = [batch(0), batch(1, producer_id=9, producer_epoch=0, base_sequence=0, last_sequence=0),
            txn_data(1, 2), txn_data(1, 3), marker(1, 4, "COMMIT"), txn_data(1, 5), marker(1, 6, "ABORT"),
            txn_data(1, 7), txn_data(1, 8, crc_valid=False), txn_data(2, 9), txn_data(1, 0, partition=1)]
    out = run_model("transaction_batches", batches=batches(spark, rows))
    expected = spark.createDataFrame(
        [(0, 2, 1, 0), (0, 3, 1, 0), (0, 4, 1, 0), (0, 5, 1, 1), (0, 6, 1, 1), (0, 7, 1, 2), (0, 9, 2, 0),
         (1, 0, 1, 0)], "partition int, base_offset bigint, producer_id bigint, txn_index bigint")
    assertDataFrameEqual(out.select("partition", "base_offset", "producer_id", "txn_index"), expected)


def test_transactions_table(spark):
    indexed = [
        {**txn_data(1, 0, 2, max_timestamp=1000), "txn_index": 0},
        {**txn_data(1, 2, 1, max_timestamp=1500), "txn_index": 0},
        {**marker(1, 3, "COMMIT", coordinator_epoch=5, max_timestamp=2000), "txn_index": 0},
        {**marker(1, 4, "COMMIT", coordinator_epoch=5, max_timestamp=2500), "txn_index": 1},  # empty transaction
        {**txn_data(1, 5, 3, max_timestamp=3000), "txn_index": 2},  # still open
        {**txn_data(2, 8, 1, epoch=7, max_timestamp=2600), "txn_index": 0},
        # KIP-890: the marker carries the bumped epoch; the transaction is the data's epoch.
        {**marker(2, 9, "ABORT", epoch=8, coordinator_epoch=5, max_timestamp=2700), "txn_index": 0},
    ]
    out = run_model("log_transactions", transaction_batches=frame(
        spark, [*BATCHES, ("cleaner_offset", pa.int64()), ("txn_index", pa.int64())], indexed))
    cols = ("broker string, topic string, partition int, producer_id bigint, producer_epoch int, first_offset bigint, "
            "last_data_offset bigint, marker_offset bigint, outcome string, coordinator_epoch int, batch_count bigint, "
            "record_count bigint, first_timestamp bigint, duration_ms bigint, file string, position bigint, "
            "txn_index bigint")
    expected = spark.createDataFrame([
        ("b1", "t", 0, 1, 0, 0, 2, 3, "COMMIT", 5, 2, 3, 1000, 1000, LOG, 0, 0),
        ("b1", "t", 0, 1, 0, None, None, 4, "COMMIT", 5, 0, 0, None, None, LOG, 400, 1),
        ("b1", "t", 0, 1, 0, 5, 7, None, "OPEN", None, 1, 3, 3000, None, LOG, 500, 2),
        ("b1", "t", 0, 2, 7, 8, 8, 9, "ABORT", 5, 1, 1, 2600, 100, LOG, 800, 0),
    ], cols)
    assertDataFrameEqual(out.select(*[c.split()[0] for c in cols.split(", ")]), expected)


def test_partition_ends(spark):
    rows = [batch(0, 5, max_timestamp=100, partition_leader_epoch=1),
            batch(5, 5, max_timestamp=300, partition_leader_epoch=2),
            batch(10, 5, max_timestamp=900, partition_leader_epoch=3, crc_valid=False),  # torn tail: not the end
            # Partition 1 holds only v1 batches: no leader epoch at all (not their -1 placeholder).
            batch(20, 2, partition=1, magic=1, partition_leader_epoch=-1, max_timestamp=50),
            batch(22, 1, partition=1, magic=1, partition_leader_epoch=-1, max_timestamp=40)]
    checkpoints = frame(spark, [*PARTITION_KEY, *CHECKPOINT_FIELDS], [
        dict(broker="b1", topic="t", partition=0, high_watermark=8, recovery_point=5, log_start_offset=0,
             cleaner_offset=4),
        dict(broker="b1", topic="t", partition=9, high_watermark=3, recovery_point=3, log_start_offset=0)])
    out = run_model("partition_ends", batches=batches(spark, rows), partition_checkpoints=checkpoints)
    expected = spark.createDataFrame(
        [("b1", "t", 0, 10, 0, 300, 2, 8, 0, 4), ("b1", "t", 1, 23, 20, 50, None, None, None, None)],
        "broker string, topic string, partition int, log_end_offset bigint, log_first_offset bigint, "
        "log_end_timestamp bigint, latest_leader_epoch int, high_watermark bigint, log_start_offset bigint, "
        "cleaner_offset bigint")
    assertDataFrameEqual(out.select(*expected.columns), expected)


TXNS_IN = ("broker string, topic string, partition int, producer_id bigint, producer_epoch int, outcome string, "
           "first_offset bigint, last_data_offset bigint, first_timestamp bigint, file string, position bigint")
HANGING_DETAILS = ("first_offset", "lso_stuck_at", "age_ms_at_log_end", "last_data_offset")


@pytest.mark.parametrize("timeout_ms, hanging", [
    (DEFAULT_TXN_TIMEOUT_MS, [0]),   # only the one older than 15 minutes
    (60_000, [0, 1, 2]),                          # a shorter --txn-timeout: every open one older than a minute
])
def test_hanging_transactions(spark, timeout_ms, hanging):
    txns = spark.createDataFrame([
        ("b1", "t", 0, 1, 3, "OPEN", 10, 12, 0, LOG, 1000),            # 20 minutes old at the log end
        ("b1", "t", 1, 2, 0, "OPEN", 20, 20, 100_000, LOG, 2000),      # exactly 15 minutes: within the timeout
        ("b1", "t", 2, 3, 0, "OPEN", 30, 31, 500_000, LOG, 3000),      # about 8 minutes
        ("b1", "t", 3, 4, 0, "COMMIT", 40, 41, 0, LOG, 4000),          # old but committed
    ], TXNS_IN)
    ends = spark.createDataFrame([("b1", "t", 0, 1_200_000), ("b1", "t", 1, 1_000_000), ("b1", "t", 2, 1_000_000),
                                  ("b1", "t", 3, 10_000_000)],
                                 "broker string, topic string, partition int, log_end_timestamp bigint")
    every = {
        0: ("hanging_transaction", "error", "b1", "t", 0, LOG, 1000, 10, 1, 3, "10", "10", "1200000", "12"),
        1: ("hanging_transaction", "error", "b1", "t", 1, LOG, 2000, 20, 2, 0, "20", "20", "900000", "20"),
        2: ("hanging_transaction", "error", "b1", "t", 2, LOG, 3000, 30, 3, 0, "30", "30", "500000", "31"),
    }
    out = run_check("hanging_transaction", {"txn_timeout_ms": timeout_ms},
                    timed_transactions=frames.with_timeouts(txns), partition_ends=ends)
    assertDataFrameEqual(findings_view(out, *HANGING_DETAILS),
                         expected_findings(spark, [every[p] for p in hanging], *HANGING_DETAILS))


SWEEP_IN = ("broker string, topic string, partition int, producer_id bigint, first_offset bigint, "
            "marker_offset bigint, outcome string")


def _sweep_input(spark, cases: dict[int, list[tuple]]):
    return spark.createDataFrame([("b1", "t", p, *txn) for p, txns in cases.items() for txn in txns], SWEEP_IN)


def test_lso_sweep(spark):
    """LSO = first offset of the earliest open transaction; an ABORT's recorded LSO is the first offset of the
    earliest *other* open transaction, else marker + 1 (ProducerStateManager.lastStableOffset)."""
    txns = _sweep_input(spark, {
        0: [(1, 0, 4, "COMMIT"), (2, 2, 6, "ABORT")],      # the holder commits, the next one holds, then aborts
        1: [(1, 0, None, "OPEN"), (2, 1, 3, "ABORT")],     # an abort while an earlier transaction is open
        # empty transactions: the LSO never held; an ABORT's range (if any) is its .txnindex entry's: the log
        # cleaner removes an aborted transaction's data and keeps the marker and the entry
        2: [(1, None, 0, "ABORT"), (2, None, 1, "COMMIT")],
        3: [(1, 0, 3, "COMMIT")],                          # held, then released by its marker
        4: [(1, 5, None, "OPEN")],                         # held to the end
        5: [(1, 0, 6, "COMMIT"), (2, 2, 4, "ABORT")],      # a later transaction ends first: the LSO stays put
        6: [(1, 0, 2, "ABORT"), (1, 3, 5, "ABORT")],       # one producer, two aborts in a row
        7: [(1, 0, None, "COMMIT"), (2, 4, None, "OPEN")],  # complete, its marker removed by the log cleaner
    })
    change, aborted = "change", "aborted"
    expected = [
        (change, 0, 0, 0, 1, 0, None), (change, 0, 4, 2, 2, 2, None), (aborted, 0, 6, 7, 2, 2, 6),
        (change, 0, 6, 7, None, None, None),
        (change, 1, 0, 0, 1, 0, None), (aborted, 1, 3, 0, 2, 1, 3), (aborted, 2, 0, None, 1, None, 0),
        (change, 3, 0, 0, 1, 0, None), (change, 3, 3, 4, None, None, None),
        (change, 4, 5, 5, 1, 5, None),
        (change, 5, 0, 0, 1, 0, None), (aborted, 5, 4, 0, 2, 2, 4), (change, 5, 6, 7, None, None, None),
        (change, 6, 0, 0, 1, 0, None), (aborted, 6, 2, 3, 1, 0, 2), (change, 6, 2, 3, None, None, None),
        (change, 6, 3, 3, 1, 3, None), (aborted, 6, 5, 6, 1, 3, 5), (change, 6, 5, 6, None, None, None),
        (change, 7, 4, 4, 2, 4, None),
    ]
    assertDataFrameEqual(run_model("lso_sweep", log_transactions=txns), spark.createDataFrame(
        [(kind, "b1", "t", p, *rest) for kind, p, *rest in expected], transactions.SWEEP_SCHEMA))


def test_lso_table(spark):
    txns = spark.createDataFrame([
        ("b1", "t", 0, 7, "OPEN", 5),
        ("b1", "t", 1, 1, "COMMIT", 0),
        ("b1", "t", 3, 3, "OPEN", 9),                    # opened above the high watermark: the LSO is the HW
        ("b1", "t", 4, 1, "OPEN", 7), ("b1", "t", 4, 2, "OPEN", 3), ("b1", "t", 4, 3, "ABORT", 1),
    ], "broker string, topic string, partition int, producer_id bigint, outcome string, first_offset bigint")
    ends = spark.createDataFrame([("b1", "t", 0, 12, 10), ("b1", "t", 1, 10, 8), ("b1", "t", 2, 10, None),
                                  ("b1", "t", 3, 12, 6), ("b1", "t", 4, 20, 20)],
                                 "broker string, topic string, partition int, log_end_offset bigint, "
                                 "high_watermark bigint")
    expected = spark.createDataFrame([
        ("b1", "t", 0, 5, 10, 12, 7, True),
        ("b1", "t", 1, 8, 8, 10, None, False),
        ("b1", "t", 2, 10, None, 10, None, False),       # no replication-offset-checkpoint: bounded by the log end
        ("b1", "t", 3, 6, 6, 12, 3, True),
        ("b1", "t", 4, 3, 20, 20, 2, True),              # the earliest open transaction holds it
    ], "broker string, topic string, partition int, last_stable_offset bigint, high_watermark bigint, "
       "log_end_offset bigint, held_by_producer_id bigint, stuck boolean")
    assertDataFrameEqual(run_model("lso", log_transactions=txns, partition_ends=ends), expected)


def _sweep_rows(spark, rows: list[tuple]):
    return spark.createDataFrame([(kind, "b1", "t", 0, *rest) for kind, *rest in rows], transactions.SWEEP_SCHEMA)


def test_lso_changes_keeps_change_points(spark):
    sweep = _sweep_rows(spark, [("change", 0, 0, 1, 0, None), ("aborted", 3, 4, 1, 0, 3),
                                ("change", 3, 4, None, None, None)])
    expected = spark.createDataFrame([("b1", "t", 0, 0, 0, 1), ("b1", "t", 0, 3, 4, None)],
                                     "broker string, topic string, partition int, offset bigint, "
                                     "last_stable_offset bigint, held_by_producer_id bigint")
    assertDataFrameEqual(run_model("lso_changes", lso_sweep=sweep), expected)


ABORT_DETAILS = ("first_offset", "last_offset", "last_stable_offset", "index_first_offset",
                 "index_last_stable_offset")


def test_aborted_ranges_against_txnindex(spark):
    # (row_kind, offset, last_stable_offset, producer_id, first_offset, last_offset)
    sweep = _sweep_rows(spark, [
        ("change", 0, 0, 1, 0, None),
        ("aborted", 4, 5, 1, 0, 4),       # the index agrees
        ("aborted", 12, 13, 2, 10, 12),   # no index entry
        ("aborted", 33, 34, 4, 30, 33),   # the index has another first offset
        ("aborted", 42, 38, 5, 40, 42),   # the index has another LSO
        ("aborted", 52, 53, 6, 50, 52),   # the index ends the range at another offset: missing and orphan
    ])
    index = frame(spark, [*PARTITION_KEY, *TXNINDEX_FIELDS], [
        dict(producer_id=1, first_offset=0, last_offset=4, last_stable_offset=5),
        dict(producer_id=3, first_offset=20, last_offset=22, last_stable_offset=23),  # no ABORT marker there
        dict(producer_id=4, first_offset=31, last_offset=33, last_stable_offset=34),
        dict(producer_id=5, first_offset=40, last_offset=42, last_stable_offset=43),
        dict(producer_id=6, first_offset=50, last_offset=51, last_stable_offset=53),
    ], broker="b1", topic="t", partition=0, file=INDEX, version=0)
    table, found = frames.aborted_ranges(sweep, index)
    assertDataFrameEqual(table, spark.createDataFrame([
        ("b1", "t", 0, 1, 0, 4, 5, True), ("b1", "t", 0, 2, 10, 12, 13, False), ("b1", "t", 0, 4, 30, 33, 34, False),
        ("b1", "t", 0, 5, 40, 42, 38, False), ("b1", "t", 0, 6, 50, 52, 53, False),
    ], "broker string, topic string, partition int, producer_id bigint, first_offset bigint, last_offset bigint, "
       "last_stable_offset bigint, txnindex_agrees boolean"))
    key = ("b1", "t", 0)
    assertDataFrameEqual(findings_view(found, *ABORT_DETAILS), expected_findings(spark, [
        ("txnindex_missing", "error", *key, None, None, 10, 2, None, "10", "12", "13", None, None),
        ("txnindex_missing", "error", *key, None, None, 50, 6, None, "50", "52", "53", None, None),
        ("txnindex_orphan", "error", *key, INDEX, None, 20, 3, None, "20", "22", "23", None, None),
        ("txnindex_orphan", "error", *key, INDEX, None, 50, 6, None, "50", "51", "53", None, None),
        ("txnindex_mismatch", "error", *key, INDEX, None, 30, 4, None, "30", "33", "34", "31", "34"),
        ("txnindex_mismatch", "error", *key, INDEX, None, 40, 5, None, "40", "42", "38", "40", "43"),
    ], *ABORT_DETAILS))


def test_an_index_entry_whose_data_retention_deleted_is_no_orphan(spark):
    """Retention deletes segments up to the high watermark, not the LSO: an aborted transaction's data can be
    gone while its marker and .txnindex entry remain. An entry that begins below the log's first offset cannot
    be judged; one that begins inside the log and has no ABORT marker is still an orphan."""
    sweep = _sweep_rows(spark, [("change", 100, 100, None, None, None)])
    index = frame(spark, [*PARTITION_KEY, *TXNINDEX_FIELDS], [
        dict(producer_id=7, first_offset=90, last_offset=103, last_stable_offset=90),    # data below the log start
        dict(producer_id=8, first_offset=105, last_offset=108, last_stable_offset=105),  # inside the log
    ], broker="b1", topic="t", partition=0, file=INDEX, version=0)
    ends = spark.createDataFrame([("b1", "t", 0, 100, None)], "broker string, topic string, partition int, "
                                                               "log_first_offset bigint, cleaner_offset bigint")
    _table, found = frames.aborted_ranges(sweep, index, ends)
    assertDataFrameEqual(findings_view(found, *ABORT_DETAILS), expected_findings(spark, [
        ("txnindex_orphan", "error", "b1", "t", 0, INDEX, None, 105, 8, None, "105", "108", "105", None, None),
    ], *ABORT_DETAILS))
    _table, without_ends = frames.aborted_ranges(sweep, index)
    assert without_ends.count() == 2
