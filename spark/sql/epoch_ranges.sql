/*
[table]
doc = """finished_copies with one row per entry of its segment_leader_epochs (`epoch@offset, ...`): epoch, lo, hi (the
offsets the segment says that epoch covers: each entry up to the next one's offset - 1, the last one up to the
segment's end offset)."""
keep = true
columns = """
cluster_id string, topic string, partition int, topic_id string, metadata_broker string,
remote_segment_id string, start_offset bigint, end_offset bigint, max_timestamp bigint,
segment_leader_epochs string, size bigint, state string, broker_id int, broker_leader_epoch int,
first_event_at bigint, last_event_at bigint, event_count bigint, file string, position bigint, epoch int,
lo bigint, hi bigint"""
*/
SELECT s.*, CAST(split(e.entry, '@')[0] AS INT) AS epoch, CAST(split(e.entry, '@')[1] AS BIGINT) AS lo,
       coalesce(lead(CAST(split(e.entry, '@')[1] AS BIGINT))
                  OVER (PARTITION BY s.metadata_broker, s.topic, s.partition, s.remote_segment_id ORDER BY e.i) - 1,
                s.end_offset) AS hi
FROM finished_copies s LATERAL VIEW posexplode(split(s.segment_leader_epochs, ', ')) e AS i, entry
