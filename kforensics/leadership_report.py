"""The report's view of the KRaft control plane: per partition, who led which leader epoch (a lane per replica), the
ISR, unclean elections marked, the data's leader epochs beside them, and a lane per broker for fencing and
controlled shutdowns. Reads `partition_history`, `broker_history` and `leader_epochs`; no Spark."""

from __future__ import annotations

from typing import Any

from kforensics import scan_output
from kforensics.render import html_attr, html_text, plot_text
from kforensics.times import utc_datetime

ELECTION_COLORS = {"initial": "#475467", "snapshot": "#475467", "clean": "#12b76a", "elr": "#2e90fa", "unclean": "#d92d20",
                   "offline": "#98a2b3", "none": "#475467"}


def load_leadership(out: str) -> dict[tuple[str, int], dict[str, Any]]:
    """(topic, partition) -> {"history": its partition_history rows in order, "brokers": its cluster's
    broker_history rows, "epoch_starts": {leader epoch: (broker, start offset), ...} from leader-epoch-checkpoint}."""
    history = scan_output.read_table(out, "partition_history")
    if not history:
        return {}
    brokers = scan_output.read_table(out, "broker_history")
    epochs = scan_output.read_table(out, "leader_epochs")
    per: dict[tuple[str, int], dict[str, Any]] = {}
    for r in sorted(history, key=lambda r: r["metadata_offset"]):
        if r["topic"] is None:
            continue
        p = per.setdefault((r["topic"], r["partition"]), {"history": [], "epoch_starts": {}, "brokers": [
            b for b in brokers if b["cluster_id"] == r["cluster_id"]]})
        p["history"].append(r)
    for e in epochs:
        p = per.get((e["topic"], e["partition"]))
        if p is not None:
            p["epoch_starts"].setdefault(e["epoch"], []).append((e["broker"], e["start_offset"]))
    return per


def leadership_figure(topic: str, partition: int, p: dict[str, Any], svg: Any) -> str:
    """Lanes over time: one per replica (led epoch N: a bar labelled with the epoch; in the ISR: a thin bar;
    elected uncleanly: a red cross), one per broker (fenced: grey; controlled shutdown: an orange triangle)."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    rows = p["history"]
    events = sorted(p["brokers"], key=lambda b: b["metadata_offset"])
    replicas = sorted({b for r in rows for b in (r["replicas"] or [])} | {r["leader"] for r in rows
                                                                         if r["leader"] is not None and r["leader"] >= 0})
    times = [r["timestamp"] for r in rows] + [b["timestamp"] for b in events]
    start, end = min(times), max(times)
    end = end + max(1, (end - start) // 20)
    lanes = {b: i for i, b in enumerate(replicas)}
    broker_ids = sorted({b["broker_id"] for b in events} & set(replicas))
    broker_lane = {b: len(replicas) + i for i, b in enumerate(broker_ids)}
    fig, ax = plt.subplots(figsize=(10, 1.0 + 0.45 * (len(lanes) + len(broker_lane))))
    for i, r in enumerate(rows):
        t0, t1 = utc_datetime(r["timestamp"]), utc_datetime(rows[i + 1]["timestamp"] if i + 1 < len(rows) else end)
        width = t1 - t0
        for b in r["isr"] or []:
            if b in lanes:
                ax.barh(lanes[b] + 0.3, width, left=t0, height=0.12, color="#12b76a", alpha=0.6)
        if r["leader"] is not None and r["leader"] in lanes:
            ax.barh(lanes[r["leader"]], width, left=t0, height=0.4, color="#7a5af8" if
                    r["leader_recovery_state"] != "RECOVERING" else "#f79009", edgecolor="white", linewidth=0.5)
            if r["election"] != "none":
                starts = p["epoch_starts"].get(r["leader_epoch"])
                label = f"e{r['leader_epoch']}" + (f" @{min(o for _, o in starts)}" if starts else "")
                ax.text(t0, lanes[r["leader"]], f" {label}", fontsize=7, va="center", color="white",
                        fontweight="bold", clip_on=True)
        if r["election"] == "unclean":
            ax.scatter([t0], [lanes.get(r["leader"], 0)], marker="x", s=80, color="#d92d20", zorder=5)
    for b in broker_ids:
        fenced_since = None
        for e in [e for e in events if e["broker_id"] == b]:
            t = utc_datetime(e["timestamp"])
            if e["fenced"] and fenced_since is None:
                fenced_since = t
            elif not e["fenced"] and fenced_since is not None:
                ax.barh(broker_lane[b], t - fenced_since, left=fenced_since, height=0.4, color="#98a2b3")
                fenced_since = None
            if e["event"] == "controlled_shutdown":
                ax.scatter([t], [broker_lane[b]], marker="v", s=50, color="#f79009", zorder=5)
        if fenced_since is not None:
            ax.barh(broker_lane[b], utc_datetime(end) - fenced_since, left=fenced_since, height=0.4, color="#98a2b3")
    ax.set_yticks([*lanes.values(), *broker_lane.values()],
                  [f"replica {b}" for b in lanes] + [f"broker {b}" for b in broker_lane])
    ax.invert_yaxis()
    ax.set_xlim(utc_datetime(start), utc_datetime(end))
    ax.set_xlabel("time (UTC, metadata record timestamp)")
    ax.set_title(plot_text(f"{topic}-{partition}: leadership from the metadata log"))
    ax.grid(axis="x", alpha=0.3)
    handles = [Patch(color="#7a5af8", label="leader (eN @offset: leader epoch, its first data offset)"),
               Patch(color="#f79009", label="leader, recovering"), Patch(color="#12b76a", alpha=0.5, label="in ISR"),
               Line2D([], [], marker="x", color="#d92d20", linestyle="", label="unclean election"),
               Patch(color="#98a2b3", label="broker fenced"),
               Line2D([], [], marker="v", color="#f79009", linestyle="", label="controlled shutdown")]
    ax.legend(handles=handles, loc="upper left", fontsize=7, bbox_to_anchor=(1.01, 1.0))
    fig.autofmt_xdate()
    elections = [r for r in rows if r["election"] not in ("none", "initial", "snapshot")]
    caption = (f"{html_text(topic)}-{partition}: " + "; ".join(
        f"epoch {r['leader_epoch']} {r['election']} (leader {r['leader']}, metadata offset {r['metadata_offset']})"
        for r in elections) if elections else f"{html_text(topic)}-{partition}: no leader change")
    return (f"<figure class='leadership' data-partition='{html_attr(topic)}-{partition}'>{svg(fig)}"
            f"<figcaption>{caption}</figcaption></figure>")
