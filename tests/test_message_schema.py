"""The message-schema interpreter and the __cluster_metadata tables: round trips of every record type and version
through the table-driven encoder, tagged fields present and absent, truncation at every byte, hand-built bytes,
newer versions, and every real KRaft log and snapshot in ../shared/realdata."""

from __future__ import annotations

import base64
import json
import struct
from collections import Counter
from typing import Any

import pytest
from conftest import realdata_files

from kforensics.parsers.cluster_metadata import (
    MessageDecodeError,
    SchemaRecord,
    decode_metadata_record,
    encode_metadata_record,
)
from kforensics.parsers.message_schema import Field, Message, decode, encode, write_frame
from kforensics.parsers.record_batch import Record, RecordBatch, open_log
from kforensics.parsers.schemas_metadata import BY_API_KEY, MESSAGES, TYPE_NAMES

_UUIDS = [base64.urlsafe_b64encode(bytes([i] * 16)).decode().rstrip("=") for i in range(1, 9)]


def sample_value(f: Field, version: int, seed: int) -> Any:
    """A value for `f` at `version` that differs from the field's default (so tagged fields are written)."""
    kind = f.element_type

    def one(i: int) -> Any:
        if f.is_struct:
            return sample_struct(f.fields, version, seed + i)
        return {"int8": 3 + i, "int16": 300 + i, "int32": 70000 + seed + i, "int64": 2 ** 40 + seed + i,
                "uint16": 65000 + i, "uint32": 2 ** 31 + i, "float64": 1.5 + i, "bool": (seed + i) % 2 == 0,
                "string": f"s{seed}-{i}-é", "bytes": base64.b64encode(bytes(range(i, i + 5))).decode(),
                "records": base64.b64encode(b"rec").decode(), "uuid": _UUIDS[(seed + i) % 8]}[kind]

    if f.is_array:
        return [one(i) for i in range(2)]
    value = one(0)
    if value == f.default_value():
        value = not value if kind == "bool" else value
    return value


def sample_struct(fields: tuple[Field, ...], version: int, seed: int) -> dict[str, Any]:
    return {f.json_name: sample_value(f, version, seed + n) for n, f in enumerate(fields) if f.present(version)}


def _all_versions() -> list[tuple[Message, int]]:
    return [(m, v) for m in MESSAGES for v in m.versions]


@pytest.mark.parametrize("message,version", _all_versions(), ids=lambda x: str(x.name if hasattr(x, "name") else x))
def test_every_metadata_record_and_version_round_trips(message: Message, version: int) -> None:
    data = sample_struct(message.fields, version, message.api_key or 0)
    value = encode_metadata_record(TYPE_NAMES[message.api_key], version, data)
    rec = decode_metadata_record(value)
    assert rec == SchemaRecord(message.api_key, TYPE_NAMES[message.api_key], version, data, False, message.valid)
    # every field of this version is there, tagged ones included (all differ from their defaults)
    assert list(rec.data) == [f.json_name for f in message.fields if f.present(version)]


@pytest.mark.parametrize("message,version", _all_versions(), ids=lambda x: str(x.name if hasattr(x, "name") else x))
def test_tagged_fields_absent_take_their_defaults_and_are_not_printed(message: Message, version: int) -> None:
    data = sample_struct(message.fields, version, 7)
    plain = {k: v for k, v in data.items()
             if not next(f for f in message.fields if f.json_name == k).tagged_in(version)}
    value = encode_metadata_record(TYPE_NAMES[message.api_key], version, plain)
    assert decode_metadata_record(value).data == plain
    # a tagged field written at its default is read and, like JsonConverter, not printed
    for f in message.fields:
        if f.present(version) and f.tagged_in(version):
            with_default = encode_metadata_record(TYPE_NAMES[message.api_key], version, {**plain,
                                                                                         f.json_name: f.default_value()})
            assert decode_metadata_record(with_default).data == plain


@pytest.mark.parametrize("message,version", _all_versions(), ids=lambda x: str(x.name if hasattr(x, "name") else x))
def test_truncation_at_every_byte_is_an_error_never_an_exception(message: Message, version: int) -> None:
    value = encode_metadata_record(TYPE_NAMES[message.api_key], version,
                                   sample_struct(message.fields, version, 3))
    for cut in range(len(value)):
        with pytest.raises(MessageDecodeError):
            decode_metadata_record(value[:cut])
    with pytest.raises(MessageDecodeError):
        decode_metadata_record(value + b"\x00")


