"""Which `__consumer_offsets` / `__transaction_state` / `__share_group_state` partition a group, a transactional id
or a share-partition lives in.

The brokers compute it as `Utils.abs(id.hashCode()) % N` (GroupMetadataManager / GroupCoordinatorService
`partitionFor`, TransactionStateManager `partitionFor`): Java's `String.hashCode` runs over the UTF-16 code
units of the id (a character outside the Basic Multilingual Plane counts as its two surrogates), and
Kafka's `Utils.abs` maps Integer.MIN_VALUE to 0 where Math.abs would leave it negative.

A share group's state for one topic partition lives in the `__share_group_state` partition of the coordinator key
`"<group>:<topic id>:<partition>"` (SharePartitionKey.asCoordinatorKey, the topic id as Uuid.toString: base64url),
by the same hash (ShareCoordinatorService.partitionFor; share.coordinator.state.topic.num.partitions, 50 by
default).
"""

from __future__ import annotations

import struct
from typing import Literal

CONSUMER_OFFSETS = "__consumer_offsets"
TRANSACTION_STATE = "__transaction_state"
SHARE_GROUP_STATE = "__share_group_state"
INT_MIN = -(1 << 31)

IdKind = Literal["group", "transactional_id", "share_group"]
TOPIC_OF: dict[str, str] = {"group": CONSUMER_OFFSETS, "transactional_id": TRANSACTION_STATE,
                            "share_group": SHARE_GROUP_STATE}


def java_string_hash(text: str) -> int:
    """Java's `String.hashCode()`: h = 31 * h + unit over the UTF-16 code units, in 32-bit signed arithmetic.
    Lone surrogates (as a command line with undecodable bytes can hold) count as the one unit they are."""
    data = text.encode("utf-16-be", "surrogatepass")
    h = 0
    for (unit,) in struct.iter_unpack(">H", data):
        h = (31 * h + unit) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def kafka_abs(n: int) -> int:
    """Kafka's `Utils.abs`: 0 for Integer.MIN_VALUE (whose absolute value an int cannot hold), else |n|."""
    return 0 if n == INT_MIN else abs(n)


def partition_for(coordinator_id: str, partitions: int) -> int:
    """The coordinator partition of a group id or transactional id among `partitions` partitions."""
    if partitions < 1:
        raise ValueError(f"a topic has at least one partition, not {partitions}")
    return kafka_abs(java_string_hash(coordinator_id)) % partitions


def kafka_uuid(text: str) -> str:
    """A topic id as Kafka's Uuid.toString writes it (22 characters of base64url, no padding), from that form or
    the canonical 8-4-4-4-12 hex form. ValueError for anything else."""
    import base64
    import uuid

    if len(text) == 36:
        raw = uuid.UUID(text).bytes
    else:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)) if len(text) == 22 else b""
    if len(raw) != 16:
        raise ValueError(f"not a Kafka topic id (22 base64url characters or a hex UUID): {text!r}")
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def share_coordinator_key(group: str, topic_id: str, partition: int) -> str:
    """SharePartitionKey.asCoordinatorKey: `"<group>:<topic id>:<partition>"`, whose hash places the share-partition's
    state in `__share_group_state`."""
    return f"{group}:{kafka_uuid(topic_id)}:{partition}"
