/*
[check]
family = "transactions"

[[finding]]
kind = "hanging_transaction"
severity = "error"
meaning = '''
a transaction open at the log end for longer than the transaction timeout: the LSO is stuck'''
fields = ["first_offset", "lso_stuck_at", "age_ms_at_log_end", "last_data_offset", "transaction_timeout_ms"]
rule = '''
a transaction open at the log end and older than its timeout, measured against the newest timestamp in the
log: its transactional id's `txnTimeoutMs` (the coordinator aborts a transaction after it:
TransactionStateManager.timedOutTransactions) where a `__transaction_state` record in the input names the
producer id, else `--txn-timeout` (15 min); never a two-phase-commit transaction (timeout Integer.MAX_VALUE:
a prepared transaction): `first_offset`, `lso_stuck_at`, `age_ms_at_log_end`, `last_data_offset`,
`transaction_timeout_ms` (the timeout it was judged by)'''
compacted = '''
a transaction without a marker whose data lies below the cleaner offset is complete: the cleaner cleans only
below the last stable offset (`LogCleanerManager`), so it was complete when cleaned, and its marker was
removed past its delete horizon; it is read as committed (aborted data never survives a cleaning), never open,
never hanging, never holding the LSO. Ages are measured on max timestamps, never on a delete horizon'''
reports = ["eos"]
event = "producer {producer_id}'s transaction open since offset {offset} holds the last stable offset of {topic}-{partition} on {broker} ({age_ms_at_log_end} ms at its log end)"

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
-- producer_id, producer_epoch, outcome, first_offset, last_data_offset, first_timestamp, file, position) and
-- `partition_ends` (partition_ends: log_end_timestamp); an open transaction older than its timeout at the log end
-- (its transactional id's txnTimeoutMs, which TransactionStateManager.timedOutTransactions aborts after, else
-- `txn_timeout_ms`; never a two-phase-commit one).
-- 2147483647 (Integer.MAX_VALUE): a KIP-939 two-phase-commit transaction's timeout, never aborted by the coordinator
-- (TransactionMetadata.isDistributedTwoPhaseCommitTxn, apache/kafka 38666db4)
SELECT 'hanging_transaction' AS kind, broker, topic, partition, CAST(file AS STRING) AS file,
       CAST(position AS BIGINT) AS position, CAST(first_offset AS BIGINT) AS offset, CAST(producer_id AS BIGINT) AS producer_id,
       CAST(producer_epoch AS INT) AS producer_epoch,
       format_string('Producer %d\'s transaction opened at offset %d is still open at the log end, %d ms later (timeout %d ms): read_committed consumers are stuck at offset %d.', producer_id, first_offset, age_ms_at_log_end, coalesce(transaction_timeout_ms, :txn_timeout_ms), first_offset) AS message,
       to_json(named_struct('first_offset', first_offset, 'lso_stuck_at', first_offset, 'age_ms_at_log_end', age_ms_at_log_end, 'last_data_offset', last_data_offset, 'transaction_timeout_ms', coalesce(transaction_timeout_ms, :txn_timeout_ms))) AS details FROM (
     SELECT *, log_end_timestamp - first_timestamp AS age_ms_at_log_end
     FROM timed_transactions JOIN partition_ends USING (broker, topic, partition)
     WHERE outcome = 'OPEN' AND first_offset IS NOT NULL)
 WHERE age_ms_at_log_end > coalesce(transaction_timeout_ms, :txn_timeout_ms) AND coalesce(transaction_timeout_ms, :txn_timeout_ms) != 2147483647
