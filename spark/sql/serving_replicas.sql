/*
[table]
doc = """Per topic-partition of a cluster, the replica whose log the partition serves, as Kafka serves it: the
current leader's (the leader at the end of the cluster's metadata log, where that log and the leader's log dir are
in the input: `source` `leader`), else the replica with the furthest log end (`source` `longest`). A group's committed
offset, a share group's state and a coordinator's records are judged against it: after an unclean election the old
leader's longer, diverged copy is not what consumers read."""
keep = true
columns = """
cluster_id string, topic string, partition int, serving_broker string, log_start_offset bigint,
log_end_offset bigint, log_end_timestamp bigint, source string"""
*/
-- the leader's log dir: the input of the leader's node id in the cluster (a broker with several log dirs: the one
-- that holds the partition)
WITH leaders AS (
    SELECT s.cluster_id, s.topic, s.partition, e.broker, e.log_start_offset, e.log_end_offset, e.log_end_timestamp
    FROM partition_state s
    JOIN brokers b ON coalesce(b.cluster_id, '') = s.cluster_id AND b.node_id = s.leader
    JOIN replica_ends e ON e.broker = b.broker AND e.topic = s.topic AND e.partition = s.partition
    WHERE s.leader >= 0)
SELECT l.cluster_id, l.topic, l.partition, coalesce(leaders.broker, l.longest_broker) AS serving_broker,
       coalesce(leaders.log_start_offset, l.log_start_offset) AS log_start_offset,
       coalesce(leaders.log_end_offset, l.log_end_offset) AS log_end_offset,
       coalesce(leaders.log_end_timestamp, l.log_end_timestamp) AS log_end_timestamp,
       CASE WHEN leaders.broker IS NOT NULL THEN 'leader' ELSE 'longest' END AS source
FROM longest_replicas l
LEFT JOIN leaders ON leaders.cluster_id = l.cluster_id AND leaders.topic = l.topic AND leaders.partition = l.partition
