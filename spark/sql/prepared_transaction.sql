/*
[check]
family = "transactions"

[[finding]]
kind = "prepared_transaction"
severity = "info"
meaning = '''
a two-phase-commit transaction (KIP-939) open at the log end: it holds the last stable offset until its
transaction manager commits or aborts it'''
fields = ["transactional_id", "first_offset", "last_data_offset", "age_ms_at_log_end", "holds_lso_at"]
rule = '''
a transaction open at the log end whose transactional id's timeout is Integer.MAX_VALUE (a KIP-939
two-phase-commit transaction, which the coordinator never aborts:
TransactionMetadata.isDistributedTwoPhaseCommitTxn): not hanging, prepared; it holds the LSO of its partition:
`transactional_id`, `first_offset`, `last_data_offset`, `age_ms_at_log_end`, `holds_lso_at`'''
compacted = '''
as for a hanging transaction: a transaction whose data lies below the cleaner offset is complete, never prepared'''
reports = ["eos"]
*/
-- The `prepared_transaction` check: reads `timed_transactions` (transactions_table with transaction_timeout_ms
-- and transactional_id) and `partition_ends` (partition_ends: log_end_timestamp); a transaction open at the log end
-- whose transactional id's timeout is Integer.MAX_VALUE (KIP-939).
-- 2147483647 (Integer.MAX_VALUE): a KIP-939 two-phase-commit transaction's timeout, never aborted by the coordinator
-- (TransactionMetadata.isDistributedTwoPhaseCommitTxn, apache/kafka 38666db4)
SELECT 'prepared_transaction' AS kind, broker, topic, partition, CAST(file AS STRING) AS file,
       CAST(position AS BIGINT) AS position, CAST(first_offset AS BIGINT) AS offset, CAST(producer_id AS BIGINT) AS producer_id,
       CAST(producer_epoch AS INT) AS producer_epoch,
       format_string('Transactional id %s (producer %d) holds a two-phase-commit transaction (KIP-939: timeout Integer.MAX_VALUE, never aborted by the coordinator) open since offset %d, %d ms before the log end: the last stable offset stays at %d until its transaction manager commits or aborts it.', coalesce(transactional_id, '?'), producer_id, first_offset, age_ms_at_log_end, first_offset) AS message,
       to_json(named_struct('transactional_id', transactional_id, 'first_offset', first_offset, 'last_data_offset', last_data_offset, 'age_ms_at_log_end', age_ms_at_log_end, 'holds_lso_at', first_offset)) AS details FROM (
     SELECT *, log_end_timestamp - first_timestamp AS age_ms_at_log_end
     FROM timed_transactions JOIN partition_ends USING (broker, topic, partition)
     WHERE outcome = 'OPEN' AND first_offset IS NOT NULL
       AND transaction_timeout_ms = 2147483647)
