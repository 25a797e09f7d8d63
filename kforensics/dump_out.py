"""Renderers for `kforensics dump`: kafka-dump-log's text lines, or JSON lines.

Text output follows DumpLogSegments' templates field for field so that an operator can diff our dump
against kafka-dump-log's. JSON field names are a contract (see README, "JSON lines").

`TextOut` and `JsonOut` write every line from Python; `CompiledLines` (kforensics/_dump_lines.pyx) formats
v2 batch and record lines in C, the same bytes, behind the same interface, and hands everything else to the
Python renderer it wraps. `log_sink` picks the one that writes a segment's lines.
"""

from __future__ import annotations

import base64
import functools
import json
import sys
from types import ModuleType
from typing import IO, TYPE_CHECKING, Any, NamedTuple, Protocol

from kforensics.parsers.dump_text import LEGACY_LINE, V2_LINE
from kforensics.parsers.findings import Finding
from kforensics.parsers.record_batch import BATCH_FIELDS, BatchField, RecordBatch
from kforensics.render import json_line, shown
from kforensics.times import iso

if TYPE_CHECKING:
    import mmap

    from kforensics.parsers._pure import Problem
    from kforensics.parsers.checkpoints import EpochEntry, OffsetCheckpointEntry
    from kforensics.parsers.offset_index import IndexEntry
    from kforensics.parsers.producer_snapshot import ProducerStateEntry
    from kforensics.parsers.record_batch import Record
    from kforensics.parsers.time_index import TimeIndexEntry
    from kforensics.parsers.txn_index import AbortedTxn

    #: The bytes a records section lies in: the segment's mapping, or a decompressed payload
    Buffer = bytes | memoryview | mmap.mmap
    #: A records section as LogFile.records_section() gives it: (buffer, start, stop)
    Section = tuple[Buffer, int, int]
    #: record_lines(): (the problem that ended the records or None, last record offset, non-consecutive pairs)
    RecordLines = tuple[Problem | None, int, list[tuple[int, int]]]

#: What a --*-decoder gives a record to print: (key text, payload text) as kafka-dump-log prints them, or with --json
#: the decoded object
Decoded = tuple[str | None, str] | dict[str, Any]

FLUSH_BYTES = 4 << 20  # CompiledLines writes its buffer in blocks of about this size


def json_batch_fields(fields: tuple[BatchField, ...] = BATCH_FIELDS) -> tuple[BatchField, ...]:
    """The fields of dump --json's batch objects, in their order (after `type`): the declaration's, a field with
    `json_after` right after that one."""
    out = [f for f in fields if f.json and not f.json_after]
    for f in fields:
        if f.json and f.json_after:
            out.insert([g.name for g in out].index(f.json_after) + 1, f)
    return tuple(out)


JSON_BATCH_FIELDS = json_batch_fields()
_FIELDS = {f.name: f for f in BATCH_FIELDS}

#: How DumpLines writes a field's value (kforensics/_dump_lines.pyx, the same numbers): a number; true/false; a string
#: (escaped in JSON); a nullable int (JSON null, text Java's OptionalLong)
WRITE_INT, WRITE_BOOL, WRITE_STR, WRITE_NULLABLE = 0, 1, 2, 3


class BatchLayout(NamedTuple):
    """The batch lines DumpLines writes, from the same declarations as TextOut.batch / JsonOut.batch: for a v2 batch
    and for a legacy message, the steps (literal written first, the RecordBatch field's index or -1 for none, how its
    value is written: WRITE_*)."""

    v2: tuple[tuple[bytes, int, int], ...]
    legacy: tuple[tuple[bytes, int, int], ...]
    magic: int  # the index of `magic` in a RecordBatch (which steps a batch takes)
    width: int  # a RecordBatch's number of fields


def _how(f: BatchField) -> int:
    return (WRITE_NULLABLE if f.nullable else WRITE_BOOL if f.kind == "bool" else WRITE_STR if f.kind == "string"
            else WRITE_INT)


