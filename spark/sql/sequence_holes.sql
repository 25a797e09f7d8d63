/*
[check]
coverage = true
family = "log"

[[finding]]
kind = "sequence_gap"
severity = "error"
meaning = "a producer's batch does not continue its sequence (records lost or never written)"
fields = ["expected_sequence", "found_sequence", "gap_size", "size_class", "leader_epoch_change", "previous_batch_offset"]
rule = '''
same producer id and epoch, base sequence is not last sequence + 1 (2147483647 is followed by 0):
`expected_sequence`, `found_sequence`, `gap_size`, `previous_batch_offset`, `size_class` (`small`: at most 5
batches of the previous batch's size, a lost in-flight window; `large`: more), `leader_epoch_change` (the
batch is the first of a new partition leader epoch: the signature of an unclean election)'''
compacted = '''
below the cleaner offset a jump between surviving batches of one producer epoch is what compaction does (a
batch whose records are all superseded is deleted, `DELETE_EMPTY`; a thinned batch keeps its baseSequence and
lastOffsetDelta): silent wherever the missing sequence numbers can have stood below the checkpoint (the
previous batch ends more than one offset below it), counted by `cleaned_sequence_holes`; in the dirty tail the
rule as written. An empty batch keeps its base sequence and lastOffsetDelta, so it continues its producer's
sequence'''
reports = ["gaps"]
event = "producer {producer_id} epoch {producer_epoch} jumps from sequence {expected_sequence} to {found_sequence} at offset {offset} of {topic}-{partition} on {broker}"

[[finding]]
kind = "cleaned_sequence_holes"
severity = "info"
meaning = '''
a compacted partition's producer sequences have holes the log cleaner made below its checkpoint (batches whose
records were all superseded are deleted): counted, not a gap'''
fields = ["cleaner_offset", "holes", "sequence_numbers", "producer_epochs"]
rule = '''
once per partition with a `cleaner-offset-checkpoint` entry, where a producer epoch's base sequence jumps past
the previous surviving batch's last sequence + 1 and the missing sequence numbers can have stood at offsets
below the checkpoint (the previous batch ends more than one offset below it): what `sequence_gap` leaves to
compaction (Kafka's `MemoryRecords.filterTo` deletes a batch whose records are all superseded and keeps the
survivors' baseSequence and lastOffsetDelta): `cleaner_offset`, `holes`, `sequence_numbers` (missing in all),
`producer_epochs`; `offset`/`position` are the first such batch'''
compacted = "only on compacted partitions: what `sequence_gap` leaves to compaction"
*/
-- The sequence holes of each producer epoch over data (data batches with leader_epoch_change and cleaner_offset):
-- `sequence_gap`, a batch whose base sequence is not the previous batch's last + 1 (mod 2^31), unless the missing
-- sequences can have stood below the partition's cleaner offset; `cleaned_sequence_holes` (info), per compacted
-- partition, the holes between surviving batches that the log cleaner made below its checkpoint, counted, located
-- at the first of them. A gap whose missing sequences may stand in offsets the copy lacks between the two batches
-- (partition_coverage: a segment missing) is `not_judged`: on a complete copy every gap is judged.
WITH
previous AS (
  SELECT *, lag(producer_epoch) OVER w AS prev_epoch, lag(count) OVER w AS prev_count,
         lag(base_offset) OVER w AS prev_base_offset, lag(last_offset) OVER w AS prev_last_offset,
         (CAST(lag(last_sequence) OVER w AS BIGINT) + 1) % 2147483648 AS expected_sequence
  -- the coordinators' own topics are appended with AppendOrigin.COORDINATOR, whose sequences the broker never checks
  -- (ProducerAppendInfo.maybeValidateDataBatch, apache/kafka 07455355): no sequence rule applies there
  FROM data_batches WHERE topic NOT IN ('__consumer_offsets', '__transaction_state', '__share_group_state')
  WINDOW w AS (PARTITION BY broker, topic, partition, producer_id ORDER BY base_offset, segment_base_offset, position)),
