/*
[table]
doc = """The offset commits of each __consumer_offsets partition's serving replica (the current leader's, else the longest) with their transaction's fate."""
columns = """
cluster_id string, group_id string, commit_topic string, commit_partition int, topic string, partition int,
broker string, file string, position bigint, offset bigint, timestamp bigint, producer_id bigint,
producer_epoch int, committed_offset bigint, committed_leader_epoch int, commit_timestamp bigint,
tombstone boolean, transactional boolean, transaction_outcome string, txn_first_offset bigint,
txn_first_timestamp bigint, tombstone_offset bigint"""
*/
-- The offset commits of each __consumer_offsets partition's serving replica (the current leader's, else the longest) with their transaction's fate, over
-- offset_commits, serving_replicas and log_transactions: every commit with cluster_id,
-- transaction_outcome (COMMIT|ABORT|OPEN for a transactional one, null otherwise), txn_first_offset and
-- txn_first_timestamp, keeping the non-tombstone commits after their partition's last tombstone, which drops the
-- applied offset and the pending ones (OffsetMetadataManager.replay, 2d7df031).
WITH
pick AS (SELECT cluster_id, topic, partition, serving_broker AS broker FROM serving_replicas),
fates AS (
    SELECT c.*, CASE WHEN c.transactional THEN coalesce(t.outcome, 'OPEN') END AS transaction_outcome,
           t.first_offset AS txn_first_offset, t.first_timestamp AS txn_first_timestamp
    FROM (SELECT * FROM offset_commits JOIN pick USING (topic, partition, broker)) c  -- one replica of each partition
    LEFT JOIN (SELECT broker, topic, partition, producer_id, first_offset, last_data_offset, outcome,
                      first_timestamp FROM log_transactions) t
    ON c.transactional AND c.broker = t.broker AND c.topic = t.topic AND c.partition = t.partition
       AND c.producer_id = t.producer_id AND c.offset BETWEEN t.first_offset AND t.last_data_offset),
cut AS (
    SELECT cluster_id, group_id, commit_topic, commit_partition, max(offset) AS tombstone_offset
    FROM fates WHERE tombstone GROUP BY cluster_id, group_id, commit_topic, commit_partition)
SELECT * FROM fates LEFT JOIN cut USING (cluster_id, group_id, commit_topic, commit_partition)
WHERE NOT tombstone AND (tombstone_offset IS NULL OR offset > tombstone_offset)
