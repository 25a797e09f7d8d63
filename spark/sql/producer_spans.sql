/*
[table]
doc = """Per partition and producer id, from the batch headers alone: first_offset, last_offset, first_ts (its first
record's timestamp), last_ts (its last batch's max timestamp) and record_count."""
columns = """
broker string, topic string, partition int, producer_id bigint, first_offset bigint, last_offset bigint,
first_ts bigint, last_ts bigint, record_count bigint"""
*/
SELECT broker, topic, partition, producer_id, min(base_offset) AS first_offset,
       max(last_offset) AS last_offset,
       min_by(CASE WHEN timestamp_type = 'LogAppendTime' THEN max_timestamp ELSE base_timestamp END,
              base_offset) AS first_ts,
       max_by(max_timestamp, base_offset) AS last_ts, CAST(sum(count) AS BIGINT) AS record_count
FROM resend_data GROUP BY broker, topic, partition, producer_id
