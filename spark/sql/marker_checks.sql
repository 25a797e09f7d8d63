/*
[table]
doc = """Per completed or prepared transaction of the coordinator (coordinator_txns) and replica (replica_ends) of
each data partition it names: the matching marker in clustered_batches and the first data batch of the transaction
there, with the image time of the replica's broker (image_times) and whether the replica's log ends behind another
replica of the partition in the input (`behind`: a follower that had not fetched that far)."""
columns = """
broker string, topic string, partition int, transactional_id string, txn_seq bigint,
coordinator_partition string, cluster_id string, first_producer_epoch int, outcome string,
states array<string>, partitions array<string>, transaction_timeout_ms int, txn_start_timestamp bigint,
completed_at bigint, coordinator_broker string, coordinator_first_offset bigint,
coordinator_last_offset bigint, file string, position bigint, transaction_version int,
marker_producer_id bigint, marker_producer_epoch int, expected_coordinator_partition string,
partitions_not_in_input array<string>, producer_id bigint, producer_epoch int, tv2 boolean, named string,
next_start bigint, log_end_timestamp bigint, log_start_offset bigint, cleaned_up_to bigint, image_time bigint,
behind boolean,
marker_offset bigint, marker_outcome string, marker_epoch int, marker_file string, marker_position bigint,
data_offset bigint, data_file string, data_position bigint"""
*/
-- Per completed (or prepared, for the stuck-preparing rule) transaction of coordinator_txns (coordinator_transactions with partitions_not_in_input and
-- expected_coordinator_partition) and replica (replica_ends) of each data partition it names: the matching marker in
-- clustered_batches (marker_offset, marker_outcome, marker_epoch, marker_file, marker_position) and the first data
-- batch of the transaction there (data_offset, data_file, data_position); image_time of the replica's broker
-- (image_times) and `behind` (another replica of the partition in the input ends at a higher offset).
WITH
    done AS (
        SELECT * EXCEPT (producer_id, producer_epoch), marker_producer_id AS producer_id,
               marker_producer_epoch AS producer_epoch, coalesce(transaction_version, 0) >= 2 AS tv2,
               explode(partitions) AS named FROM coordinator_txns
        WHERE outcome IN ('COMMIT', 'ABORT', 'PREPARE_COMMIT', 'PREPARE_ABORT') AND txn_start_timestamp IS NOT NULL),
    per_partition AS (
        SELECT *, lead(txn_start_timestamp) OVER (PARTITION BY cluster_id, producer_id, named
                                                  ORDER BY txn_start_timestamp) AS next_start
        FROM (SELECT *, regexp_extract(named, '^(.*)-(\\d+)$', 1) AS topic,
                     CAST(regexp_extract(named, '^(.*)-(\\d+)$', 2) AS INT) AS partition FROM done)),
    judged AS (
        SELECT * FROM per_partition JOIN (
            SELECT broker, topic, partition, cluster_id, log_end_timestamp, log_start_offset, cleaned_up_to,
                   image_time,
                   log_end_offset < max(log_end_offset) OVER (PARTITION BY cluster_id, topic, partition) AS behind
            FROM replica_ends LEFT JOIN (SELECT broker, image_time FROM image_times) USING (broker))
        USING (cluster_id, topic, partition)),
    matched AS (
        -- TV2: the marker at the Prepare record's epoch, the data below it (ProducerAppendInfo: marker epoch > data
        -- epoch); TV1: by time, the epoch staying the data's across transactions
        SELECT *, CASE WHEN tv2 THEN CASE WHEN is_control THEN b_epoch = producer_epoch
                                          ELSE b_epoch < producer_epoch
                                               AND b_epoch >= least(first_producer_epoch, producer_epoch - 1) END
                       ELSE max_timestamp >= txn_start_timestamp AND (next_start IS NULL OR max_timestamp < next_start)
                  END AS hit
        FROM judged LEFT JOIN (
            SELECT broker, topic, partition, producer_id, base_offset, is_control, control_type,
                   producer_epoch AS b_epoch, max_timestamp, file AS b_file, position AS b_position
            FROM clustered_batches WHERE magic = 2 AND is_transactional)
        USING (broker, topic, partition, producer_id)),
    markers AS (
        SELECT broker, topic, partition, transactional_id, txn_seq, coordinator_partition, min(base_offset) AS marker_offset, min_by(control_type, base_offset) AS marker_outcome,
               min_by(b_epoch, base_offset) AS marker_epoch, min_by(b_file, base_offset) AS marker_file,
               min_by(b_position, base_offset) AS marker_position
        FROM matched WHERE hit AND is_control GROUP BY broker, topic, partition, transactional_id, txn_seq, coordinator_partition),
    data AS (
        SELECT broker, topic, partition, transactional_id, txn_seq, coordinator_partition, min(base_offset) AS data_offset, min_by(b_file, base_offset) AS data_file,
               min_by(b_position, base_offset) AS data_position
        FROM matched WHERE hit AND NOT is_control GROUP BY broker, topic, partition, transactional_id, txn_seq, coordinator_partition)
SELECT * FROM judged LEFT JOIN markers USING (broker, topic, partition, transactional_id, txn_seq, coordinator_partition) LEFT JOIN data USING (broker, topic, partition, transactional_id, txn_seq, coordinator_partition)
