"""`kforensics eos`: the exactly-once audit of a finished scan. Per transactional id, its producer ids and epochs over
time (`producer_lineage`), its transactions across partitions by outcome and the offset commits each carried with
their fate; per consumer group, which input offsets were committed atomically with which outputs; and the findings
that say exactly-once did not hold. Rows in their JSON-lines form (a contract, docs/output.md); reads the Parquet
tables with pyarrow. Library code: no click, no rich, no Spark.

A transaction spans partitions: its rows of the `transactions` table (one per partition replica) are grouped by
producer id and epoch (under Transactions V2 every transaction has an epoch of its own: the coordinator bumps it at
every end), and within one epoch (Transactions V1) by overlapping time spans (first batch to marker)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from kforensics.kinds import shown_in
from kforensics.parsers.findings import is_problem
from kforensics.queries import finding_line
from kforensics.scan_output import read_table

PRODUCER_FIELDS = ("cluster_id", "transactional_id", "producer_id", "first_epoch", "last_epoch", "previous_producer_id",
                   "next_producer_id", "transaction_version", "source", "first_coordinator_timestamp",
                   "last_coordinator_timestamp", "first_data_timestamp", "last_data_timestamp")
TRANSACTION_FIELDS = ("cluster_id", "transactional_id", "producer_id", "producer_epoch", "outcome", "first_timestamp",
                      "end_timestamp", "partitions", "offset_commits")
GROUP_FIELDS = ("cluster_id", "group", "topic", "partition", "input_offsets", "committed_offset", "fate",
                "transactional_id", "producer_id", "producer_epoch", "outputs")
CONSUMER_OFFSETS = "__consumer_offsets"


@dataclass
class Audit:
    """The audit's rows, each list in its JSON-lines form (`type` aside)."""

    producers: list[dict[str, Any]] = field(default_factory=list)
    transactions: list[dict[str, Any]] = field(default_factory=list)
    group_commits: list[dict[str, Any]] = field(default_factory=list)
    findings: list[dict[str, Any]] = field(default_factory=list)

    def lines(self) -> list[dict[str, Any]]:
        """Every row as a JSON line: `type` producer, transaction, group_commit or finding, then its fields."""
        return ([{"type": "producer", **r} for r in self.producers]
                + [{"type": "transaction", **r} for r in self.transactions]
                + [{"type": "group_commit", **r} for r in self.group_commits]
                + [{"type": "finding", **r} for r in self.findings])

    @property
    def has_problems(self) -> bool:
        return any(is_problem(f["severity"]) for f in self.findings)


def _longest(out: str) -> tuple[dict[tuple[str, str, int], str], dict[tuple[str, int], list[str]]]:
    """(broker, topic, partition) -> cluster_id for the longest replica of each partition, and (topic, partition) ->
    those brokers (replicas hold the same transactions: one is read)."""
    cluster: dict[tuple[str, str, int], str] = {}
    brokers: dict[tuple[str, int], list[str]] = defaultdict(list)
    for r in read_table(out, "replicas", ["broker", "topic", "partition", "cluster_id", "longest_broker", "dir_state"]):
        if r["dir_state"] == "live" and r["broker"] == r["longest_broker"]:
            cluster[(r["broker"], r["topic"], r["partition"])] = r["cluster_id"] or ""
            brokers[(r["topic"], r["partition"])].append(r["broker"])
    return cluster, brokers


def _spans(rows: list[dict[str, Any]], tv2: bool) -> list[list[dict[str, Any]]]:
    """One producer id and epoch's partition transactions as transactions: all one under TV2, else merged where their
    time spans (first batch or marker to marker) overlap."""
    if tv2:
        return [rows]
    out: list[list[dict[str, Any]]] = []
    end = None
    for r in sorted(rows, key=lambda r: (r["_start"], r["_end"])):
        if out and end is not None and r["_start"] <= end:
            out[-1].append(r)
            end = max(end, r["_end"])
        else:
            out.append([r])
            end = r["_end"]
    return out


