"""Reading files of fixed-size big-endian entries (indexes) in bounded chunks."""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from typing import Any

from kforensics.parsers.findings import Finding

CHUNK_ENTRIES = 8192


def base_offset_from_name(path: str) -> int:
    """The base offset a segment file's name carries (`00000000000000001234.index` -> 1234; else 0)."""
    head = os.path.basename(path).split(".")[0].split("-")[0]
    return int(head) if head.isdigit() else 0


def iter_entries(path: str, fmt: str, size: int) -> Iterator[tuple[int, int, tuple[Any, ...]]]:
    """(entry index, byte position, unpacked fields); a trailing partial entry yields a Finding in field 0."""
    record = struct.Struct(fmt)
    with open(path, "rb") as fh:
        total = os.fstat(fh.fileno()).st_size
        i = 0
        while True:
            chunk = fh.read(size * CHUNK_ENTRIES)
            if not chunk:
                return
            whole = len(chunk) - len(chunk) % size
            for off in range(0, whole, size):
                yield i, i * size, record.unpack_from(chunk, off)
                i += 1
            if whole != len(chunk):
                position = i * size
                finding = Finding("index_partial_entry", path, position,
                                  f"{os.path.basename(path)} is {total} bytes, not a multiple of its {size}-byte "
                                  f"entries: {total - position} bytes at the end are a partial entry",
                                  {"file_size": total, "entry_size": size, "trailing_bytes": total - position})
                yield i, position, (finding,) + (None,) * (len(record.unpack(bytes(size))) - 1)
                return
