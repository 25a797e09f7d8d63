"""One interpreter of Kafka message schemas: reads and writes any message a declarative table describes.

Kafka describes every record it stores in its internal topics once, as a message schema (the JSON files under
`*/src/main/resources/common/{message,metadata}`), and generates each reader, writer and JsonConverter from it.
kforensics declares the same descriptions as Python tables (`schemas_*.py`, one module per record family, each
naming the Kafka version it reflects) built from :class:`Field` and :class:`Message`, and this module alone
turns bytes into the objects Kafka's JsonConverter prints and back.

The rules followed (Kafka's MessageDataGenerator / JsonConverterGenerator, the wire format of KIP-482):

- a field exists in the versions of its `versions` range; a version in `flexibleVersions` uses the compact
  encodings (uvarint length + 1 for strings, bytes and arrays, 0 meaning null) and ends every struct with a
  tagged-field section (uvarint count, then uvarint tag, uvarint size and the value in that many bytes);
  the other versions use the classic ones (int16 string length, int32 bytes and array lengths, -1 meaning null);
- a field is nullable in its `nullableVersions`; a nullable struct carries an int8 presence byte (KIP-893);
- a field in its `taggedVersions` is not in the fixed part: it is read from the tagged section under its `tag`,
  takes its default when absent, and is printed only when it differs from its default (JsonConverter's
  non-default check); tags no field declares are collected as unknown tagged fields;
- JSON names are the field names with the first letter lower-cased (FieldSpec.camelCaseName); uuids print as
  Kafka's Uuid.toString (base64url, no padding), bytes as Jackson's BinaryNode (standard base64), int64 and
  uint32 as numbers, float64 as a double, bool as true/false.

Where Kafka changed a version's layout in place (the share group and share state records of Kafka 4.0), a
table lists the earlier layouts as the message's `older` ones: `decode_versioned` reads the bytes as the current
layout and, when they do not read as it, as each earlier one in turn, and says which one read them.

`decode` raises :class:`MessageDecodeError` (with the byte position) on bytes the description cannot read,
never anything else; `encode` writes what `decode` reads.
"""

from __future__ import annotations

import base64
import struct
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import Any

_MISSING: Any = object()

#: Fixed-size types: struct format, JSON form is the number (bool: true/false).
_FIXED: dict[str, struct.Struct] = {
    "int8": struct.Struct(">b"), "int16": struct.Struct(">h"), "int32": struct.Struct(">i"),
    "int64": struct.Struct(">q"), "uint16": struct.Struct(">H"), "uint32": struct.Struct(">I"),
    "float64": struct.Struct(">d"), "bool": struct.Struct(">?"),
}
_VARIABLE = frozenset({"string", "bytes", "records"})
PRIMITIVES = frozenset(_FIXED) | _VARIABLE | {"uuid"}
ZERO_UUID = "AAAAAAAAAAAAAAAAAAAAAA"  # Uuid.ZERO_UUID.toString()


class MessageDecodeError(ValueError):
    """Bytes a message description cannot read (too short, an impossible length, trailing bytes...).

    `position` is the byte offset in the buffer handed to the reader where reading failed."""

    def __init__(self, message: str, position: int) -> None:
        super().__init__(f"{message} (at byte {position})")
        self.position = position


def parse_versions(text: str | None) -> tuple[int, int] | None:
    """Kafka's version range text ("0+", "1-3", "2", "none") as (lowest, highest) inclusive, or None for none."""
    if text is None or text == "none" or text == "":
        return None
    if text.endswith("+"):
        return int(text[:-1]), 0x7FFF
    lo, _, hi = text.partition("-")
    return (int(lo), int(hi)) if hi else (int(lo), int(lo))


def _in(rng: tuple[int, int] | None, version: int) -> bool:
    return rng is not None and rng[0] <= version <= rng[1]


def lower_first(name: str) -> str:
    """FieldSpec.camelCaseName: the schema name with its first letter lower-cased."""
    return name[:1].lower() + name[1:]


