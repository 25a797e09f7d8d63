/*
[check]
coverage = true
family = "committed_offset"
applies = "has_consumer_offsets"

[[finding]]
kind = "offset_commit_pending"
severity = "warning"
meaning = '''
a group's offset commits sit in a transaction still open longer than its timeout: the group's consumers get
UNSTABLE_OFFSET_COMMIT until it ends'''
fields = ["group", "transactional_id", "partitions", "committed_offsets", "txn_first_offset", "age_ms", "image_time", "partition_last_write", "age_ms_at_log_end", "transaction_timeout_ms"]
rule = '''
a group's transactional offset commits (TxnOffsetCommit) in `__consumer_offsets` whose transaction has no
marker at the log end, open for longer than its timeout at the image time of the broker serving the
`__consumer_offsets` partition (`image_times`; not at the partition's own last write) (its transactional id's, else `--txn-timeout`; a
younger one is a transaction in flight, a two-phase-commit one a prepared transaction): the group
coordinator keeps them pending, and OffsetFetch answers UNSTABLE_OFFSET_COMMIT for those partitions until a
marker ends the transaction (the "group stuck after a crash"). One finding per group and transaction, on the
`__consumer_offsets` partition (its serving replica) at its first pending commit: `group`, `transactional_id`,
`partitions` (the committed partitions), `committed_offsets`, `txn_first_offset`, `age_ms` (at the image
time), `image_time`, `partition_last_write` (the partition's newest timestamp), `age_ms_at_log_end` (the age at
that last write), `transaction_timeout_ms`'''
compacted = '''
a commit whose transactional batch lies below `__consumer_offsets`' cleaner offset is complete (the cleaner
cleans only below the last stable offset): never pending'''
reports = ["eos"]
event = "group {group}'s offset commits for {partitions} are pending in the transaction of {transactional_id} open since offset {txn_first_offset}"
*/
-- The `offset_commit_pending` check: reads `live_commits`, `serving_replicas` (with log_end_timestamp) and
-- `transactional_ids` (transactional_id, transaction_timeout_ms) and `image_times`; per group and open transaction,
-- its offset commits still pending at the log end of their __consumer_offsets partition, longer than the transaction's
-- timeout at the serving broker's image time (a broker without one: the partition's last write) (a younger one is a
-- transaction in flight; a two-phase-commit one is a prepared transaction). `not_judged` where the copy of the
-- __consumer_offsets partition lacks offsets after the transaction's first offset (partition_coverage): its marker
-- may stand there.
-- 2147483647 (Integer.MAX_VALUE): a KIP-939 two-phase-commit transaction's timeout, never aborted by the coordinator
-- (TransactionMetadata.isDistributedTwoPhaseCommitTxn, apache/kafka 38666db4)
WITH pending AS (
        SELECT cluster_id, broker, topic, partition, group_id, producer_id, txn_first_offset,
               min(offset) AS first_commit_offset, min_by(file, offset) AS file,
               min_by(position, offset) AS position, min_by(producer_epoch, offset) AS producer_epoch,
               min(txn_first_timestamp) AS txn_first_timestamp,
               array_sort(collect_set(format_string('%s-%d', commit_topic, commit_partition))) AS committed,
               transform(array_sort(collect_list(struct(commit_topic, commit_partition, committed_offset))),
                         c -> c.committed_offset) AS committed_offsets
        FROM live_commits WHERE transaction_outcome = 'OPEN'
        GROUP BY cluster_id, broker, topic, partition, group_id, producer_id, txn_first_offset),
    found AS (
    SELECT 'offset_commit_pending' AS kind, broker, topic, partition, CAST(file AS STRING) AS file,
           CAST(position AS BIGINT) AS position, CAST(first_commit_offset AS BIGINT) AS offset, CAST(producer_id AS BIGINT) AS producer_id,
           CAST(producer_epoch AS INT) AS producer_epoch,
           format_string('Group %s has offset commits for %s pending in producer %d\'s transaction (transactional id %s), open since offset %d of %s-%d for %d ms at the image time (timeout %d ms): until a marker ends it, OffsetFetch answers UNSTABLE_OFFSET_COMMIT for these partitions and the group\'s consumers wait.', group_id, array_join(committed, ', '), producer_id, coalesce(transactional_id, '?'), txn_first_offset, topic, partition, age_ms, coalesce(transaction_timeout_ms, :txn_timeout_ms)) AS message,
           to_json(named_struct('group', group_id, 'transactional_id', transactional_id, 'partitions', committed, 'committed_offsets', committed_offsets, 'txn_first_offset', txn_first_offset, 'age_ms', age_ms, 'image_time', image_time, 'partition_last_write', log_end_timestamp, 'age_ms_at_log_end', age_ms_at_log_end, 'transaction_timeout_ms', coalesce(transaction_timeout_ms, :txn_timeout_ms))) AS details,
           -- the transaction's marker may stand in offsets the copy lacks after its first offset
           broker AS gap_broker, format_string('%s-%d', topic, partition) AS gap_partition,
           try_element_at(filter(missing, m -> coalesce(m.last_offset, 9223372036854775807) >= txn_first_offset), 1)
             AS gap_range
        FROM (
        SELECT *, log_end_timestamp - txn_first_timestamp AS age_ms_at_log_end,
               coalesce(image_time, log_end_timestamp) - txn_first_timestamp AS age_ms
        FROM pending
        LEFT JOIN (SELECT broker, topic, partition, missing FROM partition_coverage) USING (broker, topic, partition)
        JOIN (SELECT cluster_id, topic, partition, serving_broker, log_end_timestamp FROM serving_replicas)
            USING (cluster_id, topic, partition)
        LEFT JOIN (SELECT broker AS serving_broker, image_time FROM image_times) USING (serving_broker)
        LEFT JOIN (SELECT cluster_id, producer_id, transactional_id, transaction_timeout_ms FROM transactional_ids)
            USING (cluster_id, producer_id))
    WHERE age_ms > coalesce(transaction_timeout_ms, :txn_timeout_ms) AND coalesce(transaction_timeout_ms, :txn_timeout_ms) != 2147483647)
SELECT * FROM found
