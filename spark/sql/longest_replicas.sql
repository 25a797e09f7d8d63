/*
[table]
doc = """Per topic-partition of a cluster the broker with the furthest log end (ties: the higher leader epoch, then
the broker label) as `longest_broker`, with its log_start_offset, log_end_offset and log_end_timestamp."""
keep = true
columns = """
cluster_id string, topic string, partition int, longest_broker string, log_start_offset bigint,
log_end_offset bigint, log_end_timestamp bigint"""
*/
SELECT cluster_id, topic, partition, broker AS longest_broker, log_start_offset, log_end_offset, log_end_timestamp
FROM (SELECT *, row_number() OVER (PARTITION BY cluster_id, topic, partition
                                   ORDER BY log_end_offset DESC, latest_leader_epoch DESC NULLS LAST, broker)
                  AS rank_
      FROM replica_ends)
WHERE rank_ = 1
