/*
[table]
doc = """The metadata records the controller applies, of each cluster's reference copy only (reference_copies): its
base snapshot's records (base_snapshots), then its log records from the snapshot's end offset on, in offset order,
less those of aborted or unfinished metadata transactions (KIP-868: BeginTransactionRecord .. EndTransactionRecord
apply; records after a Begin that an AbortTransactionRecord closes, or that nothing closes at the end of the log, do
not: MetadataLoader) and the transaction records themselves."""
keep = true
applies = "kraft"
like = "metadata_records"
*/
WITH kept AS (
    SELECT * EXCEPT (base_snapshot)
    FROM metadata_records
         JOIN (SELECT /*+ BROADCAST(r) */ cluster_id, metadata_broker FROM reference_copies r)
             USING (cluster_id, metadata_broker)
         LEFT JOIN (SELECT cluster_id, metadata_broker, base_snapshot FROM base_snapshots)
             USING (cluster_id, metadata_broker)
    WHERE (snapshot_offset IS NOT NULL AND snapshot_offset <=> base_snapshot)
       OR (snapshot_offset IS NULL AND (base_snapshot IS NULL OR metadata_offset >= base_snapshot))),
-- a Begin opens, an End or Abort closes; the next Begin cannot come earlier
marked AS (
    SELECT *, sum(CAST(record_type = 'BEGIN_TRANSACTION_RECORD' AS INT)) OVER (
                  PARTITION BY cluster_id, metadata_broker ORDER BY metadata_offset, record_index
                  ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS txn,
              coalesce(sum(CAST(record_type IN ('END_TRANSACTION_RECORD', 'ABORT_TRANSACTION_RECORD') AS INT)) OVER (
                  PARTITION BY cluster_id, metadata_broker ORDER BY metadata_offset, record_index
                  ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS closed_before
    FROM kept),
closed AS (
    SELECT *, first(CASE WHEN record_type IN ('END_TRANSACTION_RECORD', 'ABORT_TRANSACTION_RECORD')
                         THEN record_type END, true) OVER (
                  PARTITION BY cluster_id, metadata_broker, txn ORDER BY metadata_offset, record_index
                  ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS outcome
    FROM marked)
SELECT * EXCEPT (txn, closed_before, outcome) FROM closed
WHERE (NOT txn > closed_before OR outcome = 'END_TRANSACTION_RECORD')
  AND record_type NOT IN ('BEGIN_TRANSACTION_RECORD', 'END_TRANSACTION_RECORD', 'ABORT_TRANSACTION_RECORD')
