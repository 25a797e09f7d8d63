"""Incidents: the findings grouped by what caused them. The links between findings are SQL rules
(spark/sql/link_*.sql: each ties an effect finding to the finding that caused it, citing the Kafka behaviour it rests
on); which cause each finding follows from, and the root cause of each chain, is the graph walk below, a Python model
(`incident_members`) over the few rows of the links; the incidents' cost, timeline and actions are models of their
own (spark/sql/incident_*.sql, and `incident_actions` here).

Rules of the walk:
- a finding claimed as the effect of several causes follows the link of the lowest rank, then the cause of the
  lowest finding id (deterministic whatever the order Spark gives the rows);
- an incident is a root finding (one no chosen link names as an effect) and every finding that follows from it,
  however long the chain; a cycle (two findings each the other's chosen cause) is broken at its lowest finding id;
- every warning and error finding belongs to exactly one incident, its own when no link ties it to another; an info
  finding belongs to one only when a link ties it (a note that explains nothing more stands in the findings table);
- an incident's id is its root finding's id (stable within one OUT, and across scans of the same disks).
"""

from __future__ import annotations

import shlex
from typing import Any

import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from kforensics.parsers.findings import is_problem
from kforensics.spark.registry import python_model

MEMBERS = "finding_id string, incident_id string, caused_by string, rule string"


def members(findings: pd.DataFrame, links: pd.DataFrame) -> pd.DataFrame:
    """The walk (see the module docstring) over the findings (finding_id, severity) and the links (cause_id,
    effect_id, rule, rank): one row per finding that belongs to an incident."""
    known = set(findings["finding_id"])
    chosen: dict[str, tuple[str, str]] = {}  # effect -> (cause, rule)
    candidates = sorted((int(r.rank), str(r.cause_id), str(r.effect_id), str(r.rule)) for r in links.itertuples()
                         if r.cause_id in known and r.effect_id in known and r.cause_id != r.effect_id)
    for _rank, cause, effect, rule in candidates:
        chosen.setdefault(effect, (cause, rule))
    linked = set(chosen) | {cause for cause, _ in chosen.values()}
    problems = {f for f, s in zip(findings["finding_id"], findings["severity"], strict=True) if is_problem(s)}

    def root(finding: str) -> str:
        path, seen = [finding], {finding}
        while path[-1] in chosen:
            cause = chosen[path[-1]][0]
            if cause in seen:  # a cycle: broken at its lowest id
                cycle = path[path.index(cause):]
                return min(cycle)
            seen.add(cause)
            path.append(cause)
        return path[-1]

    rows = []
    for finding in sorted(problems | linked):
        cause, rule = chosen.get(finding, (None, None))
        rows.append((finding, root(finding), cause, rule))
    return pd.DataFrame(rows, columns=["finding_id", "incident_id", "caused_by", "rule"])


# no member without a problem finding or a link (the walk's rules above)
@python_model("incident_members", inputs=("finding_rows", "finding_links"), columns=MEMBERS, keep=True,
              empty_when={"and": ["problem_findings", "finding_links"]},
              doc="Each finding that belongs to an incident: its incident (the root cause's finding id), the finding it "
                  "follows from (`caused_by`, null for the root) and the link rule that says so.")
def incident_members(finding_rows: DataFrame, finding_links: DataFrame) -> DataFrame:
    # one group: the findings and links of a scan are few (a graph walk, not a data-sized job)
    rows = finding_rows.select(F.lit(0).alias("g"), "finding_id", "severity",
                               F.lit(None).cast("string").alias("cause_id"),
                               F.lit(None).cast("string").alias("effect_id"), F.lit(None).cast("string").alias("rule"),
                               F.lit(None).cast("int").alias("rank"))
    edges = finding_links.select(F.lit(0).alias("g"), F.lit(None).cast("string").alias("finding_id"),
                                 F.lit(None).cast("string").alias("severity"), "cause_id", "effect_id", "rule", "rank")

    def walk(group: pd.DataFrame) -> pd.DataFrame:
        findings = group[group["finding_id"].notna()]
        links = group[group["cause_id"].notna()]
        return members(findings, links)

    return rows.unionByName(edges).groupBy("g").applyInPandas(walk, MEMBERS)


# --- an incident's story: its timeline and its plan ----------------------------------------------------------------

STORY = "incident_id string, timeline_json string, actions_json string"
_KEEP_NULLS = {"ignoreNullFields": "false"}  # every column a key, null or not


class _Values(dict):
    """A finding's columns, detail fields and facts for a template: a field the finding lacks (or holds null) fails
    the template, which is then left out (never a command with a hole in it)."""

    def __missing__(self, key: str) -> Any:
        raise KeyError(key)

    def __getitem__(self, key: str) -> Any:
        value = dict.__getitem__(self, key)
        if value is None:
            raise KeyError(key)
        return _Shown(value) if isinstance(value, list) else value


