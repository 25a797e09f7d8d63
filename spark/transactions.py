"""Transactions, the last stable offset (LSO) and aborted ranges.

A producer's transaction runs from its first transactional data batch after its previous marker to
its COMMIT or ABORT marker; a marker with nothing open is an empty transaction (listed, not flagged).
LSO = min(first offset of every open transaction, high watermark). For an ABORT, the .txnindex
records the LSO at marker time: the first offset of the earliest *other* open transaction, else the
marker offset + 1.
"""

from __future__ import annotations

import heapq

import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from kforensics.spark.findings import KEY, finding_columns, findings_sql, fmt_sql
from kforensics.spark.views import run_sql

PRODUCER = [*KEY, "producer_id"]


def with_transaction_index(batches: DataFrame) -> DataFrame:
    """Needs the batches columns; keeps transactional batches and markers and adds `txn_index`: the number
    of this producer's markers before the row (a marker closes the transaction with its own index)."""
    return run_sql("""
        SELECT *, coalesce(sum(CAST(is_control AS INT)) OVER (
                    PARTITION BY broker, topic, partition, producer_id
                    ORDER BY base_offset, segment_base_offset, `position`
                    ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS txn_index
        FROM {batches}
        WHERE magic = 2 AND producer_id >= 0 AND is_transactional AND crc_valid""", batches=batches)


def transactions_table(indexed: DataFrame) -> DataFrame:
    """Needs with_transaction_index's output (with cleaner_offset); one row per transaction: producer_id,
    producer_epoch, first_offset, last_data_offset, marker_offset, outcome (COMMIT|ABORT|OPEN|UNKNOWN),
    coordinator_epoch, batch_count, record_count, first_timestamp, duration_ms, file and position of the first
    batch. A transaction without a marker whose data lies below the cleaner offset is complete (COMMIT, no marker):
    the log cleaner cleans only below the last stable offset (LogCleanerManager), so it was complete when cleaned, its
    marker since removed past its delete horizon, and its data survived, so it committed (Cleaner: aborted data never
    survives a cleaning)."""
    # a marker whose control record was not read (kafka-dump-log text without record lines, or an empty control
    # batch the log cleaner kept: MemoryRecords.filterTo, RETAIN_EMPTY): UNKNOWN
    return run_sql("""
        SELECT broker, topic, partition, producer_id, coalesce(data_epoch, marker_epoch) AS producer_epoch,
               first_offset, last_data_offset, marker_offset,
               CASE WHEN marker_offset IS NULL AND last_data_offset < cleaner_offset THEN 'COMMIT'
                    WHEN marker_offset IS NULL THEN 'OPEN' ELSE coalesce(outcome, 'UNKNOWN') END AS outcome,
               coordinator_epoch, CAST(coalesce(batch_count, 0) AS BIGINT) AS batch_count,
               CAST(coalesce(record_count, 0) AS BIGINT) AS record_count, first_timestamp,
               marker_timestamp - first_timestamp AS duration_ms, coalesce(file, marker_file) AS file,
               coalesce(`position`, marker_position) AS `position`, txn_index
        FROM (
            SELECT broker, topic, partition, producer_id, txn_index, min(base_offset) AS first_offset,
                   max(last_offset) AS last_data_offset, max_by(producer_epoch, base_offset) AS data_epoch,
                   count(1) AS batch_count, CAST(sum(`count`) AS BIGINT) AS record_count,
                   min(max_timestamp) AS first_timestamp, min_by(file, base_offset) AS file,
                   min_by(`position`, base_offset) AS `position`, max(cleaner_offset) AS cleaner_offset
            FROM {indexed} WHERE NOT is_control
            GROUP BY broker, topic, partition, producer_id, txn_index)
        FULL OUTER JOIN (
            SELECT broker, topic, partition, producer_id, txn_index, base_offset AS marker_offset,
                   control_type AS outcome, coordinator_epoch, producer_epoch AS marker_epoch,
                   max_timestamp AS marker_timestamp, file AS marker_file, `position` AS marker_position
            FROM {indexed} WHERE is_control)
        USING (broker, topic, partition, producer_id, txn_index)""", indexed=indexed)


def partition_ends(batches: DataFrame, checkpoints: DataFrame) -> DataFrame:
    """Needs the batches and partition_checkpoints tables; per partition: log_end_offset (last offset of a
    sound batch + 1), log_first_offset, log_end_timestamp (max timestamp), latest_leader_epoch (of its v2
    batches), and from the checkpoints high_watermark, log_start_offset, cleaner_offset."""
    return run_sql("""
        SELECT * FROM (
            SELECT broker, topic, partition, max(last_offset) + 1 AS log_end_offset,
                   min(base_offset) AS log_first_offset, max(max_timestamp) AS log_end_timestamp,
                   max(CASE WHEN magic = 2 THEN partition_leader_epoch END) AS latest_leader_epoch
            FROM {batches} WHERE crc_valid GROUP BY broker, topic, partition)
        LEFT JOIN (SELECT broker, topic, partition, high_watermark, log_start_offset, cleaner_offset
                   FROM {checkpoints})
        USING (broker, topic, partition)""", batches=batches, checkpoints=checkpoints)


