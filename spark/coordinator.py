"""The transaction coordinator (__transaction_state) against the data partitions in the input.

A transactional id's records are grouped into transactions: a transaction is every record up to and
including its CompleteCommit / CompleteAbort (the Empty record of an InitProducerId opens the next one).
The partitions come from the Ongoing / Prepare* records (Complete* records list none).

Markers are matched as the coordinator writes them (the two logs share no offsets): with the producer id and epoch
of the transaction's PrepareCommit / PrepareAbort record, which TransactionMarkerChannelManager sends to every
partition. Under Transactions V2 (KIP-890, ClientTransactionVersion >= 2) that epoch is one above the data's and
unique to the transaction, so the marker is the one of that producer id and epoch; under V1 the epoch stays the
data's across transactions, so the marker is the first of that producer written between the transaction's start
timestamp and the start of the producer's next transaction naming that partition. A transaction completed at a
rotation (epoch exhausted) is the old producer id's: its markers carry the old id at epoch 32767 while its
CompleteCommit already names the next one (see `coordinator_transactions`).
"""

from __future__ import annotations

from pyspark.sql import DataFrame

from kforensics.spark.findings import sql_literal
from kforensics.spark.views import run_sql

COMPLETE = ("CompleteCommit", "CompleteAbort")
#: Short.MAX_VALUE: under TV2 the end of a transaction at epoch 32766 (TransactionMetadata.isEpochExhausted) bumps it
#: to this epoch for its markers and rotates the transactional id to NextProducerId at epoch 0
#: (TransactionMetadata.prepareAbortOrCommit / prepareComplete, apache/kafka 38666db4, 2025).
EXHAUSTED_EPOCH = 32767


def coordinator_log(records: DataFrame, longest: DataFrame) -> DataFrame:
    """Needs coordinator_records and longest_replicas; the records of the longest replica of each
    __transaction_state partition (replicas hold the same records), tombstones dropped."""
    return run_sql("""
        SELECT * FROM {records}
        JOIN (SELECT cluster_id, topic, partition, longest_broker AS broker FROM {longest})
        USING (topic, partition, broker)
        WHERE NOT tombstone""", records=records, longest=longest)


_OUTCOME = """CASE WHEN array_contains(states, 'CompleteCommit') THEN 'COMMIT'
                   WHEN array_contains(states, 'CompleteAbort') THEN 'ABORT'
                   WHEN array_contains(states, 'PrepareCommit') THEN 'PREPARE_COMMIT'
                   WHEN array_contains(states, 'PrepareAbort') OR array_contains(states, 'PrepareEpochFence')
                        THEN 'PREPARE_ABORT'
                   WHEN array_contains(states, 'Ongoing') THEN 'ONGOING' ELSE 'NONE' END"""
_COMPLETE = ", ".join(sql_literal(s) for s in COMPLETE)


