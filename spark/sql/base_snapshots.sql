/*
[table]
doc = """Per copy of a metadata log, the snapshot it is replayed from: `base_snapshot` (its end offset; null when the
log starts at offset 0, or when the copy has no snapshot), the copy's `log_start_offset` and `log_end_offset` (null
without log segments). A snapshot `<end offset>-<epoch>.checkpoint` holds the state of every record below its end
offset (raft's OffsetAndEpoch, SnapshotPath): the base is the OLDEST snapshot the copy's log continues from (log start
<= end offset <= log end): the end state is the same from any of them, and the older one keeps more history. A log
that starts at offset 0 needs none; a copy whose log starts after every snapshot (a gap) is based on the newest."""
columns = """
cluster_id string, metadata_broker string, log_start_offset bigint, log_end_offset bigint, base_snapshot bigint"""
*/
WITH log AS (
    SELECT cluster_id, metadata_broker, min(file_first_offset) AS log_start_offset,
           max(metadata_offset) + 1 AS log_end_offset
    FROM metadata_records WHERE snapshot_offset IS NULL GROUP BY cluster_id, metadata_broker),
snaps AS (
    SELECT DISTINCT cluster_id, metadata_broker, snapshot_offset FROM metadata_records
    WHERE snapshot_offset IS NOT NULL),
picked AS (
    SELECT cluster_id, metadata_broker, log_start_offset, log_end_offset,
           min(CASE WHEN snapshot_offset >= log_start_offset AND snapshot_offset <= log_end_offset
                    THEN snapshot_offset END) AS oldest_continued,
           max(snapshot_offset) AS newest
    FROM (SELECT DISTINCT cluster_id, metadata_broker FROM metadata_records)
         LEFT JOIN log USING (cluster_id, metadata_broker)
         LEFT JOIN snaps USING (cluster_id, metadata_broker)
    GROUP BY cluster_id, metadata_broker, log_start_offset, log_end_offset)
SELECT cluster_id, metadata_broker, log_start_offset, log_end_offset,
       CASE WHEN log_start_offset = 0 THEN CAST(NULL AS BIGINT) ELSE coalesce(oldest_continued, newest) END
           AS base_snapshot
FROM picked
