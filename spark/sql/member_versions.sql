/*
[table]
doc = """Each state of each member of a group, from the record that set it (from_offset, from_timestamp) to the one
that ended it (to_offset, to_timestamp; null: still so at the end of the input): a classic group's member is its
GroupMetadata record's; a consumer, share or streams group's member is its MemberMetadata record (subscription,
client, rack) and its CurrentMemberAssignment record (member epoch, state), each replacing what the last one of its
kind said; a CurrentMemberAssignment tombstone leaves the member at epoch -1 with nothing assigned
(LEAVE_GROUP_MEMBER_EPOCH), a MemberMetadata tombstone removes it."""
columns = """
cluster_id string, group_id string, group_type string, member_id string, instance_id string, client_id string,
client_host string, rack string, generation int, member_epoch int, member_state string,
subscribed_topics array<string>, subscribed_topic_regex string, from_offset bigint, from_timestamp bigint,
to_offset bigint, to_timestamp bigint, coordinator_broker string, coordinator_partition string, file string,
position bigint"""
*/
SELECT cluster_id, group_id, 'classic' AS group_type, member_id, instance_id, client_id, client_host, rack,
       generation, CAST(NULL AS INT) AS member_epoch, CAST(NULL AS STRING) AS member_state, subscribed_topics,
       CAST(NULL AS STRING) AS subscribed_topic_regex, offset AS from_offset, timestamp AS from_timestamp,
       next_end.o AS to_offset, next_end.t AS to_timestamp, coordinator_broker, coordinator_partition, file,
       position
FROM group_events WHERE record_type = 'group_metadata' AND member_id IS NOT NULL
UNION ALL
SELECT cluster_id, group_id, group_type, member_id, meta.instance_id, meta.client_id, meta.client_host,
       meta.rack, CAST(NULL AS INT) AS generation, asg.member_epoch, asg.member_state, meta.subscribed_topics,
       meta.subscribed_topic_regex, offset AS from_offset, timestamp AS from_timestamp,
       least(next_event, next_end).o AS to_offset, least(next_event, next_end).t AS to_timestamp,
       coordinator_broker, coordinator_partition, file, position
FROM (
    SELECT *,
           last(CASE WHEN is_meta AND NOT tombstone THEN named_struct(
                    'instance_id', instance_id, 'client_id', client_id, 'client_host', client_host,
                    'rack', rack, 'subscribed_topics', subscribed_topics,
                    'subscribed_topic_regex', subscribed_topic_regex) END, true) OVER life_ AS meta,
           last(CASE WHEN is_asg THEN named_struct('member_epoch', member_epoch, 'member_state', member_state,
                                                   'left', tombstone) END, true) OVER life_ AS asg,
           lead(named_struct('o', offset, 't', timestamp))
               OVER (PARTITION BY cluster_id, coordinator_partition, group_id, group_type, member_id ORDER BY offset)
               AS next_event
    FROM (
        SELECT *, coalesce(sum(CAST(is_meta AND tombstone AS INT)) OVER (
                      PARTITION BY cluster_id, coordinator_partition, group_id, group_type, member_id ORDER BY offset
                      ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS life
        FROM (SELECT *, record_type LIKE '%member_metadata' AS is_meta,
                     record_type LIKE '%current_member_assignment' AS is_asg
              FROM group_events
              WHERE group_type <> 'classic' AND member_id IS NOT NULL
                AND (record_type LIKE '%member_metadata' OR record_type LIKE '%current_member_assignment')))
    WINDOW life_ AS (PARTITION BY cluster_id, coordinator_partition, group_id, group_type, member_id, life
                     ORDER BY offset ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW))
WHERE NOT (is_meta AND tombstone) AND NOT coalesce(asg.left, false)
