"""The log's cross-checks (spark/sql/) on small inline tables: producer snapshots, leader-epoch-checkpoint, offsets in file
order and segment names against the log, with the legal cases that must stay silent."""

from __future__ import annotations

import pytest
from pyspark.testing import assertDataFrameEqual
from unit_frames import batch, batches, expected_findings, findings_view, frame, run_check

from kforensics.spark.schemas import EPOCH_FIELDS, PARTITION_KEY, SEGMENT_FIELDS, SNAPSHOT_FIELDS

# a few inline rows each: the session as a small scan sets it (conftest.small_input)
pytestmark = pytest.mark.usefixtures("small_input")

LOG = "t-0/00000000000000000000.log"
SNAP = "t-0/00000000000000000020.snapshot"
SNAP_DETAILS = ("snapshot_last_offset", "snapshot_last_sequence", "log_last_offset", "log_last_sequence")


def data(pid: int, base_offset: int, count: int, base_sequence: int, **kw) -> dict:
    return batch(base_offset, count, producer_id=pid, producer_epoch=0, base_sequence=base_sequence,
                 last_sequence=base_sequence + count - 1, **kw)


def test_snapshot_mismatches(spark):
    rows = [data(1, 0, 5, 0), data(1, 5, 5, 5), data(1, 25, 3, 10),   # a later batch is above the snapshot
            data(2, 28, 2, 0),
            data(3, 10, 3, 0),
            data(7, 13, 3, 0),
            data(9, 16, 1, 0), data(9, 20, 1, 1),                      # the batch at the snapshot offset is above it
            data(6, 55, 2, 3, partition=1)]
    snapshots = frame(spark, [*PARTITION_KEY, *SNAPSHOT_FIELDS], [
        dict(producer_id=1, last_offset=9, last_sequence=9),       # agrees
        dict(producer_id=2, last_offset=22, last_sequence=1),      # not below the snapshot's own offset
        dict(producer_id=3, last_offset=11, last_sequence=1),      # the log's last batch ends at 12
        dict(producer_id=4, last_offset=3, last_sequence=3),       # the log still holds offset 3: no such batch
        dict(producer_id=7, last_offset=15, last_sequence=5),      # same offset, another sequence
        dict(producer_id=8, last_offset=-1, last_sequence=-1),     # no data offset recorded
        dict(producer_id=9, last_offset=16, last_sequence=0),      # agrees
        dict(partition=1, file="t-1/00000000000000000060.snapshot", snapshot_offset=60, producer_id=5,
             last_offset=20, last_sequence=20),                    # below the log start (retention): not judged
        dict(partition=1, file="t-1/00000000000000000060.snapshot", snapshot_offset=60, producer_id=6,
             last_offset=56, last_sequence=4),
    ], broker="b1", topic="t", partition=0, file=SNAP, snapshot_offset=20, producer_epoch=0)
    ends = spark.createDataFrame([("b1", "t", 0, 0, None), ("b1", "t", 1, 50, None)],
                                 "broker string, topic string, partition int, log_first_offset bigint, "
                                 "cleaner_offset bigint")
    out = run_check("snapshot_mismatch", data_batches=batches(spark, rows), snapshot_entries=snapshots,
                    partition_ends=ends)

    def found(pid, last, seq, log_last, log_seq):
        return ("snapshot_mismatch", "error", "b1", "t", 0, SNAP, None, 20, pid, 0, str(last), str(seq), log_last,
                log_seq)

    assertDataFrameEqual(findings_view(out, *SNAP_DETAILS), expected_findings(spark, [
        found(2, 22, 1, None, None), found(3, 11, 1, "12", "2"), found(4, 3, 3, None, None),
        found(7, 15, 5, "15", "2"),
    ], *SNAP_DETAILS))


EPOCH_DETAILS = ("batch_leader_epoch", "checkpoint_epoch", "batches")


