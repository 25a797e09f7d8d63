"""Record rows in bulk: the records of many batches as Arrow columns, for the scan's executors.

`RecordColumns.add(log, batch)` decodes one batch (any magic, any codec) straight into columns and returns
the decoder's findings (file and byte position, as `LogFile.records()` reports them); `take()` hands the
rows out as pyarrow arrays. The compiled core fills C buffers (no Python object per record); without it the
same columns are built from `LogFile.records()`. Columns: offset, timestamp, producer_id, producer_epoch,
key_hash, value_hash (BLAKE2b-64 of the bytes, big-endian signed; null for a null key or value), key_size,
value_size (-1 for null), batch_position.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pyarrow as pa

from kforensics.parsers.findings import Finding
from kforensics.parsers.record_batch import LogFile, Record, RecordBatch

COLUMNS = {"offset": pa.int64(), "timestamp": pa.int64(), "producer_id": pa.int64(), "producer_epoch": pa.int32(),
           "key_hash": pa.int64(), "value_hash": pa.int64(), "key_size": pa.int32(), "value_size": pa.int32(),
           "batch_position": pa.int64()}


def content_hash(data: bytes | None) -> int | None:
    """A record key's or value's content hash: BLAKE2b with an 8-byte digest, as a signed int64."""
    if data is None:
        return None
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big", signed=True)


class RecordColumns:
    """Columns of record rows, filled batch by batch (see the module docstring)."""

    def __init__(self, *, compiled: bool, hashes: bool = True) -> None:
        from kforensics.parsers import record_batch

        core = record_batch._compiled_core if compiled else None
        if compiled and core is None:
            raise RuntimeError("the compiled core of kforensics is not built")
        self.hashes = hashes
        self._c = core.RecordColumns(hashes) if core is not None else None
        self._rows: list[tuple[Any, ...]] = []

    def __len__(self) -> int:
        return len(self._c) if self._c is not None else len(self._rows)

    def add(self, log: LogFile, batch: RecordBatch) -> list[Finding]:
        """Decode `batch` of `log` into rows; returns its record findings."""
        if self._c is not None and batch.magic == 2:
            section = log.records_section(batch)
            if isinstance(section, Finding):
                return [section]
            buf, start, stop = section
            return self._c.add_v2(buf, start, stop, batch, log.path, Finding)
        findings = []
        for r in log.records(batch):
            if isinstance(r, Record):
                self._add(batch, r)
            else:
                findings.append(r)
        return findings

    def _add(self, batch: RecordBatch, r: Record) -> None:
        if self._c is not None:
            self._c.add_record(r.offset, r.timestamp, batch.producer_id, batch.producer_epoch, r.key, r.value,
                               batch.position)
            return
        hash_of = content_hash if self.hashes else (lambda _data: None)
        self._rows.append((r.offset, r.timestamp, batch.producer_id, batch.producer_epoch, hash_of(r.key),
                           hash_of(r.value), -1 if r.key is None else len(r.key),
                           -1 if r.value is None else len(r.value), batch.position))

    def take(self) -> dict[str, pa.Array]:
        """The rows so far as pyarrow arrays (name -> array); the columns start empty again."""
        if self._c is not None:
            return self._c.take()
        columns = list(zip(*self._rows, strict=True)) if self._rows else [()] * len(COLUMNS)
        self._rows = []
        return {name: pa.array(values, kind) for (name, kind), values in zip(COLUMNS.items(), columns, strict=True)}
