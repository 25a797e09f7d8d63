/*
[link]
doc = """A partition that lost a range of offsets (an unclean election, or replicas that diverged) explains what
followed on it: the new leader's sequence gaps of producers that were writing across the lost range, their re-sends
into the new leader, committed offsets and share-group state above the new log end, a transaction whose marker the
lost range held (the marker missing, the transaction left hanging), and the old leader's restart that would discard
the range."""
cause = ["replica_divergence", "unclean_leader_election"]
effect = ["sequence_gap", "content_duplicate", "committed_offset_beyond_log_end", "share_state_beyond_log_end",
          "marker_missing", "hanging_transaction", "restart_would_truncate", "leader_epoch_mismatch",
          "duplicate_sequence"]
rank = 2
kafka = """After an unclean election the partition serves the new leader's log (PartitionChangeBuilder); idempotent
producers that wrote into the lost range carry on with sequences the new leader never saw (ProducerStateManager
reports the gap), or re-send what they had not been acknowledged for; the group coordinator keeps committed offsets
the new log end has not reached (OffsetMetadataManager never checks them against the log); a transaction's marker
written into the lost range is gone with it, so the transaction stays open on the new leader
(TransactionMarkerChannelManager does not write it again once the coordinator completed it: KAFKA-20716)."""
*/
-- the effects on the same topic-partition of the same cluster, on any of its replicas; a divergence explains only
-- what lies at or after the offset where the replicas diverged (or is a group's or transaction's view of it)
SELECT c.finding_id AS cause_id, e.finding_id AS effect_id
FROM finding_rows c JOIN finding_rows e USING (cluster_id, topic, partition)
WHERE c.kind IN ('replica_divergence', 'unclean_leader_election')
  AND e.kind IN ('sequence_gap', 'content_duplicate', 'committed_offset_beyond_log_end', 'share_state_beyond_log_end',
                 'marker_missing', 'hanging_transaction', 'restart_would_truncate', 'leader_epoch_mismatch',
                 'duplicate_sequence')
  AND (e.kind IN ('committed_offset_beyond_log_end', 'share_state_beyond_log_end', 'marker_missing',
                  'hanging_transaction', 'restart_would_truncate')
       OR e.offset >= c.offset)
