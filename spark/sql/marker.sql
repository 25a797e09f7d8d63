-- Reads marker_checks; `marker_missing` (no marker in a replica whose log reaches the completion time) and
-- `outcome_mismatch` (the marker says the other outcome).
SELECT 'marker_missing' AS kind, 'error' AS severity, broker, topic, partition, CAST(data_file AS STRING) AS file,
       CAST(data_position AS BIGINT) AS position, CAST(data_offset AS BIGINT) AS offset, CAST(producer_id AS BIGINT) AS producer_id,
       CAST(producer_epoch AS INT) AS producer_epoch,
       format_string('Transactional id %s (producer %d, epoch %d): the coordinator (%s offset %d) completed this transaction with %s at %d, but %s-%d holds no marker of it%s.', transactional_id, producer_id, producer_epoch, coordinator_partition, coordinator_last_offset, outcome, completed_at, topic, partition, CASE WHEN data_offset IS NOT NULL THEN format_string(': its data from offset %d stays open and holds the LSO', data_offset) ELSE '' END) AS message,
       to_json(named_struct('transactional_id', transactional_id, 'coordinator_partition', coordinator_partition, 'coordinator_offset', coordinator_last_offset, 'coordinator_broker', coordinator_broker, 'coordinator_outcome', outcome, 'txn_start_timestamp', txn_start_timestamp, 'completed_at', completed_at, 'partitions_not_in_input', partitions_not_in_input, 'expected_coordinator_partition', expected_coordinator_partition)) AS details FROM marker_checks WHERE marker_offset IS NULL AND log_end_timestamp >= completed_at
     -- the log cleaner removes a marker past its delete horizon once no batch of its transaction is left
     -- (Cleaner.shouldDiscardBatch with CleanedTransactionMetadata, apache/kafka 08528988): on a compacted
     -- replica a transaction with neither data nor marker there is what cleaning leaves; data left open is not
     AND (data_offset IS NOT NULL OR cleaned_up_to IS NULL)
 UNION ALL
SELECT 'outcome_mismatch' AS kind, 'error' AS severity, broker, topic, partition, CAST(marker_file AS STRING) AS file,
       CAST(marker_position AS BIGINT) AS position, CAST(marker_offset AS BIGINT) AS offset, CAST(producer_id AS BIGINT) AS producer_id,
       CAST(marker_epoch AS INT) AS producer_epoch,
       format_string('Transactional id %s (producer %d): the coordinator (%s offset %d) recorded %s, but the marker at offset %d of %s-%d is a %s.', transactional_id, producer_id, coordinator_partition, coordinator_last_offset, outcome, marker_offset, topic, partition, marker_outcome) AS message,
       to_json(named_struct('transactional_id', transactional_id, 'coordinator_partition', coordinator_partition, 'coordinator_offset', coordinator_last_offset, 'coordinator_broker', coordinator_broker, 'coordinator_outcome', outcome, 'txn_start_timestamp', txn_start_timestamp, 'completed_at', completed_at, 'partitions_not_in_input', partitions_not_in_input, 'expected_coordinator_partition', expected_coordinator_partition, 'marker_outcome', marker_outcome, 'marker_offset', marker_offset)) AS details FROM marker_checks WHERE marker_outcome IS NOT NULL AND marker_outcome != outcome
