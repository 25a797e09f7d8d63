"""kafka-dump-log text (`kafka-dump-log.sh --files ... [--deep-iteration]`, or `kforensics dump`) -> batches.

Support cases often arrive as this text rather than as the files. Each `Dumping <path>` section of a `.log`
file gives one segment; its batch lines (DumpLogSegments' printBatchLevel) give the batch headers, and with
`--deep-iteration` the record lines give a control batch's `endTxnMarker` and `coordinatorEpoch` (and a legacy
compressed wrapper's first offset and count). The topic and partition come from the name of the directory
that holds the dumped file.

Lines are read as `key: value` tokens, so the field order of older Kafka versions and both spellings of the
codec (`none`, `NONE`) parse. The text of every kafka-dump-log since Kafka 2.x reads: Kafka 4.3's Java port of
DumpLogSegments (and 4.4's, which prints a transaction's state by name) and the Scala tool of 4.0-4.2, which
differ in record lines only (a legacy record's `crc: N}` brace, and with `--skip-record-metadata` the line of a
record without a key: `| payload: ` in the port, ` payload: ` before it). What the text cannot say is reported,
never guessed:

- a line that cannot be parsed: `dump_line_unparseable`, with its line number and byte position in the text;
- a control batch without record lines (no `--deep-iteration`): `marker_outcome_unknown`, COMMIT or ABORT
  is not known, and its `control_type` stays null;
- a section of another file (indexes, snapshots, checkpoints) or of a file in no `<topic>-<partition>` dir:
  `dump_section_skipped` (info);
- `Found N invalid bytes at the end of ...`: `dump_invalid_bytes` (a batch cut short, or zeros: the text
  does not say which);
- a batch printed `isvalid: false`: `corrupt_crc` (the computed CRC is not in the text).

Not in the text at all: the base timestamp (only the max timestamp is printed), record contents unless printed.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, make_dataclass
from datetime import datetime
from string import Formatter
from typing import Any, BinaryIO

from kforensics.parsers.findings import Finding
from kforensics.parsers.log_dir import parse_partition_dir_name
from kforensics.parsers.record_batch import BATCH_FIELDS, LEGACY_VALUES, BatchField

#: What a scan of dump text cannot check, as its summary says it.
NOT_IN_TEXT = ("indexes, producer snapshots, .txnindex, checkpoints, leader-epoch-checkpoint and record contents "
               "are not in kafka-dump-log text, so the index, snapshot, txnindex, leader-epoch, checkpoint (high "
               "watermark, log start, cleaner), coordinator, consumer-offset and content checks were skipped for them")
TOKEN = re.compile(r"(\w+): (\S+)")
INTEGER = re.compile(r"-?[0-9]{1,20}")
TIMESTAMP_TYPES = ("CreateTime", "LogAppendTime", "NoTimestampType")
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
#: DumpLogSegments' batch line (Kafka 4.1 `printBatchLevel`; `kforensics dump` writes the same, from these): a v2
#: batch's head or a legacy message's, then the tail both print, each `{field}` a BATCH_FIELDS name written as its kind
#: says (an int as a number, a bool as true/false, a nullable int as Java's OptionalLong). In `{timestamp_type}:
#: {max_timestamp}` the timestamp's label is its type.
V2_HEAD = ("baseOffset: {base_offset} lastOffset: {last_offset} count: {count} baseSequence: {base_sequence} "
           "lastSequence: {last_sequence} producerId: {producer_id} producerEpoch: {producer_epoch} "
           "partitionLeaderEpoch: {partition_leader_epoch} isTransactional: {is_transactional} "
           "isControl: {is_control} deleteHorizonMs: {delete_horizon_ms}")
LEGACY_HEAD = "offset: {last_offset}"
TAIL = (" position: {position} {timestamp_type}: {max_timestamp} size: {size} magic: {magic} compresscodec: {codec} "
        "crc: {crc} isvalid: {crc_valid}")
#: Fields Kafka prints as `null` when it does not know them (DumpLogSegments prints `countOrNull`).
NULL_IN_TEXT = ("count",)
LABEL = ": "  # the literal after a field whose value labels the next one (`CreateTime: <max timestamp>`)
_KEY_BEFORE = re.compile(r"(\w+): $")


def template(text: str) -> tuple[tuple[str, str], ...]:
    """A line template's (literal written before the field, field name) pairs, in line order."""
    return tuple((literal, name) for literal, name, _spec, _conversion in Formatter().parse(text) if name)


