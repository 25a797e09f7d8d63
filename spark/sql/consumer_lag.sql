/*
[table]
doc = """Per group and partition with a commit at the end of the input (consumer_offsets): the committed offset against
the partition's longest replica (log_end_offset, last_stable_offset, lag = log end - committed), and the member that
owned it last (group_assignments, group_members: owner_member_id, its client; owned_until_*: when it stopped, null
when it still did)."""
output = true
applies = "has_consumer_offsets"
columns = [
    ["cluster_id", "string", "the cluster.id of the broker's meta.properties (empty when unknown)"],
    ["group", "string", "the group"],
    ["topic", "string", "the topic"],
    ["partition", "int", "the partition"],
    ["committed_offset", "bigint", "the commit the coordinator serves"],
    ["last_commit_timestamp", "bigint", "that commit's CommitTimestamp"],
    ["log_end_offset", "bigint", "the longest replica's log end offset"],
    ["last_stable_offset", "bigint", "the longest replica's, `data_broker`"],
    ["lag", "bigint", "log end - committed"],
    ["data_broker", "string", "the replica it is measured against (the longest)"],
    ["status", "string", "as `consumer_offsets`"],
    ["owner_member_id", "string", "the member that owned the partition last"],
    ["owner_client_id", "string", "its client.id"],
    ["owner_client_host", "string", "the member that owned the partition last"],
    ["owned_until_offset", "bigint", "the `__consumer_offsets` offset where its ownership ended (null: it still owns it)"],
    ["owned_until_timestamp", "bigint", "null: it still did"],
    ["coordinator_broker", "string", "the input whose `__consumer_offsets` replica was read"],
    ["coordinator_partition", "string", "the `__consumer_offsets` partition (`__consumer_offsets-<n>`)"],
]
*/
WITH owners AS (
    SELECT * FROM (
        SELECT a.*, row_number() OVER (PARTITION BY cluster_id, coordinator_broker, coordinator_partition,
                                                    `group`, topic, partition
                                       ORDER BY assigned_from_offset DESC, pending_revocation) AS rank_
        FROM group_assignments a WHERE topic IS NOT NULL)
    WHERE rank_ = 1),
who AS (
    SELECT o.cluster_id, o.coordinator_broker, o.coordinator_partition, o.`group`, o.topic, o.partition,
           o.member_id AS owner_member_id, max_by(m.client_id, m.from_offset) AS owner_client_id,
           max_by(m.client_host, m.from_offset) AS owner_client_host,
           first(o.assigned_to_offset) AS owned_until_offset,
           first(o.assigned_to_timestamp) AS owned_until_timestamp
    FROM owners o LEFT JOIN group_members m
      ON m.cluster_id = o.cluster_id AND m.coordinator_partition = o.coordinator_partition
     AND m.`group` = o.`group` AND m.group_type = o.group_type AND m.member_id = o.member_id
     AND m.from_offset <= o.assigned_from_offset
     AND o.assigned_from_offset < coalesce(m.to_offset, 9223372036854775807)
    GROUP BY o.cluster_id, o.coordinator_broker, o.coordinator_partition, o.`group`, o.topic, o.partition,
             o.member_id)
SELECT c.cluster_id, c.group_id AS `group`, c.topic, c.partition, c.committed_offset,
       c.commit_timestamp AS last_commit_timestamp, c.log_end_offset, l.last_stable_offset,
       c.log_end_offset - c.committed_offset AS lag, c.data_broker, c.status, w.owner_member_id,
       w.owner_client_id, w.owner_client_host, w.owned_until_offset, w.owned_until_timestamp,
       c.coordinator_broker, c.coordinator_partition
FROM consumer_offsets c
LEFT JOIN lso l ON l.broker = c.data_broker AND l.topic = c.topic AND l.partition = c.partition
LEFT JOIN who w
  ON w.cluster_id = c.cluster_id AND w.coordinator_broker = c.coordinator_broker
 AND w.coordinator_partition = c.coordinator_partition AND w.`group` = c.group_id AND w.topic = c.topic
 AND w.partition = c.partition
