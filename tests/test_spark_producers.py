"""Sequence-gap rules on small inline batch tables: one real gap, and silence on every legal case."""

from __future__ import annotations

import pytest

from kforensics.spark import producers
from kforensics.spark.schemas import BATCH_FIELDS, PARTITION_KEY, _schema, ddl

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