def _keys(pairs: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """Field name -> its key in the line (`baseOffset`), LABEL for the field the label field's value names, "" for the
    label field itself (printed bare)."""
    keys = {}
    for literal, name in pairs:
        found = _KEY_BEFORE.search(literal)
        keys[name] = found.group(1) if found else LABEL if literal == LABEL else ""
    return keys


V2_LINE, LEGACY_LINE, TAIL_LINE = template(V2_HEAD + TAIL), template(LEGACY_HEAD + TAIL), template(TAIL)
_HEAD_KEYS = {"v2": _keys(template(V2_HEAD)), "legacy": _keys(template(LEGACY_HEAD))}
_TAIL_KEYS = _keys(TAIL_LINE)
_FIELDS = {f.name: f for f in BATCH_FIELDS}
#: The keys a batch line must hold (a nullable field's may be missing: older Kafka versions do not print it).
V2_KEYS = tuple(k for n, k in (_HEAD_KEYS["v2"] | _TAIL_KEYS).items() if k not in ("", LABEL)
                and not _FIELDS[n].nullable)
LEGACY_KEYS = tuple(k for n, k in (_HEAD_KEYS["legacy"] | _TAIL_KEYS).items() if k not in ("", LABEL)
                    and not _FIELDS[n].nullable)
# DumpLogSegments prints these KRaft control records by their class name with their JSON (4.x: `LeaderChange:`).
KRAFT_CONTROL = {"SnapshotHeader": "SNAPSHOT_HEADER", "SnapshotFooter": "SNAPSHOT_FOOTER",
                 "KRaftVersion": "KRAFT_VERSION", "KRaftVoters": "KRAFT_VOTERS", "LeaderChange:": "LEADER_CHANGE"}
MARKER = re.compile(r" endTxnMarker: (COMMIT|ABORT) coordinatorEpoch: (-?\d+)")
CONTROL_TYPE = re.compile(r" controlType: ([A-Z_]+)(?:\(-?\d+\))?")
RECORD_OFFSET = re.compile(r"^\|\s*offset: (-?\d+) ")
#: A keyless record's line with --skip-record-metadata as kafka-dump-log up to Kafka 4.2 prints it: no `|` before it.
SKIPPED_METADATA = " payload: "
INVALID_BYTES = re.compile(r"^Found (\d+) invalid bytes at the end of (.+)$")
# Lines kafka-dump-log (or `kforensics dump`) writes to stderr, which a pasted dump often holds too: about
# indexes or record offsets, nothing the batches table needs.
DIAGNOSTIC = re.compile(
    r"^(Mismatches in :|\s+Index offset: |Non-consecutive offsets in |\s+-?\d+ is followed by -?\d+$|"
    r"Found timestamp mismatch in :|\s+Index timestamp: |Found out of order timestamp in :|"
    r"The following indexed offsets are not found in the log\.|Indexed offset: |Ignoring unknown file |"
    r"(ERROR|WARNING|INFO) [a-z_]+: )")
HORIZON = re.compile(r"OptionalLong\[(\S+)\]")
LOG_HEADER = re.compile(r"^(Log starting offset: -?\d+|Starting offset: -?\d+)$")
MAX_QUOTED = 200  # characters of an unparseable line quoted in its finding
MAX_LINE = 1 << 20  # bytes of a line read at most (a record line with --print-data-log can be long)
MAX_REPORTED = 1000  # unparseable lines reported one by one per file; the rest in one finding


#: One batch line (v2 batch, or legacy top-level message / wrapper) with what its record lines add: every column of
#: the `batches` table (BATCH_FIELDS; null where the text does not hold it: base_timestamp, a control batch's type
#: without --deep-iteration), where the section names the file and the line number in the text.
DumpBatch = make_dataclass("DumpBatch", [
    ("file", str), ("topic", str), ("partition", int), ("segment_base_offset", int), ("line", int),
    *[(f.name, Any, None) for f in BATCH_FIELDS if f.column and f.source != "segment"],
    ("record_offsets", list[int], field(default_factory=list)),  # the first record offset seen (legacy wrappers)
    ("records_seen", int, 0),
], slots=True)
DumpBatch.__module__ = __name__


@dataclass(slots=True)
class DumpSegment:
    """One `.log` section: what the segments table holds of it. `size` is the valid bytes plus the invalid
    bytes kafka-dump-log reports at the end (it prints nothing else about the file's size)."""

    file: str
    topic: str
    partition: int
    base_offset: int
    size: int
    first_batch_base_offset: int | None
    last_offset: int | None
    batch_count: int
    record_count: int
    valid_bytes: int


def _int(value: str, bits: int = 64) -> int:
    """A decimal integer that fits the table's column (int32 or int64); ValueError otherwise."""
    if not INTEGER.fullmatch(value):
        raise ValueError(f"not an integer: {value[:40]}")
    number = int(value)
    if not -(1 << (bits - 1)) <= number < 1 << (bits - 1):
        raise ValueError(f"{value} does not fit {bits} bits")
    return number


def _int_or_none(value: str, bits: int = 64) -> int | None:
    try:
        return _int(value, bits)
    except ValueError:
        return None


def _bool(value: str) -> bool:
    if value not in ("true", "false"):
        raise ValueError(f"not a boolean: {value}")
    return value == "true"


def _timestamp(value: str) -> int:
    """Epoch milliseconds, or an ISO 8601 time (`kforensics dump --iso-time`)."""
    if INTEGER.fullmatch(value):
        return _int(value)
    return _int(str(int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000)))


