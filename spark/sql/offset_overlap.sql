/*
[check]
family = "log"

[[finding]]
kind = "offset_overlap"
severity = "error"
meaning = "offsets going backwards from one batch to the next in file order"
fields = ["previous_last_offset"]
rule = "offsets going backwards from one batch to the next in file order: `previous_last_offset`"
compacted = "unchanged: offsets only go up in a cleaned segment (holes, never back)"
event = "offsets of {topic}-{partition} on {broker} go back at offset {offset} (the previous batch ended at {previous_last_offset})"
*/
-- Reads batches; the `offset_overlap` check: a batch whose base offset is not beyond the previous batch's last
-- offset, in file order across segments.
SELECT 'offset_overlap' AS kind, broker, topic, partition, CAST(file AS STRING) AS file,
       CAST(position AS BIGINT) AS position, CAST(base_offset AS BIGINT) AS offset, CAST(producer_id AS BIGINT) AS producer_id,
       CAST(producer_epoch AS INT) AS producer_epoch,
       format_string('Offsets go backwards: the batch at offset %d follows one ending at offset %d.', base_offset, prev_last_offset) AS message,
       to_json(named_struct('previous_last_offset', prev_last_offset)) AS details
FROM (SELECT *, lag(last_offset) OVER (PARTITION BY broker, topic, partition ORDER BY segment_base_offset, position)
                AS prev_last_offset
      FROM log_batches WHERE crc_valid)
WHERE base_offset <= prev_last_offset
