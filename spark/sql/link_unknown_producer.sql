/*
[link]
doc = """A transaction no coordinator knows can never end: it hangs, and its offset commits stay pending."""
cause = ["unknown_producer"]
effect = ["hanging_transaction", "offset_commit_pending"]
rank = 3
kafka = """Only the transaction coordinator of the producer's transactional id writes its markers
(TransactionMarkerChannelManager); a producer id no __transaction_state record names has no coordinator that will
abort it on timeout (TransactionStateManager.timedOutTransactions), so ProducerStateManager keeps it ongoing."""
*/
SELECT c.finding_id AS cause_id, e.finding_id AS effect_id
FROM finding_rows c JOIN finding_rows e USING (cluster_id, producer_id)
WHERE c.kind = 'unknown_producer' AND e.kind IN ('hanging_transaction', 'offset_commit_pending')
  AND (e.kind = 'offset_commit_pending' OR (c.broker = e.broker AND c.topic = e.topic AND c.partition = e.partition))
