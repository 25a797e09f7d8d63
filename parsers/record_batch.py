"""`*.log` segments (and KRaft metadata snapshots): v2 record batches and legacy magic 0/1 message sets.

A segment is mmapped read-only; `LogFile.batches()` walks batch headers (no decompression unless
asked: legacy compressed wrappers are the one exception, see `_legacy_batch`) and checks CRCs;
`LogFile.records(batch)` decodes one batch's records on demand. Problems come out as `Finding`s with
the byte position of the batch, and iteration goes on wherever the framing still holds.
"""

from __future__ import annotations

import io
import mmap
import os
import struct
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from kforensics.parsers import core
from kforensics.parsers._pure import (
    ATTR_CONTROL,
    ATTR_TIMESTAMP_TYPE,
    ATTR_TRANSACTIONAL,
    LOG_OVERHEAD,
    MAGIC_POSITION,
    MAX_BATCH_SIZE,
    V2_CRC_START,
    V2_HEADER,
    V2_MIN_BATCH_LENGTH,
    Problem,
    RecordProblem,
)
from kforensics.parsers.crc import crc32c
from kforensics.parsers.findings import Finding
from kforensics.parsers.kafka_codecs import CODEC_NAMES, CodecError, codec_name, decompress

# Legacy message: [0] offset q [8] messageSize i [12] crc I [16] magic b [17] attributes b
# then magic 1: [18] timestamp q; then key length i + key, value length i + value.
LEGACY_V0 = struct.Struct(">qiIbb")
LEGACY_V1 = struct.Struct(">qiIbbq")
LEGACY_MIN_SIZE = {0: 14, 1: 22}  # messageSize minimum: crc+magic+attrs[+ts]+keylen+valuelen
_INT32 = struct.Struct(">i")
_INT16x2 = struct.Struct(">hh")
_END_TXN = struct.Struct(">hi")

RELEASE_BEHIND_BYTES = 64 << 20  # walk this far past the last release before releasing again
RELEASE_LAG_BYTES = 8 << 20  # ... and keep the most recent bytes mapped (records() of recent batches)
POPULATE_WINDOW_BYTES = 16 << 20
READ_CHUNK_BYTES = 1 << 20  # batches() with CRCs reads the file in chunks of this size (cache-sized)
_POPULATE_READ = getattr(mmap, "MADV_POPULATE_READ", 22 if os.uname().sysname == "Linux" else None)
ZERO_SCAN_CHUNK = 8 << 20  # a zero run is checked (and its pages released) this much at a time
CONTROL_TYPES = ("ABORT", "COMMIT", "LEADER_CHANGE", "SNAPSHOT_HEADER", "SNAPSHOT_FOOTER", "KRAFT_VERSION",
                 "KRAFT_VOTERS")


#: `BatchField.legacy` of a field that legacy messages have too: decoded from them
DECODED = "decoded"


@dataclass(frozen=True)
class BatchField:
    """One field of a batch, declared once: the reader's `RecordBatch`, the columns of the scan's `batches` table
    (spark/schemas.py), `kforensics dump`'s batch lines (text and JSON, kforensics/dump_out.py and the compiled
    _dump_lines.pyx), the kafka-dump-log text reader (dump_text.py) and the scan of dump text (spark/dump_input.py)
    all take it from `BATCH_FIELDS`, by this name."""

    name: str
    #: the column's Arrow type: int64, int32, bool or string (dump writes an int as a number, a bool as true/false)
    kind: str
    meaning: str
    #: where the value comes from: `header`, the batch itself (a RecordBatch field, decoded by the readers' walk_v2,
    #: `LogFile.frame_as_v2` and `_legacy_batch`); `segment`, the file the batch lies in; `control`, the record of a
    #: control batch (the scan decodes it)
    source: str = "header"
    #: a column of the `batches` table
    column: bool = True
    #: a field of dump --json's batch objects (after `type`, in this order unless `json_after` names another place)
    json: bool = True
    #: where dump --json writes it when not in this order: after that field
    json_after: str | None = None
    #: may be null (JSON null; kafka-dump-log's text prints Java's `OptionalLong.empty`)
    nullable: bool = False
    #: epoch milliseconds (`--iso-time` writes it as ISO 8601 too)
    time: bool = False
    #: what a legacy (magic 0/1) message has for it where it has no such field; DECODED: decoded from the message
    legacy: Any = DECODED

    def __post_init__(self) -> None:
        if self.kind not in ("int64", "int32", "bool", "string") or self.source not in ("header", "segment", "control"):
            raise ValueError(f"batch field {self.name}: kind {self.kind!r}, source {self.source!r}")
        if self.legacy is None and not self.nullable:
            raise ValueError(f"batch field {self.name}: null for a legacy message, so nullable=True")

