"""Findings: what a parser or an analysis reports instead of raising.

A finding names its kind, a severity, the file and byte position it is about, one plain sentence,
and kind-specific details. Every kind is registered once in :data:`KINDS` (kind -> severity, summary)
so that the README and the renderers have one source of truth.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Severity = Literal["error", "warning", "info"]

#: kind -> (default severity, one-line meaning). Add a kind here and in the README together.
KINDS: dict[str, tuple[Severity, str]] = {
    # record batches / message sets (*.log, *.checkpoint)
    "truncated_tail": ("warning", "the file ends inside a batch (a crash or a file still being written)"),
    "corrupt_crc": ("error", "a batch's stored CRC differs from the CRC computed over its bytes"),
    "zero_filled_tail": ("warning", "the file ends in zero bytes where a batch should be (preallocation or a crash)"),
    "invalid_batch_length": ("error", "a batch length field is impossible; the rest of the file is unreadable"),
    "unknown_magic": ("error", "a batch has a magic byte other than 0, 1 or 2"),
    "decompression_failed": ("error", "a compressed batch could not be decompressed"),
    "invalid_record": ("error", "a record inside a batch could not be decoded (bad varint, bad length)"),
    "record_count_mismatch": ("error", "a batch holds a different number of records than its header says"),
    "unknown_codec": ("error", "a batch's attributes name a compression codec that does not exist"),
    # index files
    "index_non_monotonic": ("error", "offset index entries do not strictly increase"),
    "index_bad_entry": ("error", "an offset index entry points to no batch start, or to the wrong offset"),
    "index_offset_mismatch": ("info", "an index entry's offset is not the last offset of the batch it points to "
                              "(kafka-dump-log's mismatch; normal for a follower's multi-batch appends)"),
    "timeindex_non_monotonic": ("error", "time index timestamps do not strictly increase"),
    "timeindex_bad_entry": ("error", "a time index entry names an offset or timestamp the log does not hold"),
    "index_partial_entry": ("warning", "an index file's size is not a multiple of its entry size"),
    # producer snapshots, txn index
    "snapshot_corrupt_crc": ("error", "a producer snapshot's CRC-32C does not match its contents"),
    "snapshot_unsupported_version": ("error", "a producer snapshot has a version this tool cannot read"),
    "snapshot_truncated": ("error", "a producer snapshot is shorter than its header says"),
    "txnindex_bad_entry": ("error", "a transaction index entry has an unknown version or impossible offsets"),
    # text files
    "checkpoint_malformed": ("error", "a checkpoint or properties file does not follow its format"),
    # internal topics
    "internal_record_undecodable": ("warning", "an internal-topic key or value could not be decoded"),
    # analysis (the scan's own kinds are documented in the README's findings table)
    "cleaner_blocked": ("warning", "a compacted partition's log cleaner is held at the last stable offset by a "
                        "transaction open longer than the transaction timeout"),
    # kafka-dump-log text as scan input (parsers/dump_text.py)
    "dump_line_unparseable": ("warning", "a line of kafka-dump-log text that could not be read (line number and "
                              "byte position in the text)"),
    "marker_outcome_unknown": ("warning", "a control batch in kafka-dump-log text without record lines: COMMIT or "
                               "ABORT is not known"),
    "dump_section_skipped": ("info", "a section of kafka-dump-log text about a file that is not a segment of a "
                             "<topic>-<partition> directory"),
    "dump_invalid_bytes": ("warning", "kafka-dump-log found invalid bytes at the end of a segment (a batch cut "
                           "short, or zeros)"),
    # files and directories
    "unreadable_file": ("error", "a file could not be opened or read"),
    "unknown_file": ("info", "a file in a log directory that is not one of the broker's known files"),
}


@dataclass(frozen=True, slots=True)
class Finding:
    """A problem found at a byte position of a file; parsers yield these and keep going."""

    kind: str
    file: str
    position: int | None
    message: str
    details: Mapping[str, Any] = field(default_factory=dict)
    severity: Severity | None = None

    @property
    def effective_severity(self) -> Severity:
        if self.severity is not None:
            return self.severity
        return KINDS.get(self.kind, ("error", ""))[0]

    def to_json(self) -> dict[str, Any]:
        """The JSON-lines form: `type`, `kind`, `severity`, `file`, `position`, `message`, then details."""
        out: dict[str, Any] = {
            "type": "finding",
            "kind": self.kind,
            "severity": self.effective_severity,
            "file": self.file,
            "position": self.position,
            "message": self.message,
        }
        for key, value in self.details.items():
            out.setdefault(key, value)
        return out
