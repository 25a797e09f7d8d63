-- The `committed_offset_below_log_start` check: reads consumer_offsets (consumer_offsets_table); names the group
-- (on the broker holding the commit).
SELECT 'committed_offset_below_log_start' AS kind, 'error' AS severity, broker, topic, partition, CAST(file AS STRING) AS file,
       CAST(position AS BIGINT) AS position, CAST(committed_offset AS BIGINT) AS offset, CAST(NULL AS BIGINT) AS producer_id,
       CAST(NULL AS INT) AS producer_epoch,
       format_string('Group %s committed offset %d on %s-%d, below its log start %d: offsets %d-%d were deleted before the group read them.', group_id, committed_offset, topic, partition, log_start_offset, committed_offset, log_start_offset - 1) AS message,
       to_json(named_struct('group', group_id, 'committed_offset', committed_offset, 'coordinator_partition', coordinator_partition, 'coordinator_offset', coordinator_offset, 'commit_timestamp', commit_timestamp, 'log_start_offset', log_start_offset, 'log_end_offset', log_end_offset, 'reference_broker', data_broker)) AS details FROM (SELECT *, coordinator_broker AS broker FROM consumer_offsets) WHERE status = 'below_log_start' AND coalesce(transaction_outcome, 'COMMIT') = 'COMMIT'
