/*
[table]
doc = """One row per transaction of a partition (a producer's transactional batches up to its COMMIT or ABORT marker;
a marker with nothing open is an empty transaction: a null `first_offset`, `batch_count` 0)."""
output = true
columns = [
    ["producer_id", "bigint", "the producer"],
    ["broker", "string", "the input's label: the broker whose log dir (or log dirs, one label given several) it was read from"],
    ["topic", "string", "the topic"],
    ["partition", "int", "the partition"],
    ["producer_epoch", "int", "its data's epoch (or the marker's)"],
    ["first_offset", "bigint", "its first data batch's base offset"],
    ["last_data_offset", "bigint", "its last data batch's last offset"],
    ["marker_offset", "bigint", "its COMMIT or ABORT marker's offset (null: none)"],
    ["outcome", "string", "`COMMIT`, `ABORT`, `OPEN`; `UNKNOWN`: a marker whose control record was not read, as in kafka-dump-log text without `--deep-iteration`, or an empty control batch the log cleaner kept; `COMMIT` with a null `marker_offset`: a transaction whose data lies below the cleaner offset and whose marker the log cleaner removed past its delete horizon"],
    ["coordinator_epoch", "int", "the marker's coordinator epoch"],
    ["batch_count", "bigint", "its data batches"],
    ["record_count", "bigint", "their records"],
    ["first_timestamp", "bigint", "its first data batch's max timestamp"],
    ["duration_ms", "bigint", "first batch to marker"],
    ["file", "string", "the file it was read from"],
    ["position", "bigint", "the byte position in `file`"],
    ["transactional_id", "string", "its id, where a `__transaction_state` record in the input names the producer id"],
    ["expected_coordinator_partition", "string", "below"],
]
*/
SELECT producer_id, broker, topic, partition, producer_epoch, first_offset, last_data_offset, marker_offset, outcome,
       coordinator_epoch, batch_count, record_count, first_timestamp, duration_ms, file, position, transactional_id,
       expected_coordinator_partition
FROM timed_transactions
