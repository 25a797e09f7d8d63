/*
[table]
doc = """Per broker (input label), the image time: the moment its disk was imaged, estimated as the newest timestamp
its files carry (never a file's modification time, which a copy resets). Every age a check judges (a hanging
transaction, a pending offset commit, a blocked cleaner, a stuck remote segment, a transaction stuck preparing) and
whether a partition missing a marker was imaged after the coordinator completed the transaction are judged against the image time of the broker holding the
partition. A timestamp is the broker's clock (`broker`: a LogAppendTime batch, a control batch, a batch of an internal
topic, which the broker writes itself, a `__cluster_metadata` record of the log or a snapshot, a
`__remote_log_metadata` event) or a producer's (`producer`: a CreateTime batch of any other topic). A producer's
clock may run far ahead: a CreateTime more than an hour (Kafka 4.0's default `log.message.timestamp.after.max.ms`,
KIP-1030) beyond the broker's newest own timestamp is set aside (`set_aside_time`), never the image time; without
any broker-clock timestamp the newest CreateTime stands (`clock` `producer`). `--image-time` sets it for every
broker (`clock` `override`)."""
output = true
keep = true
columns = [
    ["broker", "string", "the input's label"],
    ["image_time", "bigint", "the moment the broker's disk was imaged (epoch ms): `--image-time`, else `estimated_time`"],
    ["source", "string", "`topic-partition` whose file carries the image time (`--image-time` when overridden; null: no timestamp in the broker's files)"],
    ["file", "string", "the file that carries it"],
    ["clock", "string", "`broker` (its own or its controller's clock), `producer` (a CreateTime no broker-clock timestamp confirms) or `override` (`--image-time`)"],
    ["estimated_time", "bigint", "the newest timestamp of the broker's files, a producer's clock far ahead set aside (null: none)"],
    ["newest_broker_time", "bigint", "the newest timestamp the broker's or its controller's clock wrote (null: none)"],
    ["set_aside_time", "bigint", "the newest CreateTime more than an hour beyond `newest_broker_time`: a producer's clock ahead, not the image time (null: none)"],
    ["set_aside_source", "string", "`topic-partition` that carries `set_aside_time`"],
]
*/
-- Reads every_dir_batches (every partition dir: live, -future, -delete, stray), metadata_records (the metadata log and
-- its snapshots), remote_log_events and brokers; `:image_time_ms` is `--image-time` (null: estimate it).
-- The broker writes its internal topics' batches with its own clock (the group, transaction and share coordinators,
-- the remote log metadata manager's producer, the KRaft metadata log) and a control batch (a transaction marker:
-- MemoryRecords.withEndTransactionMarker) at its append time; a producer's CreateTime is the client's clock, which
-- a 4.x broker accepts up to log.message.timestamp.after.max.ms ahead (ServerLogConfigs
-- LOG_MESSAGE_TIMESTAMP_AFTER_MAX_MS_DEFAULT, 1 hour since KIP-1030, Kafka 4.0; Long.MAX_VALUE before).
WITH stamps AS (
    SELECT broker, format_string('%s-%d', topic, partition) AS source, file, max_timestamp AS ts,
           timestamp_type = 'LogAppendTime' OR is_control
             OR topic IN ('__consumer_offsets', '__transaction_state', '__share_group_state', '__cluster_metadata',
                          '__remote_log_metadata') AS broker_clock
    FROM every_dir_batches WHERE crc_valid AND max_timestamp >= 0
    UNION ALL
    SELECT metadata_broker AS broker, '__cluster_metadata-0' AS source, file, timestamp AS ts, true AS broker_clock
    FROM metadata_records WHERE timestamp >= 0
    UNION ALL
    SELECT broker, format_string('__remote_log_metadata-%d', metadata_partition) AS source, file,
           event_timestamp AS ts, true AS broker_clock
    FROM remote_log_events WHERE event_timestamp >= 0),
judged AS (
    SELECT *, NOT broker_clock AND newest_broker_time IS NOT NULL AND ts > newest_broker_time + 3600000 AS set_aside
    FROM (SELECT *, max(CASE WHEN broker_clock THEN ts END) OVER (PARTITION BY broker) AS newest_broker_time
          FROM stamps)),
estimated AS (
    -- the newest stamp kept, a broker-clock one first on a tie (deterministic: the struct orders field by field)
    SELECT broker, max(CASE WHEN NOT set_aside THEN named_struct('ts', ts, 'broker_clock', broker_clock,
                                                                 'source', source, 'file', file) END) AS kept,
           max(CASE WHEN set_aside THEN named_struct('ts', ts, 'source', source) END) AS aside,
           max(newest_broker_time) AS newest_broker_time
    FROM judged GROUP BY broker),
labels AS (SELECT broker FROM brokers UNION SELECT broker FROM estimated)
SELECT broker,
       CAST(coalesce(:image_time_ms, kept.ts) AS BIGINT) AS image_time,
       CASE WHEN :image_time_ms IS NOT NULL THEN '--image-time' ELSE kept.source END AS source,
       CASE WHEN :image_time_ms IS NULL THEN kept.file END AS file,
       CASE WHEN :image_time_ms IS NOT NULL THEN 'override' WHEN kept.broker_clock THEN 'broker'
            WHEN kept.ts IS NOT NULL THEN 'producer' END AS clock,
       kept.ts AS estimated_time, newest_broker_time, aside.ts AS set_aside_time, aside.source AS set_aside_source
FROM labels LEFT JOIN estimated USING (broker)
