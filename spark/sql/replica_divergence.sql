/*
[check]
applies = "replicas_possible"

[[finding]]
kind = "replica_divergence"
severity = "error"
meaning = "two replicas of a topic-partition hold different batches at the same offset"
severity_rule = "warning when no committed offset (below the high watermark) was lost"
fields = ["offset", "common_prefix_end_offset", "brokers", "lost_offsets", "lost_on", "winner", "replicas", "elections"]
records = "lost_offsets"
exported = true
rule = '''
two replicas of a topic-partition (same `cluster.id`) hold different batches at the same offset (compared by
base/last offset, CRC, producer id/epoch, base sequence and leader epoch, headers only, from the later log
start or cleaner checkpoint up to the shorter log end). On the replica whose history was replaced (lower
leader epoch at that offset): `offset`, `common_prefix_end_offset`, `brokers`, `lost_offsets` ([first, last]:
below that replica's high watermark, i.e. committed and lost in an unclean election; null if only uncommitted
data differed, or when that replica's high watermark is not in the input), `lost_on`, `winner`, `replicas`
(per broker: `leader_epoch_at_offset`, `log_end_offset`, `high_watermark`, `leader_epoch_checkpoint`),
`elections` (where the cluster's KRaft metadata log is in the input: the leader changes of the epochs
involved, above the lower of the two replicas' epochs at the divergence up to the higher, each `leader_epoch`,
`leader`, `election`, `elected_at`: the election that caused it)'''
compacted = '''
compared from the later of the replicas' log starts and cleaner checkpoints: each cleans on its own schedule'''
reports = ["export", "divergence"]
*/
-- Reads divergence_facts and elections (control_plane.elections_of; no rows without a metadata log in the input);
-- the `replica_divergence` check: one finding per pair of diverging replicas.
WITH involved AS (
  SELECT cluster_id, topic, partition, a_broker, b_broker,
         array_sort(collect_list(named_struct('leader_epoch', leader_epoch, 'leader', leader, 'election', election,
                                              'elected_at', elected_at))) AS elections
  FROM (SELECT cluster_id, topic, partition, a_broker, b_broker, a_epoch, b_epoch FROM divergence_facts)
       JOIN elections USING (cluster_id, topic, partition)
  WHERE leader_epoch > least(a_epoch, b_epoch) AND leader_epoch <= greatest(a_epoch, b_epoch)
  GROUP BY cluster_id, topic, partition, a_broker, b_broker),
replaced AS (
  SELECT * FROM divergence_facts LEFT JOIN involved USING (cluster_id, topic, partition, a_broker, b_broker))
SELECT 'replica_divergence' AS kind, CASE WHEN lost_offsets IS NOT NULL THEN 'error' ELSE 'warning' END AS severity, broker, topic, partition, CAST(CASE WHEN b_epoch < a_epoch THEN b_file ELSE a_file END AS STRING) AS file,
       CAST(CASE WHEN b_epoch < a_epoch THEN b_position ELSE a_position END AS BIGINT) AS position, CAST(`offset` AS BIGINT) AS offset, CAST(NULL AS BIGINT) AS producer_id,
       CAST(NULL AS INT) AS producer_epoch,
       concat(format_string('%s and %s hold different batches of %s-%d from offset %d (common prefix ends at %d).', a_broker, b_broker, topic, partition, `offset`, common_prefix_end_offset), CASE WHEN lost_offsets IS NOT NULL THEN format_string(' %s\'s leader epoch %d history replaced %s\'s epoch %d: offsets %d-%d were committed on %s (high watermark %d) and are lost.', winner, greatest(a_epoch, b_epoch), broker, least(a_epoch, b_epoch), `offset`, lost_last, broker, loser_hw) WHEN winner IS NOT NULL AND loser_hw IS NULL THEN format_string(' %s\'s leader epoch %d history replaced %s\'s from there; whether those offsets were committed is unknown (no high watermark for %s in the input).', winner, greatest(a_epoch, b_epoch), broker, broker) WHEN winner IS NOT NULL THEN format_string(' %s\'s leader epoch %d history replaced %s\'s uncommitted tail (high watermark %s).', winner, greatest(a_epoch, b_epoch), broker, coalesce(CAST(loser_hw AS STRING), 'unknown')) ELSE ' Both carry the same leader epoch there: not an election, the bytes differ.' END) AS message,
       to_json(named_struct('offset', `offset`, 'common_prefix_end_offset', common_prefix_end_offset, 'brokers', array(a_broker, b_broker), 'lost_offsets', lost_offsets, 'lost_on', CASE WHEN lost_offsets IS NOT NULL THEN broker END, 'winner', winner, 'replicas', array(named_struct('broker', a_broker, 'leader_epoch_at_offset', a_epoch, 'log_end_offset', a_log_end_offset, 'high_watermark', a_high_watermark, 'leader_epoch_checkpoint', a_leader_epoch_checkpoint), named_struct('broker', b_broker, 'leader_epoch_at_offset', b_epoch, 'log_end_offset', b_log_end_offset, 'high_watermark', b_high_watermark, 'leader_epoch_checkpoint', b_leader_epoch_checkpoint)), 'elections', elections)) AS details
FROM replaced
