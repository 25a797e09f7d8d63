"""parsers/consumer_protocol.py: a classic consumer group member's assignment and subscription bytes, every version of
ConsumerProtocolAssignment / ConsumerProtocolSubscription (0-3), a newer version read as 3, and what does not read.
Version 0 bytes come from an independent writer (aiokafka's ConsumerProtocolMember* structs)."""

from __future__ import annotations

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
