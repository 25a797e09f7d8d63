"""The report's view of consumer groups: per group, a lane per partition colored by the member that owned it over time
(from `group_assignments`; hatched while pending revocation), beside a table of its members and lag. Reads
`group_members`, `group_assignments`, `consumer_lag` and `share_partition_state`; no Spark."""

from __future__ import annotations

from typing import Any

from kforensics import scan_output
from kforensics.render import html_attr, html_text, plot_text
from kforensics.times import utc_datetime

#: Owners' colors, in the order members first own something.
PALETTE = ("#2e90fa", "#12b76a", "#f79009", "#7a5af8", "#ee46bc", "#0e9384", "#d92d20", "#667085", "#84cc16",
           "#155eef")
#: Groups drawn at most (those with findings first, then the most partitions).
MAX_FIGURES = 20
COLUMNS = ["group", "group_type", "coordinator_partition", "members", "partitions", "commits_lag", "findings"]


def load_groups(out: str, findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per group the scan replayed or saw commits of: group, group_type, coordinator_partition, members
    (distinct member ids), partitions (owned at some time), commits_lag (total lag of its committed partitions),
    findings (partition_owned_twice and share kinds naming it), and what to draw (`assignments`)."""
    members = scan_output.read_table(out, "group_members")
    assignments = scan_output.read_table(out, "group_assignments")
    lag = scan_output.read_table(out, "consumer_lag")
    share = scan_output.read_table(out, "share_partition_state")
    rows: dict[str, dict[str, Any]] = {}

    def row(r: dict[str, Any]) -> dict[str, Any]:
        return rows.setdefault(r["group"], {"group": r["group"], "group_type": r.get("group_type"),
                                            "coordinator_partition": r.get("coordinator_partition"),
                                            "members": set(), "partitions": set(), "commits_lag": None,
                                            "findings": 0, "assignments": []})

    for m in members:
        row(m)["members"].add(m["member_id"])
    for a in assignments:
        g = row(a)
        g["partitions"].add((a["topic"] or a["topic_id"], a["partition"]))
        g["assignments"].append(a)
    for r in lag:
        g = row(r)
        if r["lag"] is not None:
            g["commits_lag"] = (g["commits_lag"] or 0) + r["lag"]
    for s in share:
        g = row(s)
        g["group_type"] = g["group_type"] or "share"
        g["partitions"].add((s["topic"] or s["topic_id"], s["partition"]))
    for f in findings:
        group = (f.get("details") or {}).get("group")
        if group in rows and (f["kind"] == "partition_owned_twice" or f["kind"].startswith("share_")):
            rows[group]["findings"] += 1
    out_rows = []
    for g in rows.values():
        out_rows.append({**g, "members": len(g["members"]), "partitions": len(g["partitions"])})
    return sorted(out_rows, key=lambda g: (-g["findings"], g["group"]))


def ownership_figure(g: dict[str, Any], svg: Any) -> str:
    """A lane per partition of the group, a bar per span a member owned it (its color; hatched while pending
    revocation), over the coordinator's record timestamps."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    spans = g["assignments"]
    lanes = sorted({(a["topic"] or a["topic_id"] or "?", a["partition"]) for a in spans})
    owners: dict[str, str] = {}
    for a in sorted(spans, key=lambda a: a["assigned_from_offset"]):
        owners.setdefault(a["member_id"], PALETTE[len(owners) % len(PALETTE)])
    times = [t for a in spans for t in (a["assigned_from_timestamp"], a["assigned_to_timestamp"]) if t is not None]
    start, end = min(times), max(times)
    end = end + max(1000, (end - start) // 10)
    fig, ax = plt.subplots(figsize=(10, 1.0 + 0.35 * len(lanes)))
    lane_of = {lane: i for i, lane in enumerate(lanes)}
    for a in spans:
        t0 = utc_datetime(a["assigned_from_timestamp"])
        t1 = utc_datetime(a["assigned_to_timestamp"] if a["assigned_to_timestamp"] is not None else end)
        ax.barh(lane_of[(a["topic"] or a["topic_id"] or "?", a["partition"])], t1 - t0, left=t0, height=0.6,
                color=owners[a["member_id"]], edgecolor="white", linewidth=0.5,
                hatch="//" if a["pending_revocation"] else None, alpha=0.6 if a["pending_revocation"] else 1.0)
    ax.set_yticks(list(lane_of.values()), [plot_text(f"{t}-{p}") for t, p in lanes])
    ax.invert_yaxis()
    ax.set_xlim(utc_datetime(start), utc_datetime(end))
    ax.set_xlabel("time (UTC, coordinator record timestamp)")
    ax.set_title(plot_text(f"{g['group']} ({g['group_type']}): who owned each partition"))
    ax.grid(axis="x", alpha=0.3)
    handles = [Patch(color=color, label=plot_text(member)) for member, color in list(owners.items())[:12]]
    handles.append(Patch(facecolor="white", edgecolor="#475467", hatch="//", label="pending revocation"))
    ax.legend(handles=handles, loc="upper left", fontsize=7, bbox_to_anchor=(1.01, 1.0))
    fig.autofmt_xdate()
    return (f"<figure class='group-ownership' data-group='{html_attr(g['group'])}'>{svg(fig)}"
            f"<figcaption>{html_text(g['group'])}: {len(owners)} member(s) over {len(lanes)} partition(s), "
            f"{html_text(g['coordinator_partition'] or '')}</figcaption></figure>")


def html_section(groups: list[dict[str, Any]], table: Any, svg: Any) -> str:
    """The report's "Consumer groups" section: the groups' table, then a figure per group with assignments (at most
    MAX_FIGURES)."""
    parts = ["<h2 id='groups'>Consumer groups</h2>"]
    if not groups:
        parts.append("<p>No group record in the input (<code>__consumer_offsets</code>, "
                     "<code>__share_group_state</code>).</p>")
        return "".join(parts)
    parts.append("<p class='muted'>Groups replayed from <code>__consumer_offsets</code> (classic, consumer, streams "
                 "and "
                 "share groups) and <code>__share_group_state</code>: a lane per partition, colored by the member "
                 "that owned it (hatched: pending revocation). <code>kforensics groups OUT --group G</code> lists "
                 "every span, commit and lag.</p>")
    parts.append(table(groups, COLUMNS, "groups-table"))
    for g in [g for g in groups if g["assignments"]][:MAX_FIGURES]:
        parts.append(ownership_figure(g, svg))
    return "".join(parts)
