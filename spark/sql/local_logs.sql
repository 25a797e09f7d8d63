/*
[table]
doc = """Per local replica: local_log_start_offset (its first segment's first batch), local_topic_id (its
partition.metadata) and cluster_id."""
keep = true
columns = """
broker string, topic string, partition int, local_log_start_offset bigint, local_topic_id string,
cluster_id string"""
*/
SELECT /*+ BROADCAST(brokers_) */ broker, rows_.* EXCEPT (broker), coalesce(brokers_.cluster_id, '') AS cluster_id
FROM (
  SELECT * FROM (
    SELECT broker, topic, partition, min(coalesce(first_batch_base_offset, base_offset)) AS local_log_start_offset
    FROM segments GROUP BY broker, topic, partition)
  LEFT JOIN (SELECT broker, topic, partition, topic_id AS local_topic_id FROM partition_topic_ids)
  USING (broker, topic, partition)) rows_
LEFT JOIN (SELECT broker, cluster_id FROM brokers) brokers_ USING (broker)
