/*
[check]
coverage = true
family = "committed_offset"
applies = "has_consumer_offsets"

[[finding]]
kind = "committed_offset_in_aborted_range"
severity = "warning"
meaning = "a group's committed offset lies inside an aborted transaction"
fields = ["group", "committed_offset", "coordinator_partition", "coordinator_offset", "commit_timestamp", "log_start_offset", "log_end_offset", "reference_broker", "member_id", "member_client_id", "aborted_first_offset", "aborted_last_offset", "aborted_producer_id"]
rule = '''
a group's committed offset lies strictly inside an aborted transaction (after its first offset, up to its
marker): the same fields as a commit beyond the log end (`group`, `committed_offset`,
`coordinator_partition`, `coordinator_offset`, `commit_timestamp`, `log_start_offset`, `log_end_offset`,
`reference_broker`) plus `aborted_first_offset`, `aborted_last_offset`, `aborted_producer_id`. The committed
offset of all three is the one the group coordinator serves: commits apply in log order, a transactional one
(TxnOffsetCommit) once its COMMIT marker follows, never an aborted or pending one (OffsetMetadataManager);
`member_id` and `member_client_id` name the member that owned the partition at the commit, where the group
replay knows it (the assignment in force at the commit record's offset in the same `__consumer_offsets` log)'''
compacted = '''
unchanged: `__consumer_offsets` is compacted (a key's latest commit stays, a tombstone until its delete
horizon), and the latest commit per group and partition is what is judged; a committed offset may fall in a
hole the cleaner made in the data log: it is still inside the log; an aborted range whose data the cleaner
removed is taken from its `.txnindex` entry'''
reports = ["eos"]
event = "group {group} committed offset {committed_offset} on {topic}-{partition}, inside producer {aborted_producer_id}'s aborted transaction"
at = "commit_timestamp"
clock = "group coordinator's clock"
*/
-- The `committed_offset_in_aborted_range` check: reads consumer_offsets (consumer_offsets_table); names the group
-- (on the broker holding the commit), and the member that owned the partition at the commit (commit_owners).
-- `not_judged` where the copy of its __consumer_offsets partition lacks offsets after the commit (a later
-- commit may be there), or a copy of the committed partition lacks the offsets it is judged against.
WITH found AS (
SELECT 'committed_offset_in_aborted_range' AS kind, broker, topic, partition, CAST(file AS STRING) AS file,
       CAST(position AS BIGINT) AS position, CAST(committed_offset AS BIGINT) AS offset, CAST(NULL AS BIGINT) AS producer_id,
       CAST(NULL AS INT) AS producer_epoch,
       concat(format_string('Group %s committed offset %d on %s-%d, inside producer %d\'s aborted transaction (offsets %d-%d): it consumed aborted records (read_uncommitted) or committed a position no read_committed consumer reaches.', group_id, committed_offset, topic, partition, aborted_producer_id, aborted_first_offset, aborted_last_offset),
              CASE WHEN owner_member_id IS NOT NULL THEN format_string(' At the commit, member %s (client %s) owned the partition.', owner_member_id, coalesce(owner_client_id, '?')) ELSE '' END) AS message,
       to_json(named_struct('group', group_id, 'committed_offset', committed_offset, 'coordinator_partition', coordinator_partition, 'coordinator_offset', coordinator_offset, 'commit_timestamp', commit_timestamp, 'log_start_offset', log_start_offset, 'log_end_offset', log_end_offset, 'reference_broker', data_broker, 'aborted_first_offset', aborted_first_offset, 'aborted_last_offset', aborted_last_offset, 'aborted_producer_id', aborted_producer_id, 'member_id', owner_member_id, 'member_client_id', owner_client_id)) AS details,
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
 WHERE status = 'in_aborted_range' AND coalesce(transaction_outcome, 'COMMIT') = 'COMMIT')
SELECT * FROM found
