"""Sequence-gap rules on small inline batch tables: one real gap, and silence on every legal case."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F
from pyspark.testing import assertDataFrameEqual

from kforensics.spark import producers
from kforensics.spark.schemas import BATCH_FIELDS, PARTITION_KEY, RECORD_FIELDS, _schema, ddl

BATCH_DDL = ddl(_schema([*PARTITION_KEY, *BATCH_FIELDS]))
COLUMNS = [name for name, _ in [*PARTITION_KEY, *BATCH_FIELDS]]


def _batch(base_offset: int, count: int, base_sequence: int, *, epoch: int = 0, pid: int = 7,
           leader_epoch: int = 0, control: bool = False) -> dict:
    last_sequence = -1 if control else (base_sequence + count - 1) % 2**31
    row = dict.fromkeys(COLUMNS)
    row.update(broker="b", topic="t", partition=0, file="t-0/0.log", segment_base_offset=0,
               position=base_offset * 100, size=100, magic=2, base_offset=base_offset,
               last_offset=base_offset + count - 1, count=count, partition_leader_epoch=leader_epoch,
               producer_id=pid, producer_epoch=epoch, base_sequence=-1 if control else base_sequence,
               last_sequence=last_sequence, is_transactional=control, is_control=control,
               control_type="COMMIT" if control else None, base_timestamp=0, max_timestamp=0, crc_valid=True)
    return row


def _gaps(spark, rows: list[dict]) -> list:
    batches = spark.createDataFrame([tuple(r[c] for c in COLUMNS) for r in rows], BATCH_DDL)
    data = producers.data_batches(batches.transform(producers.with_leader_epoch_change))
    found = producers.sequence_gaps(producers.with_previous_batch(data))
    return found.select("kind", "offset", "details").collect()


def test_gap_is_reported_with_size_class(spark):
    rows = _gaps(spark, [_batch(0, 2, 0), _batch(2, 2, 2), _batch(4, 2, 40)])
    assert len(rows) == 1 and rows[0]["offset"] == 4
    assert '"expected_sequence":4' in rows[0]["details"] and '"size_class":"large"' in rows[0]["details"]


@pytest.mark.parametrize("case", [
    [_batch(0, 2, 2147483646), _batch(2, 2, 0)],                     # wraparound
    [_batch(0, 2, 0), _batch(2, 2, 0, epoch=1)],                      # new epoch starts at 0
    [_batch(0, 2, 500), _batch(2, 2, 502)],                           # history starts mid-sequence
    [_batch(0, 2, 0), _batch(2, 1, 0, control=True), _batch(3, 2, 2)],  # marker outside the chain
])
def test_legal_histories_are_silent(spark, case):
    assert _gaps(spark, case) == []


def _zombies(spark, rows: list[dict]) -> list:
    batches = spark.createDataFrame([tuple(r[c] for c in COLUMNS) for r in rows], BATCH_DDL)
    return producers.zombie_epochs(batches).select("offset", "details").collect()


def test_zombie_epoch_after_newer_epoch(spark):
    rows = _zombies(spark, [_batch(0, 2, 0, epoch=3), _batch(2, 2, 0, epoch=4), _batch(4, 2, 2, epoch=3)])
    assert [r["offset"] for r in rows] == [4]
    assert '"newer_epoch":4' in rows[0]["details"] and '"newer_epoch_first_offset":2' in rows[0]["details"]


def test_kip890_marker_at_next_epoch_is_silent(spark):
    marker = _batch(2, 1, 0, epoch=4, control=True)
    assert _zombies(spark, [_batch(0, 2, 0, epoch=3), marker, _batch(3, 2, 0, epoch=4)]) == []


def _frame(spark, rows: list[dict]):
    return spark.createDataFrame([tuple(r[c] for c in COLUMNS) for r in rows], BATCH_DDL)


def test_duplicate_sequences_reported_once_at_the_second_copy(spark):
    rows = [_batch(0, 2, 0), _batch(2, 2, 2), _batch(4, 2, 2), _batch(6, 2, 2),  # 2-3 written three times
            _batch(8, 2, 0, epoch=1),                                           # a new epoch starts at 0 again
            _batch(10, 2, 2, pid=8)]                                            # another producer's 2-3
    found = producers.duplicate_sequences(_frame(spark, rows)).select(
        "kind", "severity", "offset", "position", "producer_id", "producer_epoch",
        F.get_json_object("details", "$.sequence_range").alias("sequence_range"),
        F.get_json_object("details", "$.offsets").alias("offsets"))
    expected = spark.createDataFrame([("duplicate_sequence", "error", 4, 400, 7, 0, "[2,3]", "[2,4,6]")],
                                     "kind string, severity string, offset bigint, position bigint, "
                                     "producer_id bigint, producer_epoch int, sequence_range string, offsets string")
    assertDataFrameEqual(found, expected)


def test_producers_table(spark):
    def timed(row: dict, base: int, top: int) -> dict:
        return {**row, "base_timestamp": base, "max_timestamp": top}

    txn = {**_batch(5, 3, 0, pid=8), "is_transactional": True}
    rows = [timed(_batch(0, 2, 0), 10, 15), timed(_batch(2, 2, 2), 20, 25), timed(_batch(4, 1, 0, epoch=1), 30, 30),
            timed(txn, 40, 45)]
    expected = spark.createDataFrame([
        ("b", "t", 0, 7, 0, 0, 3, 0, 3, 2, 4, 10, 25, False),
        ("b", "t", 0, 7, 1, 4, 4, 0, 0, 1, 1, 30, 30, False),
        ("b", "t", 0, 8, 0, 5, 7, 0, 2, 1, 3, 40, 45, True),
    ], "broker string, topic string, partition int, producer_id bigint, producer_epoch int, first_offset bigint, "
       "last_offset bigint, first_sequence int, last_sequence int, batch_count bigint, record_count bigint, "
       "first_timestamp bigint, last_timestamp bigint, is_transactional boolean")
    assertDataFrameEqual(producers.producers_table(_frame(spark, rows)), expected)


RECORD_DDL = ddl(_schema([*PARTITION_KEY, *RECORD_FIELDS]))


def test_content_duplicates(spark):
    def rec(partition: int, offset: int, pid: int, ts: int, n: int) -> tuple:
        return ("b", "t", partition, offset, ts, pid, 0, 100 + n, 200 + n, 1, 1)

    records = spark.createDataFrame([
        # 0: producer 2 re-sends three of producer 1's records 10 s after its last write.
        *[rec(0, o, 1, 1000 + o, o) for o in range(4)], *[rec(0, 10 + n, 2, 11_000 + n, n) for n in range(3)],
        # 1: two equal records are ordinary.
        *[rec(1, o, 1, 1000 + o, o) for o in range(4)], *[rec(1, 10 + n, 2, 11_000 + n, n) for n in range(2)],
        # 2: the re-send starts more than 60 s after producer 1 stopped.
        *[rec(2, o, 1, 1000 + o, o) for o in range(4)], *[rec(2, 10 + n, 2, 70_000 + n, n) for n in range(3)],
        # 3: producer 2 started before producer 1 stopped: not a re-send after it.
        *[rec(3, o, 1, 1000 + o, o) for o in (0, 1, 2, 20)], *[rec(3, 10 + n, 2, 1010 + n, n) for n in range(3)],
    ], RECORD_DDL)
    found = producers.content_duplicates(records).select(
        "kind", "severity", "partition", "file", "offset", "producer_id",
        *[F.get_json_object("details", f"$.{k}").alias(k) for k in ("producer_ids", "offset_pairs", "matches")])
    expected = spark.createDataFrame(
        [("content_duplicate", "warning", 0, None, 10, 2, "[1,2]", "[[0,10],[1,11],[2,12]]", "3")],
        "kind string, severity string, partition int, file string, offset bigint, producer_id bigint, "
        "producer_ids string, offset_pairs string, matches string")
    assertDataFrameEqual(found, expected)
