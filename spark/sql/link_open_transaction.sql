/*
[link]
doc = """A transaction left open holds its partition's last stable offset: the log cleaner stops there, offset
commits made in it stay pending, and the same open transaction seen on another replica of the partition is the same
fact."""
cause = ["hanging_transaction"]
effect = ["cleaner_blocked", "offset_commit_pending", "hanging_transaction"]
rank = 4
kafka = """The last stable offset is the first offset of the earliest open transaction (ProducerStateManager
.firstUnstableOffset); LogCleanerManager never cleans past it (KIP-664), and OffsetMetadataManager holds a
transactional offset commit pending until its transaction's marker (UNSTABLE_OFFSET_COMMIT for OffsetFetch)."""
*/
-- another replica's view of the same transaction follows from the lowest-numbered one (a cycle the walk breaks)
SELECT c.finding_id AS cause_id, e.finding_id AS effect_id
FROM finding_rows c JOIN finding_rows e USING (cluster_id, producer_id)
WHERE c.kind = 'hanging_transaction'
  AND ((e.kind = 'cleaner_blocked' AND c.broker = e.broker AND c.topic = e.topic AND c.partition = e.partition)
       OR e.kind = 'offset_commit_pending'
       OR (e.kind = 'hanging_transaction' AND c.topic = e.topic AND c.partition = e.partition
           AND c.offset = e.offset AND c.broker < e.broker))
