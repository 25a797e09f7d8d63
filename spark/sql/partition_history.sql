/*
[table]
doc = """One row per PartitionRecord and applied PartitionChangeRecord of each cluster's metadata log (and per
partition a ClearElrRecord emptied the ELR of: elr_clears), with the partition's registration after it, as the
controller applies them (Apache Kafka 4.0, trunk of Oct 2024, unchanged in 4.1). A PartitionRecord sets a partition's
whole registration (PartitionRegistration(PartitionRecord); an absent ELR or last-known ELR is empty); a
PartitionChangeRecord is merged as PartitionRegistration.merge does: a null (absent) list keeps the field; Leader -2
(NO_LEADER_CHANGE) keeps leader and leader epoch, any other Leader (-1 included, and the same leader again) sets it
and bumps the leader epoch by one; every record bumps the partition epoch by one; LeaderRecoveryState -1 keeps the
state. An election is judged against the registration before the record (PartitionChangeBuilder.electLeader): a
leader from the ISR is `clean`, from the ELR (KIP-966) `elr`, from neither `unclean`; Leader -1 is `offline`. A change
record of a partition no PartitionRecord registered (before the base snapshot) keeps what it sets, with null epochs
and election."""
output = true
keep = true
applies = "kraft"
columns = [
    ["cluster_id", "string", "the cluster.id of the broker's meta.properties (empty when unknown)"],
    ["metadata_broker", "string", "the input whose copy of the metadata log was replayed (the copy that reaches furthest)"],
    ["topic", "string", "the topic"],
    ["topic_id", "string", "the topic's id"],
    ["partition", "int", "the partition"],
    ["metadata_offset", "bigint", "the record's offset in the metadata log"],
    ["timestamp", "bigint", "its batch's timestamp"],
    ["record_type", "string", "`PARTITION_RECORD`, `PARTITION_CHANGE_RECORD`, `CLEAR_ELR_RECORD`"],
    ["leader", "int", "the leader after it (-1: none)"],
    ["leader_epoch", "bigint", "the leader epoch after it"],
    ["partition_epoch", "bigint", "the partition epoch after it"],
    ["isr", "array<int>", "the in-sync replicas after it"],
    ["elr", "array<int>", "the eligible leader replicas (KIP-966)"],
    ["last_known_elr", "array<int>", "the last known ELR"],
    ["replicas", "array<int>", "the replicas"],
    ["adding_replicas", "array<int>", "replicas being added (a reassignment)"],
    ["removing_replicas", "array<int>", "replicas being removed"],
    ["leader_recovery_state", "string", "`RECOVERED`/`RECOVERING`"],
    ["directories", "array<string>", "each replica's log dir (directory id, KIP-858)"],
    ["previous_leader", "int", "the leader before it"],
    ["previous_isr", "array<int>", "the ISR before it"],
    ["previous_elr", "array<int>", "the ELR before it"],
    ["election", "string", "`initial` a PartitionRecord written in the log, at the partition's creation; `snapshot` a PartitionRecord of the metadata snapshot the replay starts from: the partition's state there, a baseline, not an election; `clean` a new leader from the ISR, `elr` from the ELR, `unclean` from neither, `offline` leader -1, `none` no leader change"],
    ["file", "string", "the file it was read from"],
    ["position", "bigint", "the byte position in `file`"],
]
*/
WITH rows AS (
    SELECT cluster_id, topic_id, metadata_broker, metadata_offset, record_index, timestamp, record_type, partition, leader, isr, elr, last_known_elr, replicas, adding_replicas, removing_replicas, leader_recovery_state, directories, leader_epoch, partition_epoch, file, position FROM applied_records
    WHERE record_type IN ('PARTITION_RECORD', 'PARTITION_CHANGE_RECORD')
    UNION ALL
    SELECT cluster_id, topic_id, metadata_broker, metadata_offset, record_index, timestamp, record_type, partition, leader, isr, elr, last_known_elr, replicas, adding_replicas, removing_replicas, leader_recovery_state, directories, leader_epoch, partition_epoch, file, position FROM elr_clears),