@dataclass(frozen=True)
class Field:
    """One field of a message description, as the schema declares it.

    `type` is a primitive (int8, int16, int32, int64, uint16, uint32, float64, bool, string, bytes, records,
    uuid), a struct name (with `fields`), or `[]` + either (an array). `default` is the schema's default
    (Python value; None for "null"); unset means the type's own default (0, false, "", empty, zero uuid)."""

    name: str
    type: str
    versions: str = "0+"
    nullable: str | None = None
    tagged: str | None = None
    tag: int | None = None
    default: Any = _MISSING
    fields: tuple[Field, ...] = ()
    ignorable: bool = False
    json_name: str = dc_field(init=False)
    _versions: tuple[int, int] | None = dc_field(init=False, repr=False)
    _nullable: tuple[int, int] | None = dc_field(init=False, repr=False)
    _tagged: tuple[int, int] | None = dc_field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "json_name", lower_first(self.name))
        object.__setattr__(self, "_versions", parse_versions(self.versions))
        object.__setattr__(self, "_nullable", parse_versions(self.nullable))
        object.__setattr__(self, "_tagged", parse_versions(self.tagged))
        if (self._tagged is None) != (self.tag is None):
            raise ValueError(f"field {self.name}: taggedVersions and tag go together")
        element = self.element_type
        if element not in PRIMITIVES and not self.fields:
            raise ValueError(f"field {self.name}: struct type {element} needs fields")

    @property
    def is_array(self) -> bool:
        return self.type.startswith("[]")

    @property
    def element_type(self) -> str:
        return self.type[2:] if self.is_array else self.type

    @property
    def is_struct(self) -> bool:
        return self.element_type not in PRIMITIVES

    def present(self, version: int) -> bool:
        return _in(self._versions, version)

    def nullable_in(self, version: int) -> bool:
        return _in(self._nullable, version)

    def tagged_in(self, version: int) -> bool:
        return _in(self._tagged, version)

    def default_value(self) -> Any:
        """The field's default in JSON form (what a reader assumes when a tagged field is absent)."""
        if self.default is not _MISSING:
            return list(self.default) if isinstance(self.default, (list, tuple)) else self.default
        if self.is_array:
            return []
        if self.is_struct:
            return None  # Kafka constructs a default struct; printed only when not default (never compared here)
        t = self.type
        if t == "bool":
            return False
        if t in ("float64",):
            return 0.0
        if t in _FIXED:
            return 0
        if t == "uuid":
            return ZERO_UUID
        return ""


@dataclass(frozen=True)
class Message:
    """A message description: name, api key (None for keyless families), valid and flexible versions, fields.

    `older`: the layouts Kafka wrote earlier under the same version numbers, where a version was changed in place
    (Kafka 4.0's share group and share state records), each a Message whose `written_by` names
    the Kafka releases that wrote it; `decode_versioned` tries them in order when the bytes do not read as this
    one."""

    name: str
    api_key: int | None
    valid: str
    flexible: str
    fields: tuple[Field, ...]
    older: tuple[Message, ...] = ()
    written_by: str = ""
    _valid: tuple[int, int] | None = dc_field(init=False, repr=False)
    _flexible: tuple[int, int] | None = dc_field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_valid", parse_versions(self.valid))
        object.__setattr__(self, "_flexible", parse_versions(self.flexible))

    @property
    def lowest_version(self) -> int:
        return self._valid[0] if self._valid else 0

    @property
    def highest_version(self) -> int:
        return self._valid[1] if self._valid else -1

    @property
    def versions(self) -> range:
        return range(self.lowest_version, self.highest_version + 1)

    def is_valid(self, version: int) -> bool:
        return _in(self._valid, version)

    def is_flexible(self, version: int) -> bool:
        return _in(self._flexible, version)


# --- reading ---------------------------------------------------------------------------------------------------

