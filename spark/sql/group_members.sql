/*
[table]
doc = """One row per member of a group and its state, replayed from `__consumer_offsets` as the group coordinator
replays its log (GroupMetadataManager.replay, GroupCoordinatorShard.replay: apache/kafka 0013464c, Kafka 4.2 trunk):
consecutive states of a member (member_versions) that are the same are one row."""
output = true
keep = true
applies = "has_group_records"
columns = [
    ["cluster_id", "string", "the cluster.id of the broker's meta.properties (empty when unknown)"],
    ["group", "string", "the group"],
    ["group_type", "string", "`classic`, `consumer`, `streams`, `share`"],
    ["member_id", "string", "the member"],
    ["instance_id", "string", "group.instance.id (static membership)"],
    ["client_id", "string", "client.id"],
    ["client_host", "string", "the client's host"],
    ["rack", "string", "client.rack"],
    ["generation", "int", "a classic group's"],
    ["member_epoch", "int", "a consumer, share or streams member's epoch"],
    ["member_state", "string", "`STABLE`, `UNREVOKED_PARTITIONS`, `UNRELEASED_PARTITIONS`, `UNREVOKED_TASKS`, `UNRELEASED_TASKS`, `UNKNOWN`; the others'"],
    ["subscribed_topics", "array<string>", "the topics it subscribes to"],
    ["subscribed_topic_regex", "string", "its subscription pattern (KIP-848)"],
    ["from_offset", "bigint", "the `__consumer_offsets` offset of the record that set this state"],
    ["from_timestamp", "bigint", "the record that set it"],
    ["to_offset", "bigint", "the record that ended it (null: still so at the end of the input)"],
    ["to_timestamp", "bigint", "the record that ended it; null: still so at the end of the input"],
    ["coordinator_broker", "string", "the input whose `__consumer_offsets` replica was replayed"],
    ["coordinator_partition", "string", "the replica of `__consumer_offsets` replayed: each cluster's longest"],
    ["file", "string", "the file it was read from"],
    ["position", "bigint", "the record that set it"],
]
*/
SELECT cluster_id, group_id AS `group`, group_type, member_id, instance_id, client_id, client_host, rack,
       generation, member_epoch, member_state, subscribed_topics, subscribed_topic_regex, from_offset,
       from_timestamp, to_offset, to_timestamp, coordinator_broker, coordinator_partition, file, position
FROM (
SELECT cluster_id, coordinator_broker, coordinator_partition, group_id, group_type, member_id, instance_id, client_id, client_host, rack, generation, member_epoch, member_state, subscribed_topics, subscribed_topic_regex, min_by(file, from_offset) AS file, min_by(position, from_offset) AS position,
       min(from_offset) AS from_offset, min_by(from_timestamp, from_offset) AS from_timestamp,
       max_by(to_offset, from_offset) AS to_offset, max_by(to_timestamp, from_offset) AS to_timestamp
FROM (
    SELECT *, sum(new_island) OVER (PARTITION BY cluster_id, coordinator_broker, coordinator_partition, group_id, group_type, member_id ORDER BY from_offset
                                    ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS island
    FROM (
        SELECT *, CASE WHEN lag(to_offset) OVER w = from_offset AND lag(state_) OVER w <=> state_ THEN 0
                       ELSE 1 END AS new_island
        FROM (SELECT *, named_struct('instance_id', instance_id, 'client_id', client_id, 'client_host', client_host, 'rack', rack, 'generation', generation, 'member_epoch', member_epoch, 'member_state', member_state, 'subscribed_topics', subscribed_topics, 'subscribed_topic_regex', subscribed_topic_regex) AS state_ FROM member_versions)
        WINDOW w AS (PARTITION BY cluster_id, coordinator_broker, coordinator_partition, group_id, group_type, member_id ORDER BY from_offset)))
GROUP BY cluster_id, coordinator_broker, coordinator_partition, group_id, group_type, member_id, instance_id, client_id, client_host, rack, generation, member_epoch, member_state, subscribed_topics, subscribed_topic_regex, island)
