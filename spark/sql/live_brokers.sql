/*
[table]
doc = """Per cluster the brokers registered, unfenced and not in controlled shutdown at the end of the metadata log
(sorted ids; clusters with none are absent). The rows of one record (fenced and controlled_shutdown) carry the same
registration after it."""
columns = "cluster_id string, live_brokers array<int>"
*/
SELECT cluster_id, array_sort(collect_list(broker_id)) AS live_brokers
FROM (SELECT *, row_number() OVER (PARTITION BY cluster_id, broker_id ORDER BY metadata_offset DESC) AS rank
      FROM broker_history)
WHERE rank = 1 AND fenced = false AND NOT in_controlled_shutdown
GROUP BY cluster_id
