/*
[check]
coverage = true
applies = "kraft"

[[finding]]
kind = "offline_partition"
severity = "error"
meaning = '''
a partition without a leader at the end of the metadata log while some broker was up (registered, unfenced,
not shutting down)'''
fields = ["since_offset", "since", "last_leader", "isr", "elr", "replicas", "live_brokers"]
rule = '''
KRaft: a live topic's partition with leader -1 at the end of the metadata log while some broker is registered,
unfenced and not in controlled shutdown there (a log that ends with every broker fenced or shutting down is a
stopped cluster: no finding): `since_offset`, `since` (metadata offset and time it lost its leader),
`last_leader`, `isr`, `elr`, `replicas`, `live_brokers`'''
compacted = '''
unchanged: the log cleaner does not clean `__cluster_metadata` (KRaft snapshots replace its prefix), and a
compacted data log keeps its batches' partition leader epochs'''
*/
-- The `offline_partition` check: reads `partition_state` (control_plane.partition_state) and `live_brokers`
-- (control_plane.live_brokers). No leader at the end of the log of a cluster that was running there (some broker
-- registered, unfenced and not shutting down); a stopped cluster has no live broker and no finding. `not_judged`
-- where the copy of the metadata log lacks records after what its replay saw (metadata_coverage): a leader may have
-- been elected there.
WITH found AS (
SELECT 'offline_partition' AS kind, s.metadata_broker AS broker, s.topic, s.partition,
       CAST(s.file AS STRING) AS file, CAST(s.position AS BIGINT) AS position, CAST(NULL AS BIGINT) AS offset,
       CAST(NULL AS BIGINT) AS producer_id, CAST(NULL AS INT) AS producer_epoch,
       format_string('%s-%d has had no leader since metadata offset %d (last leader %s; ISR [%s], ELR [%s], replicas [%s]) while brokers [%s] were up.', s.topic, s.partition, s.since_offset, coalesce(CAST(s.last_leader AS STRING), 'unknown'), coalesce(array_join(s.isr, ','), '?'), coalesce(array_join(s.elr, ','), '?'), coalesce(array_join(s.replicas, ','), '?'), coalesce(array_join(l.live_brokers, ','), '?')) AS message,
       to_json(named_struct('since_offset', s.since_offset, 'since', s.since, 'last_leader', s.last_leader, 'isr', s.isr, 'elr', s.elr, 'replicas', s.replicas, 'live_brokers', l.live_brokers)) AS details,
       -- the metadata log's records after what its replay saw may elect a leader (metadata_coverage)
       mc.metadata_broker AS gap_broker, '__cluster_metadata-0' AS gap_partition, mc.gap_range
FROM partition_state s JOIN live_brokers l ON s.cluster_id = l.cluster_id
LEFT JOIN (SELECT cluster_id, metadata_broker, gap_range FROM metadata_coverage) mc ON mc.cluster_id = s.cluster_id
WHERE s.leader = -1)
SELECT * FROM found
