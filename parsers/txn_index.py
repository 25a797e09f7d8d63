"""`*.txnindex`: one 34-byte entry per aborted transaction completed in the segment."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import NamedTuple

from kforensics.parsers._fixed_entries import base_offset_from_name, iter_entries
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
    """Every entry; impossible ones are yielded and followed by a `txnindex_bad_entry` finding (one per entry, naming
    each of its problems). Two of them stop a broker's `TransactionIndex.sanityCheck` (Kafka 3.9) at log loading: a
    version above 0 (KafkaException: the log fails to load) and a last offset below the segment's base offset, read
    from the file name (CorruptIndexException: the segment is recovered); a partial trailing entry is never read
    by the broker."""
    path = os.fspath(path)
    base_offset = base_offset_from_name(path)
    for i, position, fields in iter_entries(path, ENTRY_FORMAT, ENTRY_SIZE):
        if isinstance(fields[0], Finding):
            yield fields[0]
            return
        txn = AbortedTxn(*fields)
        yield txn
        problems = []
        if txn.version != 0:
            problems.append(f"version {txn.version} (only 0 exists)")
        if txn.first_offset < 0 or txn.first_offset > txn.last_offset:
            problems.append(f"first offset {txn.first_offset} after last offset {txn.last_offset}")
        if txn.last_stable_offset < 0 or txn.last_stable_offset > txn.last_offset + 1:
            problems.append(f"last stable offset {txn.last_stable_offset} beyond marker offset {txn.last_offset} + 1")
        if txn.last_offset < base_offset:
            problems.append(f"last offset {txn.last_offset} below the segment's base offset {base_offset}")
        if problems:
            yield Finding("txnindex_bad_entry", path, position,
                          f"aborted transaction entry {i} has {'; '.join(problems)}",
                          {"entry_index": i, **txn._asdict(), "segment_base_offset": base_offset})
