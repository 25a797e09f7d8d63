"""The consumer protocol embedded in a classic group's GroupMetadataValue: each member's `subscription` and
`assignment` bytes (ConsumerProtocolSubscription, ConsumerProtocolAssignment).

The group coordinator stores these bytes as the group leader sent them and never reads them; the consumers do
(`ConsumerProtocol.deserializeAssignment`). Rules, as apache/kafka `clients/.../consumer/internals/
ConsumerProtocol.java` and `clients/src/main/resources/common/message/ConsumerProtocol{Subscription,Assignment}.json`
(trunk 1eb76443, October 2024; versions 0-3, unchanged since KIP-881 in 3.5) read them:

- an int16 version, then the message in the classic encoding of that version;
- a version below 0 is an error; one above the highest known (3) is read as 3 (the schemas only ever add fields,
  "new versions cannot remove or reorder any of the existing fields");
- bytes after the message are not read (a ByteBufferAccessor reads what the schema asks for);
- an assignment of no bytes at all is a member between a JoinGroup and its SyncGroup: nothing assigned yet
  (GroupMetadataManager stores EMPTY_ASSIGNMENT for it).

Only groups of protocol type "consumer" carry this protocol; Connect ("connect"), Schema Registry ("sr") and other
clients embed their own formats, which say nothing about topic partitions. No Spark, no CLI here.
"""

from __future__ import annotations

from dataclasses import dataclass

from kforensics.parsers.message_schema import Message, MessageDecodeError, Reader, decode
from kforensics.parsers.schemas_group import CONSUMER_PROTOCOL_ASSIGNMENT, CONSUMER_PROTOCOL_SUBSCRIPTION

#: GroupMetadataValue's protocolType of the groups whose members' bytes are the consumer protocol.
CONSUMER_PROTOCOL_TYPE = "consumer"

__all__ = ["CONSUMER_PROTOCOL_TYPE", "ConsumerProtocolError", "MemberAssignment", "MemberSubscription",
           "decode_assignment", "decode_subscription"]


class ConsumerProtocolError(ValueError):
    """Bytes that do not read as the consumer protocol (what Kafka's consumer reports as a SchemaException)."""


@dataclass(frozen=True)
class MemberAssignment:
    """A decoded ConsumerProtocolAssignment: its version and the (topic, partition) pairs, in the bytes' order."""

    version: int
    partitions: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class MemberSubscription:
    """A decoded ConsumerProtocolSubscription: the topics, the partitions the member said it owned (v1+), its
    generation (v2+, -1 when absent) and rack (v3+)."""

    version: int
    topics: tuple[str, ...]
    owned_partitions: tuple[tuple[str, int], ...]
    generation: int
    rack: str | None


def _read(message: Message, data: bytes) -> tuple[int, dict]:
    """(version as written, fields) of a version-prefixed consumer protocol message."""
    if len(data) < 2:
        raise ConsumerProtocolError(f"{message.name}: {len(data)} bytes, no version")
    version = Reader(data).fixed("int16")
    if version < 0:
        raise ConsumerProtocolError(f"{message.name}: unsupported version {version}")
    try:
        fields, _ = decode(message, data, min(version, message.highest_version), 2, whole=False)
    except MessageDecodeError as exc:
        raise ConsumerProtocolError(f"{message.name} version {version}: {exc}") from exc
    return version, fields


def _pairs(entries: list[dict] | None, topic: str = "topic") -> tuple[tuple[str, int], ...]:
    return tuple((e[topic], p) for e in entries or () for p in e.get("partitions") or ())


def decode_assignment(data: bytes | None) -> MemberAssignment | None:
    """The assignment bytes of a classic consumer group member; None for no bytes (nothing assigned yet). Raises
    ConsumerProtocolError on bytes that do not read."""
    if not data:
        return None
    version, fields = _read(CONSUMER_PROTOCOL_ASSIGNMENT, data)
    return MemberAssignment(version, _pairs(fields.get("assignedPartitions")))


def decode_subscription(data: bytes | None) -> MemberSubscription | None:
    """The subscription bytes of a classic consumer group member; None for no bytes. Raises ConsumerProtocolError
    on bytes that do not read."""
    if not data:
        return None
    version, fields = _read(CONSUMER_PROTOCOL_SUBSCRIPTION, data)
    return MemberSubscription(version, tuple(fields.get("topics") or ()), _pairs(fields.get("ownedPartitions")),
                              fields.get("generationId", -1), fields.get("rackId"))
