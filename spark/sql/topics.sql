/*
[table]
doc = """One row per topic (by id) of each cluster's metadata log; created_offset and created_at are null when the
topic came from the base snapshot (created before the log the input holds)."""
output = true
keep = true
applies = "kraft"
columns = [
    ["cluster_id", "string", "the cluster.id of the broker's meta.properties (empty when unknown)"],
    ["metadata_broker", "string", "the input whose copy of the metadata log was replayed (the copy that reaches furthest)"],
    ["topic", "string", "the topic"],
    ["topic_id", "string", "the topic's id"],
    ["partitions", "int", "its partitions (PartitionRecords)"],
    ["created_offset", "bigint", "its TopicRecord's offset"],
    ["created_at", "bigint", "null for a topic of the base snapshot: created before the log in the input"],
    ["deleted_offset", "bigint", "its RemoveTopicRecord's offset (null: live)"],
    ["deleted_at", "bigint", "that record's timestamp"],
    ["file", "string", "the file it was read from"],
]
*/
SELECT cluster_id, metadata_broker, topic, topic_id, coalesce(partitions, 0) AS partitions, created_offset,
       created_at, deleted_offset, deleted_at, file
FROM (SELECT cluster_id, metadata_broker, topic, topic_id,
             CASE WHEN snapshot_offset IS NULL THEN metadata_offset END AS created_offset,
             CASE WHEN snapshot_offset IS NULL THEN timestamp END AS created_at, file
      FROM applied_records WHERE record_type = 'TOPIC_RECORD')
LEFT JOIN (SELECT cluster_id, topic_id, CAST(count(DISTINCT partition) AS INT) AS partitions
           FROM applied_records WHERE record_type = 'PARTITION_RECORD' GROUP BY cluster_id, topic_id)
     USING (cluster_id, topic_id)
LEFT JOIN (SELECT cluster_id, topic_id, min(metadata_offset) AS deleted_offset,
                  min_by(timestamp, metadata_offset) AS deleted_at
           FROM applied_records WHERE record_type = 'REMOVE_TOPIC_RECORD' GROUP BY cluster_id, topic_id)
     USING (cluster_id, topic_id)
