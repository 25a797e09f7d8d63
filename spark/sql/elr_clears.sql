/*
[table]
doc = """A ClearElrRecord (KIP-966, Kafka 4.0: ReplicationControlManager.replay(ClearElrRecord)) as one row per
partition it may clear: those of its topic (every live topic when TopicName is empty) registered before it, each with
ELR and last-known ELR set empty, leader -2 (no change) and leader recovery state -1 (no change); partition_history
keeps the rows that change a partition."""
columns = """
cluster_id string, topic_id string, metadata_broker string, metadata_offset bigint, snapshot_offset bigint,
record_index bigint, timestamp bigint, record_type string, partition int, leader int, isr array<int>, elr array<int>,
last_known_elr array<int>, replicas array<int>, adding_replicas array<int>, removing_replicas array<int>,
leader_recovery_state int, directories array<string>, leader_epoch int, partition_epoch int, file string,
position bigint"""
*/
WITH registered AS (
    SELECT cluster_id, metadata_broker, topic_id, partition AS p, metadata_offset AS registered_at
    FROM applied_records WHERE record_type = 'PARTITION_RECORD'),
names AS (
    SELECT cluster_id, topic_id, first(topic) AS name FROM applied_records WHERE record_type = 'TOPIC_RECORD'
    GROUP BY cluster_id, topic_id),
removed AS (
    SELECT cluster_id, topic_id, min(metadata_offset) AS removed_at FROM applied_records
    WHERE record_type = 'REMOVE_TOPIC_RECORD' GROUP BY cluster_id, topic_id),
hit AS (
    SELECT * FROM (SELECT * EXCEPT (topic_id, partition) FROM applied_records WHERE record_type = 'CLEAR_ELR_RECORD')
         JOIN registered USING (cluster_id, metadata_broker)
         LEFT JOIN names USING (cluster_id, topic_id)
         LEFT JOIN removed USING (cluster_id, topic_id)
    WHERE registered_at < metadata_offset AND (removed_at IS NULL OR removed_at > metadata_offset)
      AND (coalesce(topic, '') = '' OR topic = name))
-- one row per partition and record, however often the partition was registered before it
SELECT DISTINCT cluster_id, topic_id, metadata_broker, metadata_offset, snapshot_offset, record_index, timestamp,
       record_type, p AS partition, -2 AS leader, isr, CAST(array() AS ARRAY<INT>) AS elr,
       CAST(array() AS ARRAY<INT>) AS last_known_elr, replicas, adding_replicas, removing_replicas,
       -1 AS leader_recovery_state, directories, leader_epoch, partition_epoch, file, position
FROM hit