def load_audit(out: str, *, transactional_id: str | None = None, group: str | None = None) -> Audit:
    """The audit of the scan under OUT (every transactional id and group, or the one named)."""
    cluster, _brokers = _longest(out)
    lineage = read_table(out, "producer_lineage")
    tid_of = {(r["cluster_id"], r["producer_id"]): r["transactional_id"] for r in lineage}
    tv2 = {(r["cluster_id"], r["producer_id"]) for r in lineage if (r["transaction_version"] or 0) >= 2}
    txns = []
    for r in read_table(out, "transactions"):
        key = (r["broker"], r["topic"], r["partition"])
        if key not in cluster:
            continue
        c = cluster[key]
        start = r["first_timestamp"] if r["first_timestamp"] is not None else None
        end = start + r["duration_ms"] if start is not None and r["duration_ms"] is not None else None
        txns.append({**r, "cluster_id": c, "_start": start if start is not None else (end or 0),
                     "_end": end if end is not None else float("inf"),
                     "transactional_id": r["transactional_id"] or tid_of.get((c, r["producer_id"]))})
    commits = [r for r in read_table(out, "offset_commits") if (r["broker"], r["topic"], r["partition"]) in cluster
               and not r["tombstone"]]
    applied = {(r["cluster_id"], r["group_id"], r["topic"], r["partition"]): (r["coordinator_partition"],
                                                                              r["coordinator_offset"])
               for r in read_table(out, "consumer_offsets")}

    # every transaction across partitions, the offset commits it carried with their fate
    by_epoch: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for t in txns:
        if t["first_offset"] is not None or t["marker_offset"] is not None:
            by_epoch[(t["cluster_id"], t["producer_id"], t["producer_epoch"])].append(t)
    transactions: list[dict[str, Any]] = []
    carried: dict[tuple, dict[str, Any]] = {}  # (broker, topic, partition, record offset) -> its transaction
    for (c, pid, epoch), rows in sorted(by_epoch.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2])):
        for span in _spans(rows, (c, pid) in tv2):
            span.sort(key=lambda r: (r["topic"], r["partition"]))
            outcomes = {r["outcome"] for r in span}
            t = {"cluster_id": c, "transactional_id": next((r["transactional_id"] for r in span
                                                            if r["transactional_id"]), None),
                 "producer_id": pid, "producer_epoch": epoch,
                 "outcome": outcomes.pop() if len(outcomes) == 1 else "MIXED",
                 "first_timestamp": min((r["first_timestamp"] for r in span if r["first_timestamp"] is not None),
                                        default=None),
                 "end_timestamp": max((r["_end"] for r in span if r["_end"] != float("inf")), default=None),
                 "partitions": [{"partition": f"{r['topic']}-{r['partition']}", "broker": r["broker"],
                                 "first_offset": r["first_offset"], "last_data_offset": r["last_data_offset"],
                                 "marker_offset": r["marker_offset"], "outcome": r["outcome"]} for r in span],
                 "offset_commits": []}
            transactions.append(t)
            for r in span:
                if r["topic"] == CONSUMER_OFFSETS and r["first_offset"] is not None:
                    for o in range(r["first_offset"], r["last_data_offset"] + 1):
                        carried[(r["broker"], r["topic"], r["partition"], o)] = t
    group_commits: list[dict[str, Any]] = []
    previous: dict[tuple, int] = {}  # the offset a group last committed on a partition (applied in log order)
    for r in sorted(commits, key=lambda r: (r["broker"], r["topic"], r["partition"], r["offset"])):
        c = cluster[(r["broker"], r["topic"], r["partition"])]
        key = (c, r["group_id"], r["commit_topic"], r["commit_partition"])
        t = carried.get((r["broker"], r["topic"], r["partition"], r["offset"])) if r["transactional"] else None
        if t is not None:
            fate = {"COMMIT": "committed", "ABORT": "dropped", "OPEN": "pending"}.get(t["outcome"], "unknown")
            if fate == "committed" and applied.get(key) == (f"{r['topic']}-{r['partition']}", r["offset"]):
                fate = "applied"
            t["offset_commits"].append({"group": r["group_id"], "topic": r["commit_topic"],
                                        "partition": r["commit_partition"], "committed_offset": r["committed_offset"],
                                        "fate": fate})
            before = previous.get(key)
            group_commits.append({
                "cluster_id": c, "group": r["group_id"], "topic": r["commit_topic"], "partition": r["commit_partition"],
                "input_offsets": None if before is None or before >= r["committed_offset"]
                else [before, r["committed_offset"] - 1],
                "committed_offset": r["committed_offset"], "fate": fate, "transactional_id": t["transactional_id"],
                "producer_id": t["producer_id"], "producer_epoch": t["producer_epoch"],
                "outputs": [{k: p[k] for k in ("partition", "first_offset", "last_data_offset")}
                            for p in t["partitions"] if not p["partition"].startswith(CONSUMER_OFFSETS + "-")]})
            if fate in ("committed", "applied"):
                previous[key] = r["committed_offset"]
        elif not r["transactional"]:
            previous[key] = r["committed_offset"]

    # the selection
    if group is not None:
        group_commits = [g for g in group_commits if g["group"] == group]
        keep = {(g["cluster_id"], g["producer_id"], g["producer_epoch"]) for g in group_commits}
        transactions = [t for t in transactions if (t["cluster_id"], t["producer_id"], t["producer_epoch"]) in keep]
    if transactional_id is not None:
        transactions = [t for t in transactions if t["transactional_id"] == transactional_id]
        group_commits = [g for g in group_commits if g["transactional_id"] == transactional_id]
    producers = [{k: r.get(k) for k in PRODUCER_FIELDS} for r in lineage
                 if transactional_id is None or r["transactional_id"] == transactional_id]
    if group is not None:
        ids = {(t["cluster_id"], t["transactional_id"]) for t in transactions}
        producers = [p for p in producers if (p["cluster_id"], p["transactional_id"]) in ids]
    producers.sort(key=lambda p: (p["cluster_id"], p["transactional_id"], p["first_data_timestamp"] or
                                  p["first_coordinator_timestamp"] or 0, p["producer_id"]))
    transactions.sort(key=lambda t: (t["cluster_id"], t["transactional_id"] or "", t["first_timestamp"] or
                                     t["end_timestamp"] or 0, t["producer_id"], t["producer_epoch"]))
    group_commits.sort(key=lambda g: (g["cluster_id"], g["group"], g["topic"], g["partition"], g["committed_offset"]))
    selected_pids = {p["producer_id"] for p in producers} | {t["producer_id"] for t in transactions}
    findings = []
    for f in read_table(out, "findings"):
        if f["kind"] not in shown_in("eos"):
            continue
        line = finding_line(f)
        if transactional_id is not None and line.get("transactional_id") != transactional_id \
                and line.get("producer_id") not in selected_pids:
            continue
        if group is not None and line.get("group") != group and line.get("producer_id") not in selected_pids:
            continue
        findings.append(line)
    return Audit(producers, [{k: t[k] for k in TRANSACTION_FIELDS} for t in transactions], group_commits, findings)


