/*
[table]
doc = "topic_id -> topic for every topic id that partition.metadata, a TopicRecord or a group record names."
columns = "topic_id string, topic string"
*/
-- topic_id, topic for every topic id that partition_topic_ids (partition.metadata), metadata_records (a TopicRecord)
-- or group_events (a group record's topic name) names.
SELECT topic_id, min(topic) AS topic FROM (
    SELECT topic_id, topic FROM partition_topic_ids
    UNION ALL SELECT topic_id, topic FROM metadata_records WHERE record_type = 'TOPIC_RECORD'
    UNION ALL SELECT tp.topic_id, tp.topic FROM group_events LATERAL VIEW explode(topic_partitions) t_ AS tp
              WHERE tp.role = 'topic_name')
WHERE topic_id IS NOT NULL AND topic IS NOT NULL GROUP BY topic_id