#: Integer.MAX_VALUE: the timeout of a KIP-939 two-phase-commit transaction, which the coordinator never aborts
#: (TransactionMetadata.isDistributedTwoPhaseCommitTxn, apache/kafka 38666db4).
TWO_PHASE_COMMIT_TIMEOUT_MS = 2**31 - 1


def timeout_sql(txn_timeout_ms: int) -> str:
    """A transaction's own timeout (`transaction_timeout_ms`, its transactional id's txnTimeoutMs) or the global one."""
    return f"coalesce(transaction_timeout_ms, {int(txn_timeout_ms)})"


def with_timeouts(txns: DataFrame) -> DataFrame:
    """transactions_table as the timeout checks read it: with `transaction_timeout_ms` (null where not known)."""
    if "transaction_timeout_ms" in txns.columns:
        return txns
    return txns.withColumn("transaction_timeout_ms", F.lit(None).cast("int"))


def hanging_transaction_sql(txn_timeout_ms: int) -> str:
    """The `hanging_transaction` fragment: reads `{txns}` (transactions_table with transaction_timeout_ms:
    producer_id, producer_epoch, outcome, first_offset, last_data_offset, first_timestamp, file, position) and
    `{ends}` (partition_ends: log_end_timestamp); an open transaction older than its timeout at the log end (its
    transactional id's txnTimeoutMs, which TransactionStateManager.timedOutTransactions aborts after, else
    `txn_timeout_ms`; never a two-phase-commit one)."""
    timeout = timeout_sql(txn_timeout_ms)
    columns = finding_columns(
        "hanging_transaction", offset="first_offset",
        message=fmt_sql("Producer %d's transaction opened at offset %d is still open at the log end, %d ms later "
                        "(timeout %d ms): read_committed consumers are stuck at offset %d.", "producer_id",
                        "first_offset", "age_ms_at_log_end", timeout, "first_offset"),
        details={"first_offset": "first_offset", "lso_stuck_at": "first_offset",
                 "age_ms_at_log_end": "age_ms_at_log_end", "last_data_offset": "last_data_offset",
                 "transaction_timeout_ms": timeout})
    return f"""
        SELECT {columns} FROM (
            SELECT *, log_end_timestamp - first_timestamp AS age_ms_at_log_end
            FROM {{txns}} JOIN {{ends}} USING (broker, topic, partition)
            WHERE outcome = 'OPEN' AND first_offset IS NOT NULL)
        WHERE age_ms_at_log_end > {timeout} AND {timeout} != {TWO_PHASE_COMMIT_TIMEOUT_MS}"""


def hanging_transactions(txns: DataFrame, ends: DataFrame, txn_timeout_ms: int) -> DataFrame:
    """Needs transactions_table (and, where known, each transaction's transaction_timeout_ms) and partition_ends;
    `hanging_transaction` findings: still open at the log end and older than the transaction's timeout (age measured
    against the newest timestamp in the log)."""
    return findings_sql([hanging_transaction_sql(txn_timeout_ms)], txns=with_timeouts(txns), ends=ends)


SWEEP_SCHEMA = ("row_kind string, broker string, topic string, partition int, offset long, "
                "last_stable_offset long, producer_id long, first_offset long, last_offset long")


