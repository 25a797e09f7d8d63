/*
[table]
doc = """Each partition of each member's current assignment, from the record that gave it to the one that took it away
or replaced the group. A classic member's assignment holds from its GroupMetadata record to the group's next one; a
consumer, share or streams member's from its CurrentMemberAssignment record to its next one (or its removal), the
partitions pending revocation still owned; target assignments are what the assignor wants, not ownership. KIP-848
records name topics by id (topic_names); a streams task (subtopology, partition) reads that partition of every source
and repartition source topic of its subtopology in the group's topology in force (StreamsGroupTopology); only active
tasks own partitions."""
columns = """
cluster_id string, coordinator_broker string, coordinator_partition string, group_id string, group_type string,
member_id string, topic_id string, partition int, subtopology_id string, generation int, member_epoch int,
pending_revocation boolean, from_offset bigint, from_timestamp bigint, file string, position bigint, topic string,
to_offset bigint, to_timestamp bigint"""
*/
WITH names AS (SELECT * FROM topic_names),
classic AS (
    SELECT cluster_id, coordinator_broker, coordinator_partition, group_id, group_type, member_id, tp.topic,
           CAST(NULL AS STRING) AS topic_id, tp.partition, CAST(NULL AS STRING) AS subtopology_id, generation,
           CAST(NULL AS INT) AS member_epoch, false AS pending_revocation, offset AS from_offset,
           timestamp AS from_timestamp, next_end AS until_, file, position
    FROM group_events LATERAL VIEW explode(topic_partitions) t_ AS tp
    WHERE record_type = 'group_metadata' AND member_id IS NOT NULL AND tp.role = 'assigned'),
changes AS (
    SELECT *, min(CASE WHEN record_type LIKE '%current_member_assignment'
                            OR (record_type LIKE '%member_metadata' AND tombstone)
                       THEN named_struct('o', offset, 't', timestamp) END)
                  OVER (PARTITION BY cluster_id, coordinator_partition, group_id, group_type, member_id ORDER BY offset
                        RANGE BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING) AS next_change
    FROM group_events
    WHERE group_type <> 'classic' AND member_id IS NOT NULL
      AND (record_type LIKE '%current_member_assignment' OR record_type LIKE '%member_metadata')),
modern AS (
    SELECT cluster_id, coordinator_broker, coordinator_partition, group_id, group_type, member_id, tp.topic,
           tp.topic_id, tp.partition, tp.subtopology_id, CAST(NULL AS INT) AS generation, member_epoch,
           tp.role LIKE '%pending_revocation' AS pending_revocation, offset AS from_offset,
           timestamp AS from_timestamp, least(next_change, next_end) AS until_, file, position
    FROM changes LATERAL VIEW explode(topic_partitions) t_ AS tp
    WHERE record_type LIKE '%current_member_assignment' AND NOT tombstone
      AND tp.role IN ('assigned', 'pending_revocation', 'active', 'active_pending_revocation')),
sources AS (
    SELECT cluster_id, coordinator_partition, group_id, topology_from, topology_to, tp.subtopology_id,
           tp.topic AS source_topic
    FROM (SELECT *, offset AS topology_from,
                 lead(offset) OVER (PARTITION BY cluster_id, coordinator_partition, group_id ORDER BY offset)
                     AS topology_to
          FROM group_events WHERE record_type = 'streams_group_topology')
         LATERAL VIEW explode(topic_partitions) t_ AS tp
    WHERE tp.role = 'source_topic'),
tasks AS (
    SELECT m.cluster_id, m.coordinator_broker, m.coordinator_partition, m.group_id, m.group_type, m.member_id,
           coalesce(m.topic, s.source_topic) AS topic, m.topic_id, m.partition, m.subtopology_id,
           m.generation, m.member_epoch, m.pending_revocation, m.from_offset, m.from_timestamp, m.until_,
           m.file, m.position
    FROM modern m LEFT JOIN sources s
      ON m.group_type = 'streams' AND s.cluster_id = m.cluster_id
     AND s.coordinator_partition = m.coordinator_partition AND s.group_id = m.group_id
     AND s.subtopology_id = m.subtopology_id AND s.topology_from <= m.from_offset
     AND (s.topology_to IS NULL OR m.from_offset < s.topology_to))
SELECT r.* EXCEPT (topic, until_), coalesce(r.topic, n.topic) AS topic, until_.o AS to_offset,
       until_.t AS to_timestamp
FROM (SELECT * FROM classic UNION ALL SELECT * FROM tasks) r LEFT JOIN names n ON r.topic_id = n.topic_id
