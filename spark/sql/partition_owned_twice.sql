/*
[check]
coverage = true
family = "groups"
applies = "has_group_records"

[[finding]]
kind = "partition_owned_twice"
severity = "warning"
meaning = "one partition in the current assignment of two members of one group at once"
fields = ["group", "group_type", "topic_id", "members", "member_epochs", "generation", "coordinator_partition", "coordinator_offset", "overlap_from_timestamp", "overlap_to_offset"]
rule = '''
two members of one classic, consumer (KIP-848) or streams (KIP-1071, active tasks) group hold the same
partition in their current assignment over overlapping spans of the group's `__consumer_offsets` log: both
consume it (a classic group's leader assigned it twice in one generation; a consumer group's log that Kafka's
coordinator refuses to load, `Cannot set the epoch of ... because the partition is still owned`). Silent on a
partition the previous owner still holds pending revocation while the next one has it, on share groups (whose
members share partitions by design) and on target assignments. One finding per pair of members and partition,
at the record that began the overlap (`file`/`position`, on `broker`), `topic`/`partition` the partition owned
twice: `group`, `group_type`, `topic_id`, `members`, `member_epochs` (or `generation` for a classic group),
`coordinator_partition`, `coordinator_offset`, `overlap_from_timestamp`, `overlap_to_offset` (null: still at
the end of the input)'''
compacted = '''
`__consumer_offsets` is itself compacted: the cleaner removes a member's record only when a newer record of
the same key follows, so the replay sees fewer intermediate states, never an overlap that was not there'''
reports = ["groups"]
*/
-- Reads group_assignments (group_assignments); the check `partition_owned_twice`: per pair of members of one
-- classic, consumer or streams group holding one partition (neither pending revocation) over overlapping spans of
-- the group's log, the first overlap; `not_judged` where the copy of that log lacks offsets within the overlap
-- (partition_coverage): the record that ended one member's ownership may stand there.
WITH found AS (
SELECT 'partition_owned_twice' AS kind, broker, topic, partition, CAST(file AS STRING) AS file,
       CAST(position AS BIGINT) AS position, CAST(NULL AS BIGINT) AS offset, CAST(NULL AS BIGINT) AS producer_id,
       CAST(NULL AS INT) AS producer_epoch,
       format_string('Group %s (%s) had partition %s-%d in the current assignment of two members at once, %s and %s, from offset %d of %s: both were assigned it.', `group`, group_type, coalesce(topic, topic_id), partition, members[0], members[1], coordinator_offset, coordinator_partition) AS message,
       to_json(named_struct('group', `group`, 'group_type', group_type, 'topic_id', topic_id, 'members', members, 'member_epochs', member_epochs, 'generation', generation, 'coordinator_partition', coordinator_partition, 'coordinator_offset', coordinator_offset, 'overlap_from_timestamp', overlap_from_timestamp, 'overlap_to_offset', overlap_to_offset)) AS details,
       broker AS gap_broker, coordinator_partition AS gap_partition,
       try_element_at(filter(c.missing, m -> coalesce(m.last_offset, 9223372036854775807) >= coordinator_offset
                                             AND m.first_offset < coalesce(overlap_to_offset, 9223372036854775807)), 1)
         AS gap_range
  FROM (
  SELECT *, row_number() OVER (PARTITION BY cluster_id, coordinator_partition, `group`, topic_id, topic, partition,
                                            members ORDER BY coordinator_offset) AS rank_
  FROM (
    SELECT a.cluster_id, a.`group`, a.group_type, a.topic, a.topic_id, a.partition, a.coordinator_broker AS broker,
           a.coordinator_partition, array(a.member_id, b.member_id) AS members,
           array(a.member_epoch, b.member_epoch) AS member_epochs, a.generation,
           greatest(a.assigned_from_offset, b.assigned_from_offset) AS coordinator_offset,
           greatest(a.assigned_from_timestamp, b.assigned_from_timestamp) AS overlap_from_timestamp,
           least(a.assigned_to_offset, b.assigned_to_offset) AS overlap_to_offset,
           CASE WHEN a.assigned_from_offset >= b.assigned_from_offset THEN a.file ELSE b.file END AS file,
           CASE WHEN a.assigned_from_offset >= b.assigned_from_offset THEN a.position ELSE b.position END AS position
    FROM group_assignments a JOIN group_assignments b
      ON a.cluster_id = b.cluster_id AND a.coordinator_partition = b.coordinator_partition
     AND a.`group` = b.`group` AND a.group_type = b.group_type AND a.partition = b.partition
     AND coalesce(a.topic_id, a.topic) = coalesce(b.topic_id, b.topic) AND a.member_id < b.member_id
     AND a.assigned_from_offset < coalesce(b.assigned_to_offset, 9223372036854775807)
     AND b.assigned_from_offset < coalesce(a.assigned_to_offset, 9223372036854775807)
    WHERE a.group_type <> 'share' AND NOT a.pending_revocation AND NOT b.pending_revocation)) o
  LEFT JOIN (SELECT broker AS coverage_broker, format_string('%s-%d', topic, partition) AS coverage_partition, missing
             FROM partition_coverage) c ON c.coverage_broker = o.broker AND c.coverage_partition = o.coordinator_partition
WHERE rank_ = 1)
SELECT * FROM found