def _sweep(txns: pd.DataFrame) -> pd.DataFrame:
    """One partition's transactions -> LSO change points and aborted ranges (a heap sweep in offset order).

    A window function cannot express "the smallest first offset among transactions still open", so this
    runs per partition over its transactions (not its batches) with applyInPandas.
    """
    key = txns.iloc[0][["broker", "topic", "partition"]].tolist()
    events: list[tuple[int, int, int, int, str]] = []  # (offset, order, first_offset, producer_id, outcome)
    out: list[list] = []
    for row in txns.itertuples(index=False):
        if pd.isna(row.marker_offset):
            if pd.notna(row.first_offset) and row.outcome == "OPEN":  # not one complete without its marker
                events.append((int(row.first_offset), 0, int(row.first_offset), int(row.producer_id), "start"))
        elif pd.notna(row.first_offset):
            events.append((int(row.first_offset), 0, int(row.first_offset), int(row.producer_id), "start"))
            events.append((int(row.marker_offset), 1, int(row.first_offset), int(row.producer_id), row.outcome))
        elif row.outcome == "ABORT":
            # an ABORT whose data the log cleaner removed (its .txnindex entry stays, CleanedTransactionMetadata), or
            # an empty transaction (no entry, ProducerAppendInfo.appendEndTxnMarker): its range and LSO are the index's
            marker = int(row.marker_offset)
            out.append(["aborted", *key, marker, None, int(row.producer_id), None, marker])
    events.sort()
    open_heap: list[tuple[int, int]] = []
    closed: set[tuple[int, int]] = set()
    current: int | None = None  # first offset of the transaction holding the LSO, None: LSO follows the log end
    for offset, order, first, pid, what in events:
        if order == 0:
            heapq.heappush(open_heap, (first, pid))
        else:
            closed.add((first, pid))
            while open_heap and open_heap[0] in closed:
                heapq.heappop(open_heap)
            if what == "ABORT":
                lso = open_heap[0][0] if open_heap else offset + 1
                out.append(["aborted", *key, offset, lso, pid, first, offset])
        holder = open_heap[0] if open_heap else None
        holder_first = holder[0] if holder else None
        if holder_first != current:
            lso = holder_first if holder is not None else offset + 1
            out.append(["change", *key, offset, lso, holder[1] if holder else None, holder_first, None])
            current = holder_first
    return pd.DataFrame(out, columns=["row_kind", "broker", "topic", "partition", "offset", "last_stable_offset",
                                      "producer_id", "first_offset", "last_offset"])


def lso_sweep(txns: DataFrame) -> DataFrame:
    """Needs transactions_table; returns rows of SWEEP_SCHEMA: `change` (offset where the LSO moved, new value,
    the producer holding it) and `aborted` (an ABORT's range and the LSO the broker records for it)."""
    cols = [*PRODUCER, "first_offset", "marker_offset", "outcome"]
    return txns.select(*cols).groupBy(*KEY).applyInPandas(_sweep, SWEEP_SCHEMA)


def lso_table(txns: DataFrame, ends: DataFrame) -> DataFrame:
    """Needs transactions_table and partition_ends; per partition: last_stable_offset, high_watermark,
    log_end_offset, and the producer holding the LSO back (null when nothing is open)."""
    bound = "coalesce(high_watermark, log_end_offset)"
    return run_sql(f"""
        SELECT broker, topic, partition, least(coalesce(open_first_offset, {bound}), {bound}) AS last_stable_offset,
               high_watermark, log_end_offset, held_by_producer_id, open_first_offset IS NOT NULL AS stuck
        FROM {{ends}} LEFT JOIN (
            SELECT broker, topic, partition, min_by(producer_id, first_offset) AS held_by_producer_id,
                   min(first_offset) AS open_first_offset
            FROM {{txns}} WHERE outcome = 'OPEN' AND first_offset IS NOT NULL
            GROUP BY broker, topic, partition)
        USING (broker, topic, partition)""", txns=txns, ends=ends)


def _aborted_joined_sql(with_ends: bool) -> str:
    """The CTE `joined`: the aborted ranges of lso_sweep's output `{sweep}` (`marked`: an ABORT marker is there)
    full-outer-joined with the `{txnindex}` entries (first offset, LSO and file as index_first_offset,
    index_last_stable_offset, index_file) on producer and marker offset, and whether both agree; `with_ends`: with
    `{ends}`' cleaner_offset and log_first_offset.

    On a compacted log the index is held to the markers (CleanedTransactionMetadata keeps an ABORT marker and the
    cleaned segment's entry, first offset as written, while it removes the data; apache/kafka trunk c4342d76): an entry whose first
    offset, or LSO, lies below the cleaner offset and below what the log still shows names batches the cleaner
    removed, and agrees."""
    ends = ("LEFT JOIN (SELECT broker, topic, partition, cleaner_offset, log_first_offset FROM {ends}) "
            "USING (broker, topic, partition)") if with_ends else ""
    cleaner = "cleaner_offset" if with_ends else "CAST(NULL AS BIGINT)"
    return f"""
    joined AS (
        SELECT *, (first_offset IS NULL OR first_offset = index_first_offset
                   OR coalesce(index_first_offset < first_offset AND index_first_offset < {cleaner}, false))
                  AND (last_stable_offset IS NULL OR last_stable_offset = index_last_stable_offset
                       OR coalesce(index_last_stable_offset < last_stable_offset
                                   AND index_last_stable_offset < {cleaner}, false)) AS agrees
        FROM (SELECT broker, topic, partition, producer_id, first_offset, last_offset, last_stable_offset,
                     true AS marked
              FROM {{sweep}} WHERE row_kind = 'aborted')
        FULL OUTER JOIN (SELECT broker, topic, partition, producer_id, last_offset,
                                first_offset AS index_first_offset,
                                last_stable_offset AS index_last_stable_offset, file AS index_file
                         FROM {{txnindex}})
        USING (broker, topic, partition, producer_id, last_offset)
        {ends})"""


