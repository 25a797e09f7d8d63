"""Record rows in bulk: the records of many batches as Arrow columns, for the scan's executors.

`RecordColumns.add(log, batch)` decodes one batch (any magic, any codec) straight into columns and returns
the decoder's findings (file and byte position, as `LogFile.records()` reports them); `take()` hands the
rows out as pyarrow arrays. The compiled implementation fills C buffers (no Python object per record); the
pure-Python one builds the same columns from Python lists (`parsers/core.py` binds one). Columns: offset,
timestamp, producer_id, producer_epoch, key_hash, value_hash (BLAKE2b-64 of the bytes, big-endian signed; null
for a null key or value), key_size, value_size (-1 for null), batch_position.
"""

from __future__ import annotations

import pyarrow as pa

from kforensics.parsers import core
from kforensics.parsers._pure import COLUMNS as _COLUMN_TYPES
from kforensics.parsers._pure import content_hash
from kforensics.parsers.findings import Finding
from kforensics.parsers.record_batch import LogFile, Record, RecordBatch

__all__ = ["COLUMNS", "RecordColumns", "content_hash"]

COLUMNS = {name: getattr(pa, kind)() for name, kind in _COLUMN_TYPES.items()}


class RecordColumns:
    """Columns of record rows, filled batch by batch (see the module docstring)."""

    def __init__(self, *, compiled: bool | None = None, hashes: bool = True) -> None:
        self.hashes = hashes
        self._c = core.implementation(compiled).RecordColumns(hashes)

    def __len__(self) -> int:
        return len(self._c)

    def add(self, log: LogFile, batch: RecordBatch) -> list[Finding]:
        """Decode `batch` of `log` into rows; returns its record findings."""
        if batch.magic == 2:
            return log.v2_section_findings(batch, self._c.add_v2)
        findings = []
        for r in log.records(batch):
            if isinstance(r, Record):
                self._c.add_record(r.offset, r.timestamp, batch.producer_id, batch.producer_epoch, r.key, r.value,
                                   batch.position)
            else:
                findings.append(r)
        return findings

    def take(self) -> dict[str, pa.Array]:
        """The rows so far as pyarrow arrays (name -> array); the columns start empty again."""
        return self._c.take()
