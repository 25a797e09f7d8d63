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
from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from kforensics.spark.findings import KEY, finding_columns, findings_sql, fmt, fmt_sql, to_findings

PRODUCER = [*KEY, "producer_id"]


def with_transaction_index(batches: DataFrame) -> DataFrame:
    """Needs the batches columns; keeps transactional batches and markers and adds `txn_index`: the number
    of this producer's markers before the row (a marker closes the transaction with its own index)."""
    txn = batches.filter((F.col("magic") == 2) & (F.col("producer_id") >= 0) & F.col("is_transactional")
                         & F.col("crc_valid"))
    w = (Window.partitionBy(*PRODUCER).orderBy("base_offset", "segment_base_offset", "position")
         .rowsBetween(Window.unboundedPreceding, -1))
    return txn.withColumn("txn_index", F.coalesce(F.sum(F.col("is_control").cast("int")).over(w), F.lit(0)))


def transactions_table(indexed: DataFrame) -> DataFrame:
    """Needs with_transaction_index's output; one row per transaction: producer_id, producer_epoch,
    first_offset, last_data_offset, marker_offset, outcome (COMMIT|ABORT|OPEN|UNKNOWN), coordinator_epoch,
    batch_count, record_count, first_timestamp, duration_ms, file and position of the first batch."""
    data = (indexed.filter(~F.col("is_control")).groupBy(*PRODUCER, "txn_index")
            .agg(F.min("base_offset").alias("first_offset"), F.max("last_offset").alias("last_data_offset"),
                 F.max_by("producer_epoch", "base_offset").alias("data_epoch"),
                 F.count(F.lit(1)).alias("batch_count"), F.sum("count").cast("long").alias("record_count"),
                 F.min("max_timestamp").alias("first_timestamp"),
                 F.min_by("file", "base_offset").alias("file"), F.min_by("position", "base_offset").alias("position")))
    markers = indexed.filter(F.col("is_control")).select(
        *PRODUCER, "txn_index", F.col("base_offset").alias("marker_offset"), F.col("control_type").alias("outcome"),
        "coordinator_epoch", F.col("producer_epoch").alias("marker_epoch"),
        F.col("max_timestamp").alias("marker_timestamp"), F.col("file").alias("marker_file"),
        F.col("position").alias("marker_position"))
    joined = data.join(markers, [*PRODUCER, "txn_index"], "full_outer")
    return joined.select(
        *PRODUCER, F.coalesce("data_epoch", "marker_epoch").alias("producer_epoch"), "first_offset",
        "last_data_offset", "marker_offset",
        # a marker whose control record was not read (kafka-dump-log text without record lines): UNKNOWN
        F.when(F.col("marker_offset").isNull(), F.lit("OPEN")).otherwise(F.coalesce("outcome", F.lit("UNKNOWN")))
        .alias("outcome"),
        "coordinator_epoch", F.coalesce("batch_count", F.lit(0)).cast("long").alias("batch_count"),
        F.coalesce("record_count", F.lit(0)).cast("long").alias("record_count"), "first_timestamp",
        (F.col("marker_timestamp") - F.col("first_timestamp")).alias("duration_ms"),
        F.coalesce("file", "marker_file").alias("file"), F.coalesce("position", "marker_position").alias("position"),
        "txn_index")


def partition_ends(batches: DataFrame, checkpoints: DataFrame) -> DataFrame:
    """Needs the batches and partition_checkpoints tables; per partition: log_end_offset (last offset of a
    sound batch + 1), log_first_offset, log_end_timestamp (max timestamp), latest_leader_epoch (of its v2
    batches), and from the checkpoints high_watermark, log_start_offset, cleaner_offset."""
    ends = (batches.filter(F.col("crc_valid")).groupBy(*KEY)
            .agg((F.max("last_offset") + 1).alias("log_end_offset"), F.min("base_offset").alias("log_first_offset"),
                 F.max("max_timestamp").alias("log_end_timestamp"),
                 F.max(F.when(F.col("magic") == 2, F.col("partition_leader_epoch"))).alias("latest_leader_epoch")))
    return ends.join(checkpoints.select(*KEY, "high_watermark", "log_start_offset", "cleaner_offset"), KEY, "left")


