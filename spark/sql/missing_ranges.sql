/*
[table]
doc = """What each live partition's copy lacks: one row per offset range the input proves the partition held and the
copy does not (segment_files, segments, partition_checkpoints, leader_epochs, partition_dirs, log_dirs). `cause`:
`segment_files_without_log`, `segment_chain_gap`, `beyond_log_end`, `below_first_segment`; `proven`: the range held
records that were on disk for good (a `segment_missing` finding names it); otherwise a crash may have lost them and
the partition is only incomplete."""
keep = true
columns = "broker string, topic string, partition int, cause string, absent_segment bigint, first_offset bigint, last_offset bigint, file string, proven boolean, evidence array<string>"
*/
-- What each live partition's copy lacks, over segment_files (every segment file and metadata snapshot the dir
-- lists), segments, partition_checkpoints, leader_epochs, partition_dirs and log_dirs: one row per offset range the
-- input proves the partition held and the copy does not. `cause`:
--   `segment_files_without_log`: an `.index`, `.timeindex` or `.txnindex` whose `.log` is absent. Kafka deletes a
--     segment's files together (LogSegment.deleteIfExists, after renaming them all `.deleted`), and LogLoader drops an
--     index it finds without its log at the next start: the segment was there when the copy was made. The range runs
--     from its base offset to the next segment's, or (the last segment) to its last index entry or the farthest
--     offset the partition is known to have reached.
--   `segment_chain_gap`: offsets between one segment's last batch and the next segment's base offset. A log appends
--     offsets densely and rolls a segment at the next offset (UnifiedLog.maybeRoll); only the log cleaner leaves
--     holes (a compacted partition: a cleaner-offset-checkpoint entry, or an internal topic Kafka always compacts),
--     and damage at the earlier segment's tail may hold the offsets itself. Neither: the copy lacks a segment.
--   `beyond_log_end`: the copy's last segment ends cleanly at offset E, but the partition reached further: its high
--     watermark or recovery point (UnifiedLog bounds both by the log end offset), a producer snapshot
--     (ProducerStateManager names a snapshot after the log end offset it was taken at), a leader-epoch entry
--     (LeaderEpochFileCache assigns an epoch at the log end offset), its log start offset, or a KRaft metadata
--     snapshot (its end offset) lie beyond E. With no segment at all, the range starts at the lowest offset the
--     partition is known to have held (log start, first leader epoch, a producer snapshot).
--   `below_first_segment`: a leader-epoch entry below the copy's first segment (see the branch below) on a log
--     that is not tiered: the copy lacks its first segments; or a log-start-offset-checkpoint entry below it (a
--     tiered log's remote tier, or segments the copy lacks: not proven). A log that starts late with neither is
--     retention's.
-- `proven`: the range held records that were on disk for good, so the copy, not a crash, lost them: companion files
-- without their log; otherwise a clean-shutdown marker (the broker flushed every log), or a range starting below the
-- recovery point (LogManager checkpoints it only once the log is flushed up to it) or below a KRaft metadata snapshot
-- (only a committed, flushed metadata log is snapshotted). Data above the recovery point of a broker that did not
-- shut down cleanly may have been lost in a crash: the range is kept (the partition is not complete) but names no
-- missing segment. Rules read at apache/kafka 1eb76443 (UnifiedLog.updateHighWatermark, LocalLog, LogLoader,
-- ProducerStateManager, LeaderEpochFileCache, LogManager.checkpointRecoveryOffsetsInDir, KafkaRaftClient).
WITH
-- the log dir of each live partition dir: its clean-shutdown marker is the one that counts (JBOD: one per log dir)
dirs AS (SELECT broker, topic, partition, min(log_dir) AS log_dir FROM partition_dirs WHERE dir_state = 'live'
         GROUP BY broker, topic, partition),
files AS (
    SELECT broker, topic, partition, base_offset,
           max(CASE WHEN file_type = 'log' THEN 1 ELSE 0 END) = 1 AS has_log,
           max(CASE WHEN file_type != 'log' THEN 1 ELSE 0 END) = 1 AS has_companion,
           max(last_offset) AS companion_last_offset,
           min(CASE WHEN file_type != 'log' THEN file END) AS companion_file,
           sort_array(collect_list(CASE WHEN file_type != 'log' THEN regexp_extract(file, '[^/]*$', 0) END))
             AS companion_names
    FROM segment_files WHERE file_type IN ('log', 'index', 'timeindex', 'txnindex')
    GROUP BY broker, topic, partition, base_offset),
chain AS (
    SELECT f.*, s.last_offset, s.file AS log_file, coalesce(s.valid_bytes >= s.size, true) AS clean_tail,
           lead(f.base_offset) OVER w AS next_base_offset, lead(f.has_log) OVER w AS next_has_log
    FROM files f
    LEFT JOIN (SELECT broker, topic, partition, base_offset, last_offset, file, valid_bytes, size FROM segments) s
        USING (broker, topic, partition, base_offset)
    WINDOW w AS (PARTITION BY f.broker, f.topic, f.partition ORDER BY f.base_offset)),
snapshots AS (
    SELECT broker, topic, partition,
           min(CASE WHEN file_type = 'snapshot' THEN base_offset END) AS min_snapshot,
           max(CASE WHEN file_type = 'snapshot' THEN base_offset END) AS max_snapshot,
           max(CASE WHEN file_type = 'metadata_snapshot' THEN base_offset END) AS max_metadata_snapshot
    FROM segment_files WHERE file_type IN ('snapshot', 'metadata_snapshot') GROUP BY broker, topic, partition),
epochs AS (
    SELECT broker, topic, partition, min(start_offset) AS min_epoch_start, max(start_offset) AS max_epoch_start
    FROM leader_epochs GROUP BY broker, topic, partition),
reach AS (
    SELECT d.broker, d.topic, d.partition, c.high_watermark, c.recovery_point, c.log_start_offset, c.cleaner_offset,
           s.max_snapshot, s.max_metadata_snapshot, e.max_epoch_start, e.min_epoch_start,
           coalesce(l.clean_shutdown, false) AS clean_shutdown,
           -- the farthest offset the partition is known to have reached (its log end offset at least that far)
           greatest(c.high_watermark, c.recovery_point, c.log_start_offset, s.max_snapshot, s.max_metadata_snapshot,
                    e.max_epoch_start) AS reached,
           -- offsets below it were flushed (a crash could not lose them)
           greatest(c.recovery_point, s.max_metadata_snapshot) AS flushed_to,
           -- with no segment: the lowest offset the partition is known to have held
           least(c.log_start_offset, e.min_epoch_start, s.min_snapshot) AS known_start,
           d.topic IN ('__consumer_offsets', '__transaction_state', '__share_group_state')
             OR c.cleaner_offset IS NOT NULL AS compacted
    FROM dirs d
    LEFT JOIN partition_checkpoints c USING (broker, topic, partition)
    LEFT JOIN snapshots s USING (broker, topic, partition)
    LEFT JOIN epochs e USING (broker, topic, partition)
    LEFT JOIN log_dirs l ON l.broker = d.broker AND l.log_dir = d.log_dir),
evidence AS (
    SELECT broker, topic, partition, reached, flushed_to, clean_shutdown, compacted, known_start, min_epoch_start,
           log_start_offset,
           filter(array(
               CASE WHEN high_watermark IS NOT NULL THEN format_string('high watermark %d', high_watermark) END,
               CASE WHEN recovery_point IS NOT NULL THEN format_string('recovery point %d', recovery_point) END,
               CASE WHEN max_snapshot IS NOT NULL THEN format_string('producer snapshot %d', max_snapshot) END,
               CASE WHEN max_epoch_start IS NOT NULL
                    THEN format_string('leader-epoch-checkpoint entry at %d', max_epoch_start) END,
               CASE WHEN max_metadata_snapshot IS NOT NULL
                    THEN format_string('metadata snapshot ending at %d', max_metadata_snapshot) END,
               CASE WHEN clean_shutdown THEN 'clean-shutdown marker' END), x -> x IS NOT NULL) AS reached_by
    FROM reach),
ranges AS (
    -- companion files without their .log
    SELECT c.broker, c.topic, c.partition, 'segment_files_without_log' AS cause, c.base_offset AS absent_segment,
           c.base_offset AS first_offset,
           CASE WHEN c.next_base_offset IS NOT NULL THEN c.next_base_offset - 1
                WHEN greatest(c.companion_last_offset, e.reached - 1) >= c.base_offset
                THEN greatest(c.companion_last_offset, e.reached - 1) END AS last_offset,
           c.companion_file AS file, true AS proven,
           concat(transform(c.companion_names, n -> format_string('%s without its .log', n)),
                  CASE WHEN c.companion_last_offset IS NOT NULL
                       THEN array(format_string('its index reaches offset %d', c.companion_last_offset))
                       ELSE array() END,
                  CASE WHEN c.next_base_offset IS NULL AND e.reached - 1 > coalesce(c.companion_last_offset, -1)
                       THEN e.reached_by ELSE array() END) AS evidence
    FROM chain c JOIN evidence e USING (broker, topic, partition)
    WHERE NOT c.has_log AND c.has_companion
    UNION ALL
    -- offsets between two segments that neither the cleaner nor damage explains
    SELECT c.broker, c.topic, c.partition, 'segment_chain_gap', CAST(NULL AS BIGINT),
           coalesce(c.last_offset + 1, c.base_offset), c.next_base_offset - 1, c.log_file,
           e.clean_shutdown OR coalesce(c.last_offset + 1, c.base_offset) < e.flushed_to,
           array(format_string('%s ends at offset %s and the next segment starts at %d', regexp_extract(c.log_file, '[^/]*$', 0),
                               coalesce(CAST(c.last_offset AS STRING), 'none (no batch)'), c.next_base_offset))
    FROM chain c JOIN evidence e USING (broker, topic, partition)
    WHERE c.has_log AND c.next_has_log AND c.next_base_offset > coalesce(c.last_offset + 1, c.base_offset)
      AND c.clean_tail AND NOT e.compacted
    UNION ALL
    -- the partition reached beyond the copy's last segment, which ends cleanly
    SELECT broker, topic, partition, 'beyond_log_end', CAST(NULL AS BIGINT), copy_end, reached - 1, log_file,
           clean_shutdown OR copy_end < flushed_to,
           concat(array(format_string('%s ends at offset %s', regexp_extract(log_file, '[^/]*$', 0),
                                      coalesce(CAST(last_offset AS STRING), 'none (no batch)'))), reached_by)
    FROM (SELECT c.*, e.reached, e.reached_by, e.flushed_to, e.clean_shutdown,
                 coalesce(c.last_offset + 1, c.base_offset) AS copy_end
          FROM chain c JOIN evidence e USING (broker, topic, partition)
          WHERE c.next_base_offset IS NULL AND c.has_log AND c.clean_tail)
    WHERE reached > copy_end
    UNION ALL
    -- the log began below the copy's first segment: retention moves the first leader-epoch entry up to the new log
    -- start (UnifiedLog.maybeIncrementLogStartOffset, LeaderEpochFileCache.truncateFromStart), so an entry below the
    -- first segment names offsets that were not deleted; tiered storage deletes local segments without moving it,
    -- and its log start (below the local segments) is then the one log-start-offset-checkpoint entry below them
    -- (LogManager.checkpointLogStartOffsetsInDir writes one only above the first segment, or for a tiered log)
    -- (a tiered log's offsets below its local segments are in the remote tier, not in the input either: the range
    -- makes the partition incomplete, and names no missing segment)
    SELECT c.broker, c.topic, c.partition, 'below_first_segment', CAST(NULL AS BIGINT),
           coalesce(CASE WHEN e.log_start_offset < c.base_offset THEN e.log_start_offset END, e.min_epoch_start),
           c.base_offset - 1, coalesce(c.log_file, c.companion_file),
           NOT coalesce(e.log_start_offset < c.base_offset, false)
             AND (e.clean_shutdown OR e.min_epoch_start < e.flushed_to),
           CASE WHEN e.log_start_offset < c.base_offset
                THEN array(format_string('log-start-offset-checkpoint says the log starts at %d, below the first segment %020d (the remote tier of a tiered log, or segments the copy lacks)',
                                         e.log_start_offset, c.base_offset))
                ELSE array(format_string('leader-epoch-checkpoint entry at %d, below the first segment %020d',
                                         e.min_epoch_start, c.base_offset)) END
    FROM (SELECT *, row_number() OVER (PARTITION BY broker, topic, partition ORDER BY base_offset) AS rank_
          FROM chain) c
    JOIN evidence e USING (broker, topic, partition)
    WHERE c.rank_ = 1 AND (e.min_epoch_start < c.base_offset OR e.log_start_offset < c.base_offset)
    UNION ALL
    -- no segment file at all, though the partition held offsets
    SELECT e.broker, e.topic, e.partition, 'beyond_log_end', CAST(NULL AS BIGINT), e.known_start, e.reached - 1,
           CAST(NULL AS STRING), e.clean_shutdown OR e.known_start < e.flushed_to,
           concat(array('no segment in the partition dir'), e.reached_by)
    FROM evidence e LEFT ANTI JOIN chain c USING (broker, topic, partition)
    WHERE e.reached > e.known_start)
SELECT broker, topic, partition, cause, absent_segment, first_offset, last_offset, file, proven, evidence
FROM ranges
