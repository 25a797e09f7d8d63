"""Exactly-once on a current Kafka: producer-id lineage, prepared (two-phase-commit) transactions, offset commits left
pending by an open transaction, and the aborted copies a re-send check leaves out.

Rules, read in apache/kafka (cited beside each):
- Transactions V2 (KIP-890) bumps the producer epoch at every end of a transaction; at epoch 32766 the end rotates the
  transactional id to NextProducerId at epoch 0, and the Complete* record names the old id as PreviousProducerId
  (TransactionMetadata.prepareAbortOrCommit / prepareComplete, transaction-coordinator 38666db4;
  TransactionCoordinator.endTransaction, core bb126f2d). InitProducerId rotates too when the epoch is exhausted
  (prepareProducerIdRotation). __transaction_state is compacted: only an id's newest record survives cleaning.
- A KIP-939 two-phase-commit transaction has the timeout Integer.MAX_VALUE and is never aborted by the coordinator
  (TransactionMetadata.isDistributedTwoPhaseCommitTxn).
- A transactional offset commit is pending until its transaction's marker: applied on COMMIT (if no later record
  offset was applied), dropped on ABORT; a tombstone drops the pending ones of its partition
  (OffsetMetadataManager.replay / replayEndTransactionMarker, group-coordinator 2d7df031).
"""

from __future__ import annotations

from pyspark.sql import DataFrame

from kforensics.spark.coordinator import EXHAUSTED_EPOCH
from kforensics.spark.findings import finding_columns, findings_sql, fmt_sql
from kforensics.spark.transactions import TWO_PHASE_COMMIT_TIMEOUT_MS, timeout_sql
from kforensics.spark.views import run_sql

_TXN_BATCH = "magic = 2 AND is_transactional AND producer_id >= 0 AND crc_valid"


