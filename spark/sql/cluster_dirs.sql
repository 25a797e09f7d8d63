/*
[table]
doc = """The partition dirs of each broker (live, stray and future) with the log dir holding each, the topic id of
their own partition.metadata (a stray dir's own, not the live dir's of the same partition), cluster_id and node_id."""
columns = """
broker string, topic string, partition int, dir_state string, path string, log_dir string, topic_id string,
cluster_id string, node_id int"""
*/
SELECT /*+ BROADCAST(brokers_) */ broker, rows_.* EXCEPT (broker), coalesce(brokers_.cluster_id, '') AS cluster_id,
       brokers_.node_id
FROM (SELECT * FROM partition_dirs LEFT JOIN every_dir_partition_topic_ids USING (broker, topic, partition, dir_state))
     rows_
LEFT JOIN (SELECT broker, cluster_id, node_id FROM brokers) brokers_ USING (broker)
