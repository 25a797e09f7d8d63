"""Keys and values of Kafka's internal topics: `__consumer_offsets`, `__transaction_state`, and the
KRaft `__cluster_metadata` log (and its snapshots).

`decode_*` return JSON-able dicts and never raise: undecodable input gives `{"error": ...}`.
`format_*` give the text kafka-dump-log's --offsets-decoder / --transaction-log-decoder /
--cluster-metadata-decoder print as `key: ...` and `payload: ...`.
"""

from __future__ import annotations

import base64
import json
import struct
from typing import Any

TRANSACTION_STATES = ("Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort", "Dead",
                      "PrepareEpochFence")

# MetadataRecordType ids (metadata/src/main/resources/common/metadata/*.json "apiKey"; 27 checked against
# real KRaft logs, whose RegisterControllerRecord carries apiKey 27).
METADATA_RECORD_TYPES = {
    0: "REGISTER_BROKER_RECORD", 1: "UNREGISTER_BROKER_RECORD", 2: "TOPIC_RECORD", 3: "PARTITION_RECORD",
    4: "CONFIG_RECORD", 5: "PARTITION_CHANGE_RECORD", 6: "ACCESS_CONTROL_ENTRY_RECORD", 7: "FENCE_BROKER_RECORD",
    8: "UNFENCE_BROKER_RECORD", 9: "REMOVE_TOPIC_RECORD", 10: "DELEGATION_TOKEN_RECORD",
    11: "USER_SCRAM_CREDENTIAL_RECORD", 12: "FEATURE_LEVEL_RECORD", 14: "CLIENT_QUOTA_RECORD",
    15: "PRODUCER_IDS_RECORD", 16: "REMOVE_ACCESS_CONTROL_ENTRY_RECORD", 17: "BROKER_REGISTRATION_CHANGE_RECORD",
    18: "REMOVE_USER_SCRAM_CREDENTIAL_RECORD", 19: "REMOVE_DELEGATION_TOKEN_RECORD", 20: "NO_OP_RECORD",
    21: "ZK_MIGRATION_STATE_RECORD", 22: "REMOVE_FEATURE_LEVEL_RECORD", 23: "BEGIN_TRANSACTION_RECORD",
    24: "END_TRANSACTION_RECORD", 25: "ABORT_TRANSACTION_RECORD", 27: "REGISTER_CONTROLLER_RECORD",
    28: "CLEAR_ELR_RECORD", 29: "UNREGISTER_CONTROLLER_RECORD",
}


class _DecodeError(Exception):
    pass


