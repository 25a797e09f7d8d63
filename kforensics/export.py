"""`kforensics export`: the records of a partition (an offset or time range of it) out of a broker disk, as data.

No Spark and no click here: one partition is read by `PartitionReader` (two passes over its segments: batch
headers of every segment for the transaction markers, then the records of the batches in the range), rows are
written by a `Writer` per format in bounded batches. The Spark path (spark/export.py) runs the same reader, one
task per partition dir.

Isolation follows the Java consumer (Kafka 3.9, `FetchCollector`/`CompletedFetch`): `read_committed` never returns
records at or after the last stable offset (the first offset of the earliest transaction without a marker) and
skips the batches of a producer from the first offset of a transaction the log aborts up to its ABORT marker; the
aborted transactions come from the markers of every segment of the partition. Control batches are never
returned. The high watermark is not applied (a disk's replication checkpoint lags, and lost offsets above it are
often what is being exported). Batches whose CRC does not hold are skipped and reported, as a consumer with
`check.crcs` would refuse them.
"""

from __future__ import annotations

import base64
import bisect
import json
import os
import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from kforensics import __version__
from kforensics.times import now_iso

FORMATS = ("jsonl", "parquet", "kcat", "console-producer")
ISOLATIONS = ("read_uncommitted", "read_committed")
ROW_GROUP_ROWS = 64 * 1024  # rows per Parquet row group (and per Arrow batch of the Spark path) at most
ROW_GROUP_BYTES = 64 << 20  # ... and key, value and header bytes per row group at most (records of 1 MB: 64 a group)
#: kcat -P delimiters: ASCII unit separator between key and value, record separator between records.
KCAT_KEY_DELIMITER, KCAT_RECORD_DELIMITER = b"\x1f", b"\x1e"
#: kafka-console-producer's line format (its LineMessageReader; null.marker needs Kafka 3.2+, KIP-810): headers,
#: key and value of a record on one line, separated by ASCII control characters, with a marker for null.
CONSOLE_PRODUCER_PROPERTIES = {
    "parse.headers": "true", "parse.key": "true",
    "headers.delimiter": "\x1d",  # headers | key
    "headers.separator": "\x1e",  # between headers (a regex in Kafka: a control character is itself)
    "headers.key.separator": "\x1c",  # a header's key | its value
    "key.separator": "\x1f",  # key | value
    "null.marker": "\x1a",  # a null key, value or header value; also "no headers"
}
#: What no field of a console-producer line may hold: the separators, the null marker, and line ends (Java's
#: readLine ends a line at \n, \r or \r\n).
CONSOLE_PRODUCER_RESERVED = frozenset(
    "".join(v for k, v in CONSOLE_PRODUCER_PROPERTIES.items() if not k.startswith("parse.")) + "\n\r")
#: The sidecar that marks a file (or, `_kforensics-export.json` inside it, a folder) as an export of ours.
SIDECAR_SUFFIX = ".kforensics-export.json"
FOLDER_MARKER = "_kforensics-export.json"

SCHEMA = pa.schema([
    ("broker", pa.string()), ("topic", pa.string()), ("partition", pa.int32()), ("offset", pa.int64()),
    ("timestamp", pa.int64()), ("timestamp_type", pa.string()), ("key", pa.binary()), ("value", pa.binary()),
    ("headers", pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))),
    ("producer_id", pa.int64()), ("producer_epoch", pa.int32()), ("sequence", pa.int32()),
    ("leader_epoch", pa.int32()), ("transaction", pa.string()), ("file", pa.string()), ("position", pa.int64()),
])
COLUMNS = SCHEMA.names


class ExportError(Exception):
    """The export cannot be done as asked (a usage error: exit code 2); the message says why."""


