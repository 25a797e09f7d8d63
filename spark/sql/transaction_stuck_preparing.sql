/*
[check]
coverage = true
family = "coordinator"
applies = "has_transaction_state"

[[finding]]
kind = "transaction_stuck_preparing"
severity = "error"
meaning = '''
the transaction coordinator decided a transaction's outcome (PrepareCommit or PrepareAbort) but never completed
it: its markers were not all written, and the partitions without one keep the transaction open'''
fields = ["transactional_id", "coordinator_partition", "coordinator_offset", "coordinator_broker", "state", "prepared_at", "age_ms", "image_time", "transaction_timeout_ms", "transaction_version", "partitions", "partitions_with_marker", "partitions_without_marker", "partitions_not_in_input"]
rule = '''
the coordinator's newest record for a transactional id (its `__transaction_state` partition's serving replica) is
PrepareCommit or PrepareAbort, written longer ago than the transaction's timeout at the image time of the
coordinator's broker (`image_times`, `--image-time`; a two-phase-commit transaction's Integer.MAX_VALUE timeout:
`--txn-timeout`). The coordinator never times out a prepared transaction (TransactionStateManager.timedOutTransactions
aborts only Ongoing ones); it sends the markers to every partition the transaction names
(TransactionMarkerChannelManager), retries them until each is written, re-sends them when it loads the partition
after a failover (TransactionStateManager.loadTransactionsForTxnTopicPartition: PrepareCommit/PrepareAbort) and then writes
CompleteCommit/CompleteAbort (apache/kafka 1eb76443, 4.0.0-SNAPSHOT: the newest broker code read for this rule;
the same Ongoing-only timeout in the later copies stored). A Prepare record left for longer than the
timeout means markers that cannot be written: under Transactions V2 a reloaded coordinator re-sent them at the
logged epoch, which the partition leaders refused (InvalidProducerEpochException, a livelock: KAFKA-19999, resolved December 2025);
under V1, KAFKA-16352. `transactional_id`, `coordinator_partition`, `coordinator_offset` (the Prepare
record), `coordinator_broker`, `state`, `prepared_at` (its TransactionLastUpdateTimestampMs), `age_ms` (at the
image time), `image_time`, `transaction_timeout_ms` (the timeout it was judged by), `transaction_version`,
`partitions` (that it names), `partitions_with_marker` and `partitions_without_marker` (`topic-partition on broker`,
each replica in the input, matched as for a missing marker), `partitions_not_in_input`; `producer_id` /
`producer_epoch` are the markers' (the Prepare record's)'''
compacted = '''
unchanged: `__transaction_state` is compacted, but the cleaner keeps each transactional id's newest record, the one
judged; a data partition's marker the cleaner removed past its delete horizon, with no batch of its transaction left,
counts as neither with nor without a marker'''
reports = ["eos"]
event = "coordinator {coordinator_broker} prepared transaction {transactional_id} ({state}) {age_ms} ms before the image and never completed it; no marker on {partitions_without_marker}"
at = "prepared_at"
clock = "transaction coordinator's clock"

[[finding.action]]
phase = "save"
command = "kforensics export {broker}={log_dir} --broker {broker} --topic {topic} --partition {partition} --offsets {offset}:{offset} --out txn-state-{transactional_id}.jsonl"
why = "saves the coordinator's {state} record of {transactional_id}: the outcome it decided, before a coordinator failover or an abort writes another"
destructive = false

[[finding.action]]
phase = "verify"
command = "kafka-transactions.sh --bootstrap-server <BOOTSTRAP> describe --transactional-id {transactional_id}"
why = "shows the coordinator's state of {transactional_id} now: still {state} means its markers are still not written"
destructive = false

[[finding.action]]
phase = "repair"
command = "kafka-leader-election.sh --bootstrap-server <BOOTSTRAP> --election-type preferred --topic {topic} --partition {partition}"
why = "moves the coordinator of {coordinator_partition} (where the preferred leader is another broker), which loads it and re-sends the markers of every prepared transaction; under Transactions V2 on a Kafka without the fix of KAFKA-19999 the re-sent markers are refused again: upgrade the brokers first"
destructive = false
*/
-- The `transaction_stuck_preparing` check: reads coordinator_txns (its transaction: states, partitions, timeout,
-- the Prepare record's producer id and epoch), coordinator_log (the Prepare record's last update timestamp),
-- marker_checks (the markers on each replica in the input), image_times (of the coordinator's broker; none: the
-- newest timestamp of the coordinator's partition) and partition_coverage (`not_judged` where the copy of the
-- coordinator's partition lacks offsets after the Prepare record: its Complete record may be there).
-- 2147483647 (Integer.MAX_VALUE): a KIP-939 two-phase-commit transaction's timeout (TransactionMetadata
-- .isDistributedTwoPhaseCommitTxn, apache/kafka 38666db4); its markers are due as fast as any other's.
WITH prepared AS (
    SELECT t.*, element_at(t.states, -1) AS state, l.last_update_timestamp, l.timestamp AS record_timestamp,
           l.topic, l.partition
    FROM coordinator_txns t
    JOIN coordinator_log l
      ON l.cluster_id = t.cluster_id AND format_string('%s-%d', l.topic, l.partition) = t.coordinator_partition
         AND l.broker = t.coordinator_broker AND l.offset = t.coordinator_last_offset
    WHERE t.outcome IN ('PREPARE_COMMIT', 'PREPARE_ABORT')
      AND element_at(t.states, -1) IN ('PrepareCommit', 'PrepareAbort')),
