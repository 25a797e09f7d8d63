"""`export`'s writers: rows out as jsonl, Parquet, kcat input or kafka-console-producer lines, in bounded batches,
to a temporary file renamed when complete; and the out-path safety (an export never overwrites what it did not
write).
"""

from __future__ import annotations

import base64
import json
import os
import socket
from typing import Any

import pyarrow as pa

from kforensics import __version__
from kforensics.export.reader import SCHEMA
from kforensics.export.selection import ExportError
from kforensics.times import now_iso

FORMATS = ("jsonl", "parquet", "kcat", "console-producer")
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


def row_bytes(row: dict[str, Any]) -> int:
    """The bytes of a row's key, value and headers: what a buffer of rows holds beyond its fixed columns."""
    return (len(row["key"] or b"") + len(row.get("value") or b"")
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
    """Writes rows to a temporary file next to PATH; `commit()` renames it to PATH (and writes the sidecar). Parquet
    rows have the columns of `schema` (SCHEMA: an export's; `find` adds its own)."""

    def __init__(self, path: str, fmt: str, meta: dict[str, Any], schema: pa.Schema = SCHEMA) -> None:
        self.path, self.fmt, self.meta, self.schema = path, fmt, meta, schema
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
            self._parquet = pq.ParquetWriter(self._file, self.schema.with_metadata({"kforensics": json.dumps(self.meta)}))
        self._parquet.write_table(pa.Table.from_pylist(self._buffer.take(), schema=self.schema),
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
