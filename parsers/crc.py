"""CRC-32C (Castagnoli), the checksum of v2 record batches and producer snapshots.

The hardware-accelerated `crc32c` package (~9 GB/s) is used when importable; crcmod (~0.5 GB/s) is the
fallback. Legacy messages use plain CRC-32 (`zlib.crc32`).
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


def crc32c(data: Buffer) -> int:
    """CRC-32C of `data`, by the fastest implementation available."""
    if _crc32c_hw is not None:
        return _crc32c_hw(data)
    return _crcmod_crc32c(bytes(data))


IMPLEMENTATION = "crc32c" if _crc32c_hw is not None else "crcmod"
