/*
[table]
doc = """The transactional batches and markers of log_batches with `txn_index`: the number of its producer's markers
before the row (a marker closes the transaction with its own index)."""
like = "log_batches"
columns = "txn_index bigint"
*/
SELECT *, coalesce(sum(CAST(is_control AS INT)) OVER (
            PARTITION BY broker, topic, partition, producer_id
            ORDER BY base_offset, segment_base_offset, `position`
            ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS txn_index
FROM log_batches
WHERE magic = 2 AND producer_id >= 0 AND is_transactional AND crc_valid
