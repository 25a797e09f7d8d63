"""Arrow schemas of the tables the scan produces, declared once for the executor side (Arrow record
batches out of mapInArrow) and the Spark side (the same schema as DDL)."""

from __future__ import annotations

import pyarrow as pa

from kforensics.parsers.findings import FINDING_COLUMNS

PARTITION_KEY = [("broker", pa.string()), ("topic", pa.string()), ("partition", pa.int32())]

BATCH_FIELDS = [
    ("file", pa.string()), ("segment_base_offset", pa.int64()), ("position", pa.int64()), ("size", pa.int32()),
    ("magic", pa.int32()), ("base_offset", pa.int64()), ("last_offset", pa.int64()), ("count", pa.int32()),
    ("partition_leader_epoch", pa.int32()), ("producer_id", pa.int64()), ("producer_epoch", pa.int32()),
    ("base_sequence", pa.int32()), ("last_sequence", pa.int32()), ("is_transactional", pa.bool_()),
    ("is_control", pa.bool_()), ("control_type", pa.string()), ("coordinator_epoch", pa.int32()),
    ("codec", pa.string()), ("timestamp_type", pa.string()), ("base_timestamp", pa.int64()),
    ("max_timestamp", pa.int64()), ("crc", pa.int64()), ("crc_valid", pa.bool_()),
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


def _schema(fields: list[tuple[str, pa.DataType]]) -> pa.Schema:
    return pa.schema([pa.field(name, kind, nullable=True) for name, kind in fields])


#: What one segment task emits: a batch row or a finding row (`row_kind`), both keyed by partition.
SEGMENT_ROW_FIELDS = [("row_kind", pa.string()), *PARTITION_KEY, *BATCH_FIELDS,
                      *[(n, t) for n, t in FINDING_FIELDS if n not in ("file", "position", "producer_id",
                                                                       "producer_epoch")],
                      *[(n, t) for n, t in SEGMENT_FIELDS if n not in ("file", "size", "last_offset", "base_offset")]]
SEGMENT_ROWS = _schema(SEGMENT_ROW_FIELDS)
RECORD_ROWS = _schema([*PARTITION_KEY, *RECORD_FIELDS])

#: What one partition task (its small files) emits: a tagged union of the small tables.
SMALL_ROW_FIELDS = [("row_kind", pa.string()), *PARTITION_KEY, ("file", pa.string()), ("version", pa.int32()),
                    ("producer_id", pa.int64()), ("first_offset", pa.int64()), ("last_offset", pa.int64()),
                    ("last_stable_offset", pa.int64()), ("snapshot_offset", pa.int64()),
                    ("producer_epoch", pa.int32()), ("last_sequence", pa.int32()), ("offset_delta", pa.int32()),
                    ("timestamp", pa.int64()), ("coordinator_epoch", pa.int32()),
                    ("current_txn_first_offset", pa.int64()), ("epoch", pa.int32()), ("start_offset", pa.int64()),
                    *CHECKPOINT_FIELDS, ("cluster_id", pa.string()), ("clean_shutdown", pa.bool_()),
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
]
INTERNAL_ROWS = _schema(INTERNAL_ROW_FIELDS)
INTERNAL_TOPICS = ("__transaction_state", "__consumer_offsets")

TASK_FIELDS = [("task_kind", pa.string()), ("broker", pa.string()), ("topic", pa.string()), ("partition", pa.int32()),
               ("path", pa.string()), ("base_offset", pa.int64())]
TASKS = _schema(TASK_FIELDS)

FINDINGS = _schema([(name, _FINDING_TYPES[name]) for name in FINDING_COLUMNS])


def ddl(schema: pa.Schema) -> str:
    """The Spark DDL string of an Arrow schema (for mapInArrow)."""
    names = {pa.string(): "string", pa.int32(): "int", pa.int64(): "bigint", pa.bool_(): "boolean"}
    return ", ".join(f"`{f.name}` {names[f.type]}" for f in schema)


def columns(fields: list[tuple[str, pa.DataType]]) -> list[str]:
    return [name for name, _ in fields]
