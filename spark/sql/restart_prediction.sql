/*
[table]
doc = """One row per partition dir: what the broker's log loading would do with this disk as it is (restart_predictions:
parsers/restart.py replays LogLoader and LogSegment.recover). A `-delete` dir's row has only `dir_state`,
`clean_shutdown`, `restart_fails` and `reason` (it is loaded, never recovered, then deleted); kafka-dump-log text
inputs and `__cluster_metadata` (loaded by the KRaft metadata log, not LogManager) are not predicted."""
output = true
columns = [
    ["broker", "string", "the input's label: the broker whose log dir (or log dirs, one label given several) it was read from"],
    ["topic", "string", "the topic"],
    ["partition", "int", "the partition"],
    ["dir_state", "string", "`live`, `delete`, `future`, `stray`: a live dir and its `-delete` copy are two rows"],
    ["clean_shutdown", "boolean", "`.kafka_cleanshutdown` at the log dir root"],
    ["recovery_point", "bigint", "the partition's, from `recovery-point-offset-checkpoint`, for a `-future` or `-stray` dir too; 0 when absent or the file is unreadable, as the broker does"],
    ["segments_recovered", "int", "segments `LogSegment.recover` would re-validate, while loading or in `recoverLog`"],
    ["truncate_at_offset", "bigint", "where the first cut leaves the log, as the broker logs \"truncating to offset\""],
    ["truncate_at_file", "string", "the segment recovery truncates"],
    ["truncate_at_position", "bigint", "the byte recovery truncates at"],
    ["bytes_discarded", "bigint", "the bytes a restart discards"],
    ["segments_deleted", "int", "the segments after the cut that recovery deletes"],
    ["offsets_discarded", "array<bigint>", "[first, last] of the valid batches discarded, those behind bytes recovery cannot frame included, or null"],
    ["committed_offsets_discarded", "array<bigint>", "the part below the high watermark, or null"],
    ["restart_fails", "boolean", "the broker would not start: this log cannot be loaded, `restart_would_fail` says why; or its log dir holds a directory Kafka cannot parse, said by that folder's `unknown_file`"],
    ["reason", "string", "the rules applied, in words"],
    ["log_dir", "string", "the log dir holding the partition dir, as the input names it (a broker given several log dirs under one label, JBOD: the one this dir is in); its `.kafka_cleanshutdown` and checkpoints are the ones read"],
    ["offsets_not_seen", "array<bigint>", "[first, last] of the offsets of segments the copy of a live dir lacks that the broker's disk holds (proven missing; last null where nothing says how far; null: the copy lacks none): the prediction is for the disk as given, and where the real disk holds those segments a restart of it may do otherwise; see [An incomplete copy](cli.md#an-incomplete-copy)"],
]
*/
-- offsets_not_seen: the prediction is for the disk as given; it says which offsets of segments the real disk holds
-- the copy lacks (partition_coverage's proven ranges: a tiered log's remote tier or what a crash lost is on no disk)
SELECT r.*,
       CASE WHEN r.dir_state = 'live' AND size(c.missing) > 0
            THEN array(array_min(transform(c.missing, m -> m.first_offset)),
                       CASE WHEN NOT exists(c.missing, m -> m.last_offset IS NULL)
                            THEN array_max(transform(c.missing, m -> m.last_offset)) END) END AS offsets_not_seen
FROM (SELECT broker, topic, partition, dir_state, clean_shutdown, recovery_point, segments_recovered, truncate_at_offset,
       truncate_at_file, truncate_at_position, bytes_discarded, segments_deleted,
       CASE WHEN discarded_first IS NOT NULL THEN array(discarded_first, discarded_last) END AS offsets_discarded,
       CASE WHEN committed_first IS NOT NULL THEN array(committed_first, committed_last) END
           AS committed_offsets_discarded,
       restart_fails, reason, log_dir
FROM restart_predictions WHERE row_kind = 'prediction') r
LEFT JOIN (SELECT broker, topic, partition, filter(missing, m -> m.proven) AS missing FROM partition_coverage) c
  USING (broker, topic, partition)
