/*
[table]
doc = """The group records (group_records) of each cluster's serving replica (the current leader's, else the longest) of every `__consumer_offsets` partition
(the copy the coordinator would load), with cluster_id, coordinator_broker, coordinator_partition and `next_end`
(struct o offset, t timestamp: the group's next record that ends every member, null when none follows).
GroupMetadataManager.replay(GroupMetadataKey, GroupMetadataValue) puts a whole new classic group (its tombstone
removes it); replay(XGroupMetadataKey, null) removes a consumer, share or streams group: both end every member."""
keep = true
applies = "has_group_records"
columns = """
topic string, partition int, broker string, file string, position bigint, offset bigint, timestamp bigint,
group_id string, tombstone boolean, group_type string, record_type string, member_id string, generation int,
group_epoch int, member_epoch int, previous_member_epoch int, member_state string, instance_id string,
client_id string, client_host string, rack string, subscribed_topics array<string>,
subscribed_topic_regex string, protocol_type string, protocol string,
topic_partitions array<struct<role:string,topic:string,topic_id:string,subtopology_id:string,partition:int>>,
cluster_id string, coordinator_broker string, coordinator_partition string, next_end struct<o:bigint,t:bigint>"""
*/
WITH ev AS (
    SELECT *, broker AS coordinator_broker, format_string('%s-%d', topic, partition) AS coordinator_partition
    FROM group_records JOIN (SELECT cluster_id, topic, partition, serving_broker AS broker FROM serving_replicas)
                       USING (topic, partition, broker))
SELECT *, min(CASE WHEN (record_type = 'group_metadata' AND member_id IS NULL)
                        OR (record_type IN ('consumer_group_metadata', 'share_group_metadata', 'streams_group_metadata')
                            AND tombstone)
                   THEN named_struct('o', offset, 't', timestamp) END)
              OVER (PARTITION BY cluster_id, coordinator_partition, group_id ORDER BY offset
                    RANGE BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING) AS next_end
FROM ev
