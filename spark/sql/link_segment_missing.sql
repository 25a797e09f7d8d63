/*
[link]
doc = """A segment the copy lacks leaves every rule that needs its offsets not judged: each `not_judged` note that
names the range a `segment_missing` finding reports (the same broker, partition and first missing offset) belongs with
it, wherever the note's own finding would have been (a group's commits, a transaction's marker, a replica)."""
cause = ["segment_missing"]
effect = ["not_judged"]
rank = 9
kafka = """Kafka deletes a segment's files together (LogSegment.deleteIfExists) and never leaves a hole in a log but
the cleaner's; a range a copy proves held and lacks was on the broker's disk, so what the rules could not judge there
is a gap of the copy, not of the log (missing_ranges.sql)."""
*/
-- a note names the copy that lacks offsets (incomplete_broker, incomplete_partition) and the first range it lacks
SELECT c.finding_id AS cause_id, e.finding_id AS effect_id
FROM finding_rows c JOIN finding_rows e
  ON get_json_object(e.details, '$.incomplete_broker') = c.broker
 AND get_json_object(e.details, '$.incomplete_partition') = format_string('%s-%d', c.topic, c.partition)
 AND CAST(get_json_object(e.details, '$.missing_offsets[0]') AS BIGINT) = c.offset
WHERE c.kind = 'segment_missing' AND e.kind = 'not_judged'
