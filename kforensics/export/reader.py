"""`export`'s reader: the records of one `<topic>-<partition>` dir as rows of SCHEMA, in two passes over its segments
(batch headers of every segment for the transaction markers, then the records of the batches in the range). The
Spark path (spark/export.py) runs the same reader, one task per partition dir.

Isolation follows the Java consumer (Kafka 3.9, `FetchCollector`/`CompletedFetch`): `read_committed` never returns
records at or after the last stable offset (the first offset of the earliest transaction without a marker) and
skips the batches of a producer from the first offset of a transaction the log aborts up to its ABORT marker; the
aborted transactions come from the markers of every segment of the partition. Control batches are never
returned. The high watermark is not applied (a disk's replication checkpoint lags, and lost offsets above it are
often what is being exported). Batches whose CRC does not hold are skipped and reported, as a consumer with
`check.crcs` would refuse them.
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa

if TYPE_CHECKING:
    from kforensics.export.selection import Selection

SCHEMA = pa.schema([
    ("broker", pa.string()), ("topic", pa.string()), ("partition", pa.int32()), ("offset", pa.int64()),
    ("timestamp", pa.int64()), ("timestamp_type", pa.string()), ("key", pa.binary()), ("value", pa.binary()),
    ("headers", pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))),
    ("producer_id", pa.int64()), ("producer_epoch", pa.int32()), ("sequence", pa.int32()),
    ("leader_epoch", pa.int32()), ("transaction", pa.string()), ("file", pa.string()), ("position", pa.int64()),
])
COLUMNS = SCHEMA.names


@dataclass
class Skipped:
    """A batch the export left out, and why (reported to the operator)."""

    file: str
    position: int
    reason: str


@dataclass
class Transactions:
    """A partition's transactions from its markers: aborted ranges and open ones, per producer id."""

    aborted: dict[int, list[tuple[int, int]]] = field(default_factory=dict)  # pid -> [(first, marker)] sorted
    open_first: dict[int, int] = field(default_factory=dict)  # pid -> first offset of its unfinished transaction

    @property
    def last_stable_offset(self) -> int | None:
        return min(self.open_first.values()) if self.open_first else None

    def outcome(self, producer_id: int, offset: int) -> str:
        """COMMIT, ABORT or OPEN for a transactional batch of `producer_id` at `offset`."""
        ranges = self.aborted.get(producer_id, [])
        i = bisect.bisect_right(ranges, (offset, float("inf"))) - 1
        if i >= 0 and ranges[i][0] <= offset < ranges[i][1]:
            return "ABORT"
        first = self.open_first.get(producer_id)
        return "OPEN" if first is not None and offset >= first else "COMMIT"


class PartitionReader:
    """The records of one `<topic>-<partition>` dir (local paths of its segments, by base offset)."""

    def __init__(self, broker: str, topic: str, partition: int, segments: list[str]) -> None:
        self.broker, self.topic, self.partition = broker, topic, partition
        self.segments = sorted(segments, key=lambda p: os.path.basename(p))
        self.skipped: list[Skipped] = []

    def transactions(self) -> Transactions:
        """Pass 1: every segment's batch headers, for the COMMIT/ABORT markers."""
        from kforensics.parsers.record_batch import RecordBatch, open_log

        txns = Transactions()
        for path in self.segments:
            with open_log(path) as log:
                for b in log.batches(verify_crc=False):
                    if not isinstance(b, RecordBatch) or b.magic != 2 or not b.is_transactional:
                        continue
                    if not b.is_control:
                        txns.open_first.setdefault(b.producer_id, b.base_offset)
                        continue
                    marker = log.control_record(b)
                    first = txns.open_first.pop(b.producer_id, None)
                    if marker is not None and marker.control_type == "ABORT" and first is not None:
                        txns.aborted.setdefault(b.producer_id, []).append((first, b.base_offset))
        for ranges in txns.aborted.values():
            ranges.sort()
        return txns

    def rows(self, selection: Selection, progress: Callable[[int], None] | None = None) -> Iterator[dict[str, Any]]:
        """Pass 2: one row per record of the selection (SCHEMA's columns), in offset order."""
        from kforensics.parsers.findings import Finding
        from kforensics.parsers.record_batch import RecordBatch, open_log

        txns = self.transactions()
        committed = selection.isolation == "read_committed"
        lso = txns.last_stable_offset
        bases = [int(os.path.basename(p)[:20]) for p in self.segments]
        for i, path in enumerate(self.segments):
            next_base = bases[i + 1] if i + 1 < len(bases) else None
            if (selection.from_offset is not None and next_base is not None and next_base <= selection.from_offset) \
                    or (selection.to_offset is not None and bases[i] > selection.to_offset):
                if progress:
                    progress(os.path.getsize(path))
                continue
            done = 0
            with open_log(path) as log:
                for b in log.batches():
                    if not isinstance(b, RecordBatch):
                        continue
                    if progress:
                        progress(b.position + b.size - done)
                        done = b.position + b.size
                    if b.is_control or not selection.wants_offsets(b.base_offset, b.last_offset):
                        continue
                    if selection.from_time is not None and b.max_timestamp < selection.from_time:
                        continue
                    if not b.crc_valid:
                        self.skipped.append(Skipped(path, b.position, "corrupt_crc: the batch's CRC does not hold"))
                        continue
                    outcome = txns.outcome(b.producer_id, b.base_offset) if b.is_transactional else None
                    if committed and (outcome in ("ABORT", "OPEN") or (lso is not None and b.base_offset >= lso)):
                        continue
                    for r in log.records(b):
                        if isinstance(r, Finding):
                            self.skipped.append(Skipped(path, b.position, f"{r.kind}: {r.message}"))
                            break
                        if not selection.wants(r.offset, r.timestamp):
                            continue
                        yield {"broker": self.broker, "topic": self.topic, "partition": self.partition,
                               "offset": r.offset, "timestamp": r.timestamp, "timestamp_type": b.timestamp_type,
                               "key": r.key, "value": r.value,
                               "headers": [{"key": k, "value": v} for k, v in r.headers],
                               "producer_id": b.producer_id, "producer_epoch": b.producer_epoch,
                               "sequence": r.sequence, "leader_epoch": b.partition_leader_epoch,
                               "transaction": outcome, "file": path, "position": b.position}
            if progress:
                progress(os.path.getsize(path) - done)
