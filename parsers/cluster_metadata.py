"""Records of the KRaft `__cluster_metadata` log and its snapshots (`*.checkpoint`: the zero checkpoint
`00000000000000000000-0000000000.checkpoint` and the log dir's legacy `bootstrap.checkpoint` too, which hold the same
framed records), read and written through the message tables of `schemas_metadata` (see there for the Kafka version
they reflect).

A value is framed by MetadataRecordSerde (AbstractApiMessageSerde): uvarint frame version 1, uvarint apiKey,
uvarint version, then the message in the flexible encoding. The key is null. Control batches of the same log
(LeaderChange, SnapshotHeader, SnapshotFooter, KRaftVersion, KRaftVoters) are read by `decode_control_record`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kforensics.parsers.message_schema import (
    MessageDecodeError,
    decode_versioned,
    encode,
    read_frame,
    write_frame,
)
from kforensics.parsers.schemas_metadata import BY_API_KEY, BY_TYPE_NAME, TYPE_NAMES

TOPIC = "__cluster_metadata"

__all__ = ["MessageDecodeError", "SchemaRecord", "decode_metadata_record", "encode_metadata_record", "TOPIC",
           "TYPE_NAMES"]


@dataclass(frozen=True)
class SchemaRecord:
    """One decoded metadata record, as kafka-dump-log --cluster-metadata-decoder prints it.

    `data` uses Kafka's JsonConverter names (lowerCamelCase), uuids as base64url strings, bytes as base64, and
    holds tagged fields only where they differ from their default. `newer`: the version is above the highest the
    tables know (then `data` holds the fields the newest known version shares with it, or {} where that cannot be
    read, with `fields_read` false; `known_versions` says which versions are known); an apiKey past the known ones
    is `newer` too, with type_name `UNKNOWN_<apiKey>`, no data and `fields_read` false."""

    api_key: int
    type_name: str
    version: int
    data: dict[str, Any]
    newer: bool = False
    known_versions: str = ""
    unknown_tags: tuple[dict[str, Any], ...] = field(default=(), compare=False)
    fields_read: bool = True

    def to_json(self) -> dict[str, Any]:
        """{"type", "version", "data"}: the object kafka-dump-log prints."""
        return {"type": self.type_name, "version": self.version, "data": self.data}


_MAX_API_KEY = max(BY_API_KEY)


def decode_metadata_record(value: bytes | memoryview | None) -> SchemaRecord:
    """The record in one `__cluster_metadata` value.

    Raises MessageDecodeError (a ValueError, with `.position`) when the bytes cannot be framed or do not read as
    the record their apiKey and version name (null value, bad frame, an unused apiKey, truncation, trailing
    bytes). A version or apiKey newer than the tables is not an error: the record comes back with `newer`."""
    if value is None:
        raise MessageDecodeError("metadata record has no value", 0)
    api_key, version, pos = read_frame(value)
    message = BY_API_KEY.get(api_key)
    if message is None:
        if api_key > _MAX_API_KEY:
            return SchemaRecord(api_key, f"UNKNOWN_{api_key}", version, {}, True, "", fields_read=False)
        raise MessageDecodeError(f"apiKey {api_key} is no metadata record type", 1)
    decoded = decode_versioned(message, value, version, pos)
    return SchemaRecord(api_key, TYPE_NAMES[api_key], version, decoded.data, decoded.newer, message.valid,
                        decoded.unknown_tags, decoded.fields_read)


def encode_metadata_record(type_name: str, version: int, data: dict[str, Any]) -> bytes:
    """The value bytes of a metadata record (`type_name` as MetadataRecordType names it, e.g.
    "PARTITION_CHANGE_RECORD"; `data` in the form `decode_metadata_record` returns; fields left out take their
    defaults). Raises ValueError for an unknown type, a version the tables do not have, or data that does not
    fit the schema."""
    message = BY_TYPE_NAME.get(type_name)
    if message is None:
        raise ValueError(f"no metadata record type {type_name}")
    return write_frame(message.api_key, version) + encode(message, version, data)  # type: ignore[arg-type]


#: ControlRecordType ids (clients/.../record/ControlRecordType.java) of the KRaft control records.
CONTROL_TYPE_IDS = {"LEADER_CHANGE": 2, "SNAPSHOT_HEADER": 3, "SNAPSHOT_FOOTER": 4, "KRAFT_VERSION": 5,
                    "KRAFT_VOTERS": 6}


def decode_control_record(control_type: str, value: bytes | memoryview | None) -> SchemaRecord:
    """A KRaft control record (LEADER_CHANGE, SNAPSHOT_HEADER, SNAPSHOT_FOOTER, KRAFT_VERSION, KRAFT_VOTERS) as a
    SchemaRecord: `api_key` the ControlRecordType id, `type_name` the control type, `version` the record's own
    `Version` field (what ControlRecordUtils writes). A version above the tables' comes back `newer`.

    Raises MessageDecodeError when the value does not read, ValueError for another control type."""
    from kforensics.parsers.message_schema import Reader
    from kforensics.parsers.schemas_raft import MESSAGES as CONTROL_MESSAGES

    message = CONTROL_MESSAGES.get(control_type)
    if message is None:
        raise ValueError(f"{control_type} is no KRaft control record")
    if value is None:
        raise MessageDecodeError(f"{control_type} control record has no value", 0)
    version = Reader(value).fixed("int16")
    if version < 0:
        raise MessageDecodeError(f"{control_type} version {version}", 0)
    decoded = decode_versioned(message, value, version)
    return SchemaRecord(CONTROL_TYPE_IDS[control_type], control_type, version, decoded.data, decoded.newer,
                        message.valid, decoded.unknown_tags, decoded.fields_read)


def encode_control_record(control_type: str, data: dict[str, Any]) -> bytes:
    """The value of a KRaft control record, written at `data["version"]` (default 0)."""
    from kforensics.parsers.schemas_raft import MESSAGES as CONTROL_MESSAGES

    version = int(data.get("version", 0))
    return encode(CONTROL_MESSAGES[control_type], version, {**data, "version": version})