@dataclass(frozen=True)
class Selection:
    """Which records: an inclusive offset range and an inclusive timestamp range (ms), either side open."""

    from_offset: int | None = None
    to_offset: int | None = None
    from_time: int | None = None
    to_time: int | None = None
    isolation: str = "read_uncommitted"

    def wants_offsets(self, first: int, last: int) -> bool:
        return (self.from_offset is None or last >= self.from_offset) and (
            self.to_offset is None or first <= self.to_offset)

    def wants(self, offset: int, timestamp: int) -> bool:
        return ((self.from_offset is None or offset >= self.from_offset)
                and (self.to_offset is None or offset <= self.to_offset)
                and (self.from_time is None or timestamp >= self.from_time)
                and (self.to_time is None or timestamp <= self.to_time))


@dataclass
class Skipped:
    """A batch the export left out, and why (reported to the operator)."""

    file: str
    position: int
    reason: str


@dataclass
class Transactions:
    """A partition's transactions from its markers: aborted ranges and open ones, per producer id."""

    aborted: dict[int, list[tuple[int, int]]] = field(default_factory=dict)  # pid -> [(first, marker)] sorted
    open_first: dict[int, int] = field(default_factory=dict)  # pid -> first offset of its unfinished transaction

    @property
    def last_stable_offset(self) -> int | None:
        return min(self.open_first.values()) if self.open_first else None

    def outcome(self, producer_id: int, offset: int) -> str:
        """COMMIT, ABORT or OPEN for a transactional batch of `producer_id` at `offset`."""
        ranges = self.aborted.get(producer_id, [])
        i = bisect.bisect_right(ranges, (offset, float("inf"))) - 1
        if i >= 0 and ranges[i][0] <= offset < ranges[i][1]:
            return "ABORT"
        first = self.open_first.get(producer_id)
        return "OPEN" if first is not None and offset >= first else "COMMIT"


class PartitionReader:
    """The records of one `<topic>-<partition>` dir (local paths of its segments, by base offset)."""

    def __init__(self, broker: str, topic: str, partition: int, segments: list[str]) -> None:
        self.broker, self.topic, self.partition = broker, topic, partition
        self.segments = sorted(segments, key=lambda p: os.path.basename(p))
        self.skipped: list[Skipped] = []

    def transactions(self) -> Transactions:
        """Pass 1: every segment's batch headers, for the COMMIT/ABORT markers."""
        from kforensics.parsers.record_batch import RecordBatch, open_log

        txns = Transactions()
        for path in self.segments:
            with open_log(path) as log:
                for b in log.batches(verify_crc=False):
                    if not isinstance(b, RecordBatch) or b.magic != 2 or not b.is_transactional:
                        continue
                    if not b.is_control:
                        txns.open_first.setdefault(b.producer_id, b.base_offset)
                        continue
                    marker = log.control_record(b)
                    first = txns.open_first.pop(b.producer_id, None)
                    if marker is not None and marker.control_type == "ABORT" and first is not None:
                        txns.aborted.setdefault(b.producer_id, []).append((first, b.base_offset))
        for ranges in txns.aborted.values():
            ranges.sort()
        return txns

    def rows(self, selection: Selection, progress: Callable[[int], None] | None = None) -> Iterator[dict[str, Any]]:
        """Pass 2: one row per record of the selection (SCHEMA's columns), in offset order."""
        from kforensics.parsers.findings import Finding
        from kforensics.parsers.record_batch import RecordBatch, open_log

        txns = self.transactions()
        committed = selection.isolation == "read_committed"
        lso = txns.last_stable_offset
        bases = [int(os.path.basename(p)[:20]) for p in self.segments]
        for i, path in enumerate(self.segments):
            next_base = bases[i + 1] if i + 1 < len(bases) else None
            if (selection.from_offset is not None and next_base is not None and next_base <= selection.from_offset) \
                    or (selection.to_offset is not None and bases[i] > selection.to_offset):
                if progress:
                    progress(os.path.getsize(path))
                continue
            done = 0
            with open_log(path) as log:
                for b in log.batches():
                    if not isinstance(b, RecordBatch):
                        continue
                    if progress:
                        progress(b.position + b.size - done)
                        done = b.position + b.size
                    if b.is_control or not selection.wants_offsets(b.base_offset, b.last_offset):
                        continue
                    if selection.from_time is not None and b.max_timestamp < selection.from_time:
                        continue
                    if not b.crc_valid:
                        self.skipped.append(Skipped(path, b.position, "corrupt_crc: the batch's CRC does not hold"))
                        continue
                    outcome = txns.outcome(b.producer_id, b.base_offset) if b.is_transactional else None
                    if committed and (outcome in ("ABORT", "OPEN") or (lso is not None and b.base_offset >= lso)):
                        continue
                    for r in log.records(b):
                        if isinstance(r, Finding):
                            self.skipped.append(Skipped(path, b.position, f"{r.kind}: {r.message}"))
                            break
                        if not selection.wants(r.offset, r.timestamp):
                            continue
                        yield {"broker": self.broker, "topic": self.topic, "partition": self.partition,
                               "offset": r.offset, "timestamp": r.timestamp, "timestamp_type": b.timestamp_type,
                               "key": r.key, "value": r.value,
                               "headers": [{"key": k, "value": v} for k, v in r.headers],
                               "producer_id": b.producer_id, "producer_epoch": b.producer_epoch,
                               "sequence": r.sequence, "leader_epoch": b.partition_leader_epoch,
                               "transaction": outcome, "file": path, "position": b.position}
            if progress:
                progress(os.path.getsize(path) - done)


