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

from kforensics.spark.findings import KEY
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


def aborted_ranges(aborted: DataFrame) -> DataFrame:
    """Needs aborted_transactions (spark/sql/aborted_transactions.sql); the aborted_ranges table with
    `txnindex_agrees`. An ABORT marker whose data the log cleaner removed is an aborted range as its `.txnindex`
    entry gives it (first offset and LSO)."""
    return run_sql("""
        SELECT broker, topic, partition, producer_id, coalesce(first_offset, index_first_offset) AS first_offset,
               last_offset, coalesce(last_stable_offset, index_last_stable_offset) AS last_stable_offset,
               coalesce(agrees, false) AS txnindex_agrees
        FROM {aborted} WHERE marked AND (first_offset IS NOT NULL OR index_first_offset IS NOT NULL)""",
        aborted=aborted)


def lso_changes(sweep: DataFrame) -> DataFrame:
    """Needs lso_sweep's output; the LSO change points (offset, last_stable_offset, held_by_producer_id)."""
    return run_sql("""
        SELECT broker, topic, partition, `offset`, last_stable_offset, producer_id AS held_by_producer_id
        FROM {sweep} WHERE row_kind = 'change'""", sweep=sweep)
