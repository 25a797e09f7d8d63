"""Keys and values of Kafka's coordinator logs (`__consumer_offsets`, `__transaction_state`, `__share_group_state`)
and of the KRaft `__cluster_metadata` log, read through the message-schema interpreter (`message_schema`) with the
tables of `schemas_group`, `schemas_transaction`, `schemas_share` and `schemas_metadata` (each names the Kafka
version it reflects).

A coordinator record's key is an int16 record type (CoordinatorRecordType) then the key message in the classic
encoding; its value an int16 version then the value message; a null value is a tombstone.
:func:`decode_coordinator_record` reads one into a :class:`CoordinatorRecord` (raising MessageDecodeError on bytes
that cannot be read); a record type or value version newer than the tables is not an error: it comes back `newer`.

`decode_*` return JSON-able dicts and never raise: undecodable input gives `{"error": ...}`.
`format_*` give the text kafka-dump-log's --offsets-decoder / --transaction-log-decoder /
--share-group-state-decoder / --cluster-metadata-decoder print as `key: ...` and `payload: ...`.
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass, field
from typing import Any

from kforensics.parsers.message_schema import Message, MessageDecodeError, Reader, decode, decode_versioned
from kforensics.parsers.schemas_group import RECORDS as GROUP_RECORDS
from kforensics.parsers.schemas_share import RECORDS as SHARE_RECORDS
from kforensics.parsers.schemas_transaction import KEY as TXN_KEY
from kforensics.parsers.schemas_transaction import TRANSACTION_STATES
from kforensics.parsers.schemas_transaction import VALUE as TXN_VALUE

CONSUMER_OFFSETS = "__consumer_offsets"
TRANSACTION_STATE = "__transaction_state"
SHARE_GROUP_STATE = "__share_group_state"

#: topic -> record type -> (key description, value description).
COORDINATOR_RECORDS: dict[str, dict[int, tuple[Message, Message]]] = {
    CONSUMER_OFFSETS: GROUP_RECORDS,
    TRANSACTION_STATE: {0: (TXN_KEY, TXN_VALUE)},
    SHARE_GROUP_STATE: SHARE_RECORDS,
}

__all__ = ["CONSUMER_OFFSETS", "COORDINATOR_RECORDS", "SHARE_GROUP_STATE", "TRANSACTION_STATE",
           "TRANSACTION_STATES", "CoordinatorRecord", "NewerVersions", "coordinator_dump_form", "coordinator_error_text",
           "coordinator_text", "decode_cluster_metadata",
           "decode_consumer_offsets", "decode_coordinator_record", "decode_share_group_state",
           "decode_transaction_state", "encode_coordinator_record", "format_cluster_metadata",
           "format_consumer_offsets", "format_share_group_state", "format_transaction_state", "record_type_name",
           "transaction_state_name"]


@dataclass(frozen=True)
class CoordinatorRecord:
    """One decoded coordinator record. `key` and `value` are in Kafka's JsonConverter form (the schema's field
    names, first letter lower-cased; uuids base64url; bytes base64); `value` is None for a tombstone.
    `newer`: the record type or the value version is above what the tables know (`known_versions` then says
    which value versions are known; for an unknown record type `key_name` is None and key and value are empty).
    `layout`: the Kafka releases whose older layout of the value's version read the bytes ("" for the table's
    own, see `message_schema.Message.older`)."""

    topic: str
    record_type: int
    key_name: str | None
    key: dict[str, Any]
    value_name: str | None
    value_version: int | None
    value: dict[str, Any] | None
    newer: bool = False
    known_versions: str = ""
    unknown_tags: tuple[dict[str, Any], ...] = field(default=(), compare=False)
    layout: str = ""


def decode_coordinator_record(topic: str, key: bytes | None, value: bytes | None) -> CoordinatorRecord:
    """The record of a coordinator log (`topic` one of COORDINATOR_RECORDS). Raises MessageDecodeError when the key
    is missing or the bytes do not read as the record their type and version name."""
    records = COORDINATOR_RECORDS[topic]
    if key is None:
        raise MessageDecodeError("record has no key", 0)
    record_type = Reader(key).fixed("int16")
    pair = records.get(record_type)
    if pair is None:
        if record_type > max(records):
            return CoordinatorRecord(topic, record_type, None, {}, None, None, None, True, "")
        raise MessageDecodeError(f"{topic} has no record type {record_type}", 0)
    key_message, value_message = pair
    key_data, _ = decode(key_message, key, 0, 2)
    if value is None:
        return CoordinatorRecord(topic, record_type, key_message.name, key_data, value_message.name, None, None)
    version = Reader(value).fixed("int16")
    decoded = decode_versioned(value_message, value, version, 2)
    return CoordinatorRecord(topic, record_type, key_message.name, key_data, value_message.name, version,
                             decoded.data, decoded.newer, value_message.valid, decoded.unknown_tags, decoded.layout)


def encode_coordinator_record(topic: str, record_type: int, key: dict[str, Any],
                              value: dict[str, Any] | None, version: int = 0) -> tuple[bytes, bytes | None]:
    """(key bytes, value bytes or None for a tombstone) of a coordinator record, `key`/`value` in the form
    `decode_coordinator_record` returns."""
    import struct

    from kforensics.parsers.message_schema import encode

    key_message, value_message = COORDINATOR_RECORDS[topic][record_type]
    key_bytes = struct.pack(">h", record_type) + encode(key_message, 0, key)
    if value is None:
        return key_bytes, None
    return key_bytes, struct.pack(">h", version) + encode(value_message, version, value)


def record_type_name(message_name: str | None) -> str:
    """A key message's name as a record type in snake case: OffsetCommitKey -> offset_commit."""
    if message_name is None:
        return "unknown"
    stem = message_name[:-3] if message_name.endswith("Key") else message_name
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", stem).lower()


