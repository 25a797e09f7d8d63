/*
[link]
doc = """Damage in a segment (a bad CRC, a torn or zero-filled tail, an unframeable batch) explains what follows from
it on the same broker's partition: a restart's recovery that would truncate there or keep serving it, index entries
that point at the bytes that never reached the disk, records that do not decode in the damaged batch."""
cause = ["corrupt_crc", "truncated_tail", "zero_filled_tail", "invalid_batch_length", "unknown_magic"]
effect = ["restart_would_truncate", "restart_trims_tail", "damage_below_recovery_point", "index_bad_entry",
          "timeindex_bad_entry", "decompression_failed", "invalid_record", "record_count_mismatch"]
rank = 6
kafka = """LogSegment.recover stops at the first batch that fails its CRC or cannot be framed and truncates the
segment there (LogLoader recovers the segments from the recovery point, or every one without a clean shutdown);
OffsetIndex and TimeIndex entries are written as batches are appended, before the page cache reaches the disk, so a
crash leaves entries for bytes that are not there."""
*/
-- the damage's own restart finding names its kind; an index names its segment by the same base offset
SELECT c.finding_id AS cause_id, e.finding_id AS effect_id
FROM finding_rows c JOIN finding_rows e USING (broker, topic, partition)
WHERE c.kind IN ('corrupt_crc', 'truncated_tail', 'zero_filled_tail', 'invalid_batch_length', 'unknown_magic')
  AND ((e.kind IN ('restart_would_truncate', 'restart_trims_tail', 'damage_below_recovery_point')
        AND get_json_object(e.details, '$.damage_kind') = c.kind
        AND (c.offset IS NULL OR e.offset IS NULL OR e.offset = c.offset
             OR CAST(get_json_object(e.details, '$.truncate_at_offset') AS BIGINT) = c.offset))
       OR (e.kind IN ('index_bad_entry', 'timeindex_bad_entry')
           AND regexp_extract(e.file, '(\\d{20})\\.[a-z]+$', 1) = regexp_extract(c.file, '(\\d{20})\\.[a-z]+$', 1)
           AND c.kind <> 'corrupt_crc')
       OR (e.kind IN ('decompression_failed', 'invalid_record', 'record_count_mismatch')
           AND e.file = c.file AND e.position = c.position))
