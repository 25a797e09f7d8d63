"""The report as one self-contained HTML file: inline CSS and inline SVG figures, no script and nothing fetched from
the network."""

from __future__ import annotations

import html
import os
from collections import defaultdict
from datetime import UTC, datetime
from typing import Any

from kforensics.render import html_attr, html_text
from kforensics.report.anchors import finding_anchor, timeline_anchor
from kforensics.report.figures import divergence_view, svg, timeline_figure
from kforensics.report.load import RESTART_BROKER_COLUMNS, RESTART_PARTITION_COLUMNS, Report
from kforensics.report.terminal import cell_text, grouped

#: The generator tag of the HTML report: how `report --html` recognises a file it may replace.
GENERATOR = "kforensics report"

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em;color:#1b1f24;max-width:1400px}
h1{font-size:1.6em}h2{margin-top:2em;border-bottom:2px solid #d0d7de;padding-bottom:.2em}h3{margin-top:1.4em}
table{border-collapse:collapse;margin:.6em 0;font-size:.85em}th,td{border:1px solid #d0d7de;padding:.25em .5em;
text-align:left;vertical-align:top}th{background:#f6f8fa}td.num{text-align:right;font-variant-numeric:tabular-nums}
.error{color:#b42318;font-weight:600}.warning{color:#b54708;font-weight:600}.info{color:#475467}
figure{margin:1em 0}figcaption{font-size:.85em;color:#475467}svg{max-width:100%;height:auto}
nav a{margin-right:1em}.muted{color:#667085}
"""


def render_html(report: Report, path: str) -> None:
    """Write the report as one self-contained HTML file."""
    import matplotlib

    matplotlib.use("Agg")
    parts: list[str] = []
    w = parts.append
    w(f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><meta name='generator' content='{GENERATOR}'>")
    w(f"<title>kforensics report — {html_attr(report.out)}</title><style>{CSS}</style></head><body>")
    w(f"<h1>kforensics report</h1><p class='muted'>scan output <code>{html_text(report.out)}</code>, "
      f"written {datetime.now(UTC).strftime('%Y-%m-%d %H:%M:%SZ')}</p>")
    w("<nav><a href='#incidents'>incidents</a><a href='#summary'>summary</a><a href='#restart'>restart</a><a href='#findings'>findings</a><a href='#replicas'>replicas</a>"
      "<a href='#coordinator'>coordinator</a><a href='#offsets'>consumer offsets</a><a href='#eos'>exactly-once</a>"
      "<a href='#groups'>groups</a>"
      "<a href='#tiered'>tiered storage</a><a href='#timelines'>timelines</a></nav>")
    w(incidents_section(report))
    w("<h2 id='summary'>Summary</h2>")
    w(html_table([{"what": k, "value": v} for k, v in report.summary], ["what", "value"], css_id="summary-table"))
    if report.restart_brokers:
        w("<h2 id='restart'>If each broker restarted now</h2><p class='muted'>What the broker's log loading would "
          "discard with these disks as they are (no clean-shutdown marker: unflushed segments re-validated from the "
          "recovery point, truncated at the first invalid batch, later segments deleted). Save it first: "
          "<code>kforensics export --from-finding OUT:restart_would_truncate</code>.</p>")
        w(html_table(report.restart_brokers, RESTART_BROKER_COLUMNS, css_id="restart-brokers"))
        if report.restart_partitions:
            w(html_table(report.restart_partitions, RESTART_PARTITION_COLUMNS, css_id="restart-partitions"))
    w(html_table(report.by_kind, ["kind", "severity", "count", "meaning"], css_id="findings-by-kind"))
    if report.not_in_input:
        w("<p>Named by a coordinator or a group but not in the input, so not judged: "
          + ", ".join(f"<code>{html_text(p)}</code>" for p in report.not_in_input) + "</p>")

    w("<h2 id='findings'>Findings by kind and partition</h2>")
    if not report.findings:
        w("<p>No findings.</p>")
    for (kind, severity), group in grouped(report.findings):
        w(f"<section class='finding-kind' id='kind-{html_attr(kind)}' data-kind='{html.escape(kind)}'><h3>"
          f"<span class='{severity}'>{severity}</span> {html.escape(kind)} ({len(group)})</h3>")
        by_partition: dict[tuple, list[dict]] = defaultdict(list)
        for f in group:
            by_partition[(f["topic"] or "", f["partition"] if f["partition"] is not None else -1)].append(f)
        for (topic, partition), rows in sorted(by_partition.items()):
            label = f"{topic}-{partition}" if topic else "(broker-level)"
            w(f"<h4 id='{finding_anchor(kind, topic, partition)}'>{html_text(label)}</h4>")
            w(html_table(rows, ["broker", "offset", "file", "position", "producer_id", "producer_epoch", "message"],
                          css_class="findings"))
        w("</section>")

    w("<h2 id='replicas'>Replicas</h2>")
    if report.replicas:
        w(html_table(report.replicas, ["topic", "partition", "broker", "log_start_offset", "log_end_offset",
                                        "high_watermark", "latest_leader_epoch", "leader_epoch_checkpoint",
                                        "longest_broker", "lag", "diverged_at", "in_sync"], css_id="replicas-table"))
    else:
        w("<p>No topic-partition was found on more than one broker.</p>")
    if report.lineage:
        w("<h3>Leader-epoch lineage</h3><p class='muted'>Per epoch and broker: start offset in leader-epoch-checkpoint"
          " / first batch carrying the epoch (- absent).</p>")
        w(html_table(report.lineage, ["topic", "partition", "epoch", *report.lineage_brokers, "disagrees"],
                      css_id="lineage-table"))
    for f in report.divergences:
        w(divergence_view(report.out, f, html_table))

    w("<h2 id='coordinator'>Transaction coordinator</h2>")
    if report.coordinator:
        w(html_table(report.coordinator, ["transactional_id", "producer_id", "producer_epoch", "outcome", "states",
                                           "partitions", "transaction_timeout_ms", "txn_start_timestamp",
                                           "completed_at", "coordinator_partition", "coordinator_first_offset",
                                           "partitions_not_in_input"], css_id="coordinator-table"))
    else:
        w("<p>No <code>__transaction_state</code> partition in the input.</p>")
    w("<h2 id='offsets'>Consumer offsets</h2>")
    if report.consumer_offsets:
        w(html_table(report.consumer_offsets, ["group_id", "topic", "partition", "committed_offset",
                                                "log_start_offset", "log_end_offset", "lag", "status",
                                                "coordinator_partition", "coordinator_offset"],
                      css_id="consumer-offsets-table"))
    else:
        w("<p>No <code>__consumer_offsets</code> partition in the input.</p>")

    from kforensics import eos_report, groups_report, tiered_report

    w("<h2 id='eos'>Exactly-once</h2>")
    if report.eos is not None:
        w(eos_report.html_section(report.eos, html_table))
    w(groups_report.html_section(report.groups, lambda rows, columns, css_id: html_table(rows, columns, css_id=css_id),
                                 svg))
    w("<h2 id='tiered'>Tiered storage</h2>")
    if report.tiered:
        w("<p class='muted'>Per tiered partition: the offsets the remote tier holds (COPY_SEGMENT_FINISHED segments, "
          "from <code>__remote_log_metadata</code>), segments in other states, the local log, and the offsets neither "
          "holds. Its coverage is drawn under the partition's timeline.</p>")
        w(html_table(report.tiered, tiered_report.COLUMNS, css_id="tiered-table"))
    else:
        w("<p>No <code>__remote_log_metadata</code> partition in the input.</p>")
    w("<h2 id='timelines'>Partition timelines</h2><p class='muted'>Offsets over time per replica: batches "
      "(dots), transactions (bars: committed green, aborted red, open orange), the last stable offset (step line) "
      "and sequence gaps (crosses). Partitions with findings first. Where the cluster's KRaft metadata log is in "
      "the input, the partition's leadership follows its first timeline: a lane per replica (the leader epochs it "
      "led, with their first data offset; the ISR; unclean elections crossed) and a lane per broker (fenced, "
      "controlled shutdown).</p>")
    w(html_table(report.timelines, ["broker", "topic", "partition", "batches", "commit", "abort", "open",
                                     "last_stable_offset", "high_watermark", "log_end_offset", "findings"],
                  css_id="partitions-table"))
    from kforensics import leadership_report

    drawn: set[tuple[str, int]] = set()
    for p in report.timelines:
        if p["plotted"]:
            w(timeline_figure(report.out, p, report.findings))
            for row in report.tiered:
                if (row["broker"], row["topic"], row["partition"]) == (p["broker"], p["topic"], p["partition"]):
                    w(tiered_report.coverage_figure(row, svg))
            tp = (p["topic"], p["partition"])
            if tp in report.leadership and tp not in drawn:  # once per partition, under its first timeline
                drawn.add(tp)
                w(leadership_report.leadership_figure(*tp, report.leadership[tp], svg))
    w("</body></html>\n")
    # a whole file or none: written beside the target, then renamed over it
    partial = f"{path}.{os.getpid()}.partial"
    try:
        with open(partial, "w", encoding="utf-8") as fh:
            fh.write("".join(parts))
        os.replace(partial, path)
    finally:
        if os.path.exists(partial):
            os.unlink(partial)


def incidents_section(report: Report) -> str:
    """The report's first section: each incident, its cost, its timeline, its next steps, and links to its findings
    and to the timelines of the partitions they are about."""
    from kforensics import incident_report

    parts = ["<h2 id='incidents'>Incidents</h2>"]
    if not report.incidents:
        parts.append("<p>No incident: the scan found nothing that is wrong.</p>")
        return "".join(parts)
    parts.append("<p class='muted'>Each incident is a root cause and the findings that follow from it "
                 "(<code>kforensics explain OUT</code> prints the same). Its steps come in order: what saves data "
                 "first; <span class='error'>destructive</span> marks a step that discards or hides data.</p>")
    plotted = {(p["broker"], p["topic"], p["partition"]) for p in report.timelines if p["plotted"]}
    for r in report.incidents:
        iid = html_attr(r["incident_id"])
        parts.append(f"<section class='incident' id='incident-{iid}' data-incident='{iid}'>"
                     f"<h3><span class='{html_attr(r['severity'])}'>{html_text(r['severity'])}</span> "
                     f"{html_text(r['title'])}</h3><p><b>cost</b>: {html_text(incident_report.cost_line(r))}</p>")
        for note in r["unknown"]:
            parts.append(f"<p><b>unknown</b>: {html_text(note)}</p>")
        links = []
        for f in r["findings"]:
            links.append(f"<a href='#{finding_anchor(f['kind'], f['topic'], f['partition'])}'>"
                         f"{html_text(f['kind'])} {html_text(f['broker'])} "
                         f"{html_text(f['topic'] or '')}-{f['partition'] if f['partition'] is not None else ''}</a>")
            key = (f["broker"], f["topic"], f["partition"])
            if key in plotted:
                links.append(f"<a href='#{timeline_anchor(*key)}'>timeline of {html_text(f['topic'])}-"
                             f"{f['partition']} on {html_text(f['broker'])}</a>")
        parts.append("<p><b>findings</b>: " + ", ".join(dict.fromkeys(links)) + "</p>")
        if r["timeline"]:
            parts.append(html_table(incident_report.timeline_rows(r), list(incident_report.TIMELINE_COLUMNS),
                                    css_class="incident-timeline"))
        if r["actions"]:
            parts.append(html_table(incident_report.action_rows(r, report.out), list(incident_report.ACTION_COLUMNS),
                                    css_class="incident-actions"))
        parts.append("</section>")
    return "".join(parts)


def is_report(path: str) -> bool:
    """Is the file at `path` an HTML report kforensics wrote (its generator tag in the first few KB)?"""
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    return f"<meta name='generator' content='{GENERATOR}'>".encode() in head


def _cell(column: str, value: Any) -> str:
    if value is None:
        return "<td></td>"
    if column == "severity":
        return f"<td class='{html.escape(str(value))}'>{html.escape(str(value))}</td>"
    if isinstance(value, bool):
        return f"<td>{'yes' if value else 'no'}</td>"
    if isinstance(value, int | float):
        return f"<td class='num'>{value:,}</td>" if isinstance(value, int) and column not in (
            "partition", "producer_id", "offset", "position", "producer_epoch") else f"<td class='num'>{value}</td>"
    return f"<td>{html_text(cell_text(value))}</td>"


def html_table(rows: list[dict[str, Any]], columns: list[str], css_id: str | None = None,
                css_class: str | None = None) -> str:
    attrs = (f" id='{css_id}'" if css_id else "") + (f" class='{css_class}'" if css_class else "")
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(_cell(c, r.get(c)) for c in columns) + "</tr>" for r in rows)
    return f"<table{attrs}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