markers AS (
    SELECT cluster_id, coordinator_partition, transactional_id, txn_seq,
           array_sort(collect_list(CASE WHEN marker_offset IS NOT NULL
                                        THEN format_string('%s-%d on %s', topic, partition, broker) END))
             AS partitions_with_marker,
           -- a compacted replica holding neither data nor marker: what the cleaner leaves (the missing marker's rule)
           array_sort(collect_list(CASE WHEN marker_offset IS NULL AND (data_offset IS NOT NULL OR cleaned_up_to IS NULL)
                                        THEN format_string('%s-%d on %s', topic, partition, broker) END))
             AS partitions_without_marker
    FROM marker_checks GROUP BY cluster_id, coordinator_partition, transactional_id, txn_seq),
ends AS (
    SELECT broker AS coordinator_broker, topic, partition, max(timestamp) AS partition_last_write
    FROM coordinator_log GROUP BY broker, topic, partition),
judged AS (
    SELECT p.*, coalesce(p.last_update_timestamp, p.record_timestamp) AS prepared_at,
           coalesce(i.image_time, e.partition_last_write) AS judged_at, i.image_time,
           CASE WHEN p.transaction_timeout_ms IS NULL OR p.transaction_timeout_ms = 2147483647 THEN :txn_timeout_ms
                ELSE p.transaction_timeout_ms END AS timeout_ms,
           coalesce(m.partitions_with_marker, CAST(array() AS ARRAY<STRING>)) AS partitions_with_marker,
           coalesce(m.partitions_without_marker, CAST(array() AS ARRAY<STRING>)) AS partitions_without_marker,
           try_element_at(filter(c.missing, r -> coalesce(r.last_offset, 9223372036854775807)
                                                 > p.coordinator_last_offset), 1) AS own_range
    FROM prepared p
    LEFT JOIN markers m USING (cluster_id, coordinator_partition, transactional_id, txn_seq)
    LEFT JOIN ends e USING (coordinator_broker, topic, partition)
    LEFT JOIN (SELECT broker, image_time FROM image_times) i ON i.broker = p.coordinator_broker
    LEFT JOIN partition_coverage c
      ON c.broker = p.coordinator_broker AND c.topic = p.topic AND c.partition = p.partition),
found AS (
    SELECT 'transaction_stuck_preparing' AS kind, coordinator_broker AS broker, topic, partition,
           CAST(file AS STRING) AS file, CAST(position AS BIGINT) AS position,
           CAST(coordinator_last_offset AS BIGINT) AS offset, CAST(marker_producer_id AS BIGINT) AS producer_id,
           CAST(marker_producer_epoch AS INT) AS producer_epoch,
           format_string('Transactional id %s (producer %d, epoch %d): the coordinator (%s offset %d) wrote %s %d ms before the image time (timeout %d ms) and never completed it: its markers are missing from %s%s.', transactional_id, marker_producer_id, marker_producer_epoch, coordinator_partition, coordinator_last_offset, state, judged_at - prepared_at, timeout_ms, CASE WHEN size(partitions_without_marker) > 0 THEN array_join(partitions_without_marker, ', ') ELSE 'no partition in the input' END, CASE WHEN size(partitions_not_in_input) > 0 THEN format_string(' (not in the input: %s)', array_join(partitions_not_in_input, ', ')) ELSE '' END) AS message,
           to_json(named_struct('transactional_id', transactional_id, 'coordinator_partition', coordinator_partition, 'coordinator_offset', coordinator_last_offset, 'coordinator_broker', coordinator_broker, 'state', state, 'prepared_at', prepared_at, 'age_ms', judged_at - prepared_at, 'image_time', image_time, 'transaction_timeout_ms', timeout_ms, 'transaction_version', transaction_version, 'partitions', partitions, 'partitions_with_marker', partitions_with_marker, 'partitions_without_marker', partitions_without_marker, 'partitions_not_in_input', partitions_not_in_input)) AS details,
           -- a completion may stand in offsets the coordinator's copy lacks after the prepare (partition_coverage)
           coordinator_broker AS gap_broker, coordinator_partition AS gap_partition, own_range AS gap_range
    FROM judged WHERE judged_at - prepared_at > timeout_ms)
SELECT * FROM found
