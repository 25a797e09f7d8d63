/*
[check]
coverage = true
family = "committed_offset"
applies = "has_consumer_offsets"

[[finding]]
kind = "committed_offset_below_log_start"
severity = "error"
meaning = "a group's committed offset is below the partition's log start"
fields = ["group", "committed_offset", "coordinator_partition", "coordinator_offset", "commit_timestamp", "log_start_offset", "log_end_offset", "reference_broker", "member_id", "member_client_id"]
rule = '''
a group's committed offset is below the partition's log start (retention deleted records the group never
read); a tiered partition's log start is in the remote tier (its earliest finished copy, not below
`log-start-offset-checkpoint`), so a group reading from the remote tier is sound; `broker`,
`topic`/`partition` and `file`/`position` as for a commit beyond the log end; the same fields: `group`,
`committed_offset`, `coordinator_partition`, `coordinator_offset`, `commit_timestamp`, `log_start_offset`,
`log_end_offset`, `reference_broker`; `member_id` and `member_client_id` name the member that owned the
partition at the commit, where the group replay knows it (the assignment in force at the commit record's
offset in the same `__consumer_offsets` log)'''
compacted = '''
unchanged: `__consumer_offsets` is compacted (a key's latest commit stays, a tombstone until its delete
horizon), and the latest commit per group and partition is what is judged; a committed offset may fall in a
hole the cleaner made in the data log: it is still inside the log'''
event = "group {group} committed offset {committed_offset} on {topic}-{partition}, below its log start {log_start_offset}"
at = "commit_timestamp"
clock = "group coordinator's clock"

[[finding.action]]
phase = "verify"
command = "kafka-consumer-groups.sh --bootstrap-server <BOOTSTRAP> --group {group} --reset-offsets --topic {topic}:{partition} --to-earliest --dry-run"
why = "shows the reset before it is made: offsets {committed_offset} to {log_start_offset} are deleted, the group can only go on from the log start"
destructive = false

[[finding.action]]
phase = "repair"
command = "kafka-consumer-groups.sh --bootstrap-server <BOOTSTRAP> --group {group} --reset-offsets --topic {topic}:{partition} --to-earliest --execute"
why = "moves the group to the log start (the group must have no active member) instead of leaving it to auto.offset.reset"
destructive = true
*/
-- The `committed_offset_below_log_start` check: reads consumer_offsets (consumer_offsets_table); names the group
-- (on the broker holding the commit), and the member that owned the partition at the commit (commit_owners).
-- `not_judged` where the copy of its __consumer_offsets partition lacks offsets after the commit (a later
-- commit may be there), or a copy of the committed partition lacks the offsets it is judged against.
WITH found AS (
SELECT 'committed_offset_below_log_start' AS kind, broker, topic, partition, CAST(file AS STRING) AS file,
       CAST(position AS BIGINT) AS position, CAST(committed_offset AS BIGINT) AS offset, CAST(NULL AS BIGINT) AS producer_id,
       CAST(NULL AS INT) AS producer_epoch,
       concat(format_string('Group %s committed offset %d on %s-%d, below its log start %d: offsets %d-%d were deleted before the group read them.', group_id, committed_offset, topic, partition, log_start_offset, committed_offset, log_start_offset - 1),
              CASE WHEN owner_member_id IS NOT NULL THEN format_string(' At the commit, member %s (client %s) owned the partition.', owner_member_id, coalesce(owner_client_id, '?')) ELSE '' END) AS message,
       to_json(named_struct('group', group_id, 'committed_offset', committed_offset, 'coordinator_partition', coordinator_partition, 'coordinator_offset', coordinator_offset, 'commit_timestamp', commit_timestamp, 'log_start_offset', log_start_offset, 'log_end_offset', log_end_offset, 'reference_broker', data_broker, 'member_id', owner_member_id, 'member_client_id', owner_client_id)) AS details,
       -- a later commit may stand in offsets the copy of its __consumer_offsets partition lacks, and the
       -- committed offset in offsets a copy of the committed partition lacks (partition_coverage, replica_coverage)
       CASE WHEN coordinator_range IS NOT NULL THEN coordinator_broker ELSE data_range.broker END AS gap_broker,
       CASE WHEN coordinator_range IS NOT NULL THEN coordinator_partition
            ELSE format_string('%s-%d', topic, partition) END AS gap_partition,
       coalesce(coordinator_range,
                CASE WHEN data_range IS NOT NULL
                     THEN named_struct('first_offset', data_range.first_offset, 'last_offset', data_range.last_offset,
                                       'proven', data_range.proven) END) AS gap_range
FROM (SELECT *, coordinator_broker AS broker,
             try_element_at(filter(coordinator_missing, m -> coalesce(m.last_offset, 9223372036854775807)
                                                             > coordinator_offset), 1) AS coordinator_range,
             try_element_at(filter(data_missing, m -> m.first_offset <= greatest(committed_offset, coalesce(log_end_offset, committed_offset))
                                                      AND coalesce(m.last_offset, 9223372036854775807)
                                                          >= least(committed_offset, coalesce(log_start_offset, committed_offset))), 1)
               AS data_range
      FROM consumer_offsets LEFT JOIN commit_owners USING (cluster_id, group_id, topic, partition)
      LEFT JOIN (SELECT broker AS coordinator_broker, format_string('%s-%d', topic, partition) AS coordinator_partition,
                        missing AS coordinator_missing FROM partition_coverage)
          USING (coordinator_broker, coordinator_partition)
      LEFT JOIN (SELECT cluster_id, topic, partition, missing AS data_missing FROM replica_coverage)
          USING (cluster_id, topic, partition))
 WHERE status = 'below_log_start' AND coalesce(transaction_outcome, 'COMMIT') = 'COMMIT')
SELECT * FROM found
