/*
[table]
doc = """The records of the serving replica (the current leader's, else the longest) of each __transaction_state partition (replicas hold the same records),
tombstones dropped."""
keep = true
applies = "has_transaction_state"
columns = """
topic string, partition int, broker string, file string, position bigint, offset bigint, timestamp bigint,
transactional_id string, producer_id bigint, producer_epoch int, state string, transaction_timeout_ms int,
txn_partitions string, last_update_timestamp bigint, start_timestamp bigint, tombstone boolean,
previous_producer_id bigint, next_producer_id bigint, next_producer_epoch int, client_transaction_version int,
cluster_id string"""
*/
SELECT * FROM coordinator_records
JOIN (SELECT cluster_id, topic, partition, serving_broker AS broker FROM serving_replicas)
USING (topic, partition, broker)
WHERE NOT tombstone
