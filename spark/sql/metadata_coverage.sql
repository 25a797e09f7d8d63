/*
[table]
doc = """How far the input covers each cluster's KRaft metadata log: per cluster_id, the first range the reference
copy of `__cluster_metadata-0` lacks at or after the offset its replay is based on (`gap_range`, null: the replay saw
every record the log held), with `metadata_broker` and `replayed_from`. Where it is not null, the checks of the
control plane leave what lies beyond it not judged."""
columns = "cluster_id string, metadata_broker string, replayed_from bigint, gap_range struct<first_offset: bigint, last_offset: bigint, proven: boolean>"
*/
-- How far the input covers each cluster's metadata log, over reference_copies (the copy the control plane replays),
-- partition_history and partition_coverage: per cluster_id, the first range the reference copy of
-- `__cluster_metadata-0` lacks at or after the offset its replay is based on (a snapshot's end offset: the snapshot
-- holds every record below it; 0 without one), as `gap_range`, with `metadata_broker` and `replayed_from`. Null where
-- the replay saw every record the log held: the end state, the partitions' leaders and leader epochs are then known;
-- otherwise the checks of the control plane leave them not judged.
WITH
replayed AS (
    SELECT cluster_id, coalesce(max(CASE WHEN endswith(file, '.checkpoint') THEN metadata_offset + 1 END), 0)
             AS replayed_from
    FROM partition_history GROUP BY cluster_id)
SELECT r.cluster_id, r.metadata_broker, coalesce(p.replayed_from, 0) AS replayed_from,
       try_element_at(filter(c.missing, m -> coalesce(m.last_offset, 9223372036854775807)
                                             >= coalesce(p.replayed_from, 0)), 1) AS gap_range
FROM reference_copies r
LEFT JOIN replayed p ON p.cluster_id = r.cluster_id
LEFT JOIN partition_coverage c
    ON c.broker = r.metadata_broker AND c.topic = '__cluster_metadata' AND c.partition = 0
