"""`__remote_log_metadata` values, built from the schema definitions by a small schema-driven encoder.

The encoder reads apache/kafka's storage/src/main/resources/message/*.json from the local mirror when it is
there, else the field lists copied below (the same four schemas, `about` texts left out). It writes every
version in `validVersions`, with the flexible encoding where `flexibleVersions` says so, tagged fields
included, and frames the message as RemoteLogMetadataSerde does (frame version, api key, version).
"""

from __future__ import annotations

import base64
import json
import random
import struct
import subprocess
from pathlib import Path

import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder
from log_dir_builder import record_batches

from kforensics.parsers.findings import Finding
from kforensics.parsers.remote_log_metadata import (
    decode_remote_log_metadata,
    format_remote_log_metadata,
    iter_remote_log_metadata,
    remote_log_event,
)

MIRROR = Path("/work/.mirror/apache+kafka/repo")
NAMES = ("RemoteLogSegmentMetadataRecord", "RemoteLogSegmentMetadataUpdateRecord",
         "RemotePartitionDeleteMetadataRecord", "RemoteLogSegmentMetadataSnapshotRecord")
_TIP = ('{"name":"TopicIdPartition","type":"TopicIdPartitionEntry","versions":"0+","fields":['
        '{"name":"Name","type":"string","versions":"0+"},{"name":"Id","type":"uuid","versions":"0+"},'
        '{"name":"Partition","type":"int32","versions":"0+"}]}')
_SEG_ID = ('{"name":"RemoteLogSegmentId","type":"RemoteLogSegmentIdEntry","versions":"0+","fields":[' + _TIP
           + ',{"name":"Id","type":"uuid","versions":"0+"}]}')
_EPOCHS = ('{"name":"SegmentLeaderEpochs","type":"[]SegmentLeaderEpochEntry","versions":"0+","fields":['
           '{"name":"LeaderEpoch","type":"int32","versions":"0+"},{"name":"Offset","type":"int64","versions":"0+"}]}')
_CUSTOM = '{"name":"CustomMetadata","type":"bytes","versions":"0+","nullableVersions":"0+","default":"null"}'


def _f(name: str, kind: str) -> str:
    return f'{{"name":"{name}","type":"{kind}","versions":"0+"}}'


_HEAD = '"validVersions":"0","flexibleVersions":"0+","fields":['
EMBEDDED = [json.loads(s) for s in (
    '{"apiKey":0,"name":"RemoteLogSegmentMetadataRecord",' + _HEAD + ",".join([
        _SEG_ID, _f("StartOffset", "int64"), _f("EndOffset", "int64"), _f("BrokerId", "int32"),
        _f("MaxTimestampMs", "int64"), _f("EventTimestampMs", "int64"), _EPOCHS, _f("SegmentSizeInBytes", "int32"),
        _CUSTOM, _f("RemoteLogSegmentState", "int8")]) + "]}",
    '{"apiKey":1,"name":"RemoteLogSegmentMetadataUpdateRecord",' + _HEAD + ",".join([
        _SEG_ID, _f("BrokerId", "int32"), _f("EventTimestampMs", "int64"), _CUSTOM,
        _f("RemoteLogSegmentState", "int8")]) + "]}",
    '{"apiKey":2,"name":"RemotePartitionDeleteMetadataRecord",' + _HEAD + ",".join([
        _TIP, _f("BrokerId", "int32"), _f("EventTimestampMs", "int64"), _f("RemotePartitionDeleteState", "int8")])
    + "]}",
    '{"apiKey":3,"name":"RemoteLogSegmentMetadataSnapshotRecord",' + _HEAD + ",".join([
        _f("SegmentId", "uuid"), _f("StartOffset", "int64"), _f("EndOffset", "int64"), _f("BrokerId", "int32"),
        _f("MaxTimestampMs", "int64"), _f("EventTimestampMs", "int64"), _EPOCHS, _f("SegmentSizeInBytes", "int32"),
        _CUSTOM, _f("RemoteLogSegmentState", "int8")]) + "]}",
)]


