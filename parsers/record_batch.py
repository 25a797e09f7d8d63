"""`*.log` segments (and KRaft metadata snapshots): v2 record batches and legacy magic 0/1 message sets.

A segment is mmapped read-only; `LogFile.batches()` walks batch headers (no decompression unless
asked: legacy compressed wrappers are the one exception, see `_legacy_batch`) and checks CRCs;
`LogFile.records(batch)` decodes one batch's records on demand. Problems come out as `Finding`s with
the byte position of the batch, and iteration goes on wherever the framing still holds.
"""

from __future__ import annotations

import mmap
import os
import struct
import zlib
from collections.abc import Iterator
from typing import NamedTuple

from kforensics.parsers.codecs import CODEC_NAMES, CodecError, codec_name, decompress
from kforensics.parsers.crc import crc32c
from kforensics.parsers.findings import Finding

# Every batch, any magic, starts with: [0] baseOffset/offset int64, [8] length int32 (bytes after it),
# and has its magic byte at [16].
LOG_OVERHEAD = struct.Struct(">qi")
MAGIC_POSITION = 16

# v2 header, 61 bytes:
# [0] baseOffset q  [8] batchLength i  [12] partitionLeaderEpoch i  [16] magic b  [17] crc I
# [21] attributes h  [23] lastOffsetDelta i  [27] baseTimestamp q  [35] maxTimestamp q
# [43] producerId q  [51] producerEpoch h  [53] baseSequence i  [57] recordsCount i
V2_HEADER = struct.Struct(">qiibIhiqqqhii")
V2_CRC_START = 21
V2_MIN_BATCH_LENGTH = V2_HEADER.size - LOG_OVERHEAD.size  # 49

# Legacy message: [0] offset q [8] messageSize i [12] crc I [16] magic b [17] attributes b
# then magic 1: [18] timestamp q; then key length i + key, value length i + value.
LEGACY_V0 = struct.Struct(">qiIbb")
LEGACY_V1 = struct.Struct(">qiIbbq")
LEGACY_MIN_SIZE = {0: 14, 1: 22}  # messageSize minimum: crc+magic+attrs[+ts]+keylen+valuelen
_INT32 = struct.Struct(">i")
_INT16x2 = struct.Struct(">hh")
_END_TXN = struct.Struct(">hi")

MAX_BATCH_SIZE = 1 << 30
RELEASE_BEHIND_BYTES = 64 << 20  # walk this far past the last release before releasing again
RELEASE_LAG_BYTES = 8 << 20  # ... and keep the most recent bytes mapped (records() of recent batches)
POPULATE_WINDOW_BYTES = 16 << 20
_POPULATE_READ = getattr(mmap, "MADV_POPULATE_READ", 22 if os.uname().sysname == "Linux" else None)  # larger than any broker's message.max.bytes: a length beyond it is garbage
INT32_MAX = 2**31 - 1

ATTR_TIMESTAMP_TYPE = 0x08
ATTR_TRANSACTIONAL = 0x10
ATTR_CONTROL = 0x20
ATTR_DELETE_HORIZON = 0x40

CONTROL_TYPES = ("ABORT", "COMMIT", "LEADER_CHANGE", "SNAPSHOT_HEADER", "SNAPSHOT_FOOTER", "KRAFT_VERSION",
                 "KRAFT_VOTERS")


class RecordBatch(NamedTuple):
    """One v2 batch, or one legacy (magic 0/1) top-level message or compressed wrapper."""

    position: int
    size: int
    magic: int
    base_offset: int
    last_offset: int
    count: int
    partition_leader_epoch: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    last_sequence: int
    attributes: int
    codec: str
    timestamp_type: str
    base_timestamp: int
    max_timestamp: int
    delete_horizon_ms: int | None
    is_transactional: bool
    is_control: bool
    crc: int
    crc_valid: bool
    last_offset_delta: int


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


_new_tuple = tuple.__new__
_CODEC_BY_ATTRIBUTE = tuple(codec_name(code) for code in range(8))
_TIMESTAMP_TYPE_V2 = {0: "CreateTime", ATTR_TIMESTAMP_TYPE: "LogAppendTime"}