def _offsets(first: int | None, last: int | None) -> str:
    if first is None:
        return "-"
    return str(first) if last is None or last == first else f"{first}-{last}"


def transaction_rows(audit: Audit) -> list[dict[str, Any]]:
    """The transactions as table rows: partitions and offset commits as text."""
    return [{**t, "partitions": ", ".join(
        f"{p['partition']}@{_offsets(p['first_offset'], p['last_data_offset'])}"
        + (f" {p['outcome']}" if p["outcome"] != t["outcome"] else "") for p in t["partitions"]),
        "offset_commits": ", ".join(f"{c['group']} {c['topic']}-{c['partition']}={c['committed_offset']} {c['fate']}"
                                    for c in t["offset_commits"])} for t in audit.transactions]


def group_rows(audit: Audit) -> list[dict[str, Any]]:
    """The group commits as table rows: input offsets and outputs as text."""
    return [{**g, "input_offsets": _offsets(*(g["input_offsets"] or (None, None))),
             "outputs": ", ".join(f"{o['partition']}@{_offsets(o['first_offset'], o['last_data_offset'])}"
                                  for o in g["outputs"])} for g in audit.group_commits]


PRODUCER_TABLE = ("transactional_id", "producer_id", "first_epoch", "last_epoch", "previous_producer_id",
                  "next_producer_id", "transaction_version", "source")
TRANSACTION_TABLE = ("transactional_id", "producer_id", "producer_epoch", "outcome", "partitions", "offset_commits")
GROUP_TABLE = ("group", "topic", "partition", "input_offsets", "committed_offset", "fate", "transactional_id",
               "producer_id", "producer_epoch", "outputs")
FINDING_TABLE = ("severity", "kind", "broker", "topic", "partition", "offset", "producer_id", "message")


def render_terminal(audit: Audit, table: Any) -> None:
    """The audit as tables through `table(title, rows, columns)` (the report's own table function)."""
    if audit.producers:
        table("exactly-once: producer ids per transactional id", audit.producers, list(PRODUCER_TABLE))
    if audit.transactions:
        table("exactly-once: transactions", transaction_rows(audit), list(TRANSACTION_TABLE))
    if audit.group_commits:
        table("exactly-once: offsets committed with their outputs", group_rows(audit), list(GROUP_TABLE))


def html_section(audit: Audit, html_table: Any) -> str:
    """The report's HTML section (tables by `html_table(rows, columns, css_id=...)`, which escapes every cell)."""
    if not (audit.producers or audit.transactions or audit.group_commits):
        return ("<p>No transactional id or transactional offset commit in the input (no <code>__transaction_state"
                "</code> record, no TxnOffsetCommit).</p>")
    parts = ["<p class='muted'>Per transactional id, its producer ids and epochs (<code>producer_lineage</code>); "
             "its transactions across partitions, with the offset commits each carried and their fate (applied, "
             "committed then superseded, dropped by an abort, pending); per consumer group, which input offsets were "
             "committed atomically with which outputs (<code>kforensics eos</code>).</p>"]
    if audit.producers:
        parts.append(html_table(audit.producers, list(PRODUCER_TABLE), css_id="eos-producers"))
    if audit.transactions:
        parts.append(html_table(transaction_rows(audit), list(TRANSACTION_TABLE), css_id="eos-transactions"))
    if audit.group_commits:
        parts.append(html_table(group_rows(audit), list(GROUP_TABLE), css_id="eos-group-commits"))
    return "".join(parts)
