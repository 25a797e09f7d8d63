/*
[link]
doc = """A remote segment whose copy never finished explains the gap in the remote tier where its offsets should
be, once the local segment was deleted anyway."""
cause = ["remote_segment_stuck"]
effect = ["remote_log_gap"]
rank = 7
kafka = """RemoteLogManager copies a segment (COPY_SEGMENT_STARTED, then COPY_SEGMENT_FINISHED once the remote
storage manager succeeded); only finished segments are the remote log (RemoteLogMetadataCache), so a copy that never
finished leaves its offsets in neither tier once local retention removed the segment."""
*/
SELECT c.finding_id AS cause_id, e.finding_id AS effect_id
FROM finding_rows c JOIN finding_rows e USING (cluster_id, topic, partition)
WHERE c.kind = 'remote_segment_stuck' AND e.kind = 'remote_log_gap'
  AND CAST(get_json_object(c.details, '$.start_offset') AS BIGINT)
      <= CAST(get_json_object(e.details, '$.missing_offsets[1]') AS BIGINT)
  AND CAST(get_json_object(c.details, '$.end_offset') AS BIGINT)
      >= CAST(get_json_object(e.details, '$.missing_offsets[0]') AS BIGINT)
