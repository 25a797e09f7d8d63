"""The incidents of a finished scan (the `incidents` table): read with pyarrow, as `kforensics explain` prints them
(one JSON line per incident, or each as a short story on a terminal), and as the scan's summary and the HTML report
lead with them. No Spark."""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from typing import Any

from kforensics.parsers.findings import is_problem
from kforensics.scan_output import read_table

#: An incident's order in every listing: errors first, then warnings, then notes; the costliest first; then by time.
_SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}
#: The placeholder a plan's command names the scan's own output folder by (`explain` fills it in).
OUT_PLACEHOLDER = "<OUT>"


def load(out: str, incident: str | None = None) -> list[dict[str, Any]]:
    """The incidents of OUT (one, when `incident` names its id), in the order they are told."""
    rows = read_table(out, "incidents")
    if incident is not None:
        rows = [r for r in rows if r["incident_id"] == incident]
    return sorted(rows, key=lambda r: (_SEVERITY_ORDER.get(r["severity"], 3), -(r["records_lost"] or 0),
                                       r["started_at"] is None, r["started_at"] or 0, r["incident_id"]))


def filled(command: str, out: str) -> str:
    """A plan's command with the scan's output folder (shell-quoted) in place of its placeholder."""
    return command.replace(OUT_PLACEHOLDER, shlex.quote(out))


def json_line(r: dict[str, Any], out: str) -> dict[str, Any]:
    """An incident as `explain --json` prints it (docs/output.md: the contract)."""
    return {
        "type": "incident", "id": r["incident_id"], "severity": r["severity"], "cause": dict(r["cause"]),
        "title": r["title"], "started_at": r["started_at"], "findings": [dict(f) for f in r["findings"]],
        "cost": {"records_lost": r["records_lost"], "acknowledged_records_lost": r["acknowledged_records_lost"],
                 "lost_offsets": [dict(o) for o in r["lost_offsets"]], "groups_affected": list(r["groups_affected"]),
                 "transactions_stuck": r["transactions_stuck"]},
        "timeline": [dict(e) for e in r["timeline"]],
        "actions": [{**a, "command": filled(a["command"], out)} for a in r["actions"]],
        "unknown": list(r["unknown"]),
    }


def has_problems(incidents: Iterable[dict[str, Any]]) -> bool:
    return any(is_problem(r["severity"]) for r in incidents)


def cost_line(r: dict[str, Any]) -> str:
    """An incident's cost in one line (the scan's summary, the story's second line)."""
    parts = []
    if r["lost_offsets"] or r["records_lost"] is None:
        lost = "unknown" if r["records_lost"] is None else f"{r['records_lost']:,}"
        acked = "unknown" if r["acknowledged_records_lost"] is None else f"{r['acknowledged_records_lost']:,}"
        parts.append(f"records lost {lost} ({acked} acknowledged)")
        parts += [f"{o['topic']}-{o['partition']} {o['from']}-{o['to']} on {o['broker']}" for o in r["lost_offsets"]]
    if r["transactions_stuck"]:
        parts.append(f"{r['transactions_stuck']} transaction(s) stuck")
    if r["groups_affected"]:
        parts.append(f"groups {', '.join(r['groups_affected'])}")
    return "; ".join(parts) or "no records lost"


def summary_rows(incidents: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per incident: severity, id, title, cost (the scan's terminal output leads with these)."""
    return [{"severity": r["severity"], "incident": r["incident_id"], "findings": len(r["findings"]),
             "title": r["title"], "cost": cost_line(r)} for r in incidents]


SUMMARY_COLUMNS = ("severity", "incident", "findings", "title", "cost")
TIMELINE_COLUMNS = ("at", "broker", "event")
ACTION_COLUMNS = ("step", "command", "why", "destructive")


def timeline_rows(r: dict[str, Any]) -> list[dict[str, Any]]:
    from kforensics.times import iso

    return [{"at": iso(e["at"]) if e["at"] is not None else "", "broker": e["broker"], "event": e["event"]}
            for e in r["timeline"]]


def action_rows(r: dict[str, Any], out: str) -> list[dict[str, Any]]:
    return [{"step": a["step"], "command": filled(a["command"], out), "why": a["why"],
             "destructive": "DESTRUCTIVE" if a["destructive"] else ""} for a in r["actions"]]
