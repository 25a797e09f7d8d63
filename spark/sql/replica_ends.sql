/*
[table]
doc = """Per partition and broker: cluster_id, log_start_offset, log_end_offset, high_watermark, cleaned_up_to (the
cleaner-offset-checkpoint entry, null when none), cleaner_offset (0 when none), latest_leader_epoch,
leader_epoch_checkpoint ("epoch@start_offset, ..."), log_end_timestamp and replica_count (brokers of the cluster
holding it)."""
keep = true
columns = """
broker string, topic string, partition int, cluster_id string, log_start_offset bigint, log_end_offset bigint,
high_watermark bigint, cleaned_up_to bigint, cleaner_offset bigint, latest_leader_epoch int,
leader_epoch_checkpoint string, log_end_timestamp bigint, replica_count bigint"""
*/
WITH lineage AS (
  SELECT broker, topic, partition,
         concat_ws(', ', transform(array_sort(collect_list(struct(start_offset, epoch))),
                                   e -> format_string('%d@%d', e.epoch, e.start_offset)))
           AS leader_epoch_checkpoint
  FROM leader_epochs GROUP BY broker, topic, partition),
ends AS (
  SELECT /*+ BROADCAST(brokers_) */ broker, rows_.* EXCEPT (broker), coalesce(brokers_.cluster_id, '') AS cluster_id
  FROM partition_ends rows_ LEFT JOIN (SELECT broker, cluster_id FROM brokers) brokers_ USING (broker))
SELECT broker, topic, partition, cluster_id,
       greatest(log_first_offset, coalesce(log_start_offset, log_first_offset)) AS log_start_offset,
       log_end_offset, high_watermark, cleaner_offset AS cleaned_up_to,
       coalesce(cleaner_offset, 0) AS cleaner_offset, latest_leader_epoch,
       leader_epoch_checkpoint, log_end_timestamp,
       count(1) OVER (PARTITION BY cluster_id, topic, partition) AS replica_count
FROM ends LEFT JOIN lineage USING (broker, topic, partition)
