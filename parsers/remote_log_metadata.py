"""Values of `__remote_log_metadata`, the internal topic of tiered storage's TopicBasedRemoteLogMetadataManager
(KIP-405): RemoteLogSegmentMetadataRecord, RemoteLogSegmentMetadataUpdateRecord,
RemotePartitionDeleteMetadataRecord and RemoteLogSegmentMetadataSnapshotRecord.

Framing (RemoteLogMetadataSerde -> BytesApiMessageSerde -> AbstractApiMessageSerde.write): the record key
is null (ProducerManager.publishMessage); the value is three unsigned varints, frame version (1), api key
and message version, then the message in the flexible encoding of its schema
(storage/src/main/resources/message/*.json): compact strings, arrays and bytes, 16-byte uuids, and a
tagged-field section after every struct. Kafka rejects trailing bytes, and so does this decoder.

`decode_remote_log_metadata` returns a JSON-able dict and never raises: undecodable input gives
`{"error": ...}`. Its `data` uses the schema's field names as Kafka's JSON converters do (lowerCamelCase);
tagged fields no schema version declares are kept under `unknownTaggedFields`.
`remote_log_event` flattens a decoded record into the snake_case fields of the scan's tables.
`format_remote_log_metadata` gives what kafka-dump-log --remote-log-metadata-decoder prints (the
toString of RemoteLogSegmentMetadata, ...Update, RemotePartitionDeleteMetadata, ...Snapshot).
"""

from __future__ import annotations

import base64
import struct
from typing import Any

TOPIC = "__remote_log_metadata"
FRAME_VERSION = 1  # AbstractApiMessageSerde.DEFAULT_FRAME_VERSION

#: RemoteLogSegmentState ids (storage/api/.../RemoteLogSegmentState.java)
SEGMENT_STATES = ("COPY_SEGMENT_STARTED", "COPY_SEGMENT_FINISHED", "DELETE_SEGMENT_STARTED",
                  "DELETE_SEGMENT_FINISHED")
#: RemotePartitionDeleteState ids (storage/api/.../RemotePartitionDeleteState.java)
PARTITION_DELETE_STATES = ("DELETE_PARTITION_MARKED", "DELETE_PARTITION_STARTED", "DELETE_PARTITION_FINISHED")

# --- the schemas, declared once: (Name, type, nested fields or None, nullable) -------------------------------
# Every field of these schemas has "versions": "0+"; every version is flexible ("flexibleVersions": "0+").
_TOPIC_ID_PARTITION = (("Name", "string", None, False), ("Id", "uuid", None, False),
                       ("Partition", "int32", None, False))
_SEGMENT_ID = (("TopicIdPartition", "struct", _TOPIC_ID_PARTITION, False), ("Id", "uuid", None, False))
_LEADER_EPOCH_ENTRY = (("LeaderEpoch", "int32", None, False), ("Offset", "int64", None, False))

#: api key -> (message name, valid versions, fields)
SCHEMAS: dict[int, tuple[str, tuple[int, ...], tuple]] = {
    0: ("RemoteLogSegmentMetadataRecord", (0,), (
        ("RemoteLogSegmentId", "struct", _SEGMENT_ID, False), ("StartOffset", "int64", None, False),
        ("EndOffset", "int64", None, False), ("BrokerId", "int32", None, False),
        ("MaxTimestampMs", "int64", None, False), ("EventTimestampMs", "int64", None, False),
        ("SegmentLeaderEpochs", "[]struct", _LEADER_EPOCH_ENTRY, False),
        ("SegmentSizeInBytes", "int32", None, False), ("CustomMetadata", "bytes", None, True),
        ("RemoteLogSegmentState", "int8", None, False))),
    1: ("RemoteLogSegmentMetadataUpdateRecord", (0,), (
        ("RemoteLogSegmentId", "struct", _SEGMENT_ID, False), ("BrokerId", "int32", None, False),
        ("EventTimestampMs", "int64", None, False), ("CustomMetadata", "bytes", None, True),
        ("RemoteLogSegmentState", "int8", None, False))),
    2: ("RemotePartitionDeleteMetadataRecord", (0,), (
        ("TopicIdPartition", "struct", _TOPIC_ID_PARTITION, False), ("BrokerId", "int32", None, False),
        ("EventTimestampMs", "int64", None, False), ("RemotePartitionDeleteState", "int8", None, False))),
    3: ("RemoteLogSegmentMetadataSnapshotRecord", (0,), (
        ("SegmentId", "uuid", None, False), ("StartOffset", "int64", None, False),
        ("EndOffset", "int64", None, False), ("BrokerId", "int32", None, False),
        ("MaxTimestampMs", "int64", None, False), ("EventTimestampMs", "int64", None, False),
        ("SegmentLeaderEpochs", "[]struct", _LEADER_EPOCH_ENTRY, False),
        ("SegmentSizeInBytes", "int32", None, False), ("CustomMetadata", "bytes", None, True),
        ("RemoteLogSegmentState", "int8", None, False))),
}
_FIXED = {"int8": ">b", "int16": ">h", "int32": ">i", "int64": ">q"}


