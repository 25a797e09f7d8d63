"""`kforensics export`: the records of a partition (an offset or time range of it) out of a broker disk, as data.

No Spark and no click here: `selection` says which partition dirs and records (or what a scan's finding names),
`reader`'s `PartitionReader` reads one partition's records as rows, `writers` writes them per format in bounded
batches, never over what an export did not write. The Spark path (spark/export.py) runs the same reader, one task
per partition dir.
"""

from __future__ import annotations

from kforensics.export.reader import COLUMNS, SCHEMA, PartitionReader, Skipped, Transactions
from kforensics.export.selection import (
    EXPORTABLE,
    ISOLATIONS,
    ExportError,
    PartitionSource,
    Selection,
    find_partitions,
    finding_range,
    parse_time,
)
from kforensics.export.writers import (
    CONSOLE_PRODUCER_PROPERTIES,
    CONSOLE_PRODUCER_RESERVED,
    FOLDER_MARKER,
    FORMATS,
    KCAT_KEY_DELIMITER,
    KCAT_RECORD_DELIMITER,
    ROW_GROUP_BYTES,
    ROW_GROUP_ROWS,
    SIDECAR_SUFFIX,
    RowBuffer,
    Writer,
    check_out_path,
    console_producer_command,
    console_producer_line,
    decode_jsonl_bytes,
    jsonl_record,
    kcat_command,
    kcat_frame,
    row_bytes,
    text_or_base64,
    write_sidecar,
)

__all__ = ["COLUMNS", "CONSOLE_PRODUCER_PROPERTIES", "CONSOLE_PRODUCER_RESERVED", "EXPORTABLE", "FOLDER_MARKER",
           "FORMATS", "ISOLATIONS", "KCAT_KEY_DELIMITER", "KCAT_RECORD_DELIMITER", "ROW_GROUP_BYTES", "ROW_GROUP_ROWS",
           "SCHEMA", "SIDECAR_SUFFIX", "ExportError", "PartitionReader", "PartitionSource", "RowBuffer", "Selection",
           "Skipped", "Transactions", "Writer", "check_out_path", "console_producer_command", "console_producer_line",
           "decode_jsonl_bytes", "find_partitions", "finding_range", "jsonl_record", "kcat_command", "kcat_frame",
           "parse_time", "row_bytes", "text_or_base64", "write_sidecar"]