holes AS (
  -- a gap of at most 5 batches (of the previous batch's size) could be a lost in-flight window
  SELECT *, CASE WHEN gap <= prev_count * 5 THEN 'small' ELSE 'large' END AS size_class,
         -- the cleaner deletes a batch whose records are all superseded (MemoryRecords.filterTo, DELETE_EMPTY)
         -- and keeps the survivors' baseSequence and lastOffsetDelta: below its checkpoint a jump is compaction
         coalesce(prev_last_offset + 1 < cleaner_offset, false) AS cleaned
  FROM (SELECT *, pmod(base_sequence - expected_sequence, 2147483648) AS gap FROM previous)
  WHERE prev_epoch = producer_epoch AND gap > 0 AND gap < 1073741824),
gaps AS (
  SELECT 'sequence_gap' AS kind, broker, topic, partition, CAST(file AS STRING) AS file,
         CAST(position AS BIGINT) AS position, CAST(base_offset AS BIGINT) AS offset, CAST(producer_id AS BIGINT) AS producer_id,
         CAST(producer_epoch AS INT) AS producer_epoch,
         format_string('Producer %d epoch %d jumps from sequence %d to %d at offset %d: %d sequence numbers are missing (%s gap%s).', producer_id, producer_epoch, expected_sequence - 1, base_sequence, base_offset, gap, size_class, CASE WHEN leader_epoch_change THEN ', at the first batch of a new leader epoch' ELSE '' END) AS message,
         to_json(named_struct('expected_sequence', expected_sequence, 'found_sequence', base_sequence, 'gap_size', gap, 'size_class', size_class, 'leader_epoch_change', leader_epoch_change, 'previous_batch_offset', prev_base_offset)) AS details,
         -- the missing sequences may stand in offsets the copy lacks between the two batches (partition_coverage)
         broker AS gap_broker, format_string('%s-%d', topic, partition) AS gap_partition,
         try_element_at(filter(c.missing, m -> m.first_offset < h.base_offset
                                                AND coalesce(m.last_offset, 9223372036854775807) > h.prev_last_offset), 1)
           AS gap_range
  FROM holes h LEFT JOIN (SELECT broker, topic, partition, missing FROM partition_coverage) c
       USING (broker, topic, partition)
  WHERE NOT cleaned)
SELECT * FROM gaps
UNION ALL
SELECT 'cleaned_sequence_holes' AS kind, broker, topic, partition, CAST(file AS STRING) AS file,
       CAST(position AS BIGINT) AS position, CAST(base_offset AS BIGINT) AS offset, CAST(producer_id AS BIGINT) AS producer_id,
       CAST(producer_epoch AS INT) AS producer_epoch,
       format_string('The log cleaner has compacted %s-%d below offset %d: %d sequence holes (%d sequence numbers) between the surviving batches of %d producer epochs, as compaction leaves them.', topic, partition, cleaner_offset, holes, sequence_numbers, producer_epochs) AS message,
       to_json(named_struct('cleaner_offset', cleaner_offset, 'holes', holes, 'sequence_numbers', sequence_numbers, 'producer_epochs', producer_epochs)) AS details,
       CAST(NULL AS STRING) AS gap_broker, CAST(NULL AS STRING) AS gap_partition, NULL AS gap_range
FROM (SELECT broker, topic, partition, max(cleaner_offset) AS cleaner_offset, count(1) AS holes,
             CAST(sum(gap) AS BIGINT) AS sequence_numbers,
             count(DISTINCT producer_id, producer_epoch) AS producer_epochs,
             min(base_offset) AS base_offset, min_by(file, base_offset) AS file,
             min_by(position, base_offset) AS position, min_by(producer_id, base_offset) AS producer_id,
             min_by(producer_epoch, base_offset) AS producer_epoch
      FROM holes WHERE cleaned GROUP BY broker, topic, partition)
