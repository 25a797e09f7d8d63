/*
[check]
coverage = true
*/
-- Reads restart_predictions (predictions' rows) and partition_coverage; the restart findings (FINDING_COLUMNS). A
-- prediction is made for the disk as given; where the copy of the partition lacks segments (the real disk holds
-- them) at or after what it cuts, what it predicts is not what a restart of that broker would do: `not_judged` then.
-- So too where the copy lacks a range from the recovery point on that a crash may have lost: Kafka recovers from the
-- segment holding the recovery point (LogLoader.recoverLog: segments.values(recoveryPoint, ...), apache/kafka
-- 1eb76443), and the real disk may hold a segment there that the copy lacks (a roll flushes the old segment and moves
-- the recovery point to the new one's base offset): which segment recovery starts from is not known.
WITH rows AS (
SELECT *, max(CASE WHEN row_kind = 'prediction' AND dir_state = 'live' THEN recovery_point END)
            OVER (PARTITION BY broker, topic, partition) AS live_recovery_point
FROM restart_predictions),
found AS (
SELECT kind, severity, broker, topic, partition, file, position, offset, producer_id, producer_epoch, message, details,
       broker AS gap_broker, format_string('%s-%d', topic, partition) AS gap_partition,
       -- coverage is known of live dirs only (a -future or -stray dir is a copy of its own)
       CASE WHEN coalesce(get_json_object(details, '$.dir_state'), 'live') = 'live'
            -- what lies at or after the cut (a later segment the copy lacks) changes what a restart does; a range
            -- below it (a log that starts later, or a tiered log's remote tier) does not
            -- only segments the broker's disk holds (proven): a tiered log's remote tier or what a crash lost is on
            -- no disk, and the prediction for the disk as given stands
            THEN try_element_at(filter(missing, m -> (m.proven OR m.first_offset <= live_recovery_point)
                                                     AND coalesce(m.last_offset, 9223372036854775807)
                                                         >= coalesce(offset, 0)), 1) END AS gap_range
FROM rows LEFT JOIN (SELECT broker, topic, partition, missing FROM partition_coverage)
     USING (broker, topic, partition)
WHERE row_kind = 'finding')
SELECT * FROM found