def _schemas() -> list[dict]:
    """The four schemas from the mirror (comment lines stripped), else the embedded copy."""
    if not MIRROR.is_dir():
        return EMBEDDED
    out = []
    for name in NAMES:
        text = subprocess.run(["git", "-C", str(MIRROR), "show", f"HEAD:storage/src/main/resources/message/{name}.json"],
                              capture_output=True, text=True, check=True).stdout
        out.append(json.loads("\n".join(line for line in text.splitlines() if not line.strip().startswith("//"))))
    return out


def test_embedded_field_lists_equal_the_mirror_schemas() -> None:
    if not MIRROR.is_dir():
        pytest.skip(f"no apache/kafka mirror at {MIRROR}")

    def strip(field: dict) -> dict:
        keep = {k: v for k, v in field.items() if k not in ("about",)}
        if "fields" in keep:
            keep["fields"] = [strip(f) for f in keep["fields"]]
        return keep

    assert [{k: strip(s)[k] for k in ("apiKey", "name", "validVersions", "flexibleVersions", "fields")}
            for s in _schemas()] == EMBEDDED


# --- the encoder -------------------------------------------------------------------------------------------

def _in(version: int, spec: str | None) -> bool:
    if not spec or spec == "none":
        return False
    if spec.endswith("+"):
        return version >= int(spec[:-1])
    lo, _, hi = spec.partition("-")
    return int(lo) <= version <= int(hi or lo)


def _versions(spec: str) -> list[int]:
    lo, _, hi = spec.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


def _uvarint(v: int) -> bytes:
    out = bytearray()
    while True:
        b, v = v & 0x7F, v >> 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def _camel(name: str) -> str:
    return name[0].lower() + name[1:]


class Encoder:
    """Writes a message of a schema at a version; `extra_tags` adds undeclared tagged fields to every struct."""

    def __init__(self, version: int, flexible: bool, extra_tags: bool = False) -> None:
        self.version, self.flexible, self.extra_tags = version, flexible, extra_tags

    def struct(self, fields: list[dict], value: dict) -> bytes:
        out = bytearray()
        tagged: list[tuple[int, bytes]] = []
        for f in fields:
            if not _in(self.version, f["versions"]):
                continue
            raw = self.field(f, value[_camel(f["name"])])
            if "tag" in f and _in(self.version, f.get("taggedVersions")):
                tagged.append((f["tag"], raw))
            else:
                out += raw
        if self.flexible:
            if self.extra_tags:
                tagged.append((90 + len(fields), b"future"))
            tagged.sort()
            out += _uvarint(len(tagged)) + b"".join(_uvarint(t) + _uvarint(len(r)) + r for t, r in tagged)
        return bytes(out)

    def _length(self, n: int | None) -> bytes:
        if self.flexible:
            return _uvarint(0 if n is None else n + 1)
        raise NotImplementedError("these schemas have no non-flexible version")

    def field(self, f: dict, v: object) -> bytes:
        kind = f["type"]
        fixed = {"int8": ">b", "int16": ">h", "int32": ">i", "int64": ">q"}
        if kind in fixed:
            return struct.pack(fixed[kind], v)
        if kind == "uuid":
            return v  # 16 raw bytes
        if kind == "string":
            return self._length(None if v is None else len(v.encode())) + (b"" if v is None else v.encode())
        if kind == "bytes":
            return self._length(None if v is None else len(v)) + (v or b"")
        if kind.startswith("[]"):
            return self._length(None if v is None else len(v)) + b"".join(self.struct(f["fields"], x) for x in v or [])
        return self.struct(f["fields"], v)


def frame(api_key: int, version: int, message: bytes) -> bytes:
    return _uvarint(1) + _uvarint(api_key) + _uvarint(version) + message


