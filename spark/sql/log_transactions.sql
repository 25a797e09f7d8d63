/*
[table]
doc = """One row per transaction of a partition of a broker: producer_id, producer_epoch, first_offset,
last_data_offset, marker_offset, outcome (COMMIT|ABORT|OPEN|UNKNOWN), coordinator_epoch, batch_count, record_count,
first_timestamp, duration_ms, file and position of the first batch. A transaction without a marker whose data lies
below the cleaner offset is complete (COMMIT, no marker): the log cleaner cleans only below the last stable offset
(LogCleanerManager), so it was complete when cleaned, its marker since removed past its delete horizon, and its data
survived, so it committed (Cleaner: aborted data never survives a cleaning)."""
keep = true
columns = """
broker string, topic string, partition int, producer_id bigint, producer_epoch int, first_offset bigint,
last_data_offset bigint, marker_offset bigint, outcome string, coordinator_epoch int, batch_count bigint,
record_count bigint, first_timestamp bigint, duration_ms bigint, file string, position bigint,
txn_index bigint"""
*/
-- a marker whose control record was not read (kafka-dump-log text without record lines, or an empty control batch
-- the log cleaner kept: MemoryRecords.filterTo, RETAIN_EMPTY): UNKNOWN
SELECT broker, topic, partition, producer_id, coalesce(data_epoch, marker_epoch) AS producer_epoch,
       first_offset, last_data_offset, marker_offset,
       CASE WHEN marker_offset IS NULL AND last_data_offset < cleaner_offset THEN 'COMMIT'
            WHEN marker_offset IS NULL THEN 'OPEN' ELSE coalesce(outcome, 'UNKNOWN') END AS outcome,
       coordinator_epoch, CAST(coalesce(batch_count, 0) AS BIGINT) AS batch_count,
       CAST(coalesce(record_count, 0) AS BIGINT) AS record_count, first_timestamp,
       marker_timestamp - first_timestamp AS duration_ms, coalesce(file, marker_file) AS file,
       coalesce(`position`, marker_position) AS `position`, txn_index
FROM (
    SELECT broker, topic, partition, producer_id, txn_index, min(base_offset) AS first_offset,
           max(last_offset) AS last_data_offset, max_by(producer_epoch, base_offset) AS data_epoch,
           count(1) AS batch_count, CAST(sum(`count`) AS BIGINT) AS record_count,
           min(max_timestamp) AS first_timestamp, min_by(file, base_offset) AS file,
           min_by(`position`, base_offset) AS `position`, max(cleaner_offset) AS cleaner_offset
    FROM transaction_batches WHERE NOT is_control
    GROUP BY broker, topic, partition, producer_id, txn_index)
FULL OUTER JOIN (
    SELECT broker, topic, partition, producer_id, txn_index, base_offset AS marker_offset,
           control_type AS outcome, coordinator_epoch, producer_epoch AS marker_epoch,
           max_timestamp AS marker_timestamp, file AS marker_file, `position` AS marker_position
    FROM transaction_batches WHERE is_control)
USING (broker, topic, partition, producer_id, txn_index)