def producer_lineage(log: DataFrame, batches: DataFrame) -> DataFrame:
    """Needs coordinator_log (cluster_id, topic, partition, offset, timestamp, transactional_id, producer_id,
    producer_epoch, previous_producer_id, next_producer_id, client_transaction_version) and the batches table with
    cluster_id; one row per transactional id and producer id it used: first_epoch, last_epoch (records and batches),
    previous_producer_id, next_producer_id, transaction_version, coordinator_partition, first/last coordinator offset
    and timestamp (records naming the id as ProducerId, PreviousProducerId or NextProducerId), first/last data
    partition, offset and timestamp (its transactional data batches, by timestamp), and `source`: `coordinator`
    (a record names it) or `data` (no record does: an id whose last marker is at epoch 32767, followed in a partition
    it wrote by the epoch-0 batches of a producer id the coordinator names, is that id's previous one)."""
    # one aggregation over every mention of a producer id (a record's ProducerId, PreviousProducerId, NextProducerId,
    # and the rotations the data shows), joined once with its data
    return run_sql(f"""
    WITH named AS (
        SELECT cluster_id, transactional_id, producer_id, producer_epoch, offset, timestamp,
               client_transaction_version, format_string('%s-%d', topic, partition) AS coordinator_partition,
               CASE WHEN previous_producer_id >= 0 AND previous_producer_id != producer_id
                    THEN previous_producer_id END AS prev,
               CASE WHEN next_producer_id >= 0 AND next_producer_id != producer_id THEN next_producer_id END AS next
        FROM {{log}}),
    known AS (
        SELECT DISTINCT cluster_id, transactional_id, explode(array_compact(array(producer_id, prev, next)))
               AS producer_id FROM named),
    txn AS (
        SELECT *, format_string('%s-%d', topic, partition) AS tp FROM {{batches}} WHERE {_TXN_BATCH}),
    -- a rotation the compacted coordinator log no longer shows: the old id's last marker at epoch 32767, then in
    -- the same partition the first batch of a producer id the coordinator names, at epoch 0
    exhausted AS (
        SELECT cluster_id, broker, topic, partition, producer_id AS a, max(base_offset) AS a_marker
        FROM txn WHERE is_control AND producer_epoch = {EXHAUSTED_EPOCH}
        GROUP BY cluster_id, broker, topic, partition, producer_id),
    data_links AS (
        SELECT cluster_id, transactional_id, a, b FROM (
            SELECT cluster_id, a, b, k.transactional_id,
                   row_number() OVER (PARTITION BY cluster_id, a ORDER BY b_first - a_marker, b) AS rank
            FROM exhausted JOIN (
                SELECT cluster_id, broker, topic, partition, producer_id AS b, min(base_offset) AS b_first
                FROM txn WHERE NOT is_control AND producer_epoch = 0
                GROUP BY cluster_id, broker, topic, partition, producer_id) USING (cluster_id, broker, topic, partition)
            JOIN (SELECT cluster_id, producer_id AS b, transactional_id FROM known) k USING (cluster_id, b)
            LEFT ANTI JOIN (SELECT cluster_id, producer_id AS a FROM known) USING (cluster_id, a)
            WHERE b_first > a_marker)
        WHERE rank = 1),
    mentions AS (
        SELECT cluster_id, transactional_id, producer_id, producer_epoch, offset, timestamp,
               client_transaction_version, coordinator_partition, prev AS previous_producer_id,
               next AS next_producer_id, true AS named FROM named
        UNION ALL
        SELECT cluster_id, transactional_id, prev, NULL, offset, timestamp, NULL, coordinator_partition, NULL,
               producer_id, true FROM named WHERE prev IS NOT NULL
        UNION ALL
        SELECT cluster_id, transactional_id, next, NULL, offset, timestamp, NULL, coordinator_partition, producer_id,
               NULL, true FROM named WHERE next IS NOT NULL
        UNION ALL
        SELECT cluster_id, transactional_id, a, NULL, NULL, NULL, NULL, NULL, NULL, b, false FROM data_links
        UNION ALL
        SELECT cluster_id, transactional_id, b, NULL, NULL, NULL, NULL, NULL, a, NULL, false FROM data_links),
    ids AS (
        SELECT cluster_id, transactional_id, producer_id, min(producer_epoch) AS c_first_epoch,
               max(producer_epoch) AS c_last_epoch, max(previous_producer_id) AS previous_producer_id,
               max(next_producer_id) AS next_producer_id, max(client_transaction_version) AS transaction_version,
               min(coordinator_partition) AS coordinator_partition, min(offset) AS first_coordinator_offset,
               max(offset) AS last_coordinator_offset, min(timestamp) AS first_coordinator_timestamp,
               max(timestamp) AS last_coordinator_timestamp,
               CASE WHEN max(CAST(named AS INT)) = 1 THEN 'coordinator' ELSE 'data' END AS source
        FROM mentions GROUP BY cluster_id, transactional_id, producer_id)
    SELECT cluster_id, transactional_id, producer_id,
           CAST(least(c_first_epoch, d_first_epoch) AS INT) AS first_epoch,
           CAST(greatest(c_last_epoch, d_last_epoch) AS INT) AS last_epoch,
           previous_producer_id, next_producer_id, transaction_version, coordinator_partition,
           first_coordinator_offset, last_coordinator_offset, first_coordinator_timestamp,
           last_coordinator_timestamp, first_data.tp AS first_data_partition, first_data.base_offset AS first_data_offset,
           first_data.max_timestamp AS first_data_timestamp, last_data.tp AS last_data_partition,
           last_data.base_offset AS last_data_offset, last_data.max_timestamp AS last_data_timestamp, source
    FROM ids LEFT JOIN (
        SELECT cluster_id, producer_id, min(producer_epoch) AS d_first_epoch, max(producer_epoch) AS d_last_epoch,
               min(CASE WHEN NOT is_control THEN struct(max_timestamp, tp, base_offset) END) AS first_data,
               max(CASE WHEN NOT is_control THEN struct(max_timestamp, tp, base_offset) END) AS last_data
        FROM txn GROUP BY cluster_id, producer_id) USING (cluster_id, producer_id)""", log=log, batches=batches)


