"""What the report commands (`gaps`, `txns`, `lso`, `producers`, `leaders`, `groups`) read from a completed scan:
rows in their JSON-lines form (a contract: those of gaps, txns, lso and producers always carry `broker`, `topic`,
`partition`) and the transaction statistics. Library code: no click, no rich, no Spark."""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Iterable
from typing import Any

from kforensics.kinds import shown_in
from kforensics.parsers.findings import FINDING_FIELDS
from kforensics.scan_output import read_table
from kforensics.times import iso

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
    out["incident_id"] = row.get("incident_id")
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
    """`gaps`: the findings of producers' sequences and epochs (the kinds whose `reports` name `gaps`)."""
    return _selected((f for f in findings(out) if f["kind"] in shown_in("gaps")), topic, partition, pid)


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
    return None if ms is None else iso(ms)


def leadership(out: str, *, topic: str | None = None, partition: int | None = None) -> list[dict[str, Any]]:
    """`leaders`: each partition's leadership history from the KRaft metadata log (`partition_history`), one line
    per PartitionRecord or applied PartitionChangeRecord, in metadata-offset order per partition: `time` (UTC) and
    `timestamp` (ms) of the record, epochs, leader, ISR, ELR, replicas, recovery state and `election`."""
    rows = _selected(read_table(out, "partition_history"), topic, partition, None)
    rows.sort(key=lambda r: (r["cluster_id"], r["topic"] or "", r["partition"], r["metadata_offset"]))
    return [{**{k: r.get(k) for k in LEADER_FIELDS if k != "time"}, "time": _utc(r.get("timestamp"))} for r in rows]


CONTROLLER_FIELDS = ("cluster_id", "metadata_broker", "time", "timestamp", "metadata_offset", "event", "from_snapshot",
                     "voter_ids", "added_voters", "removed_voters", "voters", "kraft_version", "controller_id",
                     "incarnation_id", "endpoints", "file", "position")


def controllers(out: str) -> list[dict[str, Any]]:
    """`leaders --controllers`: who the KRaft controllers were, when (`controller_history`: VotersRecord,
    KRaftVersionRecord, RegisterControllerRecord, UnregisterControllerRecord), in metadata-offset order per cluster."""
    rows = read_table(out, "controller_history")
    rows.sort(key=lambda r: (r["cluster_id"], r["metadata_broker"], r["metadata_offset"]))
    return [{**{k: r.get(k) for k in CONTROLLER_FIELDS if k != "time"}, "time": _utc(r.get("timestamp"))}
            for r in rows]


# --- groups (issue 41): who consumed what -------------------------------------------------------------------------

GROUP_MEMBER_FIELDS = ("cluster_id", "group", "group_type", "member_id", "instance_id", "client_id", "client_host",
                       "rack", "generation", "member_epoch", "member_state", "subscribed_topics",
                       "subscribed_topic_regex", "from_time", "from_offset", "from_timestamp", "to_time", "to_offset",
                       "to_timestamp", "coordinator_broker", "coordinator_partition")
GROUP_ASSIGNMENT_FIELDS = ("cluster_id", "group", "group_type", "member_id", "topic", "topic_id", "partition",
                           "subtopology_id", "generation", "member_epoch", "pending_revocation", "from_time",
                           "assigned_from_offset", "assigned_from_timestamp", "to_time", "assigned_to_offset",
                           "assigned_to_timestamp", "coordinator_broker", "coordinator_partition")
GROUP_COMMIT_FIELDS = ("group", "topic", "partition", "committed_offset", "committed_leader_epoch", "commit_time",
                       "commit_timestamp", "tombstone", "coordinator_offset", "coordinator_broker",
                       "coordinator_partition")
GROUP_LAG_FIELDS = ("cluster_id", "group", "topic", "partition", "committed_offset", "last_commit_timestamp",
                    "log_end_offset", "last_stable_offset", "lag", "data_broker", "status", "owner_member_id",
                    "owner_client_id", "owner_client_host", "owned_until_offset", "owned_until_timestamp",
                    "coordinator_broker", "coordinator_partition")
SHARE_PARTITION_FIELDS = ("cluster_id", "group", "topic", "topic_id", "partition", "snapshot_epoch", "state_epoch",
                          "leader_epoch", "start_offset", "first_offset", "last_offset", "delivery_state",
                          "delivery_count", "coordinator_broker", "coordinator_partition", "coordinator_offset",
                          "timestamp")
#: The `type` of each `groups` JSON line, in the order a group's lines come.
GROUP_LINE_TYPES = ("member", "assignment", "commit", "lag", "share_partition")


def _during(row: dict[str, Any], start: str, end: str, at: int | None) -> bool:
    """Was the row's span [start, end) in force at `at` (ms; None: any time)?"""
    return at is None or ((row[start] is None or row[start] <= at) and (row[end] is None or at < row[end]))


