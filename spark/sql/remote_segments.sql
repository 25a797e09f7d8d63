/*
[table]
doc = """One row per remote segment of tiered storage and broker holding its metadata, with its final state, as the
`__remote_log_metadata` partitions on `broker` record it (`topic`/`partition` are the data partition the segment
belongs to). A segment's `segment_leader_epochs` are the leader epoch cache sliced to the segment
(LeaderEpochFileCache.epochEntriesInRange): the first entry is clipped to the segment's start offset, each later entry
is the offset where its epoch began. Only COPY_SEGMENT_FINISHED segments count as held by the remote tier."""
output = true
keep = true
applies = "has_remote_log_metadata"
columns = [
    ["broker", "string", "the input's label: the broker whose log dir (or log dirs, one label given several) it was read from"],
    ["topic", "string", "the topic"],
    ["partition", "int", "the partition"],
    ["topic_id", "string", "the topic's id"],
    ["remote_segment_id", "string", "RemoteLogSegmentId's id"],
    ["start_offset", "bigint", "its first offset"],
    ["end_offset", "bigint", "its last offset"],
    ["max_timestamp", "bigint", "MaxTimestampMs"],
    ["segment_leader_epochs", "string", "`epoch@offset, ...`: the first entry is clipped to the segment's start, each later one is where its epoch began"],
    ["size", "bigint", "SegmentSizeInBytes"],
    ["state", "string", "of its latest record: `COPY_SEGMENT_STARTED`, `COPY_SEGMENT_FINISHED`, `DELETE_SEGMENT_STARTED`, `DELETE_SEGMENT_FINISHED`"],
    ["broker_id", "int", "the broker that copied it"],
    ["broker_leader_epoch", "int", "the BrokerLeaderEpoch of its RemoteLogSegmentMetadataRecord where the record's version has it, v1 on, written by a Kafka newer than 4.2; else the highest leader epoch of its entries"],
    ["first_event_at", "bigint", "its first metadata event's time (ms)"],
    ["last_event_at", "bigint", "event timestamps, ms"],
    ["event_count", "bigint", "its metadata records"],
    ["file", "string", "the file it was read from"],
    ["position", "bigint", "its latest metadata record"],
]
*/
SELECT broker, topic, partition, topic_id, remote_segment_id, copy.start_offset AS start_offset,
       copy.end_offset AS end_offset, copy.max_timestamp AS max_timestamp,
       copy.segment_leader_epochs AS segment_leader_epochs, copy.size AS size, state, copy.broker_id AS broker_id,
       coalesce(copy.broker_leader_epoch, array_max(transform(split(copy.segment_leader_epochs, ', '),
                                                              e -> cast(split(e, '@')[0] as int))))
         AS broker_leader_epoch,
       first_event_at, last_event_at, event_count, file, position
FROM (
  -- each column of its latest record (the highest offset in its metadata partition)
  SELECT broker, topic, partition, topic_id, remote_segment_id,
         min(CASE WHEN record_type = 'segment' THEN struct(offset, start_offset, end_offset, max_timestamp,
             segment_leader_epochs, size, broker_id, broker_leader_epoch) END) AS copy,
         max(named_struct('offset', offset, 'v', state)).v AS state, min(event_timestamp) AS first_event_at,
         max(named_struct('offset', offset, 'v', event_timestamp)).v AS last_event_at, count(1) AS event_count, max(named_struct('offset', offset, 'v', file)).v AS file,
         max(named_struct('offset', offset, 'v', position)).v AS position
  FROM remote_log_events WHERE record_type IN ('segment', 'segment_update')
  GROUP BY broker, topic, partition, topic_id, remote_segment_id)
