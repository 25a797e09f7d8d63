/*
[table]
doc = """producer_id -> transactional_id and transaction_timeout_ms, per cluster: the latest record naming the producer
id as ProducerId, PreviousProducerId or NextProducerId (after a rotation or a compaction the old id may be named only
there), with the id's expected_coordinator_partition."""
keep = true
columns = """
cluster_id string, producer_id bigint, transactional_id string, transaction_timeout_ms int,
expected_coordinator_partition string"""
*/
SELECT i.*, p.expected_coordinator_partition
FROM (
    SELECT cluster_id, producer_id, max_by(transactional_id, timestamp) AS transactional_id,
           max_by(transaction_timeout_ms, timestamp) AS transaction_timeout_ms
    FROM (SELECT cluster_id, transactional_id, timestamp, transaction_timeout_ms,
                 explode(array_distinct(filter(array(producer_id, previous_producer_id, next_producer_id),
                                               p -> p >= 0))) AS producer_id
          FROM coordinator_log)
    GROUP BY cluster_id, producer_id) i
LEFT JOIN transactional_id_partitions p ON i.transactional_id = p.transactional_id