def _txnindex_findings_sql(with_ends: bool) -> str:
    """The txnindex_missing / txnindex_orphan / txnindex_mismatch findings over _aborted_joined_sql; `with_ends`:
    reads `{ends}` (partition_ends: log_first_offset, cleaner_offset) to skip the orphans below the log's first
    offset and to read what the log cleaner removed."""
    common = {"first_offset": "coalesce(first_offset, index_first_offset)", "last_offset": "last_offset",
              "last_stable_offset": "coalesce(last_stable_offset, index_last_stable_offset)"}
    missing = finding_columns(
        "txnindex_missing", file=None, position=None, offset="first_offset", producer_epoch=None,
        message=fmt_sql("The aborted transaction of producer %d (offsets %d-%d) has no .txnindex entry: "
                        "read_committed consumers would deliver its records.", "producer_id", "first_offset",
                        "last_offset"),
        details=common)
    orphan = finding_columns(
        "txnindex_orphan", file="index_file", position=None, offset="index_first_offset", producer_epoch=None,
        message=fmt_sql("The .txnindex lists an aborted transaction of producer %d ending at offset %d, but the log "
                        "holds no ABORT marker of that producer there.", "producer_id", "last_offset"),
        details=common)
    mismatch = finding_columns(
        "txnindex_mismatch", file="index_file", position=None, offset="first_offset", producer_epoch=None,
        message=fmt_sql("The .txnindex entry for producer %d's abort at offset %d says first offset %d and LSO %d; "
                        "the log says %d and %d.", "producer_id", "last_offset", "index_first_offset",
                        "index_last_stable_offset", "first_offset", "last_stable_offset"),
        details={**common, "index_first_offset": "index_first_offset",
                 "index_last_stable_offset": "index_last_stable_offset"})
    orphans = "marked IS NULL"
    if with_ends:
        orphans += " AND (log_first_offset IS NULL OR index_first_offset >= log_first_offset)"
    # an ABORT marker without data has no entry to miss: an empty transaction gets none
    # (ProducerAppendInfo.appendEndTxnMarker), nor does a marker the cleaner will remove (CleanedTransactionMetadata)
    return f"""
        WITH {_aborted_joined_sql(with_ends)}
        SELECT {missing} FROM joined WHERE marked AND first_offset IS NOT NULL AND index_first_offset IS NULL
        UNION ALL
        SELECT {orphan} FROM joined WHERE {orphans}
        UNION ALL
        SELECT {mismatch} FROM joined WHERE marked AND index_first_offset IS NOT NULL AND NOT agrees"""


def aborted_ranges(sweep: DataFrame, txnindex: DataFrame,
                   ends: DataFrame | None = None) -> tuple[DataFrame, DataFrame]:
    """Needs lso_sweep's output, the txnindex table and (optionally) partition_ends for log_first_offset and
    cleaner_offset; returns (aborted_ranges with `txnindex_agrees`, txnindex_missing / txnindex_orphan /
    txnindex_mismatch findings). An ABORT marker whose data the log cleaner removed is an aborted range as its
    `.txnindex` entry gives it (first offset and LSO).

    An index entry whose transaction began below the log's first offset is not an orphan: retention deletes
    segments up to the high watermark, not the LSO, so an aborted transaction's data can be gone while its
    marker and its .txnindex entry are still there; nothing in the log can confirm or deny such an entry."""
    tables = {"sweep": sweep, "txnindex": txnindex, **({"ends": ends} if ends is not None else {})}
    table = run_sql(f"""
        WITH {_aborted_joined_sql(ends is not None)}
        SELECT broker, topic, partition, producer_id, coalesce(first_offset, index_first_offset) AS first_offset,
               last_offset, coalesce(last_stable_offset, index_last_stable_offset) AS last_stable_offset,
               coalesce(agrees, false) AS txnindex_agrees
        FROM joined WHERE marked AND (first_offset IS NOT NULL OR index_first_offset IS NOT NULL)""", **tables)
    return table, run_sql(_txnindex_findings_sql(ends is not None), **tables)


def lso_changes(sweep: DataFrame) -> DataFrame:
    """Needs lso_sweep's output; the LSO change points (offset, last_stable_offset, held_by_producer_id)."""
    return run_sql("""
        SELECT broker, topic, partition, `offset`, last_stable_offset, producer_id AS held_by_producer_id
        FROM {sweep} WHERE row_kind = 'change'""", sweep=sweep)