def _value(rng: random.Random, fields: list[dict], version: int, *, null_bytes: bool) -> dict:
    out: dict = {}
    for f in fields:
        kind, key = f["type"], _camel(f["name"])
        if kind == "int8":
            out[key] = rng.randrange(3)  # a valid state id of either state enum
        elif kind == "int32":
            out[key] = rng.randrange(-2**31, 2**31)
        elif kind == "int64":
            out[key] = rng.randrange(-2**63, 2**63)
        elif kind == "uuid":
            out[key] = rng.randbytes(16)
        elif kind == "string":
            out[key] = rng.choice(["orders", "événements", "t" * 300])
        elif kind == "bytes":
            out[key] = None if null_bytes and _in(version, f.get("nullableVersions")) else rng.randbytes(rng.choice([0, 5, 200]))
        elif kind.startswith("[]"):
            out[key] = [_value(rng, f["fields"], version, null_bytes=null_bytes) for _ in range(rng.choice([0, 1, 3, 130]))]
        else:
            out[key] = _value(rng, f["fields"], version, null_bytes=null_bytes)
    return out


def _expected(fields: list[dict], value: dict) -> dict:
    """The encoder's input as the decoder shows it: uuids in Kafka's base64url, bytes in base64."""
    out: dict = {}
    for f in fields:
        v, kind, key = value[_camel(f["name"])], f["type"], _camel(f["name"])
        if kind == "uuid":
            out[key] = base64.urlsafe_b64encode(v).decode().rstrip("=")
        elif kind == "bytes":
            out[key] = None if v is None else base64.b64encode(v).decode()
        elif kind.startswith("[]"):
            out[key] = [_expected(f["fields"], x) for x in v]
        elif "fields" in f:
            out[key] = _expected(f["fields"], v)
        else:
            out[key] = v
    return out


def _cases(extra_tags: bool = False):
    rng = random.Random(18)
    for schema in _schemas():
        for version in _versions(schema["validVersions"]):
            flexible = _in(version, schema["flexibleVersions"])
            for null_bytes in (False, True):
                value = _value(rng, schema["fields"], version, null_bytes=null_bytes)
                raw = frame(schema["apiKey"], version, Encoder(version, flexible, extra_tags).struct(schema["fields"], value))
                yield schema, version, value, raw


# --- tests -------------------------------------------------------------------------------------------------

def test_every_record_type_and_version_decodes_as_encoded() -> None:
    seen = set()
    for schema, version, value, raw in _cases():
        decoded = decode_remote_log_metadata(None, raw)
        assert "error" not in decoded, (schema["name"], decoded)
        assert (decoded["type"], decoded["apiKey"], decoded["version"]) == (schema["name"], schema["apiKey"], version)
        assert decoded["data"] == _expected(schema["fields"], value)
        assert "unknownTaggedFields" not in decoded
        seen.add(schema["name"])
    assert seen == set(NAMES)


def test_tagged_fields_of_every_struct_are_skipped_and_kept() -> None:
    """A newer writer may add tagged fields to any struct (the message, the segment id, the topic partition,
    each leader-epoch entry): the known fields still decode, and the unknown ones are kept with their path."""
    for schema, _version, value, raw in _cases(extra_tags=True):
        decoded = decode_remote_log_metadata(None, raw)
        assert "error" not in decoded, decoded
        assert decoded["data"] == _expected(schema["fields"], value)
        tags = decoded["unknownTaggedFields"]
        assert {"path": ".", "tag": 90 + len(schema["fields"]), "data": base64.b64encode(b"future").decode()} in tags
        paths = {t["path"] for t in tags}
        if schema["apiKey"] in (0, 1):
            assert {".remoteLogSegmentId", ".remoteLogSegmentId.topicIdPartition"} <= paths
        if value.get("segmentLeaderEpochs"):
            assert ".segmentLeaderEpochs[0]" in paths


