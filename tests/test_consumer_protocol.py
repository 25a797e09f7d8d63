"""parsers/consumer_protocol.py: a classic consumer group member's assignment and subscription bytes, every version of
ConsumerProtocolAssignment / ConsumerProtocolSubscription (0-3), a newer version read as 3, and what does not read.
Version 0 bytes come from an independent writer (aiokafka's ConsumerProtocolMember* structs)."""

from __future__ import annotations

import json
import struct

import pytest
from aiokafka.coordinator.protocol import ConsumerProtocolMemberAssignment, ConsumerProtocolMemberMetadata
from group_records import assignment_bytes

from kforensics.parsers.consumer_protocol import ConsumerProtocolError, decode_assignment, decode_subscription


def _s(text: str | None) -> bytes:
    if text is None:
        return struct.pack(">h", -1)
    return struct.pack(">h", len(text)) + text.encode()


def _versioned(data: bytes, version: int) -> bytes:
    return struct.pack(">h", version) + data[2:]


def test_assignment_version_0_as_aiokafka_writes_it() -> None:
    data = ConsumerProtocolMemberAssignment(0, [("orders", [0, 2]), ("payments", [1])], b"user").encode()
    got = decode_assignment(data)
    assert (got.version, got.partitions) == (0, (("orders", 0), ("orders", 2), ("payments", 1)))


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4, 32767])
def test_assignment_every_version_and_a_newer_one_read_as_3(version: int) -> None:
    # versions 0-3 share the layout (AssignedPartitions, UserData); a newer one is read as 3, trailing bytes unread
    data = assignment_bytes({"t": [1, 0], "u": []}, version) + (b"\x00\x07more" if version > 3 else b"")
    got = decode_assignment(data)
    assert (got.version, got.partitions) == (version, (("t", 1), ("t", 0)))


def test_assignment_of_no_bytes_is_nothing_assigned_yet() -> None:
    assert decode_assignment(b"") is None and decode_assignment(None) is None


@pytest.mark.parametrize("data", [b"\x00", b"\x00\x01\x00\x00", b"\xff\xff", assignment_bytes({"t": [0]})[:-6]],
                         ids=["no version", "short array", "negative version", "cut"])
def test_assignment_that_does_not_read(data: bytes) -> None:
    with pytest.raises(ConsumerProtocolError):
        decode_assignment(data)


def test_subscription_version_0_as_aiokafka_writes_it() -> None:
    got = decode_subscription(ConsumerProtocolMemberMetadata(0, ["orders", "payments"], b"").encode())
    assert (got.version, got.topics, got.owned_partitions, got.generation, got.rack) == (
        0, ("orders", "payments"), (), -1, None)


@pytest.mark.parametrize("version", [1, 2, 3, 5])
def test_subscription_versions_1_to_3(version: int) -> None:
    data = struct.pack(">hi", version, 1) + _s("orders") + struct.pack(">i", -1)  # Topics, null UserData
    data += struct.pack(">i", 1) + _s("orders") + struct.pack(">ii", 1, 4)      # v1+ OwnedPartitions
    if version >= 2:
        data += struct.pack(">i", 9)                                           # v2+ GenerationId
    if version >= 3:
        data += _s("rack-a")                                                   # v3+ RackId
    got = decode_subscription(data)
    assert (got.topics, got.owned_partitions) == (("orders",), (("orders", 4),))
    assert got.generation == (9 if version >= 2 else -1) and got.rack == ("rack-a" if version >= 3 else None)