def batch_layout(json: bool, file: str, fields: tuple[BatchField, ...] = BATCH_FIELDS,
                 batch_type: type = RecordBatch) -> BatchLayout:
    """The compiled batch lines of `file` (JSON or kafka-dump-log text), by field name."""
    index = {name: i for i, name in enumerate(batch_type._fields)}  # type: ignore[attr-defined]
    by_name = {f.name: f for f in fields}
    about = {"file": json_line(file)}  # the fields that are not the batch's own: the same for every batch here

    def steps(pairs: list[tuple[str, str]], start: str, end: str) -> tuple[tuple[bytes, int, int], ...]:
        out, pending = [], start
        for literal, name in pairs:
            pending += literal
            if by_name[name].source == "header":
                out.append((pending.encode("utf-8"), index[name], _how(by_name[name])))
                pending = ""
            else:
                pending += about[name]
        return (*out, ((pending + end).encode("utf-8"), -1, WRITE_INT))

    if json:  # JsonOut.batch's object, as json_line writes it
        v2 = legacy = steps([(f",{json_line(f.name)}:", f.name) for f in json_batch_fields(fields)],
                            '{"type":"batch"', "}\n")
    else:
        v2, legacy = steps(list(V2_LINE), "", "\n"), steps(list(LEGACY_LINE), "", "\n")
    return BatchLayout(v2, legacy, index["magic"], len(index))


class DumpLines(Protocol):
    """kforensics/_dump_lines.pyx's DumpLines: batch and record lines formatted into a growing buffer."""

    def __len__(self) -> int: ...

    def take(self) -> bytes: ...

    def batch(self, b: RecordBatch) -> None: ...

    def records_v2(self, buf: Buffer, start: int, stop: int, batch: RecordBatch, last_offset: int) -> RecordLines: ...


def _optional_long(value: int | None) -> str:
    return "OptionalLong.empty" if value is None else f"OptionalLong[{value}]"


def data_text(data: bytes | None) -> str | None:
    """Key/value for JSON: UTF-8 text where valid, else "base64:..."."""
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return "base64:" + base64.b64encode(data).decode("ascii")


class Renderer:
    """What `kforensics dump` writes to. Only the parts a segment's lines use are declared here; TextOut and
    JsonOut render every file type."""

    #: Whether the renderer takes structured values (a decoder's dict) or text lines.
    structured = False

    def line(self, text: str) -> None:
        raise NotImplementedError

    def batch(self, b: RecordBatch, file: str) -> None:
        raise NotImplementedError

    def record(self, b: RecordBatch, r: Record, *, print_data: bool, decoded: Decoded | None) -> None:
        raise NotImplementedError

    def finding(self, f: Finding) -> None:
        raise NotImplementedError

    def formats_records(self, batch: RecordBatch) -> bool:
        """Whether record_lines() writes this batch's record lines itself, from its records section."""
        return False

    def record_lines(self, batch: RecordBatch, section: Section, last_offset: int) -> RecordLines:
        """The lines of every record of `batch` (see formats_records), with the reader's bookkeeping."""
        raise TypeError(f"{type(self).__name__} renders records one by one")

    def close(self) -> None:
        """Write out whatever is buffered."""


