/*
[table]
doc = "Where each partition's LSO moved (lso_sweep's change points)."
output = true
columns = [
    ["broker", "string", "the input's label: the broker whose log dir (or log dirs, one label given several) it was read from"],
    ["topic", "string", "the topic"],
    ["partition", "int", "the partition"],
    ["offset", "bigint", "where the LSO moved"],
    ["last_stable_offset", "bigint", "its new value"],
    ["held_by_producer_id", "bigint", "null: the LSO follows the log end"],
]
*/
SELECT broker, topic, partition, `offset`, last_stable_offset, producer_id AS held_by_producer_id
FROM lso_sweep WHERE row_kind = 'change'
