/*
[check]
coverage = true
family = "log"

[[finding]]
kind = "snapshot_mismatch"
severity = "error"
meaning = "a producer snapshot entry that disagrees with the log"
fields = ["snapshot_offset", "snapshot_last_offset", "snapshot_last_sequence", "log_last_offset", "log_last_sequence"]
rule = '''
a producer snapshot entry whose last offset is not below the snapshot's offset, or that disagrees with the
producer's last batch below it while the log still holds that part: `snapshot_offset`, `snapshot_last_offset`,
`snapshot_last_sequence`, `log_last_offset`, `log_last_sequence`'''
compacted = '''
below the cleaner offset the batch an entry names may have been deleted (all its records superseded): no
mismatch when only an earlier batch of the producer, or none, is left below it; a thinned batch keeps its last
offset and sequence'''
*/
-- Reads data (data batches), snapshot_entries (snapshot_entries) and partition_ends (partition_ends); the
-- `snapshot_mismatch` check: an entry whose last offset is not below the snapshot offset, or that disagrees with
-- the producer's last data batch below the snapshot offset while the log still holds that part (below the cleaner
-- offset, a batch the log cleaner deleted is not held). `not_judged` where the copy lacks offsets from the entry's last
-- offset up to the snapshot's (partition_coverage): the producer's batch it names may stand there. An entry at or
-- beyond its own snapshot's offset contradicts the snapshot itself: judged all the same.
WITH events AS (
  SELECT broker, topic, partition, producer_id, CAST(last_offset AS DOUBLE) AS `at`,
         named_struct('last_offset', last_offset, 'last_sequence', last_sequence,
                      'producer_epoch', producer_epoch) AS batch,
         CAST(NULL AS BIGINT) AS snapshot_offset
  FROM data_batches
  UNION ALL
  SELECT broker, topic, partition, producer_id, snapshot_offset - 0.5 AS `at`,
         CAST(NULL AS STRUCT<last_offset: BIGINT, last_sequence: INT, producer_epoch: INT>) AS batch, snapshot_offset
  FROM snapshot_entries),
last_below AS (
  SELECT broker, topic, partition, producer_id, snapshot_offset, below FROM (
    SELECT *, last(batch, true) OVER (PARTITION BY broker, topic, partition, producer_id ORDER BY `at`
                                      ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS below
    FROM events)
  WHERE snapshot_offset IS NOT NULL),
checked AS (
  SELECT *, last_offset >= log_first_offset AS covered
  FROM snapshot_entries LEFT JOIN last_below USING (broker, topic, partition, producer_id, snapshot_offset)
       LEFT JOIN partition_ends USING (broker, topic, partition)),
found AS (
SELECT 'snapshot_mismatch' AS kind, broker, topic, partition, CAST(file AS STRING) AS file,
       CAST(NULL AS BIGINT) AS position, CAST(snapshot_offset AS BIGINT) AS offset, CAST(producer_id AS BIGINT) AS producer_id,
       CAST(producer_epoch AS INT) AS producer_epoch,
       format_string('Producer snapshot %s says producer %d last wrote sequence %d at offset %d, but the log below offset %d has %s.', file, producer_id, last_sequence, last_offset, snapshot_offset, CASE WHEN below IS NULL THEN 'no batch of that producer' ELSE format_string('its last batch ending at offset %d with sequence %d', below.last_offset, below.last_sequence) END) AS message,
       to_json(named_struct('snapshot_offset', snapshot_offset, 'snapshot_last_offset', last_offset, 'snapshot_last_sequence', last_sequence, 'log_last_offset', below.last_offset, 'log_last_sequence', below.last_sequence)) AS details,
       -- the producer's batch the entry names may stand in offsets the copy lacks below the snapshot's offset
       broker AS gap_broker, format_string('%s-%d', topic, partition) AS gap_partition,
       CASE WHEN last_offset < snapshot_offset
            THEN try_element_at(filter(c.missing, m -> m.first_offset < snapshot_offset
                                                      AND coalesce(m.last_offset, 9223372036854775807) >= last_offset), 1)
       END AS gap_range
FROM checked LEFT JOIN (SELECT broker, topic, partition, missing FROM partition_coverage) c
     USING (broker, topic, partition)
WHERE last_offset >= 0 AND (last_offset >= snapshot_offset
                            OR (covered AND (below IS NULL OR below.last_offset != last_offset
                                             OR below.last_sequence != last_sequence)
                                -- the log cleaner deleted the batch the entry names (all its records
                                -- superseded, MemoryRecords.filterTo DELETE_EMPTY; a thinned batch keeps its
                                -- lastOffset): only an earlier batch of the producer, or none, is left below
                                AND NOT coalesce(last_offset < cleaner_offset
                                                 AND (below IS NULL OR below.last_offset < last_offset), false))))
SELECT * FROM found
