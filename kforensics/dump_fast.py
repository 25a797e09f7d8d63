"""`kforensics dump` of a segment through the compiled core: batch and record lines formatted in C into large
buffers (parsers/_core.pyx `DumpLines`), the same bytes as `dump_out.TextOut` / `JsonOut` write.

Used when the compiled reader runs and the options need no per-record Python (no --iso-time,
--skip-record-metadata, --offsets or decoder); control batches, legacy messages and findings still go
through the Python renderer, after the buffer is flushed, so that lines keep their order.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kforensics.dump_out import JsonOut, TextOut
from kforensics.parsers.core import load_compiled
from kforensics.parsers.findings import Finding

_dump_lines = load_compiled("kforensics._dump_lines")

FLUSH_BYTES = 4 << 20


def usable(out: Any, opts: Any) -> bool:
    """Whether this dump can take the compiled path (same bytes out, guaranteed by tests/test_differential.py)."""
    if _dump_lines is None or opts.decoder is not None or opts.offsets != (None, None):
        return False
    if isinstance(out, TextOut):
        ok = not out.iso_time and not out.skip_record_metadata
    elif isinstance(out, JsonOut):
        ok = not out.iso_time
    else:
        return False
    stream = out.stream
    encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "")
    return ok and encoding == "utf8" and hasattr(stream, "buffer")


class _Writer:
    def __init__(self, out: Any, lines: Any) -> None:
        self.stream = out.stream
        self.lines = lines

    def flush(self) -> None:
        if len(self.lines):
            self.stream.flush()
            self.stream.buffer.write(self.lines.take())

    def maybe_flush(self) -> None:
        if len(self.lines) >= FLUSH_BYTES:
            self.flush()


def dump_log_fast(path: Path, opts: Any, out: Any, state: Any, selected_fn: Any, report: Any) -> tuple[int, int]:
    """Batch (and record) lines of one segment: (file size, end of the last whole batch)."""
    from kforensics.parsers.record_batch import Record, open_log, record_problem_finding

    writer = _Writer(out, _dump_lines.DumpLines(isinstance(out, JsonOut), opts.print_data_log, str(path)))
    resolved = str(path.resolve())
    last_record_offset = -1
    valid_bytes = 0
    try:
        with open_log(path) as log:
            for item in log.batches(max_bytes=opts.max_bytes):
                if isinstance(item, Finding):
                    writer.flush()
                    report(item, out, state)
                    continue
                batch = item
                valid_bytes = batch.position + batch.size
                selected = selected_fn(batch, opts)
                if selected:
                    writer.lines.batch(batch)
                if opts.deep_iteration:
                    if batch.magic == 2 and not batch.is_control and selected:
                        section = log.records_section(batch)
                        if isinstance(section, Finding):
                            writer.flush()
                            report(section, out, state)
                            continue
                        buf, start, stop = section
                        problem, last_record_offset, gaps = writer.lines.records_v2(
                            buf, start, stop, batch, last_record_offset)
                        if gaps:
                            state.non_consecutive.setdefault(resolved, []).extend(gaps)
                        if problem is not None:
                            writer.flush()
                            report(record_problem_finding(log.path, batch, problem), out, state)
                    else:
                        writer.flush()
                        for rec in log.records(batch):
                            if isinstance(rec, Finding):
                                report(rec, out, state)
                                continue
                            if last_record_offset != -1 and rec.offset != last_record_offset + 1:
                                state.non_consecutive.setdefault(resolved, []).append((last_record_offset, rec.offset))
                            last_record_offset = rec.offset
                            if selected and isinstance(rec, Record):
                                out.record(batch, rec, print_data=opts.print_data_log, decoded=None)
                writer.maybe_flush()
            size = log.size
    finally:
        writer.flush()
    return size, valid_bytes