def with_coordinator_timeouts(txns: DataFrame, txn_ids: DataFrame) -> DataFrame:
    """Needs transactions_table with cluster_id and transactional_ids; adds each transaction's transactional_id,
    transaction_timeout_ms (its id's txnTimeoutMs, null when no record names the producer id) and
    expected_coordinator_partition."""
    return run_sql("""
        SELECT t.*, i.transactional_id, i.transaction_timeout_ms, i.expected_coordinator_partition
        FROM {txns} t LEFT JOIN {txn_ids} i ON t.cluster_id = i.cluster_id AND t.producer_id = i.producer_id""",
                   txns=txns, txn_ids=txn_ids)


def prepared_transaction_sql() -> str:
    """The `prepared_transaction` fragment: reads `{txns}` (transactions_table with transaction_timeout_ms and
    transactional_id) and `{ends}` (partition_ends: log_end_timestamp); a transaction open at the log end whose
    transactional id's timeout is Integer.MAX_VALUE (KIP-939)."""
    columns = finding_columns(
        "prepared_transaction", offset="first_offset",
        message=fmt_sql("Transactional id %s (producer %d) holds a two-phase-commit transaction (KIP-939: timeout "
                        "Integer.MAX_VALUE, never aborted by the coordinator) open since offset %d, %d ms before the log "
                        "end: the last stable offset stays at %d until its transaction manager commits or aborts it.",
                        "coalesce(transactional_id, '?')", "producer_id", "first_offset", "age_ms_at_log_end",
                        "first_offset"),
        details={"transactional_id": "transactional_id", "first_offset": "first_offset",
                 "last_data_offset": "last_data_offset", "age_ms_at_log_end": "age_ms_at_log_end",
                 "holds_lso_at": "first_offset"})
    return f"""
        SELECT {columns} FROM (
            SELECT *, log_end_timestamp - first_timestamp AS age_ms_at_log_end
            FROM {{txns}} JOIN {{ends}} USING (broker, topic, partition)
            WHERE outcome = 'OPEN' AND first_offset IS NOT NULL
              AND transaction_timeout_ms = {TWO_PHASE_COMMIT_TIMEOUT_MS})"""


def prepared_transactions(txns: DataFrame, ends: DataFrame) -> DataFrame:
    """Needs transactions_table with transaction_timeout_ms and transactional_id, and partition_ends;
    `prepared_transaction` findings (info)."""
    return findings_sql([prepared_transaction_sql()], txns=txns, ends=ends)


#: The offset commits of each __consumer_offsets partition's longest replica with their transaction's fate, as CTEs
#: over {commits} (offset_commits), {longest} (longest_replicas) and {txns} (transactions_table): `fates` (every
#: commit: cluster_id, transaction_outcome COMMIT|ABORT|OPEN for a transactional one, null otherwise,
#: txn_first_offset, txn_first_timestamp) and `live` (the non-tombstone commits after their partition's last
#: tombstone, which drops the applied offset and the pending ones: OffsetMetadataManager.replay, 2d7df031).
COMMIT_FATES_SQL = """
    pick AS (SELECT cluster_id, topic, partition, longest_broker AS broker FROM {longest}),
    fates AS (
        SELECT c.*, CASE WHEN c.transactional THEN coalesce(t.outcome, 'OPEN') END AS transaction_outcome,
               t.first_offset AS txn_first_offset, t.first_timestamp AS txn_first_timestamp
        FROM (SELECT * FROM {commits} JOIN pick USING (topic, partition, broker)) c  -- one replica of each partition
        LEFT JOIN (SELECT broker, topic, partition, producer_id, first_offset, last_data_offset, outcome,
                          first_timestamp FROM {txns}) t
        ON c.transactional AND c.broker = t.broker AND c.topic = t.topic AND c.partition = t.partition
           AND c.producer_id = t.producer_id AND c.offset BETWEEN t.first_offset AND t.last_data_offset),
    cut AS (
        SELECT cluster_id, group_id, commit_topic, commit_partition, max(offset) AS tombstone_offset
        FROM fates WHERE tombstone GROUP BY cluster_id, group_id, commit_topic, commit_partition),
    live AS (
        SELECT * FROM fates LEFT JOIN cut USING (cluster_id, group_id, commit_topic, commit_partition)
        WHERE NOT tombstone AND (tombstone_offset IS NULL OR offset > tombstone_offset))"""


