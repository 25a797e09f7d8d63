/*
[table]
doc = "One row per partition, producer id and producer epoch: offsets, sequences, counts, times."
output = true
columns = [
    ["broker", "string", "the input's label: the log dir it was read from"],
    ["topic", "string", "the topic"],
    ["partition", "int", "the partition"],
    ["producer_id", "bigint"],
    ["producer_epoch", "int"],
    ["first_offset", "bigint"],
    ["last_offset", "bigint"],
    ["first_sequence", "int"],
    ["last_sequence", "int"],
    ["batch_count", "bigint"],
    ["record_count", "bigint"],
    ["first_timestamp", "bigint"],
    ["last_timestamp", "bigint"],
    ["is_transactional", "boolean"],
]
*/
SELECT broker, topic, partition, producer_id, producer_epoch, min(base_offset) AS first_offset,
       max(last_offset) AS last_offset, min_by(base_sequence, base_offset) AS first_sequence,
       max_by(last_sequence, base_offset) AS last_sequence, count(1) AS batch_count,
       CAST(sum(count) AS BIGINT) AS record_count, min(base_timestamp) AS first_timestamp,
       max(max_timestamp) AS last_timestamp,
       CAST(max(CAST(is_transactional AS INT)) AS BOOLEAN) AS is_transactional
FROM data_batches GROUP BY broker, topic, partition, producer_id, producer_epoch
