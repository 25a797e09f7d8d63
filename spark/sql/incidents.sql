/*
[table]
doc = """One row per incident: a root cause and the findings that follow from it, across brokers and partitions (see
[From findings to incidents](incidents.md)): what it cost, what happened in what order, and what to do next, in an
order where what saves data comes before anything that could destroy it. `kforensics explain` tells it."""
output = true
columns = [
    ["incident_id", "string", "the root cause's finding id: stable within one OUT (and across scans of the same disks)"],
    ["severity", "string", "the gravest of its findings' severities"],
    ["cause", "struct<kind: string, broker: string, topic: string, partition: int, offset: bigint, producer_id: bigint>", "the root cause's finding"],
    ["title", "string", "one line: the root cause's message"],
    ["started_at", "bigint", "its first event's time (epoch ms; null when none of its events has one)"],
    ["findings", "array<struct<kind: string, broker: string, topic: string, partition: int, offset: bigint, producer_id: bigint>>", "every finding of the incident, its cause's first"],
    ["records_lost", "bigint", "data records in the ranges of offsets it cost (incident_losses); null when a range cannot be sized from the input"],
    ["acknowledged_records_lost", "bigint", "those acknowledged to acks=all producers; null when the input cannot tell"],
    ["lost_offsets", "array<struct<broker: string, topic: string, partition: int, from: bigint, to: bigint>>", "each range lost, on the replica that held it"],
    ["groups_affected", "array<string>", "the consumer and share groups its findings name"],
    ["transactions_stuck", "bigint", "the open transactions holding a last stable offset among its findings (one per partition and producer, however many replicas show it)"],
    ["unknown", "array<string>", "what the input cannot tell, and which input would"],
    ["timeline", "array<struct<at: bigint, broker: string, event: string>>", "its events in time order (those with no known time last, by offset)"],
    ["actions", "array<struct<step: int, command: string, why: string, destructive: boolean>>", "the next steps, in order: `save` steps (kforensics export of what a later step would destroy) first, then checks, then repairs; `<BOOTSTRAP>` is a placeholder for the cluster's bootstrap servers"],
]
*/
WITH summary AS (
    SELECT incident_id,
           CASE WHEN max(severity = 'error') THEN 'error' WHEN max(severity = 'warning') THEN 'warning'
                ELSE 'info' END AS severity,
           transform(array_sort(collect_list(named_struct(
                         'o', named_struct('root', NOT is_root, 'topic', topic, 'partition', partition,
                                           'offset', offset, 'kind', kind, 'broker', broker),
                         'f', named_struct('kind', kind, 'broker', broker, 'topic', topic, 'partition', partition,
                                           'offset', offset, 'producer_id', producer_id)))),
                     x -> x.f) AS findings,
           array_sort(array_compact(collect_set(get_json_object(details, '$.group')))) AS groups_affected,
           count(DISTINCT CASE WHEN get_json_object(details, '$.lso_stuck_at') IS NOT NULL
                               THEN named_struct('c', cluster_id, 't', topic, 'p', partition, 'id', producer_id,
                                                 'o', offset) END) AS transactions_stuck
    FROM incident_findings GROUP BY incident_id),
roots AS (
    SELECT incident_id, named_struct('kind', kind, 'broker', broker, 'topic', topic, 'partition', partition,
                                     'offset', offset, 'producer_id', producer_id) AS cause, message AS title
    FROM incident_findings WHERE is_root),
losses AS (
    SELECT incident_id,
           CASE WHEN count(*) = count(records_lost) THEN sum(records_lost) END AS records_lost,
           CASE WHEN count(*) = count(acknowledged_records_lost) THEN sum(acknowledged_records_lost) END
               AS acknowledged_records_lost,
           array_sort(collect_list(CASE WHEN to_offset IS NOT NULL THEN named_struct(
               'broker', broker, 'topic', topic, 'partition', partition, 'from', from_offset, 'to', to_offset) END))
               AS lost_offsets,
           array_sort(array_compact(collect_list(unknown))) AS unknown
    FROM incident_losses GROUP BY incident_id),
told AS (
    SELECT incident_id,
           from_json(timeline_json, 'array<struct<at: bigint, broker: string, event: string>>') AS timeline,
           from_json(actions_json, 'array<struct<step: int, command: string, why: string, destructive: boolean>>')
               AS actions
    FROM incident_story)
SELECT s.incident_id, s.severity, r.cause, r.title,
       array_min(transform(filter(t.timeline, e -> e.at IS NOT NULL), e -> e.at)) AS started_at, s.findings,
       coalesce(l.records_lost, CASE WHEN l.incident_id IS NULL THEN 0 END) AS records_lost,
       coalesce(l.acknowledged_records_lost, CASE WHEN l.incident_id IS NULL THEN 0 END) AS acknowledged_records_lost,
       coalesce(l.lost_offsets, array()) AS lost_offsets, s.groups_affected, s.transactions_stuck,
       coalesce(l.unknown, array()) AS unknown, coalesce(t.timeline, array()) AS timeline,
       coalesce(t.actions, array()) AS actions
FROM summary s JOIN roots r USING (incident_id)
LEFT JOIN losses l USING (incident_id)
LEFT JOIN told t USING (incident_id)
