/*
[table]
doc = """Per partition of a broker: its last stable offset (LSO = min(first offset of every open transaction, high
watermark)), and the producer holding it back (null when nothing is open)."""
output = true
keep = true
columns = [
    ["broker", "string", "the input's label: the broker whose log dir (or log dirs, one label given several) it was read from"],
    ["topic", "string", "the topic"],
    ["partition", "int", "the partition"],
    ["last_stable_offset", "bigint", "final"],
    ["high_watermark", "bigint", "replication-offset-checkpoint"],
    ["log_end_offset", "bigint", "the partition's log end offset"],
    ["held_by_producer_id", "bigint", "the producer whose open transaction holds the LSO (null: none)"],
    ["stuck", "boolean", "an open transaction holds the LSO below the log end"],
]
*/
SELECT broker, topic, partition,
       least(coalesce(open_first_offset, coalesce(high_watermark, log_end_offset)),
             coalesce(high_watermark, log_end_offset)) AS last_stable_offset,
       high_watermark, log_end_offset, held_by_producer_id, open_first_offset IS NOT NULL AS stuck
FROM partition_ends LEFT JOIN (
    SELECT broker, topic, partition, min_by(producer_id, first_offset) AS held_by_producer_id,
           min(first_offset) AS open_first_offset
    FROM log_transactions WHERE outcome = 'OPEN' AND first_offset IS NOT NULL
    GROUP BY broker, topic, partition)
USING (broker, topic, partition)