def hanging_transaction_sql(txn_timeout_ms: int) -> str:
    """The `hanging_transaction` fragment: reads `{txns}` (transactions_table: producer_id, producer_epoch,
    outcome, first_offset, last_data_offset, first_timestamp, file, position) and `{ends}` (partition_ends:
    log_end_timestamp); an open transaction older than the timeout at the log end."""
    timeout = int(txn_timeout_ms)
    columns = finding_columns(
        "hanging_transaction", offset="first_offset",
        message=fmt_sql("Producer %d's transaction opened at offset %d is still open at the log end, %d ms later "
                        "(timeout %d ms): read_committed consumers are stuck at offset %d.", "producer_id",
                        "first_offset", "age_ms_at_log_end", str(timeout), "first_offset"),
        details={"first_offset": "first_offset", "lso_stuck_at": "first_offset",
                 "age_ms_at_log_end": "age_ms_at_log_end", "last_data_offset": "last_data_offset"})
    return f"""
        SELECT {columns} FROM (
            SELECT *, log_end_timestamp - first_timestamp AS age_ms_at_log_end
            FROM {{txns}} JOIN {{ends}} USING (broker, topic, partition)
            WHERE outcome = 'OPEN' AND first_offset IS NOT NULL)
        WHERE age_ms_at_log_end > {timeout}"""


def hanging_transactions(txns: DataFrame, ends: DataFrame, txn_timeout_ms: int) -> DataFrame:
    """Needs transactions_table and partition_ends; `hanging_transaction` findings: still open at the log
    end and older than the transaction timeout (age measured against the newest timestamp in the log)."""
    return findings_sql([hanging_transaction_sql(txn_timeout_ms)], txns=txns, ends=ends)


SWEEP_SCHEMA = ("row_kind string, broker string, topic string, partition int, offset long, "
                "last_stable_offset long, producer_id long, first_offset long, last_offset long")


def _sweep(txns: pd.DataFrame) -> pd.DataFrame:
    """One partition's transactions -> LSO change points and aborted ranges (a heap sweep in offset order).

    A window function cannot express "the smallest first offset among transactions still open", so this
    runs per partition over its transactions (not its batches) with applyInPandas.
    """
    key = txns.iloc[0][["broker", "topic", "partition"]].tolist()
    events: list[tuple[int, int, int, int, str]] = []  # (offset, order, first_offset, producer_id, outcome)
    for row in txns.itertuples(index=False):
        if pd.notna(row.first_offset):
            events.append((int(row.first_offset), 0, int(row.first_offset), int(row.producer_id), "start"))
        if pd.notna(row.marker_offset) and pd.notna(row.first_offset):
            events.append((int(row.marker_offset), 1, int(row.first_offset), int(row.producer_id), row.outcome))
    events.sort()
    open_heap: list[tuple[int, int]] = []
    closed: set[tuple[int, int]] = set()
    out: list[list] = []
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
    open_first = (txns.filter((F.col("outcome") == "OPEN") & F.col("first_offset").isNotNull())
                  .groupBy(*KEY).agg(F.min_by("producer_id", "first_offset").alias("held_by_producer_id"),
                                     F.min("first_offset").alias("open_first_offset")))
    bound = F.coalesce("high_watermark", "log_end_offset")
    return (ends.join(open_first, KEY, "left")
            .select(*KEY, F.least(F.coalesce("open_first_offset", bound), bound).alias("last_stable_offset"),
                    "high_watermark", "log_end_offset", "held_by_producer_id",
                    (F.col("open_first_offset").isNotNull()).alias("stuck")))


