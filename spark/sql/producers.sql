/*
[table]
doc = "One row per partition, producer id and producer epoch: offsets, sequences, counts, times."
output = true
columns = [
    ["broker", "string", "the input's label: the broker whose log dir (or log dirs, one label given several) it was read from"],
    ["topic", "string", "the topic"],
    ["partition", "int", "the partition"],
    ["producer_id", "bigint", "the producer id"],
    ["producer_epoch", "int", "its epoch"],
    ["first_offset", "bigint", "its first batch's base offset"],
    ["last_offset", "bigint", "its last batch's last offset"],
    ["first_sequence", "int", "its first batch's base sequence"],
    ["last_sequence", "int", "its last batch's last sequence"],
    ["batch_count", "bigint", "its batches"],
    ["record_count", "bigint", "their records"],
    ["first_timestamp", "bigint", "its first batch's create time"],
    ["last_timestamp", "bigint", "its last max timestamp"],
    ["is_transactional", "boolean", "any of its batches is transactional"],
]
*/
SELECT broker, topic, partition, producer_id, producer_epoch, min(base_offset) AS first_offset,
       max(last_offset) AS last_offset, min_by(base_sequence, base_offset) AS first_sequence,
       max_by(last_sequence, base_offset) AS last_sequence, count(1) AS batch_count,
       CAST(sum(count) AS BIGINT) AS record_count, min(base_timestamp) AS first_timestamp,
       max(max_timestamp) AS last_timestamp,
       CAST(max(CAST(is_transactional AS INT)) AS BOOLEAN) AS is_transactional
FROM data_batches GROUP BY broker, topic, partition, producer_id, producer_epoch