def _timestamp_type(magic: int, attributes: int) -> str:
    if magic == 0:
        return "NoTimestampType"
    return "LogAppendTime" if attributes & ATTR_TIMESTAMP_TYPE else "CreateTime"


class LogFile:
    """A read-only view of one segment file (or of a bytes buffer, for tests and remote reads)."""

    def __init__(self, path: str, data: bytes | mmap.mmap, closer: object | None = None) -> None:
        self.path = path
        self._buf = data
        self._view = memoryview(data)  # zero-copy slices for CRCs
        self._closer = closer
        self.size = len(data)

    def __enter__(self) -> LogFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
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
        view = self._view
        end = self.size if max_bytes is None else min(self.size, start + max_bytes)
        limited = end < self.size
        pos = start
        released = start
        unpack_v2 = V2_HEADER.unpack_from
        checksum = crc32c
        new = _new_tuple
        codecs = _CODEC_BY_ATTRIBUTE
        timestamp_types = _TIMESTAMP_TYPE_V2
        populated = start
        while pos < end:
            if pos >= populated:
                populated = self._populate(pos, end)
            if pos - released > RELEASE_BEHIND_BYTES:
                released = self._release(released, pos - RELEASE_LAG_BYTES)
            remaining = end - pos
            # Fast path: a whole, plausible v2 batch (nearly every batch of a real log).
            if remaining >= 61 and buf[pos + 16] == 2:
                (base_offset, length, leader_epoch, magic, crc, attributes, last_offset_delta, base_timestamp,
                 max_timestamp, producer_id, producer_epoch, base_sequence, count) = unpack_v2(buf, pos)
                size = length + 12
                if length >= V2_MIN_BATCH_LENGTH and size <= remaining and size <= MAX_BATCH_SIZE:
                    crc_valid = checksum(view[pos + 21:pos + size]) == crc if verify_crc else True
                    if base_sequence < 0:
                        last_sequence = -1
                    else:
                        last_sequence = base_sequence + last_offset_delta
                        if last_sequence > INT32_MAX:
                            last_sequence -= 2147483648
                    batch = new(RecordBatch, (
                        pos, size, 2, base_offset, base_offset + last_offset_delta, count, leader_epoch, producer_id,
                        producer_epoch, base_sequence, last_sequence, attributes, codecs[attributes & 7],
                        timestamp_types[attributes & ATTR_TIMESTAMP_TYPE], base_timestamp, max_timestamp,
                        base_timestamp if attributes & ATTR_DELETE_HORIZON else None,
                        bool(attributes & ATTR_TRANSACTIONAL), bool(attributes & ATTR_CONTROL), crc, crc_valid,
                        last_offset_delta))
                    yield batch
                    if not crc_valid:
                        yield self._crc_finding(batch)
                    pos += size
                    continue
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
        buf = self._buf
        chunk = 1 << 20
        while pos < self.size:
            piece = buf[pos:pos + chunk]
            if piece.count(0) != len(piece):
                return False
            pos += chunk
        return True

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
            pos, size, magic, base_offset, offset, count, -1, -1, -1, -1, -1, attributes, codec_name(attributes),
            _timestamp_type(magic, attributes), timestamp, timestamp, None, False, False, crc, crc_valid,
            offset - base_offset,
        )
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

    def _v2_records(self, batch: RecordBatch) -> Iterator[Record | Finding]:
        pos = batch.position
        body = self._buf[pos + V2_HEADER.size:pos + batch.size]
        codec = batch.attributes & 0x07
        if codec:
            if codec >= len(CODEC_NAMES):
                return iter([Finding("unknown_codec", self.path, pos,
                                     f"batch at byte {pos} names compression codec {codec}",
                                     {"codec": codec, "base_offset": batch.base_offset})])
            try:
                body = decompress(codec, body, magic=2)
            except CodecError as exc:
                return iter([Finding(
                    "decompression_failed", self.path, pos,
                    f"batch at byte {pos} (base offset {batch.base_offset}) could not be decompressed: {exc}",
                    {"codec": CODEC_NAMES[codec], "base_offset": batch.base_offset, "error": str(exc)})])
        return decode_v2_records(body, batch, self.path)

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