#: A batch's fields, in the `batches` table's column order. Adding one: declare it here, decode it (both readers'
#: walk_v2, `frame_as_v2`, `_legacy_batch` unless `legacy` gives its value) and document it (docs/development.md).
BATCH_FIELDS: tuple[BatchField, ...] = (
    BatchField("file", "string", "the segment file (path or URI) the batch lies in", source="segment"),
    BatchField("segment_base_offset", "int64", "the base offset in the segment's file name", source="segment",
               json=False),
    BatchField("position", "int64", "byte position of the batch in its file"),
    BatchField("size", "int32", "bytes of the batch, its offset and length fields included"),
    BatchField("magic", "int32", "2: a v2 batch; 0 or 1: a legacy message or compressed wrapper"),
    BatchField("base_offset", "int64", "the offset of its first record"),
    BatchField("last_offset", "int64", "the offset of its last record (base_offset + lastOffsetDelta)"),
    BatchField("count", "int32", "the records it declares"),
    BatchField("partition_leader_epoch", "int32", "the leader epoch of the leader that appended it", legacy=-1),
    BatchField("producer_id", "int64", "its producer (-1: none)", legacy=-1),
    BatchField("producer_epoch", "int32", "its producer's epoch (-1: none)", legacy=-1),
    BatchField("base_sequence", "int32", "the sequence of its first record (-1: none)", legacy=-1),
    BatchField("last_sequence", "int32", "the sequence of its last record, wrapping past 2^31 - 1 as Kafka does "
               "(-1: none)", legacy=-1),
    BatchField("is_transactional", "bool", "attributes bit 4: written in a transaction", legacy=False),
    BatchField("is_control", "bool", "attributes bit 5: a control batch (transaction marker, KRaft control "
               "record)", legacy=False),
    BatchField("control_type", "string", "a control batch's record type (COMMIT, ABORT, LEADER_CHANGE, ...); null "
               "for a data batch", source="control", json=False),
    BatchField("coordinator_epoch", "int32", "a transaction marker's coordinator epoch", source="control",
               json=False),
    BatchField("codec", "string", "its compression: none, gzip, snappy, lz4 or zstd (attributes bits 0-2)"),
    BatchField("timestamp_type", "string", "CreateTime, LogAppendTime (attributes bit 3) or NoTimestampType "
               "(magic 0)"),
    BatchField("base_timestamp", "int64", "baseTimestamp: the first record's create time, or the delete horizon "
               "when delete_horizon_ms is set; a legacy message's timestamp", time=True),
    BatchField("max_timestamp", "int64", "maxTimestamp: the largest timestamp of its records", time=True),
    BatchField("crc", "int64", "the CRC it stores (CRC-32C for magic 2, CRC-32 for 0/1)"),
    BatchField("crc_valid", "bool", "whether its bytes compute to that CRC"),
    BatchField("delete_horizon_ms", "int64", "KIP-534: the delete horizon the log cleaner set (attributes bit 6: "
               "baseTimestamp holds it, not a create time) on a batch of tombstones or a transaction marker; null "
               "when not set", json_after="is_control", nullable=True, time=True, legacy=None),
    BatchField("attributes", "int32", "the attributes field as stored", column=False, json=False),
    BatchField("last_offset_delta", "int32", "lastOffsetDelta as stored", column=False, json=False),
)
#: The fields the readers decode from a batch: RecordBatch's, in this order.
HEADER_FIELDS = tuple(f for f in BATCH_FIELDS if f.source == "header")
#: What a legacy (magic 0/1) message has for the fields it has no header field for.
LEGACY_VALUES = {f.name: f.legacy for f in HEADER_FIELDS if f.legacy != DECODED}
_PYTHON_TYPES = {"int64": int, "int32": int, "bool": bool, "string": str}

