"""The remote tier in `kforensics report`: per tiered partition, what the remote tier holds (from the
`remote_segments` table) and what the local log holds (the `segments` table), side by side over offsets,
with the ranges neither holds (`remote_log_gap` findings)."""

from __future__ import annotations

import os
from typing import Any

import pyarrow.parquet as pq

from kforensics.render import html_attr, html_text, plot_text

STATE_COLORS = {"COPY_SEGMENT_FINISHED": "#12b76a", "COPY_SEGMENT_STARTED": "#f79009",
                "DELETE_SEGMENT_STARTED": "#98a2b3", "DELETE_SEGMENT_FINISHED": "#e4e7ec"}
COLUMNS = ["topic", "partition", "broker", "remote_finished", "remote_other", "local", "missing", "findings"]


def _read(out: str, table: str) -> list[dict[str, Any]]:
    path = os.path.join(out, table)
    return pq.read_table(path).to_pylist() if os.path.isdir(path) else []


def _ranges(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Offset ranges merged where they touch or overlap."""
    merged: list[list[int]] = []
    for lo, hi in sorted(pairs):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    return [(lo, hi) for lo, hi in merged]


def _text(ranges: list[tuple[int, int]]) -> str:
    return ", ".join(f"{lo}-{hi}" for lo, hi in ranges)


def load_tiered(out: str, findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per tiered partition and local replica (or per partition when no local replica is in the input):
    remote_finished / remote_other (ranges by state), local (first to last offset of its segments), missing
    (from remote_log_gap findings), findings (remote kinds), and the segments to draw."""
    remote = _read(out, "remote_segments")
    if not remote:
        return []
    local: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for s in _read(out, "segments"):
        if s["last_offset"] is not None:
            first = s["first_batch_base_offset"] if s["first_batch_base_offset"] is not None else s["base_offset"]
            local.setdefault((s["topic"], s["partition"]), []).append({**s, "first": first})
    rows = []
    for topic, partition in sorted({(r["topic"], r["partition"]) for r in remote}):
        segs = [r for r in remote if (r["topic"], r["partition"]) == (topic, partition) and r["start_offset"] is not None]
        finished = _ranges([(r["start_offset"], r["end_offset"]) for r in segs if r["state"] == "COPY_SEGMENT_FINISHED"])
        other = sorted({(r["start_offset"], r["end_offset"], r["state"]) for r in segs
                        if r["state"] != "COPY_SEGMENT_FINISHED"})
        replicas: dict[str, list[dict[str, Any]]] = {}
        for s in local.get((topic, partition), []):
            replicas.setdefault(s["broker"], []).append(s)
        for broker in sorted(replicas) or [None]:
            mine = [f for f in findings if f["kind"].startswith("remote_") and f["topic"] == topic
                    and f["partition"] == partition and (broker is None or f["broker"] == broker
                                                         or f["kind"] in ("remote_segment_stuck", "remote_overlap"))]
            lsegs = replicas.get(broker, []) if broker else []
            rows.append({
                "topic": topic, "partition": partition, "broker": broker or "(no local replica)",
                "remote_finished": _text(finished),
                "remote_other": ", ".join(f"{lo}-{hi} {state}" for lo, hi, state in other),
                "local": _text(_ranges([(s["first"], s["last_offset"]) for s in lsegs])),
                "missing": ", ".join(f"{m[0]}-{m[1]}" for f in mine if f["kind"] == "remote_log_gap"
                                     for m in [f["details"].get("missing_offsets") or [None, None]]),
                "findings": len(mine), "remote_segments": segs, "local_segments": lsegs,
            })
    return rows


def render_terminal(rows: list[dict[str, Any]], table: Any) -> None:
    """The coverage table, through report.render_terminal's table(title, rows, columns)."""
    if rows:
        table("tiered storage: remote and local coverage (offset ranges)", rows, COLUMNS)


def coverage_figure(row: dict[str, Any], svg: Any) -> str:
    """The two tiers of one partition as lanes over offsets: remote segments coloured by state, local segments,
    and the ranges neither holds shaded red."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    segs = sorted(row["remote_segments"], key=lambda r: (r["start_offset"], r["first_event_at"] or 0))
    fig, ax = plt.subplots(figsize=(10, 1.9))
    # overlapping remote segments are stacked within the remote lane
    ends: list[int] = []  # the last offset of each stack
    placed = []
    for r in segs:
        stack = next((i for i, end in enumerate(ends) if end < r["start_offset"]), len(ends))
        if stack == len(ends):
            ends.append(r["end_offset"])
        ends[stack] = r["end_offset"]
        placed.append((stack, r))
    height = 0.6 / max(1, len(ends))
    for stack, r in placed:
        ax.barh(0.7 + height * (stack + 0.5), r["end_offset"] - r["start_offset"] + 1, left=r["start_offset"],
                height=height, color=STATE_COLORS.get(r["state"], "#475467"), edgecolor="white", linewidth=0.8)
    for s in row["local_segments"]:
        ax.barh(0, s["last_offset"] - s["first"] + 1, left=s["first"], height=0.6, color="#475467",
                edgecolor="white", linewidth=0.8)
    for part in filter(None, row["missing"].split(", ")):
        lo, hi = (int(x) for x in part.split("-"))
        ax.axvspan(lo, hi + 1, color="#f04438", alpha=0.2)
    ax.set_yticks([0, 1], [plot_text(f"local log ({row['broker']})"), "remote tier"])
    ax.set_xlabel("offset")
    ax.set_title(plot_text(f"{row['topic']}-{row['partition']}: remote and local tiers"))
    handles = [Patch(color=c, label=s.lower().replace("_", " ")) for s, c in STATE_COLORS.items()
               if any(r["state"] == s for r in segs)]
    handles += [Patch(color="#475467", label="local segment")]
    if row["missing"]:
        handles.append(Patch(color="#f04438", alpha=0.2, label=f"in neither tier: {row['missing']}"))
    ax.legend(handles=handles, loc="upper left", fontsize=7, ncol=3, bbox_to_anchor=(0, -0.35))
    ax.grid(axis="x", alpha=0.3)
    caption = (f"{html_text(row['topic'])}-{row['partition']} on {html_text(row['broker'])}: remote (finished) "
               f"{row['remote_finished'] or 'none'}; local {row['local'] or 'none'}"
               + (f"; in neither tier {row['missing']}" if row["missing"] else ""))
    return (f"<figure class='tiered' data-partition='{html_attr(row['topic'])}-{row['partition']}' "
            f"data-broker='{html_attr(row['broker'])}'>{svg(fig)}<figcaption>{caption}</figcaption></figure>")
