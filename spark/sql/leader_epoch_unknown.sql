/*
[check]
coverage = true
applies = "kraft"

[[finding]]
kind = "leader_epoch_unknown"
severity = "error"
meaning = '''
a data batch or leader-epoch-checkpoint entry carries a leader epoch the metadata log never gave its partition
(data or metadata from another cluster)'''
fields = ["leader_epoch", "source", "first_known_epoch", "last_known_epoch", "metadata_broker"]
rule = '''
KRaft: a data batch or `leader-epoch-checkpoint` entry of a partition (same topic id) carrying a leader epoch
the metadata log never gave it, judged where the metadata covers that time: below the partition's first epoch
only when its PartitionRecord is in the log (not the base snapshot), above its last epoch only on the broker
whose metadata copy is the reference (a broker's data is never ahead of its own metadata). Once per broker,
partition and epoch, at its first batch or entry: `leader_epoch`, `source` (`batch`,
`leader-epoch-checkpoint`), `first_known_epoch`, `last_known_epoch`, `metadata_broker`'''
compacted = '''
unchanged: the log cleaner does not clean `__cluster_metadata` (KRaft snapshots replace its prefix), and a
compacted data log keeps its batches' partition leader epochs'''
*/
-- The `leader_epoch_unknown` check: reads `partition_history`, `data_leader_epochs`
-- (control_plane.data_leader_epochs) and `reference_copies`. A data leader epoch the metadata never gave the
-- partition, judged where the metadata covers that time: above the partition's first known epoch when that came
-- from the base snapshot (from its creation on otherwise) and, above the last known epoch, only on a broker whose own
-- metadata copy is the reference (a broker's data cannot be ahead of its own metadata log). One finding per broker,
-- partition and epoch, at its first occurrence; a dir of another generation of the name is a stray (judged there).
-- Where the copy of the metadata log lacks records after what its replay saw, the epochs given there are unknown:
-- `not_judged` (metadata_coverage).
WITH
    known AS (
        SELECT cluster_id, topic, partition, topic_id AS metadata_topic_id, collect_set(leader_epoch) AS known_epochs,
               min(leader_epoch) AS first_epoch, max(leader_epoch) AS last_epoch,
               max(CASE WHEN endswith(file, '.checkpoint') THEN 1 ELSE 0 END) AS from_snapshot
        FROM partition_history WHERE leader_epoch IS NOT NULL
        GROUP BY cluster_id, topic, partition, topic_id),
    judged AS (
        SELECT /*+ BROADCAST(r) */ e.*, k.metadata_topic_id, k.known_epochs, k.first_epoch, k.last_epoch,
               k.from_snapshot, r.metadata_broker,
               row_number() OVER (PARTITION BY e.broker, e.cluster_id, e.topic, e.partition, e.leader_epoch
                                  ORDER BY e.offset, e.file) AS rn
        FROM data_leader_epochs e
        JOIN known k ON e.cluster_id = k.cluster_id AND e.topic = k.topic AND e.partition = k.partition
        JOIN reference_copies r ON e.cluster_id = r.cluster_id
        WHERE e.topic != '__cluster_metadata' AND e.leader_epoch >= 0
          AND (e.topic_id IS NULL OR e.topic_id = k.metadata_topic_id)
          AND ((e.leader_epoch < k.first_epoch AND k.from_snapshot = 0)
               OR (e.leader_epoch > k.last_epoch AND e.broker = r.metadata_broker)
               OR (NOT e.leader_epoch < k.first_epoch AND NOT e.leader_epoch > k.last_epoch
                   AND NOT array_contains(k.known_epochs, e.leader_epoch)))),
    found AS (
SELECT 'leader_epoch_unknown' AS kind, broker, topic, partition, CAST(file AS STRING) AS file,
       CAST(position AS BIGINT) AS position, CAST(offset AS BIGINT) AS offset, CAST(NULL AS BIGINT) AS producer_id,
       CAST(NULL AS INT) AS producer_epoch,
       format_string('%s of %s-%d on %s carries leader epoch %d at offset %d, which the metadata log (%s\'s copy) never gave this partition (its epochs: %d-%d): data from another cluster or another topic generation.', source, topic, partition, broker, leader_epoch, offset, metadata_broker, first_epoch, last_epoch) AS message,
       to_json(named_struct('leader_epoch', leader_epoch, 'source', source, 'first_known_epoch', first_epoch, 'last_known_epoch', last_epoch, 'metadata_broker', metadata_broker)) AS details,
       -- the leader epochs given after what the metadata log's replay saw are unknown (metadata_coverage)
       metadata_broker AS gap_broker, '__cluster_metadata-0' AS gap_partition, mc.gap_range
FROM judged LEFT JOIN (SELECT cluster_id, gap_range FROM metadata_coverage) mc USING (cluster_id)
WHERE rn = 1)
SELECT * FROM found
