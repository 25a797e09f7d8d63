"""Values of `__remote_log_metadata`, the internal topic of tiered storage's TopicBasedRemoteLogMetadataManager
(KIP-405): RemoteLogSegmentMetadataRecord, RemoteLogSegmentMetadataUpdateRecord,
RemotePartitionDeleteMetadataRecord and RemoteLogSegmentMetadataSnapshotRecord, read through the message-schema
interpreter (`message_schema`) with the tables of `schemas_remote_log` (see there for the Kafka version).

Framing (RemoteLogMetadataSerde -> BytesApiMessageSerde -> AbstractApiMessageSerde.write): the record key
is null (ProducerManager.publishMessage); the value is three unsigned varints, frame version (1), api key
and message version, then the message in the flexible encoding. Kafka rejects trailing bytes, and so does this
decoder.

`decode_remote_log_metadata` returns a JSON-able dict and never raises: undecodable input gives
`{"error": ...}`. Its `data` uses the schema's field names as Kafka's JSON converters do (lowerCamelCase);
tagged fields no table declares are kept under `unknownTaggedFields`. A version newer than the tables is not an
error: the record gets `"newer": true` and `knownVersions`, and `data` holds what the newest known version
reads ({} when that is impossible).
`remote_log_event` flattens a decoded record into the snake_case fields of the scan's tables.
`format_remote_log_metadata` gives what kafka-dump-log --remote-log-metadata-decoder prints (the
toString of RemoteLogSegmentMetadata, ...Update, RemotePartitionDeleteMetadata, ...Snapshot).
"""

from __future__ import annotations

import base64
from typing import Any

from kforensics.parsers.message_schema import FRAME_VERSION, MessageDecodeError, decode_versioned, read_frame
from kforensics.parsers.schemas_remote_log import BY_API_KEY

TOPIC = "__remote_log_metadata"

#: RemoteLogSegmentState ids (storage/api/.../RemoteLogSegmentState.java)
SEGMENT_STATES = ("COPY_SEGMENT_STARTED", "COPY_SEGMENT_FINISHED", "DELETE_SEGMENT_STARTED",
                  "DELETE_SEGMENT_FINISHED")
#: RemotePartitionDeleteState ids (storage/api/.../RemotePartitionDeleteState.java)
PARTITION_DELETE_STATES = ("DELETE_PARTITION_MARKED", "DELETE_PARTITION_STARTED", "DELETE_PARTITION_FINISHED")

__all__ = ["FRAME_VERSION", "PARTITION_DELETE_STATES", "SEGMENT_STATES", "TOPIC", "decode_remote_log_metadata",
           "format_remote_log_metadata", "iter_remote_log_metadata", "remote_log_event",
           "remote_log_metadata_text"]


def decode_remote_log_metadata(key: bytes | None, value: bytes | None) -> dict[str, Any]:
    """{"type": "<message name>", "apiKey": n, "version": n, "data": {...}} for one value of the topic, or
    {"error": "...", "value": base64} when it does not decode. The key is ignored, as Kafka ignores it."""
    try:
        return _decode(value)
    except MessageDecodeError as exc:
        return {"error": str(exc), "value": None if value is None else base64.b64encode(value).decode()}


def _decode(value: bytes | None) -> dict[str, Any]:
    if value is None:
        raise MessageDecodeError("record has no value", 0)
    api_key, version, pos = read_frame(value)
    message = BY_API_KEY.get(api_key)
    if message is None:
        raise MessageDecodeError(f"unknown api key {api_key} (remote log metadata records are 0-3)", 1)
    decoded = decode_versioned(message, value, version, pos)
    data = decoded.data
    out: dict[str, Any] = {"type": message.name, "apiKey": api_key, "version": version, "data": data}
    if decoded.newer:
        out["newer"] = True
        out["knownVersions"] = message.valid
    if data:
        states = PARTITION_DELETE_STATES if api_key == 2 else SEGMENT_STATES
        state_field = "remotePartitionDeleteState" if api_key == 2 else "remoteLogSegmentState"
        if not 0 <= data[state_field] < len(states):
            raise MessageDecodeError(f"{message.name} has unknown {state_field} id {data[state_field]}", pos)
    if decoded.unknown_tags:
        out["unknownTaggedFields"] = list(decoded.unknown_tags)
    return out


def remote_log_event(decoded: dict[str, Any]) -> dict[str, Any]:
    """A decoded record as the scan's flat fields: `record_type` (segment, segment_update, partition_delete,
    segment_snapshot), `topic`, `topic_id`, `partition` (None for snapshots), `remote_segment_id`,
    `start_offset`, `end_offset`, `max_timestamp`, `segment_leader_epochs` ([(epoch, offset)] sorted by
    offset), `size`, `state`, `broker_id`, `event_timestamp`, `custom_metadata_size`, `broker_leader_epoch`
    (the record's BrokerLeaderEpoch where its version has the field, version 1 on; else None)."""
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
        "broker_leader_epoch": _broker_leader_epoch(decoded),
    }


def _broker_leader_epoch(decoded: dict[str, Any]) -> int | None:
    field = next((f for f in BY_API_KEY[decoded["apiKey"]].fields if f.name == "BrokerLeaderEpoch"), None)
    if field is None or not field.present(min(decoded["version"], BY_API_KEY[decoded["apiKey"]].highest_version)):
        return None
    return decoded["data"].get("brokerLeaderEpoch", field.default_value())


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
    return remote_log_metadata_text(decode_remote_log_metadata(key, value), offset)


def remote_log_metadata_text(decoded: dict[str, Any], offset: int | None = None) -> tuple[str | None, str | None]:
    """format_remote_log_metadata's text of a record decode_remote_log_metadata has decoded."""
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
    Finding `internal_record_undecodable` at the batch's position for a value that does not decode, or
    `internal_record_newer_version` (once per record type and version in the file) for a version newer than the
    tables (its record follows when its fields could be read), and the record batch reader's own findings.
    Reading goes on after each. The records of a batch whose CRC does not match are not read (its `corrupt_crc`
    finding says why): their bytes cannot be trusted."""
    from kforensics.parsers.findings import Finding
    from kforensics.parsers.internal_topics import NewerVersions
    from kforensics.parsers.record_batch import Record, RecordBatch, open_log

    newer = NewerVersions()
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
                    continue
                if decoded.get("newer"):
                    finding = newer.finding(TOPIC, str(path), b.position, rec.offset, decoded["type"],
                                            decoded["apiKey"], decoded["version"], decoded["knownVersions"])
                    if finding is not None:
                        yield finding
                    if not decoded["data"]:
                        continue
                yield b.position, rec.offset, rec.timestamp, decoded
