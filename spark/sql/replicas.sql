/*
[table]
doc = """Per partition and broker: the replica's ends and checkpoints, compared with the longest replica of its
topic-partition (replica_ends, divergences) and read as compacted or not (the topic's cleanup.policy in the cluster's
KRaft metadata log where that log is in the input, applied_records; without it, whether the partition has a
cleaner-offset-checkpoint entry). A `-delete`, `-future` or `-stray` dir has a row of its own with its log start and
end, nothing compared."""
output = true
columns = [
    ["broker", "string", "the input's label: the broker whose log dir (or log dirs, one label given several) it was read from"],
    ["topic", "string", "the topic"],
    ["partition", "int", "the partition"],
    ["cluster_id", "string", "the cluster.id of the broker's meta.properties (empty when unknown)"],
    ["log_start_offset", "bigint", "its first offset (log-start-offset-checkpoint, or its first batch)"],
    ["log_end_offset", "bigint", "last offset of a sound batch + 1"],
    ["high_watermark", "bigint", "replication-offset-checkpoint"],
    ["latest_leader_epoch", "int", "of its batches"],
    ["leader_epoch_checkpoint", "string", "`epoch@start_offset, ...`"],
    ["replica_count", "bigint", "the brokers of its cluster holding the partition"],
    ["longest_broker", "string", "the replica with the furthest log end"],
    ["lag", "bigint", "offsets behind the longest replica; null when diverged"],
    ["diverged_at", "bigint", "first offset differing from the longest replica"],
    ["in_sync", "boolean", "a prefix of the longest replica and as long"],
    ["compacted", "boolean", "the topic's `cleanup.policy` in the cluster's KRaft metadata log names `compact`, where that log is in the input; without it, the partition has a `cleaner-offset-checkpoint` entry"],
    ["cleaned_up_to", "bigint", "that entry: the log cleaner has compacted the offsets below it, and the log rules read them as compacted, see [Findings](findings.md); null when none"],
    ["complete", "boolean", "the copy holds every offset the partition is known to have held from its first segment on (partition_coverage: no range it proves missing, nor offsets above the recovery point that a crash may have lost); null for a `-delete`, `-future` or `-stray` dir; see [An incomplete copy](cli.md#an-incomplete-copy)"],
    ["covered_to", "bigint", "one past the last offset the copy holds (its last sound batch); null: no batch"],
    ["dir_state", "string", "a `-delete`, `-future` or `-stray` dir has a row of its own with its `log_start_offset` and `log_end_offset`, nothing compared"],
    ["log_dir", "string", "the log dir holding the partition dir, as the input names it (a broker given several log dirs under one label, JBOD, holds each partition in one of them); null for kafka-dump-log text"],
]
*/
WITH vs AS (
  -- each divergence seen from both replicas: `broker` diverged from `longest_broker` at `diverged_at`
  SELECT cluster_id, topic, partition, a_broker AS broker, b_broker AS longest_broker, `offset` AS diverged_at
  FROM divergences
  UNION ALL
  SELECT cluster_id, topic, partition, b_broker AS broker, a_broker AS longest_broker, `offset` AS diverged_at
  FROM divergences),
longest AS (
  SELECT cluster_id, topic, partition, longest_broker, log_end_offset AS longest_log_end_offset
  FROM longest_replicas),
-- per topic, its cleanup.policy as the metadata log leaves it: the latest ConfigRecord since the topic's latest
-- TopicRecord (ConfigurationControlManager drops a deleted topic's configs; a null value is a deleted config, the
-- broker's default then)
policies AS (
  SELECT cluster_id, topic, max_by(config_value, struct(metadata_offset, record_index)) AS cleanup_policy
  FROM (SELECT *, max(CASE WHEN record_type = 'TOPIC_RECORD' THEN metadata_offset END)
                    OVER (PARTITION BY cluster_id, topic) AS created_offset
        FROM applied_records WHERE record_type IN ('TOPIC_RECORD', 'CONFIG_RECORD'))
  WHERE record_type = 'CONFIG_RECORD' AND metadata_offset >= coalesce(created_offset, metadata_offset)
  GROUP BY cluster_id, topic),
special AS (
  SELECT broker, topic, partition, dir_state, min(first_batch_base_offset) AS log_start_offset,
         max(last_offset) + 1 AS log_end_offset, regexp_extract(min(file), '^(.*)/[^/]+/[^/]*$', 1) AS log_dir
  FROM every_dir_segments WHERE dir_state != 'live' GROUP BY broker, topic, partition, dir_state),
live_dirs AS (
  SELECT broker, topic, partition, min(log_dir) AS log_dir FROM partition_dirs WHERE dir_state = 'live'
  GROUP BY broker, topic, partition)
SELECT broker, topic, partition, cluster_id, log_start_offset, log_end_offset, high_watermark,
       latest_leader_epoch, leader_epoch_checkpoint, replica_count, longest_broker,
       CASE WHEN diverged_at IS NULL THEN longest_log_end_offset - log_end_offset END AS lag, diverged_at,
       diverged_at IS NULL AND log_end_offset = longest_log_end_offset AS in_sync,
       CASE WHEN cleanup_policy IS NOT NULL THEN exists(split(cleanup_policy, ','), p -> trim(p) = 'compact')
            ELSE cleaned_up_to IS NOT NULL END AS compacted,
       cleaned_up_to, complete, covered_to, 'live' AS dir_state, log_dir
FROM replica_ends
     JOIN longest USING (cluster_id, topic, partition)
     LEFT JOIN vs USING (cluster_id, topic, partition, broker, longest_broker)
     LEFT JOIN policies USING (cluster_id, topic)
     LEFT JOIN (SELECT broker, topic, partition, complete, covered_to FROM partition_coverage)
       USING (broker, topic, partition)
     LEFT JOIN live_dirs USING (broker, topic, partition)
UNION ALL
SELECT broker, topic, partition, coalesce(brokers_.cluster_id, '') AS cluster_id, log_start_offset, log_end_offset,
       CAST(NULL AS BIGINT) AS high_watermark, CAST(NULL AS INT) AS latest_leader_epoch,
       CAST(NULL AS STRING) AS leader_epoch_checkpoint, CAST(NULL AS BIGINT) AS replica_count,
       CAST(NULL AS STRING) AS longest_broker, CAST(NULL AS BIGINT) AS lag, CAST(NULL AS BIGINT) AS diverged_at,
       CAST(NULL AS BOOLEAN) AS in_sync, CAST(NULL AS BOOLEAN) AS compacted, CAST(NULL AS BIGINT) AS cleaned_up_to,
       CAST(NULL AS BOOLEAN) AS complete, CAST(NULL AS BIGINT) AS covered_to, dir_state, log_dir
FROM special LEFT JOIN (SELECT broker, cluster_id FROM brokers) brokers_ USING (broker)
