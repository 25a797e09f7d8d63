/*
[table]
doc = """The aborted transactions of each partition: an ABORT marker's range, and whether the `.txnindex` agrees.
An ABORT marker whose data the log cleaner removed is an aborted range as its `.txnindex` entry gives it (first
offset and LSO)."""
output = true
columns = [
    ["broker", "string", "the input's label: the broker whose log dir (or log dirs, one label given several) it was read from"],
    ["topic", "string", "the topic"],
    ["partition", "int", "the partition"],
    ["producer_id", "bigint", "the aborted producer"],
    ["first_offset", "bigint", "the transaction's first offset"],
    ["last_offset", "bigint", "the ABORT marker"],
    ["last_stable_offset", "bigint", "as the broker records it; for an ABORT whose data the log cleaner removed, both from its `.txnindex` entry"],
    ["txnindex_agrees", "boolean", "null for kafka-dump-log text input: no `.txnindex`"],
]
*/
-- kafka-dump-log text has no .txnindex: whether it agrees is unknown there
SELECT broker, topic, partition, producer_id, coalesce(first_offset, index_first_offset) AS first_offset,
       last_offset, coalesce(last_stable_offset, index_last_stable_offset) AS last_stable_offset,
       CASE WHEN dump_text IS NULL THEN coalesce(agrees, false) END AS txnindex_agrees
FROM aborted_transactions LEFT JOIN (SELECT broker, true AS dump_text FROM dump_text_inputs) USING (broker)
WHERE marked AND (first_offset IS NOT NULL OR index_first_offset IS NOT NULL)