class NewerVersions:
    """Remembers which (topic, record type, version) were reported, so that each gets one
    `internal_record_newer_version` finding."""

    def __init__(self, seen: set[tuple[str, str, int]] | None = None) -> None:
        self.seen: set[tuple[str, str, int]] = set() if seen is None else seen

    def finding(self, topic: str, file: str, position: int | None, offset: int, record_type: str,
                api_key: int, version: int, known_versions: str, *, fields_read: bool = True,
                consequence: str = "") -> Any:
        """The finding for the first record of its kind, None for the ones after it. `fields_read` false: none of
        its fields could be read (the finding then says so and carries `fields_read`); `consequence` is appended
        to the message (what a reader of the record does without them)."""
        from kforensics.parsers.findings import Finding

        if (topic, record_type, version) in self.seen:
            return None
        self.seen.add((topic, record_type, version))
        known = f"versions {known_versions}" if known_versions else "no such record type"
        read = ("its known fields are decoded where possible" if fields_read
                else "its fields do not read as the newest known version, so none are decoded")
        details: dict[str, Any] = {"offset": offset, "record_type": record_type, "api_key": api_key,
                                   "version": version, "known_versions": known_versions}
        if not fields_read:
            details["fields_read"] = False
        return Finding("internal_record_newer_version", file, position,
                       f"{topic} record at offset {offset} is {record_type} version {version}, newer than the "
                       f"tables know ({known}): written by a newer Kafka; {read}"
                       + (f"; {consequence}" if consequence else ""), details)


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode()


def _error(exc: Exception, key: bytes | None, value: bytes | None) -> dict[str, Any]:
    return {"error": str(exc), "key": _b64(key), "value": _b64(value)}


def _marked(out: dict[str, Any], rec: CoordinatorRecord) -> dict[str, Any]:
    """`out` with `newer` and `known_versions` where the record is newer than the tables, `layout` where an older
    layout of its value's version read it."""
    if rec.newer:
        out["newer"] = True
        out["known_versions"] = rec.known_versions
    if rec.layout:
        out["layout"] = rec.layout
    return out


def _generic(topic: str, key: bytes | None, value: bytes | None) -> tuple[CoordinatorRecord | None, dict[str, Any]]:
    """(record, {"key": {"type", "version", key fields...}, "value": {"version", value fields...} | None}), or
    (None, the error dict)."""
    try:
        rec = decode_coordinator_record(topic, key, value)
    except MessageDecodeError as exc:
        return None, _error(exc, key, value)
    return rec, {"key": {"type": record_type_name(rec.key_name), "version": rec.record_type, **rec.key},
                 "value": None if rec.value is None else {"version": rec.value_version, **rec.value}}


# --- __consumer_offsets ------------------------------------------------------------------------

def decode_consumer_offsets(key: bytes | None, value: bytes | None) -> dict[str, Any]:
    """{"key": {"type": "offset_commit"|"group_metadata"|"consumer_group_metadata"|..., "version": record type,
    key fields...}, "value": {"version", value fields...} | None}, or {"error", "key", "value"}.

    Key fields keep Kafka's names (`group`, `topic`, `partition` for offset commits and group metadata;
    `groupId`, `memberId`, ... for the others, with `group` repeating `groupId`). A newer record type or value
    version adds `"newer": true` and `known_versions`; a value read as an older layout of its version (Kafka 4.0's
    share group records) adds `layout`, the Kafka releases that wrote it."""
    rec, out = _generic(CONSUMER_OFFSETS, key, value)
    if rec is None:
        return out
    k = out["key"]
    if rec.record_type in (0, 1):
        k["type"] = "offset_commit"
    if "groupId" in k:
        k["group"] = k["groupId"]
    return _marked(out, rec)


