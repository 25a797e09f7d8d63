"""Producer histories: sequence gaps, duplicates, zombie epochs and the `producers` facts table.

Broker rules (FORMATS.md §7): within one producer id and epoch each batch's base sequence is the
previous last sequence + 1, wrapping 2147483647 -> 0; a new epoch starts again at 0; a producer whose
history starts mid-sequence (retention, compaction, expiry) is not a gap; control batches carry no
sequence; transactional sequences run on across commits and aborts.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from kforensics.spark.findings import KEY, fmt, to_findings

PRODUCER = [*KEY, "producer_id"]
SEQUENCE_SPACE = 2**31
#: A gap of at most this many batches (of the previous batch's size) could be a lost in-flight window.
MAX_IN_FLIGHT_BATCHES = 5


def with_leader_epoch_change(batches: DataFrame) -> DataFrame:
    """Needs KEY, base_offset, position, partition_leader_epoch; adds `leader_epoch_change` (the batch is the
    first of a new partition leader epoch in its partition)."""
    w = Window.partitionBy(*KEY).orderBy("base_offset", "segment_base_offset", "position")
    prev = F.lag("partition_leader_epoch").over(w)
    return batches.withColumn("leader_epoch_change", prev.isNotNull() & (prev != F.col("partition_leader_epoch")))


def data_batches(batches: DataFrame) -> DataFrame:
    """Needs the batches columns; keeps v2 data batches of idempotent/transactional producers.

    Batches with a bad CRC stay in: the damage is nearly always in the records, and dropping the batch
    would report the sequence numbers it carries as a gap (the CRC finding already names it).
    """
    return batches.filter((F.col("magic") == 2) & (F.col("producer_id") >= 0) & ~F.col("is_control")
                          & (F.col("base_sequence") >= 0))


def with_previous_batch(data: DataFrame) -> DataFrame:
    """Needs PRODUCER, base_offset, producer_epoch, last_sequence, count; adds prev_epoch,
    prev_last_sequence, prev_count, prev_base_offset, expected_sequence and gap (mod 2^31)."""
    w = Window.partitionBy(*PRODUCER).orderBy("base_offset", "segment_base_offset", "position")
    expected = (F.lag("last_sequence").over(w).cast("long") + 1) % SEQUENCE_SPACE
    return (data
            .withColumn("prev_epoch", F.lag("producer_epoch").over(w))
            .withColumn("prev_last_sequence", F.lag("last_sequence").over(w))
            .withColumn("prev_count", F.lag("count").over(w))
            .withColumn("prev_base_offset", F.lag("base_offset").over(w))
            .withColumn("expected_sequence", expected)
            .withColumn("gap", F.pmod(F.col("base_sequence") - expected, F.lit(SEQUENCE_SPACE))))


def sequence_gaps(with_prev: DataFrame) -> DataFrame:
    """Needs with_previous_batch's columns and leader_epoch_change; returns `sequence_gap` findings."""
    gaps = with_prev.filter((F.col("prev_epoch") == F.col("producer_epoch")) & (F.col("gap") > 0)
                            & (F.col("gap") < SEQUENCE_SPACE // 2))
    size_class = F.when(F.col("gap") <= F.col("prev_count") * MAX_IN_FLIGHT_BATCHES, "small").otherwise("large")
    return to_findings(
        gaps.withColumn("size_class", size_class), "sequence_gap",
        message=fmt("Producer %d epoch %d jumps from sequence %d to %d at offset %d: %d sequence numbers are "
                    "missing (%s gap%s).", "producer_id", "producer_epoch", F.col("expected_sequence") - 1,
                    "base_sequence", "base_offset", "gap", "size_class",
                    F.when(F.col("leader_epoch_change"), ", at the first batch of a new leader epoch").otherwise("")),
        details={"expected_sequence": "expected_sequence", "found_sequence": "base_sequence", "gap_size": "gap",
                 "size_class": "size_class", "leader_epoch_change": "leader_epoch_change",
                 "previous_batch_offset": "prev_base_offset"})


def duplicate_sequences(data: DataFrame) -> DataFrame:
    """Needs data batches; returns `duplicate_sequence` findings, one per repeated (producer, epoch, range),
    located at the second copy."""
    w = Window.partitionBy(*PRODUCER, "producer_epoch", "base_sequence", "last_sequence").orderBy("base_offset")
    copies = (data.withColumn("copy", F.row_number().over(w))
              .withColumn("offsets", F.collect_list("base_offset").over(
                  w.rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing))))
    dups = copies.filter(F.col("copy") == 2)
    return to_findings(
        dups, "duplicate_sequence",
        message=fmt("Producer %d epoch %d wrote sequences %d-%d again at offset %d (first at offset %d): the "
                    "broker's deduplication was defeated.", "producer_id", "producer_epoch", "base_sequence",
                    "last_sequence", "base_offset", F.element_at("offsets", 1)),
        details={"sequence_range": F.array("base_sequence", "last_sequence"), "offsets": "offsets"})


def zombie_epochs(batches: DataFrame) -> DataFrame:
    """Needs the batches columns; returns `zombie_epoch` findings: data written with an epoch lower than one
    already written (data or marker) for that producer id."""
    producer_batches = batches.filter((F.col("magic") == 2) & (F.col("producer_id") >= 0) & F.col("crc_valid"))
    w = (Window.partitionBy(*PRODUCER).orderBy("base_offset", "segment_base_offset", "position")
         .rowsBetween(Window.unboundedPreceding, -1))
    seen = producer_batches.withColumn("newer_epoch", F.max("producer_epoch").over(w))
    zombies = seen.filter(~F.col("is_control") & (F.col("producer_epoch") < F.col("newer_epoch")))
    first_of_epoch = (producer_batches.groupBy(*PRODUCER, "producer_epoch")
                      .agg(F.min("base_offset").alias("newer_epoch_first_offset"))
                      .withColumnRenamed("producer_epoch", "newer_epoch"))
    zombies = zombies.join(first_of_epoch, [*PRODUCER, "newer_epoch"], "left")
    return to_findings(
        zombies, "zombie_epoch",
        message=fmt("Producer %d wrote with epoch %d at offset %d after epoch %d had been written (from offset %d): "
                    "a fenced zombie producer.", "producer_id", "producer_epoch", "base_offset", "newer_epoch",
                    "newer_epoch_first_offset"),
        details={"newer_epoch": "newer_epoch", "newer_epoch_first_offset": "newer_epoch_first_offset"})


def producers_table(data: DataFrame) -> DataFrame:
    """Needs data batches; one row per (partition, producer id, epoch): offsets, sequences, counts, times."""
    return (data.groupBy(*PRODUCER, "producer_epoch")
            .agg(F.min("base_offset").alias("first_offset"), F.max("last_offset").alias("last_offset"),
                 F.min_by("base_sequence", "base_offset").alias("first_sequence"),
                 F.max_by("last_sequence", "base_offset").alias("last_sequence"),
                 F.count(F.lit(1)).alias("batch_count"), F.sum("count").cast("long").alias("record_count"),
                 F.min("base_timestamp").alias("first_timestamp"), F.max("max_timestamp").alias("last_timestamp"),
                 F.max(F.col("is_transactional").cast("int")).cast("boolean").alias("is_transactional")))


def content_duplicates(records: DataFrame, *, window_ms: int = 60_000, min_records: int = 3) -> DataFrame:
    """Needs the records table; returns `content_duplicate` findings: a new producer id re-sending records
    (same key and value hashes) that another producer id wrote, starting within `window_ms` after that
    producer's last write, at least `min_records` of them (one equal value is ordinary, a run is a re-send)."""
    keyed = records.filter(F.col("value_hash").isNotNull())
    spans = keyed.groupBy(*PRODUCER).agg(F.min("offset").alias("first_offset"), F.max("offset").alias("last_offset"),
                                         F.min("timestamp").alias("first_ts"), F.max("timestamp").alias("last_ts"))
    a = keyed.alias("a").join(spans.alias("sa"), [*PRODUCER])
    b = keyed.alias("b").join(spans.alias("sb"), [*PRODUCER])
    a = a.select(*KEY, F.col("producer_id").alias("pid_a"), F.col("offset").alias("offset_a"), "key_hash", "value_hash",
                 F.col("last_offset").alias("a_last_offset"), F.col("last_ts").alias("a_last_ts"))
    b = b.select(*KEY, F.col("producer_id").alias("pid_b"), F.col("offset").alias("offset_b"), "key_hash", "value_hash",
                 F.col("first_offset").alias("b_first_offset"), F.col("first_ts").alias("b_first_ts"),
                 F.col("producer_epoch"))
    pairs = (a.join(b, [*KEY, "key_hash", "value_hash"])
             .filter((F.col("pid_a") != F.col("pid_b")) & (F.col("a_last_offset") < F.col("b_first_offset"))
                     & (F.col("b_first_ts") - F.col("a_last_ts") <= window_ms)
                     & (F.col("b_first_ts") >= F.col("a_last_ts") - window_ms)))
    grouped = (pairs.groupBy(*KEY, "pid_a", "pid_b")
               .agg(F.count(F.lit(1)).alias("matches"), F.min("offset_b").alias("first_resent_offset"),
                    F.min("producer_epoch").alias("producer_epoch"),
                    F.slice(F.array_sort(F.collect_list(F.array("offset_a", "offset_b"))), 1, 20).alias("offset_pairs"))
               .filter(F.col("matches") >= min_records))
    return to_findings(
        grouped, "content_duplicate", file=None, position=None, offset="first_resent_offset",
        producer_id="pid_b",
        message=fmt("Producer %d re-sent %d records that producer %d had already written, starting at offset %d "
                    "right after producer %d stopped: duplicates the broker could not detect.", "pid_b", "matches",
                    "pid_a", "first_resent_offset", "pid_a"),
        details={"producer_ids": F.array("pid_a", "pid_b"), "offset_pairs": "offset_pairs", "matches": "matches"})
