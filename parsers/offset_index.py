"""`*.index`: the sparse offset index of a segment, 8-byte entries (relativeOffset int32, position int32).

Active-segment indexes are preallocated and zero-filled; an entry whose offset equals the base offset
at index i > 0 ends the valid entries (as the broker and kafka-dump-log read it), and is not a finding.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import NamedTuple

from kforensics.parsers._fixed_entries import base_offset_from_name, iter_entries
from kforensics.parsers.findings import Finding

# [0] relativeOffset int32  [4] position int32
ENTRY_FORMAT = ">ii"
ENTRY_SIZE = 8


class IndexEntry(NamedTuple):
    offset: int  # absolute: base offset + relative offset
    position: int  # byte position of a batch start in the .log


def iter_offset_index(path: str | os.PathLike[str], base_offset: int | None = None) -> Iterator[IndexEntry | Finding]:
    """Valid entries of an offset index, then findings for a partial entry or disorder."""
    path = os.fspath(path)
    base = base_offset_from_name(path) if base_offset is None else base_offset
    previous: IndexEntry | None = None
    first_zero = False
    for i, position_in_file, (relative, position) in iter_entries(path, ENTRY_FORMAT, ENTRY_SIZE):
        if isinstance(relative, Finding):
            yield relative
            return
        if i > 0 and relative == 0:
            return  # the zero-filled preallocated tail starts here
        if i == 0 and relative == 0 and position == 0:
            # (base offset, 0) is a real entry only if the index holds nothing else: a trimmed one-entry index.
            # Followed by more zeros it is an empty preallocated index (kafka-dump-log prints it anyway).
            first_zero = True
            continue
        if first_zero:
            previous = IndexEntry(base, 0)
            yield previous
            first_zero = False
        entry = IndexEntry(base + relative, position)
        if previous is not None and (entry.offset <= previous.offset or entry.position <= previous.position):
            yield Finding("index_non_monotonic", path, position_in_file,
                          f"index entry {i} (offset {entry.offset}, position {entry.position}) does not follow "
                          f"entry {i - 1} (offset {previous.offset}, position {previous.position})",
                          {"entry_index": i, "offset": entry.offset, "position": entry.position,
                           "previous_offset": previous.offset, "previous_position": previous.position})
        yield entry
        previous = entry
    if first_zero and os.path.getsize(path) == ENTRY_SIZE:
        yield IndexEntry(base, 0)


def last_entry(path: str | os.PathLike[str], base_offset: int | None = None) -> IndexEntry | None:
    """The last valid entry of an offset index (None: it has none), read in bounded chunks: what a segment reached
    when its `.log` is not at hand (the scan's coverage of an incomplete copy)."""
    last = None
    for item in iter_offset_index(path, base_offset):
        if isinstance(item, IndexEntry):
            last = item
    return last