# --- formats -----------------------------------------------------------------------------------

def row_bytes(row: dict[str, Any]) -> int:
    """The bytes of a row's key, value and headers: what a buffer of rows holds beyond its fixed columns."""
    return (len(row["key"] or b"") + len(row["value"] or b"")
            + sum(len(h["key"] or "") + len(h["value"] or b"") for h in row["headers"] or ()))


class RowBuffer:
    """Rows held until ROW_GROUP_ROWS of them or ROW_GROUP_BYTES of their keys, values and headers: an export's
    memory stays bounded whatever the records' sizes."""

    def __init__(self, max_rows: int | None = None, max_bytes: int | None = None) -> None:
        self.max_rows = ROW_GROUP_ROWS if max_rows is None else max_rows
        self.max_bytes = ROW_GROUP_BYTES if max_bytes is None else max_bytes
        self.rows: list[dict[str, Any]] = []
        self.bytes = 0

    def add(self, row: dict[str, Any]) -> bool:
        """Holds `row`; True when the buffer is full (take() it)."""
        self.rows.append(row)
        self.bytes += row_bytes(row)
        return len(self.rows) >= self.max_rows or self.bytes >= self.max_bytes

    def take(self) -> list[dict[str, Any]]:
        rows, self.rows, self.bytes = self.rows, [], 0
        return rows


def text_or_base64(data: bytes | None) -> tuple[str | None, str | None]:
    """(text, encoding): UTF-8 text where valid (as `dump --json` does), else base64; (None, None) for null."""
    if data is None:
        return None, None
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        return base64.b64encode(data).decode("ascii"), "base64"


def jsonl_record(row: dict[str, Any]) -> dict[str, Any]:
    """One JSON line: SCHEMA's fields, `key`/`value`/header values as text with `key_encoding`,
    `value_encoding` and each header's `encoding` (utf-8 or base64; null for a null)."""
    out: dict[str, Any] = {}
    for name, value in row.items():
        if name in ("key", "value"):
            out[name], out[f"{name}_encoding"] = text_or_base64(value)
        elif name == "headers":
            out[name] = [dict(zip(("key", "value", "encoding"), (h["key"], *text_or_base64(h["value"])), strict=True))
                         for h in value]
        else:
            out[name] = value
    return out


