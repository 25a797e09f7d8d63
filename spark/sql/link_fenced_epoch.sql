/*
[link]
doc = """A producer the coordinator fenced (a zombie) that wrote on: its writes after the fence, the epoch going
backwards in the log, the duplicates they made, and the transaction a write after the fence left open (it hangs)."""
cause = ["epoch_fenced_write"]
effect = ["zombie_epoch", "duplicate_sequence", "content_duplicate", "hanging_transaction"]
rank = 5
kafka = """InitProducerId (or a Transactions V2 end of transaction) bumps the producer epoch
(TransactionMetadata.prepareFenceProducerEpoch, prepareIncrementProducerEpoch); a producer still using the old epoch
is a zombie, and a write it gets through (a partition whose leader has not seen the new epoch yet) is out of order
with the new epoch's (ProducerStateManager: InvalidProducerEpochException once it has). A transactional write after
the fence's marker opens a transaction no marker follows: the coordinator already ended that epoch's transaction
(TransactionMarkerChannelManager writes one marker per completion), so it holds the last stable offset."""
*/
SELECT c.finding_id AS cause_id, e.finding_id AS effect_id
FROM finding_rows c JOIN finding_rows e USING (cluster_id, topic, partition, producer_id)
WHERE c.kind = 'epoch_fenced_write' AND (e.kind IN ('zombie_epoch', 'duplicate_sequence', 'content_duplicate')
                                         OR (e.kind = 'hanging_transaction' AND e.offset = c.offset))