def coordinator_transactions(log: DataFrame) -> DataFrame:
    """Needs coordinator_log; one row per transaction of a transactional id: transactional_id, producer_id,
    producer_epoch (last), first_producer_epoch, outcome (COMMIT|ABORT|PREPARE_COMMIT|PREPARE_ABORT|ONGOING|
    NONE), states (in order), partitions, transaction_timeout_ms, txn_start_timestamp, completed_at,
    coordinator broker / partition / first and last offset, file and position of the last record,
    transaction_version (the highest ClientTransactionVersion of its records) and marker_producer_id /
    marker_producer_epoch: what its markers carry (the Prepare* record's id and epoch; without one, a TV2
    CompleteCommit at epoch 0 naming another PreviousProducerId was a rotation: that id at epoch 32767; a TV2
    transaction still Ongoing will have its markers at its epoch + 1)."""
    # TransactionMetadata.prepareComplete (apache/kafka 38666db4): under TV2 with a NextProducerId the Complete*
    # record names the new id at epoch 0 and PreviousProducerId the one whose markers were sent
    rotated = (f"coalesce(transaction_version, 0) >= 2 AND last_state IN ({_COMPLETE}) AND producer_epoch = 0 "
               "AND last_previous_producer_id >= 0 AND last_previous_producer_id != producer_id")
    return run_sql(f"""
        SELECT cluster_id, transactional_id, producer_id, producer_epoch, first_producer_epoch,
               {_OUTCOME} AS outcome, states,
               filter(partitions, p -> p != '') AS partitions, transaction_timeout_ms,
               CASE WHEN txn_start_timestamp >= 0 THEN txn_start_timestamp END AS txn_start_timestamp,
               CASE WHEN array_contains(states, 'CompleteCommit') OR array_contains(states, 'CompleteAbort')
                    THEN last_update_timestamp END AS completed_at,
               broker AS coordinator_broker, format_string('%s-%d', topic, partition) AS coordinator_partition,
               coordinator_first_offset, coordinator_last_offset, file, position, txn_seq, transaction_version,
               coalesce(prepare_producer_id, CASE WHEN {rotated} THEN last_previous_producer_id ELSE producer_id END)
                   AS marker_producer_id,
               coalesce(prepare_producer_epoch, CASE WHEN {rotated} THEN {EXHAUSTED_EPOCH}
                                                     WHEN coalesce(transaction_version, 0) >= 2
                                                          AND last_state = 'Ongoing' THEN producer_epoch + 1
                                                     ELSE producer_epoch END) AS marker_producer_epoch
        FROM (
            SELECT broker, cluster_id, topic, partition, transactional_id, txn_seq,
                   max(client_transaction_version) AS transaction_version, max_by(state, offset) AS last_state,
                   max_by(previous_producer_id, offset) AS last_previous_producer_id,
                   max_by(producer_id, CASE WHEN state IN ('PrepareCommit', 'PrepareAbort') THEN offset END)
                       AS prepare_producer_id,
                   max_by(producer_epoch, CASE WHEN state IN ('PrepareCommit', 'PrepareAbort') THEN offset END)
                       AS prepare_producer_epoch,
                   max_by(producer_id, offset) AS producer_id, max_by(producer_epoch, offset) AS producer_epoch,
                   min_by(producer_epoch, offset) AS first_producer_epoch,
                   transform(array_sort(collect_list(struct(offset, state))), r -> r.state) AS states,
                   array_sort(array_distinct(flatten(collect_list(split(coalesce(txn_partitions, ''), ',')))))
                       AS partitions,
                   max_by(transaction_timeout_ms, offset) AS transaction_timeout_ms,
                   max(start_timestamp) AS txn_start_timestamp,
                   max_by(last_update_timestamp, offset) AS last_update_timestamp,
                   min(offset) AS coordinator_first_offset, max(offset) AS coordinator_last_offset,
                   max_by(file, offset) AS file, max_by(position, offset) AS position
            FROM (
                SELECT *, coalesce(sum(CAST(state IN ({_COMPLETE}) AS INT)) OVER (
                           PARTITION BY cluster_id, topic, partition, transactional_id ORDER BY offset
                           ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS txn_seq
                FROM {{log}})
            GROUP BY broker, cluster_id, topic, partition, transactional_id, txn_seq)""", log=log)


def transactional_ids(log: DataFrame) -> DataFrame:
    """Needs coordinator_log; producer_id -> transactional_id and transaction_timeout_ms (the latest record naming
    the producer id as ProducerId, PreviousProducerId or NextProducerId: after a rotation or a compaction the old
    id may be named only there)."""
    return run_sql("""
        SELECT cluster_id, producer_id, max_by(transactional_id, timestamp) AS transactional_id,
               max_by(transaction_timeout_ms, timestamp) AS transaction_timeout_ms
        FROM (SELECT cluster_id, transactional_id, timestamp, transaction_timeout_ms,
                     explode(array_distinct(filter(array(producer_id, previous_producer_id, next_producer_id),
                                                   p -> p >= 0))) AS producer_id
              FROM {log})
        GROUP BY cluster_id, producer_id""", log=log)


_TXN_KEY = "cluster_id, coordinator_partition, transactional_id, txn_seq"


def with_partitions_not_in_input(ctx: DataFrame, present: DataFrame) -> DataFrame:
    """Needs coordinator_transactions and a (topic, partition) table of the data partitions in the input; adds
    partitions_not_in_input (named by the transaction, absent from the input: not judged)."""
    return run_sql(f"""
        WITH names AS (
            SELECT DISTINCT cluster_id, format_string('%s-%d', topic, partition) AS named, true AS here
            FROM {{present}}),
        absent AS (
            SELECT {_TXN_KEY}, array_sort(collect_list(named)) AS partitions_not_in_input
            FROM (SELECT {_TXN_KEY}, explode(partitions) AS named FROM {{ctx}})
            LEFT JOIN names USING (cluster_id, named)
            WHERE here IS NULL
            GROUP BY {_TXN_KEY})
        SELECT * EXCEPT (partitions_not_in_input),
               coalesce(partitions_not_in_input, CAST(array() AS ARRAY<STRING>)) AS partitions_not_in_input
        FROM {{ctx}} LEFT JOIN absent USING ({_TXN_KEY})""", ctx=ctx, present=present)


