/*
[table]
doc = """One row per transaction of a transactional id in the coordinator's log (coordinator_log), with `txn_seq` (its
place among its id's transactions), its expected_coordinator_partition and partitions_not_in_input (named by the
transaction, absent from the input: not judged). A transaction is every record of the id up to and including its
CompleteCommit / CompleteAbort (the Empty record of an InitProducerId opens the next one); the partitions come from the
Ongoing / Prepare* records (Complete* records list none). Its markers carry marker_producer_id and
marker_producer_epoch: the Prepare* record's; without one, a TV2 CompleteCommit at epoch 0 naming another
PreviousProducerId was a rotation (TransactionMetadata.prepareComplete, apache/kafka 38666db4): that id at epoch 32767
(Short.MAX_VALUE, the epoch an exhausted producer's markers carry); a TV2 transaction still Ongoing will have its
markers at its epoch + 1."""
keep = true
columns = """
cluster_id string, coordinator_partition string, transactional_id string, txn_seq bigint, producer_id bigint,
producer_epoch int, first_producer_epoch int, outcome string, states array<string>, partitions array<string>,
transaction_timeout_ms int, txn_start_timestamp bigint, completed_at bigint, coordinator_broker string,
coordinator_first_offset bigint, coordinator_last_offset bigint, file string, position bigint,
transaction_version int, marker_producer_id bigint, marker_producer_epoch int,
expected_coordinator_partition string, partitions_not_in_input array<string>"""
*/
WITH txns AS (
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
        SELECT *, coalesce(sum(CAST(state IN ('CompleteCommit', 'CompleteAbort') AS INT)) OVER (
                   PARTITION BY cluster_id, topic, partition, transactional_id ORDER BY offset
                   ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS txn_seq
        FROM coordinator_log)
    GROUP BY broker, cluster_id, topic, partition, transactional_id, txn_seq),
rotated AS (
    SELECT *, coalesce(transaction_version, 0) >= 2 AND last_state IN ('CompleteCommit', 'CompleteAbort')
              AND producer_epoch = 0 AND last_previous_producer_id >= 0
              AND last_previous_producer_id != producer_id AS rotated
    FROM txns),
ctx AS (
    SELECT cluster_id, transactional_id, producer_id, producer_epoch, first_producer_epoch,
           CASE WHEN array_contains(states, 'CompleteCommit') THEN 'COMMIT'
                WHEN array_contains(states, 'CompleteAbort') THEN 'ABORT'
                WHEN array_contains(states, 'PrepareCommit') THEN 'PREPARE_COMMIT'
                WHEN array_contains(states, 'PrepareAbort') OR array_contains(states, 'PrepareEpochFence')
                     THEN 'PREPARE_ABORT'
                WHEN array_contains(states, 'Ongoing') THEN 'ONGOING' ELSE 'NONE' END AS outcome,
           states, filter(partitions, p -> p != '') AS partitions, transaction_timeout_ms,
           CASE WHEN txn_start_timestamp >= 0 THEN txn_start_timestamp END AS txn_start_timestamp,
           CASE WHEN array_contains(states, 'CompleteCommit') OR array_contains(states, 'CompleteAbort')
                THEN last_update_timestamp END AS completed_at,
           broker AS coordinator_broker, format_string('%s-%d', topic, partition) AS coordinator_partition,
           coordinator_first_offset, coordinator_last_offset, file, position, txn_seq, transaction_version,
           coalesce(prepare_producer_id, CASE WHEN rotated THEN last_previous_producer_id ELSE producer_id END)
               AS marker_producer_id,
           coalesce(prepare_producer_epoch, CASE WHEN rotated THEN 32767
                                                 WHEN coalesce(transaction_version, 0) >= 2
                                                      AND last_state = 'Ongoing' THEN producer_epoch + 1
                                                 ELSE producer_epoch END) AS marker_producer_epoch
    FROM rotated),
expected AS (
    SELECT ctx.*, p.expected_coordinator_partition
    FROM ctx LEFT JOIN transactional_id_partitions p ON ctx.transactional_id = p.transactional_id),
names AS (
    SELECT DISTINCT cluster_id, format_string('%s-%d', topic, partition) AS named, true AS here FROM replica_ends),
absent AS (
    SELECT cluster_id, coordinator_partition, transactional_id, txn_seq,
           array_sort(collect_list(named)) AS partitions_not_in_input
    FROM (SELECT cluster_id, coordinator_partition, transactional_id, txn_seq, explode(partitions) AS named
          FROM expected)
    LEFT JOIN names USING (cluster_id, named)
    WHERE here IS NULL
    GROUP BY cluster_id, coordinator_partition, transactional_id, txn_seq)
SELECT * EXCEPT (partitions_not_in_input),
       coalesce(partitions_not_in_input, CAST(array() AS ARRAY<STRING>)) AS partitions_not_in_input
FROM expected LEFT JOIN absent USING (cluster_id, coordinator_partition, transactional_id, txn_seq)
