/*
[check]
family = "share_groups"
applies = "has_share_state_records"

[[finding]]
kind = "share_records_archived"
severity = "info"
meaning = '''
records a share group archived: delivered up to the delivery limit (poison records) or rejected'''
fields = ["group", "topic_id", "share_partition_key", "start_offset", "coordinator_partition", "coordinator_offset", "first_offset", "last_offset", "record_count", "delivery_count"]
rule = '''
each run of ARCHIVED offsets in a share partition's state at the end of the input: records no consumer of the
group will be given again, after `delivery_count` deliveries (the delivery limit,
`group.share.delivery.count.limit`, 5 by default) or a REJECT acknowledgement. `offset` is the first one;
export them with `kforensics export --offsets FIRST:LAST`. `file`/`position` the state's latest record:
`group`, `topic_id`, `share_partition_key`, `start_offset`, `coordinator_partition`, `coordinator_offset`,
`first_offset`, `last_offset`, `record_count`, `delivery_count`'''
compacted = '''
judged on the share partition's state at the end of the input, which the cleaner of `__share_group_state`
keeps (each key's newest record); against the data partition's log start and end, which compaction of the data
does not move'''
reports = ["groups"]
*/
-- The `share_records_archived` check: the state batches of share_partition_state that the share group archived.
SELECT 'share_records_archived' AS kind, broker, topic, partition, CAST(file AS STRING) AS file,
       CAST(position AS BIGINT) AS position, CAST(first_offset AS BIGINT) AS offset, CAST(NULL AS BIGINT) AS producer_id,
       CAST(NULL AS INT) AS producer_epoch,
       format_string('Share group %s archived offsets %d-%d of %s-%d after %d deliveries (the delivery limit, or a rejection): no consumer of the group will get them again.', `group`, first_offset, last_offset, coalesce(topic, topic_id), partition, delivery_count) AS message,
       to_json(named_struct('group', `group`, 'topic_id', topic_id, 'share_partition_key', format_string('%s:%s:%d', `group`, topic_id, partition), 'start_offset', start_offset, 'coordinator_partition', coordinator_partition, 'coordinator_offset', coordinator_offset, 'first_offset', first_offset, 'last_offset', last_offset, 'record_count', last_offset - first_offset + 1, 'delivery_count', delivery_count)) AS details FROM (SELECT *, coordinator_broker AS broker FROM share_partition_state) WHERE delivery_state = 'ARCHIVED'
