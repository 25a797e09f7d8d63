"""`find`'s output: each copy in the record shape `export` writes (the same field names, key/value encodings and
headers), plus `find`'s fields, as a JSON line or a Parquet row; and the finding lines."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from kforensics.export import SCHEMA as EXPORT_SCHEMA
from kforensics.export import jsonl_record

#: What `find` adds to an export's record: the value's size (null for a null value), the partition dir's state,
#: and the offset of the record that supersedes this one (null: none does).
FIND_FIELDS = [pa.field("value_size", pa.int32()), pa.field("dir_state", pa.string()),
               pa.field("superseded_at", pa.int64())]
#: A copy as a Parquet row: an export's columns (`value` null unless --values) and FIND_FIELDS, in JSON's order.
SCHEMA = pa.schema([*list(EXPORT_SCHEMA)[:8], FIND_FIELDS[0], *list(EXPORT_SCHEMA)[8:], *FIND_FIELDS[1:]])
COLUMNS = SCHEMA.names


def copy_line(row: dict[str, Any]) -> dict[str, Any]:
    """A copy as one JSON object: `type` "record", then export's jsonl fields (`key` with `key_encoding`, `value`
    with `value_encoding` when the row holds the value, each header's `encoding`) and find's."""
    return {"type": "record", **jsonl_record(row)}