class Reader:
    """Kafka protocol primitives over a bytes buffer; every failure is a MessageDecodeError with its position."""

    __slots__ = ("data", "pos", "end")

    def __init__(self, data: bytes | memoryview, pos: int = 0, end: int | None = None) -> None:
        self.data = data
        self.pos = pos
        self.end = len(data) if end is None else end

    @property
    def remaining(self) -> int:
        return self.end - self.pos

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > self.end:
            raise MessageDecodeError(f"needs {n} byte(s), {self.end - self.pos} left", self.pos)
        out = bytes(self.data[self.pos:self.pos + n])
        self.pos += n
        return out

    def fixed(self, kind: str) -> Any:
        s = _FIXED[kind]
        if self.pos + s.size > self.end:
            raise MessageDecodeError(f"needs {s.size} byte(s) for {kind}, {self.end - self.pos} left", self.pos)
        value = s.unpack_from(self.data, self.pos)[0]
        self.pos += s.size
        return value

    def uvarint(self) -> int:
        """Unsigned varint as ByteUtils.readUnsignedVarint: at most 5 bytes."""
        start = self.pos
        value = shift = 0
        while True:
            if self.pos >= self.end:
                raise MessageDecodeError("varint runs past the end", start)
            b = self.data[self.pos]
            self.pos += 1
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
            shift += 7
            if shift > 28:
                raise MessageDecodeError("unsigned varint longer than 5 bytes", start)

    def length(self, flexible: bool, wide: bool) -> int:
        """A length prefix: compact (uvarint - 1) or classic (int16 for strings, int32 for bytes and arrays)."""
        if flexible:
            return self.uvarint() - 1
        return self.fixed("int32" if wide else "int16")


def _value(r: Reader, f: Field, kind: str, version: int, flexible: bool, unknown: list[dict[str, Any]],
           path: str, nullable: bool) -> Any:
    if kind in _FIXED:
        return r.fixed(kind)
    if kind == "uuid":
        return base64.urlsafe_b64encode(r.take(16)).decode().rstrip("=")
    if kind in _VARIABLE:
        at = r.pos
        n = r.length(flexible, kind != "string")
        if n < 0:
            if not nullable:
                raise MessageDecodeError(f"null {f.name} where the schema requires a value", at)
            return None
        if n > r.remaining:
            raise MessageDecodeError(f"{f.name} of {n} bytes overruns the message", at)
        raw = r.take(n)
        if kind == "string":
            return raw.decode("utf-8", errors="replace")
        return base64.b64encode(raw).decode()
    # a struct
    if nullable and r.fixed("int8") < 0:  # the presence byte: negative is null, anything else a struct (Kafka's rule)
        return None
    return _read_struct(r, f.fields, version, flexible, unknown, path)


def _read_field(r: Reader, f: Field, version: int, flexible: bool, unknown: list[dict[str, Any]],
                path: str) -> Any:
    nullable = f.nullable_in(version)
    if not f.is_array:
        return _value(r, f, f.type, version, flexible, unknown, path, nullable)
    at = r.pos
    n = r.length(flexible, True)
    if n < 0:
        if not nullable:
            raise MessageDecodeError(f"null array {f.name} where the schema requires one", at)
        return None
    if n > r.remaining:
        raise MessageDecodeError(f"array {f.name} of {n} elements cannot fit in {r.remaining} bytes", at)
    kind = f.element_type
    return [_value(r, f, kind, version, flexible, unknown, f"{path}[{i}]", False) for i in range(n)]


def _read_struct(r: Reader, fields: tuple[Field, ...], version: int, flexible: bool,
                 unknown: list[dict[str, Any]], path: str) -> dict[str, Any]:
    values: dict[str, Any] = {}
    tagged: dict[int, Field] = {}
    for f in fields:
        if not f.present(version):
            continue
        if flexible and f.tagged_in(version):
            tagged[f.tag] = f  # type: ignore[index]
            continue
        values[f.json_name] = _read_field(r, f, version, flexible, unknown, f"{path}.{f.json_name}")
    if flexible:
        for _ in range(r.uvarint()):
            tag = r.uvarint()
            size_at = r.pos
            size = r.uvarint()
            if size > r.remaining:
                raise MessageDecodeError(f"tagged field {tag} of {size} bytes overruns the message", size_at)
            f = tagged.get(tag)
            if f is None:
                unknown.append({"path": path or ".", "tag": tag, "data": base64.b64encode(r.take(size)).decode()})
                continue
            sub = Reader(r.data, r.pos, r.pos + size)
            values[f.json_name] = _read_field(sub, f, version, True, unknown, f"{path}.{f.json_name}")
            if sub.pos != sub.end:
                raise MessageDecodeError(f"tagged field {f.name} leaves {sub.end - sub.pos} byte(s) unread", sub.pos)
            r.pos += size
    out: dict[str, Any] = {}
    for f in fields:  # declaration order, as JsonConverter writes them
        if f.json_name not in values:
            continue
        v = values[f.json_name]
        if f.tagged_in(version) and v == f.default_value():
            continue  # JsonConverter prints a tagged field only when it differs from its default
        out[f.json_name] = v
    return out


