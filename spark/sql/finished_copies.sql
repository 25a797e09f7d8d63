/*
[table]
doc = """The COPY_SEGMENT_FINISHED segments of each data partition from one broker's metadata (the broker with the
most events of that partition: replicas of the metadata topic hold the same records), with cluster_id and
`metadata_broker`."""
keep = true
applies = "has_remote_log_metadata"
columns = """
cluster_id string, topic string, partition int, topic_id string, metadata_broker string,
remote_segment_id string, start_offset bigint, end_offset bigint, max_timestamp bigint,
segment_leader_epochs string, size bigint, state string, broker_id int, broker_leader_epoch int,
first_event_at bigint, last_event_at bigint, event_count bigint, file string, position bigint"""
*/
WITH remote AS (
  SELECT /*+ BROADCAST(brokers_) */ broker, rows_.* EXCEPT (broker), coalesce(brokers_.cluster_id, '') AS cluster_id
  FROM remote_segments rows_ LEFT JOIN (SELECT broker, cluster_id FROM brokers) brokers_ USING (broker)),
counts AS (
  SELECT cluster_id, topic, partition, topic_id, broker FROM (
    SELECT cluster_id, topic, partition, topic_id, broker,
           row_number() OVER (PARTITION BY cluster_id, topic, partition, topic_id
                              ORDER BY sum(event_count) DESC, broker) AS rank
    FROM remote GROUP BY cluster_id, topic, partition, topic_id, broker)
  WHERE rank = 1)
SELECT cluster_id, topic, partition, topic_id, broker AS metadata_broker, remote_segment_id, start_offset, end_offset, max_timestamp, segment_leader_epochs, size, state, broker_id, broker_leader_epoch, first_event_at, last_event_at, event_count, file, position
FROM remote JOIN counts USING (cluster_id, topic, partition, topic_id, broker)
WHERE state = 'COPY_SEGMENT_FINISHED' AND start_offset IS NOT NULL