RecordBatch = NamedTuple("RecordBatch", [(f.name, _PYTHON_TYPES[f.kind] | None if f.nullable else _PYTHON_TYPES[f.kind])
                                         for f in HEADER_FIELDS])
RecordBatch.__doc__ = """One v2 batch, or one legacy (magic 0/1) top-level message or compressed wrapper: the header
fields of BATCH_FIELDS (HEADER_FIELDS), by name; the readers build it with keywords (the compiled walk_v2 puts each
value at its field's index)."""


class Record(NamedTuple):
    """One record of a v2 batch, or one legacy message (inner or standalone)."""

    offset: int
    timestamp: int
    sequence: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]
    control_type: str | None = None
    coordinator_epoch: int | None = None
    crc: int | None = None  # legacy messages only
    crc_valid: bool | None = None  # legacy messages only


_CODEC_BY_ATTRIBUTE = tuple(codec_name(code) for code in range(8))


def _timestamp_type(magic: int, attributes: int) -> str:
    if magic == 0:
        return "NoTimestampType"
    return "LogAppendTime" if attributes & ATTR_TIMESTAMP_TYPE else "CreateTime"


class LogFile:
    """A read-only view of one segment file (or of a bytes buffer, for tests and remote reads)."""

    def __init__(self, path: str, data: bytes | mmap.mmap, *, compiled: bool | None = None,
                 file: io.FileIO | None = None) -> None:
        self.path = path
        self._file = file  # the open file under the mapping (owned), for the chunked header walk
        self._buf = data
        self._view = memoryview(data)  # zero-copy slices for CRCs
        self.size = len(data)
        self._impl = core.implementation(compiled)  # the compiled or the pure-Python pieces (parsers/core.py)

    def __enter__(self) -> LogFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        self._view.release()
        if isinstance(self._buf, mmap.mmap):
            self._buf.close()
        self._buf = b""
        self._view = memoryview(b"")

    # -- batches ----------------------------------------------------------------------------------

    def batches(self, *, verify_crc: bool = True, start: int = 0,
                max_bytes: int | None = None) -> Iterator[RecordBatch | Finding]:
        """Batch headers in file order, with findings where the file is damaged.

        Headers never need decompression, except for legacy compressed wrappers; records are decoded by
        `records(batch)`. `max_bytes` stops silently at that many bytes, as kafka-dump-log's --max-bytes does.
        """
        buf = self._buf
        end = self.size if max_bytes is None else min(self.size, start + max_bytes)
        limited = end < self.size
        pos = start
        released = start
        populated = start
        # With the CRC every byte is read: a cached chunk beats the mapping (docs/benchmarks/cli-and-parsers.md).
        chunk = (bytearray(min(READ_CHUNK_BYTES, end - pos)) if verify_crc and self._file is not None
                 and self._impl.chunked_walk and end > pos else None)
        chunked = chunk is not None
        while pos < end:
            if pos - released > RELEASE_BEHIND_BYTES:  # records() of the batches read the mapping
                released = self._release(released, pos - RELEASE_LAG_BYTES)
            run = []
            if chunked:
                run, pos_after = self._walk_chunk(chunk, pos, end)  # type: ignore[arg-type]
                chunked = bool(run)  # back to chunks after the mapping's next run of v2 batches
            if not run:  # what stands at `pos` is not a v2 batch that fits in a chunk: on the mapping
                if pos >= populated:
                    populated = self._populate(pos, end)
                # Fast path: a run of whole, plausible v2 batches (nearly every batch of a real log).
                run, pos_after = self._impl.walk_v2(buf, pos, populated, end, verify_crc, RecordBatch,
                                                    _CODEC_BY_ATTRIBUTE)
                chunked = chunk is not None and bool(run)
            if run:
                yield from run
                if not run[-1].crc_valid:
                    yield self._crc_finding(run[-1])
                pos = pos_after
                continue
            remaining = end - pos
            if remaining < LOG_OVERHEAD.size + 5:
                if not limited:
                    yield self._tail_finding(pos, None, remaining)
                return
            base_offset, length = LOG_OVERHEAD.unpack_from(buf, pos)
            size = length + LOG_OVERHEAD.size
            magic = buf[pos + MAGIC_POSITION]
            if length == 0 and base_offset == 0 and self._zero_from(pos):
                if not limited:
                    yield Finding("zero_filled_tail", self.path, pos,
                                  f"the last {remaining} bytes are zeros (a preallocated file, or a crash before "
                                  "the data reached the disk)", {"bytes": remaining})
                return
            if magic > 2:
                yield Finding("unknown_magic", self.path, pos,
                              f"batch at byte {pos} has magic {magic}; the rest of the file cannot be framed",
                              {"magic": magic, "base_offset": base_offset})
                return
            min_length = V2_MIN_BATCH_LENGTH if magic == 2 else LEGACY_MIN_SIZE[magic]
            if length < min_length or size > MAX_BATCH_SIZE:
                yield Finding("invalid_batch_length", self.path, pos,
                              f"batch at byte {pos} declares length {length}, impossible for magic {magic}",
                              {"batch_length": length, "magic": magic, "base_offset": base_offset})
                return
            if size > remaining:
                if not limited:
                    yield self._tail_finding(pos, size, remaining)
                return
            # Whole v2 batches took the fast path above; what reaches here is a legacy message.
            batch, finding = self._legacy_batch(pos, size, magic, verify_crc)
            if finding is not None:
                yield finding
            yield batch
            if not batch.crc_valid and verify_crc:
                yield self._crc_finding(batch)
            pos += size

    def frame_as_v2(self, pos: int) -> RecordBatch | None:
        """The batch at `pos` as Kafka frames one whose magic byte is above 2, for the restart prediction.

        Kafka 3.9 `FileLogInputStream.nextBatch` reads the magic as a signed byte and frames any magic >= 2 as a
        v2 batch (a size below 14, or a batch past the file end, ends its walk); `DefaultRecordBatch.ensureValid`
        checks only the size (the v2 overhead) and the CRC, which starts at the attributes, after the magic byte.
        So a v2 batch whose magic byte flipped to 3..127 keeps its valid CRC. Returns the batch with `crc_valid`
        as ensureValid finds it, or None where Kafka cannot frame a v2 batch there (a magic byte that reads
        negative takes the legacy path, whose CRC covers the magic byte: never valid)."""
        buf = self._buf
        if pos + LOG_OVERHEAD.size + 5 > self.size or buf[pos + MAGIC_POSITION] > 127:
            return None
        length = LOG_OVERHEAD.unpack_from(buf, pos)[1]
        size = length + LOG_OVERHEAD.size
        if length < V2_MIN_BATCH_LENGTH or size > self.size - pos:
            return None
        (base_offset, _length, leader_epoch, magic, crc, attributes, last_offset_delta, base_timestamp, max_timestamp,
         producer_id, producer_epoch, base_sequence, count) = V2_HEADER.unpack_from(buf, pos)
        crc_valid = crc32c(self._view[pos + V2_CRC_START:pos + size]) == crc
        return RecordBatch(
            position=pos, size=size, magic=magic, base_offset=base_offset,
            last_offset=base_offset + last_offset_delta, count=count, partition_leader_epoch=leader_epoch,
            producer_id=producer_id, producer_epoch=producer_epoch, base_sequence=base_sequence, last_sequence=-1,
            is_transactional=bool(attributes & ATTR_TRANSACTIONAL), is_control=bool(attributes & ATTR_CONTROL),
            codec=_CODEC_BY_ATTRIBUTE[attributes & 7], timestamp_type=_timestamp_type(2, attributes),
            base_timestamp=base_timestamp, max_timestamp=max_timestamp, crc=crc, crc_valid=crc_valid,
            delete_horizon_ms=None, attributes=attributes, last_offset_delta=last_offset_delta)

    def resync(self, start: int, min_base_offset: int, max_base_offset: int) -> int | None:
        """The first position at or after `start` where a whole v2 batch begins with a plausible header (magic 2, a
        length that fits in the file, no unused attribute bit set, a known codec, a last offset delta >= 0, a base
        offset in [min_base_offset, max_base_offset]) and a CRC that holds; None if there is none. Used only to
        count the valid data behind bytes that cannot be framed (a zero-filled hole, an impossible length):
        never to read records."""
        buf, size = self._buf, self.size
        i = start + MAGIC_POSITION
        while True:
            i = buf.find(b"\x02", i)
            pos = i - MAGIC_POSITION
            if i < 0 or pos + V2_HEADER.size > size:
                return None
            (base_offset, length, _epoch, _magic, crc, attributes, last_offset_delta,
             *_rest) = V2_HEADER.unpack_from(buf, pos)
            end = pos + length + LOG_OVERHEAD.size
            if (V2_MIN_BATCH_LENGTH <= length and end <= size and min_base_offset <= base_offset <= max_base_offset
                    and not attributes & ~0x7F and (attributes & 7) < len(CODEC_NAMES) and last_offset_delta >= 0
                    and crc32c(self._view[pos + V2_CRC_START:end]) == crc):
                return pos
            i += 1

    def _crc_finding(self, batch: RecordBatch) -> Finding:
        computed = self._computed_crc(batch)
        return Finding("corrupt_crc", self.path, batch.position,
                       f"batch at byte {batch.position} (base offset {batch.base_offset}) has CRC {batch.crc} but its "
                       f"bytes compute to {computed}",
                       {"stored_crc": batch.crc, "computed_crc": computed, "base_offset": batch.base_offset,
                        "magic": batch.magic})

    def _populate(self, pos: int, end: int) -> int:
        """Map the next window of the file in one call (MADV_POPULATE_READ, Linux 5.14+) instead of one page
        fault per 64 KiB; returns where the window ends. A no-op where unsupported."""
        stop = min(end, pos + POPULATE_WINDOW_BYTES)
        if isinstance(self._buf, mmap.mmap) and _POPULATE_READ is not None:
            start = pos - pos % mmap.PAGESIZE
            try:
                self._buf.madvise(_POPULATE_READ, start, stop - start)
            except (OSError, ValueError):
                pass
        return max(stop, pos + 1)

    def _release(self, start: int, stop: int) -> int:
        """Drop mapped pages of [start, stop) from this process's RSS (the page cache keeps them).

        Keeps the resident set of a walk over a huge segment bounded; pages touched again later
        (records of an earlier batch) simply fault back in.
        """
        if isinstance(self._buf, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED"):
            start -= start % mmap.PAGESIZE
            stop -= stop % mmap.PAGESIZE
            if stop > start:
                self._buf.madvise(mmap.MADV_DONTNEED, start, stop - start)
                return stop
        return start

    def _tail_finding(self, pos: int, declared: int | None, present: int) -> Finding:
        what = "its header" if declared is None else f"{declared} bytes"
        return Finding("truncated_tail", self.path, pos,
                       f"the file ends inside the batch at byte {pos}: {what} declared, {present} present",
                       {"declared_size": declared, "bytes_present": present})

    def _zero_from(self, pos: int) -> bool:
        """Whether every byte from `pos` to the end of the file is zero. Reads in chunks and releases each
        chunk's pages as it goes: a 2 GB preallocated file must not become 2 GB of resident memory."""
        chunk = ZERO_SCAN_CHUNK
        start = pos
        while pos < self.size:
            stop = min(self.size, pos + chunk)
            if self._impl.first_nonzero(self._buf, pos, stop) != stop:
                self._release(start, pos)
                return False
            pos = stop
            start = self._release(start, pos)
        return True

    def _walk_chunk(self, chunk: bytearray, pos: int, end: int) -> tuple[list[RecordBatch], int]:
        """walk_v2 (CRC verified) over the next chunk of the file read at `pos`: the batches that lie
        whole in it."""
        with memoryview(chunk) as whole, whole[:min(len(chunk), end - pos)] as want:
            got = os.preadv(self._file.fileno(), [want], pos)  # type: ignore[union-attr]
            with want[:got] as view:
                run, pos_after = self._impl.walk_v2(view, 0, got, got, True, RecordBatch, _CODEC_BY_ATTRIBUTE, pos)
        return run, pos + pos_after

    def _computed_crc(self, batch: RecordBatch) -> int:
        p = batch.position
        if batch.magic == 2:
            return crc32c(self._view[p + V2_CRC_START:p + batch.size])
        return zlib.crc32(self._buf[p + MAGIC_POSITION:p + batch.size])

    def _legacy_batch(self, pos: int, size: int, magic: int,
                      verify_crc: bool) -> tuple[RecordBatch, Finding | None]:
        buf = self._buf
        if magic == 1:
            offset, _size, crc, _magic, attributes, timestamp = LEGACY_V1.unpack_from(buf, pos)
        else:
            offset, _size, crc, _magic, attributes = LEGACY_V0.unpack_from(buf, pos)
            timestamp = -1
        crc_valid = zlib.crc32(buf[pos + MAGIC_POSITION:pos + size]) == crc if verify_crc else True
        base_offset, count, finding = offset, 1, None
        if attributes & 0x07 and crc_valid:
            # A compressed wrapper's first offset and count are only known from its inner messages.
            inner = []
            for item in self._legacy_inner(pos, size, magic, attributes, offset, timestamp):
                if isinstance(item, Finding):
                    finding = item
                    break
                inner.append(item.offset)
            if inner:
                base_offset, count = inner[0], len(inner)
        batch = RecordBatch(
            position=pos, size=size, magic=magic, base_offset=base_offset, last_offset=offset, count=count,
            codec=codec_name(attributes), timestamp_type=_timestamp_type(magic, attributes), base_timestamp=timestamp,
            max_timestamp=timestamp, crc=crc, crc_valid=crc_valid, attributes=attributes,
            last_offset_delta=offset - base_offset, **LEGACY_VALUES)
        return batch, finding

    # -- records ----------------------------------------------------------------------------------

    def records(self, batch: RecordBatch) -> Iterator[Record | Finding]:
        """The records of one batch (decompressing it if needed), with absolute offsets."""
        if batch.magic == 2:
            return self._v2_records(batch)  # the decoder's own generator: no extra generator level per record
        return self._legacy_records(batch)

    def _legacy_records(self, batch: RecordBatch) -> Iterator[Record | Finding]:
        buf = self._buf
        if batch.attributes & 0x07:
            yield from self._legacy_inner(batch.position, batch.size, batch.magic, batch.attributes,
                                          batch.last_offset, batch.max_timestamp)
            return
        record = _legacy_message(buf, batch.position, batch.size, batch.magic)
        if record is None:
            yield Finding("invalid_record", self.path, batch.position,
                          f"legacy message at byte {batch.position} has key/value lengths that overrun it",
                          {"offset": batch.last_offset})
        else:
            yield record

    def control_record(self, batch: RecordBatch) -> Record | None:
        """The one record of a control batch (None if it cannot be decoded)."""
        for item in self._v2_records(batch):
            return item if isinstance(item, Record) else None
        return None

    def record_findings(self, batch: RecordBatch) -> list[Finding]:
        """What `records(batch)` reports about the batch's records, without building them (a full scan checks
        every record of every batch this way)."""
        if batch.magic == 2:
            return self.v2_section_findings(batch, self._impl.check_v2)
        return [r for r in self.records(batch) if isinstance(r, Finding)]

    def v2_section_findings(self, batch: RecordBatch,
                            piece: Callable[[Any, int, int, RecordBatch], Problem | None]) -> list[Finding]:
        """Run `piece` (check_v2, or RecordColumns.add_v2) over a v2 batch's records section: the findings of
        the section (it cannot be decompressed) or of the problem the piece returns."""
        section = self.records_section(batch)
        if isinstance(section, Finding):
            return [section]
        problem = piece(*section, batch)
        return [] if problem is None else [record_problem_finding(self.path, batch, problem)]

    def _v2_records(self, batch: RecordBatch) -> Iterator[Record | Finding]:
        section = self.records_section(batch)
        if isinstance(section, Finding):
            return iter([section])
        records, problem = self._impl.decode_v2(*section, batch, Record, _control)
        if problem is not None:
            records.append(record_problem_finding(self.path, batch, problem))
        return iter(records)

    def records_section(self, batch: RecordBatch) -> tuple[bytes | mmap.mmap, int, int] | Finding:
        """Where a v2 batch's records lie once decompressed: (buffer, start, stop), or the finding that says
        why they cannot be read. Uncompressed records are read in place."""
        pos = batch.position
        codec = batch.attributes & 0x07
        if not codec:
            return self._buf, pos + V2_HEADER.size, pos + batch.size
        if codec >= len(CODEC_NAMES):
            return Finding("unknown_codec", self.path, pos, f"batch at byte {pos} names compression codec {codec}",
                           {"codec": codec, "base_offset": batch.base_offset})
        try:
            body = decompress(codec, self._buf[pos + V2_HEADER.size:pos + batch.size], magic=2)
        except CodecError as exc:
            return Finding("decompression_failed", self.path, pos,
                           f"batch at byte {pos} (base offset {batch.base_offset}) could not be decompressed: {exc}",
                           {"codec": CODEC_NAMES[codec], "base_offset": batch.base_offset, "error": str(exc)})
        return body, 0, len(body)

    def _legacy_inner(self, pos: int, size: int, magic: int, attributes: int, wrapper_offset: int,
                      wrapper_timestamp: int) -> Iterator[Record | Finding]:
        buf = self._buf
        value = _legacy_value(buf, pos, size, magic)
        if value is None:
            yield Finding("invalid_record", self.path, pos, f"legacy wrapper at byte {pos} has no readable value",
                          {"offset": wrapper_offset})
            return
        try:
            data = decompress(attributes & 0x07, value, magic=magic)
        except CodecError as exc:
            yield Finding("decompression_failed", self.path, pos,
                          f"legacy wrapper at byte {pos} (offset {wrapper_offset}) could not be decompressed: {exc}",
                          {"codec": codec_name(attributes), "offset": wrapper_offset, "error": str(exc)})
            return
        inner: list[Record] = []
        p = 0
        n = len(data)
        while p < n:
            if p + LOG_OVERHEAD.size > n:
                yield Finding("invalid_record", self.path, pos,
                              f"legacy wrapper at byte {pos}: {n - p} trailing bytes after its inner messages",
                              {"offset": wrapper_offset})
                break
            _off, msg_size = LOG_OVERHEAD.unpack_from(data, p)
            inner_magic = data[p + MAGIC_POSITION] if p + MAGIC_POSITION < n else -1
            if inner_magic not in (0, 1) or msg_size < LEGACY_MIN_SIZE[inner_magic] or p + 12 + msg_size > n:
                yield Finding("invalid_record", self.path, pos,
                              f"legacy wrapper at byte {pos}: inner message {len(inner)} is malformed",
                              {"offset": wrapper_offset, "inner_index": len(inner)})
                break
            record = _legacy_message(data, p, msg_size + 12, inner_magic)
            if record is None:
                yield Finding("invalid_record", self.path, pos,
                              f"legacy wrapper at byte {pos}: inner message {len(inner)} overruns itself",
                              {"offset": wrapper_offset, "inner_index": len(inner)})
                break
            inner.append(record)
            p += msg_size + 12
        if magic == 1 and inner:
            # Magic 1 inner offsets are relative; the wrapper carries the absolute offset of the last one.
            last_relative = inner[-1].offset
            log_append = bool(attributes & ATTR_TIMESTAMP_TYPE)
            inner = [r._replace(offset=wrapper_offset - last_relative + r.offset,
                                timestamp=wrapper_timestamp if log_append else r.timestamp) for r in inner]
        yield from inner


def _legacy_value(buf: bytes | mmap.mmap, pos: int, size: int, magic: int) -> bytes | None:
    p = pos + (26 if magic == 1 else 18)  # the key length field
    end = pos + size
    (key_len,) = _INT32.unpack_from(buf, p)
    p += 4 + max(key_len, 0)
    if p + 4 > end:
        return None
    (value_len,) = _INT32.unpack_from(buf, p)
    p += 4
    if value_len < 0 or p + value_len > end:
        return None
    return bytes(buf[p:p + value_len])


def _legacy_message(buf: bytes | mmap.mmap, pos: int, size: int, magic: int) -> Record | None:
    """A standalone legacy message as a Record (None when its lengths overrun it)."""
    end = pos + size
    if magic == 1:
        offset, _size, crc, _magic, _attributes, timestamp = LEGACY_V1.unpack_from(buf, pos)
        p = pos + LEGACY_V1.size
    else:
        offset, _size, crc, _magic, _attributes = LEGACY_V0.unpack_from(buf, pos)
        timestamp = -1
        p = pos + LEGACY_V0.size
    (key_len,) = _INT32.unpack_from(buf, p)
    p += 4
    if key_len < -1 or p + max(key_len, 0) + 4 > end:
        return None
    key = bytes(buf[p:p + key_len]) if key_len >= 0 else None
    p += max(key_len, 0)
    (value_len,) = _INT32.unpack_from(buf, p)
    p += 4
    if value_len < -1 or p + max(value_len, 0) > end:
        return None
    value = bytes(buf[p:p + value_len]) if value_len >= 0 else None
    crc_valid = zlib.crc32(buf[pos + MAGIC_POSITION:end]) == crc
    return Record(offset, timestamp, -1, key, value, (), None, None, crc, crc_valid)


def _reason(problem: Problem) -> str:
    code, decoded, value = problem
    return {
        RecordProblem.VARINT_PAST_END: "varint runs past the end of the records",
        RecordProblem.VARINT_TOO_LONG: f"varint longer than {value} bytes",
        RecordProblem.RECORD_LENGTH: f"record {decoded} declares length {value}",
        RecordProblem.KEY_OVERRUN: f"record {decoded} key length {value} overruns the record",
        RecordProblem.VALUE_OVERRUN: f"record {decoded} value length {value} overruns the record",
        RecordProblem.HEADER_COUNT: f"record {decoded} has header count {value}",
        RecordProblem.HEADER_KEY_OVERRUN: f"record {decoded} header key overruns the record",
        RecordProblem.HEADER_VALUE_OVERRUN: f"record {decoded} header value overruns the record",
        RecordProblem.LENGTH_DISAGREES: f"record {decoded} length {value} disagrees with its fields",
    }[RecordProblem(code)]


def record_problem_finding(path: str, batch: RecordBatch, problem: Problem) -> Finding:
    """The finding of a problem that ended a v2 batch's records, (code, record number, value) as both readers'
    decode_v2 and check_v2 return it: the one place these findings and their messages are built."""
    code, decoded, value = problem
    pos, base_offset, count = batch.position, batch.base_offset, batch.count
    if code == RecordProblem.RECORDS_MISSING:
        return Finding("record_count_mismatch", path, pos,
                       f"batch at byte {pos} (base offset {base_offset}) declares {count} records but holds {decoded}",
                       {"declared": count, "decoded": decoded, "base_offset": base_offset})
    if code == RecordProblem.TRAILING_BYTES:
        return Finding("record_count_mismatch", path, pos,
                       f"batch at byte {pos} (base offset {base_offset}) has {value} bytes after its {count} "
                       "declared records", {"declared": count, "trailing_bytes": value, "base_offset": base_offset})
    reason = _reason(problem)
    return Finding("invalid_record", path, pos, f"batch at byte {pos} (base offset {base_offset}): {reason}",
                   {"base_offset": base_offset, "record_index": decoded, "reason": reason})


def _control(key: bytes | None, value: bytes | None) -> tuple[str, int | None]:
    """(control type name, coordinator epoch for ABORT/COMMIT) of a control record."""
    if key is None or len(key) < 4:
        return "UNKNOWN", None
    _version, type_id = _INT16x2.unpack_from(key, 0)
    name = CONTROL_TYPES[type_id] if 0 <= type_id < len(CONTROL_TYPES) else f"UNKNOWN({type_id})"
    coordinator_epoch = None
    if type_id in (0, 1) and value is not None and len(value) >= _END_TXN.size:
        coordinator_epoch = _END_TXN.unpack_from(value, 0)[1]
    return name, coordinator_epoch


def open_log(path: str | os.PathLike[str], *, compiled: bool | None = None) -> LogFile:
    """Open a segment read-only (mmap; an empty file needs no mapping). `compiled` picks the reader (default:
    `core.READER`)."""
    path = os.fspath(path)
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size == 0:
            return LogFile(path, b"", compiled=compiled)
        data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        file = open(os.dup(fh.fileno()), "rb", buffering=0)  # noqa: SIM115 - owned by the LogFile
    if hasattr(mmap, "MADV_SEQUENTIAL"):
        data.madvise(mmap.MADV_SEQUENTIAL)
    return LogFile(path, data, compiled=compiled, file=file)


def open_log_bytes(data: bytes, name: str = "<bytes>", *, compiled: bool | None = None) -> LogFile:
    """The same reader over an in-memory buffer."""
    return LogFile(name, bytes(data), compiled=compiled)


def iter_batches(path: str | os.PathLike[str], **kwargs: object) -> Iterator[RecordBatch | Finding]:
    with open_log(path) as log:
        yield from log.batches(**kwargs)  # type: ignore[arg-type]
