/*
[check]
coverage = true
family = "transactions"

[[finding]]
kind = "hanging_transaction"
severity = "error"
meaning = '''
a transaction open at the log end for longer than the transaction timeout: the LSO is stuck'''
fields = ["first_offset", "lso_stuck_at", "age_ms", "image_time", "partition_last_write", "age_ms_at_log_end", "last_data_offset", "transaction_timeout_ms"]
rule = '''
a transaction open at the log end and older than its timeout at the image time of the broker holding the
partition (`image_times`: the newest timestamp of the broker's files, or `--image-time`; a quiet partition that
received nothing after the transaction is judged too): its transactional id's `txnTimeoutMs` (the coordinator aborts a transaction after it:
TransactionStateManager.timedOutTransactions) where a `__transaction_state` record in the input names the
producer id, else `--txn-timeout` (15 min); never a two-phase-commit transaction (timeout Integer.MAX_VALUE:
a prepared transaction): `first_offset`, `lso_stuck_at`, `age_ms` (at the image time), `image_time`,
`partition_last_write` (the partition's newest timestamp), `age_ms_at_log_end` (its age at that last write),
`last_data_offset`, `transaction_timeout_ms` (the timeout it was judged by)'''
compacted = '''
a transaction without a marker whose data lies below the cleaner offset is complete: the cleaner cleans only
below the last stable offset (`LogCleanerManager`), so it was complete when cleaned, and its marker was
removed past its delete horizon; it is read as committed (aborted data never survives a cleaning), never open,
never hanging, never holding the LSO. Ages are measured on max timestamps, never on a delete horizon'''
reports = ["eos"]
event = "producer {producer_id}'s transaction open since offset {offset} holds the last stable offset of {topic}-{partition} on {broker} ({age_ms} ms at the image time)"

[[finding.action]]
phase = "save"
command = "kforensics export {broker}={log_dir} --broker {broker} --topic {topic} --partition {partition} --offsets {offset}:{last_data_offset} --out open-txn-{producer_id}-{topic}-{partition}.jsonl"
why = "saves the open transaction's records before an abort hides them from read_committed consumers"
destructive = false

[[finding.action]]
phase = "verify"
command = "kafka-transactions.sh --bootstrap-server <BOOTSTRAP> describe-producers --topic {topic} --partition {partition}"
why = "shows the partition's producers as its leader sees them: the transaction still open at offset {offset}"
destructive = false

[[finding.action]]
phase = "repair"
command = "kafka-transactions.sh --bootstrap-server <BOOTSTRAP> abort --topic {topic} --partition {partition} --start-offset {offset}"
why = "ends the transaction, so read_committed consumers move past offset {offset}; its records are aborted: re-produce them from the export if they must be delivered"
destructive = true
*/
-- The `hanging_transaction` check: reads `timed_transactions` (transactions_table with transaction_timeout_ms:
-- producer_id, producer_epoch, outcome, first_offset, last_data_offset, first_timestamp, file, position),
-- `partition_ends` (partition_ends: log_end_timestamp, the partition's last write) and `image_times` (image_time of
-- the broker; a broker without one: the partition's last write); an open transaction older than its timeout then
-- (its transactional id's txnTimeoutMs, which TransactionStateManager.timedOutTransactions aborts after, else
-- `txn_timeout_ms`; never a two-phase-commit one). `not_judged` where the copy lacks offsets after its first offset
-- (partition_coverage): its marker may be there; or, judged by `txn_timeout_ms`, where a copy of __transaction_state
-- of its cluster lacks offsets (replica_coverage): its transactional id's own timeout may be there.
-- 2147483647 (Integer.MAX_VALUE): a KIP-939 two-phase-commit transaction's timeout, never aborted by the coordinator
-- (TransactionMetadata.isDistributedTwoPhaseCommitTxn, apache/kafka 38666db4)
WITH found AS (
SELECT 'hanging_transaction' AS kind, broker, topic, partition, CAST(file AS STRING) AS file,
       CAST(position AS BIGINT) AS position, CAST(first_offset AS BIGINT) AS offset, CAST(producer_id AS BIGINT) AS producer_id,
       CAST(producer_epoch AS INT) AS producer_epoch,
       format_string('Producer %d\'s transaction opened at offset %d is still open at the log end, %d ms later at the image time (timeout %d ms; the partition\'s last write came %d ms after it): read_committed consumers are stuck at offset %d.', producer_id, first_offset, age_ms, coalesce(transaction_timeout_ms, :txn_timeout_ms), age_ms_at_log_end, first_offset) AS message,
       to_json(named_struct('first_offset', first_offset, 'lso_stuck_at', first_offset, 'age_ms', age_ms, 'image_time', image_time, 'partition_last_write', log_end_timestamp, 'age_ms_at_log_end', age_ms_at_log_end, 'last_data_offset', last_data_offset, 'transaction_timeout_ms', coalesce(transaction_timeout_ms, :txn_timeout_ms))) AS details,
       -- its marker may stand in offsets the copy lacks after its first offset (partition_coverage); judged by the
       -- default timeout, its id's own may stand in what a copy of __transaction_state lacks (replica_coverage)
       coalesce(CASE WHEN own_range IS NOT NULL THEN broker END, txn_state_lack.gap_broker) AS gap_broker,
       coalesce(CASE WHEN own_range IS NOT NULL THEN format_string('%s-%d', topic, partition) END,
                txn_state_lack.gap_partition) AS gap_partition,
       coalesce(own_range, txn_state_lack.gap_range) AS gap_range
     FROM (
     SELECT * EXCEPT (txn_state_lack),
            CASE WHEN transaction_timeout_ms IS NULL THEN txn_state_lack END AS txn_state_lack,
            log_end_timestamp - first_timestamp AS age_ms_at_log_end,
            coalesce(image_time, log_end_timestamp) - first_timestamp AS age_ms,
            try_element_at(filter(missing, m -> coalesce(m.last_offset, 9223372036854775807) >= first_offset), 1)
              AS own_range
     FROM timed_transactions JOIN partition_ends USING (broker, topic, partition)
          LEFT JOIN (SELECT broker, image_time FROM image_times) USING (broker)
          LEFT JOIN (SELECT broker, topic, partition, missing FROM partition_coverage) USING (broker, topic, partition)
          LEFT JOIN (SELECT cluster_id, min_by(named_struct('gap_broker', m.broker,
                                              'gap_partition', format_string('%s-%d', topic, partition),
                                              'gap_range', named_struct('first_offset', m.first_offset,
                                                                        'last_offset', m.last_offset,
                                                                        'proven', m.proven)),
                                 format_string('%s-%d', topic, partition)) AS txn_state_lack
           FROM replica_coverage LATERAL VIEW explode(missing) AS m
           WHERE topic = '__transaction_state' GROUP BY cluster_id) USING (cluster_id)
     WHERE outcome = 'OPEN' AND first_offset IS NOT NULL)
 WHERE age_ms > coalesce(transaction_timeout_ms, :txn_timeout_ms) AND coalesce(transaction_timeout_ms, :txn_timeout_ms) != 2147483647)
SELECT * FROM found

