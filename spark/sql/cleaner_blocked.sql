/*
[check]
coverage = true
family = "transactions"

[[finding]]
kind = "cleaner_blocked"
severity = "warning"
meaning = '''
a compacted partition's log cleaner is held at the last stable offset by a transaction open longer than the
transaction timeout'''
fields = ["cleaner_offset", "last_stable_offset", "held_by_producer_id", "txn_first_offset", "bytes_behind", "age_ms", "image_time", "partition_last_write"]
rule = '''
compaction held back by a transaction: the partition has a `cleaner-offset-checkpoint` entry (it is
compacted), and its LSO is held below the log end by a transaction open longer than its timeout at the image
time of the broker holding it (`image_times`; not at the partition's own last write) (its
transactional id's `txnTimeoutMs` where a `__transaction_state` record in the input names the producer id,
else `--txn-timeout`; never a two-phase-commit one, a prepared transaction instead) (the earliest open one; the
log cleaner never cleans past the LSO, so the partition grows without bound, KIP-664): `cleaner_offset`,
`last_stable_offset`, `held_by_producer_id`, `txn_first_offset`, `bytes_behind` (bytes of the batches from the
one holding the LSO to the log end), `age_ms` (the transaction's age at the image time), `image_time`,
`partition_last_write` (the partition's newest timestamp); `offset`/`position` are the transaction's first
batch'''
compacted = '''
about compaction itself: a transaction whose data lies below the cleaner offset is complete (see
a hanging transaction), so only one open in the dirty tail, above the checkpoint, can hold the cleaner'''
event = "the log cleaner of {topic}-{partition} on {broker} is held at the last stable offset {last_stable_offset} by producer {held_by_producer_id} ({bytes_behind} bytes behind)"
*/
-- Compaction held back by a transaction. The log cleaner never cleans past the last stable offset
-- (LogCleanerManager's firstUncleanableDirtyOffset is the least of the LSO, the active segment's base offset and the
-- compaction lag): on a compacted partition (one with a cleaner-offset-checkpoint entry) an open transaction stops
-- compaction at its first offset, and a hanging one lets the partition grow without bound (KIP-664).
-- The `cleaner_blocked` check: reads `timed_transactions` (transactions_table),
-- `partition_ends` (partition_ends), `image_times` (the transaction's age is judged at the broker's image time; a
-- broker without one: the partition's last write) and `batches` (last_offset, size); `not_judged` where the copy lacks offsets after
-- the transaction's first offset (partition_coverage), or, judged by the default timeout, a copy of
-- __transaction_state of its cluster lacks offsets (replica_coverage).
-- 2147483647 (Integer.MAX_VALUE): a KIP-939 two-phase-commit transaction's timeout, never aborted by the coordinator
-- (TransactionMetadata.isDistributedTwoPhaseCommitTxn, apache/kafka 38666db4)
WITH 
        first_open AS (
            SELECT broker, topic, partition, min(first_offset) AS txn_first_offset,
                   min_by(producer_id, first_offset) AS held_by_producer_id,
                   min_by(producer_epoch, first_offset) AS producer_epoch,
                   min_by(first_timestamp, first_offset) AS first_timestamp,
                   min_by(file, first_offset) AS file, min_by(position, first_offset) AS position,
                   min_by(coalesce(transaction_timeout_ms, :txn_timeout_ms), first_offset) AS timeout_ms,
                   min_by(transaction_timeout_ms IS NULL, first_offset) AS default_timeout,
                   first(cluster_id) AS cluster_id
            FROM timed_transactions WHERE outcome = 'OPEN' AND first_offset IS NOT NULL
            GROUP BY broker, topic, partition),
        held AS (
            SELECT * FROM (
                SELECT *, least(txn_first_offset, coalesce(high_watermark, log_end_offset)) AS last_stable_offset,
                       coalesce(image_time, log_end_timestamp) - first_timestamp AS age_ms
                FROM (SELECT * FROM partition_ends WHERE cleaner_offset IS NOT NULL)
                JOIN first_open USING (broker, topic, partition)
                LEFT JOIN (SELECT broker, image_time FROM image_times) USING (broker))
            -- held by the transaction itself (not by a high watermark below it), below the log end, for too long
            WHERE last_stable_offset = txn_first_offset AND last_stable_offset < log_end_offset
              AND age_ms > timeout_ms AND timeout_ms != 2147483647),
        behind AS (
            SELECT broker, topic, partition, CAST(sum(size) AS BIGINT) AS bytes_behind
            FROM log_batches JOIN (SELECT broker, topic, partition, last_stable_offset FROM held)
                 USING (broker, topic, partition)
            WHERE last_offset >= last_stable_offset
            GROUP BY broker, topic, partition),
        holds AS (
            SELECT broker, topic, partition, cleaner_offset, last_stable_offset, held_by_producer_id,
                   producer_epoch, txn_first_offset, age_ms, image_time, log_end_timestamp,
                   coalesce(bytes_behind, 0) AS bytes_behind,
                   file, position, timeout_ms, default_timeout, cluster_id
            FROM held LEFT JOIN behind USING (broker, topic, partition)),
        found AS (SELECT 'cleaner_blocked' AS kind,
       broker,
       topic,
       partition,
       CAST(file AS STRING) AS file,
       CAST(position AS BIGINT) AS position,
       CAST(txn_first_offset AS BIGINT) AS offset,
       CAST(held_by_producer_id AS BIGINT) AS producer_id,
       CAST(producer_epoch AS INT) AS producer_epoch,
       format_string('Compaction of %s-%d stops at the last stable offset %d: producer %d\'s transaction, open since offset %d for %d ms at the image time (timeout %d ms), holds it, so the log cleaner (checkpointed at %d) leaves the %d bytes from there to the log end uncleaned and the partition keeps growing.', topic, partition, last_stable_offset, held_by_producer_id, txn_first_offset, age_ms, timeout_ms, cleaner_offset, bytes_behind) AS message,
       to_json(named_struct('cleaner_offset', cleaner_offset, 'last_stable_offset', last_stable_offset, 'held_by_producer_id', held_by_producer_id, 'txn_first_offset', txn_first_offset, 'bytes_behind', bytes_behind, 'age_ms', age_ms, 'image_time', image_time, 'partition_last_write', log_end_timestamp)) AS details,
       -- the transaction's marker may stand in offsets the copy lacks after its first offset (partition_coverage);
       -- judged by the default timeout, its id's own may stand in what a copy of __transaction_state lacks
       -- (replica_coverage)
       coalesce(CASE WHEN own_range IS NOT NULL THEN broker END, txn_state_lack.gap_broker) AS gap_broker,
       coalesce(CASE WHEN own_range IS NOT NULL THEN format_string('%s-%d', topic, partition) END,
                txn_state_lack.gap_partition) AS gap_partition,
       coalesce(own_range, CASE WHEN default_timeout THEN txn_state_lack.gap_range END) AS gap_range
       FROM (SELECT *, try_element_at(filter(missing, m -> coalesce(m.last_offset, 9223372036854775807)
                                                           >= txn_first_offset), 1) AS own_range
             FROM holds LEFT JOIN (SELECT broker, topic, partition, missing FROM partition_coverage)
                  USING (broker, topic, partition)
             LEFT JOIN (SELECT cluster_id, min_by(named_struct('gap_broker', m.broker,
                                              'gap_partition', format_string('%s-%d', topic, partition),
                                              'gap_range', named_struct('first_offset', m.first_offset,
                                                                        'last_offset', m.last_offset,
                                                                        'proven', m.proven)),
                                 format_string('%s-%d', topic, partition)) AS txn_state_lack
           FROM replica_coverage LATERAL VIEW explode(missing) AS m
           WHERE topic = '__transaction_state' GROUP BY cluster_id) USING (cluster_id)))
SELECT * FROM found

