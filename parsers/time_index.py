"""`*.timeindex`: 12-byte entries (timestamp int64, relativeOffset int32), the largest timestamp so far
and where it was seen. A zero-filled preallocated tail ends the valid entries and is not a finding."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import NamedTuple

from kforensics.parsers._fixed_entries import base_offset_from_name, iter_entries
from kforensics.parsers.findings import Finding

# [0] timestamp int64  [8] relativeOffset int32
ENTRY_FORMAT = ">qi"
ENTRY_SIZE = 12


class TimeIndexEntry(NamedTuple):
    timestamp: int
    offset: int  # absolute


def iter_time_index(path: str | os.PathLike[str], base_offset: int | None = None) -> Iterator[TimeIndexEntry | Finding]:
    """Valid entries of a time index, with findings for a partial entry or timestamps going backwards."""
    path = os.fspath(path)
    base = base_offset_from_name(path) if base_offset is None else base_offset
    previous: TimeIndexEntry | None = None
    for i, position_in_file, (timestamp, relative) in iter_entries(path, ENTRY_FORMAT, ENTRY_SIZE):
        if isinstance(timestamp, Finding):
            yield timestamp
            return
        if i > 0 and relative == 0:
            return  # the zero-filled preallocated tail starts here
        if i == 0 and relative == 0 and timestamp == 0:
            return  # an empty preallocated time index (no broker writes timestamp 0 as a max timestamp)
        entry = TimeIndexEntry(timestamp, base + relative)
        if previous is not None and (entry.timestamp <= previous.timestamp or entry.offset < previous.offset):
            yield Finding("timeindex_non_monotonic", path, position_in_file,
                          f"time index entry {i} (timestamp {entry.timestamp}, offset {entry.offset}) does not "
                          f"follow entry {i - 1} (timestamp {previous.timestamp}, offset {previous.offset})",
                          {"entry_index": i, "timestamp": entry.timestamp, "offset": entry.offset,
                           "previous_timestamp": previous.timestamp, "previous_offset": previous.offset})
        yield entry
        previous = entry


def last_entry(path: str | os.PathLike[str], base_offset: int | None = None) -> TimeIndexEntry | None:
    """The last valid entry of a time index (None: it has none), read in bounded chunks: the largest timestamp a
    segment reached and its offset, when its `.log` is not at hand (the scan's coverage of an incomplete copy)."""
    last = None
    for item in iter_time_index(path, base_offset):
        if isinstance(item, TimeIndexEntry):
            last = item
    return last
