/*
[link]
doc = """A transaction the coordinator completed whose marker a partition lacks stays open there: it hangs, and holds
the partition's last stable offset."""
cause = ["marker_missing"]
effect = ["hanging_transaction"]
rank = 3
kafka = """The coordinator completes a transaction (CompleteCommit/CompleteAbort) once TransactionMarkerChannelManager
has written its marker to every partition; a partition whose marker is missing keeps the producer's transaction
ongoing in ProducerStateManager, and its firstUnstableOffset (the last stable offset) stays at the transaction's
first offset."""
*/
SELECT c.finding_id AS cause_id, e.finding_id AS effect_id
FROM finding_rows c JOIN finding_rows e USING (cluster_id, topic, partition, producer_id)
WHERE c.kind = 'marker_missing' AND e.kind = 'hanging_transaction'
