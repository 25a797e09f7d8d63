/*
[table]
doc = """One row per broker event of each cluster's metadata log, with the registration after it
(ClusterControlManager.replay): RegisterBrokerRecord starts a registration (fenced unless its Fenced is false, not in
controlled shutdown unless InControlledShutdown), FenceBrokerRecord / UnfenceBrokerRecord and
BrokerRegistrationChangeRecord (Fenced 1 fenced, -1 unfenced, 0 no change; InControlledShutdown 1) change it,
UnregisterBrokerRecord ends it. A BrokerRegistrationChangeRecord that fences and starts a controlled shutdown gives two
rows."""
output = true
keep = true
applies = "kraft"
columns = [
    ["cluster_id", "string", "the cluster.id of the broker's meta.properties (empty when unknown)"],
    ["metadata_broker", "string", "the input whose copy of the metadata log was replayed (the copy that reaches furthest)"],
    ["broker_id", "int", "the broker (node.id)"],
    ["metadata_offset", "bigint", "the record's offset in the metadata log"],
    ["timestamp", "bigint", "its batch's timestamp"],
    ["event", "string", "`registered`, `unregistered`, `fenced`, `unfenced`, `controlled_shutdown`, `log_dirs_changed` (a BrokerRegistrationChangeRecord that changes only its log dirs or cordoned log dirs)"],
    ["broker_epoch", "bigint", "the registration's broker epoch"],
    ["incarnation_id", "string", "RegisterBrokerRecord's IncarnationId"],
    ["rack", "string", "its rack"],
    ["log_dirs", "array<string>", "its log dirs' directory ids, as the record gives them (null where it does not)"],
    ["cordoned_log_dirs", "array<string>", "the directory ids of its cordoned log dirs after the event (KIP-1066, metadata version 4.3-IV0: no new partition is placed there); `[]` where none is (a registration before 4.3-IV0 names none)"],
    ["fenced", "boolean", "fenced after the event (null once unregistered)"],
    ["in_controlled_shutdown", "boolean", "null once unregistered"],
    ["file", "string", "the file it was read from"],
    ["position", "bigint", "the byte position in `file`"],
]
*/
WITH events AS (
    SELECT *, posexplode(array_compact(array(
               CASE WHEN record_type = 'REGISTER_BROKER_RECORD' THEN 'registered' END,
               CASE WHEN record_type = 'UNREGISTER_BROKER_RECORD' THEN 'unregistered' END,
               CASE WHEN record_type = 'FENCE_BROKER_RECORD'
                         OR (record_type = 'BROKER_REGISTRATION_CHANGE_RECORD' AND fenced = 1) THEN 'fenced' END,
               CASE WHEN record_type = 'UNFENCE_BROKER_RECORD'
                         OR (record_type = 'BROKER_REGISTRATION_CHANGE_RECORD' AND fenced = -1) THEN 'unfenced' END,
               CASE WHEN record_type = 'BROKER_REGISTRATION_CHANGE_RECORD' AND in_controlled_shutdown = 1
                    THEN 'controlled_shutdown' END,
               CASE WHEN record_type = 'BROKER_REGISTRATION_CHANGE_RECORD' AND coalesce(fenced, 0) = 0
                         AND coalesce(in_controlled_shutdown, 0) != 1
                         AND (log_dirs IS NOT NULL OR cordoned_log_dirs IS NOT NULL)
                    THEN 'log_dirs_changed' END))) AS (event_index, event)
    FROM applied_records
    WHERE broker_id IS NOT NULL
      AND record_type IN ('REGISTER_BROKER_RECORD', 'UNREGISTER_BROKER_RECORD', 'FENCE_BROKER_RECORD',
                          'UNFENCE_BROKER_RECORD', 'BROKER_REGISTRATION_CHANGE_RECORD')),
registrations AS (
    SELECT *, sum(CAST(event = 'registered' AS INT)) OVER (
                  PARTITION BY cluster_id, broker_id ORDER BY metadata_offset, record_index, event_index
                  ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS registration
    FROM events),
states AS (
    SELECT *,
           last(CASE WHEN event = 'registered' THEN coalesce(fenced != 0, true) WHEN event = 'fenced' THEN true
                     WHEN event = 'unfenced' THEN false END, true) OVER reg AS fenced_now,
           last(CASE WHEN event = 'registered' THEN coalesce(in_controlled_shutdown != 0, false)
                     WHEN event = 'controlled_shutdown' THEN true END, true) OVER reg AS shutdown_now,
           max(CAST(event = 'unregistered' AS INT)) OVER reg = 1 AS gone,
           -- a registration without CordonedLogDirs (before 4.3-IV0) cordons none; a change record's null keeps them
           last(CASE WHEN event = 'registered' THEN coalesce(cordoned_log_dirs, array()) ELSE cordoned_log_dirs END,
                true) OVER reg AS cordoned_now
    FROM registrations
    WINDOW reg AS (PARTITION BY cluster_id, broker_id, registration
                   ORDER BY metadata_offset, record_index, event_index
                   ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW))
SELECT cluster_id, metadata_broker, broker_id, metadata_offset, timestamp, event, broker_epoch, incarnation_id, rack,
       log_dirs, CASE WHEN NOT gone THEN cordoned_now END AS cordoned_log_dirs,
       CASE WHEN NOT gone THEN fenced_now END AS fenced,
       CASE WHEN NOT gone THEN coalesce(shutdown_now, false) END AS in_controlled_shutdown, file, position
FROM states