class _Shown(list):
    """A list field in a template: `{isr}` reads 1,2,3; `{lost_offsets[0]}` its first element."""

    def __format__(self, spec: str) -> str:
        return ",".join(str(v) for v in self)


class _Quoted(_Values):
    """A command's values: each string shell-quoted (a topic, group or path read from a disk is data, never shell
    syntax: the operator pastes the line), so `payments` stays `payments` and `a;b` becomes `'a;b'`."""

    def __getitem__(self, key: str) -> Any:
        value = super().__getitem__(key)
        return shlex.quote(value) if isinstance(value, str) else value


def _fill(template: str | None, values: _Values) -> str | None:
    if not template:
        return None
    try:
        return template.format_map(values)
    except (KeyError, IndexError, ValueError):
        return None


def story(findings: list[dict[str, Any]], events: list[dict[str, Any]]) -> tuple[list[dict], list[dict]]:
    """One incident's timeline (its findings that say when, and its other events, in time; those with no time last,
    by offset; a timed finding's event says whose clock gave its time) and its plan (every action its findings declare, filled with their values: `save` steps first, then
    `verify`, then `repair`, the root cause's first within a phase; a command another finding already gave is given
    once)."""
    import json

    from kforensics.kinds import KINDS
    from kforensics.spark.registry import PHASES

    ordered = sorted(findings, key=lambda f: (not f["is_root"], f.get("depth") or 0, f["topic"] or "",
                                              f["partition"] if f["partition"] is not None else -1,
                                              f["offset"] if f["offset"] is not None else -1, f["kind"]))
    timeline: list[dict[str, Any]] = []
    planned: list[tuple[int, int, dict[str, Any]]] = []
    for order, f in enumerate(ordered):
        kind = KINDS.get(f["kind"])
        if kind is None:
            continue
        details = json.loads(f["details"] or "{}")
        values = _Values({**details, **{k: v for k, v in f.items() if k != "details"}})
        text = _fill(kind.event, values) or f["message"]
        at = details.get(kind.at) if kind.at else None
        at = at if isinstance(at, int) else None
        if at is not None:  # whose clock: a producer's CreateTime may precede what a broker saw first
            text = f"{text} ({kind.clock})"
        timeline.append({"at": at, "broker": f["broker"], "event": text,
                         "offset": f["offset"], "metadata_offset": details.get("metadata_offset")})
        for action in kind.actions:
            command = _fill(action["command"], _Quoted(values))
            if command:
                planned.append((PHASES.index(action["phase"]), order, {
                    "command": command, "why": _fill(action["why"], values) or action["why"],
                    "destructive": action["destructive"]}))
    # a metadata record a finding tells already (an election's own finding) is told once, by the finding
    told = {(e["at"], e.get("metadata_offset")) for e in timeline}
    timeline += [{"at": e["at"], "broker": e["broker"], "event": e["event"], "offset": e["offset"]} for e in events
                 if (e["at"], e["offset"]) not in told]
    timeline.sort(key=lambda e: (e["at"] is None, e["at"] or 0, e["offset"] if e["offset"] is not None else -1,
                                 e["event"]))
    actions, seen = [], set()
    for _phase, _order, action in sorted(planned, key=lambda p: (p[0], p[1])):
        if action["command"] not in seen:
            seen.add(action["command"])
            actions.append({"step": len(actions) + 1, **action})
    return [{k: e[k] for k in ("at", "broker", "event")} for e in timeline], actions


@python_model("incident_story", inputs=("incident_findings", "incident_events"), columns=STORY,
              empty_when={"and": ["incident_findings", "incident_events"]},  # one row per incident of their rows
              doc="Each incident's timeline and plan as JSON (`story`: the findings' declared events and actions, "
                  "filled with their values).")
def incident_story(incident_findings: DataFrame, incident_events: DataFrame) -> DataFrame:
    import json

    columns = [c for c in incident_findings.columns]
    found = incident_findings.select(F.col("incident_id"), F.lit("finding").alias("row"),
                                     F.to_json(F.struct(*columns), _KEEP_NULLS).alias("json"))
    events = incident_events.select(F.col("incident_id"), F.lit("event").alias("row"),
                                    F.to_json(F.struct("at", "broker", "offset", "event"), _KEEP_NULLS).alias("json"))

    def tell(group: pd.DataFrame) -> pd.DataFrame:
        rows = [(r, json.loads(j)) for r, j in zip(group["row"], group["json"], strict=True)]
        timeline, actions = story([j for r, j in rows if r == "finding"], [j for r, j in rows if r == "event"])
        return pd.DataFrame([(group["incident_id"].iloc[0], json.dumps(timeline), json.dumps(actions))],
                            columns=["incident_id", "timeline_json", "actions_json"])

    return found.unionByName(events).groupBy("incident_id").applyInPandas(tell, STORY)
