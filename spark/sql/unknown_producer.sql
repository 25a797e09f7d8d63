/*
[check]
coverage = true
family = "coordinator"
applies = "has_transaction_state"

[[finding]]
kind = "unknown_producer"
severity = "error"
meaning = '''
a transaction open at the log end whose producer id no __transaction_state record names: no coordinator will
ever end it'''
severity_rule = "warning unless every __transaction_state partition is in the input"
fields = ["batches", "transaction_state_partitions_present", "transaction_state_partitions_missing"]
rule = '''
a transaction open at the log end (no marker) whose producer id no `__transaction_state` record in the input
names as ProducerId, PreviousProducerId or NextProducerId: no coordinator can abort it, so the LSO is stuck
for good. Judged only where some `__transaction_state` partition dir is in the input (with or without
records). Marker-closed transactions of a producer id no record names are what a compacted
`__transaction_state` leaves (only the newest record of a transactional id survives; rotations,
`transactional.id.expiration.ms`, restarts change producer ids): silent. `offset`/`file`/`position` are the
transaction's first batch: `batches` (of the open transaction), `transaction_state_partitions_present`,
`transaction_state_partitions_missing`'''
compacted = "unchanged: a producer id whose data survives is judged the same"
reports = ["eos"]
*/
-- The `unknown_producer` check: reads `timed_transactions` (transactions_table with cluster_id: producer_id,
-- producer_epoch, outcome, first_offset, batch_count, file, position), `transactional_ids` (transactional_ids: the
-- producer ids the coordinator's records name), `partition_dirs` (partition_dirs) and `brokers` (the
-- __transaction_state partitions in the input, per cluster: a dir is in the input whether its segments hold records
-- or not).
--
-- Only an open transaction matters: __transaction_state is compacted (LogCleaner keeps the newest record of each
-- transactional id), so an id's older producer ids (a rotation, transactional.id.expiration.ms, a restart) are named
-- by no record, and their marker-closed transactions are what a healthy log holds. A transaction still open is named
-- by its id's newest record (Ongoing) as long as the coordinator knows it (TransactionStateManager never expires an
-- id with a pending transaction): if none does, no coordinator will ever write its marker.
--
-- `not_judged` where a copy lacks what settles it: its partition's copy lacks offsets after its first offset
-- (partition_coverage: its marker may stand there), or a copy of a __transaction_state partition of its cluster lacks
-- offsets (replica_coverage: a record naming the producer may stand there).
WITH unknown AS (
     SELECT * FROM (SELECT * FROM timed_transactions WHERE outcome = 'OPEN' AND first_offset IS NOT NULL)
     LEFT ANTI JOIN (SELECT cluster_id, producer_id FROM transactional_ids) USING (cluster_id, producer_id)),
 coverage AS (
     SELECT cluster_id, array_sort(collect_set(partition)) AS present
     FROM (SELECT coalesce(b.cluster_id, '') AS cluster_id, d.partition FROM partition_dirs d
           LEFT JOIN (SELECT broker, cluster_id FROM brokers) b USING (broker)
           WHERE d.topic = '__transaction_state')
     GROUP BY cluster_id),
 txn_state_lack AS (
     SELECT cluster_id, min_by(named_struct('gap_broker', m.broker,
                                            'gap_partition', format_string('%s-%d', topic, partition),
                                            'gap_range', named_struct('first_offset', m.first_offset,
                                                                      'last_offset', m.last_offset,
                                                                      'proven', m.proven)),
                               format_string('%s-%d', topic, partition)) AS lack
     FROM replica_coverage LATERAL VIEW explode(missing) AS m
     WHERE topic = '__transaction_state' GROUP BY cluster_id),
 found AS (
SELECT 'unknown_producer' AS kind, CASE WHEN missing = 0 THEN 'error' ELSE 'warning' END AS severity, broker, topic, partition, CAST(file AS STRING) AS file,
       CAST(position AS BIGINT) AS position, CAST(first_offset AS BIGINT) AS offset, CAST(producer_id AS BIGINT) AS producer_id,
       CAST(producer_epoch AS INT) AS producer_epoch,
       format_string('Producer %d holds a transaction open since offset %d (%d batches), but no __transaction_state record in the input names it (%d of its %d partitions in the input): no coordinator will ever write its marker, so the last stable offset stays at %d for good.', producer_id, first_offset, batch_count, size(present), :transaction_state_partitions, first_offset) AS message,
       to_json(named_struct('batches', batch_count, 'transaction_state_partitions_present', present, 'transaction_state_partitions_missing', missing)) AS details,
       -- its marker may stand in offsets its partition's copy lacks after its first offset; a record naming it in
       -- offsets a copy of __transaction_state lacks
       coalesce(CASE WHEN own_range IS NOT NULL THEN broker END, lack.gap_broker) AS gap_broker,
       coalesce(CASE WHEN own_range IS NOT NULL THEN format_string('%s-%d', topic, partition) END, lack.gap_partition)
         AS gap_partition,
       coalesce(own_range, lack.gap_range) AS gap_range FROM (
     SELECT *, greatest(0, :transaction_state_partitions - size(present)) AS missing,
            try_element_at(filter(own_missing, m -> coalesce(m.last_offset, 9223372036854775807) >= first_offset), 1)
              AS own_range
     FROM unknown JOIN coverage USING (cluster_id) LEFT JOIN txn_state_lack USING (cluster_id)
          LEFT JOIN (SELECT broker, topic, partition, missing AS own_missing FROM partition_coverage)
          USING (broker, topic, partition)))
SELECT * FROM found
