"""The control plane: the KRaft metadata log (`__cluster_metadata-0`) read on the executors into rows of
`metadata_records`, which the models replay as the controller applies it (spark/sql: reference_copies,
base_snapshots, applied_records, elr_clears, partition_history, broker_history, topics, features, partition_state,
live_brokers) and hold against the data on the same disks (the KRaft checks: spark/sql files whose header names
`applies = "kraft"`). Each model's header says the rule it follows.

A record of a version newer than the tables (`parsers/schemas_metadata.py`) is an `internal_record_newer_version`
finding, once per record type and version. Where it reads as the newest known version (the newer one added only
tagged fields), the replay applies what it read, without what the newer version added. Where its fields do not read,
the replay leaves it out: it cannot know what the record changes, and the finding says so (`fields_read` false).
After such a PartitionChangeRecord one partition's leader and partition epochs fall behind the controller's, which
bumps them for every change record (`PartitionRegistration.merge`). A newer Begin/End/AbortTransactionRecord still
applies: the replay reads only its type.

Stray logs (`LogManager`, `LocalLog.logStrayDirName`, Kafka 3.7+): a broker's log whose topic id is not the live
topic's, or whose broker is not a replica, is renamed `<topic>-<partition>.<uuid>-stray` and deleted later.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

METADATA_TOPIC = "__cluster_metadata"
#: A copy of one cluster's metadata log.
COPY = ["cluster_id", "metadata_broker"]
#: A partition's registration: topic ids, not names, identify a topic across deletion and re-creation.
PARTITION = ["cluster_id", "topic_id", "partition"]
ORDER = ["metadata_offset", "record_index"]

PARTITION_RECORD = "PARTITION_RECORD"
PARTITION_CHANGE_RECORD = "PARTITION_CHANGE_RECORD"
CLEAR_ELR_RECORD = "CLEAR_ELR_RECORD"
CONFIG_RECORD = "CONFIG_RECORD"
#: ConfigResource.Type TOPIC, and the one topic config the analysis reads (the `replicas` table's `compacted`)
TOPIC_RESOURCE, CLEANUP_POLICY = 2, "cleanup.policy"
NO_LEADER_CHANGE = -2
NO_LEADER = -1
RECOVERY_STATES = {0: "RECOVERED", 1: "RECOVERING"}
BROKER_EVENTS = ("registered", "unregistered", "fenced", "unfenced", "controlled_shutdown")


# --- executors: the metadata log's records as rows ------------------------------------------------------------

#: The record types the replay reads (and a topic's cleanup.policy ConfigRecord, `_replayed`); the others
#: (NoOpRecord, other ConfigRecords, ...) are not emitted, but a file's last record is, whatever its type, so that a
#: copy's end offset is known.
REPLAYED_TYPES = frozenset({
    PARTITION_RECORD, PARTITION_CHANGE_RECORD, "TOPIC_RECORD", "REMOVE_TOPIC_RECORD", "REGISTER_BROKER_RECORD",
    "UNREGISTER_BROKER_RECORD", "FENCE_BROKER_RECORD", "UNFENCE_BROKER_RECORD", "BROKER_REGISTRATION_CHANGE_RECORD",
    "FEATURE_LEVEL_RECORD", "BEGIN_TRANSACTION_RECORD", "END_TRANSACTION_RECORD", "ABORT_TRANSACTION_RECORD",
    CLEAR_ELR_RECORD})
_LISTS = {"isr": "isr", "eligibleLeaderReplicas": "elr", "lastKnownElr": "last_known_elr", "replicas": "replicas",
          "addingReplicas": "adding_replicas", "removingReplicas": "removing_replicas", "directories": "directories",
          "logDirs": "log_dirs"}
#: The replayed types of which the replay reads only the type: a newer one whose fields do not read still applies.
_TYPE_ONLY = frozenset({"BEGIN_TRANSACTION_RECORD", "END_TRANSACTION_RECORD", "ABORT_TRANSACTION_RECORD"})
_BROKER_TYPES = ("REGISTER_BROKER_RECORD", "UNREGISTER_BROKER_RECORD", "FENCE_BROKER_RECORD", "UNFENCE_BROKER_RECORD",
                 "BROKER_REGISTRATION_CHANGE_RECORD")


def metadata_row(type_name: str, version: int, data: dict) -> dict:
    """The typed columns of METADATA_RECORDS for one decoded record (`parsers.cluster_metadata.SchemaRecord`'s
    type_name, version and data, whose absent tagged fields take their schema defaults here)."""
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
                   incarnation_id=data.get("incarnationId"), rack=data.get("rack"), log_dirs=data.get("logDirs"))
        if type_name == "REGISTER_BROKER_RECORD":
            row.update(fenced=int(bool(data.get("fenced", True))),
                       in_controlled_shutdown=int(bool(data.get("inControlledShutdown", False))))
        elif type_name == "BROKER_REGISTRATION_CHANGE_RECORD":
            row.update(fenced=data.get("fenced", 0), in_controlled_shutdown=data.get("inControlledShutdown", 0))
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
    if type_name not in REPLAYED_TYPES:
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
    a null record_type. Control batches are skipped; so are the records of a batch whose CRC is wrong (the segment
    pass reports the batch)."""
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


def _metadata_file_rows(task: dict) -> Iterator[dict]:
    """The rows `metadata_record_rows` makes of one `__cluster_metadata` segment or snapshot."""
    import json

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
                if b.is_control or not b.crc_valid:
                    last_skipped = None
                    continue
                for r in log.records(b):
                    if not isinstance(r, Record):
                        continue
                    at = {**where, "position": b.position, "timestamp": r.timestamp, "record_index": r.offset,
                          "metadata_offset": r.offset if snapshot_offset is None else snapshot_offset - 1,
                          "file_first_offset": first}
                    try:
                        decoded = decode_metadata_record(r.value)
                    except ValueError as exc:
                        yield {"row_kind": "finding", **at, "kind": "internal_record_undecodable",
                               "severity": "warning", "details": json.dumps({"offset": r.offset, "error": str(exc)}),
                               "message": f"metadata record at offset {r.offset} of {uri} could not be decoded: {exc}"}
                        continue
                    replayed = _replayed(decoded.type_name, decoded.data)
                    if decoded.newer:
                        f = newer.finding(METADATA_TOPIC, uri, b.position, r.offset, decoded.type_name,
                                          decoded.api_key, decoded.version, decoded.known_versions,
                                          fields_read=decoded.fields_read,
                                          consequence="" if decoded.fields_read else _unread_consequence(
                                              decoded.type_name))
                        if f is not None:
                            yield {"row_kind": "finding", **at, "kind": f.kind, "severity": f.effective_severity,
                                   "message": f.message, "details": json.dumps(dict(f.details))}
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
