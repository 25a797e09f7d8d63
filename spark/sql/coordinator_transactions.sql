/*
[table]
doc = """One row per transaction of a transactional id, as the transaction coordinator's log records it
(coordinator_txns). Markers are matched as the coordinator writes them (the two logs share no offsets): with the
producer id and epoch of the transaction's PrepareCommit / PrepareAbort record, which TransactionMarkerChannelManager
sends to every partition."""
output = true
applies = "has_transaction_state"
columns = [
    ["cluster_id", "string", "the cluster.id of the broker's meta.properties (empty when unknown)"],
    ["coordinator_partition", "string", "`__transaction_state-<n>`: where its records were read"],
    ["transactional_id", "string", "the transactional id"],
    ["producer_id", "bigint", "ProducerId of its last record"],
    ["producer_epoch", "int", "last"],
    ["first_producer_epoch", "int", "ProducerEpoch of its first record"],
    ["outcome", "string", "`COMMIT`, `ABORT`, `PREPARE_COMMIT`, `PREPARE_ABORT`, `ONGOING`, `NONE` for a lone `Empty`/`Dead`"],
    ["states", "array<string>", "in order"],
    ["partitions", "array<string>", "the partitions it named"],
    ["transaction_timeout_ms", "int", "TransactionTimeoutMs"],
    ["txn_start_timestamp", "bigint", "TransactionStartTimestampMs (null: -1)"],
    ["completed_at", "bigint", "its Complete* record's last update timestamp (null: not completed)"],
    ["coordinator_broker", "string", "the input whose replica of the partition was read (the longest)"],
    ["coordinator_first_offset", "bigint", "its first record's offset"],
    ["coordinator_last_offset", "bigint", "its last record's offset"],
    ["file", "string", "the file it was read from"],
    ["position", "bigint", "the byte position in `file`"],
    ["transaction_version", "int", "the highest ClientTransactionVersion of its records"],
    ["marker_producer_id", "bigint", "the producer id its markers carry"],
    ["marker_producer_epoch", "int", "what its markers carry: its PrepareCommit/PrepareAbort record's producer id and epoch; under Transactions V2 the data's epoch + 1, and for a transaction completed at a rotation the old producer id at epoch 32767 while `producer_id` is the new one"],
    ["expected_coordinator_partition", "string", "the `__transaction_state` partition its id hashes to (`--transaction-state-partitions`)"],
    ["partitions_not_in_input", "array<string>", "named, absent, not judged"],
]
*/
SELECT * EXCEPT (txn_seq) FROM coordinator_txns