def decode_jsonl_bytes(text: str | None, encoding: str | None) -> bytes | None:
    """The bytes of a jsonl field (the inverse of text_or_base64)."""
    if text is None:
        return None
    return base64.b64decode(text) if encoding == "base64" else text.encode("utf-8")


def kcat_command(topic: str, partition: int, path: str) -> str:
    """The command that re-produces a `--format kcat` file (kcat >= 1.4: -K/-D take \\xNN escapes)."""
    return (f"kcat -P -b BROKER:9092 -t {topic} -p {partition} -K '\\x1f' -D '\\x1e' -Z -l {path}")


def kcat_frame(key: bytes | None, value: bytes | None, _headers: list[dict[str, Any]]) -> tuple[bytes | None, str]:
    """The bytes `kcat -P -K '\\x1f' -D '\\x1e' -Z` reads back as this record's key and value, or None and why
    not."""
    if (key is not None and (KCAT_KEY_DELIMITER in key or KCAT_RECORD_DELIMITER in key)) or (
            value is not None and KCAT_RECORD_DELIMITER in value):
        return None, "its key or value holds a kcat delimiter (\\x1f/\\x1e)"
    return (key or b"") + KCAT_KEY_DELIMITER + (value or b"") + KCAT_RECORD_DELIMITER, ""


def console_producer_command(topic: str, path: str) -> str:
    """The command that re-produces a `--format console-producer` file (bash: $'\\xNN' quotes a control
    character)."""
    props = " ".join(f"--property {name}={value if value == 'true' else _bash_quoted(value)}"
                     for name, value in CONSOLE_PRODUCER_PROPERTIES.items())
    return f"kafka-console-producer.sh --bootstrap-server BROKER:9092 --topic {topic} {props} < {path}"


def _bash_quoted(text: str) -> str:
    """`text` as bash's $'...' with every character as \\xNN."""
    return "$'" + "".join(f"\\x{ord(c):02x}" for c in text) + "'"


def console_producer_line(key: bytes | None, value: bytes | None,
                          headers: list[dict[str, Any]]) -> tuple[bytes | None, str]:
    """The line (with its newline) kafka-console-producer reads back as this record, or None and why not."""
    null = CONSOLE_PRODUCER_PROPERTIES["null.marker"]

    def field(what: str, data: bytes | str | None) -> str:
        if data is None:
            return null
        try:
            text = data if isinstance(data, str) else data.decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError(f"its {what} is not UTF-8 text") from None
        if not CONSOLE_PRODUCER_RESERVED.isdisjoint(text):
            raise ValueError(f"its {what} holds a line end or a separator (\\x1a, \\x1c-\\x1f)")
        return text

    try:
        if headers:
            header_field = CONSOLE_PRODUCER_PROPERTIES["headers.separator"].join(
                field("header key", h["key"]) + CONSOLE_PRODUCER_PROPERTIES["headers.key.separator"]
                + field("header value", h["value"]) for h in headers)
        else:
            header_field = null
        line = (header_field + CONSOLE_PRODUCER_PROPERTIES["headers.delimiter"] + field("key", key)
                + CONSOLE_PRODUCER_PROPERTIES["key.separator"] + field("value", value) + "\n")
    except ValueError as exc:
        return None, str(exc)
    return line.encode("utf-8"), ""


