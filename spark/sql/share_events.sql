/*
[table]
doc = """The share state records of each cluster's serving replica (the current leader's, else the longest) of every __share_group_state partition."""
columns = """
topic string, partition int, broker string, file string, position bigint, offset bigint, timestamp bigint,
group_id string, record_type string, tombstone boolean, topic_id string, share_partition int,
snapshot_epoch int, state_epoch int, leader_epoch int, start_offset bigint, delivery_complete_count int,
state_batches array<struct<first_offset:bigint,last_offset:bigint,delivery_state:int,delivery_count:int>>,
cluster_id string, coordinator_broker string, coordinator_partition string, life bigint"""
*/
-- The records of each cluster's serving replica (the current leader's, else the longest) (serving_replicas) of every __share_group_state partition
-- (share_state_records), with cluster_id, coordinator_broker, coordinator_partition and `life` (the tombstones of the
-- key up to and including this record).
SELECT *, sum(CAST(tombstone AS INT)) OVER (PARTITION BY cluster_id, coordinator_partition, group_id, topic_id, share_partition ORDER BY offset
                                            ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS life
FROM (
    SELECT *, broker AS coordinator_broker, format_string('%s-%d', topic, partition) AS coordinator_partition
    FROM share_state_records JOIN (SELECT cluster_id, topic, partition, serving_broker AS broker FROM serving_replicas)
                             USING (topic, partition, broker))
