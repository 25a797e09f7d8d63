"""`*.txnindex`: one 34-byte entry per aborted transaction completed in the segment."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import NamedTuple

from kforensics.parsers._fixed_entries import iter_entries
from kforensics.parsers.findings import Finding

# [0] version int16 (0)  [2] producerId int64  [10] firstOffset int64  [18] lastOffset int64
# [26] lastStableOffset int64
ENTRY_FORMAT = ">hqqqq"
ENTRY_SIZE = 34


class AbortedTxn(NamedTuple):
    version: int
    producer_id: int
    first_offset: int
    last_offset: int  # the ABORT marker's offset
    last_stable_offset: int


def iter_txn_index(path: str | os.PathLike[str]) -> Iterator[AbortedTxn | Finding]:
    """Every entry; impossible ones are yielded and followed by a `txnindex_bad_entry` finding."""
    path = os.fspath(path)
    for i, position, fields in iter_entries(path, ENTRY_FORMAT, ENTRY_SIZE):
        if isinstance(fields[0], Finding):
            yield fields[0]
            return
        txn = AbortedTxn(*fields)
        yield txn
        problem = None
        if txn.version != 0:
            problem = f"version {txn.version} (only 0 exists)"
        elif txn.first_offset < 0 or txn.first_offset > txn.last_offset:
            problem = f"first offset {txn.first_offset} after last offset {txn.last_offset}"
        elif txn.last_stable_offset < 0 or txn.last_stable_offset > txn.last_offset + 1:
            problem = f"last stable offset {txn.last_stable_offset} beyond marker offset {txn.last_offset} + 1"
        if problem:
            yield Finding("txnindex_bad_entry", path, position, f"aborted transaction entry {i} has {problem}",
                          {"entry_index": i, **txn._asdict()})
