"""The report on a terminal: rich tables (every string from the scan shown literally: kforensics.render)."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from kforensics.report.load import RESTART_BROKER_COLUMNS, RESTART_PARTITION_COLUMNS, SEVERITY_ORDER, Report


def render_terminal(report: Report, console: Any) -> None:
    """The report as rich tables (every string from the scan shown literally: kforensics.render)."""
    from kforensics import render

    def table(title: str, rows: list[dict[str, Any]], columns: list[str]) -> None:
        console.print(render.table(rows, columns, title, cell=lambda v: render.text(cell_text(v)), title_justify="left",
                                   show=False))

    from kforensics import incident_report

    if report.incidents:
        table("incidents (kforensics explain OUT tells each)", incident_report.summary_rows(report.incidents),
              list(incident_report.SUMMARY_COLUMNS))
    console.print(render.facts(f"kforensics report — {report.out}", report.summary, title_justify="left"))
    if report.restart_brokers:  # before anything else: what restarting each broker would throw away
        table("if each broker restarted now (restart_prediction)", report.restart_brokers, RESTART_BROKER_COLUMNS)
    if report.restart_partitions:
        table("partitions a restart would cut", report.restart_partitions, RESTART_PARTITION_COLUMNS)
    table("findings by kind", report.by_kind, ["kind", "severity", "count", "meaning"])
    for (kind, _sev), group in grouped(report.findings):
        table(f"{kind} ({len(group)})", group, ["severity", "broker", "topic", "partition", "offset", "position",
                                                 "producer_id", "message"])
    if report.replicas:
        table("replicas", report.replicas, ["topic", "partition", "broker", "log_start_offset", "log_end_offset",
                                            "high_watermark", "latest_leader_epoch", "leader_epoch_checkpoint", "lag",
                                            "diverged_at", "in_sync"])
    if report.lineage:
        table("leader-epoch lineage (checkpoint start / first batch, per broker)", report.lineage,
              ["topic", "partition", "epoch", *report.lineage_brokers, "disagrees"])
    for f in report.divergences:
        d = f["details"]
        table(f"divergence of {f['topic']}-{f['partition']} at offset {d['offset']}", d.get("replicas") or [],
              ["broker", "leader_epoch_at_offset", "log_end_offset", "high_watermark", "leader_epoch_checkpoint"])
    if report.coordinator:
        table("coordinator transactions", report.coordinator,
              ["transactional_id", "producer_id", "producer_epoch", "outcome", "states", "partitions",
               "txn_start_timestamp", "completed_at", "coordinator_partition", "partitions_not_in_input"])
    if report.consumer_offsets:
        table("consumer offsets", report.consumer_offsets,
              ["group_id", "topic", "partition", "committed_offset", "log_start_offset", "log_end_offset", "lag",
               "status"])
    if report.groups:
        from kforensics import groups_report

        table("consumer groups (`kforensics groups OUT --group G` for who owned what when)", report.groups,
              groups_report.COLUMNS)
    if report.not_in_input:
        render.line("Partitions named by a coordinator or a group but not in the input (not judged): "
                    + ", ".join(report.not_in_input), out=console)
    from kforensics import tiered_report

    tiered_report.render_terminal(report.tiered, table)
    from kforensics import eos_report

    if report.eos is not None:
        eos_report.render_terminal(report.eos, table)
    elections = [r for p in report.leadership.values() for r in p["history"]
                 if r["election"] not in ("none", "initial", "snapshot")]
    if elections:
        table("leader elections (KRaft metadata log; `kforensics leaders` for every change)", elections,
              ["topic", "partition", "metadata_offset", "leader_epoch", "leader", "previous_leader", "previous_isr",
               "election", "metadata_broker"])
    table("partitions", report.timelines, ["broker", "topic", "partition", "batches", "commit", "abort", "open",
                                           "last_stable_offset", "high_watermark", "log_end_offset", "findings"])


def grouped(findings: list[dict[str, Any]]) -> list[tuple[tuple[str, str], list[dict[str, Any]]]]:
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for f in findings:
        groups[(f["kind"], f["severity"])].append(f)
    return sorted(groups.items(), key=lambda kv: (SEVERITY_ORDER.get(kv[0][1], 3), kv[0][0]))


def cell_text(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(cell_text(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, default=str)
    return str(value)
