"""Which `__consumer_offsets` / `__transaction_state` partition a group or transactional id lives in.

The brokers compute it as `Utils.abs(id.hashCode()) % N` (GroupMetadataManager / GroupCoordinatorService
`partitionFor`, TransactionStateManager `partitionFor`): Java's `String.hashCode` runs over the UTF-16 code
units of the id (a character outside the Basic Multilingual Plane counts as its two surrogates), and
Kafka's `Utils.abs` maps Integer.MIN_VALUE to 0 where Math.abs would leave it negative.
"""

from __future__ import annotations

import struct
from typing import Literal

CONSUMER_OFFSETS = "__consumer_offsets"
TRANSACTION_STATE = "__transaction_state"
INT_MIN = -(1 << 31)

IdKind = Literal["group", "transactional_id"]
TOPIC_OF: dict[str, str] = {"group": CONSUMER_OFFSETS, "transactional_id": TRANSACTION_STATE}


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
