/*
[check]
family = "log"

[[finding]]
kind = "zombie_epoch"
severity = "error"
meaning = '''
data written with a producer epoch lower than one already written (a fenced producer still writing)'''
fields = ["newer_epoch", "newer_epoch_first_offset", "evidence"]
rule = '''
data written with an epoch lower than one already written (data or marker) for that producer id in the
partition, by log order (no clock involved; under Transactions V2 the marker carries the epoch above its
data's and the next transaction writes with it, so a healthy producer never goes back): `newer_epoch`,
`newer_epoch_first_offset`, `evidence` (`log_order`)'''
compacted = '''
unchanged everywhere: the cleaner never rewrites a batch's producer id, epoch or base sequence, nor reorders
batches'''
reports = ["gaps", "eos"]
event = "producer {producer_id} wrote to {topic}-{partition} at epoch {producer_epoch} after epoch {newer_epoch} (offset {newer_epoch_first_offset}): a zombie"
*/
-- Reads batches; the `zombie_epoch` check: data written with an epoch lower than one already written (data or
-- marker) for that producer id, with the offset where the newer epoch began.
WITH producer_batches AS (
  SELECT * FROM log_batches WHERE magic = 2 AND producer_id >= 0 AND crc_valid),
zombies AS (
  SELECT * FROM (
    SELECT *, max(producer_epoch) OVER (PARTITION BY broker, topic, partition, producer_id ORDER BY base_offset, segment_base_offset, position ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
              AS newer_epoch
    FROM producer_batches)
  WHERE NOT is_control AND producer_epoch < newer_epoch),
first_of_epoch AS (
  SELECT broker, topic, partition, producer_id, producer_epoch AS newer_epoch,
         min(base_offset) AS newer_epoch_first_offset
  FROM producer_batches GROUP BY broker, topic, partition, producer_id, producer_epoch)
SELECT 'zombie_epoch' AS kind, broker, topic, partition, CAST(file AS STRING) AS file,
       CAST(position AS BIGINT) AS position, CAST(base_offset AS BIGINT) AS offset, CAST(producer_id AS BIGINT) AS producer_id,
       CAST(producer_epoch AS INT) AS producer_epoch,
       format_string('Producer %d wrote with epoch %d at offset %d after epoch %d had been written (from offset %d): a fenced zombie producer.', producer_id, producer_epoch, base_offset, newer_epoch, newer_epoch_first_offset) AS message,
       to_json(named_struct('newer_epoch', newer_epoch, 'newer_epoch_first_offset', newer_epoch_first_offset, 'evidence', 'log_order')) AS details
FROM zombies LEFT JOIN first_of_epoch USING (broker, topic, partition, producer_id, newer_epoch)
