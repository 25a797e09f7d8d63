/*
[check]
applies = "kraft"

[[finding]]
kind = "unclean_leader_election"
severity = "error"
meaning = '''
a partition leader elected from outside the previous ISR and ELR (the metadata log's record of it; with the
first data offset of its leader epoch and the committed offsets it cost where the data is in the input)'''
fields = ["leader", "leader_epoch", "previous_leader", "previous_isr", "previous_elr", "metadata_offset", "elected_at", "metadata_broker", "offset", "lost_offsets"]
rule = '''
KRaft: a partition leader elected from outside the previous ISR and ELR, as the replay of the metadata log
shows it (both signatures: the PartitionChangeRecord that sets LeaderRecoveryState RECOVERING with Isr =
[leader], and, when the partition is still RECOVERING, a new leader outside the ISR with the tag absent). Once
per election per cluster, on the reference copy's record (`broker` = the broker whose `__cluster_metadata`
copy was read, `file`/`position` the record's batch): `leader`, `leader_epoch`, `previous_leader`,
`previous_isr`, `previous_elr`, `metadata_offset`, `elected_at` (the record's timestamp), `metadata_broker`;
where the partition's data is in the input `offset` (the first data offset of that leader epoch:
leader-epoch-checkpoint, else the first batch) and `lost_offsets` ([first, last] committed offsets a
the replicas' divergence at that epoch shows lost)'''
compacted = '''
unchanged: the log cleaner does not clean `__cluster_metadata` (KRaft snapshots replace its prefix), and a
compacted data log keeps its batches' partition leader epochs'''
event = "node {leader} elected leader of {topic}-{partition} from outside the ISR [{previous_isr}] (unclean election, leader epoch {leader_epoch})"
at = "elected_at"
clock = "controller's clock"

[[finding.action]]
phase = "save"
command = "# before any of the ISR before this election (nodes {previous_isr}) restarts or fetches {topic}-{partition}, copy its log dir aside"
why = "it holds the offsets the election lost ({offset} and later), and as a follower it truncates them to the new leader's log"
destructive = false
*/
-- The `unclean_leader_election` check: reads `partition_history`, `epoch_starts` (control_plane.epoch_starts) and
-- `election_losses` (divergence_facts: cluster_id, topic, partition, a_epoch, b_epoch, lost_offsets, lost_on).
-- One finding per unclean election, on the reference copy's record: offset = the first data offset of the new leader
-- epoch and lost_offsets = the committed offsets a replica divergence at that epoch shows lost (both null where the
-- data is not in the input).
WITH
    unclean AS (
        SELECT h.*, s.epoch_start_offset
        FROM partition_history h
        LEFT JOIN epoch_starts s ON h.cluster_id = s.cluster_id AND h.topic = s.topic AND h.partition = s.partition
                                AND h.leader_epoch = s.leader_epoch
        WHERE h.election = 'unclean'),
    lost AS (
        SELECT u.cluster_id, u.topic, u.partition, u.topic_id, u.leader_epoch, first(d.lost_offsets) AS lost_offsets,
               first(d.lost_on) AS lost_on
        FROM unclean u
        JOIN election_losses d ON u.cluster_id = d.cluster_id AND u.topic = d.topic AND u.partition = d.partition
        WHERE least(d.a_epoch, d.b_epoch) < u.leader_epoch AND greatest(d.a_epoch, d.b_epoch) >= u.leader_epoch
          AND d.lost_offsets IS NOT NULL
        GROUP BY u.cluster_id, u.topic, u.partition, u.topic_id, u.leader_epoch),
    judged AS (
        SELECT u.*, l.lost_offsets, l.lost_on
        FROM unclean u
        LEFT JOIN lost l ON u.cluster_id = l.cluster_id AND u.topic = l.topic AND u.partition = l.partition
                        AND u.topic_id = l.topic_id AND u.leader_epoch = l.leader_epoch)
SELECT 'unclean_leader_election' AS kind, metadata_broker AS broker, topic, partition,
       CAST(file AS STRING) AS file, CAST(position AS BIGINT) AS position, CAST(epoch_start_offset AS BIGINT) AS offset,
       CAST(NULL AS BIGINT) AS producer_id, CAST(NULL AS INT) AS producer_epoch,
       concat(format_string('Broker %d was elected leader of %s-%d (leader epoch %d, metadata offset %d) from outside the ISR [%s] and ELR [%s]; the previous leader was %d.', leader, topic, partition, leader_epoch, metadata_offset, coalesce(array_join(previous_isr, ','), '?'), coalesce(array_join(previous_elr, ','), '?'), previous_leader),
              CASE WHEN lost_offsets IS NOT NULL THEN format_string(' It cost committed offsets %d-%d on broker %s.', lost_offsets[0], lost_offsets[1], lost_on)
                   WHEN epoch_start_offset IS NOT NULL THEN format_string(' Leader epoch %d starts at offset %d; no replica in the input shows offsets lost to it.', leader_epoch, epoch_start_offset)
                   ELSE ' The partition\'s data is not in the input.' END) AS message,
       to_json(named_struct('leader', leader, 'leader_epoch', leader_epoch, 'previous_leader', previous_leader, 'previous_isr', previous_isr, 'previous_elr', previous_elr, 'metadata_offset', metadata_offset, 'elected_at', timestamp, 'metadata_broker', metadata_broker, 'offset', epoch_start_offset, 'lost_offsets', lost_offsets)) AS details
FROM judged