class _Reader:
    """Kafka protocol primitives over a bytes buffer (classic and flexible encodings)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def _take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise _DecodeError(f"needs {n} bytes at {self.pos}, {len(self.data) - self.pos} left")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def int8(self) -> int:
        return struct.unpack(">b", self._take(1))[0]

    def int16(self) -> int:
        return struct.unpack(">h", self._take(2))[0]

    def int32(self) -> int:
        return struct.unpack(">i", self._take(4))[0]

    def int64(self) -> int:
        return struct.unpack(">q", self._take(8))[0]

    def uuid(self) -> str:
        return base64.urlsafe_b64encode(self._take(16)).decode().rstrip("=")

    def uvarint(self) -> int:
        shift = value = 0
        while True:
            b = self._take(1)[0]
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
            shift += 7
            if shift > 35:
                raise _DecodeError("unsigned varint too long")

    def string(self, nullable: bool = False) -> str | None:
        n = self.int16()
        if n < 0:
            if nullable:
                return None
            raise _DecodeError("null string where one is required")
        return self._take(n).decode("utf-8", errors="replace")

    def compact_string(self) -> str | None:
        n = self.uvarint() - 1
        return None if n < 0 else self._take(n).decode("utf-8", errors="replace")

    def bytes_(self) -> bytes | None:
        n = self.int32()
        return None if n < 0 else self._take(n)

    def array(self, item) -> list | None:
        n = self.int32()
        if n > len(self.data):
            raise _DecodeError(f"array of {n} items cannot fit")
        return None if n < 0 else [item() for _ in range(n)]

    def compact_array(self, item) -> list | None:
        n = self.uvarint() - 1
        if n > len(self.data):
            raise _DecodeError(f"array of {n} items cannot fit")
        return None if n < 0 else [item() for _ in range(n)]

    def tagged_fields(self) -> dict[int, bytes]:
        return {self.uvarint(): self._take(self.uvarint()) for _ in range(self.uvarint())}



def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode()


def _guard(fn):
    def wrapper(key: bytes | None, value: bytes | None) -> dict[str, Any]:
        try:
            return fn(key, value)
        except (_DecodeError, struct.error, IndexError, ValueError) as exc:
            return {"error": str(exc), "key": _b64(key), "value": _b64(value)}

    wrapper.__doc__ = fn.__doc__
    wrapper.__name__ = fn.__name__
    return wrapper


# --- __consumer_offsets ------------------------------------------------------------------------

@_guard
def decode_consumer_offsets(key: bytes | None, value: bytes | None) -> dict[str, Any]:
    """{"key": {"type": "offset_commit"|"group_metadata"|..., "version", ...}, "value": {...} | None}."""
    if key is None:
        raise _DecodeError("record has no key")
    r = _Reader(key)
    version = r.int16()
    if version in (0, 1):
        k = {"type": "offset_commit", "version": version, "group": r.string(), "topic": r.string(),
             "partition": r.int32()}
    elif version == 2:
        k = {"type": "group_metadata", "version": version, "group": r.string()}
    else:
        k = {"type": f"coordinator_record_{version}", "version": version}
        try:
            k["group"] = r.string() if version < 10 else r.compact_string()
        except _DecodeError:
            pass
    if value is None:
        return {"key": k, "value": None}
    v = _Reader(value)
    v_version = v.int16()
    if k["type"] == "offset_commit":
        out: dict[str, Any] = {"version": v_version, "offset": v.int64()}
        if v_version >= 3:
            out["leaderEpoch"] = v.int32()
        out["metadata"] = v.compact_string() if v_version >= 4 else v.string()
        out["commitTimestamp"] = v.int64()
        if v_version == 1:
            out["expireTimestamp"] = v.int64()
        if v_version >= 4:
            v.tagged_fields()
        return {"key": k, "value": out}
    if k["type"] == "group_metadata":
        return {"key": k, "value": _group_metadata_value(v, v_version)}
    return {"key": k, "value": {"version": v_version, "bytes": _b64(value)}}


def _group_metadata_value(v: _Reader, version: int) -> dict[str, Any]:
    flexible = version >= 4
    text = v.compact_string if flexible else (lambda: v.string(nullable=True))
    blob = (lambda: v._take(v.uvarint() - 1)) if flexible else v.bytes_
    out: dict[str, Any] = {"version": version, "protocolType": text(), "generation": v.int32(),
                           "protocol": text(), "leader": text()}
    if version >= 2:
        out["currentStateTimestamp"] = v.int64()

    def member() -> dict[str, Any]:
        m: dict[str, Any] = {"memberId": text()}
        if version >= 3:
            m["groupInstanceId"] = text()
        m["clientId"] = text()
        m["clientHost"] = text()
        if version >= 1:
            m["rebalanceTimeout"] = v.int32()
        m["sessionTimeout"] = v.int32()
        m["subscription"] = _b64(blob())
        m["assignment"] = _b64(blob())
        if flexible:
            v.tagged_fields()
        return m

    out["members"] = v.compact_array(member) if flexible else v.array(member)
    return out


def format_consumer_offsets(key: bytes | None, value: bytes | None) -> tuple[str | None, str | None]:
    """kafka-dump-log --offsets-decoder: key `{"type":"<key version>","data":{...}}`, payload
    `{"version":"<value version>","data":{...}}` or `<DELETE>`."""
    decoded = decode_consumer_offsets(key, value)
    if "error" in decoded:
        return f"Error, skipping. {decoded['error']}", None
    k = dict(decoded["key"])
    key_version = k.pop("version")
    k.pop("type")
    key_text = json.dumps({"type": str(key_version), "data": k}, separators=(",", ":"))
    if decoded["value"] is None:
        return key_text, "<DELETE>"
    data = dict(decoded["value"])
    value_version = data.pop("version")
    return key_text, json.dumps({"version": str(value_version), "data": data}, separators=(",", ":"))


# --- __transaction_state -----------------------------------------------------------------------

@_guard
def decode_transaction_state(key: bytes | None, value: bytes | None) -> dict[str, Any]:
    """{"key": {"version", "transactional_id"}, "value": {producer_id, producer_epoch, state, ...} | None}."""
    if key is None:
        raise _DecodeError("record has no key")
    r = _Reader(key)
    key_version = r.int16()
    if key_version != 0:
        raise _DecodeError(f"transaction log key version {key_version} is not a transaction log key")
    k = {"version": key_version, "transactional_id": r.string()}
    if value is None:
        return {"key": k, "value": None}
    v = _Reader(value)
    version = v.int16()
    if version not in (0, 1):
        raise _DecodeError(f"unknown transaction log value version {version}")
    out: dict[str, Any] = {"version": version, "producer_id": v.int64(), "producer_epoch": v.int16(),
                           "transaction_timeout_ms": v.int32()}
    status = v.int8()
    out["state"] = TRANSACTION_STATES[status] if 0 <= status < len(TRANSACTION_STATES) else f"Unknown({status})"
    if version == 0:
        parts = v.array(lambda: (v.string(), v.array(v.int32)))
    else:
        def flexible_partition() -> tuple[str | None, list | None]:
            topic, ids = v.compact_string(), v.compact_array(v.int32)
            v.tagged_fields()
            return topic, ids

        parts = v.compact_array(flexible_partition)
    out["partitions"] = {t: p for t, p in parts} if parts is not None else None
    out["last_update_timestamp_ms"] = v.int64()
    out["start_timestamp_ms"] = v.int64()
    if version >= 1:
        tags = v.tagged_fields()
        if 0 in tags:
            out["previous_producer_id"] = struct.unpack(">q", tags[0])[0]
        if 1 in tags:
            out["next_producer_id"] = struct.unpack(">q", tags[1])[0]
        if 2 in tags:
            out["client_transaction_version"] = struct.unpack(">h", tags[2])[0]
    return {"key": k, "value": out}


def format_transaction_state(key: bytes | None, value: bytes | None) -> tuple[str | None, str | None]:
    """kafka-dump-log --transaction-log-decoder's `transaction_metadata::transactionalId=...` form.

    Kafka prints the partitions of a Java hash set (unordered); they are sorted here.
    """
    decoded = decode_transaction_state(key, value)
    if "error" in decoded:
        return f"Error, skipping. {decoded['error']}", None
    key_text = f"transaction_metadata::transactionalId={decoded['key']['transactional_id']}"
    v = decoded["value"]
    if v is None:
        return key_text, "<DELETE>"
    parts = [] if v["state"] == "Empty" or not v["partitions"] else sorted(
        (t, p) for t, ps in v["partitions"].items() for p in (ps or []))
    return key_text, (f"producerId:{v['producer_id']},producerEpoch:{v['producer_epoch']},state={v['state']},"
                      f"partitions=[{','.join(f'{t}-{p}' for t, p in parts)}],"
                      f"txnLastUpdateTimestamp={v['last_update_timestamp_ms']},"
                      f"txnTimeoutMs={v['transaction_timeout_ms']}")


# --- __cluster_metadata ------------------------------------------------------------------------

def _topic_record(r: _Reader, version: int) -> dict[str, Any]:
    return {"name": r.compact_string(), "topicId": r.uuid()}


def _partition_record(r: _Reader, version: int) -> dict[str, Any]:
    ints = lambda: r.compact_array(r.int32)  # noqa: E731
    return {"partitionId": r.int32(), "topicId": r.uuid(), "replicas": ints(), "isr": ints(),
            "removingReplicas": ints(), "addingReplicas": ints(), "leader": r.int32(), "leaderEpoch": r.int32(),
            "partitionEpoch": r.int32()}


def _feature_level_record(r: _Reader, version: int) -> dict[str, Any]:
    return {"name": r.compact_string(), "featureLevel": r.int16()}


def _producer_ids_record(r: _Reader, version: int) -> dict[str, Any]:
    return {"brokerId": r.int32(), "brokerEpoch": r.int64(), "nextProducerId": r.int64()}


def _broker_id_first(r: _Reader, version: int) -> dict[str, Any]:
    return {"brokerId": r.int32()}


def _controller_id_first(r: _Reader, version: int) -> dict[str, Any]:
    return {"controllerId": r.int32()}


def _config_record(r: _Reader, version: int) -> dict[str, Any]:
    return {"resourceType": r.int8(), "resourceName": r.compact_string(), "name": r.compact_string(),
            "value": r.compact_string()}


def _remove_topic_record(r: _Reader, version: int) -> dict[str, Any]:
    return {"topicId": r.uuid()}


def _no_fields(r: _Reader, version: int) -> dict[str, Any]:
    return {}


_METADATA_DECODERS = {
    0: _broker_id_first, 1: _broker_id_first, 2: _topic_record, 3: _partition_record, 4: _config_record,
    7: _broker_id_first, 8: _broker_id_first, 9: _remove_topic_record, 12: _feature_level_record,
    15: _producer_ids_record, 17: _broker_id_first, 20: _no_fields, 27: _controller_id_first,
    29: _controller_id_first,
}
# Records whose listed fields are all there is (the others carry more fields than decoded here).
_COMPLETE = {2, 4, 9, 12, 15, 20, 29}


@_guard
def decode_cluster_metadata(key: bytes | None, value: bytes | None) -> dict[str, Any]:
    """{"type": "<MetadataRecordType>", "version": n, "data": {...}} for one KRaft metadata record.

    The data holds the fields decoded here; records only partly decoded add `"partial": true`.
    """
    if value is None:
        raise _DecodeError("metadata record has no value")
    r = _Reader(value)
    frame_version = r.uvarint()
    if frame_version != 1:
        raise _DecodeError(f"unknown metadata frame version {frame_version}")
    api_key = r.uvarint()
    version = r.uvarint()
    name = METADATA_RECORD_TYPES.get(api_key, f"UNKNOWN({api_key})")
    out: dict[str, Any] = {"type": name, "version": version}
    decoder = _METADATA_DECODERS.get(api_key)
    if decoder is None:
        out["data"] = {}
        out["partial"] = True
        return out
    out["data"] = decoder(r, version)
    if api_key not in _COMPLETE:
        out["partial"] = True
    return out


def format_cluster_metadata(key: bytes | None, value: bytes | None) -> tuple[str | None, str | None]:
    """kafka-dump-log --cluster-metadata-decoder: no key, payload `{"type":...,"version":...,"data":{...}}`."""
    decoded = decode_cluster_metadata(key, value)
    if "error" in decoded:
        return None, f"Error, skipping. {decoded['error']}"
    return None, json.dumps({k: decoded[k] for k in ("type", "version", "data")}, separators=(",", ":"))

