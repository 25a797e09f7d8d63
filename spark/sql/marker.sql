/*
[check]
coverage = true
family = "coordinator"
applies = "has_transaction_state"

[[finding]]
kind = "marker_missing"
severity = "error"
meaning = "the coordinator completed a transaction, but a partition it names holds no marker for it"
fields = ["transactional_id", "coordinator_partition", "coordinator_offset", "coordinator_broker", "coordinator_outcome", "txn_start_timestamp", "completed_at", "partitions_not_in_input", "expected_coordinator_partition", "image_time", "partition_last_write"]
rule = '''
the coordinator completed a transaction (CompleteCommit/CompleteAbort) naming a partition in the input, but
that replica holds no marker of it, although it was imaged after the completion: its log reaches the completion
time, or its broker's image time (`image_times`, `--image-time`) is after it and no replica of the partition in
the input ends further (a quiet partition, whose log stops at the transaction's data, is judged; a follower
that had not fetched as far as another copy is not: the coordinator writes markers with acks=all to the
in-sync replicas, KafkaApis.handleWriteTxnMarkersRequest). The marker carries the producer id
and epoch of the transaction's PrepareCommit/PrepareAbort record (a transaction completed at a rotation is the
old producer id's, at epoch 32767). Under Transactions V2 (ClientTransactionVersion 2) that epoch is one above
the data's and unique to the transaction: the marker is the one of that producer id and epoch; under V1 it is
the first marker of the producer id between the transaction's start and the producer's next transaction there.
`producer_id`/`producer_epoch` are the marker's: `transactional_id`, `coordinator_partition`,
`coordinator_offset`, `coordinator_broker`, `coordinator_outcome`, `txn_start_timestamp`, `completed_at`,
`partitions_not_in_input`, `expected_coordinator_partition`, `image_time` (of the replica's broker),
`partition_last_write` (the replica's newest timestamp); `offset`/`position` are the transaction's first data
batch'''
compacted = '''
the cleaner removes a marker past its delete horizon once no batch of its transaction is left
(`CleanedTransactionMetadata`): on a replica with a cleaner-offset-checkpoint entry, a completed transaction
with neither data nor marker there is what cleaning leaves, silent; its data left without its marker is still
found'''
reports = ["eos"]
event = "coordinator {coordinator_broker} completed transaction {transactional_id} ({coordinator_outcome}) but the marker is missing from {broker}'s {topic}-{partition}"
at = "completed_at"
clock = "transaction coordinator's clock"

[[finding.action]]
phase = "save"
command = "kforensics export {broker}={log_dir} --broker {broker} --topic {topic} --partition {partition} --offsets {offset}: --out txn-{transactional_id}-{topic}-{partition}.jsonl"
why = "saves the transaction's records (and what follows them) as {broker} holds them, before an abort hides them from read_committed consumers"
destructive = false

[[finding.action]]
phase = "verify"
command = "kafka-transactions.sh --bootstrap-server <BOOTSTRAP> describe-producers --topic {topic} --partition {partition}"
why = "shows the partition's producers as its leader sees them: the transaction still open at offset {offset}"
destructive = false

[[finding.action]]
phase = "repair"
command = "kafka-transactions.sh --bootstrap-server <BOOTSTRAP> abort --topic {topic} --partition {partition} --start-offset {offset}"
why = "ends the transaction the partition holds open, so its last stable offset moves on; it writes an ABORT marker, so read_committed consumers never see its records although the coordinator completed it as {coordinator_outcome} (KAFKA-20716): re-produce them from the export if they must be delivered"
destructive = true

[[finding]]
kind = "outcome_mismatch"
severity = "error"
meaning = "a partition's marker says the other outcome than the coordinator"
fields = ["transactional_id", "coordinator_partition", "coordinator_offset", "coordinator_broker", "coordinator_outcome", "txn_start_timestamp", "completed_at", "partitions_not_in_input", "expected_coordinator_partition", "marker_outcome", "marker_offset"]
rule = '''
the coordinator completed a transaction naming a partition in the input, and that replica's marker says the
other outcome (COMMIT vs ABORT); matched as for `marker_missing` (Transactions V1 and V2, across a rotation):
the same fields (`transactional_id`, `coordinator_partition`, `coordinator_offset`, `coordinator_broker`,
`coordinator_outcome`, `txn_start_timestamp`, `completed_at`, `partitions_not_in_input`,
`expected_coordinator_partition`) plus `marker_outcome`, `marker_offset`'''
compacted = '''
unchanged: a marker that survives keeps its control type (an empty control batch, whose record was cleaned,
has no outcome to mismatch)'''
reports = ["eos"]
*/
-- Reads marker_checks; `marker_missing` (no marker in a replica imaged after the completion: its log reaches the
-- completion time, or its broker's image time does and no replica of the partition ends further) and
-- `outcome_mismatch` (the marker says the other outcome). A prepared transaction is judged by the stuck-preparing rule.
-- `not_judged` where a copy lacks what settles it (partition_coverage): a missing marker where the data replica's
-- copy lacks any offsets (a transaction is matched to its batches by time or epoch, not offset: its own data and
-- marker may stand there, the batches matched being a later transaction's); a mismatched marker where that copy lacks
-- offsets below it (this transaction's own marker may stand there, the one matched being a later one's) or the
-- coordinator's copy lacks offsets after its record (the producer's next transaction, which bounds the match, may
-- stand there).
WITH coverage AS (SELECT broker, topic, partition, missing FROM partition_coverage),
found AS (
SELECT 'marker_missing' AS kind, broker, topic, partition, CAST(data_file AS STRING) AS file,
       CAST(data_position AS BIGINT) AS position, CAST(data_offset AS BIGINT) AS offset, CAST(producer_id AS BIGINT) AS producer_id,
       CAST(producer_epoch AS INT) AS producer_epoch,
       format_string('Transactional id %s (producer %d, epoch %d): the coordinator (%s offset %d) completed this transaction with %s at %d, but %s-%d holds no marker of it%s.', transactional_id, producer_id, producer_epoch, coordinator_partition, coordinator_last_offset, outcome, completed_at, topic, partition, CASE WHEN data_offset IS NOT NULL THEN format_string(': its data from offset %d stays open and holds the LSO', data_offset) ELSE '' END) AS message,
       to_json(named_struct('transactional_id', transactional_id, 'coordinator_partition', coordinator_partition, 'coordinator_offset', coordinator_last_offset, 'coordinator_broker', coordinator_broker, 'coordinator_outcome', outcome, 'txn_start_timestamp', txn_start_timestamp, 'completed_at', completed_at, 'partitions_not_in_input', partitions_not_in_input, 'expected_coordinator_partition', expected_coordinator_partition, 'image_time', image_time, 'partition_last_write', log_end_timestamp)) AS details,
       -- the marker may stand in offsets the data replica's copy lacks (matched by time or epoch: anywhere)
       broker AS gap_broker, format_string('%s-%d', topic, partition) AS gap_partition,
       try_element_at(missing, 1) AS gap_range
     FROM marker_checks LEFT JOIN coverage USING (broker, topic, partition)
     WHERE marker_offset IS NULL AND outcome IN ('COMMIT', 'ABORT')
       AND (log_end_timestamp >= completed_at OR (image_time >= completed_at AND NOT coalesce(behind, false)))
     -- the log cleaner removes a marker past its delete horizon once no batch of its transaction is left
     -- (Cleaner.shouldDiscardBatch with CleanedTransactionMetadata, apache/kafka 08528988): on a compacted
     -- replica a transaction with neither data nor marker there is what cleaning leaves; data left open is not
     AND (data_offset IS NOT NULL OR cleaned_up_to IS NULL)
 UNION ALL
SELECT 'outcome_mismatch' AS kind, broker, topic, partition, CAST(marker_file AS STRING) AS file,
       CAST(marker_position AS BIGINT) AS position, CAST(marker_offset AS BIGINT) AS offset, CAST(producer_id AS BIGINT) AS producer_id,
       CAST(marker_epoch AS INT) AS producer_epoch,
       format_string('Transactional id %s (producer %d): the coordinator (%s offset %d) recorded %s, but the marker at offset %d of %s-%d is a %s.', transactional_id, producer_id, coordinator_partition, coordinator_last_offset, outcome, marker_offset, topic, partition, marker_outcome) AS message,
       to_json(named_struct('transactional_id', transactional_id, 'coordinator_partition', coordinator_partition, 'coordinator_offset', coordinator_last_offset, 'coordinator_broker', coordinator_broker, 'coordinator_outcome', outcome, 'txn_start_timestamp', txn_start_timestamp, 'completed_at', completed_at, 'partitions_not_in_input', partitions_not_in_input, 'expected_coordinator_partition', expected_coordinator_partition, 'marker_outcome', marker_outcome, 'marker_offset', marker_offset)) AS details,
       -- this transaction's own marker may stand in offsets the data replica's copy lacks below the one matched; the
       -- producer's next transaction, which bounds the match, in offsets the coordinator's copy lacks after its record
       CASE WHEN data_range IS NOT NULL THEN broker ELSE coordinator_broker END AS gap_broker,
       CASE WHEN data_range IS NOT NULL THEN format_string('%s-%d', topic, partition) ELSE coordinator_partition END
         AS gap_partition,
       coalesce(data_range, coordinator_range) AS gap_range
     FROM (SELECT k.*,
                  try_element_at(filter(d.missing, m -> m.first_offset < k.marker_offset), 1) AS data_range,
                  try_element_at(filter(c.missing, m -> coalesce(m.last_offset, 9223372036854775807)
                                                        > k.coordinator_last_offset), 1) AS coordinator_range
           FROM marker_checks k
           LEFT JOIN coverage d ON d.broker = k.broker AND d.topic = k.topic AND d.partition = k.partition
           LEFT JOIN coverage c ON c.broker = k.coordinator_broker
                               AND format_string('%s-%d', c.topic, c.partition) = k.coordinator_partition)
     WHERE outcome IN ('COMMIT', 'ABORT') AND marker_outcome IS NOT NULL AND marker_outcome != outcome)
SELECT * FROM found
