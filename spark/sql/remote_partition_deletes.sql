/*
[table]
doc = "One row per RemotePartitionDeleteMetadataRecord."
output = true
applies = "has_remote_log_metadata"
columns = [
    ["broker", "string", "the input's label: the broker whose log dir (or log dirs, one label given several) it was read from"],
    ["topic", "string", "the topic"],
    ["partition", "int", "the partition"],
    ["topic_id", "string", "the topic's id"],
    ["state", "string", "`DELETE_PARTITION_MARKED`, `DELETE_PARTITION_STARTED`, `DELETE_PARTITION_FINISHED`"],
    ["broker_id", "int", "the broker that wrote the record"],
    ["event_timestamp", "bigint", "EventTimestampMs"],
    ["file", "string", "the file it was read from"],
    ["position", "bigint", "the byte position in `file`"],
    ["offset", "bigint", "in `__remote_log_metadata`"],
]
*/
SELECT broker, topic, partition, topic_id, state, broker_id, event_timestamp, file, position, offset
FROM remote_log_events WHERE record_type = 'partition_delete'
