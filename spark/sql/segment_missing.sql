/*
[check]
family = "coverage"

[[finding]]
kind = "segment_missing"
severity = "warning"
meaning = "the input proves a segment the copy lacks: the scan covers that partition only in part"
fields = ["absent_segment", "missing_offsets", "cause", "evidence"]
rule = '''
offsets a partition held on disk that its copy lacks: an `.index`, `.timeindex` or `.txnindex` without its `.log`
(`cause` `segment_files_without_log`; Kafka deletes a segment's files together and drops an index without its log
when it starts); a gap between one segment's last batch and the next segment's base offset that neither the log
cleaner (a compacted partition) nor damage at the earlier segment's tail explains (`segment_chain_gap`); a copy
whose last segment ends cleanly below what the partition reached: its high watermark, recovery point, a producer
snapshot, a leader-epoch entry, its log start or a KRaft metadata snapshot (`beyond_log_end`); or a leader-epoch
entry below the first segment of a log that is not tiered (`below_first_segment`). Reported where those offsets
were on disk for good: companion files without their log, a clean-shutdown marker, or offsets below the recovery
point (or a metadata snapshot); offsets above the recovery point of a broker that crashed may have been lost with
it, so they make the partition incomplete (`replicas.complete`) without this warning. A log starting late is
retention's (or tiered storage's), never this. `absent_segment` (the base offset of the absent segment, where its
files name it), `missing_offsets` ([first, last]; last null where nothing says how far), `cause`, `evidence` (what
proves it, in words); `offset` is the first missing offset, `file` the companion file or the segment before the
gap. Complete the copy: see [An incomplete copy](cli.md#an-incomplete-copy)'''
compacted = '''
a gap between segments of a compacted partition (a cleaner-offset-checkpoint entry, or an internal topic Kafka
always compacts) is the cleaner's: never missing; files without their log and a log ending below its checkpoints
are judged the same'''
*/
-- Reads missing_ranges (what each partition's copy lacks); one finding per range the input proves the partition
-- held on disk (`proven`): the copy is incomplete there, and the rules that need those offsets are not judged.
SELECT 'segment_missing' AS kind, broker, topic, partition, CAST(file AS STRING) AS file,
       CAST(NULL AS BIGINT) AS position, CAST(first_offset AS BIGINT) AS offset, CAST(NULL AS BIGINT) AS producer_id,
       CAST(NULL AS INT) AS producer_epoch,
       format_string('The copy of %s-%d on %s lacks offsets %d-%s (%s), which the partition held: %s. The scan judges nothing that needs them.',
                     topic, partition, broker, first_offset, coalesce(CAST(last_offset AS STRING), '?'),
                     CASE WHEN absent_segment IS NOT NULL THEN format_string('segment %020d', absent_segment)
                          WHEN cause = 'segment_chain_gap' THEN 'a gap between its segments'
                          WHEN cause = 'below_first_segment' THEN 'below its first segment'
                          ELSE 'past its last segment' END,
                     array_join(evidence, '; ')) AS message,
       to_json(named_struct('absent_segment', absent_segment, 'missing_offsets', array(first_offset, last_offset),
                            'cause', cause, 'evidence', evidence)) AS details
FROM missing_ranges WHERE proven