def test_partition_change_record_from_hand_built_bytes() -> None:
    """PartitionChangeRecord v2 written byte by byte after the schema (independent of the encoder)."""
    topic_id = bytes(range(16))
    tagged = [
        (0, bytes([3]) + struct.pack(">ii", 1, 2)),            # Isr [1, 2] (compact array: n + 1)
        (1, struct.pack(">i", 2)),                             # Leader 2
        (5, bytes([1])),                                       # LeaderRecoveryState 1
        (6, bytes([2]) + struct.pack(">i", 3)),                # EligibleLeaderReplicas [3]
    ]
    body = struct.pack(">i", 7) + topic_id + bytes([len(tagged)])
    for tag, raw in tagged:
        body += bytes([tag, len(raw)]) + raw
    value = bytes([1, 5, 2]) + body
    rec = decode_metadata_record(value)
    assert rec.type_name == "PARTITION_CHANGE_RECORD" and rec.api_key == 5 and rec.version == 2
    assert rec.data == {"partitionId": 7, "topicId": base64.urlsafe_b64encode(topic_id).decode().rstrip("="),
                        "isr": [1, 2], "leader": 2, "leaderRecoveryState": 1, "eligibleLeaderReplicas": [3]}
    assert encode_metadata_record("PARTITION_CHANGE_RECORD", 2, rec.data) == value


def test_newer_version_reads_the_shared_fields_and_is_marked_newer() -> None:
    known = encode_metadata_record("PARTITION_RECORD", 2, {"partitionId": 1, "topicId": _UUIDS[0], "replicas": [1],
                                                           "isr": [1], "leader": 1, "directories": [_UUIDS[1]]})
    newer = bytes([1, 3, 9]) + known[3:]
    rec = decode_metadata_record(newer)
    assert rec.newer and rec.version == 9 and rec.known_versions == "0-2"
    assert rec.data == decode_metadata_record(known).data
    # a newer version that added a tag the table does not know: the tag is kept aside, the rest read
    body = encode(BY_API_KEY[12], 0, {"name": "x", "featureLevel": 3}, extra_tags=[(4, b"\x01\x02")])
    rec = decode_metadata_record(bytes([1, 12, 1]) + body)
    assert rec.newer and rec.data == {"name": "x", "featureLevel": 3}
    assert rec.unknown_tags == ({"path": ".", "tag": 4, "data": "AQI="},)
    # an apiKey past the known ones is a newer record type, not damage
    unknown = decode_metadata_record(bytes([1, 60, 0, 0]))
    assert unknown.newer and unknown.type_name == "UNKNOWN_60" and unknown.data == {}


def test_bytes_that_cannot_be_framed_raise() -> None:
    for bad in (b"", b"\x02\x00\x00", b"\x01", b"\x01\x0d\x00\x00", b"\x01\xff\xff\xff\xff\xff\x00"):
        with pytest.raises(MessageDecodeError):
            decode_metadata_record(bad)
    with pytest.raises(MessageDecodeError):
        decode_metadata_record(None)


def test_classic_encoding_of_a_non_flexible_message() -> None:
    """Classic (non-flexible) encodings: int16 string length, int32 array length, -1 for null, no tag section."""
    m = Message("T", None, "0-1", "1+", (Field("Name", "string", nullable="0+"), Field("Ids", "[]int32"),
                                         Field("Blob", "bytes", "1+")))
    raw = struct.pack(">h", 2) + b"ab" + struct.pack(">iii", 2, 5, 6)
    assert decode(m, raw, 0) == ({"name": "ab", "ids": [5, 6]}, len(raw))
    assert encode(m, 0, {"name": "ab", "ids": [5, 6]}) == raw
    assert decode(m, struct.pack(">hi", -1, 0), 0)[0] == {"name": None, "ids": []}
    flexible = encode(m, 1, {"name": None, "ids": [1], "blob": "AAE="})
    assert flexible == b"\x00\x02\x00\x00\x00\x01\x03\x00\x01\x00"
    assert decode(m, flexible, 1)[0] == {"name": None, "ids": [1], "blob": "AAE="}


def _metadata_files():
    return [p for pattern in ("__cluster_metadata-*/*.log", "__cluster_metadata-*/*.checkpoint")
            for p in realdata_files(pattern)]