def _tokens(text: str) -> dict[str, str] | None:
    """`key: value` tokens of a whole line, or None when anything else is on it."""
    pairs = TOKEN.findall(text)
    if " ".join(f"{k}: {v}" for k, v in pairs) != text.strip():
        return None
    out: dict[str, str] = {}
    for key, value in pairs:
        if key in out:
            return None
        out[key] = value
    return out


def _segment_of(path: str) -> tuple[str, int, int] | None:
    """(topic, partition, base offset) of a dumped `<topic>-<partition>/<offset>.log` path."""
    parts = re.split(r"[\\/]+", path.strip())
    if len(parts) < 2 or not re.fullmatch(r"\d+\.log", parts[-1]):
        return None
    parsed = parse_partition_dir_name(parts[-2])
    if parsed is None or parsed[2] != "live" or parsed[1] >= 1 << 31 or int(parts[-1][:-4]) >= 1 << 63:
        return None
    return parsed[0], parsed[1], int(parts[-1][:-4])


class _Section:
    def __init__(self, file: str, topic: str, partition: int, base_offset: int) -> None:
        self.file, self.topic, self.partition, self.base_offset = file, topic, partition, base_offset
        self.pending: DumpBatch | None = None
        self.batches = self.records = self.valid_bytes = 0
        self.first: int | None = None
        self.last: int | None = None
        self.invalid_bytes = 0


def _horizon(token: str | None) -> int | None:
    """`OptionalLong[<ms>]` -> ms; `OptionalLong.empty`, or absent (an older Kafka) -> None."""
    found = HORIZON.fullmatch(token or "")
    return _int_or_none(found.group(1)) if found else None


def _parser(f: BatchField) -> Callable[[str | None], Any]:
    """How a field's token is read, as its kind says (ValueError when malformed)."""
    if f.nullable:
        return _horizon
    if f.kind == "bool":
        parse: Callable[[str], Any] = _bool
    elif f.kind == "string":
        parse = str.lower if f.name == "codec" else str  # `NONE` in older Kafka versions
    elif f.time:
        parse = _timestamp
    else:
        parse = functools.partial(_int, bits=32 if f.kind == "int32" else 64)
    if f.name in NULL_IN_TEXT:
        return lambda token: None if token == "null" else parse(token)  # type: ignore[arg-type]
    return parse  # type: ignore[return-value]


def _readers(keys: dict[str, str]) -> tuple[tuple[str, str, Callable[[str | None], Any], bool], ...]:
    """(field, its key, its parser, whether it may be missing) for the fields of a line's part, in BATCH_FIELDS order
    (the order their errors are reported in)."""
    return tuple((f.name, keys[f.name], _parser(f), f.nullable) for f in BATCH_FIELDS if keys.get(f.name))


_TAIL_READERS = _readers(_TAIL_KEYS)
_HEAD_READERS = {kind: _readers(keys) for kind, keys in _HEAD_KEYS.items()}


def _values(readers: tuple[tuple[str, str, Callable[[str | None], Any], bool], ...], tokens: dict[str, str],
            stamp: str) -> dict[str, Any]:
    """The values of a line's part (KeyError when a key is missing, but a nullable field's)."""
    out = {}
    for name, key, parse, optional in readers:
        key = stamp if key == LABEL else key
        out[name] = parse(tokens.get(key) if optional else tokens[key])
    return out


