"""What the commands share to show results: a rich console, tables, JSON lines, the scan's summary."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from typing import Any

from kforensics.parsers.findings import is_problem

FINDINGS_TABLE_COLUMNS = ("severity", "kind", "broker", "topic", "partition", "offset", "position", "producer_id",
                          "message")


def console(stderr: bool = False) -> Any:
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    return Console(stderr=stderr, width=None if stream.isatty() else 200)


def json_lines(rows: Sequence[dict[str, Any]]) -> None:
    for row in rows:
        sys.stdout.write(json.dumps(row, default=str) + "\n")


def _cell(value: Any) -> str:
    return "" if value is None else str(value)


def table(rows: Sequence[dict[str, Any]], columns: Sequence[str], title: str, *, style: dict[str, str] | None = None,
          show: bool = True) -> Any:
    """A rich table of `rows` (printed on stdout unless `show` is false)."""
    from rich.table import Table

    t = Table(title=title)
    for column in columns:
        t.add_column(column, overflow="fold", style=(style or {}).get(column))
    for r in rows:
        t.add_row(*[_cell(r.get(c)) for c in columns])
    if show:
        console().print(t)
    return t


def progress_bar(show: bool) -> tuple[Any, Callable[[int, int], None]]:
    """A transient progress bar over Spark tasks on stderr, and the callback that moves it."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn("scanning"), BarColumn(), MofNCompleteColumn(), TextColumn("Spark tasks"),
                   TimeElapsedColumn(), transient=True, console=console(stderr=True), disable=not show)
    task = bar.add_task("scan", total=None)

    def progress(done: int, total: int) -> None:
        bar.update(task, completed=done, total=total or None)

    return bar, progress


def scan_summary(summary: Any, findings: Sequence[dict[str, Any]]) -> None:
    """The summary of a scan, its findings by kind, its warning and error findings, and what was not judged."""
    from rich.table import Table

    out = console()
    facts = Table(title=f"kforensics scan -> {summary.out}", show_header=False)
    facts.add_column("what")
    facts.add_column("value", justify="right")
    for label, value in (("partitions", summary.partitions), ("segments", summary.segments),
                         ("batches", summary.batches), ("records", summary.records),
                         ("bytes", summary.bytes), ("producers", summary.producers),
                         *((f"transactions {k}", v) for k, v in sorted(summary.transactions.items())),
                         *((f"partition dirs -{k}", v) for k, v in summary.special_dirs.items()),
                         ("seconds", f"{summary.seconds:.1f}")):
        facts.add_row(label, f"{value:,}" if isinstance(value, int) else str(value))
    out.print(facts)
    by_kind = Table(title="findings by kind")
    for column in ("kind", "severity", "count"):
        by_kind.add_column(column, justify="right" if column == "count" else "left")
    for kind, severity, count in summary.findings:
        by_kind.add_row(kind, severity, str(count))
    out.print(by_kind)
    problems = [f for f in findings if is_problem(f["severity"])]
    if problems:
        out.print(table(problems, FINDINGS_TABLE_COLUMNS, "findings", style={"severity": "bold red"}, show=False))
    if summary.not_in_input:
        out.print(f"Named by a transaction coordinator or a consumer group but not in the input, so not judged: "
                  f"{', '.join(summary.not_in_input)}")
    if summary.dump_inputs:
        from kforensics.parsers.dump_text import NOT_IN_TEXT

        out.print(f"Read as kafka-dump-log text: {', '.join(summary.dump_inputs)}. Only batch headers (and control "
                  f"records, with --deep-iteration) come from the text: {NOT_IN_TEXT}.")


def profile(out: str) -> None:
    """The manifest's `profile` of the scan under OUT (`scan --profile`), as a table on stderr."""
    from kforensics.scan_output import read_manifest

    manifest = read_manifest(out)
    data = (manifest.profile if manifest else None) or {}
    rows = [{**step, "seconds": f"{step.get('seconds', 0):.2f}",
             "plan_s": "" if step.get("plan_s") is None else f"{step['plan_s']:.2f}"} for step in data.get("steps", [])]
    t = table(rows, ("step", "seconds", "plan_s", "jobs", "stages", "tasks"),
              f"where the {data.get('seconds', 0):.1f} s went ({data.get('jobs', 0)} Spark jobs, "
              f"{data.get('tasks', 0)} tasks)", show=False)
    console(stderr=True).print(t)