class Writer:
    """Writes rows to a temporary file next to PATH; `commit()` renames it to PATH (and writes the sidecar)."""

    def __init__(self, path: str, fmt: str, meta: dict[str, Any]) -> None:
        self.path, self.fmt, self.meta = path, fmt, meta
        self.tmp = os.path.join(os.path.dirname(os.path.abspath(path)) or ".",
                                f".{os.path.basename(path)}.kforensics-tmp-{os.getpid()}")
        self.rows = 0
        self.unframeable: list[tuple[int, str]] = []  # kcat, console-producer: (offset, why) not framed
        self.headers_dropped = 0  # kcat: records whose headers kcat -P cannot carry
        self.empty_to_null = 0  # kcat: records with an empty (not null) key or value, produced as null by -Z
        self._buffer = RowBuffer()
        self._parquet: Any = None
        self._file = open(self.tmp, "wb")  # noqa: SIM115  (closed by commit/abort)

    def write(self, row: dict[str, Any]) -> None:
        self.rows += 1
        if self.fmt == "jsonl":
            self._file.write(json.dumps(jsonl_record(row), ensure_ascii=False).encode("utf-8") + b"\n")
        elif self.fmt in ("kcat", "console-producer"):
            frame = kcat_frame if self.fmt == "kcat" else console_producer_line
            framed, why = frame(row["key"], row["value"], row["headers"])
            if framed is None:
                self.unframeable.append((row["offset"], why))
                self.rows -= 1
                return
            if self.fmt == "kcat":
                self.headers_dropped += bool(row["headers"])
                self.empty_to_null += row["key"] == b"" or row["value"] == b""
            self._file.write(framed)
        elif self._buffer.add(row):
            self._flush()

    def _flush(self) -> None:
        import pyarrow.parquet as pq

        if self._parquet is None:
            self._parquet = pq.ParquetWriter(self._file, SCHEMA.with_metadata({"kforensics": json.dumps(self.meta)}))
        self._parquet.write_table(pa.Table.from_pylist(self._buffer.take(), schema=SCHEMA),
                                  row_group_size=ROW_GROUP_ROWS)

    def commit(self) -> None:
        if self.fmt == "parquet":
            if self._buffer.rows or self._parquet is None:
                self._flush()
            self._parquet.close()
        self._file.close()
        os.replace(self.tmp, self.path)
        write_sidecar(self.path, {**self.meta, "rows": self.rows, "size": os.path.getsize(self.path)})

    def abort(self) -> None:
        if self._parquet is not None:
            try:
                self._parquet.close()
            except Exception:  # noqa: BLE001  (the file is deleted anyway)
                pass
        self._file.close()
        if os.path.exists(self.tmp):
            os.unlink(self.tmp)


def write_sidecar(path: str, meta: dict[str, Any]) -> None:
    side = path + SIDECAR_SUFFIX
    tmp = side + f".tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump({"tool": "kforensics", "version": __version__, "written_at": now_iso(),
                   "host": socket.gethostname(), **meta}, f)
    os.replace(tmp, side)


def check_out_path(path: str, *, folder: bool = False) -> None:
    """Raises ExportError unless PATH is absent or an earlier export of ours (its sidecar names it with its
    current size; for a folder, our marker file is in it), so that an export never overwrites what it did not
    write."""
    if not os.path.lexists(path):
        parent = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(parent):
            raise ExportError(f"--out {path}: the folder {parent} does not exist")
        return
    if folder:
        if os.path.isdir(path) and (not os.listdir(path) or os.path.isfile(os.path.join(path, FOLDER_MARKER))):
            return
        raise ExportError(f"--out {path} exists and is not an earlier kforensics export folder; kforensics leaves it "
                          "as it is: choose another --out")
    side = path + SIDECAR_SUFFIX
    try:
        with open(side, encoding="utf-8") as f:
            meta = json.load(f)
        ours = meta.get("tool") == "kforensics" and meta.get("size") == os.path.getsize(path) and os.path.isfile(path)
    except (OSError, ValueError):
        ours = False
    if not ours:
        raise ExportError(f"--out {path} exists and is not an earlier kforensics export (no matching {side}); "
                          "kforensics never overwrites a file it did not write: choose another --out")


# --- choosing partitions -----------------------------------------------------------------------

@dataclass(frozen=True)
class PartitionSource:
    broker: str
    topic: str
    partition: int
    path: str  # the partition dir
    segments: tuple[str, ...]  # its .log files