def _batch(tokens: dict[str, str], section: _Section, line: int) -> DumpBatch:
    """A batch from a batch line's tokens (ValueError when a field is missing or malformed)."""
    stamp = [k for k in TIMESTAMP_TYPES if k in tokens]
    if len(stamp) != 1:
        raise ValueError("no timestamp type")
    if tokens["compresscodec"].lower() not in CODECS:
        raise ValueError(f"unknown codec {tokens['compresscodec']}")
    values: dict[str, Any] = {"timestamp_type": stamp[0], **_values(_TAIL_READERS, tokens, stamp[0])}
    if "baseOffset" in tokens:
        if any(k not in tokens for k in V2_KEYS):
            raise ValueError("a v2 batch line without all of its fields")
        values |= _values(_HEAD_READERS["v2"], tokens, stamp[0])
    else:
        if any(k not in tokens for k in LEGACY_KEYS):
            raise ValueError("a batch line without all of its fields")
        values |= _values(_HEAD_READERS["legacy"], tokens, stamp[0])
        # A legacy message is one record; a compressed wrapper's first offset and count come from its record lines.
        values |= {**LEGACY_VALUES, "base_offset": values["last_offset"],
                   "count": 1 if values["codec"] == "none" else None}
    return DumpBatch(file=section.file, topic=section.topic, partition=section.partition,
                     segment_base_offset=section.base_offset, line=line, **values)


def iter_dump_text(stream: BinaryIO, name: str) -> Iterator[DumpBatch | DumpSegment | Finding]:
    """Batches, one segment per `.log` section (after its batches) and findings, from dump text read as bytes
    (positions in findings are byte offsets in `name`). Memory stays bounded: a line is read MAX_LINE bytes at
    most, and after MAX_REPORTED unparseable lines (a binary file given by mistake) the rest are counted in one
    last finding."""
    first: Finding | None = None  # the first and last unparseable lines not reported one by one
    last: Finding | None = None
    reported = 0
    for item in _iter_dump_text(stream, name):
        if isinstance(item, Finding) and item.kind == "dump_line_unparseable":
            reported += 1
            if reported > MAX_REPORTED:
                first, last = first or item, item
                continue
        yield item
    if first is not None and last is not None:
        n = reported - MAX_REPORTED
        yield Finding("dump_line_unparseable", name, first.position,
                      f"{n} more lines of {name} could not be read as kafka-dump-log output (lines "
                      f"{first.details['line']} to {last.details['line']}; only the first {MAX_REPORTED} are "
                      f"reported one by one): is it kafka-dump-log text?",
                      {"line": first.details["line"], "last_line": last.details["line"], "lines": n,
                       "reason": "too many unparseable lines to list"})


def _lines(stream: BinaryIO) -> Iterator[tuple[bytes, int]]:
    """(line, its length in bytes); a line longer than MAX_LINE is cut there and the rest of it skipped."""
    while raw := stream.readline(MAX_LINE):
        length = len(raw)
        if length == MAX_LINE and not raw.endswith(b"\n"):
            while more := stream.readline(MAX_LINE):
                length += len(more)
                if more.endswith(b"\n"):
                    break
        yield raw, length


