/*
[check]
family = "remote"
applies = "has_remote_log_metadata"

[[finding]]
kind = "remote_log_gap"
severity = "error"
meaning = '''
offsets between the earliest copied remote segment and the local log start that neither a finished remote
segment nor a local segment holds'''
fields = ["missing_offsets", "remote_end_offset", "local_log_start_offset", "topic_id"]
rule = '''
tiered storage: offsets between the earliest COPY_SEGMENT_FINISHED remote segment and the local log start (the
first batch of the local replica's first segment) that neither a finished remote segment nor the local log
holds, one finding per missing range on the local replica's broker: `missing_offsets` [first, last],
`remote_end_offset` (the highest remote offset below the gap), `local_log_start_offset`, `topic_id`;
`file`/`position` are the latest metadata record of a segment ending at `remote_end_offset`'''
compacted = "unchanged: tiered storage is not allowed on a compacted topic (KIP-405)"
reports = ["tiered"]
event = "offsets {missing_offsets[0]}-{missing_offsets[1]} of {topic}-{partition} are in neither the remote tier nor the local log"
*/
-- Reads finished_copies (cluster_id, topic, partition, topic_id, start_offset, end_offset, file, position) and
-- local_logs (broker, cluster_id, topic, partition, local_log_start_offset, local_topic_id); the check `remote_log_gap`.
WITH intervals AS (
  SELECT broker, cluster_id, topic, partition, topic_id, local_log_start_offset, start_offset, end_offset, file,
         position
  FROM finished_copies JOIN local_logs USING (cluster_id, topic, partition)
  -- a recreated topic has the same name and another id: its old remote segments are not its history
  WHERE (topic_id IS NULL OR local_topic_id IS NULL OR topic_id = local_topic_id) AND start_offset < local_log_start_offset),
bounded AS (
  SELECT * FROM intervals
  UNION ALL
  SELECT broker, cluster_id, topic, partition, topic_id, local_log_start_offset, local_log_start_offset,
         local_log_start_offset, CAST(NULL AS STRING), CAST(NULL AS BIGINT)
  FROM (SELECT DISTINCT broker, cluster_id, topic, partition, topic_id, local_log_start_offset FROM intervals)),
preceded AS (
  SELECT *, max(named_struct('end_offset', end_offset, 'file', file, 'position', position)) OVER (
           PARTITION BY broker, cluster_id, topic, partition ORDER BY start_offset, end_offset
           ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev
  FROM bounded)
SELECT 'remote_log_gap' AS kind, broker, topic, partition, CAST(file AS STRING) AS file,
       CAST(position AS BIGINT) AS position, CAST(first_missing AS BIGINT) AS offset, CAST(NULL AS BIGINT) AS producer_id,
       CAST(NULL AS INT) AS producer_epoch,
       format_string('Offsets %d-%d are in neither tier: the remote tier ends at %d below them and the local log starts at %d.', first_missing, last_missing, remote_end_offset, local_log_start_offset) AS message,
       to_json(named_struct('missing_offsets', array(first_missing, last_missing), 'remote_end_offset', remote_end_offset, 'local_log_start_offset', local_log_start_offset, 'topic_id', topic_id)) AS details FROM (
  SELECT broker, cluster_id, topic, partition, topic_id, local_log_start_offset, prev.end_offset + 1 AS first_missing,
         start_offset - 1 AS last_missing, prev.end_offset AS remote_end_offset, prev.file AS file,
         prev.position AS position
  FROM preceded WHERE prev IS NOT NULL AND start_offset > prev.end_offset + 1)
