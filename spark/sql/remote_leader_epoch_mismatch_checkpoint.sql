-- Reads epoch_ranges (epoch_ranges of finished_copies: cluster_id, topic, partition, topic_id, remote_segment_id,
-- segment_leader_epochs, file, position, epoch, lo, hi), local_logs (broker, cluster_id, topic, partition,
-- local_topic_id) and leader_epochs (the leader_epochs table: broker, topic, partition, file, epoch, start_offset);
-- the check `remote_leader_epoch_mismatch` (against the leader-epoch-checkpoint).
WITH checkpoint AS (
  SELECT broker, topic, partition, file AS checkpoint_file, epoch AS expected_epoch, start_offset AS c_lo,
         lead(start_offset) OVER (PARTITION BY broker, topic, partition ORDER BY start_offset) - 1 AS c_hi
  FROM leader_epochs),
covered AS (
  -- a recreated topic has the same name and another id: its old remote segments are not its history
  SELECT * FROM epoch_ranges JOIN local_logs USING (cluster_id, topic, partition) WHERE (topic_id IS NULL OR local_topic_id IS NULL OR topic_id = local_topic_id))
SELECT 'remote_leader_epoch_mismatch' AS kind, 'error' AS severity, broker, topic, partition, CAST(file AS STRING) AS file,
       CAST(position AS BIGINT) AS position, CAST(m.offset AS BIGINT) AS offset, CAST(NULL AS BIGINT) AS producer_id,
       CAST(NULL AS INT) AS producer_epoch,
       format_string('Remote segment %s says offset %d is in leader epoch %d; the local leader-epoch-checkpoint says epoch %d.', remote_segment_id, m.offset, m.remote_epoch, m.expected_epoch) AS message,
       to_json(named_struct('remote_segment_id', remote_segment_id, 'against', 'leader-epoch-checkpoint', 'remote_epoch', m.remote_epoch, 'expected_epoch', m.expected_epoch, 'segment_leader_epochs', segment_leader_epochs, 'checkpoint_file', checkpoint_file, 'other_remote_segment_id', CAST(NULL AS STRING))) AS details FROM (
  SELECT broker, cluster_id, topic, partition, remote_segment_id, segment_leader_epochs, file, position,
         checkpoint_file,
         min(named_struct('offset', greatest(lo, c_lo), 'remote_epoch', epoch, 'expected_epoch', expected_epoch)) AS m
  FROM covered JOIN checkpoint USING (broker, topic, partition)
  WHERE epoch != expected_epoch AND lo <= coalesce(c_hi, hi) AND c_lo <= hi
  GROUP BY broker, cluster_id, topic, partition, remote_segment_id, segment_leader_epochs, file, position,
           checkpoint_file)
