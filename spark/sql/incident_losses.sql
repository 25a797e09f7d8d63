/*
[table]
doc = """One row per range of offsets an incident cost a partition: the replica that held it (`broker`), its first
and last offset, the data records in it (`records_lost`: control records and the records of aborted transactions
left out, as no read_committed consumer would ever see them) and those of them acknowledged to acks=all producers
(`acknowledged_records_lost`: below the high watermark of the replica that held them; the checkpointed high
watermark is a lower bound, and where the metadata log shows that the ISR was the leader alone when a batch was
written, the high watermark reached it on append). A range the input cannot size is a row with null counts and
`unknown` saying which input would tell."""
keep = true
columns = """
incident_id string, cluster_id string, broker string, topic string, partition int, from_offset bigint,
to_offset bigint, records_lost bigint, acknowledged_records_lost bigint, unknown string"""
*/
-- A lost range is a replica's history after the offset where it diverged from the replica that won the election
-- (replica_divergence: `broker` is the replica whose history was replaced), up to its log end. An unclean election
-- whose old leader's replica is not in the input cost what that replica held: unknown here.
WITH members AS (
    SELECT m.incident_id, f.* FROM incident_members m JOIN finding_rows f USING (finding_id)),
diverged AS (
    SELECT incident_id, cluster_id, broker, topic, partition,
           offset AS from_offset
    FROM members
    WHERE kind = 'replica_divergence' AND get_json_object(details, '$.winner') IS NOT NULL),
ranges AS (
    SELECT d.*, e.log_end_offset - 1 AS to_offset, e.high_watermark, b.node_id
    FROM diverged d
    JOIN replica_ends e ON e.broker = d.broker AND e.topic = d.topic AND e.partition = d.partition
    LEFT JOIN brokers b ON b.broker = d.broker),
-- the stretches of the metadata log during which a partition's ISR was its leader alone: an append by that leader
-- then was committed at once (UnifiedLog.maybeIncrementHighWatermark: the HW is the minimum log end of the ISR)
alone AS (
    SELECT cluster_id, topic, partition, leader, timestamp AS alone_from,
           coalesce(next_at, 9223372036854775807) AS alone_to
    FROM (SELECT *, lead(timestamp) OVER (PARTITION BY cluster_id, topic_id, partition ORDER BY metadata_offset)
                      AS next_at
          FROM partition_history)
    WHERE leader >= 0 AND size(isr) = 1 AND isr[0] = leader),
known_metadata AS (SELECT DISTINCT cluster_id, topic, partition FROM partition_history),
aborted AS (
    SELECT broker, topic, partition, producer_id, first_offset, last_data_offset FROM log_transactions
    WHERE outcome = 'ABORT' AND first_offset IS NOT NULL),
in_range AS (
    SELECT r.incident_id, r.cluster_id, r.broker, r.topic, r.partition, r.node_id, b.base_offset, b.count,
           b.max_timestamp
    FROM ranges r
    JOIN log_batches b ON b.broker = r.broker AND b.topic = r.topic AND b.partition = r.partition
    LEFT ANTI JOIN aborted x ON x.broker = b.broker AND x.topic = b.topic AND x.partition = b.partition
                            AND x.producer_id = b.producer_id
                            AND b.base_offset BETWEEN x.first_offset AND x.last_data_offset
    WHERE b.base_offset >= r.from_offset AND b.last_offset <= r.to_offset AND b.crc_valid AND NOT b.is_control),
lost_batches AS (
    SELECT i.incident_id, i.broker, i.topic, i.partition, i.base_offset, i.count,
           max(a.leader IS NOT NULL) AS leader_alone
    FROM in_range i
    LEFT JOIN alone a ON a.cluster_id = i.cluster_id AND a.topic = i.topic AND a.partition = i.partition
                     AND a.leader = i.node_id AND i.max_timestamp >= a.alone_from AND i.max_timestamp < a.alone_to
    GROUP BY i.incident_id, i.broker, i.topic, i.partition, i.base_offset, i.count)
SELECT r.incident_id, r.cluster_id, r.broker, r.topic, r.partition, r.from_offset, r.to_offset,
       coalesce(sum(l.count), 0) AS records_lost,
       CASE WHEN r.high_watermark IS NOT NULL OR k.topic IS NOT NULL
            THEN coalesce(sum(CASE WHEN l.leader_alone THEN l.count
                                   WHEN l.base_offset < r.high_watermark
                                       THEN least(l.count, r.high_watermark - l.base_offset)
                                   ELSE 0 END), 0) END AS acknowledged_records_lost,
       CASE WHEN r.high_watermark IS NULL AND k.topic IS NULL
            THEN format_string('which of these records were acknowledged: %s has no replication-offset-checkpoint '
                               || 'entry for %s-%d and no metadata log of the cluster is in the input', r.broker,
                               r.topic, r.partition) END AS unknown
FROM ranges r
LEFT JOIN known_metadata k ON k.cluster_id = r.cluster_id AND k.topic = r.topic AND k.partition = r.partition
LEFT JOIN lost_batches l ON l.incident_id = r.incident_id AND l.broker = r.broker AND l.topic = r.topic
                        AND l.partition = r.partition
GROUP BY r.incident_id, r.cluster_id, r.broker, r.topic, r.partition, r.from_offset, r.to_offset, r.high_watermark,
         k.topic
UNION ALL
SELECT incident_id, cluster_id, CAST(NULL AS STRING) AS broker, topic, partition,
       offset AS from_offset, CAST(NULL AS BIGINT) AS to_offset,
       CAST(NULL AS BIGINT) AS records_lost, CAST(NULL AS BIGINT) AS acknowledged_records_lost,
       format_string('what the election cost: the log dir of the previous leader (node %s) of %s-%d is not in the '
                     || 'input, or holds no history past the new leader epoch\'s start',
                     get_json_object(details, '$.previous_leader'), topic, partition) AS unknown
FROM members m
WHERE kind = 'unclean_leader_election'
  AND NOT EXISTS (SELECT 1 FROM diverged d
                  WHERE d.incident_id = m.incident_id AND d.topic = m.topic AND d.partition = m.partition)
