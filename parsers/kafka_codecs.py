"""Decompression of record batches: gzip, snappy (xerial-framed or raw), lz4 frame, zstd.

Output is bounded (`max_size`) so that a lying or malicious payload cannot exhaust memory.
"""

from __future__ import annotations

import io
import struct
import threading

import cramjam
import lz4.frame
import xxhash
import zstandard

try:  # ISA-L's inflate: the same streams as zlib's, about twice as fast
    from isal import isal_zlib as zlib
except ImportError:  # a platform without its wheel
    import zlib  # type: ignore[no-redef]

CODEC_NAMES = ("none", "gzip", "snappy", "lz4", "zstd")
DEFAULT_MAX_SIZE = 256 << 20
# First output buffer of lz4 and zstd, grown by doubling: asking for DEFAULT_MAX_SIZE at once costs a large
# allocation per batch, several times the decompression of a typical batch.
FIRST_CHUNK = 64 << 10

# Kafka's Java snappy framing (xerial SnappyOutputStream): magic, version, compatible version, then
# blocks of int32 length + raw snappy.
XERIAL_MAGIC = b"\x82SNAPPY\x00"
XERIAL_HEADER = struct.Struct(">8sii")  # [0] magic [8] version [12] compatible version
_INT32 = struct.Struct(">i")
LZ4_FRAME_MAGIC = b"\x04\x22\x4d\x18"


class CodecError(Exception):
    """The payload could not be decompressed; the message says why."""


def codec_name(attributes: int) -> str:
    code = attributes & 0x07
    return CODEC_NAMES[code] if code < len(CODEC_NAMES) else f"unknown({code})"


def decompress(codec: int, data: bytes | memoryview, *, magic: int = 2, max_size: int = DEFAULT_MAX_SIZE) -> bytes:
    """Decompress one batch's records section (codec = attributes & 7)."""
    try:
        if codec == 1:
            return _gunzip(data, max_size)
        if codec == 2:
            return _unsnappy(data, max_size)
        if codec == 3:
            return _unlz4(data, max_size, legacy=magic == 0)
        if codec == 4:
            return _unzstd(data, max_size)
    except CodecError:
        raise
    except Exception as exc:  # each library has its own error types
        raise CodecError(f"{CODEC_NAMES[codec]}: {exc}") from exc
    raise CodecError(f"unknown compression codec {codec}")


def _check_size(size: int, max_size: int) -> None:
    if size > max_size:
        raise CodecError(f"decompressed size exceeds {max_size} bytes")


def _gunzip(data: bytes | memoryview, max_size: int) -> bytes:
    out = bytearray()
    rest = bytes(data)
    while rest:
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        out += d.decompress(rest, max_size + 1 - len(out))
        _check_size(len(out), max_size)
        if not d.eof:
            raise CodecError("gzip: truncated stream")
        rest = d.unused_data.lstrip(b"\x00")  # Java's GZIPInputStream also reads concatenated members
    return bytes(out)


def _unsnappy(data: bytes | memoryview, max_size: int) -> bytes:
    data = bytes(data)
    if not data.startswith(XERIAL_MAGIC):
        _check_size(cramjam.snappy.decompress_raw_len(data), max_size)
        return bytes(cramjam.snappy.decompress_raw(data))
    if len(data) < XERIAL_HEADER.size:
        raise CodecError("snappy: truncated xerial header")
    out = bytearray()
    pos = XERIAL_HEADER.size
    while pos < len(data):
        if pos + 4 > len(data):
            raise CodecError(f"snappy: truncated xerial block length at {pos}")
        (length,) = _INT32.unpack_from(data, pos)
        pos += 4
        if length < 0 or pos + length > len(data):
            raise CodecError(f"snappy: xerial block of {length} bytes overruns the payload at {pos}")
        block = data[pos:pos + length]
        _check_size(len(out) + cramjam.snappy.decompress_raw_len(block), max_size)
        out += bytes(cramjam.snappy.decompress_raw(block))
        pos += length
    return bytes(out)


def _unlz4(data: bytes | memoryview, max_size: int, *, legacy: bool) -> bytes:
    data = bytes(data)
    try:
        return _lz4_frame(data, max_size)
    except CodecError:
        raise
    except Exception:
        if not data.startswith(LZ4_FRAME_MAGIC):
            raise
        # KAFKA-3160: magic-0 (and some old magic-1) writers computed the header checksum over the
        # magic bytes too. Recompute it the right way and try again.
        fixed = _fix_lz4_header_checksum(data)
        if fixed is None:
            raise
        return _lz4_frame(fixed, max_size)