def find_partitions(inputs: list[tuple[str, str]], topic: str, partition: int | None, broker: str | None, *,
                    dir_state: str = "live", path: str | None = None) -> list[PartitionSource]:
    """The `<topic>-<partition>` dirs of the inputs (local log dirs) that match: those of `dir_state` (live, or
    Kafka's -delete, -future and -stray copies, which may hold the only copy of their data), or the one dir at
    `path`, whatever its state."""
    from kforensics.parsers.log_dir import scan_log_dir

    found = []
    target = None if path is None else os.path.realpath(path)
    for label, uri in inputs:
        if broker is not None and label != broker:
            continue
        if "://" in uri and not uri.startswith("file://"):
            raise ExportError(f"{uri}: export reads local log dirs (copy the partition dir first)")
        log_dir, _ = scan_log_dir(uri[len("file://"):] if uri.startswith("file://") else uri)
        for part in log_dir.partitions:
            if part.topic != topic or (partition is not None and part.partition != partition):
                continue
            if (os.path.realpath(part.path) == target) if target is not None else part.dir_state == dir_state:
                found.append(PartitionSource(label, part.topic, part.partition, part.path,
                                             tuple(s.log for s in part.segments if s.log)))
    return found


def parse_time(text: str | None) -> int | None:
    """Milliseconds since the epoch, or an ISO-8601 time (UTC unless it says otherwise)."""
    if text is None:
        return None
    if text.lstrip("-").isdigit():
        return int(text)
    from datetime import UTC, datetime

    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise ExportError(f"{text!r} is neither milliseconds since the epoch nor an ISO-8601 time") from exc
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


#: Findings that name records to export: the field of their details holding the [first, last] span (None: the
#: whole partition dir the finding's `file` is).
EXPORTABLE = {"replica_divergence": "lost_offsets", "restart_would_truncate": "offsets_discarded",
              "stray_partition": None}


def finding_range(out: str, ref: str, topic: str | None, partition: int | None) -> dict[str, Any]:
    """The export a finding of a scan's OUT names: N (its row in the findings table, from 0) or a kind (the first
    finding of that kind, on --topic/--partition when given). Returns broker, topic, partition, offsets, the
    partition dir (`dir`: the dir of a restart or stray finding, None for the broker's live dir) and the scan's
    inputs: `lost_offsets` of a replica_divergence from the replica that still holds them, `offsets_discarded` of a
    restart_would_truncate from the dir it is about (a -future or -stray copy too), a stray_partition's whole
    dir."""
    from kforensics.scan_output import OutputError, read_manifest, read_table

    try:
        manifest = read_manifest(out)
        rows = read_table(out, "findings")
    except OutputError as exc:
        raise ExportError(str(exc)) from exc
    if manifest is None:
        raise ExportError(f"{out} is not a kforensics scan output")
    if ref.isdigit():
        if int(ref) >= len(rows):
            raise ExportError(f"{out} has {len(rows)} findings: no finding {ref}")
        candidates = [rows[int(ref)]]
    else:
        candidates = [f for f in rows if f["kind"] == ref and (topic is None or f["topic"] == topic)
                      and (partition is None or f["partition"] == partition)]
    for f in candidates:
        if f["kind"] not in EXPORTABLE:
            continue
        details = json.loads(f["details"] or "{}")
        field_name = EXPORTABLE[f["kind"]]
        span = details.get(field_name) if field_name else [None, None]
        directory = {"restart_would_truncate": os.path.dirname(f["file"] or "") or None,
                     "stray_partition": f["file"]}.get(f["kind"])
        if span:
            return {"broker": f["broker"], "topic": f["topic"], "partition": f["partition"],
                    "offsets": (span[0], span[1]), "dir": directory, "inputs": [tuple(i) for i in manifest.inputs],
                    "kind": f["kind"]}
    raise ExportError(f"no finding {ref!r} in {out} names offsets to export (replica_divergence with lost_offsets, "
                      "restart_would_truncate with offsets_discarded, stray_partition)")
