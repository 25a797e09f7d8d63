"""The pure-Python implementation of each piece of the compiled reader (`_reader.pyx`, `_columns.pyx`), with
the same signatures and results; `parsers/core.py` binds one or the other. This is the reference: the compiled
pieces are held to it (tests/test_differential.py, fuzz/fuzz_reader.py).

Problems that end a batch's records are returned as (code, record number, value) tuples (`RecordProblem`
codes, the same numbers as `_layouts.pxd`); `record_batch.record_problem_finding` builds their findings.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Callable, Sequence
from enum import IntEnum
from typing import Any

from kforensics.parsers.crc import crc32c

# Every batch, any magic, starts with: [0] baseOffset/offset int64, [8] length int32 (bytes after it),
# and has its magic byte at [16].
LOG_OVERHEAD = struct.Struct(">qi")
MAGIC_POSITION = 16

# v2 header, 61 bytes (V2_HEADER_SIZE in _layouts.pxd):
# [0] baseOffset q  [8] batchLength i  [12] partitionLeaderEpoch i  [16] magic b  [17] crc I
# [21] attributes h  [23] lastOffsetDelta i  [27] baseTimestamp q  [35] maxTimestamp q
# [43] producerId q  [51] producerEpoch h  [53] baseSequence i  [57] recordsCount i
V2_HEADER = struct.Struct(">qiibIhiqqqhii")
V2_CRC_START = 21
V2_MIN_BATCH_LENGTH = V2_HEADER.size - LOG_OVERHEAD.size  # 49
MAX_BATCH_SIZE = 1 << 30  # larger than any broker's message.max.bytes: a length beyond it is garbage
INT32_MAX = 2**31 - 1

ATTR_TIMESTAMP_TYPE = 0x08
ATTR_TRANSACTIONAL = 0x10
ATTR_CONTROL = 0x20
ATTR_DELETE_HORIZON = 0x40

Buffer = Any  # bytes, bytearray, mmap or memoryview
Problem = tuple[int, int, int]


class RecordProblem(IntEnum):
    """What ends the reading of a batch's records (the same numbers as `_layouts.pxd`)."""

    RECORDS_MISSING = 1
    TRAILING_BYTES = 2
    VARINT_PAST_END = 3
    VARINT_TOO_LONG = 4
    RECORD_LENGTH = 5
    KEY_OVERRUN = 6
    VALUE_OVERRUN = 7
    HEADER_COUNT = 8
    HEADER_KEY_OVERRUN = 9
    HEADER_VALUE_OVERRUN = 10
    LENGTH_DISAGREES = 11


class _RecordError(Exception):
    def __init__(self, code: RecordProblem, value: int = 0) -> None:
        super().__init__(code, value)
        self.code = code
        self.value = value


_MASK32 = (1 << 32) - 1
_MASK64 = (1 << 64) - 1


def add64(a: int, b: int) -> int:
    """a + b with Java's long wrap-around."""
    return ((a + b + (1 << 63)) & _MASK64) - (1 << 63)


def walk_v2(buf: Buffer, pos: int, stop: int, end: int, verify_crc: bool, batch_type: Callable[..., Any],
            codecs: Sequence[str], base: int = 0) -> tuple[list[Any], int]:
    """Whole, plausible v2 batches from `pos` while `pos < stop` (each ending by `end`): (batches, next
    position). Stops at the first position that is not such a batch, and right after a batch whose CRC
    does not match, so that the caller reports it in place. buf[0] is byte `base` of the file. Each batch is a
    `batch_type` (RecordBatch) built by field name."""
    out: list[Any] = []
    end = min(end, len(buf))
    if pos < 0 or not len(buf):
        return out, pos
    with memoryview(buf) as view:
        while pos < stop and end - pos >= V2_HEADER.size and buf[pos + MAGIC_POSITION] == 2:
            (base_offset, length, leader_epoch, _magic, crc, attributes, last_offset_delta, base_timestamp,
             max_timestamp, producer_id, producer_epoch, base_sequence, count) = V2_HEADER.unpack_from(buf, pos)
            size = length + LOG_OVERHEAD.size
            if length < V2_MIN_BATCH_LENGTH or size > end - pos or size > MAX_BATCH_SIZE:
                break
            crc_valid = crc32c(view[pos + V2_CRC_START:pos + size]) == crc if verify_crc else True
            if base_sequence < 0:
                last_sequence = -1
            else:
                last_sequence = base_sequence + last_offset_delta
                if last_sequence > INT32_MAX:
                    last_sequence -= 2147483648
            out.append(batch_type(
                position=base + pos, size=size, magic=2, base_offset=base_offset,
                last_offset=add64(base_offset, last_offset_delta), count=count, partition_leader_epoch=leader_epoch,
                producer_id=producer_id, producer_epoch=producer_epoch, base_sequence=base_sequence,
                last_sequence=last_sequence, is_transactional=bool(attributes & ATTR_TRANSACTIONAL),
                is_control=bool(attributes & ATTR_CONTROL), codec=codecs[attributes & 7],
                timestamp_type="LogAppendTime" if attributes & ATTR_TIMESTAMP_TYPE else "CreateTime",
                base_timestamp=base_timestamp, max_timestamp=max_timestamp, crc=crc, crc_valid=crc_valid,
                delete_horizon_ms=base_timestamp if attributes & ATTR_DELETE_HORIZON else None, attributes=attributes,
                last_offset_delta=last_offset_delta))
            pos += size
            if not crc_valid:
                break
    return out, pos