def _consumer_protocol(data: dict[str, Any]) -> dict[str, Any]:
    """GroupMetadataValue as kafka-dump-log prints it: for protocolType "consumer", each member's subscription
    and assignment decoded as ConsumerProtocolSubscription / ConsumerProtocolAssignment (left as base64 when they
    do not read, as Kafka swallows the error)."""
    from kforensics.parsers.schemas_group import CONSUMER_PROTOCOL_ASSIGNMENT, CONSUMER_PROTOCOL_SUBSCRIPTION

    if data.get("protocolType") != "consumer":
        return data
    members = []
    for member in data.get("members") or []:
        member = dict(member)
        for name, message in (("subscription", CONSUMER_PROTOCOL_SUBSCRIPTION),
                              ("assignment", CONSUMER_PROTOCOL_ASSIGNMENT)):
            raw = member.get(name)
            if raw is None:
                continue
            blob = base64.b64decode(raw)
            try:
                version = Reader(blob).fixed("int16")
                member[name], _ = decode(message, blob, min(version, message.highest_version), 2, whole=False)
            except MessageDecodeError:
                pass
        members.append(member)
    return {**data, "members": members}


def transaction_state_name(status: Any) -> str | None:
    """TransactionState.fromId(id).stateName() (`Empty`, `Ongoing`, `PrepareCommit`, ...), None for an id no state
    has."""
    return TRANSACTION_STATES[status] if isinstance(status, int) and 0 <= status < len(TRANSACTION_STATES) else None


def coordinator_dump_form(rec: CoordinatorRecord, *, state_names: bool = False) \
        -> tuple[dict[str, Any], dict[str, Any] | None] | None:
    """kafka-dump-log's key and payload of a decoded record, built once for its text and for dump --json: key
    `{"type":"<record type>","data":{...}}`, payload `{"version":"<value version>","data":{...}}` or None for a
    tombstone (a consumer group's member subscriptions and assignments decoded); None for an unknown record type.
    `state_names`: a TransactionLogValue's `transactionStatus` by its state's name, as Kafka 4.4's
    `--transaction-log-decoder` prints it (KAFKA-20712; 4.0-4.3 print the id), the id kept where no state has it."""
    if rec.key_name is None:
        return None
    key = {"type": str(rec.record_type), "data": rec.key}
    if rec.value is None:
        return key, None
    data = _consumer_protocol(rec.value) if rec.topic == CONSUMER_OFFSETS and rec.record_type == 2 else rec.value
    if state_names and rec.topic == TRANSACTION_STATE and "transactionStatus" in data:
        name = transaction_state_name(data["transactionStatus"])
        data = data if name is None else {**data, "transactionStatus": name}  # in place, as ObjectNode.replace
    return key, {"version": str(rec.value_version), "data": data}


def coordinator_text(rec: CoordinatorRecord, offset: int | None) -> tuple[str | None, str | None]:
    """kafka-dump-log's coordinator record parser's key and payload text (`<DELETE>` for a tombstone); a
    transaction's state by name, as Kafka 4.4 prints it."""
    form = coordinator_dump_form(rec, state_names=True)
    if form is None:
        return f"Unknown record type {rec.record_type} at offset {offset}, skipping.", None
    key, payload = form
    return _json(key), "<DELETE>" if payload is None else _json(payload)


def coordinator_error_text(key: bytes | None, offset: int | None, exc: Exception) -> tuple[str, None]:
    """What kafka-dump-log prints for a coordinator record that does not decode."""
    if key is None:  # Kafka throws here, ending the dump; the message is its own
        return f"Error at offset {offset}, skipping. Failed to decode message at offset {offset} using the specified " \
               "decoder (message had a missing key)", None
    return f"Error at offset {offset}, skipping. {exc}", None


def _coordinator_text(topic: str, key: bytes | None, value: bytes | None,
                      offset: int | None) -> tuple[str | None, str | None]:
    try:
        rec = decode_coordinator_record(topic, key, value)
    except MessageDecodeError as exc:
        return coordinator_error_text(key, offset, exc)
    return coordinator_text(rec, offset)


