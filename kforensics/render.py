"""What the commands share to show results: a rich console, tables, JSON lines, the scan's summary.

The one door to the terminal: every string read from the input (paths, names, ids, keys, values, messages that
embed them) reaches rich here, as literal `Text` (no markup, no emoji codes), with the characters a terminal would
obey or hide shown as escapes (`shown`). Rich markup stays for the tool's own words. No other module imports rich.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import IO, Any

from kforensics.parsers.findings import is_problem

FINDINGS_TABLE_COLUMNS = ("severity", "kind", "broker", "topic", "partition", "offset", "position", "producer_id",
                          "message")

#: Characters a terminal obeys or hides instead of showing: C0 and C1 controls, DEL, bidirectional marks, overrides
#: and isolates, zero-width and invisible format characters, line and paragraph separators, tag characters, and lone
#: surrogates (an undecodable byte of a file name, as Python's surrogateescape keeps it).
HIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b\u200e\u200f\u2028-\u202e\u2060-\u206f\ufeff"
                    "\ufff9-\ufffb\ud800-\udfff\U000e0000-\U000e007f]")
_SHORT = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    return _char_escape(match.group())


def _char_escape(ch: str) -> str:
    code = ord(ch)
    if ch in _SHORT:
        return _SHORT[ch]
    if 0xDC80 <= code <= 0xDCFF:  # surrogateescape: the byte the name holds
        return f"\\x{code - 0xDC00:02x}"
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


_PRINTABLE_ASCII = re.compile("[!-~]")


def shown(value: Any) -> str:
    """`value` as text a terminal shows and does not obey: each hidden or control character as an escape
    (`\\x1b`, `\\u202e`, `\\n`); everything else as it is, but a string that would print as nothing at all (only
    zero-width characters: combining marks, joiners, emoji modifiers) is escaped whole."""
    text = value if isinstance(value, str) else str(value)
    result = HIDDEN.sub(_escape, text) if HIDDEN.search(text) else text
    if result and not _PRINTABLE_ASCII.search(result):
        from rich.cells import cell_len

        if cell_len(result) == 0:
            return "".join(_char_escape(c) for c in text)
    return result


def text(value: Any, style: str | None = None) -> Any:
    """A rich `Text` of `value` shown literally: never markup, never an emoji code, never a control sequence."""
    from rich.text import Text

    if isinstance(value, Text):
        return value
    return Text(shown(value), style=style or "")


def cell_lines(values: Iterable[Any]) -> Any:
    """One table cell of several literal lines."""
    from rich.text import Text

    return Text("\n").join(text(v) for v in values)


def console(stderr: bool = False) -> Any:
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    return Console(stderr=stderr, width=None if stream.isatty() else 200)


def line(message: Any, *, style: str | None = None, err: bool = False, out: Any = None) -> None:
    """One line of text (data in it shown literally) on stdout, stderr (`err`) or the console `out`."""
    (out or console(stderr=err)).print(text(message, style), soft_wrap=True)


def echo(message: str, *, err: bool = False, file: IO[str] | None = None) -> None:
    """A plain line (no rich) with the input's strings in it shown, not obeyed."""
    stream = file or (sys.stderr if err else sys.stdout)
    stream.write(shown(message) + "\n")
    stream.flush()