def decode(message: Message, data: bytes | memoryview, version: int, pos: int = 0,
           unknown: list[dict[str, Any]] | None = None, whole: bool = True) -> tuple[dict[str, Any], int]:
    """Read `message` at `version` from `data[pos:]`: (JSON-form dict, position after it).

    `whole`: the message must end exactly at the end of the buffer (Kafka rejects trailing bytes).
    Tags no field declares go to `unknown` as {"path", "tag", "data"} when a list is given."""
    r = Reader(data, pos)
    out = _read_struct(r, message.fields, version, message.is_flexible(version),
                       unknown if unknown is not None else [], "")
    if whole and r.pos != r.end:
        raise MessageDecodeError(f"{r.end - r.pos} byte(s) after {message.name} v{version}", r.pos)
    return out, r.pos


# --- writing ---------------------------------------------------------------------------------------------------

def _uvarint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _length(n: int, flexible: bool, wide: bool) -> bytes:
    if flexible:
        return _uvarint(n + 1)
    return _FIXED["int32" if wide else "int16"].pack(n)


def _encode_value(f: Field, kind: str, v: Any, version: int, flexible: bool, nullable: bool) -> bytes:
    if kind in _FIXED:
        return _FIXED[kind].pack(v)
    if kind == "uuid":
        raw = base64.urlsafe_b64decode(v + "=" * (-len(v) % 4))
        if len(raw) != 16:
            raise ValueError(f"{f.name}: a uuid is 16 bytes")
        return raw
    if kind in _VARIABLE:
        if v is None:
            if not nullable:
                raise ValueError(f"{f.name} is not nullable in version {version}")
            return _length(-1, flexible, kind != "string")
        raw = v.encode() if kind == "string" else base64.b64decode(v)
        return _length(len(raw), flexible, kind != "string") + raw
    if nullable:
        if v is None:
            return b"\xff"
        return b"\x01" + _encode_struct(f.fields, v, version, flexible)
    if v is None:
        raise ValueError(f"{f.name} is not nullable in version {version}")
    return _encode_struct(f.fields, v, version, flexible)


def _encode_field(f: Field, v: Any, version: int, flexible: bool) -> bytes:
    nullable = f.nullable_in(version)
    if not f.is_array:
        return _encode_value(f, f.type, v, version, flexible, nullable)
    if v is None:
        if not nullable:
            raise ValueError(f"{f.name} is not nullable in version {version}")
        return _length(-1, flexible, True)
    return _length(len(v), flexible, True) + b"".join(
        _encode_value(f, f.element_type, item, version, flexible, False) for item in v)


def _encode_struct(fields: tuple[Field, ...], data: dict[str, Any], version: int, flexible: bool,
                   extra_tags: list[tuple[int, bytes]] | None = None) -> bytes:
    out = bytearray()
    tags: list[tuple[int, bytes]] = list(extra_tags or ())
    known = set()
    for f in fields:
        known.add(f.json_name)
        if not f.present(version):
            if f.json_name in data and not f.ignorable and data[f.json_name] != f.default_value():
                raise ValueError(f"{f.name} does not exist in version {version}")
            continue
        if flexible and f.tagged_in(version):
            v = data.get(f.json_name, f.default_value())
            if v != f.default_value():
                tags.append((f.tag, _encode_field(f, v, version, True)))  # type: ignore[arg-type]
            continue
        v = data[f.json_name] if f.json_name in data else f.default_value()
        out += _encode_field(f, v, version, flexible)
    stray = set(data) - known
    if stray:
        raise ValueError(f"no field named {sorted(stray)} in this message")
    if flexible:
        tags.sort()
        out += _uvarint(len(tags))
        for tag, raw in tags:
            out += _uvarint(tag) + _uvarint(len(raw)) + raw
    return bytes(out)


