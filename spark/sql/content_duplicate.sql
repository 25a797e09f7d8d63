-- Reads resends (producers.resends' rows: a run of records a newer producer id re-sent); the `content_duplicate`
-- check.
SELECT 'content_duplicate' AS kind, 'warning' AS severity, broker, topic, partition, CAST(NULL AS STRING) AS file,
       CAST(NULL AS BIGINT) AS position, CAST(b_first_offset AS BIGINT) AS offset, CAST(pid_b AS BIGINT) AS producer_id,
       CAST(producer_epoch AS INT) AS producer_epoch,
       format_string('Producer %d re-sent %d records that producer %d had written (offsets %d-%d again at %d-%d, %d ms after producer %d\'s last write): duplicates the broker could not detect.', pid_b, matches, pid_a, a_first_offset, a_last_offset, b_first_offset, b_last_offset, ms_between, pid_a) AS message,
       to_json(named_struct('producer_ids', array(pid_a, pid_b), 'matches', matches, 'original_offsets', array(a_first_offset, a_last_offset), 'resent_offsets', array(b_first_offset, b_last_offset), 'ms_between', ms_between)) AS details FROM resends
