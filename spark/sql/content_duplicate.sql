/*
[check]
applies = "records_read"

[[finding]]
kind = "content_duplicate"
severity = "warning"
meaning = '''
a new producer id re-sent records another producer id had written (a producer restarted without idempotence
across the restart)'''
fields = ["producer_ids", "matches", "original_offsets", "resent_offsets", "ms_between"]
records = "resent_offsets"
rule = '''
full mode: a re-send. A run of at least `--resend-min-records` (3) consecutive records at the start of a
producer id's history in a partition that equals, record for record (key and value hashes), a consecutive run
among an earlier producer id's last `--resend-tail` (10,000) records there, the new producer id's first write
within `--resend-window` (15 min; 0: no limit) of the earlier one's last write, and after its last record in
the log. A run whose first `--resend-min-records` records stand more than once in the earlier tail is the
stream's own repetition (heartbeats, status and changelog topics), never a re-send. Records of aborted
transactions are left out (`--resend-aborted` brings them back): when a Streams task moves, its new producer
re-writes what the fenced one wrote in a transaction the coordinator aborted, which no read_committed consumer
saw. `producer_ids` ([earlier, new]), `matches` (re-sent records: never more than either producer wrote),
`original_offsets` and `resent_offsets` ([first, last] on each side), `ms_between` (the new producer's first
write after the earlier one's last)'''
compacted = '''
unchanged; for the re-send window, a batch whose baseTimestamp holds its delete horizon (attributes bit 6) or
-1 (an empty batch the cleaner kept) has no create time in its header: its max timestamp stands in'''
reports = ["gaps", "eos"]
*/
-- Reads resends (producers.resends' rows: a run of records a newer producer id re-sent); the `content_duplicate`
-- check.
SELECT 'content_duplicate' AS kind, broker, topic, partition, CAST(NULL AS STRING) AS file,
       CAST(NULL AS BIGINT) AS position, CAST(b_first_offset AS BIGINT) AS offset, CAST(pid_b AS BIGINT) AS producer_id,
       CAST(producer_epoch AS INT) AS producer_epoch,
       format_string('Producer %d re-sent %d records that producer %d had written (offsets %d-%d again at %d-%d, %d ms after producer %d\'s last write): duplicates the broker could not detect.', pid_b, matches, pid_a, a_first_offset, a_last_offset, b_first_offset, b_last_offset, ms_between, pid_a) AS message,
       to_json(named_struct('producer_ids', array(pid_a, pid_b), 'matches', matches, 'original_offsets', array(a_first_offset, a_last_offset), 'resent_offsets', array(b_first_offset, b_last_offset), 'ms_between', ms_between)) AS details FROM resends