def first_nonzero(buf: Buffer, start: int, stop: int) -> int:
    """Index of the first non-zero byte of buf[start:stop], or `stop`."""
    stop = min(stop, len(buf))
    start = max(start, 0)
    if start >= stop:
        return stop
    piece = buf[start:stop]
    if piece == bytes(len(piece)):
        return stop
    return stop - len(piece.lstrip(b"\x00"))


def _varint(data: Buffer, i: int, max_bytes: int = 5) -> tuple[int, int]:
    """The zigzag varint at data[i]: (value, next index). Kafka's int32 varint takes at most 5 bytes and its
    int64 varlong 10; bits beyond 32 (64) are dropped, as Java's ByteUtils does."""
    raw = 0
    n = len(data)
    for k in range(max_bytes):
        if i >= n:
            raise _RecordError(RecordProblem.VARINT_PAST_END)
        b = data[i]
        i += 1
        raw |= (b & 0x7F) << (7 * k)
        if b < 0x80:
            raw &= _MASK32 if max_bytes == 5 else _MASK64
            return (raw >> 1) ^ -(raw & 1), i
    raise _RecordError(RecordProblem.VARINT_TOO_LONG, max_bytes)


def _length_prefixed(data: Buffer, i: int, end: int, overrun: RecordProblem) -> tuple[bytes | None, int]:
    """A key or value: varint length (-1 for null), then that many bytes within the record."""
    length, i = _varint(data, i)
    if length == -1:
        return None, i
    if length < 0 or i + length > end:
        raise _RecordError(overrun, length)
    return bytes(data[i:i + length]), i + length


def decode_v2(buf: Buffer, start: int, stop: int, batch: Any, record_type: Callable[..., Any],
              control: Callable[[bytes | None, bytes | None], tuple[str, int | None]]) -> tuple[list[Any],
                                                                                                  Problem | None]:
    """The records of buf[start:stop], a v2 batch's (decompressed) records section: (records, the problem that
    ended them or None)."""
    data = buf[start:stop]
    n = len(data)
    i = 0
    count = batch.count
    out: list[Any] = []
    if batch.base_sequence < 0:
        base_sequence = None
    else:
        base_sequence = batch.base_sequence
    log_append_time = batch.timestamp_type == "LogAppendTime"
    decoded = 0
    try:
        for decoded in range(count):  # noqa: B007 - `decoded` is read in the problem
            if i >= n:
                return out, (RecordProblem.RECORDS_MISSING, decoded, 0)
            length, i = _varint(data, i)
            end = i + length
            if length < 6 or end > n:
                raise _RecordError(RecordProblem.RECORD_LENGTH, length)
            i += 1  # attributes: unused
            ts_delta, i = _varint(data, i, 10)
            offset_delta, i = _varint(data, i)
            key, i = _length_prefixed(data, i, end, RecordProblem.KEY_OVERRUN)
            value, i = _length_prefixed(data, i, end, RecordProblem.VALUE_OVERRUN)
            header_count, i = _varint(data, i)
            if header_count < 0 or header_count > max(end - i, 0):
                raise _RecordError(RecordProblem.HEADER_COUNT, header_count)
            headers = []
            for _ in range(header_count):
                hk_len, i = _varint(data, i)
                if hk_len < 0 or i + hk_len > end:
                    raise _RecordError(RecordProblem.HEADER_KEY_OVERRUN)
                hkey = bytes(data[i:i + hk_len]).decode("utf-8", "replace")
                i += hk_len
                hv_len, i = _varint(data, i)
                hvalue = None
                if hv_len >= 0:  # any negative length is a null value, as in Java
                    if i + hv_len > end:
                        raise _RecordError(RecordProblem.HEADER_VALUE_OVERRUN)
                    hvalue = bytes(data[i:i + hv_len])
                    i += hv_len
                headers.append((hkey, hvalue))
            if i != end:
                raise _RecordError(RecordProblem.LENGTH_DISAGREES, length)
            if base_sequence is None:
                sequence = -1
            else:
                sequence = base_sequence + offset_delta
                if sequence > INT32_MAX:  # Kafka's DefaultRecordBatch.incrementSequence
                    sequence -= 2147483648
            timestamp = batch.max_timestamp if log_append_time else add64(batch.base_timestamp, ts_delta)
            control_type = coordinator_epoch = None
            if batch.is_control:
                control_type, coordinator_epoch = control(key, value)
            out.append(record_type(add64(batch.base_offset, offset_delta), timestamp, sequence, key, value,
                                   tuple(headers), control_type, coordinator_epoch))
    except _RecordError as exc:
        return out, (exc.code, decoded, exc.value)
    if i != n:
        return out, (RecordProblem.TRAILING_BYTES, count, n - i)
    return out, None


