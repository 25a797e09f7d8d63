/*
[table]
doc = """Facts an incident's plan fills its commands with, per finding that belongs to an incident: the log dir of
the broker it was found on (`log_dir`, the log dir holding its partition dir, as the scan's input gave it; for a
finding of no partition, the broker's first log dir by path), its partition dir (`partition_dir`), and for a
damaged batch the brokers whose replica holds the same batch intact (`intact_on`: the same base offset and CRC, and
a CRC that holds)."""
columns = "finding_id string, log_dir string, partition_dir string, intact_on string"
*/
WITH members AS (
    SELECT f.finding_id, f.broker, f.topic, f.partition, f.offset, f.kind, f.cluster_id
    FROM finding_rows f LEFT SEMI JOIN incident_members m USING (finding_id)),
dirs AS (
    SELECT broker, topic, partition, min(path) AS partition_dir, min(log_dir) AS log_dir FROM partition_dirs
    WHERE dir_state = 'live' GROUP BY broker, topic, partition),
-- a finding of no partition dir: its broker's log dir (the first, by path, where one label names several)
broker_dirs AS (SELECT broker, min(log_dir) AS log_dir FROM log_dirs GROUP BY broker),
-- a damaged batch a finding names (by its base offset) that another replica of the partition holds with the CRC
-- the damaged one stored, and that CRC holds there: the copy to restore from
damaged AS (
    SELECT m.finding_id, m.cluster_id, m.topic, m.partition, m.broker, m.offset, b.crc
    FROM members m JOIN clustered_batches b
      ON b.broker = m.broker AND b.topic = m.topic AND b.partition = m.partition AND b.base_offset = m.offset
    WHERE NOT b.crc_valid),
intact AS (
    SELECT d.finding_id, concat_ws(', ', array_sort(collect_set(b.broker))) AS intact_on
    FROM damaged d JOIN clustered_batches b
      ON b.cluster_id = d.cluster_id AND b.topic = d.topic AND b.partition = d.partition AND b.broker <> d.broker
     AND b.base_offset = d.offset AND b.crc = d.crc AND b.crc_valid
    GROUP BY d.finding_id)
SELECT m.finding_id, coalesce(d.log_dir, l.log_dir) AS log_dir, d.partition_dir, i.intact_on
FROM members m
LEFT JOIN broker_dirs l ON l.broker = m.broker
LEFT JOIN dirs d ON d.broker = m.broker AND d.topic = m.topic AND d.partition = m.partition
LEFT JOIN intact i ON i.finding_id = m.finding_id
