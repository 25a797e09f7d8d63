"""Producer histories: sequence gaps, duplicates, zombie epochs and the `producers` facts table.

Broker rules (FORMATS.md §7): within one producer id and epoch each batch's base sequence is the
previous last sequence + 1, wrapping 2147483647 -> 0; a new epoch starts again at 0; a producer whose
history starts mid-sequence (retention, compaction, expiry) is not a gap; control batches carry no
sequence; transactional sequences run on across commits and aborts.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from kforensics.defaults import DEFAULT_RESEND_MIN_RECORDS, DEFAULT_RESEND_TAIL
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


RESEND_SCHEMA = ("broker string, topic string, partition int, pid_a long, pid_b long, producer_epoch int, "
                 "matches long, a_first_offset long, a_last_offset long, b_first_offset long, b_last_offset long, "
                 "ms_between long")


def producer_spans(data: DataFrame) -> DataFrame:
    """Needs data batches; per (partition, producer id): first_offset, last_offset, first_ts (its first record's
    timestamp), last_ts (its last batch's max timestamp) and record_count, from the batch headers alone."""
    first_record_ts = F.when(F.col("timestamp_type") == "LogAppendTime", F.col("max_timestamp")).otherwise(
        F.col("base_timestamp"))
    return data.groupBy(*PRODUCER).agg(
        F.min("base_offset").alias("first_offset"), F.max("last_offset").alias("last_offset"),
        F.min_by(first_record_ts, "base_offset").alias("first_ts"),
        F.max_by("max_timestamp", "base_offset").alias("last_ts"), F.sum("count").cast("long").alias("record_count"))


def resend_candidates(spans: DataFrame, *, window_ms: int) -> DataFrame:
    """Needs producer_spans; pairs (pid_a, pid_b) of a partition where pid_b's history starts after pid_a's
    last record in the log and its first write comes within `window_ms` of pid_a's last write (0: any time)."""
    a = spans.select(*KEY, F.col("producer_id").alias("pid_a"), F.col("last_offset").alias("a_last_offset"),
                     F.col("last_ts").alias("a_last_ts"))
    b = spans.select(*KEY, F.col("producer_id").alias("pid_b"), F.col("first_offset").alias("b_first_offset"),
                     F.col("first_ts").alias("b_first_ts"))
    pairs = a.join(b, KEY).filter((F.col("pid_a") != F.col("pid_b"))
                                  & (F.col("a_last_offset") < F.col("b_first_offset")))
    if window_ms > 0:
        pairs = pairs.filter(F.abs(F.col("b_first_ts") - F.col("a_last_ts")) <= window_ms)
    return pairs.select(*KEY, "pid_a", "pid_b")


def resend_batches(data: DataFrame, pairs: DataFrame, *, tail: int) -> DataFrame:
    """Needs data batches (file, position, count) and resend_candidates' pairs; the batches whose records a
    re-send check compares, decided from the headers: those holding the first `tail` records of each newer
    producer id (pid_b) and the last `tail` records of each earlier one (pid_a). Columns: KEY, file, position, size.
    Only these records are ever decoded and hashed, however long the histories are."""
    order = Window.partitionBy(*PRODUCER).orderBy("base_offset", "segment_base_offset", "position")
    before = F.coalesce(F.sum("count").over(order.rowsBetween(Window.unboundedPreceding, -1)), F.lit(0))
    after = F.coalesce(F.sum("count").over(order.rowsBetween(1, Window.unboundedFollowing)), F.lit(0))
    newer = pairs.select(*KEY, F.col("pid_b").alias("producer_id")).distinct().withColumn("newer", F.lit(True))
    earlier = pairs.select(*KEY, F.col("pid_a").alias("producer_id")).distinct().withColumn("earlier", F.lit(True))
    ranked = (data.join(newer, PRODUCER, "left").join(earlier, PRODUCER, "left")
              .filter(F.col("newer") | F.col("earlier"))
              .withColumn("records_before", before).withColumn("records_after", after))
    needed = ((F.col("newer") & (F.col("records_before") < tail))
              | (F.col("earlier") & (F.col("records_after") < tail)))
    return ranked.filter(needed).select(*KEY, "file", "position", "size")


def _head_and_tail(records: DataFrame, tail: int) -> tuple[DataFrame, DataFrame]:
    """Each producer id's first `tail` records among `records` (the head a re-send starts with) and its last
    `tail` (where it comes from)."""
    first = Window.partitionBy(*PRODUCER).orderBy("offset")
    last = Window.partitionBy(*PRODUCER).orderBy(F.col("offset").desc())
    null = F.lit(-(2**63))  # a null key or value (pandas would make it NaN, which equals nothing)
    cols = [*PRODUCER, "offset", "timestamp", "producer_epoch", F.coalesce("key_hash", null).alias("key_hash"),
            F.coalesce("value_hash", null).alias("value_hash")]
    ranked = records.select(*cols).withColumn("from_start", F.row_number().over(first)).withColumn(
        "from_end", F.row_number().over(last))
    return ranked.filter(F.col("from_start") <= tail), ranked.filter(F.col("from_end") <= tail)


def longest_prefix_matches(head: list, tail: list) -> list[int]:
    """For each position j of `tail`, how many elements of `head` match tail[j], tail[j+1], ... in order (the
    Z-algorithm over head + separator + tail: linear in their lengths, whatever repeats in them)."""
    sep = object()
    s = [*head, sep, *tail]
    n = len(s)
    z = [0] * n
    left = right = 0
    for i in range(1, n):
        if i < right:
            z[i] = min(right - i, z[i - left])
        while i + z[i] < n and s[z[i]] == s[i + z[i]]:
            z[i] += 1
        if i + z[i] > right:
            left, right = i, i + z[i]
    return z[len(head) + 1:]


def _match_resends(min_records: int) -> Callable[[pd.DataFrame], pd.DataFrame]:
    def match(group: pd.DataFrame) -> pd.DataFrame:
        """One new producer id's head against the tails of its candidate predecessors."""
        out = []
        head = group[group["role"] == "head"].sort_values("offset")
        h = list(zip(head["key_hash"], head["value_hash"], strict=True))
        for pid_a, tail in group[group["role"] == "tail"].groupby("pid_a"):
            tail = tail.sort_values("offset")
            t = list(zip(tail["key_hash"], tail["value_hash"], strict=True))
            z = longest_prefix_matches(h, t)
            anchors = [j for j, k in enumerate(z) if k >= min_records]
            # The run's first records must stand once in the earlier tail: a stream that repeats its own
            # records (heartbeats, status) matches everywhere, and that is its nature, not a re-send.
            if len(anchors) != 1:
                continue
            j = anchors[0]
            k = z[j]
            out.append({**{c: head.iloc[0][c] for c in KEY}, "pid_a": pid_a, "pid_b": head.iloc[0]["producer_id"],
                        "producer_epoch": head.iloc[0]["producer_epoch"], "matches": k,
                        "a_first_offset": tail.iloc[j]["offset"], "a_last_offset": tail.iloc[j + k - 1]["offset"],
                        "b_first_offset": head.iloc[0]["offset"], "b_last_offset": head.iloc[k - 1]["offset"],
                        "ms_between": head.iloc[0]["timestamp"] - tail.iloc[-1]["timestamp"]})
        return pd.DataFrame(out, columns=[c.split(" ")[0] for c in RESEND_SCHEMA.split(", ")])

    return match


def resends(records: DataFrame, pairs: DataFrame, *, min_records: int = DEFAULT_RESEND_MIN_RECORDS,
            tail: int = DEFAULT_RESEND_TAIL) -> DataFrame:
    """Needs record rows of resend_batches and resend_candidates' pairs; one row per re-send (RESEND_SCHEMA): a
    run of at least `min_records` consecutive records at the start of pid_b's history in a partition that
    equals, record for record (key and value hashes), a consecutive run among pid_a's last `tail` records. The
    work grows with the number of producer ids and with `tail`, never with how often a value repeats."""
    heads, tails = _head_and_tail(records, tail)
    b_side = heads.join(pairs.select(*KEY, F.col("pid_b").alias("producer_id")).distinct(), PRODUCER, "left_semi")
    a_side = tails.join(pairs.withColumnRenamed("pid_a", "producer_id"), PRODUCER)
    # grouped by the new producer id: its head, and the tail of each candidate predecessor (pid_a)
    rows = (b_side.select(*KEY, "producer_id", F.lit(None).cast("long").alias("pid_a"), F.lit("head").alias("role"),
                          "offset", "timestamp", "producer_epoch", "key_hash", "value_hash")
            .unionByName(a_side.select(*KEY, F.col("pid_b").alias("producer_id"), F.col("producer_id").alias("pid_a"),
                                       F.lit("tail").alias("role"), "offset", "timestamp", "producer_epoch",
                                       "key_hash", "value_hash")))
    return rows.groupBy(*PRODUCER).applyInPandas(_match_resends(min_records), RESEND_SCHEMA)


def content_duplicates(found: DataFrame) -> DataFrame:
    """Needs resends' rows; `content_duplicate` findings."""
    return to_findings(
        found, "content_duplicate", file=None, position=None, offset="b_first_offset", producer_id="pid_b",
        message=fmt("Producer %d re-sent %d records that producer %d had written (offsets %d-%d again at %d-%d, "
                    "%d ms after producer %d's last write): duplicates the broker could not detect.", "pid_b",
                    "matches", "pid_a", "a_first_offset", "a_last_offset", "b_first_offset", "b_last_offset",
                    "ms_between", "pid_a"),
        details={"producer_ids": F.array("pid_a", "pid_b"), "matches": "matches",
                 "original_offsets": F.array("a_first_offset", "a_last_offset"),
                 "resent_offsets": F.array("b_first_offset", "b_last_offset"), "ms_between": "ms_between"})
