/*
[table]
doc = """Per cluster, the `metadata_broker` whose copy of the metadata log reaches the highest metadata offset (ties:
the broker label), with its `end_offset` (one past its last record). That copy is the reference and the only one
replayed, so a fact is reported once per cluster; that the other copies are prefixes of it is the replica
comparison's job."""
keep = true
columns = """
cluster_id string, metadata_broker string, end_offset bigint"""
*/
SELECT cluster_id, metadata_broker, end_offset FROM (
    SELECT *, row_number() OVER (PARTITION BY cluster_id ORDER BY end_offset DESC, metadata_broker) AS rank
    FROM (SELECT cluster_id, metadata_broker, max(coalesce(snapshot_offset, metadata_offset + 1)) AS end_offset
          FROM metadata_records GROUP BY cluster_id, metadata_broker))
WHERE rank = 1
