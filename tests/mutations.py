"""The one mutation strategy of the robustness and differential tests: damage a broker file as disks and
bugs do (bit flips, truncations, zero fills, lying length fields) and, on segments, where the reader decides
things (a batch's length, the records section's varints, the codec bits, the record count), with the batch CRC
recomputed now and then so that the damage reaches the record decoder."""

from __future__ import annotations

import struct

from crc32c import crc32c
from hypothesis import strategies as st

OPS = ("flip", "truncate", "zero", "length", "varint", "codec", "count")
LENGTHS = (-1, 0, 1, 11, 48, 49, 60, 2**31 - 1, -(2**31))


def fix_crc(data: bytearray, pos: int) -> None:
    """Recompute the CRC of the v2 batch at pos (so that damage inside it reaches the record decoder)."""
    if pos + 61 <= len(data) and data[pos + 16] == 2:
        size = struct.unpack_from(">i", data, pos + 8)[0] + 12
        if 61 <= size and pos + size <= len(data):
            struct.pack_into(">I", data, pos + 17, crc32c(bytes(data[pos + 21:pos + size])))


def batch_starts(data: bytes) -> list[int]:
    """Where batches start, following the length fields from byte 0."""
    starts, pos = [], 0
    while pos + 12 <= len(data):
        starts.append(pos)
        length = struct.unpack_from(">i", data, pos + 8)[0]
        if length <= 0:
            break
        pos += 12 + length
    return starts


def mutate(draw: st.DrawFn, source: bytes) -> bytes:
    """1 to 4 mutations of `source`."""
    data = bytearray(source)
    starts = batch_starts(source) or [0]
    for _ in range(draw(st.integers(1, 4))):
        if not data:
            break
        op = draw(st.sampled_from(OPS))
        batch = draw(st.sampled_from(starts))
        pos = draw(st.integers(0, len(data) - 1))
        if op == "flip":
            data[pos] ^= 1 << draw(st.integers(0, 7))
        elif op == "truncate":
            del data[pos:]
        elif op == "zero":
            end = min(len(data), pos + draw(st.integers(1, 200)))
            data[pos:end] = bytes(end - pos)
        elif op == "length":
            where = draw(st.sampled_from([pos, batch + 8]))
            if where + 4 <= len(data):
                struct.pack_into(">i", data, where, draw(st.sampled_from([*LENGTHS, len(data)])))
        elif op == "varint":
            # a run of continuation bytes (too long, or running past the end) inside the records section
            where = min(len(data), batch + 61 + draw(st.integers(0, 40)))
            data[where:where + draw(st.integers(1, 12))] = b"\xff" * draw(st.integers(1, 12))
        elif op == "codec" and batch + 23 <= len(data):
            data[batch + 22] = (data[batch + 22] & 0xF8) | draw(st.integers(0, 7))
        elif op == "count" and batch + 61 <= len(data):
            struct.pack_into(">i", data, batch + 57, draw(st.sampled_from([-1, 0, 1, 5, 2**31 - 1])))
        if draw(st.booleans()):
            fix_crc(data, batch)
    return bytes(data)
