/*
[table]
doc = """One row per transactional id and producer id it used. Transactions V2 (KIP-890) bumps the producer epoch at
every end of a transaction; at epoch 32766 the end rotates the transactional id to NextProducerId at epoch 0, and the
Complete* record names the old id as PreviousProducerId (TransactionMetadata.prepareAbortOrCommit /
prepareComplete, transaction-coordinator 38666db4; TransactionCoordinator.endTransaction, core bb126f2d).
InitProducerId rotates too when the epoch is exhausted (prepareProducerIdRotation). __transaction_state is compacted:
only an id's newest record survives cleaning, so a rotation may show only in the data: an id whose last marker is at
epoch 32767 (Short.MAX_VALUE), followed in a partition it wrote by the epoch-0 batches of a producer id the
coordinator names, is that id's previous one (`source` data)."""
output = true
applies = "has_transaction_state"
columns = [
    ["cluster_id", "string", "the cluster.id of the broker's meta.properties (empty when unknown)"],
    ["transactional_id", "string", "the transactional id"],
    ["producer_id", "bigint", "a producer id it used"],
    ["first_epoch", "int", "the first epoch seen (records and batches, markers included)"],
    ["last_epoch", "int", "of its records and batches, markers included"],
    ["previous_producer_id", "bigint", "the id before it (a rotation)"],
    ["next_producer_id", "bigint", "a rotation: from PreviousProducerId / NextProducerId, or from the data"],
    ["transaction_version", "int", "the highest ClientTransactionVersion of its records (2: Transactions V2)"],
    ["coordinator_partition", "string", "`__transaction_state-<n>`"],
    ["first_coordinator_offset", "bigint", "the first record naming it"],
    ["last_coordinator_offset", "bigint", "the last record naming it"],
    ["first_coordinator_timestamp", "bigint", "the first such record's timestamp"],
    ["last_coordinator_timestamp", "bigint", "the records naming it as ProducerId, PreviousProducerId or NextProducerId"],
    ["first_data_partition", "string", "its first transactional data batch's partition (by timestamp)"],
    ["first_data_offset", "bigint", "that batch's base offset"],
    ["first_data_timestamp", "bigint", "its max timestamp"],
    ["last_data_partition", "string", "its last transactional data batch's partition"],
    ["last_data_offset", "bigint", "that batch's base offset"],
    ["last_data_timestamp", "bigint", "its first and last transactional data batch, by timestamp"],
    ["source", "string", "`coordinator`: a record names it; `data`: none does, but its last marker is at epoch 32767 and, in a partition it wrote, the next producer to start at epoch 0 is one the coordinator names for this id: a rotation whose records compaction removed"],
]
*/
-- one aggregation over every mention of a producer id (a record's ProducerId, PreviousProducerId, NextProducerId,
-- and the rotations the data shows), joined once with its data
WITH named AS (
    SELECT cluster_id, transactional_id, producer_id, producer_epoch, offset, timestamp,
           client_transaction_version, format_string('%s-%d', topic, partition) AS coordinator_partition,
           CASE WHEN previous_producer_id >= 0 AND previous_producer_id != producer_id
                THEN previous_producer_id END AS prev,
           CASE WHEN next_producer_id >= 0 AND next_producer_id != producer_id THEN next_producer_id END AS next
    FROM coordinator_log),
known AS (
    SELECT DISTINCT cluster_id, transactional_id, explode(array_compact(array(producer_id, prev, next)))
           AS producer_id FROM named),
txn AS (
    SELECT *, format_string('%s-%d', topic, partition) AS tp FROM clustered_batches WHERE magic = 2 AND is_transactional AND producer_id >= 0 AND crc_valid),
-- a rotation the compacted coordinator log no longer shows: the old id's last marker at epoch 32767, then in
-- the same partition the first batch of a producer id the coordinator names, at epoch 0
exhausted AS (
    SELECT cluster_id, broker, topic, partition, producer_id AS a, max(base_offset) AS a_marker
    FROM txn WHERE is_control AND producer_epoch = 32767
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
    FROM txn GROUP BY cluster_id, producer_id) USING (cluster_id, producer_id)
