/*
[check]
family = "log"

[[finding]]
kind = "segment_name_mismatch"
severity = "error"
meaning = "a segment named for an offset above its first batch, or overlapping the next segment"
fields = ["name_offset", "first_batch_base_offset", "last_offset", "next_segment_base_offset"]
rule = '''
a segment named for an offset above its first batch, or overlapping the next segment: `name_offset`,
`first_batch_base_offset`, `last_offset`, `next_segment_base_offset`'''
compacted = '''
a merged segment is named for its first segment's base offset, at or below its first batch: legal'''
event = "segment {file} of {topic}-{partition} on {broker} is named {name_offset} but starts at offset {first_batch_base_offset}"
*/
-- Reads segments; the `segment_name_mismatch` check: a segment named after an offset above its first batch, or
-- overlapping the next segment.
SELECT 'segment_name_mismatch' AS kind, broker, topic, partition, CAST(file AS STRING) AS file,
       CAST(NULL AS BIGINT) AS position, CAST(first_batch_base_offset AS BIGINT) AS offset, CAST(NULL AS BIGINT) AS producer_id,
       CAST(NULL AS INT) AS producer_epoch,
       format_string('Segment %s is named for offset %d but holds offsets %d-%d (next segment starts at %s).', file, base_offset, first_batch_base_offset, last_offset, coalesce(CAST(next_base_offset AS STRING), 'none')) AS message,
       to_json(named_struct('name_offset', base_offset, 'first_batch_base_offset', first_batch_base_offset, 'last_offset', last_offset, 'next_segment_base_offset', next_base_offset)) AS details
FROM (SELECT *, lead(base_offset) OVER (PARTITION BY broker, topic, partition ORDER BY base_offset)
                AS next_base_offset
      FROM segments)
WHERE base_offset > first_batch_base_offset OR last_offset >= next_base_offset