def _lz4_frame(data: bytes, max_size: int) -> bytes:
    decompressor = lz4.frame.LZ4FrameDecompressor()
    want = _first_chunk(len(data), max_size)
    out = decompressor.decompress(data, max_length=want)
    while not decompressor.eof and not decompressor.needs_input and len(out) <= max_size:
        want = min(max_size + 1 - len(out), max(FIRST_CHUNK, 2 * len(out)))
        out += decompressor.decompress(b"", max_length=want)
    _check_size(len(out), max_size)
    if not decompressor.eof:
        raise CodecError("lz4: truncated frame")
    return out


def _first_chunk(compressed: int, max_size: int) -> int:
    return min(max_size + 1, max(FIRST_CHUNK, 4 * compressed))


def _fix_lz4_header_checksum(data: bytes) -> bytes | None:
    if len(data) < 7:
        return None
    flg = data[4]
    descriptor_len = 2 + (8 if flg & 0x08 else 0) + (4 if flg & 0x01 else 0)
    hc_pos = 4 + descriptor_len
    if hc_pos >= len(data):
        return None
    hc = (xxhash.xxh32_intdigest(data[4:hc_pos]) >> 8) & 0xFF  # LZ4 frame format: HC = (xxh32(descriptor) >> 8) & 0xFF
    return data[:hc_pos] + bytes([hc]) + data[hc_pos + 1:]


_local = threading.local()


def _zstd_decompressor() -> zstandard.ZstdDecompressor:
    """One decompressor per thread: making one costs more than decompressing a typical batch, and an
    instance must not be used by two threads at once."""
    decompressor = getattr(_local, "zstd", None)
    if decompressor is None:
        decompressor = _local.zstd = zstandard.ZstdDecompressor()
    return decompressor


def _unzstd(data: bytes | memoryview, max_size: int) -> bytes:
    data = bytes(data)
    # libzstd's stream reader stops quietly where a frame is cut short: the frame headers tell.
    _check_zstd_frames(data)
    reader = _zstd_decompressor().stream_reader(io.BytesIO(data), read_across_frames=True)
    want = _first_chunk(len(data), max_size)
    out = bytearray()
    while True:
        chunk = reader.read(want)
        if not chunk:
            break
        out += chunk
        _check_size(len(out), max_size)
        want = min(max_size + 1 - len(out), 2 * want)
    return bytes(out)


ZSTD_MAGIC = 0xFD2FB528
ZSTD_SKIPPABLE = 0x184D2A50  # the low 4 bits are free
_UINT32_LE = struct.Struct("<I")


def _check_zstd_frames(data: bytes) -> None:
    """Walk the frames and block headers of a zstd payload (RFC 8878 §3.1) and raise CodecError unless it ends
    exactly where its last frame does."""
    n = len(data)
    pos = 0
    while pos < n:
        if n - pos < 5:
            raise CodecError(f"zstd: truncated frame header at {pos}")
        magic = _UINT32_LE.unpack_from(data, pos)[0]
        if magic & 0xFFFFFFF0 == ZSTD_SKIPPABLE:
            if n - pos < 8:
                raise CodecError(f"zstd: truncated skippable frame at {pos}")
            pos += 8 + _UINT32_LE.unpack_from(data, pos + 4)[0]
            continue
        if magic != ZSTD_MAGIC:
            raise CodecError(f"zstd: no frame magic at {pos}")
        descriptor = data[pos + 4]
        single_segment = descriptor >> 5 & 1
        header = (1 + (0 if single_segment else 1) + (0, 1, 2, 4)[descriptor & 3]
                  + ((1 if single_segment else 0), 2, 4, 8)[descriptor >> 6])
        pos += 4 + header
        while True:
            if n - pos < 3:
                raise CodecError(f"zstd: truncated frame: block header expected at {pos}")
            block = data[pos] | data[pos + 1] << 8 | data[pos + 2] << 16
            kind = block >> 1 & 3
            if kind == 3:
                raise CodecError(f"zstd: reserved block type at {pos}")
            pos += 3 + (1 if kind == 1 else block >> 3)
            if block & 1:
                break
        pos += 4 if descriptor >> 2 & 1 else 0  # content checksum
    if pos > n:
        raise CodecError(f"zstd: truncated frame: {pos - n} bytes missing")
