/*
[table]
doc = """One row per partition dir (live, `-delete`, `-future` and `-stray` alike: LogLoader recovers -future and
-stray dirs like live ones, and loads -delete ones) with its segments as the log loader sees them (each with what
`LogSegment.recover` would see of it: segment_recovery's `recovery`, and its .txnindex error: txnindex_errors) and
its TopicPartition's checkpoints, as LogManager.loadLog looks them up, and the log dir holding it (`log_dir`: its
marker and checkpoints are the ones read). kafka-dump-log text inputs are not log dirs:
not predicted."""
columns = """
broker string, topic string, partition int, dir_state string, dir string, log_dir string,
segments array<struct<file: string, base_offset: bigint, size: int, has_offset_index: boolean,
txnindex_error: string, txnindex_error_position: bigint, recovery: string>>, recovery_point bigint,
log_start_offset bigint, high_watermark bigint, clean_shutdown boolean, recovery_checkpoint_unreadable boolean,
refused_dirs array<string>"""
*/
WITH states AS (
    SELECT broker, topic, partition, dir_state, regexp_extract(file, '^(.*)/[^/]*$', 1) AS dir, file, base_offset,
           size, coalesce(has_offset_index, true) AS has_offset_index, txnindex_error, txnindex_error_position,
           recovery
    FROM every_dir_segment_recovery LEFT JOIN txnindex_errors USING (broker, topic, partition, file)
         LEFT ANTI JOIN dump_text_inputs USING (broker))
SELECT p.*, l.clean_shutdown, l.recovery_checkpoint_unreadable, l.refused_dirs FROM (
    SELECT * FROM (
        SELECT broker, topic, partition, dir_state, dir, regexp_extract(dir, '^(.*)/[^/]*$', 1) AS log_dir,
               collect_list(struct(file, base_offset, size, has_offset_index, txnindex_error, txnindex_error_position,
                                   recovery)) AS segments
        FROM states GROUP BY broker, topic, partition, dir_state, dir)
    LEFT JOIN (SELECT broker, topic, partition, recovery_point, log_start_offset, high_watermark
               FROM partition_checkpoints) USING (broker, topic, partition)) p
-- the marker and checkpoints of the log dir holding the partition dir (JBOD: a broker label has several)
LEFT JOIN log_dirs l ON l.broker = p.broker AND l.log_dir = p.log_dir
