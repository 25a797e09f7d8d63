"""CRC-32C (Castagnoli), the checksum of v2 record batches and producer snapshots.

The hardware-accelerated `crc32c` package is used when importable; crcmod, far slower, is the fallback
(docs/benchmarks/cli-and-parsers.md). Legacy messages use plain CRC-32 (`zlib.crc32`).
"""

from __future__ import annotations

import crcmod.predefined

try:
    from crc32c import crc32c as _crc32c_hw
except ImportError:  # pragma: no cover - depends on the environment
    _crc32c_hw = None

_crcmod_crc32c = crcmod.predefined.mkCrcFun("crc-32c")

Buffer = bytes | bytearray | memoryview


def crc32c_crcmod(data: Buffer) -> int:
    """CRC-32C computed by crcmod, whatever else is installed."""
    return _crcmod_crc32c(bytes(data))


def _crc32c_fallback(data: Buffer) -> int:
    return _crcmod_crc32c(bytes(data))


#: CRC-32C of a buffer, by the fastest implementation available (bound directly: it is on the hot path).
crc32c = _crc32c_hw if _crc32c_hw is not None else _crc32c_fallback


IMPLEMENTATION = "crc32c" if _crc32c_hw is not None else "crcmod"