def group_history(out: str, *, group: str | None = None, at: int | None = None) -> list[dict[str, Any]]:
    """`groups`: per group (by id), its members and the partitions they owned when (`group_members`,
    `group_assignments`; with `at`, those in force at that time, ms), its offset commits (`offset_commits`; with `at`,
    those written by then), its lag at the end of the input (`consumer_lag`) and, for a share group, its state per
    partition (`share_partition_state`): one JSON-lines row each, with `type` (GROUP_LINE_TYPES), in that order."""
    wanted = (lambda g: g == group) if group is not None else (lambda _g: True)
    lines: dict[str, list[dict[str, Any]]] = {}

    def add(kind: str, rows: Iterable[dict[str, Any]], fields: tuple[str, ...], key: Any) -> None:
        for r in sorted(rows, key=key):
            lines.setdefault(r["group"], []).append({"type": kind, **{f: r.get(f) for f in fields}})

    members = [{**r, "from_time": _utc(r["from_timestamp"]), "to_time": _utc(r["to_timestamp"])}
               for r in read_table(out, "group_members") if wanted(r["group"])
               and _during(r, "from_timestamp", "to_timestamp", at)]
    add("member", members, GROUP_MEMBER_FIELDS, lambda r: (r["from_offset"], r["member_id"] or ""))
    owned = [{**r, "from_time": _utc(r["assigned_from_timestamp"]), "to_time": _utc(r["assigned_to_timestamp"])}
             for r in read_table(out, "group_assignments") if wanted(r["group"])
             and _during(r, "assigned_from_timestamp", "assigned_to_timestamp", at)]
    add("assignment", owned, GROUP_ASSIGNMENT_FIELDS,
        lambda r: (r["topic"] or r["topic_id"] or "", r["partition"], r["assigned_from_offset"], r["member_id"]))
    lag = [r for r in read_table(out, "consumer_lag") if wanted(r["group"])]
    # the commits of the replica the replay read (a __consumer_offsets partition may be on several brokers)
    replayed = {(r["cluster_id"], r["coordinator_partition"]): r["coordinator_broker"]
                for r in [*members, *owned, *lag]}
    clusters = {b["broker"]: b["cluster_id"] or "" for b in read_table(out, "replicas", ["broker", "cluster_id"])}
    commits = [{**r, "group": r["group_id"], "topic": r["commit_topic"], "partition": r["commit_partition"],
                "coordinator_offset": r["offset"], "coordinator_broker": r["broker"],
                "coordinator_partition": f"{r['topic']}-{r['partition']}", "commit_time": _utc(r["commit_timestamp"])}
               for r in read_table(out, "offset_commits") if wanted(r["group_id"])
               and (at is None or r["timestamp"] is None or r["timestamp"] <= at)
               and replayed.get((clusters.get(r["broker"], ""), f"{r['topic']}-{r['partition']}"), r["broker"])
               == r["broker"]]
    add("commit", commits, GROUP_COMMIT_FIELDS,
        lambda r: (r["coordinator_broker"], r["coordinator_partition"], r["coordinator_offset"]))
    add("lag", lag, GROUP_LAG_FIELDS, lambda r: (r["topic"], r["partition"]))
    add("share_partition", [r for r in read_table(out, "share_partition_state") if wanted(r["group"])],
        SHARE_PARTITION_FIELDS, lambda r: (r["topic"] or r["topic_id"], r["partition"], r["first_offset"] or -1))
    return [line for g in sorted(lines) for line in lines[g]]


def ownership_spans(assignments: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`groups`' assignment lines of one group merged into who owned each partition when: consecutive spans of one
    member and partition (one ending where the next begins, pending revocation alike) as one row, with `epochs`
    (first-last generation or member epoch)."""
    spans: list[dict[str, Any]] = []
    for r in sorted(assignments, key=lambda r: (r["topic"] or r["topic_id"] or "", r["partition"], r["member_id"],
                                                r["assigned_from_offset"])):
        epoch = r["generation"] if r["generation"] is not None else r["member_epoch"]
        last = spans[-1] if spans else None
        same = ("topic", "topic_id", "partition", "member_id", "pending_revocation")
        if last and all(last[k] == r[k] for k in same) and last["to_offset"] == r["assigned_from_offset"]:
            last.update(to_offset=r["assigned_to_offset"], to_time=r["to_time"], last_epoch=epoch)
            continue
        spans.append({"topic": r["topic"], "topic_id": r["topic_id"], "partition": r["partition"],
                      "member_id": r["member_id"], "pending_revocation": r["pending_revocation"], "first_epoch": epoch,
                      "last_epoch": epoch, "from_offset": r["assigned_from_offset"], "from_time": r["from_time"],
                      "to_offset": r["assigned_to_offset"], "to_time": r["to_time"]})
    for s in spans:
        first, last_epoch = s.pop("first_epoch"), s.pop("last_epoch")
        s["epochs"] = None if first is None else str(first) if first == last_epoch else f"{first}-{last_epoch}"
    spans.sort(key=lambda s: (s["topic"] or s["topic_id"] or "", s["partition"], s["from_offset"], s["member_id"]))
    return spans
