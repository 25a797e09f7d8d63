/*
[table]
doc = """One row per pair of replicas of a topic-partition (a_broker < b_broker) that hold different batches: offset
(the first differing batch) and common_prefix_end_offset. Two replicas agree on a batch when base offset, last
offset, CRC, producer id/epoch, base sequence and partition leader epoch are equal (a follower copies the leader's
bytes); they are compared from the later of their log starts and cleaner checkpoints (compaction runs on each broker
on its own) up to the shorter log end: a replica that is only shorter is lagging, not diverged."""
keep = true
applies = "replicas_possible"
columns = """
cluster_id string, topic string, partition int, a_broker string, b_broker string, offset bigint,
common_prefix_end_offset bigint"""
*/
-- one pass per pair in offset order: the first differing batch, and the end of the matching prefix before it; offsets
-- a copy lacks (replica_coverage) are compared on neither side: a batch only the other copy holds there is no
-- difference (issue 47)
WITH lacks AS (
  SELECT cluster_id AS l_cluster_id, topic AS l_topic, partition AS l_partition, m.broker AS l_broker,
         m.first_offset AS l_first, m.last_offset AS l_last
  FROM replica_coverage LATERAL VIEW explode(missing) AS m),
multi AS (SELECT * FROM replica_ends WHERE replica_count > 1),
pairs AS (
  SELECT cluster_id, topic, partition, a_broker, b_broker,
         greatest(a_log_start_offset, b_log_start_offset, a_cleaner_offset, b_cleaner_offset) AS lo,
         least(a_log_end_offset, b_log_end_offset) AS hi
  FROM (SELECT cluster_id, topic, partition, broker AS a_broker, log_start_offset AS a_log_start_offset,
               log_end_offset AS a_log_end_offset, cleaner_offset AS a_cleaner_offset FROM multi)
       JOIN (SELECT cluster_id, topic, partition, broker AS b_broker, log_start_offset AS b_log_start_offset,
                    log_end_offset AS b_log_end_offset, cleaner_offset AS b_cleaner_offset FROM multi)
       USING (cluster_id, topic, partition)
  WHERE a_broker < b_broker),
marked AS (
  SELECT *, sum(differs) OVER (PARTITION BY cluster_id, topic, partition, a_broker, b_broker ORDER BY base_offset
                               ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS seen
  FROM (SELECT *, CAST(NOT (a_last_offset <=> b_last_offset AND a_crc <=> b_crc AND a_producer_id <=> b_producer_id AND a_producer_epoch <=> b_producer_epoch AND a_base_sequence <=> b_base_sequence AND a_partition_leader_epoch <=> b_partition_leader_epoch) AS INT) AS differs
        FROM (
      SELECT /*+ BROADCAST(pairs_) */ * EXCEPT (lo, hi)
      FROM (SELECT cluster_id, topic, partition, broker AS a_broker, base_offset, last_offset AS a_last_offset, crc AS a_crc, producer_id AS a_producer_id, producer_epoch AS a_producer_epoch, base_sequence AS a_base_sequence, partition_leader_epoch AS a_partition_leader_epoch, file AS a_file, position AS a_position
            FROM (SELECT * FROM clustered_batches WHERE crc_valid)
                 JOIN (SELECT broker, topic, partition FROM multi) USING (broker, topic, partition))
           JOIN pairs pairs_ USING (cluster_id, topic, partition, a_broker)
      WHERE base_offset >= lo AND base_offset < hi) FULL OUTER JOIN (
      SELECT /*+ BROADCAST(pairs_) */ * EXCEPT (lo, hi)
      FROM (SELECT cluster_id, topic, partition, broker AS b_broker, base_offset, last_offset AS b_last_offset, crc AS b_crc, producer_id AS b_producer_id, producer_epoch AS b_producer_epoch, base_sequence AS b_base_sequence, partition_leader_epoch AS b_partition_leader_epoch, file AS b_file, position AS b_position
            FROM (SELECT * FROM clustered_batches WHERE crc_valid)
                 JOIN (SELECT broker, topic, partition FROM multi) USING (broker, topic, partition))
           JOIN pairs pairs_ USING (cluster_id, topic, partition, b_broker)
      WHERE base_offset >= lo AND base_offset < hi) USING (cluster_id, topic, partition, a_broker, b_broker, base_offset)
      LEFT ANTI JOIN lacks
        ON l_cluster_id = cluster_id AND l_topic = topic AND l_partition = partition AND l_broker IN (a_broker, b_broker)
       AND base_offset BETWEEN l_first AND coalesce(l_last, 9223372036854775807)))
SELECT /*+ BROADCAST(pairs_) */ cluster_id, topic, partition, a_broker, b_broker, `offset`,
       coalesce(common_prefix_end_offset, lo) AS common_prefix_end_offset
FROM (SELECT cluster_id, topic, partition, a_broker, b_broker, min(CASE WHEN differs = 1 THEN base_offset END) AS `offset`,
             max(CASE WHEN seen = 0 THEN a_last_offset + 1 END) AS common_prefix_end_offset
      FROM marked GROUP BY cluster_id, topic, partition, a_broker, b_broker)
     JOIN (SELECT cluster_id, topic, partition, a_broker, b_broker, lo FROM pairs) pairs_ USING (cluster_id, topic, partition, a_broker, b_broker)
WHERE `offset` IS NOT NULL
