/*
[link]
doc = """A producer the coordinator fenced (a zombie) that wrote on: its writes after the fence, the epoch going
backwards in the log, and the duplicates they made."""
cause = ["epoch_fenced_write"]
effect = ["zombie_epoch", "duplicate_sequence", "content_duplicate"]
rank = 5
kafka = """InitProducerId (or a Transactions V2 end of transaction) bumps the producer epoch
(TransactionMetadata.prepareFenceProducerEpoch, prepareIncrementProducerEpoch); a producer still using the old epoch
is a zombie, and a write it gets through (a partition whose leader has not seen the new epoch yet) is out of order
with the new epoch's (ProducerStateManager: InvalidProducerEpochException once it has)."""
*/
SELECT c.finding_id AS cause_id, e.finding_id AS effect_id
FROM finding_rows c JOIN finding_rows e USING (cluster_id, topic, partition, producer_id)
WHERE c.kind = 'epoch_fenced_write' AND e.kind IN ('zombie_epoch', 'duplicate_sequence', 'content_duplicate')
