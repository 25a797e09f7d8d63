"""Arrow schemas of the tables the scan produces, declared once for the executor side (Arrow record
batches out of mapInArrow) and the Spark side (the same schema as DDL)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from kforensics.parsers.findings import FINDING_COLUMNS

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

PARTITION_KEY = [("broker", pa.string()), ("topic", pa.string()), ("partition", pa.int32())]

BATCH_FIELDS = [
    ("file", pa.string()), ("segment_base_offset", pa.int64()), ("position", pa.int64()), ("size", pa.int32()),
    ("magic", pa.int32()), ("base_offset", pa.int64()), ("last_offset", pa.int64()), ("count", pa.int32()),
    ("partition_leader_epoch", pa.int32()), ("producer_id", pa.int64()), ("producer_epoch", pa.int32()),
    ("base_sequence", pa.int32()), ("last_sequence", pa.int32()), ("is_transactional", pa.bool_()),
    ("is_control", pa.bool_()), ("control_type", pa.string()), ("coordinator_epoch", pa.int32()),
    ("codec", pa.string()), ("timestamp_type", pa.string()), ("base_timestamp", pa.int64()),
    ("max_timestamp", pa.int64()), ("crc", pa.int64()), ("crc_valid", pa.bool_()),
    # KIP-534: attributes bit 6 set, baseTimestamp holds the delete horizon the log cleaner wrote (null: not set)
    ("delete_horizon_ms", pa.int64()),
]

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
                    *CHECKPOINT_FIELDS, ("cluster_id", pa.string()), ("node_id", pa.int32()), ("clean_shutdown", pa.bool_()),
                    ("recovery_checkpoint_unreadable", pa.bool_()), ("topic_id", pa.string()), ("kind", pa.string()), ("severity", pa.string()), ("position", pa.int64()),
                    ("offset", pa.int64()), ("message", pa.string()), ("details", pa.string())]
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
               ("path", pa.string()), ("base_offset", pa.int64())]
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
    #: The partition dirs (live and stray) of each broker, for the control plane's stray_partition check.
    "partition_dirs": _schema([*PARTITION_KEY, ("path", pa.string()), DIR_STATE]),
    #: Per log dir: its clean-shutdown marker, a recovery-point-offset-checkpoint the broker cannot read, and the
    #: directories in it Kafka cannot take for partition dirs (`parsers.log_dir.kafka_topic_partition`).
    "log_dirs": _schema([("broker", pa.string()), ("clean_shutdown", pa.bool_()),
                         ("recovery_checkpoint_unreadable", pa.bool_()), ("refused_dirs", pa.list_(pa.string()))]),
}


#: The facts tables of the analysis (`analysis.TABLES`), column for column as their transforms build them (a test
#: holds each transform to its schema): a table whose input cannot have rows (no `__cluster_metadata` in the input
#: for the KRaft tables, say) is written from here without planning its transform.
OUTPUT_TABLES: dict[str, pa.Schema] = {
    "producers": _schema([*PARTITION_KEY, ("producer_id", pa.int64()), ("producer_epoch", pa.int32()),
        ("first_offset", pa.int64()), ("last_offset", pa.int64()), ("first_sequence", pa.int32()),
        ("last_sequence", pa.int32()), ("batch_count", pa.int64()), ("record_count", pa.int64()),
        ("first_timestamp", pa.int64()), ("last_timestamp", pa.int64()), ("is_transactional", pa.bool_())]),
    "transactions": _schema([("producer_id", pa.int64()), ("broker", pa.string()), ("topic", pa.string()),
        ("partition", pa.int32()), ("producer_epoch", pa.int32()), ("first_offset", pa.int64()),
        ("last_data_offset", pa.int64()), ("marker_offset", pa.int64()), ("outcome", pa.string()),
        ("coordinator_epoch", pa.int32()), ("batch_count", pa.int64()), ("record_count", pa.int64()),
        ("first_timestamp", pa.int64()), ("duration_ms", pa.int64()), ("file", pa.string()),
        ("position", pa.int64()), ("transactional_id", pa.string()), ("expected_coordinator_partition", pa.string())]),
    "replicas": _schema([*PARTITION_KEY, ("cluster_id", pa.string()), ("log_start_offset", pa.int64()),
        ("log_end_offset", pa.int64()), ("high_watermark", pa.int64()), ("latest_leader_epoch", pa.int32()),
        ("leader_epoch_checkpoint", pa.string()), ("replica_count", pa.int64()), ("longest_broker", pa.string()),
        ("lag", pa.int64()), ("diverged_at", pa.int64()), ("in_sync", pa.bool_()), ("compacted", pa.bool_()),
        ("cleaned_up_to", pa.int64()), ("dir_state", pa.string())]),
    "leader_epoch_lineage": _schema([*PARTITION_KEY, ("epoch", pa.int32()), ("checkpoint_start_offset", pa.int64()),
        ("batch_start_offset", pa.int64()), ("agrees", pa.bool_())]),
    "coordinator_transactions": _schema([("cluster_id", pa.string()), ("coordinator_partition", pa.string()),
        ("transactional_id", pa.string()), ("producer_id", pa.int64()), ("producer_epoch", pa.int32()),
        ("first_producer_epoch", pa.int32()), ("outcome", pa.string()), ("states", pa.list_(pa.string())),
        ("partitions", pa.list_(pa.string())), ("transaction_timeout_ms", pa.int32()),
        ("txn_start_timestamp", pa.int64()), ("completed_at", pa.int64()), ("coordinator_broker", pa.string()),
        ("coordinator_first_offset", pa.int64()), ("coordinator_last_offset", pa.int64()), ("file", pa.string()),
        ("position", pa.int64()), ("transaction_version", pa.int32()), ("marker_producer_id", pa.int64()),
        ("marker_producer_epoch", pa.int32()), ("expected_coordinator_partition", pa.string()),
        ("partitions_not_in_input", pa.list_(pa.string()))]),
    "producer_lineage": _schema([("cluster_id", pa.string()), ("transactional_id", pa.string()),
        ("producer_id", pa.int64()), ("first_epoch", pa.int32()), ("last_epoch", pa.int32()),
        ("previous_producer_id", pa.int64()), ("next_producer_id", pa.int64()), ("transaction_version", pa.int32()),
        ("coordinator_partition", pa.string()), ("first_coordinator_offset", pa.int64()),
        ("last_coordinator_offset", pa.int64()), ("first_coordinator_timestamp", pa.int64()),
        ("last_coordinator_timestamp", pa.int64()), ("first_data_partition", pa.string()),
        ("first_data_offset", pa.int64()), ("first_data_timestamp", pa.int64()), ("last_data_partition", pa.string()),
        ("last_data_offset", pa.int64()), ("last_data_timestamp", pa.int64()), ("source", pa.string())]),
    "consumer_offsets": _schema([("group_id", pa.string()), ("cluster_id", pa.string()), ("topic", pa.string()),
        ("partition", pa.int32()), ("committed_offset", pa.int64()), ("committed_leader_epoch", pa.int32()),
        ("commit_timestamp", pa.int64()), ("coordinator_broker", pa.string()),
        ("coordinator_partition", pa.string()), ("coordinator_offset", pa.int64()), ("file", pa.string()),
        ("position", pa.int64()), ("in_input", pa.bool_()), ("data_broker", pa.string()),
        ("log_start_offset", pa.int64()), ("log_end_offset", pa.int64()), ("lag", pa.int64()),
        ("aborted_first_offset", pa.int64()), ("aborted_last_offset", pa.int64()),
        ("aborted_producer_id", pa.int64()), ("status", pa.string()), ("producer_id", pa.int64()),
        ("transactional", pa.bool_()), ("transaction_outcome", pa.string())]),
    "lso": _schema([*PARTITION_KEY, ("last_stable_offset", pa.int64()), ("high_watermark", pa.int64()),
        ("log_end_offset", pa.int64()), ("held_by_producer_id", pa.int64()), ("stuck", pa.bool_())]),
    "lso_changes": _schema([*PARTITION_KEY, ("offset", pa.int64()), ("last_stable_offset", pa.int64()),
        ("held_by_producer_id", pa.int64())]),
    "aborted_ranges": _schema([*PARTITION_KEY, ("producer_id", pa.int64()), ("first_offset", pa.int64()),
        ("last_offset", pa.int64()), ("last_stable_offset", pa.int64()), ("txnindex_agrees", pa.bool_())]),
    "remote_segments": _schema([*PARTITION_KEY, ("topic_id", pa.string()), ("remote_segment_id", pa.string()),
        ("start_offset", pa.int64()), ("end_offset", pa.int64()), ("max_timestamp", pa.int64()),
        ("segment_leader_epochs", pa.string()), ("size", pa.int64()), ("state", pa.string()), ("broker_id", pa.int32()),
        ("broker_leader_epoch", pa.int32()), ("first_event_at", pa.int64()), ("last_event_at", pa.int64()),
        ("event_count", pa.int64()), ("file", pa.string()), ("position", pa.int64())]),
    "remote_partition_deletes": _schema([*PARTITION_KEY, ("topic_id", pa.string()), ("state", pa.string()),
        ("broker_id", pa.int32()), ("event_timestamp", pa.int64()), ("file", pa.string()), ("position", pa.int64()),
        ("offset", pa.int64())]),
    "partition_history": _schema([("cluster_id", pa.string()), ("metadata_broker", pa.string()),
        ("topic", pa.string()), ("topic_id", pa.string()), ("partition", pa.int32()),
        ("metadata_offset", pa.int64()), ("timestamp", pa.int64()), ("record_type", pa.string()),
        ("leader", pa.int32()), ("leader_epoch", pa.int64()), ("partition_epoch", pa.int64()),
        ("isr", pa.list_(pa.int32())), ("elr", pa.list_(pa.int32())), ("last_known_elr", pa.list_(pa.int32())),
        ("replicas", pa.list_(pa.int32())), ("adding_replicas", pa.list_(pa.int32())),
        ("removing_replicas", pa.list_(pa.int32())), ("leader_recovery_state", pa.string()),
        ("directories", pa.list_(pa.string())), ("previous_leader", pa.int32()),
        ("previous_isr", pa.list_(pa.int32())), ("previous_elr", pa.list_(pa.int32())), ("election", pa.string()),
        ("file", pa.string()), ("position", pa.int64())]),
    "broker_history": _schema([("cluster_id", pa.string()), ("metadata_broker", pa.string()),
        ("broker_id", pa.int32()), ("metadata_offset", pa.int64()), ("timestamp", pa.int64()),
        ("event", pa.string()), ("broker_epoch", pa.int64()), ("incarnation_id", pa.string()), ("rack", pa.string()),
        ("log_dirs", pa.list_(pa.string())), ("fenced", pa.bool_()), ("in_controlled_shutdown", pa.bool_()),
        ("file", pa.string()), ("position", pa.int64())]),
    "topics": _schema([("cluster_id", pa.string()), ("metadata_broker", pa.string()), ("topic", pa.string()),
        ("topic_id", pa.string()), ("partitions", pa.int32()), ("created_offset", pa.int64()),
        ("created_at", pa.int64()), ("deleted_offset", pa.int64()), ("deleted_at", pa.int64()), ("file", pa.string())]),
    "features": _schema([("cluster_id", pa.string()), ("metadata_broker", pa.string()), ("feature", pa.string()),
        ("feature_level", pa.int32()), ("metadata_offset", pa.int64()), ("timestamp", pa.int64()),
        ("file", pa.string()), ("position", pa.int64())]),
    # groups replayed (spark/groups.py, spark/share_groups.py): no broker/topic/partition of their own; where they
    # were read is `coordinator_broker`/`coordinator_partition`
    "group_members": _schema([("cluster_id", pa.string()), ("group", pa.string()), ("group_type", pa.string()),
        ("member_id", pa.string()), ("instance_id", pa.string()), ("client_id", pa.string()),
        ("client_host", pa.string()), ("rack", pa.string()), ("generation", pa.int32()), ("member_epoch", pa.int32()),
        ("member_state", pa.string()), ("subscribed_topics", pa.list_(pa.string())),
        ("subscribed_topic_regex", pa.string()), ("from_offset", pa.int64()), ("from_timestamp", pa.int64()),
        ("to_offset", pa.int64()), ("to_timestamp", pa.int64()), ("coordinator_broker", pa.string()),
        ("coordinator_partition", pa.string()), ("file", pa.string()), ("position", pa.int64())]),
    "group_assignments": _schema([("cluster_id", pa.string()), ("group", pa.string()),
        ("group_type", pa.string()), ("member_id", pa.string()), ("topic", pa.string()), ("topic_id", pa.string()),
        ("partition", pa.int32()), ("subtopology_id", pa.string()), ("generation", pa.int32()),
        ("member_epoch", pa.int32()), ("pending_revocation", pa.bool_()), ("assigned_from_offset", pa.int64()),
        ("assigned_from_timestamp", pa.int64()), ("assigned_to_offset", pa.int64()),
        ("assigned_to_timestamp", pa.int64()), ("coordinator_broker", pa.string()),
        ("coordinator_partition", pa.string()), ("file", pa.string()), ("position", pa.int64())]),
    "consumer_lag": _schema([("cluster_id", pa.string()), ("group", pa.string()), ("topic", pa.string()),
        ("partition", pa.int32()), ("committed_offset", pa.int64()), ("last_commit_timestamp", pa.int64()),
        ("log_end_offset", pa.int64()), ("last_stable_offset", pa.int64()), ("lag", pa.int64()),
        ("data_broker", pa.string()), ("status", pa.string()), ("owner_member_id", pa.string()),
        ("owner_client_id", pa.string()), ("owner_client_host", pa.string()), ("owned_until_offset", pa.int64()),
        ("owned_until_timestamp", pa.int64()), ("coordinator_broker", pa.string()),
        ("coordinator_partition", pa.string())]),
    "share_partition_state": _schema([("cluster_id", pa.string()), ("group", pa.string()),
        ("topic", pa.string()), ("topic_id", pa.string()), ("partition", pa.int32()),
        ("snapshot_epoch", pa.int32()), ("state_epoch", pa.int32()), ("leader_epoch", pa.int32()),
        ("start_offset", pa.int64()), ("first_offset", pa.int64()), ("last_offset", pa.int64()),
        ("delivery_state", pa.string()), ("delivery_count", pa.int32()), ("coordinator_broker", pa.string()),
        ("coordinator_partition", pa.string()), ("coordinator_offset", pa.int64()), ("timestamp", pa.int64()),
        ("file", pa.string()), ("position", pa.int64())]),
    "restart_prediction": _schema([*PARTITION_KEY, ("dir_state", pa.string()), ("clean_shutdown", pa.bool_()),
        ("recovery_point", pa.int64()), ("segments_recovered", pa.int32()), ("truncate_at_offset", pa.int64()),
        ("truncate_at_file", pa.string()), ("truncate_at_position", pa.int64()), ("bytes_discarded", pa.int64()),
        ("segments_deleted", pa.int32()), ("offsets_discarded", pa.list_(pa.int64())),
        ("committed_offsets_discarded", pa.list_(pa.int64())), ("restart_fails", pa.bool_()), ("reason", pa.string())]),
}


def frame(spark: SparkSession, schema: pa.Schema, rows: list[dict]) -> DataFrame:
    """A DataFrame of `schema` from dict rows built on the driver (a key a row lacks is null; no rows: an empty
    frame with every column)."""
    return spark.createDataFrame([tuple(row.get(name) for name in schema.names) for row in rows], ddl(schema))


def ddl(schema: pa.Schema) -> str:
    """The Spark DDL string of an Arrow schema (for mapInArrow)."""
    names = {pa.string(): "string", pa.int32(): "int", pa.int64(): "bigint", pa.bool_(): "boolean"}

    def name(kind: pa.DataType) -> str:
        if pa.types.is_struct(kind):
            return "struct<" + ", ".join(f"`{f.name}`: {name(f.type)}" for f in kind) + ">"
        return f"array<{name(kind.value_type)}>" if pa.types.is_list(kind) else names[kind]

    return ", ".join(f"`{f.name}` {name(f.type)}" for f in schema)


def columns(fields: list[tuple[str, pa.DataType]]) -> list[str]:
    return [name for name, _ in fields]