def test_undecodable_values_give_an_error_never_an_exception() -> None:
    _schema, _version, _value_, raw = next(_cases())
    assert decode_remote_log_metadata(None, None)["error"].startswith("record has no value")
    assert "frame version 0" in decode_remote_log_metadata(None, b"\x00" + raw[1:])["error"]
    assert "unknown api key 7" in decode_remote_log_metadata(None, b"\x01\x07\x00" + raw[3:])["error"]
    assert "byte(s) after" in decode_remote_log_metadata(None, raw + b"\x00")["error"]
    for cut in range(len(raw)):
        assert "error" in decode_remote_log_metadata(None, raw[:cut]), cut
    rng = random.Random(5)
    for _ in range(2000):
        blob = bytes(rng.randrange(256) for _ in range(rng.randrange(60)))
        decode_remote_log_metadata(None, b"\x01" + blob[:2] + blob)  # must not raise


def _segment(state: int, *, epochs=((0, 0), (2, 150)), custom: bytes | None = None, api_key: int = 0) -> bytes:
    schema = _schemas()[api_key]
    tip = {"name": "clicks", "id": bytes(range(16)), "partition": 3}
    seg_id = {"topicIdPartition": tip, "id": bytes(range(16, 32))}
    value = {"remoteLogSegmentId": seg_id, "startOffset": 100, "endOffset": 199, "brokerId": 2,
             "maxTimestampMs": 1700000000500, "eventTimestampMs": 1700000001000,
             "segmentLeaderEpochs": [{"leaderEpoch": e, "offset": o} for e, o in epochs], "segmentSizeInBytes": 4096,
             "customMetadata": custom, "remoteLogSegmentState": state, "topicIdPartition": tip,
             "remotePartitionDeleteState": state, "segmentId": bytes(range(16, 32))}
    return frame(api_key, 0, Encoder(0, True).struct(schema["fields"], value))


def test_kafka_dump_log_text_is_the_java_to_string() -> None:
    tip = "AAECAwQFBgcICQoLDA0ODw:clicks-3"
    seg = f"RemoteLogSegmentId{{topicIdPartition={tip}, id=EBESExQVFhcYGRobHB0eHw}}"
    assert format_remote_log_metadata(None, _segment(0, epochs=((2, 150), (0, 0)))) == (None, (
        f"RemoteLogSegmentMetadata{{remoteLogSegmentId={seg}, startOffset=100, endOffset=199, brokerId=2, "
        "maxTimestampMs=1700000000500, eventTimestampMs=1700000001000, segmentLeaderEpochs={0=0, 2=150}, "
        "segmentSizeInBytes=4096, customMetadata=Optional.empty, state=COPY_SEGMENT_STARTED}"))
    assert format_remote_log_metadata(None, _segment(1, custom=b"12345", api_key=1))[1] == (
        f"RemoteLogSegmentMetadataUpdate{{remoteLogSegmentId={seg}, customMetadata=Optional[CustomMetadata{{5 bytes}}], "
        "state=COPY_SEGMENT_FINISHED, eventTimestampMs=1700000001000, brokerId=2}")
    assert format_remote_log_metadata(None, _segment(2, api_key=2))[1] == (
        f"RemotePartitionDeleteMetadata{{topicPartition={tip}, state=DELETE_PARTITION_FINISHED, "
        "eventTimestampMs=1700000001000, brokerId=2}")
    assert format_remote_log_metadata(None, _segment(3, api_key=3))[1] == (
        "RemoteLogSegmentMetadataSnapshot{segmentId=EBESExQVFhcYGRobHB0eHw, startOffset=100, endOffset=199, "
        "maxTimestampMs=1700000000500, segmentLeaderEpochs={0=0, 2=150}, segmentSizeInBytes=4096, "
        "customMetadata=Optional.empty, state=DELETE_SEGMENT_FINISHED}")
    assert format_remote_log_metadata(None, b"\x01\x09\x00", offset=7)[1] == (
        "Error at offset 7, skipping. unknown api key 9 (remote log metadata records are 0-3) (at byte 1)")
    # a segment state id no RemoteLogSegmentState has
    assert "unknown remoteLogSegmentState id 4" in decode_remote_log_metadata(None, _segment(4))["error"]