def test_leader_epoch_mismatches(spark):
    rows = [batch(0, 5, partition_leader_epoch=0), batch(5, partition_leader_epoch=1),
            batch(6, partition_leader_epoch=1), batch(7, partition_leader_epoch=2),
            batch(8, partition_leader_epoch=9, crc_valid=False),            # a torn batch: not judged
            batch(9, magic=1, partition_leader_epoch=-1),                   # v1: no leader epoch
            *[batch(o, partition=1, partition_leader_epoch=0) for o in range(3)],  # before the first entry
            batch(3, partition=1, partition_leader_epoch=1),
            batch(0, partition=2, partition_leader_epoch=5)]                # no checkpoint at all
    epochs = frame(spark, [*PARTITION_KEY, *EPOCH_FIELDS], [
        dict(epoch=0, start_offset=0), dict(epoch=2, start_offset=5), dict(partition=1, epoch=1, start_offset=3)],
        broker="b1", topic="t", partition=0, file="leader-epoch-checkpoint")
    out = run_check("leader_epoch_mismatch", batches=batches(spark, rows), leader_epochs=epochs)
    assertDataFrameEqual(findings_view(out, *EPOCH_DETAILS), expected_findings(spark, [
        ("leader_epoch_mismatch", "error", "b1", "t", 0, LOG, 500, 5, None, None, "1", "2", "2")], *EPOCH_DETAILS))


# One finding per run: two separate runs with the same pair of epochs (offsets 5-6 and 8, a correct batch at 7
# between them) are two findings (they were once grouped by the pair only: one finding counting 3 batches).
def test_leader_epoch_mismatch_one_finding_per_run(spark):
    rows = [batch(0, 5, partition_leader_epoch=0), batch(5, partition_leader_epoch=1),
            batch(6, partition_leader_epoch=1), batch(7, partition_leader_epoch=2), batch(8, partition_leader_epoch=1)]
    epochs = frame(spark, [*PARTITION_KEY, *EPOCH_FIELDS],
                   [dict(epoch=0, start_offset=0), dict(epoch=2, start_offset=5)],
                   broker="b1", topic="t", partition=0, file="leader-epoch-checkpoint")
    out = run_check("leader_epoch_mismatch", batches=batches(spark, rows), leader_epochs=epochs)
    assertDataFrameEqual(findings_view(out, *EPOCH_DETAILS), expected_findings(spark, [
        ("leader_epoch_mismatch", "error", "b1", "t", 0, LOG, 500, 5, None, None, "1", "2", "2"),
        ("leader_epoch_mismatch", "error", "b1", "t", 0, LOG, 800, 8, None, None, "1", "2", "1"),
    ], *EPOCH_DETAILS))


def test_offset_overlaps(spark):
    seg11 = "t-0/00000000000000000011.log"
    rows = [batch(0, 5), batch(5, 5), batch(8, 3),                                    # 8-10 after 5-9
            batch(10, 3, file=seg11, segment_base_offset=11, position=0),             # across segments
            batch(0, 5, partition=1), batch(2, 2, partition=1, position=100, crc_valid=False),  # garbage: no batch
            batch(5, 5, partition=1, position=200),
            batch(0, 5, partition=2), batch(10, 5, partition=2)]                      # a gap is not an overlap
    out = run_check("offset_overlap", batches=batches(spark, rows))
    assertDataFrameEqual(findings_view(out, "previous_last_offset"), expected_findings(spark, [
        ("offset_overlap", "error", "b1", "t", 0, LOG, 800, 8, -1, -1, "9"),
        ("offset_overlap", "error", "b1", "t", 0, seg11, 0, 10, -1, -1, "10"),
    ], "previous_last_offset"))


def test_segment_name_mismatches(spark):
    def seg(name, first, last, partition=0):
        return dict(partition=partition, file=f"t-{partition}/{name:020d}.log", base_offset=name,
                    first_batch_base_offset=first, last_offset=last)

    segments = frame(spark, [*PARTITION_KEY, *SEGMENT_FIELDS], [
        seg(0, 0, 9), seg(10, 10, 19),
        seg(20, 15, 25),          # named above its first batch
        seg(30, 30, 45),          # runs into the next segment
        seg(40, 46, 50),          # first batch above the name (compaction, retention): legal
        seg(0, None, None, 1), seg(5, 5, 7, 1),  # an empty segment
    ], broker="b1", topic="t", size=100)
    details = ("name_offset", "next_segment_base_offset")
    out = run_check("segment_name_mismatch", segments=segments)
    assertDataFrameEqual(findings_view(out, *details), expected_findings(spark, [
        ("segment_name_mismatch", "error", "b1", "t", 0, f"t-0/{20:020d}.log", None, 15, None, None, "20", "30"),
        ("segment_name_mismatch", "error", "b1", "t", 0, f"t-0/{30:020d}.log", None, 30, None, None, "30", "40"),
    ], *details))
