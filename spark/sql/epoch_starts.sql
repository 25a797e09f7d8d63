/*
[table]
doc = """Per topic-partition of a cluster and leader epoch, the first data offset of that epoch on any broker
(`epoch_start_offset`): leader-epoch-checkpoint's start offset, else the first batch carrying it."""
columns = "cluster_id string, topic string, partition int, leader_epoch int, epoch_start_offset bigint"
*/
WITH cp AS (
    SELECT coalesce(b.cluster_id, '') AS cluster_id, topic, partition, epoch, start_offset
    FROM leader_epochs LEFT JOIN (SELECT broker, cluster_id FROM brokers) b USING (broker)),
bt AS (
    SELECT coalesce(b.cluster_id, '') AS cluster_id, topic, partition, partition_leader_epoch, base_offset
    FROM batches LEFT JOIN (SELECT broker, cluster_id FROM brokers) b USING (broker)
    WHERE magic = 2 AND crc_valid)
SELECT cluster_id, topic, partition, leader_epoch, coalesce(cp_start, batch_start) AS epoch_start_offset
FROM (SELECT cluster_id, topic, partition, epoch AS leader_epoch, min(start_offset) AS cp_start
      FROM cp GROUP BY cluster_id, topic, partition, epoch)
FULL OUTER JOIN (
      SELECT cluster_id, topic, partition, partition_leader_epoch AS leader_epoch, min(base_offset) AS batch_start
      FROM bt GROUP BY cluster_id, topic, partition, partition_leader_epoch)
USING (cluster_id, topic, partition, leader_epoch)
