/*
[table]
doc = """Each live topic's partitions at the end of the metadata log (their last partition_history row), with
`since_offset` / `since` (where the leader last changed) and `last_leader` (the leader before that change)."""
keep = true
columns = """
cluster_id string, topic_id string, partition int, metadata_broker string, topic string,
metadata_offset bigint, timestamp bigint, record_type string, leader int, leader_epoch bigint,
partition_epoch bigint, isr array<int>, elr array<int>, last_known_elr array<int>, replicas array<int>,
adding_replicas array<int>, removing_replicas array<int>, leader_recovery_state string,
directories array<string>, previous_leader int, previous_isr array<int>, previous_elr array<int>,
election string, file string, position bigint, since_offset bigint, since bigint, last_leader int"""
*/
-- one row per metadata offset and partition (a snapshot holds one PartitionRecord per partition)
WITH since AS (
    SELECT cluster_id, topic_id, partition, metadata_offset AS since_offset, timestamp AS since,
           previous_leader AS last_leader
    FROM (SELECT *, row_number() OVER (PARTITION BY cluster_id, topic_id, partition ORDER BY metadata_offset DESC)
                      AS rank
          FROM partition_history WHERE election != 'none')
    WHERE rank = 1),
last AS (
    SELECT * EXCEPT (rank)
    FROM (SELECT *, row_number() OVER (PARTITION BY cluster_id, topic_id, partition ORDER BY metadata_offset DESC)
                      AS rank
          FROM partition_history)
    WHERE rank = 1)
SELECT * FROM last
     JOIN (SELECT cluster_id, topic_id FROM topics WHERE deleted_offset IS NULL) USING (cluster_id, topic_id)
     LEFT JOIN since USING (cluster_id, topic_id, partition)