def test_remote_log_event_flattens_for_the_scan() -> None:
    event = remote_log_event(decode_remote_log_metadata(None, _segment(1, epochs=((2, 150), (0, 100)), custom=b"ab")))
    assert event == {"record_type": "segment", "topic": "clicks", "topic_id": "AAECAwQFBgcICQoLDA0ODw",
                     "partition": 3, "remote_segment_id": "EBESExQVFhcYGRobHB0eHw", "start_offset": 100,
                     "end_offset": 199, "max_timestamp": 1700000000500, "segment_leader_epochs": [(0, 100), (2, 150)],
                     "size": 4096, "state": "COPY_SEGMENT_FINISHED", "broker_id": 2,
                     "event_timestamp": 1700000001000, "custom_metadata_size": 2, "broker_leader_epoch": None}
    delete = remote_log_event(decode_remote_log_metadata(None, _segment(0, api_key=2)))
    assert (delete["record_type"], delete["state"], delete["remote_segment_id"]) == (
        "partition_delete", "DELETE_PARTITION_MARKED", None)
    snap = remote_log_event(decode_remote_log_metadata(None, _segment(2, api_key=3)))
    assert (snap["record_type"], snap["topic"], snap["remote_segment_id"]) == (
        "segment_snapshot", None, "EBESExQVFhcYGRobHB0eHw")


def test_a_segment_with_an_undecodable_value_yields_a_finding_and_reading_goes_on(tmp_path: Path) -> None:
    data = bytearray()
    positions = []
    for offset, value in enumerate([_segment(0), b"\x01\x00\x00garbage", _segment(1, api_key=1)]):
        builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                            producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
        builder.append(0, timestamp=1700000000000 + offset, key=None, value=value, headers=[])
        batch = bytearray(builder.build())
        struct.pack_into(">q", batch, 0, offset)
        positions.append(len(data))
        data += batch
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(bytes(data))
    items = list(iter_remote_log_metadata(str(path)))
    assert [type(i).__name__ for i in items] == ["tuple", "Finding", "tuple"]
    finding = items[1]
    assert isinstance(finding, Finding) and finding.kind == "internal_record_undecodable"
    assert (finding.file, finding.position, finding.details["offset"]) == (str(path), positions[1], 1)
    assert [(i[0], i[1], i[3]["type"]) for i in (items[0], items[2])] == [
        (positions[0], 0, "RemoteLogSegmentMetadataRecord"), (positions[2], 2, "RemoteLogSegmentMetadataUpdateRecord")]
    # a batch whose CRC does not match: reported, its record not read
    data[positions[0] + 70] ^= 0x01
    path.write_bytes(bytes(data))
    items = list(iter_remote_log_metadata(str(path)))
    assert [i.kind if isinstance(i, Finding) else i[1] for i in items] == [
        "corrupt_crc", "internal_record_undecodable", 2]


# --- version 1 (Kafka 4.1+: tagged BrokerLeaderEpoch, EndOffset) and versions newer than the tables ----------

_TIP = {"name": "clicks", "id": "AAECAwQFBgcICQoLDA0ODw", "partition": 3}