def offset_commit_pending_sql(txn_timeout_ms: int) -> str:
    """The `offset_commit_pending` fragment: reads `{commits}`, `{longest}` (with log_end_timestamp), `{txns}` (as
    COMMIT_FATES_SQL) and `{txn_ids}` (transactional_ids: transactional_id, transaction_timeout_ms); per group and
    open transaction, its offset commits still pending at the log end of their __consumer_offsets partition, longer
    than the transaction's timeout (a younger one is a transaction in flight; a two-phase-commit one is a
    `prepared_transaction`)."""
    timeout = timeout_sql(txn_timeout_ms)
    columns = finding_columns(
        "offset_commit_pending", offset="first_commit_offset",
        message=fmt_sql("Group %s has offset commits for %s pending in producer %d's transaction (transactional id "
                        "%s), open since offset %d of %s-%d for %d ms (timeout %d ms): until a marker ends it, "
                        "OffsetFetch answers UNSTABLE_OFFSET_COMMIT for these partitions and the group's consumers "
                        "wait.", "group_id", "array_join(committed, ', ')", "producer_id",
                        "coalesce(transactional_id, '?')", "txn_first_offset", "topic", "partition",
                        "age_ms_at_log_end", timeout),
        details={"group": "group_id", "transactional_id": "transactional_id", "partitions": "committed",
                 "committed_offsets": "committed_offsets", "txn_first_offset": "txn_first_offset",
                 "age_ms_at_log_end": "age_ms_at_log_end", "transaction_timeout_ms": timeout})
    return f"""
        WITH {COMMIT_FATES_SQL},
        pending AS (
            SELECT cluster_id, broker, topic, partition, group_id, producer_id, txn_first_offset,
                   min(offset) AS first_commit_offset, min_by(file, offset) AS file,
                   min_by(position, offset) AS position, min_by(producer_epoch, offset) AS producer_epoch,
                   min(txn_first_timestamp) AS txn_first_timestamp,
                   array_sort(collect_set(format_string('%s-%d', commit_topic, commit_partition))) AS committed,
                   transform(array_sort(collect_list(struct(commit_topic, commit_partition, committed_offset))),
                             c -> c.committed_offset) AS committed_offsets
            FROM live WHERE transaction_outcome = 'OPEN'
            GROUP BY cluster_id, broker, topic, partition, group_id, producer_id, txn_first_offset)
        SELECT {columns} FROM (
            SELECT *, log_end_timestamp - txn_first_timestamp AS age_ms_at_log_end
            FROM pending
            JOIN (SELECT cluster_id, topic, partition, log_end_timestamp FROM {{longest}})
                USING (cluster_id, topic, partition)
            LEFT JOIN (SELECT cluster_id, producer_id, transactional_id, transaction_timeout_ms FROM {{txn_ids}})
                USING (cluster_id, producer_id))
        WHERE age_ms_at_log_end > {timeout} AND {timeout} != {TWO_PHASE_COMMIT_TIMEOUT_MS}"""


def offset_commits_pending(commits: DataFrame, longest: DataFrame, txns: DataFrame, txn_ids: DataFrame,
                           txn_timeout_ms: int) -> DataFrame:
    """Needs offset_commits, longest_replicas, transactions_table and transactional_ids; `offset_commit_pending`
    findings (warning)."""
    return findings_sql([offset_commit_pending_sql(txn_timeout_ms)], commits=commits, longest=longest, txns=txns,
                        txn_ids=txn_ids)


def without_aborted(data: DataFrame, txns: DataFrame) -> DataFrame:
    """Needs data batches and transactions_table; the batches of no aborted transaction. A Streams task that moves
    has its new producer re-write what the fenced one wrote in a transaction its coordinator aborted: no
    read_committed consumer ever saw that copy, so it is no re-send."""
    return run_sql("""
        SELECT d.* FROM {data} d LEFT ANTI JOIN (
            SELECT broker, topic, partition, producer_id, first_offset, last_data_offset FROM {txns}
            WHERE outcome = 'ABORT' AND first_offset IS NOT NULL) a
        ON d.broker = a.broker AND d.topic = a.topic AND d.partition = a.partition AND d.producer_id = a.producer_id
           AND d.base_offset BETWEEN a.first_offset AND a.last_data_offset""", data=data, txns=txns)