def _iter_dump_text(stream: BinaryIO, name: str) -> Iterator[DumpBatch | DumpSegment | Finding]:
    section: _Section | None = None
    skipping: str | None = None  # the path of a section whose lines are skipped
    at = end = 0  # byte positions of this line's start and of the next line's
    number = 0

    def unparseable(text: str, reason: str) -> Finding:
        return Finding("dump_line_unparseable", name, at,
                       f"line {number} of {name} could not be read as kafka-dump-log output ({reason}): "
                       f"{text[:MAX_QUOTED]!r}", {"line": number, "text": text[:MAX_QUOTED], "reason": reason})

    def finish() -> Iterator[DumpBatch | DumpSegment | Finding]:
        nonlocal section
        if section is None:
            return
        yield from _flush(section, name)
        # a segment holds at most 2^31 - 1 bytes (FileRecords sizes are Java ints): a text claiming more is clamped
        size = min(section.valid_bytes + section.invalid_bytes, (1 << 31) - 1)
        yield DumpSegment(section.file, section.topic, section.partition, section.base_offset, size, section.first,
                          section.last, section.batches, section.records, section.valid_bytes)
        section = None

    for raw, length in _lines(stream):
        number += 1
        at, end = end, end + length
        pending = section.pending if section is not None else None
        if raw[:1] == b"|" and pending is not None and not pending.is_control and pending.magic >= 2:
            pending.records_seen += 1  # a data record of a v2 batch: nothing in it for the tables (the hot path)
            continue
        text = raw.decode("utf-8", "replace").rstrip("\r\n")
        if length > len(raw):
            yield unparseable(text, f"a line of {length} bytes, longer than any kafka-dump-log line")
            continue
        if text.startswith("Dumping "):
            yield from finish()
            path = text[len("Dumping "):]
            where = _segment_of(path)
            if where is None:
                skipping = path
                reason = ("not a segment (.log) file: only segments are read from dump text"
                          if not path.strip().endswith(".log")
                          else "its directory is not a live <topic>-<partition> directory")
                yield Finding("dump_section_skipped", name, at, f"line {number}: the section of {path} is "
                              f"skipped: {reason}", {"line": number, "dumped_file": path, "reason": reason})
            else:
                skipping = None
                section = _Section(path, *where)
            continue
        if not text.strip() or DIAGNOSTIC.match(text):
            continue
        if skipping is not None:
            continue
        if section is None:
            yield unparseable(text, "binary data before any `Dumping <path>` line: a broker file rather than "
                                    "kafka-dump-log text? Pass its log dir instead" if "\x00" in text
                              else "before any `Dumping <path>` line")
            continue
        if LOG_HEADER.match(text):
            continue
        if text.startswith("|") or text.startswith(SKIPPED_METADATA):
            yield from _record_line(section, text, number, unparseable)
            continue
        if (m := INVALID_BYTES.match(text)) and _int_or_none(m.group(1)) is not None:
            yield from _flush(section, name)
            section.invalid_bytes = int(m.group(1))
            yield Finding("dump_invalid_bytes", section.file, section.valid_bytes,
                          f"kafka-dump-log found {m.group(1)} invalid bytes at the end of {section.file} after "
                          f"byte {section.valid_bytes} (a batch cut short, or zeros: the text does not say which)",
                          {"bytes": int(m.group(1)), "line": number, "topic": section.topic,
                           "partition": section.partition})
            continue
        tokens = _tokens(text)
        if tokens is None or not ("baseOffset" in tokens or "offset" in tokens):
            yield unparseable(text, "not a batch, record or known kafka-dump-log line")
            continue
        try:
            batch = _batch(tokens, section, number)
        except (KeyError, ValueError) as exc:
            yield unparseable(text, str(exc))
            continue
        yield from _flush(section, name)
        section.pending = batch
    yield from finish()


def _record_line(section: _Section, text: str, number: int, unparseable) -> Iterator[Finding]:
    batch = section.pending
    if batch is None:
        yield unparseable(text, "a record line before any batch line")
        return
    batch.records_seen += 1
    m = RECORD_OFFSET.match(text)
    if m is not None and batch.magic < 2:
        offset = _int_or_none(m.group(1))
        if not batch.record_offsets and offset is not None:
            batch.record_offsets.append(offset)
    if not batch.is_control:
        return
    if marker := MARKER.search(text):
        batch.control_type = marker.group(1)
        batch.coordinator_epoch = _int_or_none(marker.group(2), 32)
    elif control := CONTROL_TYPE.search(text):
        batch.control_type = control.group(1)
    else:
        for label, kind in KRAFT_CONTROL.items():
            if f" {label} " in text:
                batch.control_type = kind


def _flush(section: _Section, name: str) -> Iterator[DumpBatch | Finding]:
    """The pending batch, completed by its record lines, and what could not be known of it."""
    batch, section.pending = section.pending, None
    if batch is None:
        return
    if batch.magic < 2 and batch.codec != "none" and batch.records_seen:
        batch.base_offset = batch.record_offsets[0] if batch.record_offsets else batch.base_offset
        batch.count = batch.records_seen
    if batch.is_control and batch.control_type is None:
        why = ("its record lines were not dumped (no --deep-iteration)" if not batch.records_seen
               else "its record line names no control type")
        yield Finding("marker_outcome_unknown", batch.file, batch.position,
                      f"the control batch at offset {batch.base_offset} of {batch.topic}-{batch.partition} (producer "
                      f"{batch.producer_id}) is a COMMIT or an ABORT, but {why}: its outcome is unknown",
                      {"base_offset": batch.base_offset, "line": batch.line, "dump": name, "topic": batch.topic,
                       "partition": batch.partition})
    if not batch.crc_valid:
        yield Finding("corrupt_crc", batch.file, batch.position,
                      f"kafka-dump-log printed isvalid: false for the batch at offset {batch.base_offset}",
                      {"stored_crc": batch.crc, "computed_crc": None, "base_offset": batch.base_offset,
                       "topic": batch.topic, "partition": batch.partition})
    section.batches += 1
    section.records += batch.count or 0
    section.valid_bytes = batch.position + batch.size
    section.first = batch.base_offset if section.first is None else section.first
    section.last = batch.last_offset
    yield batch