class RemoteLogMetadataError(Exception):
    """The bytes are not a record of the remote log metadata topic."""


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise RemoteLogMetadataError(f"needs {n} bytes at byte {self.pos}, {len(self.data) - self.pos} left")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def uvarint(self) -> int:
        shift = value = 0
        while True:
            b = self.take(1)[0]
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
            shift += 7
            if shift > 28:
                raise RemoteLogMetadataError(f"unsigned varint too long at byte {self.pos}")

    def compact_length(self, what: str, nullable: bool) -> int | None:
        n = self.uvarint() - 1
        if n < 0:
            if nullable:
                return None
            raise RemoteLogMetadataError(f"null {what} at byte {self.pos} where one is required")
        if n > len(self.data) - self.pos:
            raise RemoteLogMetadataError(f"{what} of length {n} at byte {self.pos} overruns the value")
        return n


def _camel(name: str) -> str:
    return name[0].lower() + name[1:]


def _read_struct(r: _Reader, fields: tuple, path: str, unknown: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, kind, nested, nullable in fields:
        key = _camel(name)
        if kind in _FIXED:
            fmt = _FIXED[kind]
            out[key] = struct.unpack(fmt, r.take(struct.calcsize(fmt)))[0]
        elif kind == "uuid":
            out[key] = base64.urlsafe_b64encode(r.take(16)).decode().rstrip("=")
        elif kind == "string":
            n = r.compact_length(f"string {name}", nullable)
            out[key] = None if n is None else r.take(n).decode("utf-8", errors="replace")
        elif kind == "bytes":
            n = r.compact_length(f"bytes {name}", nullable)
            out[key] = None if n is None else base64.b64encode(r.take(n)).decode()
        elif kind == "struct":
            out[key] = _read_struct(r, nested, f"{path}.{key}", unknown)
        elif kind == "[]struct":
            n = r.compact_length(f"array {name}", nullable)
            out[key] = None if n is None else [_read_struct(r, nested, f"{path}.{key}[{i}]", unknown)
                                              for i in range(n)]
        else:  # pragma: no cover - the declarations above use only these types
            raise AssertionError(kind)
    for _ in range(r.uvarint()):
        tag = r.uvarint()
        size = r.uvarint()
        unknown.append({"path": path or ".", "tag": tag, "data": base64.b64encode(r.take(size)).decode()})
    return out


def decode_remote_log_metadata(key: bytes | None, value: bytes | None) -> dict[str, Any]:
    """{"type": "<message name>", "apiKey": n, "version": n, "data": {...}} for one value of the topic, or
    {"error": "...", "value": base64} when it does not decode. The key is ignored, as Kafka ignores it."""
    try:
        return _decode(value)
    except RemoteLogMetadataError as exc:
        return {"error": str(exc), "value": None if value is None else base64.b64encode(value).decode()}


def _decode(value: bytes | None) -> dict[str, Any]:
    if value is None:
        raise RemoteLogMetadataError("record has no value")
    r = _Reader(value)
    frame = r.uvarint()
    if frame != FRAME_VERSION:
        raise RemoteLogMetadataError(f"unknown frame version {frame} (only {FRAME_VERSION} is defined)")
    api_key, version = r.uvarint(), r.uvarint()
    if api_key not in SCHEMAS:
        raise RemoteLogMetadataError(f"unknown api key {api_key} (remote log metadata records are 0-3)")
    name, versions, fields = SCHEMAS[api_key]
    if version not in versions:
        raise RemoteLogMetadataError(f"{name} version {version} is not a valid version ({versions})")
    unknown: list[dict[str, Any]] = []
    data = _read_struct(r, fields, "", unknown)
    if r.pos != len(value):
        raise RemoteLogMetadataError(f"{len(value) - r.pos} byte(s) of garbage after {name} at byte {r.pos}")
    states = PARTITION_DELETE_STATES if api_key == 2 else SEGMENT_STATES
    state_field = "remotePartitionDeleteState" if api_key == 2 else "remoteLogSegmentState"
    if not 0 <= data[state_field] < len(states):
        raise RemoteLogMetadataError(f"{name} has unknown {state_field} id {data[state_field]}")
    out: dict[str, Any] = {"type": name, "apiKey": api_key, "version": version, "data": data}
    if unknown:
        out["unknownTaggedFields"] = unknown
    return out


def remote_log_event(decoded: dict[str, Any]) -> dict[str, Any]:
    """A decoded record as the scan's flat fields: `record_type` (segment, segment_update, partition_delete,
    segment_snapshot), `topic`, `topic_id`, `partition` (None for snapshots), `remote_segment_id`,
    `start_offset`, `end_offset`, `max_timestamp`, `segment_leader_epochs` ([(epoch, offset)] sorted by
    offset), `size`, `state`, `broker_id`, `event_timestamp`, `custom_metadata_size`."""
    d, api_key = decoded["data"], decoded["apiKey"]
    tip = d.get("topicIdPartition") or d.get("remoteLogSegmentId", {}).get("topicIdPartition") or {}
    states = PARTITION_DELETE_STATES if api_key == 2 else SEGMENT_STATES
    state = d.get("remotePartitionDeleteState", d.get("remoteLogSegmentState"))
    custom = d.get("customMetadata")
    epochs = d.get("segmentLeaderEpochs")
    return {
        "record_type": ("segment", "segment_update", "partition_delete", "segment_snapshot")[api_key],
        "topic": tip.get("name"), "topic_id": tip.get("id"), "partition": tip.get("partition"),
        "remote_segment_id": d.get("remoteLogSegmentId", {}).get("id", d.get("segmentId")),
        "start_offset": d.get("startOffset"), "end_offset": d.get("endOffset"),
        "max_timestamp": d.get("maxTimestampMs"),
        "segment_leader_epochs": None if epochs is None else sorted(
            ((e["leaderEpoch"], e["offset"]) for e in epochs), key=lambda e: (e[1], e[0])),
        "size": d.get("segmentSizeInBytes"), "state": states[state], "broker_id": d["brokerId"],
        "event_timestamp": d["eventTimestampMs"],
        "custom_metadata_size": None if custom is None else len(base64.b64decode(custom)),
    }


# --- kafka-dump-log's text --------------------------------------------------------------------------------

def _tip_text(tip: dict[str, Any]) -> str:
    return f"{tip['id']}:{tip['name']}-{tip['partition']}"  # TopicIdPartition.toString


def _custom_text(custom: str | None) -> str:
    return "Optional.empty" if custom is None else f"Optional[CustomMetadata{{{len(base64.b64decode(custom))} bytes}}]"


def _epochs_text(epochs: list[dict[str, Any]]) -> str:
    # A TreeMap<Integer, Long> of epoch -> start offset; a repeated epoch keeps its last offset, as a map does.
    merged = {e["leaderEpoch"]: e["offset"] for e in epochs}
    return "{" + ", ".join(f"{k}={merged[k]}" for k in sorted(merged)) + "}"


def format_remote_log_metadata(key: bytes | None, value: bytes | None, offset: int | None = None
                               ) -> tuple[str | None, str | None]:
    """kafka-dump-log --remote-log-metadata-decoder: no key, payload the toString of the deserialized object
    (`Error at offset N, skipping. ...` when it does not decode)."""
    decoded = decode_remote_log_metadata(key, value)
    if "error" in decoded:
        return None, f"Error at offset {offset}, skipping. {decoded['error']}"
    d, api_key = decoded["data"], decoded["apiKey"]
    if api_key == 2:
        return None, (f"RemotePartitionDeleteMetadata{{topicPartition={_tip_text(d['topicIdPartition'])}, "
                      f"state={PARTITION_DELETE_STATES[d['remotePartitionDeleteState']]}, "
                      f"eventTimestampMs={d['eventTimestampMs']}, brokerId={d['brokerId']}}}")
    state = SEGMENT_STATES[d["remoteLogSegmentState"]]
    if api_key == 3:
        return None, (f"RemoteLogSegmentMetadataSnapshot{{segmentId={d['segmentId']}, "
                      f"startOffset={d['startOffset']}, endOffset={d['endOffset']}, "
                      f"maxTimestampMs={d['maxTimestampMs']}, segmentLeaderEpochs={_epochs_text(d['segmentLeaderEpochs'])}, "
                      f"segmentSizeInBytes={d['segmentSizeInBytes']}, customMetadata={_custom_text(d['customMetadata'])}, "
                      f"state={state}}}")
    seg = d["remoteLogSegmentId"]
    seg_text = f"RemoteLogSegmentId{{topicIdPartition={_tip_text(seg['topicIdPartition'])}, id={seg['id']}}}"
    if api_key == 1:
        return None, (f"RemoteLogSegmentMetadataUpdate{{remoteLogSegmentId={seg_text}, "
                      f"customMetadata={_custom_text(d['customMetadata'])}, state={state}, "
                      f"eventTimestampMs={d['eventTimestampMs']}, brokerId={d['brokerId']}}}")
    return None, (f"RemoteLogSegmentMetadata{{remoteLogSegmentId={seg_text}, startOffset={d['startOffset']}, "
                  f"endOffset={d['endOffset']}, brokerId={d['brokerId']}, maxTimestampMs={d['maxTimestampMs']}, "
                  f"eventTimestampMs={d['eventTimestampMs']}, segmentLeaderEpochs={_epochs_text(d['segmentLeaderEpochs'])}, "
                  f"segmentSizeInBytes={d['segmentSizeInBytes']}, customMetadata={_custom_text(d['customMetadata'])}, "
                  f"state={state}}}")


def iter_remote_log_metadata(path: str) -> Any:
    """Every value of one `__remote_log_metadata` segment: (batch position, offset, timestamp, decoded), or a
    Finding `internal_record_undecodable` at the batch's position for a value that does not decode (and the
    record batch reader's own findings). Reading goes on after each. The records of a batch whose CRC does not
    match are not read (its `corrupt_crc` finding says why): their bytes cannot be trusted."""
    from kforensics.parsers.findings import Finding
    from kforensics.parsers.record_batch import Record, RecordBatch, open_log

    with open_log(path) as log:
        for b in log.batches():
            if not isinstance(b, RecordBatch):
                yield b
                continue
            if b.is_control or not b.crc_valid:
                continue
            for rec in log.records(b):
                if not isinstance(rec, Record):
                    yield rec
                    continue
                decoded = decode_remote_log_metadata(rec.key, rec.value)
                if "error" in decoded:
                    yield Finding("internal_record_undecodable", str(path), b.position,
                                  f"{TOPIC} record at offset {rec.offset} could not be decoded: {decoded['error']}",
                                  {"offset": rec.offset, "error": decoded["error"]})
                else:
                    yield b.position, rec.offset, rec.timestamp, decoded
