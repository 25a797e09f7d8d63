"""The log against its companions: producer snapshots, leader-epoch-checkpoint, and segment naming; and the log's
own checks (these and the producer histories') as one statement."""

from __future__ import annotations

from pyspark.sql import DataFrame

from kforensics.spark import producers
from kforensics.spark.findings import finding_columns, findings_sql, fmt_sql


def snapshot_mismatch_sql() -> str:
    """Reads {data} (data batches), {snapshots} (snapshot_entries) and {ends} (partition_ends); the
    `snapshot_mismatch` fragment: an entry whose last offset is not below the snapshot offset, or that disagrees with
    the producer's last data batch below the snapshot offset while the log still holds that part (below the
    cleaner offset, a batch the log cleaner deleted is not held)."""
    below = fmt_sql("its last batch ending at offset %d with sequence %d", "below.last_offset", "below.last_sequence")
    message = fmt_sql("Producer snapshot %s says producer %d last wrote sequence %d at offset %d, but the log below "
                      "offset %d has %s.", "file", "producer_id", "last_sequence", "last_offset", "snapshot_offset",
                      f"CASE WHEN below IS NULL THEN 'no batch of that producer' ELSE {below} END")
    return f"""
    WITH events AS (
      SELECT broker, topic, partition, producer_id, CAST(last_offset AS DOUBLE) AS `at`,
             named_struct('last_offset', last_offset, 'last_sequence', last_sequence,
                          'producer_epoch', producer_epoch) AS batch,
             CAST(NULL AS BIGINT) AS snapshot_offset
      FROM {{data}}
      UNION ALL
      SELECT broker, topic, partition, producer_id, snapshot_offset - 0.5 AS `at`,
             CAST(NULL AS STRUCT<last_offset: BIGINT, last_sequence: INT, producer_epoch: INT>) AS batch, snapshot_offset
      FROM {{snapshots}}),
    last_below AS (
      SELECT broker, topic, partition, producer_id, snapshot_offset, below FROM (
        SELECT *, last(batch, true) OVER (PARTITION BY broker, topic, partition, producer_id ORDER BY `at`
                                          ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS below
        FROM events)
      WHERE snapshot_offset IS NOT NULL),
    checked AS (
      SELECT *, last_offset >= log_first_offset AS covered
      FROM {{snapshots}} LEFT JOIN last_below USING (broker, topic, partition, producer_id, snapshot_offset)
           LEFT JOIN {{ends}} USING (broker, topic, partition))
    SELECT {finding_columns("snapshot_mismatch", message=message, position=None, offset="snapshot_offset", details={
        "snapshot_offset": "snapshot_offset", "snapshot_last_offset": "last_offset",
        "snapshot_last_sequence": "last_sequence", "log_last_offset": "below.last_offset",
        "log_last_sequence": "below.last_sequence"})}
    FROM checked
    WHERE last_offset >= 0 AND (last_offset >= snapshot_offset
                                OR (covered AND (below IS NULL OR below.last_offset != last_offset
                                                 OR below.last_sequence != last_sequence)
                                    -- the log cleaner deleted the batch the entry names (all its records
                                    -- superseded, MemoryRecords.filterTo DELETE_EMPTY; a thinned batch keeps its
                                    -- lastOffset): only an earlier batch of the producer, or none, is left below
                                    AND NOT coalesce(last_offset < cleaner_offset
                                                     AND (below IS NULL OR below.last_offset < last_offset), false)))"""


def snapshot_mismatches(data: DataFrame, snapshots: DataFrame, ends: DataFrame) -> DataFrame:
    """Needs data batches, snapshot_entries and partition_ends; `snapshot_mismatch` findings: an entry whose
    last offset is not below the snapshot offset, or that disagrees with the producer's last data batch
    below the snapshot offset while the log still holds that part."""
    return findings_sql([snapshot_mismatch_sql()], data=data, snapshots=snapshots, ends=ends)


