/*
[check]
coverage = true
applies = "kraft"

[[finding]]
kind = "stray_partition"
severity = "warning"
meaning = '''
a partition dir a broker holds but should not (deleted or re-created topic, not a replica, or renamed -stray
by Kafka): it may hold the only copy of its data'''
fields = ["reason", "topic_id", "metadata_topic_id", "replicas"]
records = ""
exported = true
rule = '''
KRaft: a partition dir a broker of a cluster whose metadata log is in the input holds but should not, with
`reason`: `marked_stray` (Kafka 3.7+ renamed it `<topic>-<partition>.<uuid>-stray`), `topic_deleted` (its
`partition.metadata` topic id, or without one its topic name, is no live topic), `topic_recreated` (the name
is live under another id), `not_a_replica` (the broker's `node.id` is not in the partition's replicas);
`topic_id` (of the dir), `metadata_topic_id` (the live topic's), `replicas`. `file` is the dir. The dir may
hold the only copy of a deleted topic's data: the message says so'''
compacted = '''
unchanged: the log cleaner does not clean `__cluster_metadata` (KRaft snapshots replace its prefix), and a
compacted data log keeps its batches' partition leader epochs'''
reports = ["export"]
event = "{topic}-{partition} on {broker} is a stray replica ({reason})"

[[finding.action]]
phase = "save"
command = "kforensics export --from-finding <OUT>:stray_partition --topic {topic} --partition {partition} --out stray-{topic}-{partition}-{broker}.jsonl"
why = "the stray dir may hold the only remaining copy of its records, and the broker deletes it"
destructive = false
*/
-- The `stray_partition` check: reads `cluster_dirs` (partition dirs with cluster_id, node_id and their own
-- partition.metadata topic_id), `partition_state`, `metadata_topics` (control_plane.topics_table) and
-- `reference_copies`. The dirs of clusters whose metadata log is in the input that the broker should not hold:
-- `marked_stray` (Kafka renamed it already), `topic_deleted` (its topic id, or without one its name, is no live
-- topic), `topic_recreated` (the name is live under another id), `not_a_replica` (the broker is not a replica).
-- `not_judged` (but a dir Kafka itself marked stray) where the copy of the metadata log lacks records after what its
-- replay saw (metadata_coverage): the topic may be created, or the broker made a replica, there.
WITH
    judged AS (
        SELECT /*+ BROADCAST(r) */ d.*, l.metadata_topic_id, s.replicas, i.id_live,
               CASE WHEN d.dir_state = 'stray' THEN 'marked_stray'
                    WHEN l.metadata_topic_id IS NULL THEN 'topic_deleted'
                    WHEN d.topic_id IS NOT NULL AND d.topic_id != l.metadata_topic_id
                        THEN CASE WHEN i.id_live IS NULL THEN 'topic_recreated' ELSE 'topic_deleted' END
                    WHEN d.node_id IS NOT NULL AND NOT coalesce(array_contains(s.replicas, d.node_id), false)
                        THEN 'not_a_replica' END AS reason
        FROM cluster_dirs d
        JOIN reference_copies r ON d.cluster_id = r.cluster_id
        LEFT JOIN (SELECT cluster_id, topic, topic_id AS metadata_topic_id FROM topics
                   WHERE deleted_offset IS NULL) l ON d.cluster_id = l.cluster_id AND d.topic = l.topic
        LEFT JOIN partition_state s
            ON d.cluster_id = s.cluster_id AND l.metadata_topic_id = s.topic_id AND d.partition = s.partition
        LEFT JOIN (SELECT cluster_id, topic_id AS tid, true AS id_live FROM topics
                   WHERE deleted_offset IS NULL) i ON d.cluster_id = i.cluster_id AND d.topic_id = i.tid
        WHERE d.topic != '__cluster_metadata' AND d.dir_state != 'future'),
    found AS (
SELECT 'stray_partition' AS kind, broker, topic, partition, CAST(path AS STRING) AS file,
       CAST(NULL AS BIGINT) AS position, CAST(NULL AS BIGINT) AS offset, CAST(NULL AS BIGINT) AS producer_id,
       CAST(NULL AS INT) AS producer_epoch,
       concat(CASE WHEN reason = 'marked_stray' THEN format_string('Kafka renamed %s-%d on %s stray (no longer this broker\'s); it is deleted once the broker is done with it.', topic, partition, broker)
                   WHEN reason = 'topic_deleted' THEN format_string('%s-%d on %s belongs to topic id %s, which the metadata log no longer holds: the topic was deleted.', topic, partition, broker, coalesce(topic_id, '(no partition.metadata)'))
                   WHEN reason = 'topic_recreated' THEN format_string('%s-%d on %s belongs to topic id %s, but topic %s is now %s: it was deleted and created again.', topic, partition, broker, topic_id, topic, metadata_topic_id)
                   ELSE format_string('%s-%d on %s: broker %d is not one of its replicas [%s].', topic, partition, broker, node_id, coalesce(array_join(replicas, ','), '?')) END,
              ' The dir may hold the only remaining copy of its data: copy it before the broker deletes it.') AS message,
       to_json(named_struct('reason', reason, 'topic_id', topic_id, 'metadata_topic_id', metadata_topic_id, 'replicas', replicas)) AS details,
       mc.mc_broker AS gap_broker, '__cluster_metadata-0' AS gap_partition,
       CASE WHEN reason != 'marked_stray' THEN mc.gap_range END AS gap_range
FROM judged LEFT JOIN (SELECT cluster_id, metadata_broker AS mc_broker, gap_range FROM metadata_coverage) mc
     USING (cluster_id)
WHERE reason IS NOT NULL)
SELECT * FROM found