class _RecordError(Exception):
    pass


def _uvarint_raw(data: bytes, i: int) -> tuple[int, int]:
    """The raw (not yet zigzag-decoded) varint at data[i]: (value, next index)."""
    shift = 0
    raw = 0
    n = len(data)
    while True:
        if i >= n or shift > 63:
            raise _RecordError("varint runs past the end of the records")
        b = data[i]
        i += 1
        raw |= (b & 0x7F) << shift
        if not b & 0x80:
            return raw, i
        shift += 7


def _varint_slow(data: bytes, i: int) -> tuple[int, int]:
    """Zigzag varint at data[i]: (value, next index)."""
    raw, i = _uvarint_raw(data, i)
    return (raw >> 1) ^ -(raw & 1), i


def decode_v2_records(data: bytes, batch: RecordBatch, path: str) -> Iterator[Record | Finding]:
    """Decode the (decompressed) records section of a v2 batch.

    The hot loop of deep iteration, written for speed: one- and two-byte varints are decoded
    inline (the common case for lengths, deltas and small keys/values), records are built with
    tuple.__new__, everything is a local.
    """
    n = len(data)
    i = 0
    base_offset = batch.base_offset
    base_timestamp = batch.base_timestamp
    log_append_time = batch.timestamp_type == "LogAppendTime"
    max_timestamp = batch.max_timestamp
    base_sequence = batch.base_sequence
    has_sequence = base_sequence >= 0
    is_control = batch.is_control
    count = batch.count
    raw_varint = _uvarint_raw
    slow = _varint_slow
    new = tuple.__new__
    record_type = Record
    decoded = 0
    try:
        for decoded in range(count):  # noqa: B007 - `decoded` is read after the loop and in messages
            if i >= n:
                yield Finding("record_count_mismatch", path, batch.position,
                              f"batch at byte {batch.position} (base offset {base_offset}) declares {count} records "
                              f"but holds {decoded}", {"declared": count, "decoded": decoded,
                                                       "base_offset": base_offset})
                return
            # record length
            b = data[i]
            if b < 0x80:
                v = b
                i += 1
            elif data[i + 1] < 0x80:
                v = (b & 0x7F) | (data[i + 1] << 7)
                i += 2
            else:
                v, i = raw_varint(data, i)
            length = (v >> 1) ^ -(v & 1)
            end = i + length
            if length < 6 or end > n:
                raise _RecordError(f"record {decoded} declares length {length}")
            # attributes (unused), then timestampDelta
            b = data[i + 1]
            if b < 0x80:
                v = b
                i += 2
            elif data[i + 2] < 0x80:
                v = (b & 0x7F) | (data[i + 2] << 7)
                i += 3
            else:
                v, i = raw_varint(data, i + 1)
            ts_delta = (v >> 1) ^ -(v & 1)
            # offsetDelta
            b = data[i]
            if b < 0x80:
                v = b
                i += 1
            elif data[i + 1] < 0x80:
                v = (b & 0x7F) | (data[i + 1] << 7)
                i += 2
            else:
                v, i = raw_varint(data, i)
            offset_delta = (v >> 1) ^ -(v & 1)
            # key
            b = data[i]
            if b < 0x80:
                v = b
                i += 1
            elif data[i + 1] < 0x80:
                v = (b & 0x7F) | (data[i + 1] << 7)
                i += 2
            else:
                v, i = raw_varint(data, i)
            if v == 1:
                key = None
            else:
                key_len = (v >> 1) ^ -(v & 1)
                if key_len < 0 or i + key_len > end:
                    raise _RecordError(f"record {decoded} key length {key_len} overruns the record")
                key = data[i:i + key_len]
                i += key_len
            # value
            b = data[i]
            if b < 0x80:
                v = b
                i += 1
            elif data[i + 1] < 0x80:
                v = (b & 0x7F) | (data[i + 1] << 7)
                i += 2
            else:
                v, i = raw_varint(data, i)
            if v == 1:
                value = None
            else:
                value_len = (v >> 1) ^ -(v & 1)
                if value_len < 0 or i + value_len > end:
                    raise _RecordError(f"record {decoded} value length {value_len} overruns the record")
                value = data[i:i + value_len]
                i += value_len
            # headers
            b = data[i]
            if b == 0:
                i += 1
                headers = ()
            else:
                if b < 0x80:
                    header_count = (b >> 1) ^ -(b & 1)
                    i += 1
                else:
                    header_count, i = slow(data, i)
                if header_count < 0 or header_count > end - i:
                    raise _RecordError(f"record {decoded} has header count {header_count}")
                headers_list = []
                for _ in range(header_count):
                    b = data[i]
                    if b < 0x80:
                        hk_len = (b >> 1) ^ -(b & 1)
                        i += 1
                    else:
                        hk_len, i = slow(data, i)
                    if hk_len < 0 or i + hk_len > end:
                        raise _RecordError(f"record {decoded} header key overruns the record")
                    hkey = data[i:i + hk_len].decode("utf-8", "replace")
                    i += hk_len
                    b = data[i]
                    if b < 0x80:
                        hv_len = (b >> 1) ^ -(b & 1)
                        i += 1
                    else:
                        hv_len, i = slow(data, i)
                    if hv_len >= 0:
                        if i + hv_len > end:
                            raise _RecordError(f"record {decoded} header value overruns the record")
                        hvalue = data[i:i + hv_len]
                        i += hv_len
                    else:
                        hvalue = None
                    headers_list.append((hkey, hvalue))
                headers = tuple(headers_list)
            if i != end:
                raise _RecordError(f"record {decoded} length {length} disagrees with its fields")
            if has_sequence:
                sequence = base_sequence + offset_delta
                if sequence > INT32_MAX:
                    sequence -= 2147483648
            else:
                sequence = -1
            timestamp = max_timestamp if log_append_time else base_timestamp + ts_delta
            if is_control:
                control_type, coordinator_epoch = _control(key, value)
                yield new(record_type, (base_offset + offset_delta, timestamp, sequence, key, value, headers,
                                        control_type, coordinator_epoch, None, None))
            else:
                yield new(record_type, (base_offset + offset_delta, timestamp, sequence, key, value, headers,
                                        None, None, None, None))
        else:
            decoded = count
    except (_RecordError, IndexError) as exc:
        reason = str(exc) if isinstance(exc, _RecordError) else f"record {decoded} runs past the end of the records"
        yield Finding("invalid_record", path, batch.position,
                      f"batch at byte {batch.position} (base offset {base_offset}): {reason}",
                      {"base_offset": base_offset, "record_index": decoded, "reason": reason})
        return
    if i != n:
        yield Finding("record_count_mismatch", path, batch.position,
                      f"batch at byte {batch.position} (base offset {base_offset}) has {n - i} bytes after its "
                      f"{count} declared records", {"declared": count, "trailing_bytes": n - i,
                                                    "base_offset": base_offset})


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


def open_log(path: str | os.PathLike[str]) -> LogFile:
    """Open a segment read-only (mmap; an empty file needs no mapping)."""
    path = os.fspath(path)
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size == 0:
            return LogFile(path, b"")
        data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    if hasattr(mmap, "MADV_SEQUENTIAL"):
        data.madvise(mmap.MADV_SEQUENTIAL)
    return LogFile(path, data)


def open_log_bytes(data: bytes, name: str = "<bytes>") -> LogFile:
    """The same reader over an in-memory buffer."""
    return LogFile(name, bytes(data))


def iter_batches(path: str | os.PathLike[str], **kwargs: object) -> Iterator[RecordBatch | Finding]:
    with open_log(path) as log:
        yield from log.batches(**kwargs)  # type: ignore[arg-type]
