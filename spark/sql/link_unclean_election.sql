/*
[link]
doc = """An unclean leader election replaced the partition's log: the replicas' divergence at its epoch is the range
the old leader held that the new leader never had."""
cause = ["unclean_leader_election"]
effect = ["replica_divergence"]
rank = 1
kafka = """PartitionChangeBuilder.electLeader elects a leader outside the ISR when unclean.leader.election.enable
allows it (or an operator forces it); the new leader's log becomes the partition's, and the old leader, rejoining as
a follower, truncates to the new leader's epoch end offset (ReplicaFetcherThread, LeaderEpochFileCache.endOffsetFor):
its divergent suffix is gone."""
*/
SELECT c.finding_id AS cause_id, e.finding_id AS effect_id
FROM finding_rows c JOIN finding_rows e USING (cluster_id, topic, partition)
WHERE c.kind = 'unclean_leader_election' AND e.kind = 'replica_divergence'
