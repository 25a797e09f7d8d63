/*
[table]
doc = """log_batches with each broker's `cluster_id` (its meta.properties' cluster.id; "" when unknown): a
topic-partition is identified by its cluster too, as disks of different clusters are not replicas."""
like = "log_batches"
columns = "cluster_id string"
*/
SELECT /*+ BROADCAST(brokers_) */ broker, rows_.* EXCEPT (broker), coalesce(brokers_.cluster_id, '') AS cluster_id
FROM log_batches rows_ LEFT JOIN (SELECT broker, cluster_id FROM brokers) brokers_ USING (broker)
