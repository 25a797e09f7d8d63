"""`export`'s selection: which partition dirs of the inputs and which records of them (an offset and a time
range, an isolation level), or the ones a finding of a scan's OUT names.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kforensics.kinds import KINDS

ISOLATIONS = ("read_uncommitted", "read_committed")


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
    from kforensics.times import parse_time_ms

    try:
        return parse_time_ms(text)
    except ValueError as exc:
        raise ExportError(str(exc)) from exc


#: Findings that name records to export: the field of their details holding the [first, last] span (None: the
#: whole partition dir the finding's `file` is).
EXPORTABLE = {k.name: k.records or None for k in KINDS.values() if k.exported}


def finding_range(out: str, ref: str, topic: str | None, partition: int | None,
                  kinds: Mapping[str, str | None] | None = None) -> dict[str, Any]:
    """The export a finding of a scan's OUT names: N (its row in the findings table, from 0) or a kind (the first
    finding of that kind, on --topic/--partition when given). Returns broker, topic, partition, offsets, the
    partition dir (`dir`: the dir of a restart or stray finding, None for the broker's live dir) and the scan's
    inputs: a diverged replica's `lost_offsets` from the replica that still holds them, a restart prediction's
    `offsets_discarded` from the dir it is about (a -future or -stray copy too), a stray partition's whole dir (each
    kind declares which field of its details holds the span: `records`). `kinds` (default EXPORTABLE): the kinds taken, each with the field of its details holding the span."""
    kinds = EXPORTABLE if kinds is None else kinds
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
        if f["kind"] not in kinds:
            continue
        details = json.loads(f["details"] or "{}")
        field_name = kinds[f["kind"]]
        span = details.get(field_name) if field_name else [None, None]
        directory = {"restart_would_truncate": os.path.dirname(f["file"] or "") or None,
                     "stray_partition": f["file"]}.get(f["kind"])
        if span:
            return {"broker": f["broker"], "topic": f["topic"], "partition": f["partition"],
                    "offsets": (span[0], span[1]), "dir": directory, "inputs": [tuple(i) for i in manifest.inputs],
                    "kind": f["kind"]}
    named = ", ".join(f"{kind} with {field_name}" if field_name else kind for kind, field_name in kinds.items())
    raise ExportError(f"no finding {ref!r} in {out} names offsets to {'export' if kinds is EXPORTABLE else 'read'} "
                      f"({named})")
