/*
[table]
doc = """Per partition of a broker: log_end_offset (last offset of a sound batch + 1), log_first_offset,
log_end_timestamp (max timestamp), latest_leader_epoch (of its v2 batches), and from the checkpoints high_watermark,
log_start_offset, cleaner_offset."""
columns = """
broker string, topic string, partition int, log_end_offset bigint, log_first_offset bigint,
log_end_timestamp bigint, latest_leader_epoch int, high_watermark bigint, log_start_offset bigint,
cleaner_offset bigint"""
*/
SELECT * FROM (
    SELECT broker, topic, partition, max(last_offset) + 1 AS log_end_offset,
           min(base_offset) AS log_first_offset, max(max_timestamp) AS log_end_timestamp,
           max(CASE WHEN magic = 2 THEN partition_leader_epoch END) AS latest_leader_epoch
    FROM log_batches WHERE crc_valid GROUP BY broker, topic, partition)
LEFT JOIN (SELECT broker, topic, partition, high_watermark, log_start_offset, cleaner_offset
           FROM partition_checkpoints)
USING (broker, topic, partition)
