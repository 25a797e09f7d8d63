"""The parse pass of the KRaft metadata log: every copy of `__cluster_metadata-0` (its log segments and its
`<end offset>-<epoch>.checkpoint` snapshots) -> the `metadata_records` input table (`schemas.METADATA_RECORDS`)
that the control plane (`control_plane.py`) replays.

One row per record the replay reads: the metadata records of the types in REPLAYED_TYPES (and a topic's
cleanup.policy ConfigRecord), the controller registrations (RegisterControllerRecord, and UnregisterControllerRecord
of KIP-1312, Kafka 4.4), and the two KRaft control records that say who the controllers are (KIP-853):
KRaftVersionRecord (`record_type` KRAFT_VERSION, `kraft_version`) and VotersRecord (KRAFT_VOTERS, `voters`), each
with its own `Version` in `version`. Other control records (LeaderChange, SnapshotHeader, SnapshotFooter) are not
rows; neither are the records of a batch whose CRC is wrong (the segment pass reports the batch).

Where the records come from, as Kafka reads them (raft `KafkaRaftClient`, `KRaftControlRecordStateMachine`,
`Snapshots`, apache/kafka trunk; KIP-1170 from the KAFKA-19648 review, apache/kafka#20707, Kafka 4.4):

- A snapshot `<end offset>-<epoch>.checkpoint` holds the state of every record below its end offset; its records all
  carry `metadata_offset` = end offset - 1 and `snapshot_offset` = end offset.
- The zero checkpoint `00000000000000000000-0000000000.checkpoint` (`Snapshots.BOOTSTRAP_SNAPSHOT_ID`, offset 0 and
  epoch 0) is written by `kafka-storage format`, never by the raft layer. A controller formatted for a dynamic quorum
  (`--standalone`, `--initial-controllers`, Kafka 3.9+) has one holding the KRaftVersionRecord and VotersRecord
  control records; from Kafka 4.4 (KIP-1170) every controller's also holds the bootstrap metadata records
  (FeatureLevelRecords of metadata.version and the other features, SCRAM credentials, ...) that `bootstrap.checkpoint`
  in the log dir held before, which is now legacy. Its records carry `snapshot_offset` 0 and `metadata_offset` -1:
  before the log. A starting node reads the newest snapshot's control records, the zero checkpoint's when it is the
  only one, as the state before offset 0 (`KRaftControlRecordStateMachine.maybeLoadSnapshot`), and the metadata
  listeners are handed it too. The zero checkpoint is never replicated (`KafkaRaftClient` answers FetchSnapshot of it
  with nothing): the first leader writes its content into the log itself (the KRaftVersion and Voters control records
  after its LeaderChange, the bootstrap records in one transaction or atomic batch), so a log that starts at offset 0
  holds it all again and its zero checkpoint adds nothing to the state the log replays to. Kafka deletes the zero
  checkpoint only once a newer snapshot exists.
- `bootstrap.checkpoint` (the log dir's, read by `BootstrapDirectory` before KIP-1170 and still, as legacy, when the
  zero checkpoint holds no metadata records) is not a task: it holds no log offsets.
- A pure data dir (a log dir other than `metadata.log.dir`) holds no `__cluster_metadata-0`; Kafka refuses to start
  with one there (`KafkaRaftServer`: "Found unexpected metadata location in data directory"). A formatter of Kafka's
  trunk between KIP-1170 and apache/kafka#22418 (May 2026) wrote the zero checkpoint into every log dir: such a copy
  reads as a copy that holds only its zero checkpoint (its records at `snapshot_offset` 0), never the reference copy
  of a cluster whose metadata dir holds a log.

A record of a version newer than the tables is an `internal_record_newer_version` finding once per record type and
version of a file; one whose fields do not read is left out of the replay (see control_plane.py). This module was
`control_plane.metadata_record_rows` and its helpers, moved here unchanged but for the rows added above and their
columns (`cordoned_log_dirs`, `controller_id`, `endpoints`, `kraft_version`, `voters`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from kforensics.spark.control_plane import (
    CLEANUP_POLICY,
    CLEAR_ELR_RECORD,
    CONFIG_RECORD,
    METADATA_TOPIC,
    NO_LEADER_CHANGE,
    PARTITION_CHANGE_RECORD,
    PARTITION_RECORD,
    TOPIC_RESOURCE,
)

#: The KRaft control records that are rows (ControlRecordType names): who the voters are, and the kraft.version.
CONTROL_TYPES = frozenset({"KRAFT_VERSION", "KRAFT_VOTERS"})
#: The record types the replay reads (and a topic's cleanup.policy ConfigRecord, `_replayed`); the others
#: (NoOpRecord, other ConfigRecords, ...) are not emitted, but a file's last record is, whatever its type, so that a
#: copy's end offset is known.
REPLAYED_TYPES = frozenset({
    PARTITION_RECORD, PARTITION_CHANGE_RECORD, "TOPIC_RECORD", "REMOVE_TOPIC_RECORD", "REGISTER_BROKER_RECORD",
    "UNREGISTER_BROKER_RECORD", "FENCE_BROKER_RECORD", "UNFENCE_BROKER_RECORD", "BROKER_REGISTRATION_CHANGE_RECORD",
    "FEATURE_LEVEL_RECORD", "BEGIN_TRANSACTION_RECORD", "END_TRANSACTION_RECORD", "ABORT_TRANSACTION_RECORD",
    CLEAR_ELR_RECORD, "REGISTER_CONTROLLER_RECORD", "UNREGISTER_CONTROLLER_RECORD"})
_LISTS = {"isr": "isr", "eligibleLeaderReplicas": "elr", "lastKnownElr": "last_known_elr", "replicas": "replicas",
          "addingReplicas": "adding_replicas", "removingReplicas": "removing_replicas", "directories": "directories",
          "logDirs": "log_dirs"}
#: The replayed types of which the replay reads only the type: a newer one whose fields do not read still applies.
_TYPE_ONLY = frozenset({"BEGIN_TRANSACTION_RECORD", "END_TRANSACTION_RECORD", "ABORT_TRANSACTION_RECORD"})
_BROKER_TYPES = ("REGISTER_BROKER_RECORD", "UNREGISTER_BROKER_RECORD", "FENCE_BROKER_RECORD", "UNFENCE_BROKER_RECORD",
                 "BROKER_REGISTRATION_CHANGE_RECORD")


def _endpoints(endpoints: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
    """EndPoints of a RegisterBrokerRecord / RegisterControllerRecord, Endpoints of a voter, as `endpoints` rows
    (security_protocol null for a voter's: VotersRecord has none)."""
    if endpoints is None:
        return None
    return [{"name": e.get("name"), "host": e.get("host"), "port": e.get("port"),
             "security_protocol": e.get("securityProtocol")} for e in endpoints]


def metadata_row(type_name: str, version: int, data: dict) -> dict:
    """The typed columns of METADATA_RECORDS for one decoded record (`parsers.cluster_metadata.SchemaRecord`'s
    type_name, version and data, whose absent tagged fields take their schema defaults here), or for one KRaft
    control record (`type_name` KRAFT_VERSION or KRAFT_VOTERS, `version` its Version field)."""
    row: dict = {"record_type": type_name, "version": version}
    if type_name in (PARTITION_RECORD, PARTITION_CHANGE_RECORD):
        row.update(topic_id=data.get("topicId"), partition=data.get("partitionId"),
                   **{column: data.get(name) for name, column in _LISTS.items() if name != "logDirs"})
        if type_name == PARTITION_RECORD:
            row.update(leader=data.get("leader"), leader_epoch=data.get("leaderEpoch"),
                       partition_epoch=data.get("partitionEpoch"),
                       leader_recovery_state=data.get("leaderRecoveryState", 0))
        else:
            row.update(leader=data.get("leader", NO_LEADER_CHANGE),
                       leader_recovery_state=data.get("leaderRecoveryState", -1))
    elif type_name in ("TOPIC_RECORD", "REMOVE_TOPIC_RECORD"):
        row.update(topic=data.get("name"), topic_id=data.get("topicId"))
    elif type_name == CLEAR_ELR_RECORD:
        row.update(topic=data.get("topicName"))
    elif type_name == "FEATURE_LEVEL_RECORD":
        row.update(feature=data.get("name"), feature_level=data.get("featureLevel"))
    elif type_name == CONFIG_RECORD:
        row.update(topic=data.get("resourceName"), config_name=data.get("name"), config_value=data.get("value"))
    elif type_name in _BROKER_TYPES:
        row.update(broker_id=data.get("brokerId", data.get("id")), broker_epoch=data.get("brokerEpoch",
                                                                                        data.get("epoch")),
                   incarnation_id=data.get("incarnationId"), rack=data.get("rack"), log_dirs=data.get("logDirs"),
                   # KIP-1066: null where the record carries none (a change record: no change)
                   cordoned_log_dirs=data.get("cordonedLogDirs"))
        if type_name == "REGISTER_BROKER_RECORD":
            row.update(fenced=int(bool(data.get("fenced", True))),
                       in_controlled_shutdown=int(bool(data.get("inControlledShutdown", False))),
                       endpoints=_endpoints(data.get("endPoints")))
        elif type_name == "BROKER_REGISTRATION_CHANGE_RECORD":
            row.update(fenced=data.get("fenced", 0), in_controlled_shutdown=data.get("inControlledShutdown", 0))
    elif type_name == "REGISTER_CONTROLLER_RECORD":
        row.update(controller_id=data.get("controllerId"), incarnation_id=data.get("incarnationId"),
                   endpoints=_endpoints(data.get("endPoints")))
    elif type_name == "UNREGISTER_CONTROLLER_RECORD":
        row.update(controller_id=data.get("controllerId"))
    elif type_name == "KRAFT_VERSION":
        row.update(kraft_version=data.get("kRaftVersion"))
    elif type_name == "KRAFT_VOTERS":
        voters = data.get("voters")
        row.update(voters=None if voters is None else [
            {"voter_id": v.get("voterId"), "voter_directory_id": v.get("voterDirectoryId"),
             "endpoints": _endpoints(v.get("endpoints")),
             "min_supported_version": (v.get("kRaftVersionFeature") or {}).get("minSupportedVersion"),
             "max_supported_version": (v.get("kRaftVersionFeature") or {}).get("maxSupportedVersion")}
            for v in voters])
    return row


def _replayed(type_name: str, data: dict) -> bool:
    """Whether the replay reads a record of `type_name`: a ConfigRecord only for a topic's cleanup.policy."""
    if type_name == CONFIG_RECORD:
        return data.get("resourceType") == TOPIC_RESOURCE and data.get("name") == CLEANUP_POLICY
    return type_name in REPLAYED_TYPES


def _unread_consequence(type_name: str) -> str:
    """What the replay does with a newer record of `type_name` whose fields do not read (the finding's words)."""
    if type_name in _TYPE_ONLY:
        return "the control-plane replay still applies it as a metadata transaction marker (it reads only the type)"
    if type_name not in REPLAYED_TYPES and type_name not in CONTROL_TYPES:
        return ""
    what = ("the partition it changes keeps its state from before it, and its leader and partition epochs after it "
            "fall behind the controller's" if type_name == PARTITION_CHANGE_RECORD
            else "what it changes is missing from the control-plane tables after it")
    return f"the control-plane replay leaves every such record out, as it cannot know what it changes: {what}"


def metadata_record_rows(tasks: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """mapInArrow: segment tasks of `__cluster_metadata` (log segments and `<end offset>-<epoch>.checkpoint`
    snapshots) -> one METADATA_RECORDS row per record the replay reads (cluster_id left null: the Spark side adds
    it), or a finding row (`row_kind`): `internal_record_undecodable`, and `internal_record_newer_version` for the
    first record of each newer record type and version in the task. A newer record whose fields do not read is not
    replayed (see the module docstring): its row, kept only as a file's last record for the copy's end offset, has
    a null record_type. Control batches give rows of their KRaftVersion and Voters records only; the records of a
    batch whose CRC is wrong are skipped (the segment pass reports the batch)."""
    from kforensics.spark.executor_files import FLUSH_ROWS
    from kforensics.spark.schemas import METADATA_ROWS as schema

    rows: list[dict] = []
    for chunk in tasks:
        for task in chunk.to_pylist():
            try:
                for row in _metadata_file_rows(task):
                    rows.append(row)
                    if len(rows) >= FLUSH_ROWS:
                        yield pa.RecordBatch.from_pylist(rows, schema=schema)
                        rows = []
            except OSError:
                pass  # the segment pass reports the file as unreadable_file; the records read before stay
    if rows:
        yield pa.RecordBatch.from_pylist(rows, schema=schema)


def _finding_row(at: dict, kind: str, severity: str, message: str, details: dict) -> dict:
    import json

    return {"row_kind": "finding", **at, "kind": kind, "severity": severity, "message": message,
            "details": json.dumps(details)}


def _control_rows(log: Any, batch: Any, at_of: Any, uri: str, newer: Any) -> Iterator[dict]:
    """The rows of one control batch's KRaftVersion and Voters records (and the findings of those that do not
    decode or are newer than the tables)."""
    from kforensics.parsers.cluster_metadata import decode_control_record
    from kforensics.parsers.record_batch import Record

    for r in log.records(batch):
        if not isinstance(r, Record) or r.control_type not in CONTROL_TYPES:
            continue
        at = at_of(r)
        try:
            decoded = decode_control_record(r.control_type, r.value)
        except ValueError as exc:
            yield _finding_row(at, "internal_record_undecodable", "warning",
                               f"{r.control_type} control record at offset {r.offset} of {uri} could not be decoded: "
                               f"{exc}", {"offset": r.offset, "error": str(exc)})
            continue
        if decoded.newer:
            f = newer.finding(METADATA_TOPIC, uri, batch.position, r.offset, decoded.type_name, decoded.api_key,
                              decoded.version, decoded.known_versions, fields_read=decoded.fields_read,
                              consequence="" if decoded.fields_read else _unread_consequence(decoded.type_name))
            if f is not None:
                yield _finding_row(at, f.kind, f.effective_severity, f.message, dict(f.details))
            if not decoded.fields_read:
                continue
        yield {"row_kind": "record", **at, **metadata_row(decoded.type_name, decoded.version, decoded.data)}


def _metadata_file_rows(task: dict) -> Iterator[dict]:
    """The rows `metadata_record_rows` makes of one `__cluster_metadata` segment or snapshot."""
    from kforensics.parsers.cluster_metadata import decode_metadata_record
    from kforensics.parsers.internal_topics import NewerVersions
    from kforensics.parsers.log_dir import FILE_TYPE
    from kforensics.parsers.record_batch import Record, RecordBatch, open_log
    from kforensics.spark.executor_files import local_file

    uri = task["path"]
    name = uri.rsplit("/", 1)[-1]
    snap = FILE_TYPE["metadata_snapshot"].names.match(name)  # bootstrap.checkpoint: no offset
    snapshot_offset = int(snap.group(1)) if snap and snap.group(1) else None
    where = {"metadata_broker": task["broker"], "file": uri, "snapshot_offset": snapshot_offset}
    newer = NewerVersions()
    with local_file(uri) as path:
        if path is None:
            return
        first = None
        last_skipped: dict | None = None
        with open_log(path) as log:
            for b in log.batches():
                if not isinstance(b, RecordBatch):
                    continue
                first = b.base_offset if first is None else first

                def at_of(r: Record, b: RecordBatch = b, first: int = first) -> dict:
                    return {**where, "position": b.position, "timestamp": r.timestamp, "record_index": r.offset,
                            "metadata_offset": r.offset if snapshot_offset is None else snapshot_offset - 1,
                            "file_first_offset": first}

                if b.is_control or not b.crc_valid:
                    last_skipped = None
                    if b.is_control and b.crc_valid:
                        yield from _control_rows(log, b, at_of, uri, newer)
                    continue
                for r in log.records(b):
                    if not isinstance(r, Record):
                        continue
                    at = at_of(r)
                    try:
                        decoded = decode_metadata_record(r.value)
                    except ValueError as exc:
                        yield _finding_row(at, "internal_record_undecodable", "warning",
                                           f"metadata record at offset {r.offset} of {uri} could not be decoded: "
                                           f"{exc}", {"offset": r.offset, "error": str(exc)})
                        continue
                    replayed = _replayed(decoded.type_name, decoded.data)
                    if decoded.newer:
                        f = newer.finding(METADATA_TOPIC, uri, b.position, r.offset, decoded.type_name,
                                          decoded.api_key, decoded.version, decoded.known_versions,
                                          fields_read=decoded.fields_read,
                                          consequence="" if decoded.fields_read else _unread_consequence(
                                              decoded.type_name))
                        if f is not None:
                            yield _finding_row(at, f.kind, f.effective_severity, f.message, dict(f.details))
                    if not decoded.fields_read and decoded.type_name not in _TYPE_ONLY:
                        # what it changes is unknown: not replayed; a null type no replay step reads
                        row = {"row_kind": "record", **at, "record_type": None, "version": decoded.version}
                        replayed = False
                    else:
                        row = {"row_kind": "record", **at, **metadata_row(decoded.type_name, decoded.version,
                                                                          decoded.data)}
                    if replayed:
                        yield row
                        last_skipped = None
                    else:
                        last_skipped = row
    if last_skipped is not None and snapshot_offset is None:
        yield last_skipped


def read_metadata_records(segment_tasks: DataFrame, brokers: DataFrame, present: bool) -> DataFrame:
    """Needs the segment task rows and the brokers table; METADATA_RECORDS (with `row_kind` record|finding and the
    finding columns) of every `__cluster_metadata` segment and snapshot, cluster_id from the broker's
    meta.properties ("" when unknown). No job when no copy is `present`."""
    from kforensics.spark.schemas import METADATA_ROWS, ddl

    rows = (segment_tasks.filter((F.col("topic") == METADATA_TOPIC) & (F.col("partition") == 0))
            .mapInArrow(metadata_record_rows, ddl(METADATA_ROWS)))
    if not present:
        rows = rows.limit(0)
    ids = F.broadcast(brokers.select(F.col("broker").alias("metadata_broker"),
                                     F.coalesce("cluster_id", F.lit("")).alias("cid")))
    return rows.join(ids, "metadata_broker", "left").withColumn("cluster_id", F.coalesce("cid", F.lit(""))).drop("cid")