@pytest.mark.skipif(not _metadata_files(), reason="../shared/realdata has no __cluster_metadata files")
def test_every_real_cluster_metadata_record_decodes_cleanly() -> None:
    by_type: Counter[str] = Counter()
    seen: dict[str, list[dict[str, Any]]] = {}
    for path in _metadata_files():
        with open_log(path) as log:
            for batch in log.batches():
                if not isinstance(batch, RecordBatch) or batch.is_control:
                    continue
                for rec in log.records(batch):
                    assert isinstance(rec, Record), rec
                    decoded = decode_metadata_record(rec.value)  # raises on anything undecodable
                    assert not decoded.newer, (path, decoded)
                    assert not decoded.unknown_tags, (path, decoded)
                    if BY_API_KEY[decoded.api_key].fields:
                        assert decoded.data, (path, decoded)
                    by_type[decoded.type_name] += 1
                    seen.setdefault(f"{path.parent.parent.name}:{decoded.type_name}", []).append(decoded.data)
    assert by_type["PARTITION_CHANGE_RECORD"] > 0 and by_type["PARTITION_RECORD"] > 0
    assert by_type["REGISTER_BROKER_RECORD"] > 0 and by_type["FEATURE_LEVEL_RECORD"] > 0
    # spot checks, read by hand from the real bytes (ronem123-rupia-kraft: one combined node, broker/controller 1)
    rupia = [d for k, v in seen.items() if k.startswith("kafka-logs:") for d in v]
    topics = {d["name"]: d["topicId"] for d in seen.get("kafka-logs:TOPIC_RECORD", [])}
    assert topics.get("topic_transactions") == "3aJOBeUFT2i-2s4EZqlyqQ"
    parts = [d for d in seen.get("kafka-logs:PARTITION_RECORD", []) if d["topicId"] == topics["topic_transactions"]]
    assert parts and all(p["leader"] == 1 and p["replicas"] == [1] and p["isr"] == [1] for p in parts)
    assert any(d.get("eligibleLeaderReplicas") == [1] for d in seen.get("kafka-logs:PARTITION_CHANGE_RECORD", []))
    assert {"name": "PLAINTEXT", "host": "localhost", "port": 9092, "securityProtocol": 0} in [
        e for d in seen["kafka-logs:REGISTER_BROKER_RECORD"] for e in d["endPoints"]]
    assert rupia
    assert json.dumps(seen["kafka-logs:FEATURE_LEVEL_RECORD"][0])


def test_type_names_are_metadata_record_type_names() -> None:
    assert TYPE_NAMES[5] == "PARTITION_CHANGE_RECORD"
    assert TYPE_NAMES[18] == "ACCESS_CONTROL_ENTRY_RECORD" and TYPE_NAMES[19] == "REMOVE_ACCESS_CONTROL_ENTRY_RECORD"
    assert TYPE_NAMES[21] == "ZK_MIGRATION_STATE_RECORD" and TYPE_NAMES[22] == "REMOVE_USER_SCRAM_CREDENTIAL_RECORD"
    assert TYPE_NAMES[26] == "REMOVE_DELEGATION_TOKEN_RECORD" and TYPE_NAMES[28] == "CLEAR_ELR_RECORD"
    assert 13 not in TYPE_NAMES and 16 not in TYPE_NAMES and 6 not in TYPE_NAMES
    assert write_frame(5, 2) == b"\x01\x05\x02"


def test_older_layouts_of_a_version_are_read_when_the_current_one_does_not_read() -> None:
    """A message whose version 0 Kafka changed in place lists the earlier layout: bytes that do not read as the
    current layout are read as it and named; bytes that read as neither give the current layout's error."""
    from kforensics.parsers.message_schema import decode_versioned

    old = Message("V", None, "0", "0+", (Field("Epoch", "int32"),), written_by="Kafka 4.0")
    m = Message("V", None, "0-1", "0+", (Field("Epoch", "int32"), Field("Hash", "int64")), older=(old,))
    current = struct.pack(">iq", 5, 6) + b"\x00"
    assert decode_versioned(m, current, 0).data == {"epoch": 5, "hash": 6}
    assert decode_versioned(m, current, 0).layout == ""
    earlier = decode_versioned(m, struct.pack(">i", 5) + b"\x00", 0)
    assert (earlier.data, earlier.layout, earlier.newer, earlier.fields_read) == ({"epoch": 5}, "Kafka 4.0", False,
                                                                                   True)
    with pytest.raises(MessageDecodeError, match="int64"):
        decode_versioned(m, struct.pack(">ih", 5, 1), 0)
    # the older layout has no version 1: version 1 reads only as the current layout
    with pytest.raises(MessageDecodeError):
        decode_versioned(m, struct.pack(">i", 5) + b"\x00", 1)
    # a newer version reads as the newest known version of the current layout, never an older one
    newer = decode_versioned(m, struct.pack(">i", 5) + b"\x00", 2)
    assert newer.newer and newer.data == {} and not newer.fields_read