class TextOut(Renderer):
    """kafka-dump-log's text templates on stdout; findings on stderr (shown, not obeyed: kforensics.render).
    `escape`: the lines' control and hidden characters shown as escapes too (stdout is a terminal)."""

    def __init__(self, stream: IO[str] | None = None, err: IO[str] | None = None, *, iso_time: bool = False,
                 skip_record_metadata: bool = False, escape: bool = False) -> None:
        self.stream = stream or sys.stdout
        self.err = err or sys.stderr
        self.iso_time = iso_time
        self.skip_record_metadata = skip_record_metadata
        self.escape = escape

    def _ts(self, ms: int) -> str:
        return iso(ms) if self.iso_time else str(ms)

    def line(self, text: str) -> None:
        self.stream.write((shown(text) if self.escape else text) + "\n")

    def batch(self, b: RecordBatch, file: str) -> None:
        self.line("".join(literal + self._field(_FIELDS[name], getattr(b, name))
                          for literal, name in (V2_LINE if b.magic >= 2 else LEGACY_LINE)))

    def _field(self, f: BatchField, value: Any) -> str:
        """A batch field as kafka-dump-log prints it: Java's booleans and OptionalLong."""
        if f.nullable:
            return _optional_long(value)
        if f.kind == "bool":
            return _jbool(value)
        return self._ts(value) if f.time else str(value)

    def record(self, b: RecordBatch, r: Record, *, print_data: bool,
               decoded: tuple[str | None, str | None] | None) -> None:
        # DumpLogSegments.dumpBatchRecords (Java, Kafka 4.3+): the metadata, then the key and payload each after a
        # prefix that is "| " when the metadata is skipped and " " otherwise; a line with neither stays empty.
        parts: list[str] = []
        prefix = " "
        if not self.skip_record_metadata:
            text = (
                f"| offset: {r.offset} {b.timestamp_type}: {self._ts(r.timestamp)} "
                f"keySize: {_size(r.key)} valueSize: {_size(r.value)}"
            )
            if b.magic >= 2:
                text += f" sequence: {r.sequence} headerKeys: [{','.join(k for k, _ in r.headers)}]"
            else:  # Kafka 4.0-4.2's Scala tool printed a stray '}' after the crc; 4.3's Java port does not
                text += f" isValid: {_jbool(getattr(r, 'crc_valid', True))} crc: {getattr(r, 'crc', None)}"
            if b.is_control:
                text += _control_suffix(r)
            parts.append(text)
        else:
            prefix = "| "
        if print_data and not b.is_control:
            if decoded is not None:
                key_text, value_text = decoded
            else:
                key_text = _java_string(r.key)
                value_text = _java_string(r.value)
            if key_text is not None:
                parts.append(f"{prefix}key: {key_text}")
                prefix = " "
            if value_text is not None:
                parts.append(f"{prefix}payload: {value_text}")
        self.line("".join(parts))

    def index_entry(self, e: IndexEntry) -> None:
        self.line(f"offset: {e.offset} position: {e.position}")

    def time_index_entry(self, e: TimeIndexEntry) -> None:
        self.line(f"timestamp: {self._ts(e.timestamp)} offset: {e.offset}")

    def aborted_txn(self, t: AbortedTxn) -> None:
        self.line(
            f"version: {t.version} producerId: {t.producer_id} firstOffset: {t.first_offset} "
            f"lastOffset: {t.last_offset} lastStableOffset: {t.last_stable_offset}"
        )

    def producer_state(self, p: ProducerStateEntry) -> None:
        current = None if p.current_txn_first_offset < 0 else p.current_txn_first_offset
        # Kafka 4.3's Java port ends the line after lastTimestamp when the entry has no batch (4.0-4.2 left a space)
        text = (
            f"producerId: {p.producer_id} producerEpoch: {p.producer_epoch} coordinatorEpoch: {p.coordinator_epoch} "
            f"currentTxnFirstOffset: {_optional_long(current)} lastTimestamp: {self._ts(p.timestamp)}"
        )
        if p.last_offset >= 0:
            text += (
                f" firstSequence: {p.last_sequence - p.offset_delta} lastSequence: {p.last_sequence} "
                f"lastOffset: {p.last_offset} offsetDelta: {p.offset_delta} timestamp: {self._ts(p.timestamp)}"
            )
        self.line(text)

    def leader_epoch(self, e: EpochEntry) -> None:
        self.line(f"epoch: {e.epoch} startOffset: {e.start_offset}")

    def checkpoint_entry(self, e: OffsetCheckpointEntry) -> None:
        self.line(f"topic: {e.topic} partition: {e.partition} offset: {e.offset}")

    def properties(self, kind: str, props: dict[str, Any]) -> None:
        for key, value in props.items():
            self.line(f"{key}: {json.dumps(value) if isinstance(value, dict | list) else value}")

    def index_mismatch(self, f: Finding) -> None:
        """kafka-dump-log reports index mismatches in its epilogue only ("Mismatches in :<file>")."""

    def finding(self, f: Finding) -> None:
        where = f"{f.file}" + (f" at byte {f.position}" if f.position is not None else "")
        self.err.write(shown(f"{f.effective_severity.upper()} {f.kind}: {where}: {f.message}") + "\n")


