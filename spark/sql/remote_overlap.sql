/*
[check]
family = "remote"
applies = "has_remote_log_metadata"

[[finding]]
kind = "remote_overlap"
severity = "warning"
meaning = "two finished remote segments hold the same offsets with different leader epochs"
fields = ["remote_segment_id", "other_remote_segment_id", "overlap", "segment_leader_epochs", "other_segment_leader_epochs"]
rule = '''
two COPY_SEGMENT_FINISHED segments of a partition hold the same offsets with different leader-epoch chains
(some common offset in different epochs: two histories of those offsets in the remote tier), once per pair, on
the one copied later: `remote_segment_id`, `other_remote_segment_id`, `overlap` [first, last],
`segment_leader_epochs`, `other_segment_leader_epochs`'''
compacted = "unchanged: tiered storage is not allowed on a compacted topic (KIP-405)"
reports = ["tiered"]
*/
-- Reads range_pairs (range_pairs of finished_copies: metadata_broker, cluster_id, topic, partition and the a_/b_
-- remote_segment_id, segment_leader_epochs, start_offset, end_offset, first_event_at, file, position, epoch, lo,
-- hi); the check `remote_overlap`.
SELECT 'remote_overlap' AS kind, broker, topic, partition, CAST(b_file AS STRING) AS file,
       CAST(b_position AS BIGINT) AS position, CAST(first_overlap AS BIGINT) AS offset, CAST(NULL AS BIGINT) AS producer_id,
       CAST(NULL AS INT) AS producer_epoch,
       format_string('Remote segments %s and %s both hold offsets %d-%d with different leader epochs (%s vs %s).', b_remote_segment_id, a_remote_segment_id, first_overlap, last_overlap, b_segment_leader_epochs, a_segment_leader_epochs) AS message,
       to_json(named_struct('remote_segment_id', b_remote_segment_id, 'other_remote_segment_id', a_remote_segment_id, 'overlap', array(first_overlap, last_overlap), 'segment_leader_epochs', b_segment_leader_epochs, 'other_segment_leader_epochs', a_segment_leader_epochs)) AS details FROM (
  SELECT metadata_broker AS broker, cluster_id, topic, partition, b_remote_segment_id, a_remote_segment_id,
         b_segment_leader_epochs, a_segment_leader_epochs, b_file, b_position,
         greatest(a_start_offset, b_start_offset) AS first_overlap, least(a_end_offset, b_end_offset) AS last_overlap
  FROM range_pairs
  WHERE (b_first_event_at > a_first_event_at
         OR (b_first_event_at = a_first_event_at AND b_remote_segment_id > a_remote_segment_id))
    AND a_epoch != b_epoch AND a_lo <= b_hi AND b_lo <= a_hi
  GROUP BY metadata_broker, cluster_id, topic, partition, b_remote_segment_id, a_remote_segment_id,
           b_segment_leader_epochs, a_segment_leader_epochs, b_file, b_position, a_start_offset, a_end_offset,
           b_start_offset, b_end_offset)
