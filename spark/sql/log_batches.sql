/*
[table]
doc = """The batches of the live partition dirs as the checks read them: `base_timestamp` as a create time, with
`leader_epoch_change` (the batch is the first of a new partition leader epoch in its partition) and `cleaner_offset`
(the partition's cleaner-offset-checkpoint entry: offsets below it were compacted by the log cleaner; null: none)."""
keep = true
like = "batches"
columns = "base_timestamp bigint, leader_epoch_change boolean, cleaner_offset bigint"
*/
-- A batch's create time: the header of a batch whose attributes bit 6 is set holds the delete horizon in
-- baseTimestamp (KIP-534: MemoryRecordsBuilder writes it there, DefaultRecordBatch.deleteHorizonMs reads it back), and
-- an empty batch the log cleaner kept (MemoryRecords.filterTo, RETAIN_EMPTY) holds -1 there
-- (DefaultRecordBatch.writeEmptyHeader); neither is a create time, so their max timestamp stands in (apache/kafka
-- 1eb76443, 4.0.0-SNAPSHOT; unchanged on trunk).
SELECT * EXCEPT (base_timestamp, leader_epoch_change, cleaner_offset),
       CASE WHEN delete_horizon_ms IS NOT NULL OR (magic = 2 AND count = 0) THEN max_timestamp
            ELSE base_timestamp END AS base_timestamp,
       leader_epoch_change, cleaner_offset
FROM (
  SELECT *, lag(partition_leader_epoch) OVER w IS NOT NULL
              AND lag(partition_leader_epoch) OVER w != partition_leader_epoch AS leader_epoch_change
  FROM batches LEFT JOIN (SELECT broker, topic, partition, cleaner_offset FROM partition_checkpoints)
       USING (broker, topic, partition)
  WINDOW w AS (PARTITION BY broker, topic, partition ORDER BY base_offset, segment_base_offset, position))
