/*
[table]
doc = """log_transactions with cluster_id and each transaction's transactional_id, transaction_timeout_ms (its id's
txnTimeoutMs, null when no record names the producer id) and expected_coordinator_partition: the `transactions`
table, the timeout checks, unknown_producer."""
keep = true
columns = """
broker string, topic string, partition int, producer_id bigint, producer_epoch int, first_offset bigint,
last_data_offset bigint, marker_offset bigint, outcome string, coordinator_epoch int, batch_count bigint,
record_count bigint, first_timestamp bigint, duration_ms bigint, file string, position bigint,
txn_index bigint, cluster_id string, transactional_id string, transaction_timeout_ms int,
expected_coordinator_partition string"""
*/
SELECT t.*, i.transactional_id, i.transaction_timeout_ms, i.expected_coordinator_partition
FROM (SELECT /*+ BROADCAST(brokers_) */ broker, rows_.* EXCEPT (broker),
             coalesce(brokers_.cluster_id, '') AS cluster_id
      FROM log_transactions rows_ LEFT JOIN (SELECT broker, cluster_id FROM brokers) brokers_ USING (broker)) t
LEFT JOIN transactional_ids i ON t.cluster_id = i.cluster_id AND t.producer_id = i.producer_id
