/*
[check]
coverage = true

[[finding]]
kind = "txnindex_missing"
severity = "error"
meaning = "an aborted transaction the .txnindex does not list"
fields = ["first_offset", "last_offset", "last_stable_offset"]
rule = '''
an aborted range (an ABORT marker in the log) that the `.txnindex` lacks: `first_offset`, `last_offset`,
`last_stable_offset`'''
compacted = '''
compared against ABORT markers: an aborted transaction whose data the cleaner removed keeps its marker and its
entry; a marker with no data left has no entry to miss (the cleaner drops it once the marker may go,
`CleanedTransactionMetadata`; an empty transaction never had one, `ProducerAppendInfo.appendEndTxnMarker`)'''

[[finding]]
kind = "txnindex_orphan"
severity = "error"
meaning = "a .txnindex entry with no ABORT marker in the log"
fields = ["first_offset", "last_offset", "last_stable_offset"]
rule = '''
a `.txnindex` entry with no ABORT marker in the log: `first_offset`, `last_offset`, `last_stable_offset`'''
compacted = '''
compared against ABORT markers, not surviving data: an entry whose marker is in the log is no orphan, whether
or not its data was cleaned; `aborted_ranges` takes such a range from its entry'''

[[finding]]
kind = "txnindex_mismatch"
severity = "error"
meaning = "a .txnindex entry whose first offset or last stable offset differs from the log's"
fields = ["first_offset", "last_offset", "last_stable_offset", "index_first_offset", "index_last_stable_offset"]
rule = '''
a `.txnindex` entry with a different first offset or last stable offset than the log's aborted range:
`first_offset`, `last_offset`, `last_stable_offset`, and the index's `index_first_offset`,
`index_last_stable_offset`'''
compacted = '''
an entry's first offset, or LSO, below the cleaner offset and below what the log still shows names batches the
cleaner removed: it agrees'''
*/
-- Reads aborted_transactions; `txnindex_missing` (an aborted transaction with data and no .txnindex entry),
-- `txnindex_orphan` (an entry without the ABORT marker, unless its transaction began below the log's first offset:
-- retention deletes segments up to the high watermark, not the LSO) and `txnindex_mismatch` (an entry that
-- disagrees). An ABORT marker without data has no entry to miss: an empty transaction gets none
-- (ProducerAppendInfo.appendEndTxnMarker), nor does a marker the cleaner will remove (CleanedTransactionMetadata).
-- kafka-dump-log text has no .txnindex: every abort would read as missing there, so its inputs are not judged.
-- An orphan is `not_judged` where the copy lacks its marker's offset, a mismatch where it lacks offsets from the
-- lowest first offset or LSO either side names up to the marker (partition_coverage): the ABORT marker, the
-- transaction's first batches, or a transaction holding the LSO may stand there. A missing entry is judged: Kafka
-- writes it to the .txnindex of the segment its marker is in, which the copy holds.
WITH judged AS (SELECT * FROM aborted_transactions LEFT ANTI JOIN dump_text_inputs USING (broker)
                LEFT JOIN (SELECT broker, topic, partition, missing FROM partition_coverage)
                    USING (broker, topic, partition)),
found AS (
SELECT 'txnindex_missing' AS kind, broker, topic, partition, CAST(NULL AS STRING) AS file,
       CAST(NULL AS BIGINT) AS position, CAST(first_offset AS BIGINT) AS offset, CAST(producer_id AS BIGINT) AS producer_id,
       CAST(NULL AS INT) AS producer_epoch,
       format_string('The aborted transaction of producer %d (offsets %d-%d) has no .txnindex entry: read_committed consumers would deliver its records.', producer_id, first_offset, last_offset) AS message,
       to_json(named_struct('first_offset', coalesce(first_offset, index_first_offset), 'last_offset', last_offset, 'last_stable_offset', coalesce(last_stable_offset, index_last_stable_offset))) AS details,
       CAST(NULL AS STRING) AS gap_broker, CAST(NULL AS STRING) AS gap_partition,
       CAST(NULL AS STRUCT<first_offset: BIGINT, last_offset: BIGINT, proven: BOOLEAN>) AS gap_range
FROM judged WHERE marked AND first_offset IS NOT NULL AND index_first_offset IS NULL
 UNION ALL
SELECT 'txnindex_orphan' AS kind, broker, topic, partition, CAST(index_file AS STRING) AS file,
       CAST(NULL AS BIGINT) AS position, CAST(index_first_offset AS BIGINT) AS offset, CAST(producer_id AS BIGINT) AS producer_id,
       CAST(NULL AS INT) AS producer_epoch,
       format_string('The .txnindex lists an aborted transaction of producer %d ending at offset %d, but the log holds no ABORT marker of that producer there.', producer_id, last_offset) AS message,
       to_json(named_struct('first_offset', coalesce(first_offset, index_first_offset), 'last_offset', last_offset, 'last_stable_offset', coalesce(last_stable_offset, index_last_stable_offset))) AS details,
       -- the ABORT marker may stand in offsets the copy lacks
       broker AS gap_broker, format_string('%s-%d', topic, partition) AS gap_partition,
       try_element_at(filter(missing, m -> m.first_offset <= last_offset
                                            AND coalesce(m.last_offset, 9223372036854775807) >= last_offset), 1)
         AS gap_range
FROM judged WHERE marked IS NULL AND (log_first_offset IS NULL OR index_first_offset >= log_first_offset)
 UNION ALL
SELECT 'txnindex_mismatch' AS kind, broker, topic, partition, CAST(index_file AS STRING) AS file,
       CAST(NULL AS BIGINT) AS position, CAST(first_offset AS BIGINT) AS offset, CAST(producer_id AS BIGINT) AS producer_id,
       CAST(NULL AS INT) AS producer_epoch,
       format_string('The .txnindex entry for producer %d\'s abort at offset %d says first offset %d and LSO %d; the log says %d and %d.', producer_id, last_offset, index_first_offset, index_last_stable_offset, first_offset, last_stable_offset) AS message,
       to_json(named_struct('first_offset', coalesce(first_offset, index_first_offset), 'last_offset', last_offset, 'last_stable_offset', coalesce(last_stable_offset, index_last_stable_offset), 'index_first_offset', index_first_offset, 'index_last_stable_offset', index_last_stable_offset)) AS details,
       -- the transaction's first batches, or a transaction holding the LSO, may stand in offsets the copy lacks
       broker AS gap_broker, format_string('%s-%d', topic, partition) AS gap_partition,
       try_element_at(filter(missing, m -> m.first_offset <= last_offset
                                            AND coalesce(m.last_offset, 9223372036854775807)
                                                >= least(first_offset, index_first_offset, last_stable_offset,
                                                         index_last_stable_offset)), 1) AS gap_range
FROM judged WHERE marked AND index_first_offset IS NOT NULL AND NOT agrees)
SELECT * FROM found
