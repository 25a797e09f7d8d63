/*
[check]
family = "coverage"

[[finding]]
kind = "not_judged"
severity = "info"
meaning = "a rule that needs offsets the copy lacks stayed silent: not judged, segment missing"
fields = ["rule", "would_be", "incomplete_broker", "incomplete_partition", "missing_offsets"]
rule = '''
where a rule's verdict needs offsets the copy of some partition lacks (`replicas.complete` false: a
missing segment, or offsets a crash may have lost), the rule does not judge and says so, once per finding it
would have reported on what the copy shows: `rule` (the kind or table not judged), `would_be` (that finding's
message, or what was not judged), `incomplete_broker` and `incomplete_partition` (the copy that lacks them),
`missing_offsets` ([first, last] of the first range it lacks). `broker`, `topic`, `partition`, `file`, `position`
and `offset` are those of the finding it would have been. The rules (each in its own model file, declared `coverage`:
it returns the range its verdict needs that the copy lacks, and the runner makes the row this note): a group's latest commit when its `__consumer_offsets` partition lacks offsets after
the commit, or a copy of the committed partition lacks the offsets it is judged against (`committed_offset_*`);
the rules of the log, the transactions, the coordinator, the groups and the share groups where
the batch, marker, record or transaction that settles them may stand in offsets a copy lacks; leader epochs,
leaders and replicas beyond the metadata log's coverage (`leader_epoch_unknown` and the other checks of the control
plane); a restart's cut where the copy lacks a segment at or after it, or from the recovery point on; and this
file's own: the restart prediction of a partition whose copy lacks offsets (`restart_prediction`: it predicts for
the disk as given, and its `offsets_not_seen` names what it cannot see). [An incomplete copy](cli.md#an-incomplete-copy)
lists every rule it stands for.'''
compacted = "as the rule it stands for"
*/
-- The restart prediction of an incomplete copy (restart_prediction: offsets_not_seen): a restart of the real disk,
-- which holds the segments the copy lacks, may discard what the copy does not show; the prediction says so.
SELECT 'not_judged' AS kind, broker, topic, partition, CAST(truncate_at_file AS STRING) AS file,
       CAST(NULL AS BIGINT) AS position, CAST(offsets_not_seen[0] AS BIGINT) AS offset,
       CAST(NULL AS BIGINT) AS producer_id, CAST(NULL AS INT) AS producer_epoch,
       format_string('Not judged, segment missing: the restart prediction of %s-%d on %s is for the disk as given; the copy lacks offsets %d-%s, which a restart of the real disk would load too.',
                     topic, partition, broker, offsets_not_seen[0], coalesce(CAST(offsets_not_seen[1] AS STRING), '?'))
         AS message,
       to_json(named_struct('rule', 'restart_prediction',
                            'would_be', format_string('%s', coalesce(reason, '')),
                            'incomplete_broker', broker, 'incomplete_partition', format_string('%s-%d', topic, partition),
                            'missing_offsets', offsets_not_seen)) AS details
-- __cluster_metadata is loaded by the KRaft metadata log, not LogManager: never predicted, nothing to note
FROM restart_prediction WHERE offsets_not_seen IS NOT NULL AND topic != '__cluster_metadata'
