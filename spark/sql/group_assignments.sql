/*
[table]
doc = """One row per member, partition and epoch (generation or member epoch) of its current assignment
(assignment_versions, consecutive ones of the same epoch merged), with pending_revocation, from the record that gave
it (assigned_from_offset, _timestamp) to the one that took it away or replaced the group (assigned_to_offset,
_timestamp; null: still held at the end of the input). Share groups' members share partitions by design."""
output = true
keep = true
applies = "has_group_records"
columns = [
    ["cluster_id", "string", "the cluster.id of the broker's meta.properties (empty when unknown)"],
    ["group", "string", "the group"],
    ["group_type", "string", "`classic`, `consumer`, `streams`, `share`"],
    ["member_id", "string", "the member"],
    ["topic", "string", "null when no input names its topic id"],
    ["topic_id", "string", "the KIP-848 records'"],
    ["partition", "int", "the partition"],
    ["subtopology_id", "string", "a streams task's"],
    ["generation", "int", "a classic group's generation"],
    ["member_epoch", "int", "a consumer, share or streams member's epoch"],
    ["pending_revocation", "boolean", "still owned, being given up"],
    ["assigned_from_offset", "bigint", "the `__consumer_offsets` offset of the record that gave it"],
    ["assigned_from_timestamp", "bigint", "that record's timestamp"],
    ["assigned_to_offset", "bigint", "the record that took it away or replaced the group (null: still held)"],
    ["assigned_to_timestamp", "bigint", "null: still held at the end of the input"],
    ["coordinator_broker", "string", "the input whose `__consumer_offsets` replica was replayed"],
    ["coordinator_partition", "string", "`__consumer_offsets-<n>`"],
    ["file", "string", "the file it was read from"],
    ["position", "bigint", "the byte position in `file`"],
]
*/
SELECT cluster_id, group_id AS `group`, group_type, member_id, topic, topic_id, partition,
       subtopology_id, generation, member_epoch, pending_revocation, from_offset AS assigned_from_offset,
       from_timestamp AS assigned_from_timestamp, to_offset AS assigned_to_offset,
       to_timestamp AS assigned_to_timestamp, coordinator_broker, coordinator_partition, file, position
FROM (
SELECT cluster_id, coordinator_broker, coordinator_partition, group_id, group_type, member_id, topic_id, topic, partition, subtopology_id, generation, member_epoch, pending_revocation, min_by(file, from_offset) AS file, min_by(position, from_offset) AS position,
       min(from_offset) AS from_offset, min_by(from_timestamp, from_offset) AS from_timestamp,
       max_by(to_offset, from_offset) AS to_offset, max_by(to_timestamp, from_offset) AS to_timestamp
FROM (
    SELECT *, sum(new_island) OVER (PARTITION BY cluster_id, coordinator_broker, coordinator_partition, group_id, group_type, member_id, topic_id, topic, partition, subtopology_id ORDER BY from_offset
                                    ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS island
    FROM (
        SELECT *, CASE WHEN lag(to_offset) OVER w = from_offset AND lag(state_) OVER w <=> state_ THEN 0
                       ELSE 1 END AS new_island
        FROM (SELECT *, named_struct('generation', generation, 'member_epoch', member_epoch, 'pending_revocation', pending_revocation) AS state_ FROM assignment_versions)
        WINDOW w AS (PARTITION BY cluster_id, coordinator_broker, coordinator_partition, group_id, group_type, member_id, topic_id, topic, partition, subtopology_id ORDER BY from_offset)))
GROUP BY cluster_id, coordinator_broker, coordinator_partition, group_id, group_type, member_id, topic_id, topic, partition, subtopology_id, generation, member_epoch, pending_revocation, island)