class JsonOut(Renderer):
    """One JSON object per line; field names are the documented contract."""

    structured = True

    def __init__(self, stream: IO[str] | None = None, *, iso_time: bool = False) -> None:
        self.stream = stream or sys.stdout
        self.iso_time = iso_time

    def emit(self, obj: dict[str, Any]) -> None:
        self.stream.write(json_line(obj, separators=(",", ":")) + "\n")

    def line(self, text: str) -> None:  # kafka-dump-log headers ("Dumping ...") have no JSON form
        return None

    def _iso(self, obj: dict[str, Any], *fields: str) -> dict[str, Any]:
        if self.iso_time:
            for name in fields:
                if isinstance(obj.get(name), int):
                    obj[name + "_iso"] = iso(obj[name])
        return obj

    def batch(self, b: RecordBatch, file: str) -> None:
        about = {"file": file}  # the fields that are not the batch's own
        obj = {"type": "batch", **{f.name: about[f.name] if f.source == "segment" else getattr(b, f.name)
                                   for f in JSON_BATCH_FIELDS}}
        self.emit(self._iso(obj, *(f.name for f in JSON_BATCH_FIELDS if f.time)))

    def record(self, b: RecordBatch, r: Record, *, print_data: bool, decoded: Decoded | None) -> None:
        obj: dict[str, Any] = {
            "type": "record", "offset": r.offset, "timestamp": r.timestamp, "sequence": r.sequence,
            "key_size": _size(r.key), "value_size": _size(r.value),
            "header_keys": [k for k, _ in r.headers], "control_type": r.control_type,
            "coordinator_epoch": r.coordinator_epoch,
        }
        if b.is_control and r.control_type not in (None, "ABORT", "COMMIT"):
            obj["control_data"] = control_data(r)
        if print_data:
            obj["key"] = data_text(r.key)
            obj["value"] = data_text(r.value)
            if decoded is not None:
                obj["decoded"] = decoded
        self.emit(self._iso(obj, "timestamp"))

    def index_entry(self, e: IndexEntry) -> None:
        self.emit({"type": "index_entry", "offset": e.offset, "position": e.position})

    def time_index_entry(self, e: TimeIndexEntry) -> None:
        self.emit(self._iso({"type": "time_index_entry", "timestamp": e.timestamp, "offset": e.offset},
                            "timestamp"))

    def aborted_txn(self, t: AbortedTxn) -> None:
        self.emit({"type": "aborted_txn", "version": t.version, "producer_id": t.producer_id,
                   "first_offset": t.first_offset, "last_offset": t.last_offset,
                   "last_stable_offset": t.last_stable_offset})

    def producer_state(self, p: ProducerStateEntry) -> None:
        self.emit(self._iso({
            "type": "producer_state", "producer_id": p.producer_id, "producer_epoch": p.producer_epoch,
            "last_sequence": p.last_sequence, "last_offset": p.last_offset, "offset_delta": p.offset_delta,
            "timestamp": p.timestamp, "coordinator_epoch": p.coordinator_epoch,
            "current_txn_first_offset": p.current_txn_first_offset,
        }, "timestamp"))

    def leader_epoch(self, e: EpochEntry) -> None:
        self.emit({"type": "leader_epoch", "epoch": e.epoch, "start_offset": e.start_offset})

    def checkpoint_entry(self, e: OffsetCheckpointEntry) -> None:
        self.emit({"type": "checkpoint_entry", "topic": e.topic, "partition": e.partition, "offset": e.offset})

    def properties(self, kind: str, props: dict[str, Any]) -> None:
        self.emit({"type": kind, **props})

    def index_mismatch(self, f: Finding) -> None:
        self.finding(f)

    def finding(self, f: Finding) -> None:
        self.emit(f.to_json())


class CompiledLines(Renderer):
    """kforensics/_dump_lines.pyx's DumpLines as a renderer of one segment: batch lines and the record lines of
    non-control v2 batches formatted in C into a buffer, written in blocks; everything else (control records,
    legacy messages, findings, text lines) goes to the Python renderer it wraps, after the buffer, so that
    lines keep their order. Same bytes as that renderer (tests/test_differential.py, fuzz/fuzz_reader.py)."""

    def __init__(self, python: TextOut | JsonOut, lines: DumpLines) -> None:
        self.python = python
        self.structured = python.structured
        self._lines = lines
        self._out = python.stream.buffer  # type: ignore[union-attr]

    def _flush(self) -> None:
        if len(self._lines):
            self.python.stream.flush()
            self._out.write(self._lines.take())

    def _flush_when_full(self) -> None:
        if len(self._lines) >= FLUSH_BYTES:
            self._flush()

    def line(self, text: str) -> None:
        self._flush()
        self.python.line(text)

    def batch(self, b: RecordBatch, file: str) -> None:
        self._lines.batch(b)
        self._flush_when_full()

    def record(self, b: RecordBatch, r: Record, *, print_data: bool, decoded: Decoded | None) -> None:
        self._flush()
        self.python.record(b, r, print_data=print_data, decoded=decoded)

    def finding(self, f: Finding) -> None:
        self._flush()
        self.python.finding(f)

    def formats_records(self, batch: RecordBatch) -> bool:
        return batch.magic == 2 and not batch.is_control

    def record_lines(self, batch: RecordBatch, section: Section, last_offset: int) -> RecordLines:
        result = self._lines.records_v2(*section, batch, last_offset)
        self._flush_when_full()
        return result

    def close(self) -> None:
        self._flush()


