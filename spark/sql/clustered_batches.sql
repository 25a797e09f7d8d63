/*
[table]
doc = """log_batches with each broker's `cluster_id` (its meta.properties' cluster.id; "" when unknown): a
topic-partition is identified by its cluster too, as disks of different clusters are not replicas."""
columns = """
broker string, topic string, partition int, file string, segment_base_offset bigint, position bigint, size int,
magic int, base_offset bigint, last_offset bigint, count int, partition_leader_epoch int, producer_id bigint,
producer_epoch int, base_sequence int, last_sequence int, is_transactional boolean, is_control boolean,
control_type string, coordinator_epoch int, codec string, timestamp_type string, base_timestamp bigint,
max_timestamp bigint, crc bigint, crc_valid boolean, delete_horizon_ms bigint, leader_epoch_change boolean,
cleaner_offset bigint, cluster_id string"""
*/
SELECT /*+ BROADCAST(brokers_) */ broker, rows_.* EXCEPT (broker), coalesce(brokers_.cluster_id, '') AS cluster_id
FROM log_batches rows_ LEFT JOIN (SELECT broker, cluster_id FROM brokers) brokers_ USING (broker)