def _fields(*fields: Any) -> tuple[Any, ...]:
    """A record as the plain tuple of its fields (offset, timestamp, sequence, key, value, headers, ...)."""
    return fields


def _no_control(key: bytes | None, value: bytes | None) -> tuple[str, int | None]:
    return "", None


def check_v2(buf: Buffer, start: int, stop: int, batch: Any) -> Problem | None:
    """The problem `decode_v2` gives for buf[start:stop], or None."""
    return decode_v2(buf, start, stop, batch, _fields, _no_control)[1]


def content_hash(data: bytes | None) -> int | None:
    """A record key's or value's content hash: BLAKE2b with an 8-byte digest, as a signed int64."""
    if data is None:
        return None
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big", signed=True)


#: The record rows' columns and their Arrow types (pyarrow is imported by take() only: dump never needs it).
COLUMNS = {"offset": "int64", "timestamp": "int64", "producer_id": "int64", "producer_epoch": "int32",
           "key_hash": "int64", "value_hash": "int64", "key_size": "int32", "value_size": "int32",
           "batch_position": "int64"}


class RecordColumns:
    """Record rows as Python lists, handed out as Arrow arrays (`_columns.RecordColumns`'s reference)."""

    def __init__(self, hashes: bool = True) -> None:
        self.hashes = hashes
        self._rows: list[tuple[Any, ...]] = []

    def __len__(self) -> int:
        return len(self._rows)

    def add_record(self, offset: int, timestamp: int, producer_id: int, producer_epoch: int, key: bytes | None,
                   value: bytes | None, batch_position: int) -> None:
        """One row from Python values (legacy messages)."""
        hash_of = content_hash if self.hashes else (lambda _data: None)
        self._rows.append((offset, timestamp, producer_id, producer_epoch, hash_of(key), hash_of(value),
                           -1 if key is None else len(key), -1 if value is None else len(value), batch_position))

    def add_v2(self, buf: Buffer, start: int, stop: int, batch: Any) -> Problem | None:
        """Decode a v2 batch's records section into rows: the decoder's problem or None."""
        records, problem = decode_v2(buf, start, stop, batch, _fields, _no_control)
        for offset, timestamp, _sequence, key, value, *_rest in records:
            self.add_record(offset, timestamp, batch.producer_id, batch.producer_epoch, key, value, batch.position)
        return problem

    def take(self) -> dict[str, Any]:
        """The rows so far as pyarrow arrays (name -> array); the columns start empty again."""
        import pyarrow as pa

        columns = list(zip(*self._rows, strict=True)) if self._rows else [()] * len(COLUMNS)
        self._rows = []
        return {name: pa.array(values, getattr(pa, kind)()) for (name, kind), values in zip(COLUMNS.items(), columns,
                                                                                          strict=True)}
