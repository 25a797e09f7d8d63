-- Reads range_pairs (range_pairs of finished_copies: metadata_broker, cluster_id, topic, partition and the a_/b_
-- remote_segment_id, segment_leader_epochs, file, position, epoch, lo, hi); the check `remote_leader_epoch_mismatch`
-- along the remote segments.
SELECT 'remote_leader_epoch_mismatch' AS kind, 'error' AS severity, broker, topic, partition, CAST(b_file AS STRING) AS file,
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
           b_position)