def encode(message: Message, version: int, data: dict[str, Any],
           extra_tags: list[tuple[int, bytes]] | None = None) -> bytes:
    """`data` (JSON form, as `decode` returns it) written as `message` at `version`; fields left out take their
    defaults. `extra_tags` adds raw (tag, bytes) entries to the top-level tagged section (for tests)."""
    if not message.is_valid(version):
        raise ValueError(f"{message.name} has no version {version} (valid: {message.valid})")
    return _encode_struct(message.fields, data, version, message.is_flexible(version), extra_tags)


# --- AbstractApiMessageSerde framing ---------------------------------------------------------------------------

#: AbstractApiMessageSerde.DEFAULT_FRAME_VERSION: the only frame version Kafka writes or reads.
FRAME_VERSION = 1


def read_frame(value: bytes | memoryview) -> tuple[int, int, int]:
    """The AbstractApiMessageSerde frame of a `__cluster_metadata` / `__remote_log_metadata` value: three unsigned
    varints (frame version 1, api key, message version). Returns (api_key, version, position of the message)."""
    r = Reader(value)
    frame = r.uvarint()
    if frame != FRAME_VERSION:
        raise MessageDecodeError(f"frame version {frame} (only {FRAME_VERSION} is defined)", 0)
    api_key = r.uvarint()
    version = r.uvarint()
    if version > 0x7FFF:
        raise MessageDecodeError(f"message version {version} is not a short", r.pos)
    return api_key, version, r.pos


def write_frame(api_key: int, version: int) -> bytes:
    """The frame `read_frame` reads."""
    return _uvarint(FRAME_VERSION) + _uvarint(api_key) + _uvarint(version)


@dataclass(frozen=True)
class Decoded:
    """A message read with `decode_versioned`: `newer` when the version is above the table's highest (then
    `data` holds what the highest known version reads, or {} with `fields_read` false when the message is not
    flexible or those bytes do not read as it), `unknown_tags` the tagged fields no table field declares, `layout`
    the `written_by` of the older layout that read the bytes ("" for the table's own)."""

    message: Message
    version: int
    data: dict[str, Any]
    newer: bool = False
    unknown_tags: tuple[dict[str, Any], ...] = ()
    fields_read: bool = True
    layout: str = ""


def decode_versioned(message: Message, data: bytes | memoryview, version: int, pos: int = 0) -> Decoded:
    """Read `message` at `version`, as the table's layout or, when the bytes do not read as it, as each of its
    `older` layouts of that version in turn; a version newer than the table knows is not damage: when the newest
    known version is flexible (a newer one can only add tagged fields or append), read what that version shares.

    Raises MessageDecodeError (the table's own layout's error) for a version below the lowest valid one or bytes
    that read as no layout."""
    if message.is_valid(version):
        first: MessageDecodeError | None = None
        for layout in (message, *(m for m in message.older if m.is_valid(version))):
            unknown: list[dict[str, Any]] = []
            try:
                out, _ = decode(layout, data, version, pos, unknown)
            except MessageDecodeError as exc:
                first = first or exc
                continue
            return Decoded(message, version, out, False, tuple(unknown), True,
                           "" if layout is message else layout.written_by)
        assert first is not None  # the table's own layout is valid at `version`
        raise first
    if version < message.lowest_version:
        raise MessageDecodeError(f"{message.name} has no version {version} (valid: {message.valid})", pos)
    top = message.highest_version
    if message.is_flexible(top) and message.is_flexible(version):
        unknown = []
        try:
            out, _ = decode(message, data, top, pos, unknown)
            return Decoded(message, version, out, True, tuple(unknown))
        except MessageDecodeError:
            pass
    return Decoded(message, version, {}, True, (), False)
