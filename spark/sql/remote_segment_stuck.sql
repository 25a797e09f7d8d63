-- Reads remote_segments (broker, topic, partition, topic_id, remote_segment_id, start_offset, end_offset, state,
-- last_event_at, file, position); the check `remote_segment_stuck`.
SELECT 'remote_segment_stuck' AS kind, 'warning' AS severity, broker, topic, partition, CAST(file AS STRING) AS file,
       CAST(position AS BIGINT) AS position, CAST(start_offset AS BIGINT) AS offset, CAST(NULL AS BIGINT) AS producer_id,
       CAST(NULL AS INT) AS producer_epoch,
       format_string('Remote segment %s (offsets %d-%d) has been %s for %d ms before the partition\'s newest remote log metadata event.', remote_segment_id, start_offset, end_offset, state, stuck_ms) AS message,
       to_json(named_struct('remote_segment_id', remote_segment_id, 'state', state, 'start_offset', start_offset, 'end_offset', end_offset, 'stuck_since', last_event_at, 'newest_event_at', newest_event_at, 'stuck_ms', stuck_ms, 'stuck_after_ms', (:remote_stuck_after_ms))) AS details FROM (
  SELECT *, newest_event_at - last_event_at AS stuck_ms FROM (
    SELECT *, max(last_event_at) OVER (PARTITION BY broker, topic, topic_id, partition) AS newest_event_at
    FROM remote_segments))
WHERE state IN ('COPY_SEGMENT_STARTED', 'DELETE_SEGMENT_STARTED') AND stuck_ms > (:remote_stuck_after_ms)