def _json(obj: Any) -> str:
    """Compact JSON as Jackson's ObjectNode.toString writes it (non-ASCII characters as they are)."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def format_consumer_offsets(key: bytes | None, value: bytes | None,
                            offset: int | None = None) -> tuple[str | None, str | None]:
    """kafka-dump-log --offsets-decoder: key `{"type":"<record type>","data":{...}}`, payload
    `{"version":"<value version>","data":{...}}` or `<DELETE>` (a consumer group's member subscriptions and
    assignments decoded)."""
    return _coordinator_text(CONSUMER_OFFSETS, key, value, offset)


# --- __transaction_state -----------------------------------------------------------------------

def decode_transaction_state(key: bytes | None, value: bytes | None) -> dict[str, Any]:
    """{"key": {"version", "transactional_id"}, "value": {version, producer_id, producer_epoch, state, partitions
    {topic: [ids]}, transaction_timeout_ms, last_update_timestamp_ms, start_timestamp_ms, and where written
    previous_producer_id, next_producer_id, next_producer_epoch, client_transaction_version} | None}, or
    {"error", "key", "value"}."""
    try:
        rec = decode_coordinator_record(TRANSACTION_STATE, key, value)
        if rec.key_name is None:
            raise MessageDecodeError(f"transaction log record type {rec.record_type} is not a transaction log key", 0)
    except MessageDecodeError as exc:
        return _error(exc, key, value)
    k = {"version": rec.record_type, "transactional_id": rec.key["transactionalId"]}
    if rec.value is None:
        return {"key": k, "value": None}
    v = rec.value
    if not v:  # a newer version whose fields could not be read
        return {"key": k, "value": {"version": rec.value_version}, "newer": True, "known_versions": rec.known_versions}
    status = v["transactionStatus"]
    parts = v["transactionPartitions"]
    out: dict[str, Any] = {
        "version": rec.value_version, "producer_id": v["producerId"], "producer_epoch": v["producerEpoch"],
        "transaction_timeout_ms": v["transactionTimeoutMs"],
        "state": transaction_state_name(status) or f"Unknown({status})",
        "partitions": None if parts is None else {p["topic"]: p["partitionIds"] for p in parts},
        "last_update_timestamp_ms": v["transactionLastUpdateTimestampMs"],
        "start_timestamp_ms": v["transactionStartTimestampMs"],
    }
    for name, out_name in (("previousProducerId", "previous_producer_id"), ("nextProducerId", "next_producer_id"),
                           ("nextProducerEpoch", "next_producer_epoch"),
                           ("clientTransactionVersion", "client_transaction_version")):
        if name in v:
            out[out_name] = v[name]
    return _marked({"key": k, "value": out}, rec)


def format_transaction_state(key: bytes | None, value: bytes | None,
                             offset: int | None = None) -> tuple[str | None, str | None]:
    """kafka-dump-log 4.4 --transaction-log-decoder: key `{"type":"0","data":{"transactionalId":...}}`, payload
    `{"version":"<n>","data":{...TransactionLogValue...}}` with `transactionStatus` by its state's name
    (`"CompleteCommit"`; 4.0-4.3 print the id), or `<DELETE>`."""
    return _coordinator_text(TRANSACTION_STATE, key, value, offset)


# --- __share_group_state -----------------------------------------------------------------------

def decode_share_group_state(key: bytes | None, value: bytes | None) -> dict[str, Any]:
    """{"key": {"type": "share_snapshot"|"share_update", "version": record type, "groupId", "topicId",
    "partition"}, "value": {"version", value fields...} | None}, or {"error", "key", "value"}; `layout` as
    decode_consumer_offsets adds it (Kafka 4.0's ShareSnapshotValue / ShareUpdateValue)."""
    rec, out = _generic(SHARE_GROUP_STATE, key, value)
    return out if rec is None else _marked(out, rec)


def format_share_group_state(key: bytes | None, value: bytes | None,
                             offset: int | None = None) -> tuple[str | None, str | None]:
    """kafka-dump-log --share-group-state-decoder: key `{"type":"<0|1>","data":{"groupId",...}}`, payload
    `{"version":"<n>","data":{...}}` or `<DELETE>`."""
    return _coordinator_text(SHARE_GROUP_STATE, key, value, offset)


# --- __cluster_metadata ------------------------------------------------------------------------

def decode_cluster_metadata(key: bytes | None, value: bytes | None) -> dict[str, Any]:
    """{"type": "<MetadataRecordType>", "version": n, "data": {...}} for one KRaft metadata record (plus
    `"newer": true` and `known_versions` for a version the tables do not know), or {"error", "key", "value"}."""
    from kforensics.parsers.cluster_metadata import decode_metadata_record

    try:
        rec = decode_metadata_record(value)
    except MessageDecodeError as exc:
        return _error(exc, key, value)
    out = rec.to_json()
    if rec.newer:
        out["newer"] = True
        out["known_versions"] = rec.known_versions
    return out


def format_cluster_metadata(key: bytes | None, value: bytes | None,
                            offset: int | None = None) -> tuple[str | None, str | None]:
    """kafka-dump-log --cluster-metadata-decoder: no key, payload `{"type":...,"version":...,"data":{...}}`
    (`Error at <offset>, skipping. ...` for a value that does not read)."""
    decoded = decode_cluster_metadata(key, value)
    if "error" in decoded:
        return None, f"Error at {offset}, skipping. {decoded['error']}"
    return None, _json({k: decoded[k] for k in ("type", "version", "data")})
