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
from kforensics.spark.findings import KEY, finding_columns, findings_sql, fmt, fmt_sql, to_findings

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


def _producer_window(order: str = "base_offset, segment_base_offset, position") -> str:
    return f"PARTITION BY broker, topic, partition, producer_id ORDER BY {order}"


def sequence_gap_sql() -> str:
    """Reads {data} (data batches with leader_epoch_change); the `sequence_gap` fragment: per producer, each batch
    against the previous one (prev_epoch, prev_count, prev_base_offset, expected_sequence, gap mod 2^31)."""
    message = fmt_sql(
        "Producer %d epoch %d jumps from sequence %d to %d at offset %d: %d sequence numbers are missing (%s gap%s).",
        "producer_id", "producer_epoch", "expected_sequence - 1", "base_sequence", "base_offset", "gap", "size_class",
        "CASE WHEN leader_epoch_change THEN ', at the first batch of a new leader epoch' ELSE '' END")
    return f"""
    WITH previous AS (
      SELECT *, lag(producer_epoch) OVER w AS prev_epoch, lag(count) OVER w AS prev_count,
             lag(base_offset) OVER w AS prev_base_offset,
             (CAST(lag(last_sequence) OVER w AS BIGINT) + 1) % {SEQUENCE_SPACE} AS expected_sequence
      FROM {{data}} WINDOW w AS ({_producer_window()})),
    gaps AS (
      SELECT *, CASE WHEN gap <= prev_count * {MAX_IN_FLIGHT_BATCHES} THEN 'small' ELSE 'large' END AS size_class
      FROM (SELECT *, pmod(base_sequence - expected_sequence, {SEQUENCE_SPACE}) AS gap FROM previous)
      WHERE prev_epoch = producer_epoch AND gap > 0 AND gap < {SEQUENCE_SPACE // 2})
    SELECT {finding_columns("sequence_gap", message=message, details={
        "expected_sequence": "expected_sequence", "found_sequence": "base_sequence", "gap_size": "gap",
        "size_class": "size_class", "leader_epoch_change": "leader_epoch_change",
        "previous_batch_offset": "prev_base_offset"})}
    FROM gaps"""


def sequence_gaps(data: DataFrame) -> DataFrame:
    """Needs data batches and leader_epoch_change; returns `sequence_gap` findings."""
    return findings_sql([sequence_gap_sql()], data=data)


def duplicate_sequence_sql() -> str:
    """Reads {data} (data batches); the `duplicate_sequence` fragment: one finding per repeated (producer, epoch,
    range), located at the second copy."""
    copies = "PARTITION BY broker, topic, partition, producer_id, producer_epoch, base_sequence, last_sequence " \
             "ORDER BY base_offset"
    message = fmt_sql("Producer %d epoch %d wrote sequences %d-%d again at offset %d (first at offset %d): the "
                      "broker's deduplication was defeated.", "producer_id", "producer_epoch", "base_sequence",
                      "last_sequence", "base_offset", "element_at(offsets, 1)")
    return f"""
    SELECT {finding_columns("duplicate_sequence", message=message, details={
        "sequence_range": "array(base_sequence, last_sequence)", "offsets": "offsets"})}
    FROM (SELECT *, row_number() OVER ({copies}) AS copy,
                 collect_list(base_offset) OVER ({copies} ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
                   AS offsets
          FROM {{data}})
    WHERE copy = 2"""


def duplicate_sequences(data: DataFrame) -> DataFrame:
    """Needs data batches; returns `duplicate_sequence` findings, one per repeated (producer, epoch, range),
    located at the second copy."""
    return findings_sql([duplicate_sequence_sql()], data=data)


def zombie_epoch_sql() -> str:
    """Reads {batches}; the `zombie_epoch` fragment: data written with an epoch lower than one already written
    (data or marker) for that producer id, with the offset where the newer epoch began."""
    message = fmt_sql("Producer %d wrote with epoch %d at offset %d after epoch %d had been written (from offset %d): "
                      "a fenced zombie producer.", "producer_id", "producer_epoch", "base_offset", "newer_epoch",
                      "newer_epoch_first_offset")
    return f"""
    WITH producer_batches AS (
      SELECT * FROM {{batches}} WHERE magic = 2 AND producer_id >= 0 AND crc_valid),
    zombies AS (
      SELECT * FROM (
        SELECT *, max(producer_epoch) OVER ({_producer_window()} ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
                  AS newer_epoch
        FROM producer_batches)
      WHERE NOT is_control AND producer_epoch < newer_epoch),
    first_of_epoch AS (
      SELECT broker, topic, partition, producer_id, producer_epoch AS newer_epoch,
             min(base_offset) AS newer_epoch_first_offset
      FROM producer_batches GROUP BY broker, topic, partition, producer_id, producer_epoch)
    SELECT {finding_columns("zombie_epoch", message=message, details={
        "newer_epoch": "newer_epoch", "newer_epoch_first_offset": "newer_epoch_first_offset"})}
    FROM zombies LEFT JOIN first_of_epoch USING (broker, topic, partition, producer_id, newer_epoch)"""


def zombie_epochs(batches: DataFrame) -> DataFrame:
    """Needs the batches columns; returns `zombie_epoch` findings: data written with an epoch lower than one
    already written (data or marker) for that producer id."""
    return findings_sql([zombie_epoch_sql()], batches=batches)


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
