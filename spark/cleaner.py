"""Compaction held back by a transaction.

The log cleaner never cleans past the last stable offset (LogCleanerManager's firstUncleanableDirtyOffset is
the least of the LSO, the active segment's base offset and the compaction lag): on a compacted partition an
open transaction stops compaction at its first offset, and a hanging one lets the partition grow without
bound (KIP-664). A partition is compacted when the broker's cleaner-offset-checkpoint has an entry for it.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from kforensics.spark.findings import KEY, fmt, to_findings


def cleaner_holds(txns: DataFrame, ends: DataFrame, batches: DataFrame, txn_timeout_ms: int) -> DataFrame:
    """Needs transactions_table (producer_id, producer_epoch, first_offset, first_timestamp, outcome, file,
    position), partition_ends (cleaner_offset, high_watermark, log_end_offset, log_end_timestamp) and the batches
    table (last_offset, size); one row per partition with a cleaner-offset-checkpoint entry whose LSO an open
    transaction older than `txn_timeout_ms` holds below the log end: cleaner_offset, last_stable_offset,
    held_by_producer_id, producer_epoch, txn_first_offset, age_ms_at_log_end, bytes_behind (the sizes of the
    batches from the one holding the LSO to the log end), file and position of the transaction's first batch."""
    first_open = (txns.filter((F.col("outcome") == "OPEN") & F.col("first_offset").isNotNull())
                  .groupBy(*KEY).agg(F.min("first_offset").alias("txn_first_offset"),
                                     F.min_by("producer_id", "first_offset").alias("held_by_producer_id"),
                                     F.min_by("producer_epoch", "first_offset").alias("producer_epoch"),
                                     F.min_by("first_timestamp", "first_offset").alias("first_timestamp"),
                                     F.min_by("file", "first_offset").alias("file"),
                                     F.min_by("position", "first_offset").alias("position")))
    held = (ends.filter(F.col("cleaner_offset").isNotNull()).join(first_open, KEY)
            .withColumn("last_stable_offset", F.least("txn_first_offset", F.coalesce("high_watermark",
                                                                                     "log_end_offset")))
            .withColumn("age_ms_at_log_end", F.col("log_end_timestamp") - F.col("first_timestamp"))
            # held by the transaction itself (not by a high watermark below it), below the log end, for too long
            .filter((F.col("last_stable_offset") == F.col("txn_first_offset"))
                    & (F.col("last_stable_offset") < F.col("log_end_offset"))
                    & (F.col("age_ms_at_log_end") > txn_timeout_ms)))
    behind = (batches.join(held.select(*KEY, "last_stable_offset"), KEY)
              .filter(F.col("last_offset") >= F.col("last_stable_offset"))
              .groupBy(*KEY).agg(F.sum("size").cast("long").alias("bytes_behind")))
    return held.join(behind, KEY, "left").select(
        *KEY, "cleaner_offset", "last_stable_offset", "held_by_producer_id", "producer_epoch", "txn_first_offset",
        "age_ms_at_log_end", F.coalesce("bytes_behind", F.lit(0)).alias("bytes_behind"), "file", "position")


def cleaner_blocked(holds: DataFrame, txn_timeout_ms: int) -> DataFrame:
    """Needs cleaner_holds' output; `cleaner_blocked` findings (warning) with cleaner_offset, last_stable_offset,
    held_by_producer_id, txn_first_offset, bytes_behind."""
    return to_findings(
        holds, "cleaner_blocked", offset="txn_first_offset", producer_id="held_by_producer_id",
        message=fmt("Compaction of %s-%d stops at the last stable offset %d: producer %d's transaction, open since "
                    "offset %d for %d ms (timeout %d ms), holds it, so the log cleaner (checkpointed at %d) leaves "
                    "the %d bytes from there to the log end uncleaned and the partition keeps growing.",
                    "topic", "partition", "last_stable_offset", "held_by_producer_id", "txn_first_offset",
                    "age_ms_at_log_end", F.lit(txn_timeout_ms), "cleaner_offset", "bytes_behind"),
        details={"cleaner_offset": "cleaner_offset", "last_stable_offset": "last_stable_offset",
                 "held_by_producer_id": "held_by_producer_id", "txn_first_offset": "txn_first_offset",
                 "bytes_behind": "bytes_behind"})
