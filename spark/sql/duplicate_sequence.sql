/*
[check]
family = "log"

[[finding]]
kind = "duplicate_sequence"
severity = "error"
meaning = '''
the same producer id, epoch and sequence range at more than one offset (a duplicate the broker should have
rejected)'''
fields = ["sequence_range", "offsets"]
rule = '''
the same producer id, epoch and sequence range at more than one offset (reported at the second copy):
`sequence_range`, `offsets`'''
compacted = '''
unchanged everywhere: the cleaner never rewrites a batch's producer id, epoch or base sequence, nor reorders
batches'''
reports = ["gaps", "eos"]
event = "producer {producer_id} wrote sequences {sequence_range[0]}-{sequence_range[1]} twice in {topic}-{partition} (offsets {offsets})"
*/
-- Reads data (data batches); the `duplicate_sequence` check: one finding per repeated (producer, epoch, range),
-- located at the second copy.
SELECT 'duplicate_sequence' AS kind, broker, topic, partition, CAST(file AS STRING) AS file,
       CAST(position AS BIGINT) AS position, CAST(base_offset AS BIGINT) AS offset, CAST(producer_id AS BIGINT) AS producer_id,
       CAST(producer_epoch AS INT) AS producer_epoch,
       format_string('Producer %d epoch %d wrote sequences %d-%d again at offset %d (first at offset %d): the broker\'s deduplication was defeated.', producer_id, producer_epoch, base_sequence, last_sequence, base_offset, element_at(offsets, 1)) AS message,
       to_json(named_struct('sequence_range', array(base_sequence, last_sequence), 'offsets', offsets)) AS details
FROM (SELECT *, row_number() OVER (PARTITION BY broker, topic, partition, producer_id, producer_epoch, base_sequence, last_sequence ORDER BY base_offset) AS copy,
             collect_list(base_offset) OVER (PARTITION BY broker, topic, partition, producer_id, producer_epoch, base_sequence, last_sequence ORDER BY base_offset ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
               AS offsets
      -- the coordinators' own topics: their sequences are never checked (see sequence_holes.sql)
      FROM data_batches WHERE topic NOT IN ('__consumer_offsets', '__transaction_state', '__share_group_state'))
WHERE copy = 2
