/*
[check]
family = "share_groups"
applies = "has_share_state_records"

[[finding]]
kind = "share_state_stale_leader"
severity = "warning"
meaning = '''
a ShareUpdate written with a leader epoch lower than one already recorded for that share partition'''
fields = ["group", "topic_id", "share_partition_key", "start_offset", "coordinator_partition", "coordinator_offset", "leader_epoch", "recorded_leader_epoch", "recorded_at_offset"]
rule = '''
a ShareUpdate whose LeaderEpoch (not -1) is below the highest leader epoch of the share partition's earlier
records (since its last tombstone): the share coordinator fences such a write (FENCED_LEADER_EPOCH), so an old
share partition leader's state was written anyway. `file`/`position` the update: `group`, `topic_id`,
`share_partition_key`, `start_offset`, `coordinator_partition`, `coordinator_offset`, `leader_epoch`,
`recorded_leader_epoch`, `recorded_at_offset`'''
compacted = '''
compares a ShareUpdate with the earlier records of its share partition that survive: one the cleaner removed
is not compared'''
reports = ["groups"]
*/
-- Reads share_events and topic_names; the `share_state_stale_leader` check: a ShareUpdate whose leader epoch (not -1)
-- is below the highest one the key's earlier records (since its last tombstone) recorded.
SELECT 'share_state_stale_leader' AS kind, broker, topic, partition, CAST(file AS STRING) AS file,
       CAST(position AS BIGINT) AS position, CAST(NULL AS BIGINT) AS offset, CAST(NULL AS BIGINT) AS producer_id,
       CAST(NULL AS INT) AS producer_epoch,
       format_string('Share group %s\'s ShareUpdate of %s-%d at offset %d of %s carries leader epoch %d, below epoch %d recorded at offset %d: a stale share partition leader\'s write, which the coordinator fences.', group_id, coalesce(topic, topic_id), partition, offset, coordinator_partition, leader_epoch, recorded.e, recorded.o) AS message,
       to_json(named_struct('group', group_id, 'topic_id', topic_id, 'share_partition_key', format_string('%s:%s:%d', group_id, topic_id, partition), 'start_offset', start_offset, 'coordinator_partition', coordinator_partition, 'coordinator_offset', coordinator_offset, 'leader_epoch', leader_epoch, 'recorded_leader_epoch', recorded.e, 'recorded_at_offset', recorded.o)) AS details FROM (
  SELECT ev.* EXCEPT (broker, topic, partition), ev.coordinator_broker AS broker, ev.offset AS coordinator_offset,
         names.topic,
         ev.share_partition AS partition
  FROM (
    SELECT *, max(CASE WHEN NOT tombstone AND leader_epoch <> -1 THEN named_struct('e', leader_epoch, 'o', offset) END)
                  OVER (PARTITION BY cluster_id, coordinator_partition, group_id, topic_id, share_partition, life ORDER BY offset
                        ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS recorded
    FROM share_events) ev
  LEFT JOIN topic_names names ON names.topic_id = ev.topic_id)
WHERE record_type = 'share_update' AND NOT tombstone AND leader_epoch <> -1 AND leader_epoch < recorded.e
