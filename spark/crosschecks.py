"""The log against its companions: producer snapshots, leader-epoch-checkpoint, and segment naming."""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from kforensics.spark.findings import KEY, fmt, to_findings

PRODUCER = [*KEY, "producer_id"]


def snapshot_mismatches(data: DataFrame, snapshots: DataFrame, ends: DataFrame) -> DataFrame:
    """Needs data batches, snapshot_entries and partition_ends; `snapshot_mismatch` findings: an entry whose
    last offset is not below the snapshot offset, or that disagrees with the producer's last data batch
    below the snapshot offset while the log still holds that part."""
    events = data.select(*PRODUCER, F.col("last_offset").cast("double").alias("at"),
                         F.struct("last_offset", "last_sequence", "producer_epoch").alias("batch"),
                         F.lit(None).cast("long").alias("snapshot_offset"))
    snaps = snapshots.select(*PRODUCER, (F.col("snapshot_offset") - 0.5).alias("at"),
                             F.lit(None).cast("struct<last_offset:bigint,last_sequence:int,producer_epoch:int>")
                             .alias("batch"), "snapshot_offset")
    w = Window.partitionBy(*PRODUCER).orderBy("at").rowsBetween(Window.unboundedPreceding, 0)
    last_below = (events.unionByName(snaps).withColumn("below", F.last("batch", ignorenulls=True).over(w))
                  .filter(F.col("snapshot_offset").isNotNull())
                  .select(*PRODUCER, "snapshot_offset", "below"))
    checked = (snapshots.join(last_below, [*PRODUCER, "snapshot_offset"], "left").join(ends, KEY, "left")
               .withColumn("covered", F.col("last_offset") >= F.col("log_first_offset")))
    impossible = F.col("last_offset") >= F.col("snapshot_offset")
    disagrees = F.col("covered") & (F.col("below").isNull() | (F.col("below.last_offset") != F.col("last_offset"))
                                    | (F.col("below.last_sequence") != F.col("last_sequence")))
    bad = checked.filter((F.col("last_offset") >= 0) & (impossible | disagrees))
    return to_findings(
        bad, "snapshot_mismatch", position=None, offset="snapshot_offset",
        message=fmt("Producer snapshot %s says producer %d last wrote sequence %d at offset %d, but the log below "
                    "offset %d has %s.", "file", "producer_id", "last_sequence", "last_offset", "snapshot_offset",
                    F.when(F.col("below").isNull(), F.lit("no batch of that producer"))
                    .otherwise(F.format_string("its last batch ending at offset %d with sequence %d",
                                               "below.last_offset", "below.last_sequence"))),
        details={"snapshot_offset": "snapshot_offset", "snapshot_last_offset": "last_offset",
                 "snapshot_last_sequence": "last_sequence", "log_last_offset": "below.last_offset",
                 "log_last_sequence": "below.last_sequence"})


def leader_epoch_mismatches(batches: DataFrame, epochs: DataFrame) -> DataFrame:
    """Needs the batches and leader_epochs tables; `leader_epoch_mismatch` findings: batches whose
    partitionLeaderEpoch is not the epoch the checkpoint assigns to their offset (one per run)."""
    v2 = batches.filter((F.col("magic") == 2) & F.col("crc_valid"))
    rows = v2.select(*KEY, "base_offset", F.lit(1).alias("order"), "partition_leader_epoch", "file", "position",
                     F.lit(None).cast("int").alias("epoch"))
    marks = epochs.select(*KEY, F.col("start_offset").alias("base_offset"), F.lit(0).alias("order"),
                          F.lit(None).cast("int").alias("partition_leader_epoch"),
                          F.col("file").alias("file"), F.lit(None).cast("long").alias("position"), "epoch")
    w = Window.partitionBy(*KEY).orderBy("base_offset", "order").rowsBetween(Window.unboundedPreceding, 0)
    assigned = (rows.unionByName(marks).withColumn("expected_epoch", F.last("epoch", ignorenulls=True).over(w))
                .filter((F.col("order") == 1) & F.col("expected_epoch").isNotNull()))
    # a run: consecutive batches (in offset order) with the same wrong epoch where the checkpoint says the same one
    wrong = F.when(F.col("partition_leader_epoch") != F.col("expected_epoch"),
                   F.concat_ws(":", "partition_leader_epoch", "expected_epoch"))
    in_order = Window.partitionBy(*KEY).orderBy("base_offset")
    runs = (assigned.withColumn("wrong", wrong)
            .withColumn("starts_run", F.coalesce(F.lag("wrong").over(in_order) != F.col("wrong"), F.lit(True)))
            .withColumn("run", F.sum(F.col("starts_run").cast("int")).over(
                in_order.rowsBetween(Window.unboundedPreceding, 0))))
    bad = runs.filter(F.col("wrong").isNotNull())
    first = (bad.groupBy(*KEY, "run", "partition_leader_epoch", "expected_epoch")
             .agg(F.min("base_offset").alias("base_offset"), F.min_by("file", "base_offset").alias("file"),
                  F.min_by("position", "base_offset").alias("position"), F.count(F.lit(1)).alias("batches")))
    return to_findings(
        first, "leader_epoch_mismatch", producer_id=None, producer_epoch=None,
        message=fmt("%d batches from offset %d carry leader epoch %d where leader-epoch-checkpoint says epoch %d.",
                    "batches", "base_offset", "partition_leader_epoch", "expected_epoch"),
        details={"batch_leader_epoch": "partition_leader_epoch", "checkpoint_epoch": "expected_epoch",
                 "batches": "batches"})


def offset_overlaps(batches: DataFrame) -> DataFrame:
    """Needs the batches table; `offset_overlap` findings: a batch whose base offset is not beyond the
    previous batch's last offset, in file order across segments."""
    w = Window.partitionBy(*KEY).orderBy("segment_base_offset", "position")
    prev = batches.filter(F.col("crc_valid")).withColumn("prev_last_offset", F.lag("last_offset").over(w))
    bad = prev.filter(F.col("base_offset") <= F.col("prev_last_offset"))
    return to_findings(
        bad, "offset_overlap",
        message=fmt("Offsets go backwards: the batch at offset %d follows one ending at offset %d.", "base_offset",
                    "prev_last_offset"),
        details={"previous_last_offset": "prev_last_offset"})


def segment_name_mismatches(segments: DataFrame) -> DataFrame:
    """Needs the segments table; `segment_name_mismatch` findings: a segment named after an offset above its
    first batch, or overlapping the next segment."""
    w = Window.partitionBy(*KEY).orderBy("base_offset")
    seg = segments.withColumn("next_base_offset", F.lead("base_offset").over(w))
    bad = seg.filter((F.col("base_offset") > F.col("first_batch_base_offset"))
                     | (F.col("last_offset") >= F.col("next_base_offset")))
    return to_findings(
        bad, "segment_name_mismatch", position=None, offset="first_batch_base_offset", producer_id=None,
        producer_epoch=None,
        message=fmt("Segment %s is named for offset %d but holds offsets %d-%d (next segment starts at %s).", "file",
                    "base_offset", "first_batch_base_offset", "last_offset",
                    F.coalesce(F.col("next_base_offset").cast("string"), F.lit("none"))),
        details={"name_offset": "base_offset", "first_batch_base_offset": "first_batch_base_offset",
                 "last_offset": "last_offset", "next_segment_base_offset": "next_base_offset"})
