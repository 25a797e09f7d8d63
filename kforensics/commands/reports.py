"""The reports over a completed scan: `gaps`, `txns`, `lso`, `producers`, `leaders`, `groups` (rows as tables or
JSON lines) and `report` (the incident-review document, on the terminal or as one HTML file). They read the Parquet
tables with pyarrow: no Spark, unless they are given log dirs to scan first."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from typing import Any

import click

from kforensics.commands import options
from kforensics.defaults import DEFAULT_MAX_PLOTS


@contextlib.contextmanager
def _source(source: tuple[str, ...]) -> Iterator[str]:
    """The OUT of a completed scan, or log dirs scanned first into a temporary OUT that is deleted afterwards."""
    from kforensics import scan_output

    if len(source) == 1 and "=" not in source[0] and os.path.isdir(source[0]) \
            and scan_output.is_scan_output(source[0]):
        try:
            scan_output.require_complete(source[0])
        except scan_output.OutputError as exc:
            raise click.BadParameter(str(exc), param_hint="OUT") from exc
        yield source[0]
        return
    from kforensics.commands.scan import run_scan
    from kforensics.scan_runner import ScanOptions

    with tempfile.TemporaryDirectory(prefix="kforensics-out-") as out:
        run_scan(source, out, ScanOptions(), show_progress=sys.stderr.isatty())
        yield out


def _report_options(fn: Callable) -> Callable:
    for option in reversed([options.source, options.as_json, options.topic, options.partition, options.pid]):
        fn = option(fn)
    return fn


def _show(rows: list[dict], as_json: bool, columns: tuple[str, ...] | list[str], title: str) -> None:
    from kforensics import render

    if as_json:
        render.json_lines(rows)
    else:
        render.table(rows, columns, title)


GAP_COLUMNS = ("kind", "broker", "topic", "partition", "producer_id", "producer_epoch", "offset", "expected_sequence",
               "found_sequence", "gap_size", "size_class", "message")


@click.command("gaps")
@_report_options
def gaps(source: tuple[str, ...], as_json: bool, topic: str | None, partition: int | None, pid: int | None) -> None:
    """Sequence gaps, duplicates and zombie writes per producer.

    \b
    Example: kforensics gaps ./kforensics-out --topic orders --json
    """
    from kforensics import queries

    with _source(source) as out:
        _show(queries.sequence_problems(out, topic=topic, partition=partition, pid=pid), as_json, GAP_COLUMNS,
              "sequence problems")


@click.command("txns")
@_report_options
@click.option("--longest", type=int, default=10, show_default=True, help="How many of the longest to list.")
def txns(source: tuple[str, ...], as_json: bool, topic: str | None, partition: int | None, pid: int | None,
         longest: int) -> None:
    """Transactions: committed / aborted / open / empty, sizes, durations, the longest ones.

    \b
    Example: kforensics txns ./kforensics-out --pid 2001
    """
    from kforensics import queries, render

    with _source(source) as out:
        lines = queries.transactions(out, topic=topic, partition=partition, pid=pid)
    if as_json:
        render.json_lines(lines)
        return
    render.table(queries.transaction_stats(lines), queries.TXN_STATS_FIELDS, "transactions by outcome")
    render.table(queries.longest_transactions(lines, longest), queries.TXN_FIELDS, f"longest {longest} transactions")
    open_ones = [r for r in lines if r["outcome"] == "OPEN"]
    if open_ones:
        render.table(open_ones, queries.TXN_FIELDS, "open transactions")


@click.command("lso")
@_report_options
@click.option("--progression", is_flag=True, help="One line per LSO change point.")
def lso(source: tuple[str, ...], as_json: bool, topic: str | None, partition: int | None, pid: int | None,
        progression: bool) -> None:
    """Last stable offset per partition, where it is stuck and by whom.

    \b
    Example: kforensics lso ./kforensics-out --progression --topic payments
    """
    from kforensics import queries

    with _source(source) as out:
        rows = queries.last_stable_offsets(out, topic=topic, partition=partition, pid=pid, progression=progression)
    _show(rows, as_json, queries.LSO_CHANGE_FIELDS if progression else queries.LSO_FIELDS,
          "LSO change points" if progression else "last stable offset")


@click.command("producers")
@_report_options
def producers(source: tuple[str, ...], as_json: bool, topic: str | None, partition: int | None,
              pid: int | None) -> None:
    """Per producer id and epoch: offsets, sequence ranges, batch and record counts.

    \b
    Example: kforensics producers ./kforensics-out --topic orders
    """
    from kforensics import queries

    with _source(source) as out:
        _show(queries.producers(out, topic=topic, partition=partition, pid=pid), as_json, queries.PRODUCER_FIELDS,
              "producers")


LEADER_TABLE = ("topic", "partition", "time", "metadata_offset", "leader_epoch", "leader", "isr", "elr",
                "leader_recovery_state", "election")


CONTROLLER_TABLE = ("time", "metadata_offset", "event", "voters", "added", "removed", "kraft_version",
                    "controller_id", "endpoints")


def _voters(voters: list[dict[str, Any]] | None) -> str:
    """`1 (dir Abc..., c1:9093)`, one voter per line: its id, directory id and endpoints."""
    if voters is None:
        return ""
    return "\n".join(f"{v['voter_id']} (dir {v['voter_directory_id']}, {_endpoints(v['endpoints'])})"
                     for v in sorted(voters, key=lambda v: v["voter_id"]))


def _endpoints(endpoints: list[dict[str, Any]] | None) -> str:
    return ", ".join(f"{e['name']}={e['host']}:{e['port']}" for e in endpoints or [])


def _show_controllers(out: str, as_json: bool, *, quiet: bool = False) -> None:
    from kforensics import queries, render

    rows = queries.controllers(out)
    if as_json:
        render.json_lines(rows)
        return
    for cluster_id, broker in sorted({(r["cluster_id"], r["metadata_broker"]) for r in rows}):
        mine = [{**r, "event": f"{r['event']} (snapshot: baseline)" if r["from_snapshot"] else r["event"],
                 "voters": _voters(r["voters"]), "added": _ids(r["added_voters"]),
                 "removed": _ids(r["removed_voters"]), "endpoints": _endpoints(r["endpoints"])}
                for r in rows if (r["cluster_id"], r["metadata_broker"]) == (cluster_id, broker)]
        render.table(mine, CONTROLLER_TABLE, f"controllers of cluster {cluster_id} (metadata log of {broker})",
                     style={"event": "bold"})
    if not rows and not quiet:
        click.echo("no KRaft controller record (VotersRecord, KRaftVersionRecord, RegisterControllerRecord, "
                   "UnregisterControllerRecord) in the scan's metadata log", err=True)


@click.command("leaders")
@options.source
@options.as_json
@options.topic
@options.partition
@click.option("--controllers", is_flag=True, help="Only the controllers' history: the KRaft voter set and its "
                                                   "changes (KIP-853), kraft.version, controller registrations.")
def leaders(source: tuple[str, ...], as_json: bool, topic: str | None, partition: int | None,
            controllers: bool) -> None:
    """Leadership history from the KRaft metadata log: one line per leader or ISR change of each partition
    (time, leader epoch, leader, ISR, ELR, election: initial, clean, elr, unclean, offline, none), then who the
    controllers were (the voter set with directory ids and endpoints, from the VotersRecord control records).
    With --json, the partitions' lines only; --controllers gives the controllers' alone (as a table or JSON lines).

    \b
    Example: kforensics leaders ./kforensics-out --topic ledger --partition 0
    Example: kforensics leaders ./kforensics-out --controllers --json
    """
    from kforensics import queries, render

    with _source(source) as out:
        if controllers:
            _show_controllers(out, as_json)
            return
        rows = queries.leadership(out, topic=topic, partition=partition)
        if as_json:
            render.json_lines(rows)
            return
        clusters = sorted({(r["cluster_id"], r["metadata_broker"]) for r in rows})
        for cluster_id, broker in clusters:
            mine = [{**r, "isr": _ids(r["isr"]), "elr": _ids(r["elr"])} for r in rows
                    if (r["cluster_id"], r["metadata_broker"]) == (cluster_id, broker)]
            render.table(mine, LEADER_TABLE, f"leadership of cluster {cluster_id} (metadata log of {broker})",
                         style={"election": "bold"})
        if not rows:
            click.echo("no KRaft metadata log (__cluster_metadata-0) in the scan's input", err=True)
        elif topic is None and partition is None:
            _show_controllers(out, as_json, quiet=True)


GROUP_MEMBER_TABLE = ("member_id", "client_id", "client_host", "instance_id", "epoch", "member_state",
                      "subscribed_topics", "from_time", "to_time")
GROUP_OWNER_TABLE = ("topic", "partition", "member_id", "epochs", "pending_revocation", "from_time", "to_time")
GROUP_COMMIT_TABLE = ("topic", "partition", "committed_offset", "tombstone", "commit_time", "coordinator_offset")
GROUP_LAG_TABLE = ("topic", "partition", "committed_offset", "log_end_offset", "last_stable_offset", "lag", "status",
                   "owner_member_id", "owner_client_id")
SHARE_STATE_TABLE = ("topic", "partition", "start_offset", "first_offset", "last_offset", "delivery_state",
                     "delivery_count", "leader_epoch", "state_epoch")
#: Commits listed per group on a terminal (JSON lines carry all of them).
TERMINAL_COMMITS = 20


@click.command("groups")
@options.source
@click.option("--group", help="Only this group id.")
@click.option("--at", "at", metavar="TIME", help="Members and assignments in force at TIME, commits written by then "
                                                 "(ms or ISO-8601, UTC); the lag and share state stay the end of the "
                                                 "input's.")
@options.as_json
def groups(source: tuple[str, ...], group: str | None, at: str | None, as_json: bool) -> None:
    """Who consumed what: each consumer group's members and who owned each partition when (classic, consumer,
    streams and share groups, replayed from __consumer_offsets), its commits and its lag at the end of the input;
    for a share group, its state per partition (__share_group_state).

    \b
    Example: kforensics groups ./kforensics-out --group billing --at 2025-11-20T14:00:00Z
    """
    from kforensics import queries, render
    from kforensics.export import ExportError, parse_time

    try:
        moment = parse_time(at)
    except ExportError as exc:
        raise click.BadParameter(str(exc), param_hint="--at") from exc
    with _source(source) as out:
        lines = queries.group_history(out, group=group, at=moment)
    if as_json:
        render.json_lines(lines)
        return
    by_group: dict[str, list[dict]] = {}
    for line in lines:
        by_group.setdefault(line["group"], []).append(line)
    for group_id, rows in by_group.items():
        _show_group(group_id, rows, at)
    if not lines:
        render.echo(f"no group {group} in the scan" if group else "no consumer group in the scan's input", err=True)


def _show_group(group_id: str, rows: list[dict], at: str | None) -> None:
    """One group's tables on the terminal."""
    from kforensics import queries, render

    of = {kind: [r for r in rows if r["type"] == kind] for kind in queries.GROUP_LINE_TYPES}
    where = next((r for r in rows if r.get("coordinator_partition")), {})
    kind = next((r["group_type"] for r in of["member"] + of["assignment"]), None)
    render.line(f"group {group_id}" + (f" ({kind})" if kind else "") + (
        f", coordinator {where['coordinator_partition']} on {where['coordinator_broker']}" if where else "")
        + (f", at {at}" if at else ""), style="bold")
    if of["member"]:
        render.table([{**r, "epoch": r["generation"] if r["generation"] is not None else r["member_epoch"],
                       "subscribed_topics": ", ".join(r["subscribed_topics"] or ())} for r in of["member"]],
                     GROUP_MEMBER_TABLE, f"members of {group_id}")
    if of["assignment"]:
        render.table(queries.ownership_spans(of["assignment"]), GROUP_OWNER_TABLE,
                     f"who owned each partition of {group_id} when")
    if of["commit"]:
        latest = of["commit"][-TERMINAL_COMMITS:]
        more = len(of["commit"]) - len(latest)
        render.table(latest, GROUP_COMMIT_TABLE, f"commits of {group_id}" + (
            f" (the last {len(latest)}; {more} earlier: --json lists every one)" if more else ""))
    if of["lag"]:
        render.table(of["lag"], GROUP_LAG_TABLE, f"lag of {group_id} at the end of the input")
    if of["share_partition"]:
        render.table(of["share_partition"], SHARE_STATE_TABLE, f"share state of {group_id} at the end of the input")