registered AS (
    -- a PartitionRecord starts a registration; change records merge into the one before them
    SELECT *, record_type = 'PARTITION_RECORD' AS is_record, record_type = 'PARTITION_CHANGE_RECORD' AS is_change,
           record_type = 'CLEAR_ELR_RECORD' AS is_clear,
           sum(CAST(record_type = 'PARTITION_RECORD' AS INT)) OVER (
               PARTITION BY cluster_id, topic_id, partition ORDER BY metadata_offset, record_index
               ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS registration
    FROM rows),
merged AS (
    SELECT *,
           last(CASE WHEN is_record OR leader != -2 THEN leader END, true) OVER reg AS leader_now,
           CASE WHEN registration > 0 THEN first(leader_epoch) OVER reg
                + sum(CAST(is_change AND leader != -2 AS INT)) OVER reg END AS leader_epoch_now,
           last(isr, true) OVER reg AS isr_now, last(CASE WHEN is_record THEN coalesce(elr, CAST(array() AS ARRAY<INT>)) ELSE elr END, true) OVER reg AS elr_now,
           last(CASE WHEN is_record THEN coalesce(last_known_elr, CAST(array() AS ARRAY<INT>)) ELSE last_known_elr END, true) OVER reg AS last_known_elr_now, last(replicas, true) OVER reg AS replicas_now,
           last(adding_replicas, true) OVER reg AS adding_now, last(removing_replicas, true) OVER reg AS removing_now,
           last(CASE WHEN leader_recovery_state != -1 THEN leader_recovery_state END, true) OVER reg AS lrs_now,
           last(directories, true) OVER reg AS directories_now
    FROM registered
    WINDOW reg AS (PARTITION BY cluster_id, topic_id, partition, registration ORDER BY metadata_offset, record_index
                   ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)),
previous AS (
    SELECT *, lag(leader_now) OVER ordered AS previous_leader, lag(isr_now) OVER ordered AS previous_isr,
           lag(elr_now) OVER ordered AS previous_elr, lag(last_known_elr_now) OVER ordered AS previous_last_known_elr
    FROM merged
    WINDOW ordered AS (PARTITION BY cluster_id, topic_id, partition, registration
                       ORDER BY metadata_offset, record_index)),
cleared AS (
    -- a ClearElrRecord changes (and bumps the partition epoch of) only the partitions with an ELR or last-known ELR
    SELECT *, is_clear AND (size(coalesce(previous_elr, array())) > 0
                            OR size(coalesce(previous_last_known_elr, array())) > 0) AS cleared
    FROM previous),
epochs AS (
    SELECT *, CASE WHEN registration > 0 THEN first(partition_epoch) OVER reg
                   + sum(CAST(is_change OR cleared AS INT)) OVER reg END AS partition_epoch_now
    FROM cleared
    WINDOW reg AS (PARTITION BY cluster_id, topic_id, partition, registration ORDER BY metadata_offset, record_index
                   ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)),
names AS (
    SELECT cluster_id, topic_id, first(topic) AS topic FROM applied_records WHERE record_type = 'TOPIC_RECORD'
    GROUP BY cluster_id, topic_id)
SELECT cluster_id, metadata_broker, topic, topic_id, partition, metadata_offset, timestamp, record_type,
       leader_now AS leader, leader_epoch_now AS leader_epoch, partition_epoch_now AS partition_epoch,
       isr_now AS isr, elr_now AS elr, last_known_elr_now AS last_known_elr, replicas_now AS replicas,
       adding_now AS adding_replicas, removing_now AS removing_replicas,
       CASE WHEN lrs_now = 0 THEN 'RECOVERED' WHEN lrs_now = 1 THEN 'RECOVERING' END AS leader_recovery_state,
       directories_now AS directories, previous_leader, previous_isr, previous_elr,
       -- a PartitionRecord of the metadata snapshot the replay starts from is the partition's state there (a
       -- baseline), not a leader elected there
       CASE WHEN is_record AND endswith(file, '.checkpoint') THEN 'snapshot'
            WHEN is_record THEN 'initial'
            WHEN leader = -2 THEN 'none'
            WHEN NOT registration > 0 THEN CAST(NULL AS STRING)
            WHEN leader_now = -1 THEN 'offline'
            WHEN array_contains(previous_isr, leader_now) THEN 'clean'
            WHEN array_contains(previous_elr, leader_now) THEN 'elr'
            ELSE 'unclean' END AS election,
       file, position
FROM epochs LEFT JOIN names USING (cluster_id, topic_id)
WHERE NOT is_clear OR cleared
