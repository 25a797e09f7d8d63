/*
[table]
doc = """The events of each incident that are not findings, in time: the leader elections and ISR changes of its
partitions as the cluster's metadata log records them (the ten latest of each partition), and for each range it lost
the last write the replica that lost it holds and the new leader's first write in its place. `at` is epoch ms (the
metadata record's or the batch's timestamp), `broker` the input it was read from, `offset` the metadata log's or the
partition's offset; each event says whose clock gave its time: the controller's for a metadata record, the
producer's CreateTime for a batch (the client stamped it, maybe before an election the controller saw first), or the
broker's LogAppendTime where the topic has the broker stamp its batches."""
columns = "incident_id string, at bigint, broker string, offset bigint, event string"
*/
WITH partitions AS (
    SELECT DISTINCT m.incident_id, f.cluster_id, f.topic, f.partition
    FROM incident_members m JOIN finding_rows f USING (finding_id) WHERE f.topic IS NOT NULL),
changes AS (
    SELECT p.incident_id, h.*,
           row_number() OVER (PARTITION BY p.incident_id, h.cluster_id, h.topic, h.partition
                              ORDER BY h.metadata_offset DESC) AS latest
    FROM partitions p JOIN partition_history h
      ON h.cluster_id = p.cluster_id AND h.topic = p.topic AND h.partition = p.partition
    WHERE h.election IN ('clean', 'elr', 'unclean', 'offline')
       OR (h.record_type = 'PARTITION_CHANGE_RECORD' AND NOT (h.isr <=> h.previous_isr)))
SELECT incident_id, timestamp AS at, metadata_broker AS broker, metadata_offset AS offset,
       CASE WHEN election = 'offline'
                 THEN format_string('%s-%d has no leader (leader epoch %d, ISR [%s])', topic, partition, leader_epoch,
                                    array_join(isr, ','))
            WHEN election IN ('clean', 'elr', 'unclean')
                 THEN format_string('node %d elected leader of %s-%d (%s election, leader epoch %d, ISR [%s])',
                                    leader, topic, partition, election, leader_epoch, array_join(isr, ','))
            ELSE format_string('ISR of %s-%d changed from [%s] to [%s] (leader node %d, leader epoch %d)', topic,
                               partition, array_join(previous_isr, ','), array_join(isr, ','), leader, leader_epoch)
       END || ' (controller''s clock)' AS event
FROM changes WHERE latest <= 10
UNION ALL
SELECT l.incident_id, b.max_timestamp AS at, l.broker, b.base_offset AS offset,
       format_string('last write %s holds of %s-%d before the loss: offsets %d-%d (%s)', l.broker, l.topic,
                     l.partition, b.base_offset, b.last_offset, CASE WHEN b.timestamp_type = 'LogAppendTime'
                     THEN 'broker''s LogAppendTime' ELSE 'producer''s CreateTime' END) AS event
FROM incident_losses l JOIN log_batches b
  ON b.broker = l.broker AND b.topic = l.topic AND b.partition = l.partition AND b.last_offset = l.to_offset
UNION ALL
SELECT l.incident_id, b.max_timestamp AS at, b.broker, b.base_offset AS offset,
       format_string('%s writes %s-%d from offset %d in place of what %s held there (leader epoch %d; %s)',
                     b.broker, l.topic, l.partition, b.base_offset, l.broker, b.partition_leader_epoch,
                     CASE WHEN b.timestamp_type = 'LogAppendTime' THEN 'broker''s LogAppendTime'
                          ELSE 'producer''s CreateTime' END) AS event
FROM incident_losses l JOIN clustered_batches b
  ON b.cluster_id = l.cluster_id AND b.topic = l.topic AND b.partition = l.partition AND b.broker <> l.broker
 AND b.base_offset = l.from_offset AND b.crc_valid