@functools.cache
def compiled_dump_lines() -> ModuleType | None:
    """kforensics/_dump_lines.pyx, when built and KFORENSICS_PURE_PYTHON is not set (loaded on first use:
    `--help` stays light)."""
    from kforensics.parsers.core import load_compiled

    return load_compiled("kforensics._dump_lines")


Output = TextOut | JsonOut  # the Python renderers: every file type


def log_sink(out: Output, file: str, *, print_data: bool, python_per_record: bool) -> Renderer:
    """The renderer of one segment's batch and record lines: the compiled lines where they write the same bytes
    as `out` (no --iso-time, --skip-record-metadata or escaping for a terminal, nothing needing Python per record
    such as --offsets or a decoder, a UTF-8 stream with a byte buffer), else `out` itself."""
    module = compiled_dump_lines()
    if module is None or python_per_record or out.iso_time:
        return out
    if isinstance(out, TextOut) and (out.skip_record_metadata or out.escape):
        return out
    encoding = (getattr(out.stream, "encoding", None) or "").lower().replace("-", "")
    if encoding != "utf8" or not hasattr(out.stream, "buffer"):
        return out
    json = isinstance(out, JsonOut)
    return CompiledLines(out, module.DumpLines(json, print_data, batch_layout(json, file)))


def _jbool(value: bool) -> str:
    return "true" if value else "false"


def _size(data: bytes | None) -> int:
    return -1 if data is None else len(data)


def _java_string(data: bytes | None) -> str | None:
    """What Kafka's StringDecoder prints: UTF-8 with replacement characters."""
    return None if data is None else data.decode("utf-8", errors="replace")


def control_data(r: Record) -> dict[str, Any] | None:
    """A KRaft control record's fields (SnapshotHeader, SnapshotFooter, KRaftVersion, KRaftVoters, LeaderChange),
    as Kafka's JsonConverter writes them; None for other records or a value that does not decode."""
    from kforensics.parsers.cluster_metadata import CONTROL_TYPE_IDS as KRAFT_CONTROL
    from kforensics.parsers.cluster_metadata import decode_control_record

    if r.control_type not in KRAFT_CONTROL:
        return None
    try:
        return decode_control_record(r.control_type, r.value).data
    except ValueError:
        return None


def _control_suffix(r: Record) -> str:
    kind = r.control_type
    if kind in ("ABORT", "COMMIT"):
        return f" endTxnMarker: {kind} coordinatorEpoch: {r.coordinator_epoch}"
    names = {"SNAPSHOT_HEADER": "SnapshotHeader", "SNAPSHOT_FOOTER": "SnapshotFooter",
             "KRAFT_VERSION": "KRaftVersion", "KRAFT_VOTERS": "KRaftVoters", "LEADER_CHANGE": "LeaderChange:"}
    decoded = control_data(r) if kind in names else None
    if decoded is not None:
        return f" {names[kind]} {json.dumps(decoded, separators=(',', ':'), ensure_ascii=False)}"
    type_id = CONTROL_TYPE_IDS.get(kind)
    return f" controlType: {kind}" if type_id is None else f" controlType: {kind}({type_id})"


CONTROL_TYPE_IDS = {"ABORT": 0, "COMMIT": 1, "LEADER_CHANGE": 2, "SNAPSHOT_HEADER": 3, "SNAPSHOT_FOOTER": 4,
                    "KRAFT_VERSION": 5, "KRAFT_VOTERS": 6}
