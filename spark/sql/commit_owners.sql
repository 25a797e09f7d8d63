/*
[table]
doc = """Per committed offset (consumer_offsets), the member that owned its partition at the commit, where the group
replay knows it: the assignment in force at the commit record's offset in the same `__consumer_offsets` log
(group_assignments; one still held before one being revoked, then the newest), and that member's client
(group_members)."""
columns = """
cluster_id string, group_id string, topic string, partition int, owner_member_id string, owner_client_id string"""
*/
SELECT k.cluster_id, k.group_id, k.topic, k.partition, owner_.member_id AS owner_member_id,
       owner_.client_id AS owner_client_id
FROM (
    SELECT k.cluster_id, k.group_id, k.topic, k.partition,
           min_by(named_struct('member_id', a.member_id, 'client_id', m.client_id),
                  named_struct('p', a.pending_revocation, 'f', -a.assigned_from_offset)) AS owner_
    FROM consumer_offsets k
    JOIN group_assignments a
      ON a.coordinator_broker = k.coordinator_broker AND a.coordinator_partition = k.coordinator_partition
     AND a.`group` = k.group_id AND a.topic = k.topic AND a.partition = k.partition
     AND a.assigned_from_offset <= k.coordinator_offset
     AND k.coordinator_offset < coalesce(a.assigned_to_offset, 9223372036854775807)
    LEFT JOIN group_members m
      ON m.coordinator_broker = a.coordinator_broker AND m.coordinator_partition = a.coordinator_partition
     AND m.`group` = a.`group` AND m.group_type = a.group_type AND m.member_id = a.member_id
     AND m.from_offset <= k.coordinator_offset
     AND k.coordinator_offset < coalesce(m.to_offset, 9223372036854775807)
    GROUP BY k.cluster_id, k.group_id, k.topic, k.partition) k
