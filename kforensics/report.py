"""`kforensics report`: the tables of a finished scan as an incident-review document.

Reads the Parquet tables under a scan's OUT with pyarrow (no Spark) and renders either rich tables on a
terminal or one self-contained HTML file: inline CSS and inline SVG plots drawn by matplotlib, no
script and nothing fetched from the network.
"""

from __future__ import annotations

import html
import io
import json
import os
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from kforensics import scan_output
from kforensics.defaults import DEFAULT_MAX_PLOTS
from kforensics.parsers.findings import KINDS, SEQUENCE_KINDS, is_problem
from kforensics.render import html_attr, html_text, plot_text
from kforensics.times import utc_datetime

SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}
#: The generator tag of the HTML report: how `report --html` recognises a file it may replace.
GENERATOR = "kforensics report"
#: Batches plotted per partition at most (evenly thinned beyond that).
MAX_POINTS = 4000
#: Offsets shown on each side of a divergence in the replica comparison.
DIVERGENCE_WINDOW = 40


_read = scan_output.read_table


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

    @property
    def has_problems(self) -> bool:
        return any(is_problem(f["severity"]) for f in self.findings)


def load_report(out: str, max_plots: int = DEFAULT_MAX_PLOTS) -> Report:
    """Everything the report shows, from the tables under OUT (small tables whole, batches per partition).
    Raises scan_output.OutputError when OUT is not the output of a completed scan."""
    scan_output.require_complete(out)
    summary = scan_output.summarize(out)
    r = Report(out=out)
    segments = _read(out, "segments", ["broker", "topic", "partition", "batch_count", "record_count", "size"])
    txns = _read(out, "transactions")
    r.findings = sorted(_read(out, "findings"), key=lambda f: (SEVERITY_ORDER.get(f["severity"], 3), f["kind"],
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
    r.replicas = sorted((x for x in _read(out, "replicas") if (x["replica_count"] or 0) > 1),
                        key=lambda x: (x["topic"], x["partition"], x["broker"]))
    r.coordinator = sorted(_read(out, "coordinator_transactions"),
                           key=lambda x: (x["transactional_id"], x["coordinator_first_offset"]))
    r.consumer_offsets = sorted(_read(out, "consumer_offsets"), key=lambda x: (x["status"] == "ok", x["group_id"],
                                                                               x["topic"], x["partition"]))
    r.not_in_input = summary.not_in_input
    r.timelines = _timelines(out, segments, txns, r.findings, max_plots)
    r.divergences = [f for f in r.findings if f["kind"] == "replica_divergence"]
    r.lineage, r.lineage_brokers = _lineage(out, r.replicas)
    from kforensics import tiered_report

    r.tiered = tiered_report.load_tiered(out, r.findings)
    r.restart_brokers, r.restart_partitions = restart_summary(_read(out, "restart_prediction"))
    from kforensics import leadership_report

    r.leadership = leadership_report.load_leadership(out)
    from kforensics import eos_report, groups_report

    r.eos = eos_report.load_audit(out)
    r.groups = groups_report.load_groups(out, r.findings)
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
    rows = _read(out, "leader_epoch_lineage")
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
    lso = {(x["broker"], x["topic"], x["partition"]): x for x in _read(out, "lso")}
    for key, p in per.items():
        x = lso.get(key, {})
        p.update(last_stable_offset=x.get("last_stable_offset"), log_end_offset=x.get("log_end_offset"),
                 high_watermark=x.get("high_watermark"))
    ranked = sorted(per.values(), key=lambda p: (-p["findings"], p["topic"], p["partition"], p["broker"]))
    for i, p in enumerate(ranked):
        p["plotted"] = i < max_plots
    return ranked


# --- terminal -------------------------------------------------------------------------------------

def render_terminal(report: Report, console: Any) -> None:
    """The report as rich tables (every string from the scan shown literally: kforensics.render)."""
    from kforensics import render

    def table(title: str, rows: list[dict[str, Any]], columns: list[str]) -> None:
        console.print(render.table(rows, columns, title, cell=lambda v: render.text(_text(v)), title_justify="left",
                                   show=False))

    console.print(render.facts(f"kforensics report — {report.out}", report.summary, title_justify="left"))
    if report.restart_brokers:  # before anything else: what restarting each broker would throw away
        table("if each broker restarted now (restart_prediction)", report.restart_brokers, RESTART_BROKER_COLUMNS)
    if report.restart_partitions:
        table("partitions a restart would cut", report.restart_partitions, RESTART_PARTITION_COLUMNS)
    table("findings by kind", report.by_kind, ["kind", "severity", "count", "meaning"])
    for (kind, _sev), group in _grouped(report.findings):
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
    elections = [r for p in report.leadership.values() for r in p["history"] if r["election"] not in ("none",
                                                                                                        "initial")]
    if elections:
        table("leader elections (KRaft metadata log; `kforensics leaders` for every change)", elections,
              ["topic", "partition", "metadata_offset", "leader_epoch", "leader", "previous_leader", "previous_isr",
               "election", "metadata_broker"])
    table("partitions", report.timelines, ["broker", "topic", "partition", "batches", "commit", "abort", "open",
                                           "last_stable_offset", "high_watermark", "log_end_offset", "findings"])


def _grouped(findings: list[dict[str, Any]]) -> list[tuple[tuple[str, str], list[dict[str, Any]]]]:
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for f in findings:
        groups[(f["kind"], f["severity"])].append(f)
    return sorted(groups.items(), key=lambda kv: (SEVERITY_ORDER.get(kv[0][1], 3), kv[0][0]))


def _text(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(_text(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, default=str)
    return str(value)


# --- HTML -----------------------------------------------------------------------------------------

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
    w("<nav><a href='#summary'>summary</a><a href='#restart'>restart</a><a href='#findings'>findings</a><a href='#replicas'>replicas</a>"
      "<a href='#coordinator'>coordinator</a><a href='#offsets'>consumer offsets</a><a href='#eos'>exactly-once</a>"
      "<a href='#groups'>groups</a>"
      "<a href='#tiered'>tiered storage</a><a href='#timelines'>timelines</a></nav>")
    w("<h2 id='summary'>Summary</h2>")
    w(_html_table([{"what": k, "value": v} for k, v in report.summary], ["what", "value"], css_id="summary-table"))
    if report.restart_brokers:
        w("<h2 id='restart'>If each broker restarted now</h2><p class='muted'>What the broker's log loading would "
          "discard with these disks as they are (no clean-shutdown marker: unflushed segments re-validated from the "
          "recovery point, truncated at the first invalid batch, later segments deleted). Save it first: "
          "<code>kforensics export --from-finding OUT:restart_would_truncate</code>.</p>")
        w(_html_table(report.restart_brokers, RESTART_BROKER_COLUMNS, css_id="restart-brokers"))
        if report.restart_partitions:
            w(_html_table(report.restart_partitions, RESTART_PARTITION_COLUMNS, css_id="restart-partitions"))
    w(_html_table(report.by_kind, ["kind", "severity", "count", "meaning"], css_id="findings-by-kind"))
    if report.not_in_input:
        w("<p>Named by a coordinator or a group but not in the input, so not judged: "
          + ", ".join(f"<code>{html_text(p)}</code>" for p in report.not_in_input) + "</p>")

    w("<h2 id='findings'>Findings by kind and partition</h2>")
    if not report.findings:
        w("<p>No findings.</p>")
    for (kind, severity), group in _grouped(report.findings):
        w(f"<section class='finding-kind' data-kind='{html.escape(kind)}'><h3><span class='{severity}'>{severity}"
          f"</span> {html.escape(kind)} ({len(group)})</h3>")
        by_partition: dict[tuple, list[dict]] = defaultdict(list)
        for f in group:
            by_partition[(f["topic"] or "", f["partition"] if f["partition"] is not None else -1)].append(f)
        for (topic, partition), rows in sorted(by_partition.items()):
            label = f"{topic}-{partition}" if topic else "(broker-level)"
            w(f"<h4>{html_text(label)}</h4>")
            w(_html_table(rows, ["broker", "offset", "file", "position", "producer_id", "producer_epoch", "message"],
                          css_class="findings"))
        w("</section>")

    w("<h2 id='replicas'>Replicas</h2>")
    if report.replicas:
        w(_html_table(report.replicas, ["topic", "partition", "broker", "log_start_offset", "log_end_offset",
                                        "high_watermark", "latest_leader_epoch", "leader_epoch_checkpoint",
                                        "longest_broker", "lag", "diverged_at", "in_sync"], css_id="replicas-table"))
    else:
        w("<p>No topic-partition was found on more than one broker.</p>")
    if report.lineage:
        w("<h3>Leader-epoch lineage</h3><p class='muted'>Per epoch and broker: start offset in leader-epoch-checkpoint"
          " / first batch carrying the epoch (- absent).</p>")
        w(_html_table(report.lineage, ["topic", "partition", "epoch", *report.lineage_brokers, "disagrees"],
                      css_id="lineage-table"))
    for f in report.divergences:
        w(_divergence_view(report.out, f))

    w("<h2 id='coordinator'>Transaction coordinator</h2>")
    if report.coordinator:
        w(_html_table(report.coordinator, ["transactional_id", "producer_id", "producer_epoch", "outcome", "states",
                                           "partitions", "transaction_timeout_ms", "txn_start_timestamp",
                                           "completed_at", "coordinator_partition", "coordinator_first_offset",
                                           "partitions_not_in_input"], css_id="coordinator-table"))
    else:
        w("<p>No <code>__transaction_state</code> partition in the input.</p>")
    w("<h2 id='offsets'>Consumer offsets</h2>")
    if report.consumer_offsets:
        w(_html_table(report.consumer_offsets, ["group_id", "topic", "partition", "committed_offset",
                                                "log_start_offset", "log_end_offset", "lag", "status",
                                                "coordinator_partition", "coordinator_offset"],
                      css_id="consumer-offsets-table"))
    else:
        w("<p>No <code>__consumer_offsets</code> partition in the input.</p>")

    from kforensics import eos_report, groups_report, tiered_report

    w("<h2 id='eos'>Exactly-once</h2>")
    if report.eos is not None:
        w(eos_report.html_section(report.eos, _html_table))
    w(groups_report.html_section(report.groups, lambda rows, columns, css_id: _html_table(rows, columns, css_id=css_id),
                                 _svg))
    w("<h2 id='tiered'>Tiered storage</h2>")
    if report.tiered:
        w("<p class='muted'>Per tiered partition: the offsets the remote tier holds (COPY_SEGMENT_FINISHED segments, "
          "from <code>__remote_log_metadata</code>), segments in other states, the local log, and the offsets neither "
          "holds. Its coverage is drawn under the partition's timeline.</p>")
        w(_html_table(report.tiered, tiered_report.COLUMNS, css_id="tiered-table"))
    else:
        w("<p>No <code>__remote_log_metadata</code> partition in the input.</p>")
    w("<h2 id='timelines'>Partition timelines</h2><p class='muted'>Offsets over time per replica: batches "
      "(dots), transactions (bars: committed green, aborted red, open orange), the last stable offset (step line) "
      "and sequence gaps (crosses). Partitions with findings first. Where the cluster's KRaft metadata log is in "
      "the input, the partition's leadership follows its first timeline: a lane per replica (the leader epochs it "
      "led, with their first data offset; the ISR; unclean elections crossed) and a lane per broker (fenced, "
      "controlled shutdown).</p>")
    w(_html_table(report.timelines, ["broker", "topic", "partition", "batches", "commit", "abort", "open",
                                     "last_stable_offset", "high_watermark", "log_end_offset", "findings"],
                  css_id="partitions-table"))
    from kforensics import leadership_report

    drawn: set[tuple[str, int]] = set()
    for p in report.timelines:
        if p["plotted"]:
            w(_timeline_figure(report.out, p, report.findings))
            for row in report.tiered:
                if (row["broker"], row["topic"], row["partition"]) == (p["broker"], p["topic"], p["partition"]):
                    w(tiered_report.coverage_figure(row, _svg))
            tp = (p["topic"], p["partition"])
            if tp in report.leadership and tp not in drawn:  # once per partition, under its first timeline
                drawn.add(tp)
                w(leadership_report.leadership_figure(*tp, report.leadership[tp], _svg))
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
    return f"<td>{html_text(_text(value))}</td>"


def _html_table(rows: list[dict[str, Any]], columns: list[str], css_id: str | None = None,
                css_class: str | None = None) -> str:
    attrs = (f" id='{css_id}'" if css_id else "") + (f" class='{css_class}'" if css_class else "")
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(_cell(c, r.get(c)) for c in columns) + "</tr>" for r in rows)
    return f"<table{attrs}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _svg(fig: Any) -> str:
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
    rows = _read(out, "batches", columns, filters)
    if len(rows) > MAX_POINTS:
        rows = rows[::-(-len(rows) // MAX_POINTS)]
    return rows


def _timeline_figure(out: str, p: dict[str, Any], findings: list[dict[str, Any]]) -> str:
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
    changes = [c for c in _read(out, "lso_changes", filters=[("broker", "=", key[0]), ("topic", "=", key[1]),
                                                             ("partition", "=", key[2])])
               if offset_ts.get(c["offset"]) is not None]
    if changes:
        changes.sort(key=lambda c: c["offset"])
        ax.step([utc_datetime(offset_ts[c["offset"]]) for c in changes], [c["last_stable_offset"] for c in changes],
                where="post", color="#7a5af8", linewidth=1.2, label="last stable offset", zorder=4)
    gaps = [f for f in findings if (f["broker"], f["topic"], f["partition"]) == key
            and f["kind"] in SEQUENCE_KINDS and f["kind"] != "content_duplicate" and f["offset"] in offset_ts]
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
    return (f"<figure class='timeline' data-partition='{html_attr(key[1])}-{key[2]}' "
            f"data-broker='{html_attr(key[0])}'>{_svg(fig)}<figcaption>{caption}</figcaption></figure>")


def _divergence_view(out: str, f: dict[str, Any]) -> str:
    """Batches of every replica around a divergence: bars over offsets, coloured by leader epoch."""
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
    table = _html_table(sorted(rows_html, key=lambda r: (r["base_offset"], r["broker"])),
                        ["broker", "base_offset", "last_offset", "partition_leader_epoch", "producer_id", "crc"],
                        css_class="divergence-batches")
    return (f"<figure class='divergence' data-partition='{html_attr(f['topic'])}-{f['partition']}'>{_svg(fig)}"
            f"<figcaption>{html_text(f['message'])}</figcaption></figure>"
            f"<details><summary>batches around offset {offset}</summary>{table}</details>")
