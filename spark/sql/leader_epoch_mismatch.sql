/*
[check]
coverage = true
family = "log"

[[finding]]
kind = "leader_epoch_mismatch"
severity = "error"
meaning = '''
batches whose partition leader epoch is not the one leader-epoch-checkpoint assigns to their offsets'''
fields = ["batch_leader_epoch", "checkpoint_epoch", "batches"]
rule = '''
batches whose partitionLeaderEpoch is not the epoch leader-epoch-checkpoint assigns to their offsets:
`batch_leader_epoch`, `checkpoint_epoch`, `batches`'''
compacted = "unchanged: a rewritten or empty batch keeps its partitionLeaderEpoch"
*/
-- Reads batches and leader_epochs (leader_epochs); the `leader_epoch_mismatch` check: batches whose
-- partitionLeaderEpoch is not the epoch the checkpoint assigns to their offset, one finding per run of consecutive
-- batches (in offset order) with the same wrong epoch where the checkpoint says the same one. `not_judged` where the
-- copy lacks offsets between the checkpoint's entry and the run (partition_coverage): the run may begin there, so
-- where it starts and how long it is are not known.
WITH marks AS (
  SELECT broker, topic, partition, base_offset, 1 AS `order`, partition_leader_epoch, file, position,
         CAST(NULL AS INT) AS epoch
  FROM log_batches WHERE magic = 2 AND crc_valid
  UNION ALL
  SELECT broker, topic, partition, start_offset AS base_offset, 0 AS `order`,
         CAST(NULL AS INT) AS partition_leader_epoch, file, CAST(NULL AS BIGINT) AS position, epoch
  FROM leader_epochs),
assigned AS (
  SELECT *, CASE WHEN partition_leader_epoch != expected_epoch
                 THEN concat_ws(':', partition_leader_epoch, expected_epoch) END AS wrong
  FROM (SELECT *, last(epoch, true) OVER w AS expected_epoch,
               last(CASE WHEN `order` = 0 THEN base_offset END, true) OVER w AS expected_from
        FROM marks
        WINDOW w AS (PARTITION BY broker, topic, partition ORDER BY base_offset, `order`
                     ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW))
  WHERE `order` = 1 AND expected_epoch IS NOT NULL),
runs AS (
  SELECT *, sum(CAST(starts_run AS INT)) OVER (PARTITION BY broker, topic, partition ORDER BY base_offset ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS run
  FROM (SELECT *, coalesce(lag(wrong) OVER (PARTITION BY broker, topic, partition ORDER BY base_offset) != wrong, true) AS starts_run FROM assigned)),
first_of_run AS (
  SELECT broker, topic, partition, run, partition_leader_epoch, expected_epoch, min(base_offset) AS base_offset,
         min_by(file, base_offset) AS file, min_by(position, base_offset) AS position, count(1) AS batches,
         min(expected_from) AS expected_from
  FROM runs WHERE wrong IS NOT NULL
  GROUP BY broker, topic, partition, run, partition_leader_epoch, expected_epoch),
found AS (
SELECT 'leader_epoch_mismatch' AS kind, broker, topic, partition, CAST(file AS STRING) AS file,
       CAST(position AS BIGINT) AS position, CAST(base_offset AS BIGINT) AS offset, CAST(NULL AS BIGINT) AS producer_id,
       CAST(NULL AS INT) AS producer_epoch,
       format_string('%d batches from offset %d carry leader epoch %d where leader-epoch-checkpoint says epoch %d.', batches, base_offset, partition_leader_epoch, expected_epoch) AS message,
       to_json(named_struct('batch_leader_epoch', partition_leader_epoch, 'checkpoint_epoch', expected_epoch, 'batches', batches)) AS details,
       -- the run may begin in offsets the copy lacks between the checkpoint's entry and its first batch
       broker AS gap_broker, format_string('%s-%d', topic, partition) AS gap_partition,
       try_element_at(filter(c.missing, m -> m.first_offset < f.base_offset
                                              AND coalesce(m.last_offset, 9223372036854775807) >= f.expected_from), 1)
         AS gap_range
FROM first_of_run f LEFT JOIN (SELECT broker, topic, partition, missing FROM partition_coverage) c
     USING (broker, topic, partition))
SELECT * FROM found
