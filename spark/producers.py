"""Producer histories: sequence gaps, duplicates, zombie epochs and the `producers` facts table.

Broker rules (FORMATS.md §7): within one producer id and epoch each batch's base sequence is the
previous last sequence + 1, wrapping 2147483647 -> 0; a new epoch starts again at 0; a producer whose
history starts mid-sequence (retention, compaction, expiry) is not a gap; control batches carry no
sequence; transactional sequences run on across commits and aborts.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from kforensics.defaults import DEFAULT_RESEND_MIN_RECORDS, DEFAULT_RESEND_TAIL
from kforensics.spark.findings import KEY
from kforensics.spark.views import run_sql

PRODUCER = [*KEY, "producer_id"]


#: A batch's create time as the analysis reads it: the header of a batch whose attributes bit 6 is set holds the
#: delete horizon in baseTimestamp (KIP-534: MemoryRecordsBuilder writes it there, DefaultRecordBatch.deleteHorizonMs
#: reads it back), and an empty batch the log cleaner kept (MemoryRecords.filterTo, RETAIN_EMPTY) holds -1 there
#: (DefaultRecordBatch.writeEmptyHeader); neither is a create time, so their max timestamp stands in (apache/kafka
#: 1eb76443, 4.0.0-SNAPSHOT; unchanged on trunk).
CREATE_TIME_SQL = ("CASE WHEN delete_horizon_ms IS NOT NULL OR (magic = 2 AND count = 0) THEN max_timestamp "
                   "ELSE base_timestamp END")


def with_leader_epoch_change(batches: DataFrame, checkpoints: DataFrame | None = None) -> DataFrame:
    """Needs KEY, base_offset, position, partition_leader_epoch, magic, count, base_timestamp, max_timestamp,
    delete_horizon_ms, and the partition_checkpoints table (cleaner_offset) when given; adds `leader_epoch_change`
    (the batch is the first of a new partition leader epoch in its partition) and `cleaner_offset` (the partition's
    cleaner-offset-checkpoint entry: offsets below it were compacted by the log cleaner; null: none), and reads
    `base_timestamp` as a create time (CREATE_TIME_SQL): every check downstream takes it for one."""
    columns = ", ".join(f"{CREATE_TIME_SQL} AS base_timestamp" if name == "base_timestamp" else f"`{name}`"
                        for name in batches.columns if name != "cleaner_offset")
    cleaned = ("LEFT JOIN (SELECT broker, topic, partition, cleaner_offset FROM {checkpoints}) "
               "USING (broker, topic, partition)") if checkpoints is not None else ""
    cleaner_offset = "cleaner_offset" if checkpoints is not None else "CAST(NULL AS BIGINT) AS cleaner_offset"
    return run_sql(f"""
        SELECT {columns}, lag(partition_leader_epoch) OVER w IS NOT NULL
                  AND lag(partition_leader_epoch) OVER w != partition_leader_epoch AS leader_epoch_change,
               {cleaner_offset}
        FROM {{batches}} {cleaned}
        WINDOW w AS (PARTITION BY broker, topic, partition ORDER BY base_offset, segment_base_offset, position)""",
        batches=batches, **({"checkpoints": checkpoints} if checkpoints is not None else {}))


def data_batches(batches: DataFrame) -> DataFrame:
    """Needs the batches columns; keeps v2 data batches of idempotent/transactional producers.

    Batches with a bad CRC stay in: the damage is nearly always in the records, and dropping the batch
    would report the sequence numbers it carries as a gap (the CRC finding already names it).
    """
    return batches.filter((F.col("magic") == 2) & (F.col("producer_id") >= 0) & ~F.col("is_control")
                          & (F.col("base_sequence") >= 0))


def _producer_window(order: str = "base_offset, segment_base_offset, position") -> str:
    return f"PARTITION BY broker, topic, partition, producer_id ORDER BY {order}"


def producers_table(data: DataFrame) -> DataFrame:
    """Needs data batches; one row per (partition, producer id, epoch): offsets, sequences, counts, times."""
    return run_sql("""
        SELECT broker, topic, partition, producer_id, producer_epoch, min(base_offset) AS first_offset,
               max(last_offset) AS last_offset, min_by(base_sequence, base_offset) AS first_sequence,
               max_by(last_sequence, base_offset) AS last_sequence, count(1) AS batch_count,
               CAST(sum(count) AS BIGINT) AS record_count, min(base_timestamp) AS first_timestamp,
               max(max_timestamp) AS last_timestamp,
               CAST(max(CAST(is_transactional AS INT)) AS BOOLEAN) AS is_transactional
        FROM {data} GROUP BY broker, topic, partition, producer_id, producer_epoch""", data=data)


RESEND_SCHEMA = ("broker string, topic string, partition int, pid_a long, pid_b long, producer_epoch int, "
                 "matches long, a_first_offset long, a_last_offset long, b_first_offset long, b_last_offset long, "
                 "ms_between long")


def producer_spans(data: DataFrame) -> DataFrame:
    """Needs data batches; per (partition, producer id): first_offset, last_offset, first_ts (its first record's
    timestamp), last_ts (its last batch's max timestamp) and record_count, from the batch headers alone."""
    return run_sql("""
        SELECT broker, topic, partition, producer_id, min(base_offset) AS first_offset,
               max(last_offset) AS last_offset,
               min_by(CASE WHEN timestamp_type = 'LogAppendTime' THEN max_timestamp ELSE base_timestamp END,
                      base_offset) AS first_ts,
               max_by(max_timestamp, base_offset) AS last_ts, CAST(sum(count) AS BIGINT) AS record_count
        FROM {data} GROUP BY broker, topic, partition, producer_id""", data=data)


def resend_candidates(spans: DataFrame, *, window_ms: int) -> DataFrame:
    """Needs producer_spans; pairs (pid_a, pid_b) of a partition where pid_b's history starts after pid_a's
    last record in the log and its first write comes within `window_ms` of pid_a's last write (0: any time)."""
    return run_sql("""
        SELECT broker, topic, partition, a.producer_id AS pid_a, b.producer_id AS pid_b
        FROM {spans} a JOIN {spans} b USING (broker, topic, partition)
        WHERE a.producer_id != b.producer_id AND a.last_offset < b.first_offset
          AND (:resend_window_ms <= 0 OR abs(b.first_ts - a.last_ts) <= :resend_window_ms)""",
        {"resend_window_ms": int(window_ms)}, spans=spans)


def resend_batches(data: DataFrame, pairs: DataFrame, *, tail: int) -> DataFrame:
    """Needs data batches (file, position, count) and resend_candidates' pairs; the batches whose records a
    re-send check compares, decided from the headers: those holding the first `tail` records of each newer
    producer id (pid_b) and the last `tail` records of each earlier one (pid_a). Columns: KEY, file, position, size.
    Only these records are ever decoded and hashed, however long the histories are."""
    order = _producer_window()
    return run_sql(f"""
        WITH newer AS (SELECT DISTINCT broker, topic, partition, pid_b AS producer_id, true AS newer FROM {{pairs}}),
        earlier AS (SELECT DISTINCT broker, topic, partition, pid_a AS producer_id, true AS earlier FROM {{pairs}}),
        ranked AS (
          SELECT *, coalesce(sum(count) OVER ({order} ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)
                      AS records_before,
                    coalesce(sum(count) OVER ({order} ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING), 0)
                      AS records_after
          FROM {{data}} LEFT JOIN newer USING (broker, topic, partition, producer_id)
               LEFT JOIN earlier USING (broker, topic, partition, producer_id)
          WHERE newer OR earlier)
        SELECT broker, topic, partition, file, position, size FROM ranked
        WHERE (newer AND records_before < :resend_tail) OR (earlier AND records_after < :resend_tail)""",
        {"resend_tail": int(tail)}, data=data, pairs=pairs)


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
    # each producer id's first `tail` records (the head a re-send starts with) and its last `tail` (where it comes
    # from); a null key or value hash is -2^63 (pandas would make it NaN, which equals nothing). Grouped by the new
    # producer id: its head, and the tail of each candidate predecessor (pid_a).
    rows = run_sql(f"""
        WITH ranked AS (
          SELECT *, row_number() OVER (PARTITION BY broker, topic, partition, producer_id ORDER BY `offset`) AS from_start,
                 row_number() OVER (PARTITION BY broker, topic, partition, producer_id ORDER BY `offset` DESC) AS from_end
          FROM (SELECT broker, topic, partition, producer_id, `offset`, `timestamp`, producer_epoch,
                       coalesce(key_hash, CAST({-(2**63)} AS BIGINT)) AS key_hash,
                       coalesce(value_hash, CAST({-(2**63)} AS BIGINT)) AS value_hash
                FROM {{records}}))
        SELECT broker, topic, partition, producer_id, CAST(NULL AS BIGINT) AS pid_a, 'head' AS role, `offset`,
               `timestamp`, producer_epoch, key_hash, value_hash
        FROM ranked LEFT SEMI JOIN (SELECT DISTINCT broker, topic, partition, pid_b AS producer_id FROM {{pairs}})
             USING (broker, topic, partition, producer_id)
        WHERE from_start <= :resend_tail
        UNION ALL
        SELECT r.broker, r.topic, r.partition, p.pid_b AS producer_id, r.producer_id AS pid_a, 'tail' AS role, `offset`,
               `timestamp`, producer_epoch, key_hash, value_hash
        FROM ranked r JOIN {{pairs}} p ON r.broker = p.broker AND r.topic = p.topic AND r.partition = p.partition
                                        AND r.producer_id = p.pid_a
        WHERE from_end <= :resend_tail""", {"resend_tail": int(tail)}, records=records, pairs=pairs)
    return rows.groupBy(*PRODUCER).applyInPandas(_match_resends(min_records), RESEND_SCHEMA)