def aborted_ranges(sweep: DataFrame, txnindex: DataFrame,
                   ends: DataFrame | None = None) -> tuple[DataFrame, DataFrame]:
    """Needs lso_sweep's output, the txnindex table and (optionally) partition_ends for log_first_offset; returns
    (aborted_ranges with `txnindex_agrees`, txnindex_missing / txnindex_orphan / txnindex_mismatch findings).

    An index entry whose transaction began below the log's first offset is not an orphan: retention deletes
    segments up to the high watermark, not the LSO, so an aborted transaction's data can be gone while its
    marker and its .txnindex entry are still there; nothing in the log can confirm or deny such an entry."""
    ranges = sweep.filter(F.col("row_kind") == "aborted").select(*PRODUCER, "first_offset", "last_offset",
                                                                 "last_stable_offset")
    index = txnindex.select(*PRODUCER, "last_offset", F.col("first_offset").alias("index_first_offset"),
                            F.col("last_stable_offset").alias("index_last_stable_offset"),
                            F.col("file").alias("index_file"))
    joined = ranges.join(index, [*PRODUCER, "last_offset"], "full_outer")
    agrees = ((F.col("first_offset") == F.col("index_first_offset"))
              & (F.col("last_stable_offset") == F.col("index_last_stable_offset")))
    table = joined.filter(F.col("first_offset").isNotNull()).select(
        *PRODUCER, "first_offset", "last_offset", "last_stable_offset",
        F.coalesce(agrees, F.lit(False)).alias("txnindex_agrees"))
    common = {"first_offset": F.coalesce("first_offset", "index_first_offset"), "last_offset": "last_offset",
              "last_stable_offset": F.coalesce("last_stable_offset", "index_last_stable_offset")}
    missing = to_findings(
        joined.filter(F.col("index_first_offset").isNull()), "txnindex_missing", file=None, position=None,
        offset="first_offset", producer_epoch=None,
        message=fmt("The aborted transaction of producer %d (offsets %d-%d) has no .txnindex entry: read_committed "
                    "consumers would deliver its records.", "producer_id", "first_offset", "last_offset"),
        details=common)
    orphans = joined.filter(F.col("first_offset").isNull())
    if ends is not None:
        orphans = (orphans.join(ends.select(*KEY, "log_first_offset"), KEY, "left")
                   .filter(F.col("log_first_offset").isNull()
                           | (F.col("index_first_offset") >= F.col("log_first_offset"))))
    orphan = to_findings(
        orphans, "txnindex_orphan", file="index_file", position=None,
        offset="index_first_offset", producer_epoch=None,
        message=fmt("The .txnindex lists an aborted transaction of producer %d ending at offset %d, but the log "
                    "holds no ABORT marker of that producer there.", "producer_id", "last_offset"),
        details=common)
    mismatch = to_findings(
        joined.filter(F.col("first_offset").isNotNull() & F.col("index_first_offset").isNotNull() & ~agrees),
        "txnindex_mismatch", file="index_file", position=None, offset="first_offset", producer_epoch=None,
        message=fmt("The .txnindex entry for producer %d's abort at offset %d says first offset %d and LSO %d; the "
                    "log says %d and %d.", "producer_id", "last_offset", "index_first_offset",
                    "index_last_stable_offset", "first_offset", "last_stable_offset"),
        details={**common, "index_first_offset": "index_first_offset",
                 "index_last_stable_offset": "index_last_stable_offset"})
    return table, missing.unionByName(orphan).unionByName(mismatch)


def lso_changes(sweep: DataFrame) -> DataFrame:
    """Needs lso_sweep's output; the LSO change points (offset, last_stable_offset, held_by_producer_id)."""
    return sweep.filter(F.col("row_kind") == "change").select(
        *KEY, "offset", "last_stable_offset", F.col("producer_id").alias("held_by_producer_id"))

