"""The report's load: everything `kforensics report` shows, read from the Parquet tables under a scan's OUT with
pyarrow (no Spark), small tables whole and batches per partition."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from kforensics import scan_output
from kforensics.defaults import DEFAULT_MAX_PLOTS
from kforensics.kinds import KINDS, shown_in
from kforensics.parsers.findings import is_problem

SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


read = scan_output.read_table


@dataclass
class Report:
    out: str
    summary: list[tuple[str, Any]] = field(default_factory=list)
    findings: list[dict[str, Any]] = field(default_factory=list)
    by_kind: list[dict[str, Any]] = field(default_factory=list)
    replicas: list[dict[str, Any]] = field(default_factory=list)
    coordinator: list[dict[str, Any]] = field(default_factory=list)
    consumer_offsets: list[dict[str, Any]] = field(default_factory=list)
    not_in_input: list[str] = field(default_factory=list)
    timelines: list[dict[str, Any]] = field(default_factory=list)  # per partition facts (also the plot list)
    divergences: list[dict[str, Any]] = field(default_factory=list)
    lineage: list[dict[str, Any]] = field(default_factory=list)  # one row per partition and epoch, brokers as columns
    lineage_brokers: list[str] = field(default_factory=list)
    tiered: list[dict[str, Any]] = field(default_factory=list)  # remote and local tiers (kforensics/tiered_report.py)
    restart_brokers: list[dict[str, Any]] = field(default_factory=list)  # per broker: what a restart discards
    restart_partitions: list[dict[str, Any]] = field(default_factory=list)  # the partitions that lose data
    #: (topic, partition) -> KRaft leadership history (kforensics/leadership_report.py)
    leadership: dict[tuple[str, int], dict[str, Any]] = field(default_factory=dict)
    eos: Any = None  # the exactly-once audit (kforensics/eos_report.py)
    #: consumer and share groups replayed (kforensics/groups_report.py)
    groups: list[dict[str, Any]] = field(default_factory=list)
    #: the incidents, in the order they are told (kforensics/incident_report.py)
    incidents: list[dict[str, Any]] = field(default_factory=list)

    @property
    def has_problems(self) -> bool:
        return any(is_problem(f["severity"]) for f in self.findings)


def load_report(out: str, max_plots: int = DEFAULT_MAX_PLOTS) -> Report:
    """Everything the report shows, from the tables under OUT (small tables whole, batches per partition).
    Raises scan_output.OutputError when OUT is not the output of a completed scan."""
    scan_output.require_complete(out)
    summary = scan_output.summarize(out)
    r = Report(out=out)
    segments = read(out, "segments", ["broker", "topic", "partition", "batch_count", "record_count", "size"])
    txns = read(out, "transactions")
    r.findings = sorted(read(out, "findings"), key=lambda f: (SEVERITY_ORDER.get(f["severity"], 3), f["kind"],
                                                                f["topic"] or "", f["partition"] or -1,
                                                                f["broker"] or "", f["offset"] or -1))
    for f in r.findings:
        f["details"] = json.loads(f["details"] or "{}")
    r.summary = [
        ("brokers", ", ".join(summary.brokers)), ("partitions (replicas)", summary.partitions),
        ("topic-partitions", summary.topic_partitions), ("segments", summary.segments), ("batches", summary.batches),
        ("records", summary.records), ("bytes", summary.bytes), ("producers", summary.producers),
        *((f"transactions {k}", v) for k, v in sorted(summary.transactions.items())),
        *((f"findings ({sev})", n) for sev, n in sorted(_by_severity(summary.findings).items(),
                                                         key=lambda kv: SEVERITY_ORDER.get(kv[0], 3))),
    ]
    counts = Counter((f["kind"], f["severity"]) for f in r.findings)
    r.by_kind = [{"kind": k, "severity": s, "count": n, "meaning": KINDS[k].meaning if k in KINDS else ""}
                 for (k, s), n in
                 sorted(counts.items(), key=lambda kv: (SEVERITY_ORDER.get(kv[0][1], 3), kv[0][0]))]
    r.replicas = sorted((x for x in read(out, "replicas") if (x["replica_count"] or 0) > 1),
                        key=lambda x: (x["topic"], x["partition"], x["broker"]))
    r.coordinator = sorted(read(out, "coordinator_transactions"),
                           key=lambda x: (x["transactional_id"], x["coordinator_first_offset"]))
    r.consumer_offsets = sorted(read(out, "consumer_offsets"), key=lambda x: (x["status"] == "ok", x["group_id"],
                                                                               x["topic"], x["partition"]))
    r.not_in_input = summary.not_in_input
    r.timelines = _timelines(out, segments, txns, r.findings, max_plots)
    r.divergences = [f for f in r.findings if f["kind"] in shown_in("divergence")]
    r.lineage, r.lineage_brokers = _lineage(out, r.replicas)
    from kforensics import tiered_report

    r.tiered = tiered_report.load_tiered(out, r.findings)
    r.restart_brokers, r.restart_partitions = restart_summary(read(out, "restart_prediction"))
    from kforensics import leadership_report

    r.leadership = leadership_report.load_leadership(out)
    from kforensics import eos_report, groups_report

    r.eos = eos_report.load_audit(out)
    r.groups = groups_report.load_groups(out, r.findings)
    from kforensics import incident_report

    r.incidents = incident_report.load(out)
    return r


RESTART_BROKER_COLUMNS = ["broker", "clean_shutdown", "fails_to_start", "partitions", "partitions_losing_data",
                          "bytes_discarded", "offsets_discarded", "committed_offsets_discarded", "segments_deleted"]
RESTART_PARTITION_COLUMNS = ["broker", "topic", "partition", "dir_state", "recovery_point", "truncate_at_offset",
                             "bytes_discarded", "segments_deleted", "offsets_discarded",
                             "committed_offsets_discarded", "reason"]


def _count(span: list[int] | None) -> int:
    return 0 if not span else span[1] - span[0] + 1


def restart_summary(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """From `restart_prediction`: per broker whether it would start and what a restart would discard (offsets
    counted over the [first, last] spans), brokers that would not start first; and the partition dirs that would
    lose bytes, most bytes first."""
    brokers: dict[str, dict[str, Any]] = {}
    losing = []
    for r in rows:
        b = brokers.setdefault(r["broker"], {"broker": r["broker"], "clean_shutdown": r["clean_shutdown"],
                                             "fails_to_start": False, "partitions": 0, "partitions_losing_data": 0,
                                             "bytes_discarded": 0, "offsets_discarded": 0,
                                             "committed_offsets_discarded": 0, "segments_deleted": 0})
        b["partitions"] += 1
        b["fails_to_start"] = b["fails_to_start"] or bool(r.get("restart_fails"))
        if r["bytes_discarded"]:
            losing.append({**r, **{k: "-".join(map(str, r[k])) if r[k] else None
                                   for k in ("offsets_discarded", "committed_offsets_discarded")}})
            b["partitions_losing_data"] += 1
            b["bytes_discarded"] += r["bytes_discarded"]
            b["segments_deleted"] += r["segments_deleted"] or 0
            b["offsets_discarded"] += _count(r["offsets_discarded"])
            b["committed_offsets_discarded"] += _count(r["committed_offsets_discarded"])
    losing.sort(key=lambda r: (r["broker"], -r["bytes_discarded"], r["topic"], r["partition"]))
    return sorted(brokers.values(), key=lambda b: (not b["fails_to_start"], -b["committed_offsets_discarded"],
                                                   -b["offsets_discarded"], -b["bytes_discarded"], b["broker"])), losing


def _by_severity(findings: list[tuple[str, str, int]]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for _kind, severity, n in findings:
        counts[severity] += n
    return counts


def _lineage(out: str, replicas: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """Leader epochs side by side: for partitions on several brokers, and wherever a checkpoint disagrees
    with the batches, each broker's `checkpoint start / first batch` per epoch ("-": absent)."""
    multi = {(x["topic"], x["partition"]) for x in replicas}
    rows = read(out, "leader_epoch_lineage")
    shown = multi | {(x["topic"], x["partition"]) for x in rows if x["agrees"] is False}
    table: dict[tuple, dict[str, Any]] = {}
    brokers: set[str] = set()
    for x in rows:
        if (x["topic"], x["partition"]) not in shown:
            continue
        brokers.add(x["broker"])
        row = table.setdefault((x["topic"], x["partition"], x["epoch"]),
                               {"topic": x["topic"], "partition": x["partition"], "epoch": x["epoch"],
                                "disagrees": False})
        mark = "" if x["agrees"] is not False else " (disagrees)"
        row[x["broker"]] = (f"{'-' if x['checkpoint_start_offset'] is None else x['checkpoint_start_offset']} / "
                            f"{'-' if x['batch_start_offset'] is None else x['batch_start_offset']}{mark}")
        row["disagrees"] |= x["agrees"] is False
    return [table[k] for k in sorted(table)], sorted(brokers)


