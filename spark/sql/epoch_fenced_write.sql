/*
[check]
family = "coordinator"
applies = "has_transaction_state"

[[finding]]
kind = "epoch_fenced_write"
severity = "error"
meaning = "a transactional batch written after the coordinator fenced its producer epoch"
fields = ["transactional_id", "fenced_at", "fencing_epoch", "written_at", "batches", "expected_coordinator_partition", "evidence", "clock_skew_ms"]
rule = '''
a transactional batch created (base timestamp, the client's clock) more than `--clock-skew` (200 ms) after the
coordinator recorded a higher epoch for its producer id (the record's timestamp, the coordinator's clock).
Under Transactions V2 every end of a transaction bumps the epoch, so a client whose clock runs a few ms ahead
stamps its last batches after its own PrepareCommit: the tolerance is for that. Within a partition,
the zombie-epoch rule judges by log order and needs no clock. `transactional_id`, `fenced_at`, `fencing_epoch`,
`written_at`, `batches`, `expected_coordinator_partition`, `evidence` (`coordinator_clock`), `clock_skew_ms`'''
compacted = '''
unchanged; a batch whose baseTimestamp holds its delete horizon (attributes bit 6) or -1 (an empty batch the
cleaner kept) has no create time in its header: its max timestamp stands in'''
reports = ["eos"]
event = "producer {producer_id} ({transactional_id}) wrote to {topic}-{partition} at epoch {producer_epoch} after the coordinator fenced it (epoch {fencing_epoch})"
at = "written_at"
clock = "producer's CreateTime"

[[finding.action]]
phase = "verify"
command = "# find and stop the producer instance still running transactional id {transactional_id} at epoch {producer_epoch} (fenced at {fenced_at})"
why = "a fenced producer that keeps writing is a zombie: its records are out of order with its successor's"
destructive = false
*/
-- The `epoch_fenced_write` check: reads `clustered_batches` (the clustered batches table: cluster_id,
-- producer_id, producer_epoch, base_offset, base_timestamp, file, position, magic, is_transactional, is_control),
-- `coordinator_log` (coordinator_log: cluster_id, producer_id, producer_epoch, last_update_timestamp) and
-- `transactional_ids` (transactional_ids with expected_coordinator_partition).
--
-- The batch's timestamp is the client's clock, the record's the coordinator's: under TV2 every EndTxn bumps the
-- epoch (TransactionMetadata.prepareAbortOrCommit), so the last batches of every transaction of a client whose clock
-- runs ahead would look written after their own PrepareCommit. A batch counts only when it is more than
-- `clock_skew_ms` after the fence; within a partition, log order (the zombie-epoch rule) needs no clock.
WITH fenced AS (
     SELECT broker, topic, partition, cluster_id, producer_id, producer_epoch, base_offset, file, position,
            base_timestamp, min_by(fencing_epoch, since) AS fencing_epoch, min(since) AS fenced_at
     FROM (SELECT * FROM clustered_batches WHERE magic = 2 AND is_transactional AND NOT is_control AND producer_id >= 0) JOIN (
         SELECT cluster_id, producer_id, producer_epoch AS fencing_epoch,
                min(last_update_timestamp) AS since
         FROM coordinator_log GROUP BY cluster_id, producer_id, producer_epoch) USING (cluster_id, producer_id)
     WHERE fencing_epoch > producer_epoch AND base_timestamp > since + :clock_skew_ms
     GROUP BY broker, topic, partition, cluster_id, producer_id, producer_epoch, base_offset, file, position,
              base_timestamp),
 firsts AS (
     SELECT broker, topic, partition, cluster_id, producer_id, producer_epoch,
            min(base_offset) AS base_offset, min_by(file, base_offset) AS file,
            min_by(position, base_offset) AS position, min_by(fenced_at, base_offset) AS fenced_at,
            min_by(fencing_epoch, base_offset) AS fencing_epoch,
            min_by(base_timestamp, base_offset) AS written_at, count(1) AS batches
     FROM fenced GROUP BY broker, topic, partition, cluster_id, producer_id, producer_epoch)
SELECT 'epoch_fenced_write' AS kind, broker, topic, partition, CAST(file AS STRING) AS file,
       CAST(position AS BIGINT) AS position, CAST(base_offset AS BIGINT) AS offset, CAST(producer_id AS BIGINT) AS producer_id,
       CAST(producer_epoch AS INT) AS producer_epoch,
       format_string('Transactional id %s (producer %d): %d batches from offset %d were written by epoch %d at %d, %d ms after the coordinator fenced it with epoch %d at %d (clock tolerance %d ms).', coalesce(transactional_id, '?'), producer_id, batches, base_offset, producer_epoch, written_at, written_at - fenced_at, fencing_epoch, fenced_at, :clock_skew_ms) AS message,
       to_json(named_struct('transactional_id', transactional_id, 'fenced_at', fenced_at, 'fencing_epoch', fencing_epoch, 'written_at', written_at, 'batches', batches, 'expected_coordinator_partition', expected_coordinator_partition, 'evidence', 'coordinator_clock', 'clock_skew_ms', :clock_skew_ms)) AS details FROM firsts LEFT JOIN transactional_ids USING (cluster_id, producer_id)
