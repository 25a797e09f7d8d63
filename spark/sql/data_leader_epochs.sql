/*
[table]
doc = """Every leader epoch the data of a partition carries, where it first appears per file: `source` `batch` (the
first batch of that epoch in the file) or `leader-epoch-checkpoint` (an entry)."""
columns = """
broker string, topic string, partition int, file string, leader_epoch int, offset bigint, position bigint,
source string, cluster_id string, topic_id string"""
*/
WITH epochs AS (
    SELECT broker, topic, partition, file, partition_leader_epoch AS leader_epoch, min(base_offset) AS offset,
           min_by(position, base_offset) AS position, 'batch' AS source
    FROM batches WHERE magic = 2 AND crc_valid
    GROUP BY broker, topic, partition, file, partition_leader_epoch
    UNION ALL
    SELECT broker, topic, partition, file, epoch AS leader_epoch, start_offset AS offset,
           CAST(NULL AS BIGINT) AS position, 'leader-epoch-checkpoint' AS source
    FROM leader_epochs)
SELECT * FROM (
    SELECT /*+ BROADCAST(brokers_) */ broker, rows_.* EXCEPT (broker), coalesce(brokers_.cluster_id, '') AS cluster_id
    FROM epochs rows_ LEFT JOIN (SELECT broker, cluster_id FROM brokers) brokers_ USING (broker))
LEFT JOIN partition_topic_ids USING (broker, topic, partition)
