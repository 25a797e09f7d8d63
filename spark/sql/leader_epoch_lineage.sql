/*
[table]
doc = """Per partition, broker and leader epoch: where leader-epoch-checkpoint and the batches say the epoch began."""
output = true
columns = [
    ["broker", "string", "the input's label: the broker whose log dir (or log dirs, one label given several) it was read from"],
    ["topic", "string", "the topic"],
    ["partition", "int", "the partition"],
    ["epoch", "int", "a leader epoch"],
    ["checkpoint_start_offset", "bigint", "leader-epoch-checkpoint"],
    ["batch_start_offset", "bigint", "first batch carrying the epoch"],
    ["agrees", "boolean", "null: an epoch with no batches, as after an election with no writes"],
]
*/
SELECT broker, topic, partition, epoch, checkpoint_start_offset, batch_start_offset,
       CASE WHEN batch_start_offset IS NULL THEN CAST(NULL AS BOOLEAN)
            ELSE checkpoint_start_offset <=> batch_start_offset END AS agrees
FROM (SELECT broker, topic, partition, epoch, start_offset AS checkpoint_start_offset FROM leader_epochs)
     FULL OUTER JOIN (SELECT broker, topic, partition, partition_leader_epoch AS epoch,
                             min(base_offset) AS batch_start_offset
                      FROM log_batches WHERE magic = 2 AND crc_valid
                      GROUP BY broker, topic, partition, partition_leader_epoch)
     USING (broker, topic, partition, epoch)
