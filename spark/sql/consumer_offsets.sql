/*
[table]
doc = """Per group, topic and partition, the commit the group coordinator serves, against the partition it points
into. Commits apply in log order (OffsetMetadataManager.replay, group-coordinator 2d7df031): the applied offset is the
one of the highest record offset among the non-transactional commits and those whose transaction committed, after the
partition's last tombstone. A partition without one keeps a row for its newest commit, with transaction_outcome OPEN
(pending) or ABORT (dropped): never served, not judged. A committed offset is the next offset the group will read:
equal to the log end is caught up; above it, the group resets or skips (offset out of range); below the log start,
retention deleted records the group never read; strictly inside an aborted transaction (after its first offset, up
to its marker), a read_uncommitted consumer processed aborted records. The reference replica of a partition is the one
Kafka serves (serving_replicas: the current leader's, else the longest); a tiered partition starts in its remote tier (its finished copies), not at its first local segment,
bounded from below by the log-start-offset-checkpoint (the broker's logStartOffset)."""
output = true
keep = true
applies = "has_consumer_offsets"
columns = [
    ["group_id", "string", "the group"],
    ["cluster_id", "string", "the cluster.id of the broker's meta.properties (empty when unknown)"],
    ["topic", "string", "the topic"],
    ["partition", "int", "the partition"],
    ["committed_offset", "bigint", "the offset served: the next one the group reads"],
    ["committed_leader_epoch", "int", "its leader epoch (-1: none)"],
    ["commit_timestamp", "bigint", "CommitTimestamp"],
    ["coordinator_broker", "string", "the input whose `__consumer_offsets` replica was read (each cluster's serving replica: the current leader's, else the longest)"],
    ["coordinator_partition", "string", "`__consumer_offsets-<n>`"],
    ["coordinator_offset", "bigint", "the commit record's offset there"],
    ["file", "string", "the file it was read from"],
    ["position", "bigint", "the byte position in `file`"],
    ["in_input", "boolean", "the partition committed is in the input"],
    ["data_broker", "string", "the replica it is judged against: the partition's current leader's where the metadata log and that log dir are in the input, else the longest (serving_replicas)"],
    ["log_start_offset", "bigint", "for a tiered partition, the start of its remote tier: its earliest COPY_SEGMENT_FINISHED segment, not below `log-start-offset-checkpoint`"],
    ["log_end_offset", "bigint", "the partition's log end (the replica it is judged against)"],
    ["lag", "bigint", "log end - committed offset"],
    ["aborted_first_offset", "bigint", "the aborted transaction the offset falls in: its first offset"],
    ["aborted_last_offset", "bigint", "its ABORT marker"],
    ["aborted_producer_id", "bigint", "its producer"],
    ["status", "string", "`ok`, `not_in_input`, `beyond_log_end`, `below_log_start`, `in_aborted_range`"],
    ["producer_id", "bigint", "of a transactional commit, else null"],
    ["transactional", "boolean", "a TxnOffsetCommit"],
    ["transaction_outcome", "string", "`COMMIT`, `ABORT`, `OPEN`; null for a plain commit"],
]
*/
WITH latest AS (
    SELECT cluster_id, group_id, commit_topic AS topic, commit_partition AS partition, committed_offset,
           committed_leader_epoch, commit_timestamp, broker AS coordinator_broker,
           format_string('%s-%d', topic, partition) AS coordinator_partition, offset AS coordinator_offset,
           file, position, CASE WHEN transactional THEN producer_id END AS producer_id,
           coalesce(transactional, false) AS transactional, transaction_outcome
    FROM (
        SELECT *, row_number() OVER (PARTITION BY cluster_id, group_id, commit_topic, commit_partition
                                     ORDER BY coalesce(transaction_outcome, 'COMMIT') = 'COMMIT' DESC,
                                              offset DESC) AS rank
        FROM live_commits)
    WHERE rank = 1),
ranges AS (
    SELECT cluster_id, topic, partition, data_broker, first_offset AS aborted_first_offset,
           last_offset AS aborted_last_offset, producer_id AS aborted_producer_id
    FROM (SELECT * EXCEPT (broker), broker AS data_broker FROM aborted_ranges)
    JOIN (SELECT cluster_id, topic, partition, serving_broker AS data_broker FROM serving_replicas)
    USING (topic, partition, data_broker)),
tiered AS (
    SELECT cluster_id, topic, partition, min(start_offset) AS remote_log_start_offset FROM finished_copies
    GROUP BY cluster_id, topic, partition),
t AS (
    SELECT * EXCEPT (local_log_start_offset, remote_log_start_offset, checkpoint_log_start_offset),
           CASE WHEN remote_log_start_offset IS NULL THEN local_log_start_offset
                ELSE least(local_log_start_offset, greatest(remote_log_start_offset,
                           coalesce(checkpoint_log_start_offset, remote_log_start_offset))) END
               AS log_start_offset
    FROM latest LEFT JOIN (
        SELECT cluster_id, topic, partition, serving_broker AS data_broker,
               log_start_offset AS local_log_start_offset, log_end_offset FROM serving_replicas)
        USING (cluster_id, topic, partition)
        LEFT JOIN tiered USING (cluster_id, topic, partition)
        LEFT JOIN (SELECT broker AS data_broker, topic, partition,
                          log_start_offset AS checkpoint_log_start_offset FROM partition_checkpoints)
            USING (data_broker, topic, partition)),
inside AS (
    SELECT group_id, cluster_id, topic, partition, min(aborted_first_offset) AS aborted_first_offset,
           min_by(aborted_last_offset, aborted_first_offset) AS aborted_last_offset,
           min_by(aborted_producer_id, aborted_first_offset) AS aborted_producer_id
    FROM t JOIN ranges USING (cluster_id, topic, partition, data_broker)
    WHERE committed_offset > aborted_first_offset AND committed_offset <= aborted_last_offset
    GROUP BY group_id, cluster_id, topic, partition)
SELECT group_id, cluster_id, topic, partition, committed_offset, committed_leader_epoch, commit_timestamp,
       coordinator_broker, coordinator_partition, coordinator_offset, file, position,
       log_end_offset IS NOT NULL AS in_input, data_broker, log_start_offset, log_end_offset,
       log_end_offset - committed_offset AS lag, aborted_first_offset, aborted_last_offset,
       aborted_producer_id,
       CASE WHEN log_end_offset IS NULL THEN 'not_in_input'
            WHEN committed_offset > log_end_offset THEN 'beyond_log_end'
            WHEN committed_offset >= 0 AND committed_offset < log_start_offset THEN 'below_log_start'
            WHEN aborted_first_offset IS NOT NULL THEN 'in_aborted_range' ELSE 'ok' END AS status,
       producer_id, transactional, transaction_outcome
FROM t LEFT JOIN inside USING (group_id, cluster_id, topic, partition)
