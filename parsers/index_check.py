"""Index sanity against the log, as kafka-dump-log's --verify-index-only / --index-sanity-check do.

Decoupled from the log parser: callers pass the batch bounds of the segment (position, base offset,
last offset, max timestamp) in file order.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from kforensics.parsers.findings import Finding
from kforensics.parsers.offset_index import ENTRY_SIZE as INDEX_ENTRY_SIZE
from kforensics.parsers.offset_index import IndexEntry, iter_offset_index
from kforensics.parsers.time_index import ENTRY_SIZE as TIME_ENTRY_SIZE
from kforensics.parsers.time_index import TimeIndexEntry, iter_time_index


class BatchBounds(NamedTuple):
    position: int
    base_offset: int
    last_offset: int
    max_timestamp: int


def check_offset_index(index_path: str, entries: Iterable[IndexEntry], batches: Sequence[BatchBounds]) -> list[Finding]:
    """Each entry must point at a batch start whose base offset is <= the entry's offset.

    An entry whose offset is not that batch's last offset is kafka-dump-log's "mismatch": reported as
    `index_offset_mismatch` (info), since a follower's multi-batch append legitimately produces it.
    """
    positions = [b.position for b in batches]
    findings = []
    for i, entry in enumerate(entries):
        at = i * INDEX_ENTRY_SIZE
        j = bisect.bisect_left(positions, entry.position)
        if j == len(positions) or positions[j] != entry.position:
            findings.append(Finding("index_bad_entry", index_path, at,
                                    f"index entry {i} (offset {entry.offset}) points to byte {entry.position} of the "
                                    "log, where no batch starts",
                                    {"entry_index": i, "offset": entry.offset, "index_position": entry.position}))
            continue
        batch = batches[j]
        if batch.base_offset > entry.offset:
            findings.append(Finding("index_bad_entry", index_path, at,
                                    f"index entry {i} says offset {entry.offset} is at byte {entry.position}, but the "
                                    f"batch there starts at offset {batch.base_offset}",
                                    {"entry_index": i, "offset": entry.offset, "index_position": entry.position,
                                     "batch_base_offset": batch.base_offset}))
        elif batch.last_offset != entry.offset:
            findings.append(Finding("index_offset_mismatch", index_path, at,
                                    f"index entry {i} has offset {entry.offset}; the batch at byte {entry.position} "
                                    f"ends at offset {batch.last_offset}",
                                    {"entry_index": i, "index_offset": entry.offset, "log_offset": batch.last_offset,
                                     "index_position": entry.position}))
    return findings


def check_time_index(index_path: str, entries: Iterable[TimeIndexEntry],
                     batches: Sequence[BatchBounds]) -> list[Finding]:
    """Each entry's offset must fall inside a batch whose max timestamp is the entry's timestamp."""
    base_offsets = [b.base_offset for b in batches]
    findings = []
    for i, entry in enumerate(entries):
        at = i * TIME_ENTRY_SIZE
        j = bisect.bisect_right(base_offsets, entry.offset) - 1
        batch = batches[j] if j >= 0 else None
        if batch is None or not batch.base_offset <= entry.offset <= batch.last_offset:
            findings.append(Finding("timeindex_bad_entry", index_path, at,
                                    f"time index entry {i} names offset {entry.offset}, which no batch of the log holds",
                                    {"entry_index": i, "offset": entry.offset, "timestamp": entry.timestamp}))
        elif batch.max_timestamp != entry.timestamp:
            findings.append(Finding("timeindex_bad_entry", index_path, at,
                                    f"time index entry {i} says timestamp {entry.timestamp} at offset {entry.offset}; "
                                    f"the batch holding it has max timestamp {batch.max_timestamp}",
                                    {"entry_index": i, "offset": entry.offset, "timestamp": entry.timestamp,
                                     "log_timestamp": batch.max_timestamp, "batch_position": batch.position}))
    return findings


@dataclass
class IndexCheck:
    """An index file read and checked against its segment: its entries, what reading it found (order, partial
    entries) and what checking its entries against the segment's batches found."""

    entries: list[Any] = field(default_factory=list)
    read_findings: list[Finding] = field(default_factory=list)
    log_findings: list[Finding] = field(default_factory=list)


def check_index_file(path: str, kind: str, batches: Sequence[BatchBounds] | None, *, base_offset: int | None = None,
                     name: str | None = None) -> IndexCheck:
    """Read a `.index` (kind "index") or `.timeindex` (kind "timeindex") and check it against the batch bounds of
    its segment (none: the segment is absent, nothing to check against). `name` is the file as findings name it
    (a remote file read from a local copy), `base_offset` the segment's (else taken from the file name). The one
    index check of `kforensics dump` and the scan's executors."""
    reader, check = (iter_offset_index, check_offset_index) if kind == "index" else (iter_time_index,
                                                                                     check_time_index)
    name = name or path
    result = IndexCheck()
    for item in reader(path, base_offset):
        if isinstance(item, Finding):
            result.read_findings.append(item if name == path else Finding(item.kind, name, item.position,
                                                                          item.message, item.details, item.severity))
        else:
            result.entries.append(item)
    if batches is not None:
        result.log_findings = check(name, result.entries, batches)
    return result
