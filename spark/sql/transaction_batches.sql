/*
[table]
doc = """The transactional batches and markers of log_batches with `txn_index`: the number of its producer's markers
before the row (a marker closes the transaction with its own index)."""
columns = """
broker string, topic string, partition int, file string, segment_base_offset bigint, position bigint, size int,
magic int, base_offset bigint, last_offset bigint, count int, partition_leader_epoch int, producer_id bigint,
producer_epoch int, base_sequence int, last_sequence int, is_transactional boolean, is_control boolean,
control_type string, coordinator_epoch int, codec string, timestamp_type string, base_timestamp bigint,
max_timestamp bigint, crc bigint, crc_valid boolean, delete_horizon_ms bigint, leader_epoch_change boolean,
cleaner_offset bigint, txn_index bigint"""
*/
SELECT *, coalesce(sum(CAST(is_control AS INT)) OVER (
            PARTITION BY broker, topic, partition, producer_id
            ORDER BY base_offset, segment_base_offset, `position`
            ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS txn_index
FROM log_batches
WHERE magic = 2 AND producer_id >= 0 AND is_transactional AND crc_valid
