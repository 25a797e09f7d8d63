"""`find`'s query: which records (a key, or any of a set of keys; a header; bytes in the value; a time window)
and where (a topic glob), checked once, as the compiled reader takes it (`RecordMatcher`)."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Any


class FindError(Exception):
    """The search cannot be done as asked (a usage error: exit code 2); the message says why."""


@dataclass(frozen=True)
class Query:
    """Every condition given must hold; a record's copies are found in every partition dir of a topic `topic`
    matches (a glob; None: every topic)."""

    keys: frozenset[bytes] | None = None  # the key is one of these (--key, --key-hex, --from-finding)
    header_name: str | None = None
    header_value: bytes | None = None  # None: any value, a null one too
    value_contains: bytes | None = None
    from_time: int | None = None
    to_time: int | None = None
    topic: str | None = None
    values: bool = False  # hand out each copy's value (--values), not only its size

    def __post_init__(self) -> None:
        if self.keys is None and self.header_name is None and self.value_contains is None:
            raise FindError("say what to look for: --key, --key-hex, --header, --value-contains or --from-finding")
        if self.keys is not None and not self.keys:
            raise FindError("no key to look for")
        if self.from_time is not None and self.to_time is not None and self.from_time > self.to_time:
            raise FindError("--from-time is after --to-time")

    def wants_topic(self, topic: str) -> bool:
        return self.topic is None or fnmatch.fnmatchcase(topic, self.topic)

    def matcher(self, implementation: Any = None) -> Any:
        """A RecordMatcher of this query, from `implementation` (parsers.core's; default: the bound reader)."""
        from kforensics.parsers import core

        impl = implementation or core.implementation()
        return impl.RecordMatcher(None if self.keys is None else sorted(self.keys), self.header_name,
                                  self.header_value, self.value_contains, self.from_time, self.to_time)

    def may_match(self, max_timestamp: int, log_append_time: bool) -> bool:
        """Whether a batch of this max timestamp can hold a record of the time window (without decompressing
        it): every record's timestamp is at most the max; under LogAppendTime every record's is the max. A
        CreateTime batch's base timestamp is no lower bound (a producer may give a later record an earlier
        timestamp, and a cleaned batch's may hold its delete horizon)."""
        if self.from_time is not None and max_timestamp < self.from_time:
            return False
        return not (log_append_time and self.to_time is not None and max_timestamp > self.to_time)

    def describe(self) -> str:
        """The query in a few words (the terminal's title)."""
        parts = []
        if self.keys is not None:
            parts.append(f"key {_bytes_text(next(iter(self.keys)))}" if len(self.keys) == 1
                         else f"{len(self.keys)} keys")
        if self.header_name is not None:
            parts.append(f"header {self.header_name}" + (
                "" if self.header_value is None else f"={_bytes_text(self.header_value)}"))
        if self.value_contains is not None:
            parts.append(f"value containing {_bytes_text(self.value_contains)}")
        if self.from_time is not None or self.to_time is not None:
            parts.append(f"timestamps {'' if self.from_time is None else self.from_time}.."
                         f"{'' if self.to_time is None else self.to_time}")
        if self.topic is not None:
            parts.append(f"topic {self.topic}")
        return ", ".join(parts)


def _bytes_text(data: bytes) -> str:
    try:
        return repr(data.decode("utf-8"))
    except UnicodeDecodeError:
        return f"0x{data.hex()}"


def parse_header(text: str) -> tuple[str, bytes | None]:
    """NAME or NAME=VALUE (the first `=` splits): (name, UTF-8 value or None for any value)."""
    name, sep, value = text.partition("=")
    if not name:
        raise FindError(f"--header {text!r}: no header name (NAME or NAME=VALUE)")
    return name, (value.encode("utf-8", "surrogateescape") if sep else None)


def parse_key_hex(text: str) -> bytes:
    try:
        return bytes.fromhex(text.removeprefix("0x"))
    except ValueError:
        raise FindError(f"--key-hex {text!r} is not hexadecimal (e.g. 0a1b2c)") from None
