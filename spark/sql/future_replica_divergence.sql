/*
[check]
applies = "has_future_replicas"

[[finding]]
kind = "future_replica_divergence"
severity = "warning"
meaning = '''
the -future copy of a partition (being moved between a broker's log dirs) holds a batch, within the live log's
offsets, that the live replica does not hold identically'''
fields = ["live_log_start_offset", "live_log_end_offset", "future_crc", "live_crc", "live_broker"]
rule = '''
a `-future` dir (the copy a broker builds while moving a replica between its log dirs, fetched from the live
log) holds a batch, within the live log's offsets, that the live dir of the same broker does not hold
identically (the same fingerprint as replicas of two brokers); the same broker is the same cluster.id and node.id in
meta.properties, so the live dir is found in another log dir given as another input (as Kafka keeps them), or
under the same label where meta.properties is missing; one finding per future dir at its first such batch; a
copy that is only shorter is still catching up, no finding: `live_log_start_offset`, `live_log_end_offset`,
`future_crc`, `live_crc` (null when the live dir has no batch at that offset), `live_broker` (the input
holding the live dir)'''
compacted = '''
unchanged: Kafka pauses the cleaner on a partition while its replica moves between log dirs
(`ReplicaManager.alterReplicaLogDirs`, `abortAndPauseCleaning`)'''
*/
-- Reads every_dir_batches (with dir_state) and brokers; the `future_replica_divergence` check: per -future dir,
-- its first batch within the live log's offsets that the same node's live dir (`node`: cluster.id/node.id of its
-- meta.properties, else its input label) does not hold identically.
WITH valid AS (
  SELECT * EXCEPT (node), coalesce(node, concat('label/', broker)) AS node
  FROM (SELECT * FROM every_dir_batches WHERE crc_valid)
       LEFT JOIN (SELECT broker, CASE WHEN node_id IS NOT NULL THEN concat_ws('/', coalesce(cluster_id, ''), CAST(node_id AS STRING)) END AS node FROM brokers) USING (broker)),
live AS (SELECT * FROM valid WHERE dir_state = 'live'),
bounds AS (
  SELECT node, topic, partition, min(base_offset) AS live_log_start_offset, max(last_offset) + 1 AS live_log_end_offset,
         min(broker) AS live_broker
  FROM live GROUP BY node, topic, partition),
future AS (
  SELECT * FROM (SELECT * FROM valid WHERE dir_state = 'future') JOIN bounds USING (node, topic, partition)
  WHERE base_offset >= live_log_start_offset AND base_offset < live_log_end_offset),
joined AS (
  SELECT * FROM future
       LEFT JOIN (SELECT node, topic, partition, base_offset, last_offset AS live_last_offset, crc AS live_crc, producer_id AS live_producer_id, producer_epoch AS live_producer_epoch, base_sequence AS live_base_sequence, partition_leader_epoch AS live_partition_leader_epoch FROM live)
       USING (node, topic, partition, base_offset)),
first_differing AS (
  SELECT * FROM (
    SELECT *, row_number() OVER (PARTITION BY broker, topic, partition,
                                              regexp_extract(file, '^(.*)/[^/]*$', 1)
                                 ORDER BY base_offset) AS n
    FROM joined WHERE NOT (last_offset <=> live_last_offset AND crc <=> live_crc AND producer_id <=> live_producer_id AND producer_epoch <=> live_producer_epoch AND base_sequence <=> live_base_sequence AND partition_leader_epoch <=> live_partition_leader_epoch))
  WHERE n = 1)
SELECT 'future_replica_divergence' AS kind, broker, topic, partition, CAST(file AS STRING) AS file,
       CAST(position AS BIGINT) AS position, CAST(base_offset AS BIGINT) AS offset, CAST(producer_id AS BIGINT) AS producer_id,
       CAST(producer_epoch AS INT) AS producer_epoch,
       format_string('the -future copy of %s-%d on %s holds a batch at offset %d that the live replica (%s) does not hold identically (live CRC %s, future CRC %d): the copy being moved between log dirs differs from the log it is copied from', topic, partition, broker, base_offset, live_broker, coalesce(CAST(live_crc AS STRING), 'none'), crc) AS message,
       to_json(named_struct('live_log_start_offset', live_log_start_offset, 'live_log_end_offset', live_log_end_offset, 'future_crc', crc, 'live_crc', live_crc, 'live_broker', live_broker)) AS details
FROM first_differing
