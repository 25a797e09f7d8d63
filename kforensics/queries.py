"""What the report commands (`gaps`, `txns`, `lso`, `producers`) read from a completed scan: rows in their JSON-lines
form (a contract: they always carry `broker`, `topic`, `partition`) and the transaction statistics. Library code:
no click, no rich, no Spark."""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Iterable
from typing import Any

from kforensics.parsers.findings import FINDING_FIELDS, SEQUENCE_KINDS
from kforensics.scan_output import read_table

TXN_FIELDS = ("broker", "topic", "partition", "producer_id", "producer_epoch", "transactional_id",
              "expected_coordinator_partition", "first_offset", "last_data_offset", "marker_offset", "outcome",
              "coordinator_epoch", "batch_count", "record_count", "duration_ms")
LSO_FIELDS = ("broker", "topic", "partition", "last_stable_offset", "high_watermark", "log_end_offset",
              "held_by_producer_id", "stuck")
LSO_CHANGE_FIELDS = ("broker", "topic", "partition", "offset", "last_stable_offset", "held_by_producer_id")
PRODUCER_FIELDS = ("broker", "topic", "partition", "producer_id", "producer_epoch", "first_offset", "last_offset",
                   "first_sequence", "last_sequence", "batch_count", "record_count", "first_timestamp",
                   "last_timestamp", "is_transactional")
TXN_STATS_FIELDS = ("outcome", "count", "records_total", "records_median", "records_max", "duration_ms_median",
                    "duration_ms_max")


def finding_line(row: dict[str, Any]) -> dict[str, Any]:
    """A `findings` table row in its JSON-lines form: the columns but `details`, whose fields follow as keys."""
    out = {k: row.get(k) for k in FINDING_FIELDS}
    for key, value in json.loads(row.get("details") or "{}").items():
        out.setdefault(key, value)
    return out


def _selected(rows: Iterable[dict[str, Any]], topic: str | None, partition: int | None,
              pid: int | None, pid_field: str = "producer_id") -> list[dict[str, Any]]:
    return [r for r in rows if (topic is None or fnmatch.fnmatchcase(r["topic"], topic))
            and (partition is None or r["partition"] == partition)
            and (pid is None or r.get(pid_field) == pid)]


def findings(out: str) -> list[dict[str, Any]]:
    """Every finding, in its JSON-lines form."""
    return [finding_line(r) for r in read_table(out, "findings")]


def sequence_problems(out: str, *, topic: str | None = None, partition: int | None = None,
                      pid: int | None = None) -> list[dict[str, Any]]:
    """`gaps`: the sequence_gap, duplicate_sequence, zombie_epoch and content_duplicate findings."""
    return _selected((f for f in findings(out) if f["kind"] in SEQUENCE_KINDS), topic, partition, pid)


def transactions(out: str, *, topic: str | None = None, partition: int | None = None,
                 pid: int | None = None) -> list[dict[str, Any]]:
    """`txns`: one line per transaction, in offset order per partition."""
    rows = _selected(read_table(out, "transactions"), topic, partition, pid)
    rows.sort(key=lambda r: (r["broker"], r["topic"], r["partition"],
                             r["first_offset"] if r["first_offset"] is not None else r["marker_offset"]))
    return [{k: r.get(k) for k in TXN_FIELDS} for r in rows]


def _median(values: list[int]) -> int | None:
    return values[len(values) // 2] if values else None


def transaction_stats(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Counts, sizes and durations per outcome; a completed transaction without data counts as EMPTY."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in lines:
        outcome = "EMPTY" if r["outcome"] != "OPEN" and not r["batch_count"] else r["outcome"]
        groups.setdefault(outcome, []).append(r)
    stats = []
    for outcome, group in sorted(groups.items()):
        sizes = sorted(r["record_count"] or 0 for r in group)
        durations = sorted(r["duration_ms"] for r in group if r["duration_ms"] is not None)
        stats.append({"outcome": outcome, "count": len(group), "records_total": sum(sizes),
                      "records_median": _median(sizes), "records_max": sizes[-1] if sizes else None,
                      "duration_ms_median": _median(durations), "duration_ms_max": durations[-1] if durations else None})
    return stats


def longest_transactions(lines: list[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    return sorted((r for r in lines if r["duration_ms"] is not None), key=lambda r: -r["duration_ms"])[:n]


def last_stable_offsets(out: str, *, topic: str | None = None, partition: int | None = None,
                        pid: int | None = None, progression: bool = False) -> list[dict[str, Any]]:
    """`lso`: the final LSO per partition, or (`progression`) one line per change point; `pid` keeps those held
    by that producer id."""
    if progression:
        rows = _selected(read_table(out, "lso_changes"), topic, partition, pid, "held_by_producer_id")
        rows.sort(key=lambda r: (r["broker"], r["topic"], r["partition"], r["offset"]))
        return [{k: r[k] for k in LSO_CHANGE_FIELDS} for r in rows]
    rows = _selected(read_table(out, "lso"), topic, partition, pid, "held_by_producer_id")
    rows.sort(key=lambda r: (r["broker"], r["topic"], r["partition"]))
    return [{k: r[k] for k in LSO_FIELDS} for r in rows]


def producers(out: str, *, topic: str | None = None, partition: int | None = None,
              pid: int | None = None) -> list[dict[str, Any]]:
    """`producers`: per producer id and epoch."""
    rows = _selected(read_table(out, "producers"), topic, partition, pid)
    rows.sort(key=lambda r: (r["broker"], r["topic"], r["partition"], r["producer_id"], r["producer_epoch"]))
    return [{k: r.get(k) for k in PRODUCER_FIELDS} for r in rows]


LEADER_FIELDS = ("cluster_id", "metadata_broker", "topic", "partition", "time", "timestamp", "metadata_offset",
                 "record_type", "leader_epoch", "partition_epoch", "leader", "isr", "elr", "replicas",
                 "leader_recovery_state", "election", "previous_leader", "previous_isr")


def _utc(ms: int | None) -> str | None:
    import datetime

    if ms is None:
        return None
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def leadership(out: str, *, topic: str | None = None, partition: int | None = None) -> list[dict[str, Any]]:
    """`leaders`: each partition's leadership history from the KRaft metadata log (`partition_history`), one line
    per PartitionRecord or applied PartitionChangeRecord, in metadata-offset order per partition: `time` (UTC) and
    `timestamp` (ms) of the record, epochs, leader, ISR, ELR, replicas, recovery state and `election`."""
    rows = _selected(read_table(out, "partition_history"), topic, partition, None)
    rows.sort(key=lambda r: (r["cluster_id"], r["topic"] or "", r["partition"], r["metadata_offset"]))
    return [{**{k: r.get(k) for k in LEADER_FIELDS if k != "time"}, "time": _utc(r.get("timestamp"))} for r in rows]
