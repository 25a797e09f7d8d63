"""The report's figures, drawn by matplotlib as inline SVG: a partition's timeline (batches, transactions, the last
stable offset, sequence gaps) and the replicas around a divergence."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

from kforensics.kinds import shown_in
from kforensics.render import html_attr, html_text, plot_text
from kforensics.report.anchors import timeline_anchor
from kforensics.report.load import read
from kforensics.times import utc_datetime

#: Batches plotted per partition at most (evenly thinned beyond that).
MAX_POINTS = 4000
#: Offsets shown on each side of a divergence in the replica comparison.
DIVERGENCE_WINDOW = 40


def svg(fig: Any) -> str:
    import matplotlib.pyplot as plt

    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]  # drop the XML prolog and DOCTYPE: inline SVG in HTML


def _batches(out: str, broker: str, topic: str, partition: int, columns: list[str], lo: int | None = None,
             hi: int | None = None) -> list[dict[str, Any]]:
    filters = [("broker", "=", broker), ("topic", "=", topic), ("partition", "=", partition)]
    if lo is not None:
        filters += [("last_offset", ">=", lo), ("base_offset", "<=", hi)]
    rows = read(out, "batches", columns, filters)
    if len(rows) > MAX_POINTS:
        rows = rows[::-(-len(rows) // MAX_POINTS)]
    return rows


def timeline_figure(out: str, p: dict[str, Any], findings: list[dict[str, Any]]) -> str:
    import matplotlib.pyplot as plt

    key = (p["broker"], p["topic"], p["partition"])
    rows = [b for b in _batches(out, *key, ["base_offset", "last_offset", "max_timestamp", "is_control",
                                            "crc_valid"]) if b["max_timestamp"] is not None and b["max_timestamp"] >= 0]
    fig, ax = plt.subplots(figsize=(10, 3.2))
    data = [b for b in rows if not b["is_control"]]
    ax.scatter([utc_datetime(b["max_timestamp"]) for b in data], [b["base_offset"] for b in data], s=6, color="#475467",
               label="batches", zorder=2)
    colors = {"COMMIT": "#12b76a", "ABORT": "#f04438", "OPEN": "#f79009"}
    seen: set[str] = set()
    end_ts = max((b["max_timestamp"] for b in rows), default=None)
    for t in p["transactions"][:2000]:
        if t["first_offset"] is None or t["first_timestamp"] is None:
            continue
        last = t["marker_offset"] if t["marker_offset"] is not None else t["last_data_offset"]
        # no marker: open to the log end, or complete with its marker cleaned away (its end unknown: a point)
        t_end = t["first_timestamp"] + (t["duration_ms"] or 0) if t["duration_ms"] is not None else \
            end_ts if t["outcome"] == "OPEN" else t["first_timestamp"]
        label = t["outcome"].lower() if t["outcome"] not in seen else None
        seen.add(t["outcome"])
        ax.plot([utc_datetime(t["first_timestamp"]), utc_datetime(t_end)], [t["first_offset"], last], color=colors[t["outcome"]],
                linewidth=4, alpha=0.6, solid_capstyle="butt", label=label, zorder=3)
    offset_ts = {b["base_offset"]: b["max_timestamp"] for b in rows}
    changes = [c for c in read(out, "lso_changes", filters=[("broker", "=", key[0]), ("topic", "=", key[1]),
                                                             ("partition", "=", key[2])])
               if offset_ts.get(c["offset"]) is not None]
    if changes:
        changes.sort(key=lambda c: c["offset"])
        ax.step([utc_datetime(offset_ts[c["offset"]]) for c in changes], [c["last_stable_offset"] for c in changes],
                where="post", color="#7a5af8", linewidth=1.2, label="last stable offset", zorder=4)
    gaps = [f for f in findings if (f["broker"], f["topic"], f["partition"]) == key
            and f["kind"] in shown_in("gaps") and f["kind"] != "content_duplicate" and f["offset"] in offset_ts]
    if gaps:
        ax.scatter([utc_datetime(offset_ts[f["offset"]]) for f in gaps], [f["offset"] for f in gaps], marker="x", s=60,
                   color="#d92d20", label="sequence anomaly", zorder=5)
    ax.set_xlabel("time (UTC, batch max timestamp)")
    ax.set_ylabel("offset")
    ax.set_title(plot_text(f"{key[1]}-{key[2]} on {key[0]}"))
    ax.grid(alpha=0.3)
    if rows:
        ax.legend(loc="upper left", fontsize=7)
    fig.autofmt_xdate()
    caption = (f"{html_text(key[1])}-{key[2]} on {html_text(key[0])}: {p['batches']:,} batches, LSO "
               f"{p.get('last_stable_offset')}, high watermark {p.get('high_watermark')}, log end "
               f"{p.get('log_end_offset')}, {p['findings']} findings")
    return (f"<figure class='timeline' id='{timeline_anchor(*key)}' data-partition='{html_attr(key[1])}-{key[2]}' "
            f"data-broker='{html_attr(key[0])}'>{svg(fig)}<figcaption>{caption}</figcaption></figure>")


def divergence_view(out: str, f: dict[str, Any], html_table: Callable[..., str]) -> str:
    """Batches of every replica around a divergence: bars over offsets, coloured by leader epoch, and their table
    (`html_table`: the HTML page's)."""
    import matplotlib.pyplot as plt

    d = f["details"]
    offset = d["offset"]
    lo, hi = max(0, offset - DIVERGENCE_WINDOW), offset + DIVERGENCE_WINDOW
    replicas = d.get("replicas") or []
    fig, ax = plt.subplots(figsize=(10, 1.2 + 0.8 * len(replicas)))
    cmap = plt.get_cmap("tab10")
    rows_html = []
    for i, rep in enumerate(replicas):
        batches = _batches(out, rep["broker"], f["topic"], f["partition"],
                           ["base_offset", "last_offset", "partition_leader_epoch", "producer_id", "crc"], lo, hi)
        for b in batches:
            ax.barh(i, b["last_offset"] - b["base_offset"] + 1, left=b["base_offset"], height=0.6,
                    color=cmap(max(0, b["partition_leader_epoch"]) % 10), edgecolor="white", linewidth=0.5)
            rows_html.append({"broker": rep["broker"], **b})
        if rep.get("high_watermark") is not None and lo <= rep["high_watermark"] <= hi:
            ax.plot([rep["high_watermark"]] * 2, [i - 0.4, i + 0.4], color="black", linewidth=2)
    lost = d.get("lost_offsets")
    if lost:
        ax.axvspan(lost[0], lost[1] + 1, color="#f04438", alpha=0.15, label=f"lost committed offsets {lost[0]}-{lost[1]}")
    ax.axvline(offset, color="#d92d20", linestyle="--", label=f"divergence at {offset}")
    ax.set_yticks(range(len(replicas)), [plot_text(r["broker"]) for r in replicas])
    ax.set_xlabel("offset (bar colour: partition leader epoch; black tick: high watermark)")
    ax.set_title(plot_text(f"{f['topic']}-{f['partition']}: replicas around offset {offset}"))
    ax.legend(loc="upper left", fontsize=7)
    table = html_table(sorted(rows_html, key=lambda r: (r["base_offset"], r["broker"])),
                        ["broker", "base_offset", "last_offset", "partition_leader_epoch", "producer_id", "crc"],
                        css_class="divergence-batches")
    return (f"<figure class='divergence' data-partition='{html_attr(f['topic'])}-{f['partition']}'>{svg(fig)}"
            f"<figcaption>{html_text(f['message'])}</figcaption></figure>"
            f"<details><summary>batches around offset {offset}</summary>{table}</details>")
