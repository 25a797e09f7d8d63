"""Compaction held back by a transaction.

The log cleaner never cleans past the last stable offset (LogCleanerManager's firstUncleanableDirtyOffset is
the least of the LSO, the active segment's base offset and the compaction lag): on a compacted partition an
open transaction stops compaction at its first offset, and a hanging one lets the partition grow without
bound (KIP-664). A partition is compacted when the broker's cleaner-offset-checkpoint has an entry for it.
"""

from __future__ import annotations

from pyspark.sql import DataFrame

from kforensics.spark.findings import finding_columns, findings_sql, fmt_sql
from kforensics.spark.transactions import (
    TWO_PHASE_COMMIT_TIMEOUT_MS,
    hanging_transaction_sql,
    timeout_sql,
    with_timeouts,
)
from kforensics.spark.views import run_sql

HOLDS_COLUMNS = ("broker, topic, partition, cleaner_offset, last_stable_offset, held_by_producer_id, producer_epoch, "
                 "txn_first_offset, age_ms_at_log_end, bytes_behind, file, position, timeout_ms")


def _holds_ctes(txn_timeout_ms: int) -> str:
    """The CTEs first_open, held, behind and holds (cleaner_holds' rows) over `{txns}`, `{ends}`, `{batches}`."""
    return f"""
        first_open AS (
            SELECT broker, topic, partition, min(first_offset) AS txn_first_offset,
                   min_by(producer_id, first_offset) AS held_by_producer_id,
                   min_by(producer_epoch, first_offset) AS producer_epoch,
                   min_by(first_timestamp, first_offset) AS first_timestamp,
                   min_by(file, first_offset) AS file, min_by(position, first_offset) AS position,
                   min_by({timeout_sql(txn_timeout_ms)}, first_offset) AS timeout_ms
            FROM {{txns}} WHERE outcome = 'OPEN' AND first_offset IS NOT NULL
            GROUP BY broker, topic, partition),
        held AS (
            SELECT * FROM (
                SELECT *, least(txn_first_offset, coalesce(high_watermark, log_end_offset)) AS last_stable_offset,
                       log_end_timestamp - first_timestamp AS age_ms_at_log_end
                FROM (SELECT * FROM {{ends}} WHERE cleaner_offset IS NOT NULL)
                JOIN first_open USING (broker, topic, partition))
            -- held by the transaction itself (not by a high watermark below it), below the log end, for too long
            WHERE last_stable_offset = txn_first_offset AND last_stable_offset < log_end_offset
              AND age_ms_at_log_end > timeout_ms AND timeout_ms != {TWO_PHASE_COMMIT_TIMEOUT_MS}),
        behind AS (
            SELECT broker, topic, partition, CAST(sum(size) AS BIGINT) AS bytes_behind
            FROM {{batches}} JOIN (SELECT broker, topic, partition, last_stable_offset FROM held)
                 USING (broker, topic, partition)
            WHERE last_offset >= last_stable_offset
            GROUP BY broker, topic, partition),
        holds AS (
            SELECT broker, topic, partition, cleaner_offset, last_stable_offset, held_by_producer_id,
                   producer_epoch, txn_first_offset, age_ms_at_log_end, coalesce(bytes_behind, 0) AS bytes_behind,
                   file, position, timeout_ms
            FROM held LEFT JOIN behind USING (broker, topic, partition))"""


def _blocked_columns(txn_timeout_ms: int) -> str:
    """The SELECT list of `cleaner_blocked` findings over cleaner_holds' rows."""
    return finding_columns(
        "cleaner_blocked", offset="txn_first_offset", producer_id="held_by_producer_id",
        message=fmt_sql("Compaction of %s-%d stops at the last stable offset %d: producer %d's transaction, open "
                        "since offset %d for %d ms (timeout %d ms), holds it, so the log cleaner (checkpointed at "
                        "%d) leaves the %d bytes from there to the log end uncleaned and the partition keeps "
                        "growing.",
                        "topic", "partition", "last_stable_offset", "held_by_producer_id", "txn_first_offset",
                        "age_ms_at_log_end", "timeout_ms", "cleaner_offset", "bytes_behind"),
        details={"cleaner_offset": "cleaner_offset", "last_stable_offset": "last_stable_offset",
                 "held_by_producer_id": "held_by_producer_id", "txn_first_offset": "txn_first_offset",
                 "bytes_behind": "bytes_behind"})


def cleaner_blocked_sql(txn_timeout_ms: int) -> str:
    """The `cleaner_blocked` fragment, holds and findings: reads `{txns}` (transactions_table), `{ends}`
    (partition_ends) and `{batches}` (last_offset, size), with the columns cleaner_holds needs."""
    return f"WITH {_holds_ctes(txn_timeout_ms)} SELECT {_blocked_columns(txn_timeout_ms)} FROM holds"


def cleaner_holds(txns: DataFrame, ends: DataFrame, batches: DataFrame, txn_timeout_ms: int) -> DataFrame:
    """Needs transactions_table (producer_id, producer_epoch, first_offset, first_timestamp, outcome, file,
    position), partition_ends (cleaner_offset, high_watermark, log_end_offset, log_end_timestamp) and the batches
    table (last_offset, size); one row per partition with a cleaner-offset-checkpoint entry whose LSO an open
    transaction older than its timeout (its transactional id's, else `txn_timeout_ms`; never a two-phase-commit
    one) holds below the log end: cleaner_offset, last_stable_offset, held_by_producer_id, producer_epoch,
    txn_first_offset, age_ms_at_log_end, bytes_behind (the sizes of the batches from the one holding the LSO to the
    log end), file and position of the transaction's first batch, timeout_ms (the timeout it was judged by)."""
    return run_sql(f"WITH {_holds_ctes(txn_timeout_ms)} SELECT {HOLDS_COLUMNS} FROM holds",
                   txns=with_timeouts(txns), ends=ends, batches=batches)


def cleaner_blocked(holds: DataFrame, txn_timeout_ms: int) -> DataFrame:
    """Needs cleaner_holds' output; `cleaner_blocked` findings (warning) with cleaner_offset, last_stable_offset,
    held_by_producer_id, txn_first_offset, bytes_behind."""
    return findings_sql([f"SELECT {_blocked_columns(txn_timeout_ms)} FROM {{holds}}"], holds=holds)


def transaction_fragments(txn_timeout_ms: int) -> list[str]:
    """The fragments of the `hanging_transaction` and `cleaner_blocked` checks, over {txns} (transactions_table),
    {ends} (partition_ends) and {batches}."""
    return [hanging_transaction_sql(txn_timeout_ms), cleaner_blocked_sql(txn_timeout_ms)]
