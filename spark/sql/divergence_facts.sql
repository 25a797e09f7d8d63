/*
[table]
doc = """Per pair of diverging replicas (divergences): both replicas' leader epochs at the divergence, file, position
and ends, the replica whose history was replaced and the committed offsets it lost."""
columns = """
cluster_id string, topic string, partition int, b_broker string, a_broker string, offset bigint,
common_prefix_end_offset bigint, a_epoch int, a_file string, a_position bigint, b_epoch int, b_file string,
b_position bigint, a_log_end_offset bigint, a_high_watermark bigint, a_leader_epoch_checkpoint string,
b_log_end_offset bigint, b_high_watermark bigint, b_leader_epoch_checkpoint string, broker string,
winner string, loser_hw bigint, loser_leo bigint, lost_last bigint, lost_offsets array<bigint>"""
*/
-- Per pair of diverging replicas (divergences): both replicas' leader epochs at the divergence (a_epoch, b_epoch),
-- file, position and ends, `broker` (the replica whose history was replaced, or a_broker), `winner`, `loser_hw`,
-- `lost_last` and `lost_offsets` ([first, last] committed offsets lost, null when none or unknown). An unknown high
-- watermark (no replication-offset-checkpoint, kafka-dump-log text, or no loser within one epoch) commits nothing:
-- least() would skip the null and claim the whole tail committed.
SELECT *, CASE WHEN lost_last >= `offset` THEN array(`offset`, lost_last) END AS lost_offsets
FROM (
  SELECT *, CASE WHEN loser_hw IS NOT NULL THEN least(loser_hw, loser_leo) - 1 END AS lost_last
  FROM (
    SELECT *, CASE WHEN b_epoch < a_epoch THEN b_broker ELSE a_broker END AS broker,
           CASE WHEN a_epoch < b_epoch THEN b_broker WHEN b_epoch < a_epoch THEN a_broker END AS winner,
           CASE WHEN a_epoch < b_epoch OR b_epoch < a_epoch THEN CASE WHEN b_epoch < a_epoch THEN b_high_watermark ELSE a_high_watermark END END AS loser_hw,
           CASE WHEN b_epoch < a_epoch THEN b_log_end_offset ELSE a_log_end_offset END AS loser_leo
    FROM divergences
         -- the a replica's batch at the divergence offset
         LEFT JOIN (SELECT cluster_id, topic, partition, a_broker, b_broker, min_by(partition_leader_epoch, base_offset) AS a_epoch,
                           min_by(file, base_offset) AS a_file, min_by(position, base_offset) AS a_position
                    FROM (SELECT * FROM clustered_batches WHERE crc_valid) JOIN (SELECT cluster_id, topic, partition, a_broker, b_broker, `offset`, a_broker AS broker FROM divergences) USING (cluster_id, topic, partition, broker)
                    WHERE last_offset >= `offset` GROUP BY cluster_id, topic, partition, a_broker, b_broker)
              USING (cluster_id, topic, partition, a_broker, b_broker)
         -- the b replica's batch at the divergence offset
         LEFT JOIN (SELECT cluster_id, topic, partition, a_broker, b_broker, min_by(partition_leader_epoch, base_offset) AS b_epoch,
                           min_by(file, base_offset) AS b_file, min_by(position, base_offset) AS b_position
                    FROM (SELECT * FROM clustered_batches WHERE crc_valid) JOIN (SELECT cluster_id, topic, partition, a_broker, b_broker, `offset`, b_broker AS broker FROM divergences) USING (cluster_id, topic, partition, broker)
                    WHERE last_offset >= `offset` GROUP BY cluster_id, topic, partition, a_broker, b_broker)
              USING (cluster_id, topic, partition, a_broker, b_broker)
         LEFT JOIN (
  SELECT cluster_id, topic, partition, broker AS a_broker, log_end_offset AS a_log_end_offset,
         high_watermark AS a_high_watermark, leader_epoch_checkpoint AS a_leader_epoch_checkpoint
  FROM replica_ends) USING (cluster_id, topic, partition, a_broker)
         LEFT JOIN (
  SELECT cluster_id, topic, partition, broker AS b_broker, log_end_offset AS b_log_end_offset,
         high_watermark AS b_high_watermark, leader_epoch_checkpoint AS b_leader_epoch_checkpoint
  FROM replica_ends) USING (cluster_id, topic, partition, b_broker)))