def _ids(values: list[int] | None) -> str | None:
    return None if values is None else "[" + ",".join(str(v) for v in values) + "]"


@click.command("report")
@click.argument("out", metavar="OUT")
@click.option("--html", "html_file", type=click.Path(dir_okay=False, writable=True),
              help="Write one self-contained HTML file (plots inline, nothing fetched) instead of printing tables.")
@click.option("--force", is_flag=True, help="Replace --html FILE even when it is not an earlier kforensics report.")
@click.option("--max-plots", type=click.IntRange(min=0), default=DEFAULT_MAX_PLOTS, show_default=True,
              help="Partition timelines to draw (partitions with findings first).")
def report(out: str, html_file: str | None, force: bool, max_plots: int) -> None:
    """The scan under OUT as an incident-review report: summary, findings by kind and partition, replicas,
    the transaction coordinator, consumer offsets and per-partition timelines.

    --html FILE replaces an existing FILE only when it is an earlier kforensics report (or with --force), and
    writes it whole or not at all.

    \b
    Exit codes: 0 no warning or error finding, 1 findings, 2 usage error, no completed scan under OUT, or an
    --html FILE that is not an earlier report.
    \b
    Examples:
      kforensics report ./kforensics-out
      kforensics report ./kforensics-out --html incident.html
    """
    from kforensics import render, scan_output
    from kforensics.report import is_report, load_report, render_html, render_terminal

    if html_file and os.path.lexists(html_file) and not force and not is_report(html_file):
        raise click.BadParameter(f"{html_file} exists and is not a kforensics report: kforensics does not write over "
                                 "it. Choose another file, or pass --force to replace it", param_hint="--html")
    try:
        loaded = load_report(out, max_plots=max_plots)
    except scan_output.OutputError as exc:
        raise click.BadParameter(str(exc), param_hint="OUT") from exc
    if html_file:
        render_html(loaded, html_file)
        render.echo(f"wrote {html_file} ({os.path.getsize(html_file):,} bytes)", err=True)
    else:
        render_terminal(loaded, render.console())
    sys.exit(options.EXIT_FINDINGS if loaded.has_problems else options.EXIT_OK)
