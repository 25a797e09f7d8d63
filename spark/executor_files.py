"""What every executor function shares: a local copy of the file it reads (any URI), Arrow record batches of
its rows, and its finding rows. Imported by spark/read.py, dump_input.py and remote_storage.py (which read.py
drives: these helpers live apart so that no module imports back the one that imports it)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs

from kforensics.parsers.findings import Finding
from kforensics.parsers.uris import filesystem

FLUSH_ROWS = 8192  # rows per Arrow record batch out of an executor: bounds executor memory


def local_path(uri: str) -> str | None:
    """The path of a plain path or file:// URI; None for a URI of another filesystem."""
    if uri.startswith("file://"):
        return uri[len("file://"):]
    return None if "://" in uri else uri


@contextlib.contextmanager
def local_file(uri: str) -> Iterator[str | None]:
    """A local path for a file (remote files are streamed to a temporary copy of the same name: the parsers read
    base offsets from names); None if absent."""
    path = local_path(uri)
    if path is not None:
        yield path if os.path.isfile(path) else None
        return
    fs, path = filesystem(uri)
    if fs.get_file_info(path).type != pafs.FileType.File:
        yield None
        return
    scratch = tempfile.mkdtemp(prefix="kforensics-")
    tmp = os.path.join(scratch, os.path.basename(path))
    try:
        with open(tmp, "wb") as out, fs.open_input_stream(path) as src:
            shutil.copyfileobj(src, out, 1 << 20)
        yield tmp
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


class Rows:
    """Accumulates dict rows and yields Arrow record batches of a fixed schema."""

    def __init__(self, schema: pa.Schema) -> None:
        self.schema = schema
        self.rows: list[dict[str, Any]] = []

    def add(self, row: dict[str, Any]) -> Iterator[pa.RecordBatch]:
        self.rows.append(row)
        if len(self.rows) >= FLUSH_ROWS:
            yield from self.flush()

    def flush(self) -> Iterator[pa.RecordBatch]:
        if self.rows:
            yield pa.RecordBatch.from_pylist(self.rows, schema=self.schema)
            self.rows = []


def finding_row(task: dict[str, Any], f: Finding, **extra: Any) -> dict[str, Any]:
    """A finding as a row of the executor's table (broker, topic and partition from its task)."""
    details = {k: v for k, v in f.details.items()}
    offset = details.get("base_offset", details.get("offset"))
    return {"row_kind": "finding", "broker": task["broker"], "topic": task["topic"], "partition": task["partition"],
            "kind": f.kind, "severity": f.effective_severity, "file": f.file, "position": f.position,
            "offset": offset if isinstance(offset, int) else None, "message": f.message,
            "details": json.dumps(details, default=str), **extra}


def unreadable(uri: str, exc: OSError, position: int | None = None) -> Finding:
    """An `unreadable_file` finding for an I/O error (permission denied, EIO, a remote read that failed)."""
    where = f" at byte {position}" if position else ""
    return Finding("unreadable_file", uri, position, f"cannot read {uri}{where}: {exc.strerror or exc}",
                   {"errno": exc.errno} if exc.errno is not None else {})


def relocated(f: Finding, uri: str) -> Finding:
    """A finding of a local (maybe temporary) copy, named by the file's URI."""
    return Finding(f.kind, uri, f.position, f.message, f.details, f.severity)