def leader_epoch_mismatch_sql() -> str:
    """Reads {batches} and {epochs} (leader_epochs); the `leader_epoch_mismatch` fragment: batches whose
    partitionLeaderEpoch is not the epoch the checkpoint assigns to their offset, one finding per run of
    consecutive batches (in offset order) with the same wrong epoch where the checkpoint says the same one."""
    in_order = "PARTITION BY broker, topic, partition ORDER BY base_offset"
    message = fmt_sql("%d batches from offset %d carry leader epoch %d where leader-epoch-checkpoint says epoch %d.",
                      "batches", "base_offset", "partition_leader_epoch", "expected_epoch")
    return f"""
    WITH marks AS (
      SELECT broker, topic, partition, base_offset, 1 AS `order`, partition_leader_epoch, file, position,
             CAST(NULL AS INT) AS epoch
      FROM {{batches}} WHERE magic = 2 AND crc_valid
      UNION ALL
      SELECT broker, topic, partition, start_offset AS base_offset, 0 AS `order`,
             CAST(NULL AS INT) AS partition_leader_epoch, file, CAST(NULL AS BIGINT) AS position, epoch
      FROM {{epochs}}),
    assigned AS (
      SELECT *, CASE WHEN partition_leader_epoch != expected_epoch
                     THEN concat_ws(':', partition_leader_epoch, expected_epoch) END AS wrong
      FROM (SELECT *, last(epoch, true) OVER (PARTITION BY broker, topic, partition ORDER BY base_offset, `order`
                                              ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS expected_epoch
            FROM marks)
      WHERE `order` = 1 AND expected_epoch IS NOT NULL),
    runs AS (
      SELECT *, sum(CAST(starts_run AS INT)) OVER ({in_order} ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS run
      FROM (SELECT *, coalesce(lag(wrong) OVER ({in_order}) != wrong, true) AS starts_run FROM assigned)),
    first_of_run AS (
      SELECT broker, topic, partition, run, partition_leader_epoch, expected_epoch, min(base_offset) AS base_offset,
             min_by(file, base_offset) AS file, min_by(position, base_offset) AS position, count(1) AS batches
      FROM runs WHERE wrong IS NOT NULL
      GROUP BY broker, topic, partition, run, partition_leader_epoch, expected_epoch)
    SELECT {finding_columns("leader_epoch_mismatch", message=message, producer_id=None, producer_epoch=None, details={
        "batch_leader_epoch": "partition_leader_epoch", "checkpoint_epoch": "expected_epoch", "batches": "batches"})}
    FROM first_of_run"""


def leader_epoch_mismatches(batches: DataFrame, epochs: DataFrame) -> DataFrame:
    """Needs the batches and leader_epochs tables; `leader_epoch_mismatch` findings: batches whose
    partitionLeaderEpoch is not the epoch the checkpoint assigns to their offset (one per run)."""
    return findings_sql([leader_epoch_mismatch_sql()], batches=batches, epochs=epochs)


def offset_overlap_sql() -> str:
    """Reads {batches}; the `offset_overlap` fragment: a batch whose base offset is not beyond the previous batch's
    last offset, in file order across segments."""
    message = fmt_sql("Offsets go backwards: the batch at offset %d follows one ending at offset %d.", "base_offset",
                      "prev_last_offset")
    return f"""
    SELECT {finding_columns("offset_overlap", message=message, details={"previous_last_offset": "prev_last_offset"})}
    FROM (SELECT *, lag(last_offset) OVER (PARTITION BY broker, topic, partition ORDER BY segment_base_offset, position)
                    AS prev_last_offset
          FROM {{batches}} WHERE crc_valid)
    WHERE base_offset <= prev_last_offset"""


def offset_overlaps(batches: DataFrame) -> DataFrame:
    """Needs the batches table; `offset_overlap` findings: a batch whose base offset is not beyond the
    previous batch's last offset, in file order across segments."""
    return findings_sql([offset_overlap_sql()], batches=batches)


def segment_name_mismatch_sql() -> str:
    """Reads {segments}; the `segment_name_mismatch` fragment: a segment named after an offset above its first
    batch, or overlapping the next segment."""
    message = fmt_sql("Segment %s is named for offset %d but holds offsets %d-%d (next segment starts at %s).", "file",
                      "base_offset", "first_batch_base_offset", "last_offset",
                      "coalesce(CAST(next_base_offset AS STRING), 'none')")
    return f"""
    SELECT {finding_columns("segment_name_mismatch", message=message, position=None, offset="first_batch_base_offset",
                            producer_id=None, producer_epoch=None, details={
        "name_offset": "base_offset", "first_batch_base_offset": "first_batch_base_offset",
        "last_offset": "last_offset", "next_segment_base_offset": "next_base_offset"})}
    FROM (SELECT *, lead(base_offset) OVER (PARTITION BY broker, topic, partition ORDER BY base_offset)
                    AS next_base_offset
          FROM {{segments}})
    WHERE base_offset > first_batch_base_offset OR last_offset >= next_base_offset"""


def segment_name_mismatches(segments: DataFrame) -> DataFrame:
    """Needs the segments table; `segment_name_mismatch` findings: a segment named after an offset above its
    first batch, or overlapping the next segment."""
    return findings_sql([segment_name_mismatch_sql()], segments=segments)


def log_fragments() -> list[str]:
    """The fragments of the log's own checks, over {batches} (the batches table with leader_epoch_change), {data}
    (its data batches), {segments}, {snapshots} (snapshot_entries), {ends} (partition_ends) and {epochs}
    (leader_epochs): sequence_gap, cleaned_sequence_holes, duplicate_sequence, zombie_epoch, snapshot_mismatch,
    leader_epoch_mismatch, offset_overlap and segment_name_mismatch."""
    return [producers.sequence_gap_sql(), producers.cleaned_sequence_holes_sql(), producers.duplicate_sequence_sql(),
            producers.zombie_epoch_sql(),
            snapshot_mismatch_sql(), leader_epoch_mismatch_sql(), offset_overlap_sql(), segment_name_mismatch_sql()]

