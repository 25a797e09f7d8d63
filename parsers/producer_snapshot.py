"""`*.snapshot`: producer state snapshots (ProducerStateManager), version 1.

Layout: version int16 | crc uint32 (CRC-32C of everything after it) | entryCount int32 | entries.
The file name is the offset the snapshot was taken at: the state of the log below that offset.
"""

from __future__ import annotations

import os
import struct
from typing import NamedTuple

from kforensics.parsers._fixed_entries import base_offset_from_name
from kforensics.parsers.crc import crc32c
from kforensics.parsers.findings import Finding

# [0] version int16  [2] crc uint32  [6] entryCount int32
HEADER = struct.Struct(">hIi")
# [0] producerId int64 [8] epoch int16 [10] lastSequence int32 [14] lastOffset int64 [22] offsetDelta int32
# [26] timestamp int64 [34] coordinatorEpoch int32 [38] currentTxnFirstOffset int64
ENTRY = struct.Struct(">qhiqiqiq")
SUPPORTED_VERSION = 1
MAX_SNAPSHOT_BYTES = 1 << 30


class ProducerStateEntry(NamedTuple):
    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_offset: int
    offset_delta: int
    timestamp: int
    coordinator_epoch: int
    current_txn_first_offset: int  # -1: no open transaction

    @property
    def first_sequence(self) -> int:
        """The first sequence of the last batch, as DumpLogSegments prints it."""
        return self.last_sequence - self.offset_delta


class ProducerSnapshot(NamedTuple):
    path: str
    offset: int  # from the file name
    version: int
    crc: int
    crc_valid: bool
    entries: tuple[ProducerStateEntry, ...]


def read_producer_snapshot(path: str | os.PathLike[str]) -> tuple[ProducerSnapshot | None, list[Finding]]:
    """The snapshot and its findings; None when not even the header is readable."""
    path = os.fspath(path)
    size = os.path.getsize(path)
    if size > MAX_SNAPSHOT_BYTES:
        return None, [Finding("snapshot_truncated", path, 0, f"snapshot is {size} bytes, far beyond any real one",
                              {"file_size": size})]
    with open(path, "rb") as fh:
        data = fh.read()
    if len(data) < HEADER.size:
        return None, [Finding("snapshot_truncated", path, 0,
                              f"snapshot is {len(data)} bytes, shorter than its {HEADER.size}-byte header",
                              {"file_size": len(data)})]
    version, crc, count = HEADER.unpack_from(data, 0)
    if version != SUPPORTED_VERSION:
        return None, [Finding("snapshot_unsupported_version", path, 0,
                              f"snapshot version {version}; only version {SUPPORTED_VERSION} exists",
                              {"version": version})]
    findings: list[Finding] = []
    computed = crc32c(data[6:])
    crc_valid = computed == crc
    if not crc_valid:
        findings.append(Finding("snapshot_corrupt_crc", path, 2,
                                f"snapshot CRC is {crc} but its contents compute to {computed}",
                                {"stored_crc": crc, "computed_crc": computed}))
    available = (len(data) - HEADER.size) // ENTRY.size
    if count < 0 or count != available or (len(data) - HEADER.size) % ENTRY.size:
        findings.append(Finding("snapshot_truncated", path, HEADER.size,
                                f"snapshot declares {count} entries but holds {available} whole entries "
                                f"({len(data) - HEADER.size} bytes)",
                                {"declared_entries": count, "entries_present": available}))
    n = max(0, min(count, available))
    entries = tuple(ProducerStateEntry(*ENTRY.unpack_from(data, HEADER.size + i * ENTRY.size)) for i in range(n))
    return ProducerSnapshot(path, base_offset_from_name(path), version, crc, crc_valid, entries), findings
