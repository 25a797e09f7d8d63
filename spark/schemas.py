"""Arrow schemas of the tables the scan produces, declared once for the executor side (Arrow record
batches out of mapInArrow) and the Spark side (the same schema as DDL)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from kforensics.parsers import record_batch
from kforensics.parsers.findings import FINDING_COLUMNS
from kforensics.spark.ddl import split_ddl

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

PARTITION_KEY = [("broker", pa.string()), ("topic", pa.string()), ("partition", pa.int32())]

#: The Arrow type of each kind a batch field declares (parsers/record_batch.py BatchField.kind).
ARROW_TYPES = {"int64": pa.int64(), "int32": pa.int32(), "bool": pa.bool_(), "string": pa.string()}
#: The `batches` table's columns: the batch fields declared as columns, in their order (record_batch.BATCH_FIELDS).
BATCH_FIELDS = [(f.name, ARROW_TYPES[f.kind]) for f in record_batch.BATCH_FIELDS if f.column]

_FINDING_TYPES = {"kind": pa.string(), "severity": pa.string(), "broker": pa.string(), "topic": pa.string(),
                  "partition": pa.int32(), "file": pa.string(), "position": pa.int64(), "offset": pa.int64(),
                  "producer_id": pa.int64(), "producer_epoch": pa.int32(), "message": pa.string(),
                  "details": pa.string()}
#: A finding's columns but the partition key (`parsers.findings.FINDING_COLUMNS` names them all, in order).
FINDING_FIELDS = [(name, _FINDING_TYPES[name]) for name in FINDING_COLUMNS if name not in ("broker", "topic",
                                                                                          "partition")]

RECORD_FIELDS = [
    ("offset", pa.int64()), ("timestamp", pa.int64()), ("producer_id", pa.int64()), ("producer_epoch", pa.int32()),
    ("key_hash", pa.int64()), ("value_hash", pa.int64()), ("key_size", pa.int32()), ("value_size", pa.int32()),
]

SEGMENT_FIELDS = [
    ("file", pa.string()), ("base_offset", pa.int64()), ("size", pa.int64()), ("first_batch_base_offset", pa.int64()),
    ("last_offset", pa.int64()), ("batch_count", pa.int64()), ("record_count", pa.int64()),
    ("valid_bytes", pa.int64()), ("has_offset_index", pa.bool_()),
]

TXNINDEX_FIELDS = [
    ("file", pa.string()), ("version", pa.int32()), ("producer_id", pa.int64()), ("first_offset", pa.int64()),
    ("last_offset", pa.int64()), ("last_stable_offset", pa.int64()),
]

SNAPSHOT_FIELDS = [
    ("file", pa.string()), ("snapshot_offset", pa.int64()), ("producer_id", pa.int64()), ("producer_epoch", pa.int32()),
    ("last_sequence", pa.int32()), ("last_offset", pa.int64()), ("offset_delta", pa.int32()), ("timestamp", pa.int64()),
    ("coordinator_epoch", pa.int32()), ("current_txn_first_offset", pa.int64()),
]

EPOCH_FIELDS = [("file", pa.string()), ("epoch", pa.int32()), ("start_offset", pa.int64())]

CHECKPOINT_FIELDS = [
    ("high_watermark", pa.int64()), ("recovery_point", pa.int64()), ("log_start_offset", pa.int64()),
    ("cleaner_offset", pa.int64()),
]

#: One file of a segment (or a KRaft metadata snapshot) as the partition dir lists it (`segment_files`).
SEGMENT_FILE_FIELDS = [
    ("file", pa.string()), ("file_type", pa.string()), ("base_offset", pa.int64()), ("last_offset", pa.int64()),
    ("last_timestamp", pa.int64()),
]


#: What `LogSegment.recover` would see of a segment (a JSON object of `parsers.restart.SegmentRecovery.facts`): its
#: executor walks the segment once for its rows and this.
RECOVERY = ("recovery", pa.string())


def _schema(fields: list[tuple[str, pa.DataType]]) -> pa.Schema:
    return pa.schema([pa.field(name, kind, nullable=True) for name, kind in fields])


#: What one segment task emits: a batch row or a finding row (`row_kind`), both keyed by partition.
SEGMENT_ROW_FIELDS = [("row_kind", pa.string()), *PARTITION_KEY, *BATCH_FIELDS,
                      *[(n, t) for n, t in FINDING_FIELDS if n not in ("file", "position", "producer_id",
                                                                       "producer_epoch")],
                      *[(n, t) for n, t in SEGMENT_FIELDS if n not in ("file", "size", "last_offset", "base_offset")],
                      RECOVERY]
SEGMENT_ROWS = _schema(SEGMENT_ROW_FIELDS)
RECORD_ROWS = _schema([*PARTITION_KEY, *RECORD_FIELDS])

#: What one partition task (its small files) emits: a tagged union of the small tables.
SMALL_ROW_FIELDS = [("row_kind", pa.string()), *PARTITION_KEY, ("file", pa.string()), ("version", pa.int32()),
                    ("producer_id", pa.int64()), ("first_offset", pa.int64()), ("last_offset", pa.int64()),
                    ("last_stable_offset", pa.int64()), ("snapshot_offset", pa.int64()),
                    ("producer_epoch", pa.int32()), ("last_sequence", pa.int32()), ("offset_delta", pa.int32()),
                    ("timestamp", pa.int64()), ("coordinator_epoch", pa.int32()),
                    ("current_txn_first_offset", pa.int64()), ("epoch", pa.int32()), ("start_offset", pa.int64()),
                    *CHECKPOINT_FIELDS, ("cluster_id", pa.string()), ("node_id", pa.int32()), ("log_dir", pa.string()),
                    ("directory_id", pa.string()), ("clean_shutdown", pa.bool_()),
                    ("recovery_checkpoint_unreadable", pa.bool_()), ("topic_id", pa.string()), ("kind", pa.string()), ("severity", pa.string()), ("position", pa.int64()),
                    ("offset", pa.int64()), ("message", pa.string()), ("details", pa.string()),
                    *[(n, t) for n, t in SEGMENT_FILE_FIELDS if n not in ("file", "last_offset")]]
SMALL_ROWS = _schema(SMALL_ROW_FIELDS)

#: What one internal-topic segment task emits: a __transaction_state record (`txn`), an offset commit
#: (`commit`) or a finding, with the record's place in its log.
INTERNAL_ROW_FIELDS = [
    ("row_kind", pa.string()), *PARTITION_KEY, ("file", pa.string()), ("position", pa.int64()),
    ("offset", pa.int64()), ("timestamp", pa.int64()), ("transactional_id", pa.string()), ("producer_id", pa.int64()),
    ("producer_epoch", pa.int32()), ("state", pa.string()), ("transaction_timeout_ms", pa.int32()),
    ("txn_partitions", pa.string()), ("last_update_timestamp", pa.int64()), ("start_timestamp", pa.int64()),
    ("group_id", pa.string()), ("commit_topic", pa.string()), ("commit_partition", pa.int32()),
    ("committed_offset", pa.int64()), ("committed_leader_epoch", pa.int32()), ("commit_timestamp", pa.int64()),
    ("tombstone", pa.bool_()), ("kind", pa.string()), ("severity", pa.string()), ("message", pa.string()),
    ("details", pa.string()),
    # TransactionLogValue v1's tagged fields (Kafka 4.x); an offset commit's batch: its producer and whether it is
    # transactional (a TxnOffsetCommit, applied only once its COMMIT marker follows)
    ("previous_producer_id", pa.int64()), ("next_producer_id", pa.int64()), ("next_producer_epoch", pa.int32()),
    ("client_transaction_version", pa.int32()), ("transactional", pa.bool_()),
]
# --- groups (issue 41): the group coordinator's records of __consumer_offsets other than offset commits, and the
# share coordinator's records of __share_group_state, as the parse pass keeps them (spark/groups.py builds the rows)
#: A topic partition a group record names: `role` says how (assigned, pending_revocation, active,
#: active_pending_revocation, source_topic, topic_name); a classic assignment and a streams topology name topics, the
#: KIP-848 records topic ids; a streams task is its subtopology and partition.
TOPIC_PARTITION = pa.struct([("role", pa.string()), ("topic", pa.string()), ("topic_id", pa.string()),
                             ("subtopology_id", pa.string()), ("partition", pa.int32())])
#: A share partition's state batch (ShareSnapshotValue / ShareUpdateValue StateBatches).
STATE_BATCH = pa.struct([("first_offset", pa.int64()), ("last_offset", pa.int64()), ("delivery_state", pa.int32()),
                         ("delivery_count", pa.int32())])
GROUP_ROW_FIELDS = [
    ("group_type", pa.string()), ("record_type", pa.string()), ("member_id", pa.string()),
    ("generation", pa.int32()), ("group_epoch", pa.int32()), ("member_epoch", pa.int32()),
    ("previous_member_epoch", pa.int32()), ("member_state", pa.string()), ("instance_id", pa.string()),
    ("client_id", pa.string()), ("client_host", pa.string()), ("rack", pa.string()),
    ("subscribed_topics", pa.list_(pa.string())), ("subscribed_topic_regex", pa.string()),
    ("protocol_type", pa.string()), ("protocol", pa.string()), ("topic_partitions", pa.list_(TOPIC_PARTITION)),
]
SHARE_ROW_FIELDS = [
    ("topic_id", pa.string()), ("share_partition", pa.int32()), ("snapshot_epoch", pa.int32()),
    ("state_epoch", pa.int32()), ("leader_epoch", pa.int32()), ("start_offset", pa.int64()),
    ("delivery_complete_count", pa.int32()), ("state_batches", pa.list_(STATE_BATCH)),
]
INTERNAL_ROW_FIELDS += [*GROUP_ROW_FIELDS, *SHARE_ROW_FIELDS]
INTERNAL_ROWS = _schema(INTERNAL_ROW_FIELDS)
INTERNAL_TOPICS = ("__transaction_state", "__consumer_offsets", "__share_group_state")

TASK_FIELDS = [("task_kind", pa.string()), ("broker", pa.string()), ("topic", pa.string()), ("partition", pa.int32()),
               ("path", pa.string()), ("base_offset", pa.int64()),
               # a log dir task: `<topic>-<partition>` names live only in a sibling log dir of the same broker
               ("elsewhere", pa.list_(pa.string()))]
TASKS = _schema(TASK_FIELDS)

FINDINGS = _schema([(name, _FINDING_TYPES[name]) for name in FINDING_COLUMNS])

_INTS = pa.list_(pa.int32())
#: A listener: EndPoints of RegisterBrokerRecord / RegisterControllerRecord (security_protocol the
#: SecurityProtocol id), Endpoints of a VotersRecord voter (security_protocol null).
ENDPOINT = pa.struct([("name", pa.string()), ("host", pa.string()), ("port", pa.int32()),
                      ("security_protocol", pa.int32())])
#: A voter of a VotersRecord (KIP-853): VoterId, VoterDirectoryId, Endpoints and KRaftVersionFeature's range.
VOTER = pa.struct([("voter_id", pa.int32()), ("voter_directory_id", pa.string()), ("endpoints", pa.list_(ENDPOINT)),
                   ("min_supported_version", pa.int32()), ("max_supported_version", pa.int32())])
#: One decoded KRaft metadata record of a broker's `__cluster_metadata-0` copy (a log segment or a
#: `<offset>-<epoch>.checkpoint` snapshot), the fields the replay (spark/control_plane.py) reads as typed columns
#: (null when the record type has no such field or a tagged field is absent), filled by spark/metadata_records.py.
#: `metadata_offset` is the record's offset in the metadata log; a snapshot's records all carry the snapshot's last
#: offset (its id's end offset - 1) and `snapshot_offset` = the snapshot id's end offset (the zero checkpoint
#: `00000000000000000000-0000000000.checkpoint`: 0 and -1); `record_index` orders the records of one file (their
#: offset in it). `file_first_offset` is the base offset of the file's first batch (control batches included):
#: where the copy's log starts. `record_type` is the MetadataRecordType name, or for the two KRaft control records
#: that are rows the ControlRecordType name: KRAFT_VERSION (`kraft_version`) and KRAFT_VOTERS (`voters`), `version`
#: then being the record's own Version field.
METADATA_RECORD_FIELDS = [
    ("cluster_id", pa.string()), ("metadata_broker", pa.string()), ("metadata_offset", pa.int64()),
    ("snapshot_offset", pa.int64()), ("record_index", pa.int64()), ("file_first_offset", pa.int64()),
    ("timestamp", pa.int64()), ("record_type", pa.string()), ("version", pa.int32()),
    ("topic", pa.string()), ("topic_id", pa.string()), ("partition", pa.int32()), ("leader", pa.int32()),
    ("leader_epoch", pa.int32()), ("partition_epoch", pa.int32()), ("isr", _INTS), ("elr", _INTS),
    ("last_known_elr", _INTS), ("replicas", _INTS), ("adding_replicas", _INTS), ("removing_replicas", _INTS),
    ("leader_recovery_state", pa.int32()), ("directories", pa.list_(pa.string())),
    ("broker_id", pa.int32()), ("broker_epoch", pa.int64()), ("incarnation_id", pa.string()), ("rack", pa.string()),
    ("log_dirs", pa.list_(pa.string())), ("fenced", pa.int32()), ("in_controlled_shutdown", pa.int32()),
    ("feature", pa.string()), ("feature_level", pa.int32()), ("file", pa.string()), ("position", pa.int64()),
    # a ConfigRecord of a topic's cleanup.policy (`topic` its ResourceName): Name and Value (null: deleted)
    ("config_name", pa.string()), ("config_value", pa.string()),
    # KIP-1066 (Kafka 4.3): CordonedLogDirs of a RegisterBrokerRecord v4 / BrokerRegistrationChangeRecord v3 (null:
    # the record carries none; for a change record, no change; a list, empty included, replaces the broker's)
    ("cordoned_log_dirs", pa.list_(pa.string())),
    # ControllerId of a RegisterControllerRecord (KIP-919) / UnregisterControllerRecord (KIP-1312, Kafka 4.4)
    ("controller_id", pa.int32()),
    # the listeners a RegisterBrokerRecord or RegisterControllerRecord registers
    ("endpoints", pa.list_(ENDPOINT)),
    # KRAFT_VERSION: the KRaftVersionRecord's KRaftVersion (the kraft.version in effect from this offset)
    ("kraft_version", pa.int32()),
    # KRAFT_VOTERS: the VotersRecord's voters (the whole voter set from this offset on)
    ("voters", pa.list_(VOTER)),
]
METADATA_RECORDS = _schema(METADATA_RECORD_FIELDS)
#: What one `__cluster_metadata` task emits: a record row or a finding row (`row_kind`).
METADATA_ROWS = _schema([("row_kind", pa.string()), *METADATA_RECORD_FIELDS, ("kind", pa.string()),
                         ("severity", pa.string()), ("message", pa.string()), ("details", pa.string())])

#: What one `__remote_log_metadata` segment task emits: an event (one record), or a finding. `topic` and
#: `partition` of an event are the data partition it is about; `metadata_partition` is where it was read.
REMOTE_EVENT_ROWS = _schema([
    ("row_kind", pa.string()), *PARTITION_KEY, ("metadata_partition", pa.int32()), ("file", pa.string()),
    ("position", pa.int64()), ("offset", pa.int64()), ("timestamp", pa.int64()), ("record_type", pa.string()),
    ("topic_id", pa.string()), ("remote_segment_id", pa.string()), ("start_offset", pa.int64()),
    ("end_offset", pa.int64()), ("max_timestamp", pa.int64()), ("segment_leader_epochs", pa.string()),
    ("size", pa.int64()), ("state", pa.string()), ("broker_id", pa.int32()), ("event_timestamp", pa.int64()),
    ("broker_leader_epoch", pa.int32()),
    ("kind", pa.string()), ("severity", pa.string()), ("message", pa.string()), ("details", pa.string())])

DIR_STATE = ("dir_state", pa.string())
_POSITION = [("file", pa.string()), ("position", pa.int64()), ("offset", pa.int64()), ("timestamp", pa.int64())]

#: The input tables of the analysis, as `spark/read.py` builds them from the parse pass (every one has exactly
#: these columns, empty inputs included: `empty_tables` builds them from here).
INPUT_TABLES: dict[str, pa.Schema] = {
    "batches": _schema([*PARTITION_KEY, *BATCH_FIELDS, DIR_STATE]),
    "segments": _schema([*PARTITION_KEY, ("file", pa.string()), ("base_offset", pa.int64()), ("size", pa.int32()),
                         *[(n, t) for n, t in SEGMENT_FIELDS if n not in ("file", "base_offset", "size")],
                         DIR_STATE]),
    "txnindex": _schema([*PARTITION_KEY, *TXNINDEX_FIELDS, DIR_STATE]),
    #: Per `.log` segment, what log recovery would see of it (the restart prediction's input; not written to OUT).
    "segment_recovery": _schema([*PARTITION_KEY, ("file", pa.string()), ("base_offset", pa.int64()),
                                 ("size", pa.int32()), ("has_offset_index", pa.bool_()), RECOVERY, DIR_STATE]),
    "snapshot_entries": _schema([*PARTITION_KEY, *SNAPSHOT_FIELDS, DIR_STATE]),
    "leader_epochs": _schema([*PARTITION_KEY, *EPOCH_FIELDS, DIR_STATE]),
    #: Every segment file (`.log`, `.index`, `.timeindex`, `.txnindex`, producer `.snapshot`) and KRaft metadata
    #: snapshot a partition dir lists: `file_type`, `base_offset` (the offset its name carries: a metadata
    #: snapshot's end offset) and, for an offset or time index whose `.log` is absent, `last_offset` and
    #: `last_timestamp` of its last entry. What the copy holds of each partition's log, and what it lacks
    #: (spark/sql/missing_ranges.sql).
    "segment_files": _schema([*PARTITION_KEY, *SEGMENT_FILE_FIELDS, DIR_STATE]),
    #: One row per broker label: its identity (cluster.id, node.id) from the first of its log dirs, by path, that has
    #: a meta.properties (log_dir_identity_mismatch says where its dirs disagree).
    "brokers": _schema([("broker", pa.string()), ("cluster_id", pa.string()), ("node_id", pa.int32())]),
    "partition_checkpoints": _schema([*PARTITION_KEY, *CHECKPOINT_FIELDS]),
    "parser_findings": FINDINGS,
    "coordinator_records": _schema([
        *PARTITION_KEY, *_POSITION, *[(n, t) for n, t in INTERNAL_ROW_FIELDS if n in (
            "transactional_id", "producer_id", "producer_epoch", "state", "transaction_timeout_ms", "txn_partitions",
            "last_update_timestamp", "start_timestamp", "tombstone", "previous_producer_id", "next_producer_id",
            "next_producer_epoch", "client_transaction_version")]]),
    "offset_commits": _schema([
        *PARTITION_KEY, *_POSITION, *[(n, t) for n, t in INTERNAL_ROW_FIELDS if n in (
            "group_id", "commit_topic", "commit_partition", "committed_offset", "committed_leader_epoch",
            "commit_timestamp", "tombstone", "producer_id", "producer_epoch", "transactional")]]),
    #: Every group coordinator record of `__consumer_offsets` but offset commits: one row per record, and per member
    #: of a classic GroupMetadataValue one more (`member_id` set), in the reference replica's log order
    #: (spark/groups.py).
    "group_records": _schema([
        *PARTITION_KEY, *_POSITION, ("group_id", pa.string()), ("tombstone", pa.bool_()), *GROUP_ROW_FIELDS]),
    #: Every `__share_group_state` record (ShareSnapshot, ShareUpdate) (spark/share_groups.py).
    "share_state_records": _schema([
        *PARTITION_KEY, *_POSITION, ("group_id", pa.string()), ("record_type", pa.string()),
        ("tombstone", pa.bool_()), *SHARE_ROW_FIELDS]),
    "remote_log_events": _schema([(f.name, f.type) for f in REMOTE_EVENT_ROWS if f.name != "row_kind"]),
    "partition_topic_ids": _schema([*PARTITION_KEY, ("topic_id", pa.string()), DIR_STATE]),
    "metadata_records": METADATA_RECORDS,
    #: The partition dirs (live, stray and future) of each broker, each with the log dir holding it (`log_dir`, as
    #: the listing names it: several per broker under one label, JBOD), for the control plane's checks.
    "partition_dirs": _schema([*PARTITION_KEY, ("path", pa.string()), DIR_STATE, ("log_dir", pa.string())]),
    #: The labels of kafka-dump-log text inputs (not log dirs: no .txnindex, no checkpoints, nothing to recover).
    "dump_text_inputs": _schema([("broker", pa.string())]),
    #: Per log dir (a broker label has several under JBOD): its meta.properties (the file, null when absent;
    #: cluster.id, node.id or broker.id, directory.id), its clean-shutdown marker, a
    #: recovery-point-offset-checkpoint the broker cannot read, and the directories in it Kafka cannot take for
    #: partition dirs (`parsers.log_dir.kafka_topic_partition`).
    "log_dirs": _schema([("broker", pa.string()), ("log_dir", pa.string()), ("meta_properties", pa.string()),
                         ("cluster_id", pa.string()), ("node_id", pa.int32()), ("directory_id", pa.string()),
                         ("clean_shutdown", pa.bool_()),
                         ("recovery_checkpoint_unreadable", pa.bool_()), ("refused_dirs", pa.list_(pa.string()))]),
}


#: The parse pass's tables written to OUT (`jobs.READ_BACK`: name in OUT -> input table), what a row is and what
#: each column holds (docs/output.md is generated from here and from the models' headers).
WRITTEN_INPUTS: dict[str, tuple[str, str, dict[str, str]]] = {
    "batches": ("batches", "One row per record batch (v2) or message set entry (magic 0/1: a wrapper or a plain "
                "message) of every segment, as its header says; records are not read here.", {
        "file": "the segment file", "segment_base_offset": "the segment's base offset (from its name)",
        "position": "the batch's byte position in `file`", "size": "the batch's size in bytes",
        "magic": "the record format: 0, 1 (legacy message sets) or 2 (record batches)",
        "base_offset": "the batch's first offset", "last_offset": "its last offset (base offset + lastOffsetDelta)",
        "count": "the records it declares", "partition_leader_epoch": "the leader epoch it was appended in (v2)",
        "producer_id": "its producer id (-1: none)", "producer_epoch": "its producer epoch (-1: none)",
        "base_sequence": "its first sequence number (-1: none)", "last_sequence": "its last sequence number",
        "is_transactional": "attributes bit 4", "is_control": "attributes bit 5: a control batch",
        "control_type": "a control batch's record: `COMMIT`, `ABORT`, `LEADER_CHANGE`, ...",
        "coordinator_epoch": "a COMMIT or ABORT marker's coordinator epoch",
        "codec": "its compression: `none`, `gzip`, `snappy`, `lz4`, `zstd`",
        "timestamp_type": "`CreateTime` or `LogAppendTime`",
        "base_timestamp": "baseTimestamp (v2; for magic 0/1 the message's timestamp)",
        "max_timestamp": "maxTimestamp", "crc": "the stored CRC", "crc_valid": "the stored CRC matches its bytes",
        "delete_horizon_ms": ("KIP-534: the delete horizon the log cleaner set on a batch of tombstones or on a "
                              "transaction marker, attributes bit 6; `base_timestamp` then holds it, not a create "
                              "time; null when not set"),
        "dir_state": "`live`, `delete`, `future`, `stray`: the kind of partition dir (see What a log dir may hold)"}),
    "segments": ("segments", "One row per segment (`.log`) of every partition dir.", {
        "file": "the segment file", "base_offset": "from its name", "size": "its size in bytes",
        "first_batch_base_offset": "its first batch's base offset", "last_offset": "its last batch's last offset",
        "batch_count": "its batches", "record_count": "the records they declare",
        "valid_bytes": "the bytes up to the end of its last whole batch",
        "has_offset_index": ("its `.index` file exists: without it the broker rebuilds the index, and recovers the "
                             "segment, while loading"),
        "dir_state": "`live`, `delete`, `future`, `stray`"}),
    "snapshots": ("snapshot_entries", "One row per producer entry of every producer snapshot (`.snapshot`).", {
        "file": "the snapshot file", "snapshot_offset": "from its name: the offset it was taken at",
        "producer_id": "the producer id", "producer_epoch": "its epoch", "last_sequence": "its last sequence",
        "last_offset": "its last offset", "offset_delta": "its last batch's offset delta",
        "timestamp": "its last batch's timestamp", "coordinator_epoch": "its coordinator epoch",
        "current_txn_first_offset": "the first offset of its open transaction (-1: none)",
        "dir_state": "`live`, `delete`, `future`, `stray`"}),
    "txnindex": ("txnindex", "One row per entry of every transaction index (`.txnindex`): an aborted transaction.", {
        "file": "the index file", "version": "the entry's version", "producer_id": "the aborted producer",
        "first_offset": "the transaction's first offset", "last_offset": "its ABORT marker's offset",
        "last_stable_offset": "the LSO the broker recorded when it wrote the marker",
        "dir_state": "`live`, `delete`, `future`, `stray`"}),
    "leader_epochs": ("leader_epochs", "One row per entry of every `leader-epoch-checkpoint`.", {
        "file": "the checkpoint file", "epoch": "a leader epoch", "start_offset": "the offset it began at",
        "dir_state": "`live`, `delete`, `future`, `stray`"}),
    "partition_checkpoints": ("partition_checkpoints", "Per partition of a broker, its entries in the log dir's "
                              "checkpoint files.", {
        "high_watermark": "replication-offset-checkpoint", "recovery_point": "recovery-point-offset-checkpoint",
        "log_start_offset": "log-start-offset-checkpoint", "cleaner_offset": "cleaner-offset-checkpoint"}),
    "coordinator_records": ("coordinator_records", "Every `__transaction_state` record (`topic`/`partition` are the "
                            "`__transaction_state` partition).", {
        "file": "its segment", "position": "its batch's byte position", "offset": "its offset",
        "timestamp": "its timestamp", "transactional_id": "the key", "producer_id": "ProducerId",
        "producer_epoch": "ProducerEpoch", "state": "TransactionStatus by name (`Ongoing`, `PrepareCommit`, ...)",
        "transaction_timeout_ms": "TransactionTimeoutMs", "txn_partitions": "the partitions, as a comma list",
        "last_update_timestamp": "TransactionLastUpdateTimestampMs",
        "start_timestamp": "TransactionStartTimestampMs", "tombstone": "a null value",
        "previous_producer_id": "TransactionLogValue v1's tagged PreviousProducerId (-1 where not written)",
        "next_producer_id": "NextProducerId (-1 where not written)",
        "next_producer_epoch": "NextProducerEpoch (-1 where not written)",
        "client_transaction_version": "ClientTransactionVersion (2: Transactions V2; 0 where not written)"}),
    "offset_commits": ("offset_commits", "Every offset commit or tombstone in `__consumer_offsets`.", {
        "file": "its segment", "position": "its batch's byte position", "offset": "its offset",
        "timestamp": "its timestamp", "group_id": "the group", "commit_topic": "the topic committed",
        "commit_partition": "the partition committed", "committed_offset": "the offset committed",
        "committed_leader_epoch": "its leader epoch", "commit_timestamp": "CommitTimestamp",
        "tombstone": "a null value: the commit deleted", "producer_id": "its batch's producer id",
        "producer_epoch": "its batch's producer epoch",
        "transactional": "a TxnOffsetCommit, pending until its transaction's marker"}),
}


def arrow_type(kind: str) -> pa.DataType:
    """The Arrow type of a Spark SQL type name (as the models declare their columns)."""
    kind = kind.strip()
    lower = kind.lower()
    simple = {"string": pa.string(), "int": pa.int32(), "integer": pa.int32(), "bigint": pa.int64(),
              "long": pa.int64(), "boolean": pa.bool_(), "double": pa.float64(), "smallint": pa.int16()}
    if lower in simple:
        return simple[lower]
    if lower.startswith("array<") and lower.endswith(">"):
        return pa.list_(arrow_type(kind[6:-1]))
    if lower.startswith("struct<") and lower.endswith(">"):
        return pa.struct([(n.rstrip(":"), arrow_type(t)) for n, t in split_ddl(kind[7:-1].replace(":", " "))])
    raise ValueError(f"no Arrow type for {kind!r}")




def frame(spark: SparkSession, schema: pa.Schema, rows: list[dict]) -> DataFrame:
    """A DataFrame of `schema` from dict rows built on the driver (a key a row lacks is null; no rows: an empty
    frame with every column)."""
    return spark.createDataFrame([tuple(row.get(name) for name in schema.names) for row in rows], ddl(schema))


def ddl(schema: pa.Schema) -> str:
    """The Spark DDL string of an Arrow schema (for mapInArrow)."""
    names = {pa.string(): "string", pa.int32(): "int", pa.int64(): "bigint", pa.bool_(): "boolean",
             pa.binary(): "binary"}

    def name(kind: pa.DataType) -> str:
        if pa.types.is_struct(kind):
            return "struct<" + ", ".join(f"`{f.name}`: {name(f.type)}" for f in kind) + ">"
        return f"array<{name(kind.value_type)}>" if pa.types.is_list(kind) else names[kind]

    return ", ".join(f"`{f.name}` {name(f.type)}" for f in schema)


def columns(fields: list[tuple[str, pa.DataType]]) -> list[str]:
    return [name for name, _ in fields]


#: Input tables with a row per file of a partition dir: they carry `dir_state`, and the analyses read only their
#: live rows (a -delete, -future or -stray dir is never taken for the partition's log or for a replica of it).
DIR_STATE_TABLES = ("batches", "segments", "segment_recovery", "txnindex", "snapshot_entries", "leader_epochs",
                    "partition_topic_ids", "segment_files")
