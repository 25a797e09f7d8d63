/*
[check]
family = "remote"
applies = "has_remote_log_metadata"

[[finding]]
kind = "remote_segment_stuck"
severity = "warning"
meaning = '''
a remote segment left in COPY_SEGMENT_STARTED or DELETE_SEGMENT_STARTED longer than --remote-stuck-after
before the image time'''
fields = ["remote_segment_id", "state", "start_offset", "end_offset", "stuck_since", "newest_event_at", "image_time", "stuck_ms", "stuck_after_ms"]
rule = '''
a remote segment whose latest state is COPY_SEGMENT_STARTED or DELETE_SEGMENT_STARTED, entered more than
`--remote-stuck-after` (default 1h) before the image time of the broker holding its metadata (`image_times`;
not the newest `__remote_log_metadata` event of its partition, which a quiet partition never moves on):
`remote_segment_id`, `state`, `start_offset`, `end_offset`, `stuck_since`, `newest_event_at` (the partition's
newest metadata event), `image_time`, `stuck_ms` (from `stuck_since` to the image time), `stuck_after_ms`; `file`/`position` the record that set the state'''
compacted = "unchanged: tiered storage is not allowed on a compacted topic (KIP-405)"
reports = ["tiered"]
event = "remote segment {remote_segment_id} of {topic}-{partition} ({start_offset}-{end_offset}) stuck in {state}"
at = "stuck_since"
clock = "leader broker's clock"
*/
-- Reads remote_segments (broker, topic, partition, topic_id, remote_segment_id, start_offset, end_offset, state,
-- last_event_at, file, position) and image_times (a broker without one: the partition's newest event); the check
-- `remote_segment_stuck`.
SELECT 'remote_segment_stuck' AS kind, broker, topic, partition, CAST(file AS STRING) AS file,
       CAST(position AS BIGINT) AS position, CAST(start_offset AS BIGINT) AS offset, CAST(NULL AS BIGINT) AS producer_id,
       CAST(NULL AS INT) AS producer_epoch,
       format_string('Remote segment %s (offsets %d-%d) has been %s for %d ms at the image time.', remote_segment_id, start_offset, end_offset, state, stuck_ms) AS message,
       to_json(named_struct('remote_segment_id', remote_segment_id, 'state', state, 'start_offset', start_offset, 'end_offset', end_offset, 'stuck_since', last_event_at, 'newest_event_at', newest_event_at, 'image_time', image_time, 'stuck_ms', stuck_ms, 'stuck_after_ms', (:remote_stuck_after_ms))) AS details FROM (
  SELECT *, coalesce(image_time, newest_event_at) - last_event_at AS stuck_ms FROM (
    SELECT *, max(last_event_at) OVER (PARTITION BY broker, topic, topic_id, partition) AS newest_event_at
    FROM remote_segments LEFT JOIN (SELECT broker, image_time FROM image_times) USING (broker)))
WHERE state IN ('COPY_SEGMENT_STARTED', 'DELETE_SEGMENT_STARTED') AND stuck_ms > (:remote_stuck_after_ms)