def _timelines(out: str, segments: list[dict], txns: list[dict], findings: list[dict], max_plots: int) -> list[dict]:
    per: dict[tuple, dict[str, Any]] = {}
    for s in segments:
        key = (s["broker"], s["topic"], s["partition"])
        p = per.setdefault(key, {"broker": key[0], "topic": key[1], "partition": key[2], "batches": 0, "findings": 0,
                                 "transactions": []})
        p["batches"] += s["batch_count"] or 0
    for t in txns:
        p = per.get((t["broker"], t["topic"], t["partition"]))
        if p is not None:
            p[t["outcome"].lower()] = p.get(t["outcome"].lower(), 0) + 1
            p["transactions"].append(t)  # for the plot (the table is read once)
    for f in findings:
        p = per.get((f["broker"], f["topic"], f["partition"]))
        if p is not None and is_problem(f["severity"]):
            p["findings"] += 1
    lso = {(x["broker"], x["topic"], x["partition"]): x for x in read(out, "lso")}
    for key, p in per.items():
        x = lso.get(key, {})
        p.update(last_stable_offset=x.get("last_stable_offset"), log_end_offset=x.get("log_end_offset"),
                 high_watermark=x.get("high_watermark"))
    ranked = sorted(per.values(), key=lambda p: (-p["findings"], p["topic"], p["partition"], p["broker"]))
    for i, p in enumerate(ranked):
        p["plotted"] = i < max_plots
    return ranked
