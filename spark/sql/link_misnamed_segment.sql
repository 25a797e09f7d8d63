/*
[link]
doc = """A segment whose name says a higher offset than its first batch overlaps the segment before it: the overlap
is the misnamed segment's."""
cause = ["segment_name_mismatch"]
effect = ["offset_overlap"]
rank = 8
kafka = """A segment file is named for the base offset of its first batch (LogSegment, LogFileUtils.logFile); the
log loader sorts segments by their names, so a batch below its segment's name sits where the previous segment's
offsets are (LogLoader: InvalidOffsetException when the index is rebuilt)."""
*/
SELECT c.finding_id AS cause_id, e.finding_id AS effect_id
FROM finding_rows c JOIN finding_rows e USING (broker, topic, partition, offset)
WHERE c.kind = 'segment_name_mismatch' AND e.kind = 'offset_overlap'