def _v1(api_key: int, version: int = 1, **extra) -> bytes:
    from kforensics.parsers.message_schema import encode, write_frame
    from kforensics.parsers.schemas_remote_log import BY_API_KEY

    seg = {"topicIdPartition": _TIP, "id": "EBESExQVFhcYGRobHB0eHw"}
    data = {0: {"remoteLogSegmentId": seg, "startOffset": 100, "endOffset": 199, "brokerId": 2,
                "maxTimestampMs": 5, "eventTimestampMs": 6, "segmentLeaderEpochs": [{"leaderEpoch": 4, "offset": 100}],
                "segmentSizeInBytes": 4096, "customMetadata": None, "remoteLogSegmentState": 0},
            1: {"remoteLogSegmentId": seg, "brokerId": 2, "eventTimestampMs": 7, "customMetadata": None,
                "remoteLogSegmentState": 1},
            2: {"topicIdPartition": _TIP, "brokerId": 2, "eventTimestampMs": 8, "remotePartitionDeleteState": 0},
            3: {"segmentId": "EBESExQVFhcYGRobHB0eHw", "startOffset": 100, "endOffset": 199, "brokerId": 2,
                "maxTimestampMs": 5, "eventTimestampMs": 6, "segmentLeaderEpochs": [], "segmentSizeInBytes": 1,
                "customMetadata": None, "remoteLogSegmentState": 1}}[api_key]
    return write_frame(api_key, version) + encode(BY_API_KEY[api_key], min(version, 1), {**data, **extra})


def test_version_1_records_of_a_current_broker_decode_with_their_tagged_fields() -> None:
    seg = decode_remote_log_metadata(None, _v1(0, brokerLeaderEpoch=7, txnIndexEmpty=True))
    assert "error" not in seg and seg["version"] == 1
    assert seg["data"]["brokerLeaderEpoch"] == 7 and seg["data"]["txnIndexEmpty"] is True
    assert remote_log_event(seg)["broker_leader_epoch"] == 7
    # a v1 segment without the tag: Kafka's reader gives the field's default, 0
    assert remote_log_event(decode_remote_log_metadata(None, _v1(0)))["broker_leader_epoch"] == 0
    update = decode_remote_log_metadata(None, _v1(1, brokerLeaderEpoch=3, endOffset=199))
    assert (update["data"]["brokerLeaderEpoch"], update["data"]["endOffset"]) == (3, 199)
    assert remote_log_event(update)["broker_leader_epoch"] == 3
    delete = decode_remote_log_metadata(None, _v1(2, brokerLeaderEpoch=9, endOffset=500))
    assert (delete["data"]["brokerLeaderEpoch"], delete["data"]["endOffset"]) == (9, 500)
    snap = decode_remote_log_metadata(None, _v1(3, brokerLeaderEpoch=2))
    assert snap["data"]["brokerLeaderEpoch"] == 2 and "error" not in snap
    # version 0 has no BrokerLeaderEpoch: the scan falls back on the segment's leader epochs
    assert remote_log_event(decode_remote_log_metadata(None, _segment(0)))["broker_leader_epoch"] is None


def test_a_newer_version_is_a_newer_version_finding_not_damage(tmp_path: Path) -> None:
    newer = _v1(0, version=5, brokerLeaderEpoch=7)
    decoded = decode_remote_log_metadata(None, newer)
    assert "error" not in decoded and decoded["newer"] and decoded["knownVersions"] == "0-1"
    assert decoded["data"]["brokerLeaderEpoch"] == 7
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(record_batches([(None, value) for value in (newer, newer, _v1(1, version=9))]))
    items = list(iter_remote_log_metadata(str(path)))
    findings = [i for i in items if isinstance(i, Finding)]
    assert [(f.kind, f.details["record_type"], f.details["version"]) for f in findings] == [
        ("internal_record_newer_version", "RemoteLogSegmentMetadataRecord", 5),
        ("internal_record_newer_version", "RemoteLogSegmentMetadataUpdateRecord", 9)]
    assert findings[0].details == {"offset": 0, "record_type": "RemoteLogSegmentMetadataRecord", "api_key": 0,
                                   "version": 5, "known_versions": "0-1"}
    assert [i[1] for i in items if isinstance(i, tuple)] == [0, 1, 2]