def test_the_parse_pass_keeps_group_and_share_records_and_reports_what_does_not_decode(tmp_path) -> None:
    """spark/read.py internal_rows over a __consumer_offsets and a __share_group_state segment: a group record and
    a share state record are rows of their own (beside the commits), a record that does not decode is an
    internal_record_undecodable finding at its file and position, and the records after it are still read."""
    import pyarrow as pa
    from group_records import classic, share_state
    from log_dir_builder import record_batches

    from kforensics.parsers.internal_topics import CONSUMER_OFFSETS, SHARE_GROUP_STATE, encode_coordinator_record
    from kforensics.spark import schemas as S
    from kforensics.spark.read import internal_rows

    def segment(topic: str, records: list[tuple[bytes, bytes | None]]) -> dict:
        part = tmp_path / f"{topic}-0"
        part.mkdir()
        (part / "00000000000000000000.log").write_bytes(record_batches(records))
        return {"task_kind": "segment", "broker": "b1", "topic": topic, "partition": 0,
                "path": str(part / "00000000000000000000.log"), "base_offset": 0}

    group = encode_coordinator_record(CONSUMER_OFFSETS, *classic("g", 1, {"A": {"t": [0]}}), 3)
    snapshot = encode_coordinator_record(SHARE_GROUP_STATE, *share_state("g", "AAAAAAAAAAAAAAAAAAAAAQ", 0,
                                                                         snapshot=True, start=5))
    broken = (group[0], group[1][:9])  # a GroupMetadataValue cut short
    tasks = [segment(CONSUMER_OFFSETS, [broken, group]), segment(SHARE_GROUP_STATE, [(snapshot[0], b"\x00\x00"),
                                                                                     snapshot])]
    rows = [r for batch in internal_rows(iter([pa.RecordBatch.from_pylist(tasks, schema=S.TASKS)]))
            for r in batch.to_pylist()]
    assert [(r["row_kind"], r["topic"], r["offset"], r["kind"]) for r in rows] == [
        ("finding", CONSUMER_OFFSETS, 0, "internal_record_undecodable"), ("group", CONSUMER_OFFSETS, 1, None),
        ("group", CONSUMER_OFFSETS, 1, None), ("finding", SHARE_GROUP_STATE, 0, "internal_record_undecodable"),
        ("share", SHARE_GROUP_STATE, 1, None)]
    assert rows[0]["position"] == 0 and rows[0]["file"].endswith("__consumer_offsets-0/00000000000000000000.log")
    assert [(r["member_id"], r["generation"], r["topic_partitions"]) for r in rows[1:3]] == [
        (None, 1, None), ("A", 1, [{"role": "assigned", "topic": "t", "topic_id": None, "subtopology_id": None,
                                    "partition": 0}])]
    assert (rows[4]["group_id"], rows[4]["start_offset"], rows[4]["state_batches"]) == ("g", 5, [])


def test_a_member_whose_consumer_protocol_bytes_do_not_read_is_a_note_and_owns_nothing() -> None:
    """groups.group_record_rows: protocol type "consumer" with assignment bytes cut short gives the member's row without
    partitions and a consumer_protocol_undecodable note; another protocol type's bytes (Connect's) are not read."""
    import base64

    from group_records import classic

    from kforensics.parsers.internal_topics import CONSUMER_OFFSETS, decode_consumer_offsets, encode_coordinator_record
    from kforensics.spark.groups import group_record_rows

    where = {"broker": "b1", "topic": CONSUMER_OFFSETS, "partition": 0, "file": "f.log", "position": 7, "offset": 3,
             "timestamp": 9}
    for protocol_type, notes in (("consumer", 1), ("connect", 0)):
        record_type, key, value = classic("g", 4, {"A": {"t": [0]}}, protocol_type)
        value["members"][0]["assignment"] = base64.b64encode(b"\x00\x01\x00\x00").decode()
        rows = group_record_rows(where, decode_consumer_offsets(*encode_coordinator_record(
            CONSUMER_OFFSETS, record_type, key, value, 3)))
        found = [r for r in rows if r["row_kind"] == "finding"]
        member = next(r for r in rows if r.get("member_id") == "A")
        assert len(found) == notes and "topic_partitions" not in member
        if notes:
            assert (found[0]["kind"], found[0]["severity"], found[0]["position"]) == (
                "consumer_protocol_undecodable", "info", 7)
            assert json.loads(found[0]["details"])["field"] == "assignment"
