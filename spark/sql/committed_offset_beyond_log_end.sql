-- The `committed_offset_beyond_log_end` check: reads consumer_offsets (consumer_offsets_table); names the group
-- (on the broker holding the commit).
SELECT 'committed_offset_beyond_log_end' AS kind, 'error' AS severity, broker, topic, partition, CAST(file AS STRING) AS file,
       CAST(position AS BIGINT) AS position, CAST(committed_offset AS BIGINT) AS offset, CAST(NULL AS BIGINT) AS producer_id,
       CAST(NULL AS INT) AS producer_epoch,
       format_string('Group %s committed offset %d on %s-%d, beyond its log end %d (%s): the group will reset (auto.offset.reset) or skip what is written up to there.', group_id, committed_offset, topic, partition, log_end_offset, data_broker) AS message,
       to_json(named_struct('group', group_id, 'committed_offset', committed_offset, 'coordinator_partition', coordinator_partition, 'coordinator_offset', coordinator_offset, 'commit_timestamp', commit_timestamp, 'log_start_offset', log_start_offset, 'log_end_offset', log_end_offset, 'reference_broker', data_broker)) AS details FROM (SELECT *, coordinator_broker AS broker FROM consumer_offsets) WHERE status = 'beyond_log_end' AND coalesce(transaction_outcome, 'COMMIT') = 'COMMIT'
