/*
[table]
doc = """Who the KRaft controllers were, when (KIP-853, KIP-1312): one row per record of each cluster's reference copy
of the metadata log that says so, in offset order. `voters`: a VotersRecord (KRaft control record type 6), the whole
voter set from that offset on, with each voter's directory id and endpoints (`added_voters`, `removed_voters`
against the voter set before it; null for the first the copy holds, a baseline); `kraft_version`: a KRaftVersionRecord
(type 5); `controller_registered`: a RegisterControllerRecord (a controller's endpoints and incarnation);
`controller_unregistered`: an UnregisterControllerRecord (Kafka 4.4, written when a controller leaves the quorum). A
row read from a snapshot (`from_snapshot`) is the state the snapshot holds, not a change made at its offset.
Records of apache/kafka 4425e970 (raft `VotersRecord.json` v0, `KRaftVersionRecord.json` v0,
metadata `UnregisterControllerRecord.json` v0)."""
output = true
applies = "kraft"
columns = [
    ["cluster_id", "string", "the cluster.id of the broker's meta.properties (empty when unknown)"],
    ["metadata_broker", "string", "the input whose copy of the metadata log was replayed (the copy that reaches furthest)"],
    ["metadata_offset", "bigint", "the record's offset in the metadata log (a snapshot's: its end offset - 1; the zero checkpoint's: -1)"],
    ["timestamp", "bigint", "its batch's timestamp"],
    ["event", "string", "`voters`, `kraft_version`, `controller_registered`, `controller_unregistered`"],
    ["from_snapshot", "boolean", "read from a snapshot (`<end offset>-<epoch>.checkpoint`): the state it holds, a baseline"],
    ["voter_ids", "array<int>", "`voters`: the voter set's node ids, ascending"],
    ["added_voters", "array<int>", "`voters`: ids not in the voter set before (null for the first one the copy holds)"],
    ["removed_voters", "array<int>", "`voters`: ids of the voter set before that left (null for the first one)"],
    ["voters", "array<struct<voter_id: int, voter_directory_id: string, endpoints: array<struct<name: string, host: string, port: int, security_protocol: int>>, min_supported_version: int, max_supported_version: int>>", "`voters`: each voter, its directory id, endpoints and supported kraft.version range"],
    ["kraft_version", "int", "`kraft_version`: the kraft.version from that offset on (1: a dynamic quorum)"],
    ["controller_id", "int", "`controller_registered`, `controller_unregistered`: the controller's node id"],
    ["incarnation_id", "string", "`controller_registered`: its IncarnationId"],
    ["endpoints", "array<struct<name: string, host: string, port: int, security_protocol: int>>", "`controller_registered`: its listeners"],
    ["file", "string", "the file it was read from"],
    ["position", "bigint", "the byte position in `file`"],
]
*/
-- Reads applied_records (the reference copy's records the controller applies, its base snapshot's first);
-- added_voters/removed_voters compare each VotersRecord with the one before it in the same copy.
WITH controller_records AS (
    SELECT cluster_id, metadata_broker, metadata_offset, record_index, timestamp, snapshot_offset IS NOT NULL AS from_snapshot,
           CASE record_type WHEN 'KRAFT_VOTERS' THEN 'voters' WHEN 'KRAFT_VERSION' THEN 'kraft_version'
                            WHEN 'REGISTER_CONTROLLER_RECORD' THEN 'controller_registered'
                            WHEN 'UNREGISTER_CONTROLLER_RECORD' THEN 'controller_unregistered' END AS event,
           CASE WHEN record_type = 'KRAFT_VOTERS' THEN array_sort(transform(voters, v -> v.voter_id)) END AS voter_ids,
           voters, kraft_version, controller_id, incarnation_id, endpoints, file, position
    FROM applied_records
    WHERE record_type IN ('KRAFT_VOTERS', 'KRAFT_VERSION', 'REGISTER_CONTROLLER_RECORD', 'UNREGISTER_CONTROLLER_RECORD')),
compared AS (
    SELECT *, lag(voter_ids) OVER (PARTITION BY cluster_id, metadata_broker, event = 'voters'
                                   ORDER BY metadata_offset, record_index) AS previous_voter_ids
    FROM controller_records)
SELECT cluster_id, metadata_broker, metadata_offset, timestamp, event, from_snapshot, voter_ids,
       CASE WHEN event = 'voters' AND previous_voter_ids IS NOT NULL THEN array_except(voter_ids, previous_voter_ids) END
           AS added_voters,
       CASE WHEN event = 'voters' AND previous_voter_ids IS NOT NULL THEN array_except(previous_voter_ids, voter_ids) END
           AS removed_voters,
       voters, kraft_version, controller_id, incarnation_id, endpoints, file, position
FROM compared
