-- Reads aborted_transactions; `txnindex_missing` (an aborted transaction with data and no .txnindex entry),
-- `txnindex_orphan` (an entry without the ABORT marker, unless its transaction began below the log's first offset:
-- retention deletes segments up to the high watermark, not the LSO) and `txnindex_mismatch` (an entry that
-- disagrees). An ABORT marker without data has no entry to miss: an empty transaction gets none
-- (ProducerAppendInfo.appendEndTxnMarker), nor does a marker the cleaner will remove (CleanedTransactionMetadata).
SELECT 'txnindex_missing' AS kind, 'error' AS severity, broker, topic, partition, CAST(NULL AS STRING) AS file,
       CAST(NULL AS BIGINT) AS position, CAST(first_offset AS BIGINT) AS offset, CAST(producer_id AS BIGINT) AS producer_id,
       CAST(NULL AS INT) AS producer_epoch,
       format_string('The aborted transaction of producer %d (offsets %d-%d) has no .txnindex entry: read_committed consumers would deliver its records.', producer_id, first_offset, last_offset) AS message,
       to_json(named_struct('first_offset', coalesce(first_offset, index_first_offset), 'last_offset', last_offset, 'last_stable_offset', coalesce(last_stable_offset, index_last_stable_offset))) AS details FROM aborted_transactions WHERE marked AND first_offset IS NOT NULL AND index_first_offset IS NULL
 UNION ALL
SELECT 'txnindex_orphan' AS kind, 'error' AS severity, broker, topic, partition, CAST(index_file AS STRING) AS file,
       CAST(NULL AS BIGINT) AS position, CAST(index_first_offset AS BIGINT) AS offset, CAST(producer_id AS BIGINT) AS producer_id,
       CAST(NULL AS INT) AS producer_epoch,
       format_string('The .txnindex lists an aborted transaction of producer %d ending at offset %d, but the log holds no ABORT marker of that producer there.', producer_id, last_offset) AS message,
       to_json(named_struct('first_offset', coalesce(first_offset, index_first_offset), 'last_offset', last_offset, 'last_stable_offset', coalesce(last_stable_offset, index_last_stable_offset))) AS details FROM aborted_transactions WHERE marked IS NULL AND (log_first_offset IS NULL OR index_first_offset >= log_first_offset)
 UNION ALL
SELECT 'txnindex_mismatch' AS kind, 'error' AS severity, broker, topic, partition, CAST(index_file AS STRING) AS file,
       CAST(NULL AS BIGINT) AS position, CAST(first_offset AS BIGINT) AS offset, CAST(producer_id AS BIGINT) AS producer_id,
       CAST(NULL AS INT) AS producer_epoch,
       format_string('The .txnindex entry for producer %d\'s abort at offset %d says first offset %d and LSO %d; the log says %d and %d.', producer_id, last_offset, index_first_offset, index_last_stable_offset, first_offset, last_stable_offset) AS message,
       to_json(named_struct('first_offset', coalesce(first_offset, index_first_offset), 'last_offset', last_offset, 'last_stable_offset', coalesce(last_stable_offset, index_last_stable_offset), 'index_first_offset', index_first_offset, 'index_last_stable_offset', index_last_stable_offset)) AS details FROM aborted_transactions WHERE marked AND index_first_offset IS NOT NULL AND NOT agrees
