/*
[check]
family = "remote"
applies = "has_remote_log_metadata"

[[finding]]
kind = "remote_leader_epoch_mismatch"
severity = "error"
meaning = '''
a remote segment's leader-epoch entries disagree with the local leader-epoch-checkpoint or with the other
remote segments' epochs'''
fields = ["remote_segment_id", "against", "remote_epoch", "expected_epoch", "segment_leader_epochs", "checkpoint_file", "other_remote_segment_id"]
rule = '''
a finished remote segment's leader-epoch entries disagree with the local `leader-epoch-checkpoint` at an
offset both cover (`against`: `leader-epoch-checkpoint`; the checkpoint covers offsets from its first entry
on), or hold, above another finished segment's epoch E, an epoch lower than E (`against`: `remote segments`; a
leader epoch never decreases along the log): `remote_segment_id`, `against`, `remote_epoch`, `expected_epoch`,
`segment_leader_epochs`, `checkpoint_file`, `other_remote_segment_id`; `offset` is the first offset in
question'''
compacted = "unchanged: tiered storage is not allowed on a compacted topic (KIP-405)"
reports = ["tiered"]
*/
-- remote_leader_epoch_mismatch, judged two ways: a remote segment's leader epochs against the local
-- leader-epoch-checkpoint, and against the remote segments below it.
-- Reads epoch_ranges (epoch_ranges of finished_copies: cluster_id, topic, partition, topic_id, remote_segment_id,
-- segment_leader_epochs, file, position, epoch, lo, hi), local_logs (broker, cluster_id, topic, partition,
-- local_topic_id) and leader_epochs (the leader_epochs table: broker, topic, partition, file, epoch, start_offset);
-- the check `remote_leader_epoch_mismatch` (against the leader-epoch-checkpoint).
-- Reads range_pairs (range_pairs of finished_copies: metadata_broker, cluster_id, topic, partition and the a_/b_
-- remote_segment_id, segment_leader_epochs, file, position, epoch, lo, hi); the check `remote_leader_epoch_mismatch`
-- along the remote segments.
WITH checkpoint AS (
  SELECT broker, topic, partition, file AS checkpoint_file, epoch AS expected_epoch, start_offset AS c_lo,
         lead(start_offset) OVER (PARTITION BY broker, topic, partition ORDER BY start_offset) - 1 AS c_hi
  FROM leader_epochs),
covered AS (
  -- a recreated topic has the same name and another id: its old remote segments are not its history
  SELECT * FROM epoch_ranges JOIN local_logs USING (cluster_id, topic, partition) WHERE (topic_id IS NULL OR local_topic_id IS NULL OR topic_id = local_topic_id))
(SELECT 'remote_leader_epoch_mismatch' AS kind, broker, topic, partition, CAST(file AS STRING) AS file,
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
           checkpoint_file))
UNION ALL
(SELECT 'remote_leader_epoch_mismatch' AS kind, broker, topic, partition, CAST(b_file AS STRING) AS file,
       CAST(b_position AS BIGINT) AS position, CAST(m.offset AS BIGINT) AS offset, CAST(NULL AS BIGINT) AS producer_id,
       CAST(NULL AS INT) AS producer_epoch,
       format_string('Remote segment %s says offset %d is in leader epoch %d, but remote segment %s holds epoch %d at lower offsets.', b_remote_segment_id, m.offset, m.remote_epoch, m.other, m.expected_epoch) AS message,
       to_json(named_struct('remote_segment_id', b_remote_segment_id, 'against', 'remote segments', 'remote_epoch', m.remote_epoch, 'expected_epoch', m.expected_epoch, 'segment_leader_epochs', b_segment_leader_epochs, 'checkpoint_file', CAST(NULL AS STRING), 'other_remote_segment_id', m.other)) AS details FROM (
  SELECT metadata_broker AS broker, cluster_id, topic, partition, b_remote_segment_id, b_segment_leader_epochs, b_file,
         b_position,
         min(named_struct('offset', b_lo, 'remote_epoch', b_epoch, 'expected_epoch', a_epoch,
                          'other', a_remote_segment_id)) AS m
  FROM range_pairs WHERE a_hi < b_lo AND a_epoch > b_epoch
  GROUP BY metadata_broker, cluster_id, topic, partition, b_remote_segment_id, b_segment_leader_epochs, b_file,
           b_position))