def _json_safe(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


#: What JSON's own escaping leaves raw with ensure_ascii off and a terminal would obey (C1 controls, DEL, bidi and
#: invisible characters) or an encoder would refuse (lone surrogates): written as \\u escapes, the same string.
_JSON_HIDDEN = re.compile("[\x7f-\x9f\u00ad\u061c\u180e\u200b\u200e\u200f\u2028-\u202e\u2060-\u206f\ufeff"
                          "\ufff9-\ufffb\ud800-\udfff]")


def json_line(obj: Any, **dumps: Any) -> str:
    """`obj` as one JSON line that decodes to exactly the same strings and holds no raw control character."""
    encoded = json.dumps(obj, ensure_ascii=False, default=str, **dumps)
    return _JSON_HIDDEN.sub(_json_safe, encoded) if _JSON_HIDDEN.search(encoded) else encoded


def json_lines(rows: Iterable[dict[str, Any]]) -> None:
    write = sys.stdout.write
    for row in rows:
        write(json_line(row) + "\n")


def _cell(value: Any) -> Any:
    return text("" if value is None else value)


def table(rows: Sequence[dict[str, Any]], columns: Sequence[str], title: str, *, style: dict[str, str] | None = None,
          justify: dict[str, str] | None = None, cell: Callable[[Any], Any] = _cell, title_justify: str = "center",
          show: bool = True) -> Any:
    """A rich table of `rows` (printed on stdout unless `show` is false); every cell and the title literal text."""
    from rich.table import Table

    t = Table(title=text(title), title_justify=title_justify)  # type: ignore[arg-type]
    for column in columns:
        t.add_column(column, overflow="fold", style=(style or {}).get(column),
                     justify=(justify or {}).get(column, "left"))  # type: ignore[arg-type]
    for r in rows:
        t.add_row(*[cell(r.get(c)) if r.get(c) is not None else text("") for c in columns])
    if show:
        console().print(t)
    return t


def facts(title: str, pairs: Iterable[tuple[str, Any]], *, title_justify: str = "center") -> Any:
    """A two-column table of labels and values (ints with thousands separators), without a header."""
    from rich.table import Table

    t = Table(title=text(title), show_header=False, title_justify=title_justify)  # type: ignore[arg-type]
    t.add_column("what")
    t.add_column("value", justify="right")
    for label, value in pairs:
        t.add_row(text(label), text(f"{value:,}" if isinstance(value, int) and not isinstance(value, bool)
                                    else value))
    return t


def progress_bar(show: bool) -> tuple[Any, Callable[[int, int], None], Callable[[str], None]]:
    """A transient progress bar over Spark tasks on stderr, the callback that moves it, and one that prints a note
    above it."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn("scanning"), BarColumn(), MofNCompleteColumn(), TextColumn("Spark tasks"),
                   TimeElapsedColumn(), transient=True, console=console(stderr=True), disable=not show)
    task = bar.add_task("scan", total=None)

    def progress(done: int, total: int) -> None:
        bar.update(task, completed=done, total=total or None)

    def note(message: str) -> None:
        line(message, style="dim", out=bar.console)

    return bar, progress, note


def byte_progress(label: str, total: int) -> tuple[Any, Callable[[int], None]]:
    """A transient progress bar over `total` bytes on stderr, and the callback that advances it."""
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn(label), BarColumn(), DownloadColumn(), TimeElapsedColumn(), transient=True,
                   console=console(stderr=True))
    task = bar.add_task(label, total=total)
    return bar, lambda n: bar.advance(task, n)


def log_line(out: Any, when: str, message: str) -> None:
    """A server log line: the time dimmed, then the message shown literally."""
    from rich.text import Text

    out.print(Text.assemble((when, "dim"), " ", shown(message)), soft_wrap=True, highlight=False)


def scan_summary(summary: Any, findings: Sequence[dict[str, Any]],
                 incidents: Sequence[dict[str, Any]] = ()) -> None:
    """The summary of a scan, its incidents (one line each), its findings by kind, its warning and error findings, and
    what was not judged."""
    from kforensics.times import iso

    out = console()
    out.print(facts(f"kforensics scan -> {summary.out}", (
        ("partitions", summary.partitions), ("segments", summary.segments), ("batches", summary.batches),
        ("records", summary.records), ("bytes", summary.bytes), ("producers", summary.producers),
        *((f"transactions {k}", v) for k, v in sorted(summary.transactions.items())),
        *((f"partition dirs -{k}", v) for k, v in summary.special_dirs.items()),
        ("seconds", f"{summary.seconds:.1f}"))))
    images = [{"broker": r["broker"], "image time": r.get("image_time_iso") or "unknown",
               "source": r.get("source") or "", "clock": r.get("clock") or "",
               "set aside": (f"{r['set_aside_source']} at {iso(r['set_aside_time'])}"
                             if r.get("set_aside_time") is not None else "")}
              for r in getattr(summary, "image_times", ())]
    if images:
        out.print(table(images, ("broker", "image time", "source", "clock", "set aside"),
                        "image time per broker (ages are judged at it; --image-time overrides)", show=False))
    if incidents:
        out.print(table(incidents, ("severity", "incident", "findings", "title", "cost"),
                        "incidents (kforensics explain OUT tells each: its timeline and the next safe steps)",
                        style={"severity": "bold"}, show=False))
    by_kind = [{"kind": kind, "severity": severity, "count": count} for kind, severity, count in summary.findings]
    out.print(table(by_kind, ("kind", "severity", "count"), "findings by kind", justify={"count": "right"},
                    show=False))
    problems = [f for f in findings if is_problem(f["severity"])]
    if problems:
        out.print(table(problems, FINDINGS_TABLE_COLUMNS, "findings", style={"severity": "bold red"}, show=False))
    if summary.incomplete:
        from kforensics.spark.registry import NOT_JUDGED  # no Spark: the registry reads headers only

        skipped = sum(count for kind, _, count in summary.findings if kind == NOT_JUDGED)
        line(f"Incomplete copy: the input lacks offsets of {', '.join(summary.incomplete)} (see the segment-missing warnings; "
             f"replicas.complete). Not judged, segment missing: {skipped} finding(s) a complete copy could settle "
             f"({NOT_JUDGED}).", out=out)
    if summary.not_in_input:
        line(f"Named by a transaction coordinator or a consumer group but not in the input, so not judged: "
             f"{', '.join(summary.not_in_input)}", out=out)
    if summary.dump_inputs:
        from kforensics.parsers.dump_text import NOT_IN_TEXT

        line(f"Read as kafka-dump-log text: {', '.join(summary.dump_inputs)}. Only batch headers (and control "
             f"records, with --deep-iteration) come from the text: {NOT_IN_TEXT}.", out=out)


def incident(r: dict[str, Any], timeline: Sequence[dict[str, Any]], actions: Sequence[dict[str, Any]],
             cost: str) -> None:
    """One incident as a short story: its severity and title, its cost, its timeline and its plan."""
    from rich.text import Text

    out = console()
    colour = {"error": "bold red", "warning": "bold yellow"}.get(r["severity"], "bold")
    out.print(Text.assemble((r["severity"].upper(), colour), " ", (f"incident {r['incident_id']}", "dim"), ": ",
                            shown(r["title"])), soft_wrap=True, highlight=False)
    out.print(Text.assemble(("cost: ", "bold"), shown(cost)), soft_wrap=True, highlight=False)
    for note in r["unknown"]:
        out.print(Text.assemble(("unknown: ", "bold"), shown(note)), soft_wrap=True, highlight=False)
    if timeline:
        out.print(table(timeline, ("at", "broker", "event"), "timeline", title_justify="left", show=False))
    if actions:
        out.print(table(actions, ("step", "command", "why", "destructive"), "next steps, in this order",
                        style={"destructive": "bold red"}, title_justify="left", show=False))
    out.print()


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


def html_text(value: Any) -> str:
    """`value` for an HTML page: escaped, hidden characters shown as on a terminal, and isolated (`<bdi>`) so that
    no direction it holds reorders what is around it."""
    return f"<bdi>{html_attr(value)}</bdi>"


def html_attr(value: Any) -> str:
    """`value` for an HTML attribute or the page's title: escaped, hidden characters shown as on a terminal."""
    import html

    return html.escape(shown(value))


def plot_text(value: Any) -> str:
    """`value` for a matplotlib label: shown, and `$` kept from starting mathtext."""
    return shown(value).replace("$", r"\$")
