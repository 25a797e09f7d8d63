/*
[check]
coverage = true
family = "share_groups"
applies = "has_share_state_records"

[[finding]]
kind = "share_state_beyond_log_end"
severity = "error"
meaning = '''
a share partition's start offset is above its log end (the log was truncated under it, e.g. by an unclean
election)'''
fields = ["group", "topic_id", "share_partition_key", "start_offset", "coordinator_partition", "coordinator_offset", "log_end_offset", "reference_broker"]
rule = '''
the share partition's start offset at the end of the input is above the log end of the partition's longest
replica: the share group acknowledged offsets the log no longer holds (truncated under it), and records
written there again are skipped. As `share_records_deleted_undelivered`: `group`, `topic_id`,
`share_partition_key`, `start_offset`, `coordinator_partition`, `coordinator_offset`, `log_end_offset`,
`reference_broker`'''
compacted = '''
judged on the share partition's state at the end of the input, which the cleaner of `__share_group_state`
keeps (each key's newest record); against the data partition's log start and end, which compaction of the data
does not move'''
reports = ["groups"]
event = "share group {group}'s state of {topic}-{partition} starts at offset {start_offset}, beyond the log end {log_end_offset}"
*/
-- The `share_state_beyond_log_end` check: a share partition's state (share_partition_state) held against its serving replica
-- (serving_replicas). `not_judged` where the share coordinator's copy lacks offsets after the state record (a later
-- one may stand there), or a copy of the data partition lacks offsets from the log end up to the state's start
-- offset (replica_coverage: the serving replica's log end is then the copy's).
WITH found AS (
SELECT 'share_state_beyond_log_end' AS kind, broker, topic, partition, CAST(file AS STRING) AS file,
       CAST(position AS BIGINT) AS position, CAST(start_offset AS BIGINT) AS offset, CAST(NULL AS BIGINT) AS producer_id,
       CAST(NULL AS INT) AS producer_epoch,
       format_string('Share group %s\'s state of %s-%d starts at offset %d, beyond the log end %d (%s): the log was truncated under the share group\'s acknowledgements.', `group`, topic, partition, start_offset, log_end_offset, longest_broker) AS message,
       to_json(named_struct('group', `group`, 'topic_id', topic_id, 'share_partition_key', format_string('%s:%s:%d', `group`, topic_id, partition), 'start_offset', start_offset, 'coordinator_partition', coordinator_partition, 'coordinator_offset', coordinator_offset, 'log_end_offset', log_end_offset, 'reference_broker', longest_broker)) AS details,
       CASE WHEN coordinator_range IS NOT NULL THEN coordinator_broker ELSE data_range.broker END AS gap_broker,
       CASE WHEN coordinator_range IS NOT NULL THEN coordinator_partition
            ELSE format_string('%s-%d', topic, partition) END AS gap_partition,
       coalesce(coordinator_range,
                CASE WHEN data_range IS NOT NULL
                     THEN named_struct('first_offset', data_range.first_offset, 'last_offset', data_range.last_offset,
                                       'proven', data_range.proven) END) AS gap_range FROM (
  SELECT s.*, s.coordinator_broker AS broker, l.log_start_offset, l.log_end_offset, l.serving_broker AS longest_broker,
         -- a later state record may stand in offsets the share coordinator's copy lacks after this one, and the
         -- offsets it is held against in what a copy of the data partition lacks (partition_coverage,
         -- replica_coverage)
         try_element_at(filter(cc.missing, m -> coalesce(m.last_offset, 9223372036854775807) > s.coordinator_offset), 1)
           AS coordinator_range,
         try_element_at(filter(dc.missing, m -> m.first_offset <= s.start_offset
                                                AND coalesce(m.last_offset, 9223372036854775807) >= l.log_end_offset), 1)
           AS data_range
  FROM (SELECT DISTINCT cluster_id, `group`, topic, topic_id, partition, start_offset, coordinator_broker,
                        coordinator_partition, coordinator_offset, file, position FROM share_partition_state) s
  JOIN serving_replicas l ON l.cluster_id = s.cluster_id AND l.topic = s.topic AND l.partition = s.partition
  LEFT JOIN (SELECT broker, format_string('%s-%d', topic, partition) AS coordinator_partition, missing
             FROM partition_coverage) cc
      ON cc.broker = s.coordinator_broker AND cc.coordinator_partition = s.coordinator_partition
  LEFT JOIN replica_coverage dc ON dc.cluster_id = s.cluster_id AND dc.topic = s.topic AND dc.partition = s.partition)
WHERE start_offset > log_end_offset)
SELECT * FROM found
