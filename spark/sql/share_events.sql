-- The records of each cluster's longest replica (longest_replicas) of every __share_group_state partition
-- (share_state_records), with cluster_id, coordinator_broker, coordinator_partition and `life` (the tombstones of the
-- key up to and including this record).
SELECT *, sum(CAST(tombstone AS INT)) OVER (PARTITION BY cluster_id, coordinator_partition, group_id, topic_id, share_partition ORDER BY offset
                                            ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS life
FROM (
    SELECT *, broker AS coordinator_broker, format_string('%s-%d', topic, partition) AS coordinator_partition
    FROM share_state_records JOIN (SELECT cluster_id, topic, partition, longest_broker AS broker FROM longest_replicas)
                             USING (topic, partition, broker))
