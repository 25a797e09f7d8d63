"""`kforensics scan` and the report commands over a finished scan (`gaps`, `txns`, `lso`, `producers`).

pyspark is imported only when a scan runs; reports over an existing OUT read its Parquet with pyarrow.
"""

from __future__ import annotations

import fnmatch
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import click

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
DEFAULT_OUT = "./kforensics-out"
FINDING_FIELDS = ("kind", "severity", "broker", "topic", "partition", "file", "position", "offset", "producer_id",
                  "producer_epoch", "message")


def _inputs(dirs: tuple[str, ...]) -> list[tuple[str, str]]:
    from kforensics.parsers.log_dir import parse_inputs

    return parse_inputs(list(dirs))


def _check_inputs(inputs: list[tuple[str, str]], out: str | None) -> None:
    """Usage errors of DIRs (and of an --out the user chose; None: the tables go to a fresh temporary folder)."""
    for _label, path in inputs:
        if "://" not in path and not (os.path.isdir(path) or os.path.isfile(path)):  # a file: kafka-dump-log text
            raise click.BadParameter(f"{path} is not a readable directory or file", param_hint="DIR")
        if "://" in path:  # before any Spark starts: a wrong credential or a missing bucket is a usage error
            from kforensics.uri_inputs import check_uri

            problem = check_uri(path) or (
                "a URI query (?...) is not supported by scan: pass the endpoint in the environment "
                "(AWS_ENDPOINT_URL=http://HOST:PORT) instead" if "?" in path else None)
            if problem is not None:
                raise click.BadParameter(problem, param_hint="DIR")
        if out is not None and "://" not in path and "://" not in out:
            real_in, real_out = os.path.realpath(path), os.path.realpath(out)
            if real_out == real_in or real_out.startswith(real_in + os.sep):
                raise click.BadParameter(f"--out {out} is inside the input {path}: kforensics never writes into the "
                                         "directories it reads", param_hint="--out")
    if len({label for label, _ in inputs}) != len(inputs):
        raise click.BadParameter("two inputs have the same broker label; name them NAME=DIR", param_hint="DIR")


def run_scan_cli(dirs: tuple[str, ...], out: str, master: str | None, headers_only: bool, topic: str | None,
                 txn_timeout: int, show_progress: bool, transaction_state_partitions: int = 50,
                 spark_conf: dict[str, str] | None = None) -> Any:
    """Run the scan on the `kforensics serve` server of this user if one runs (and neither --master nor --conf
    asks for a session of its own), else in a Spark session started here (embedded unless --master); returns the
    ScanSummary."""
    inputs = _inputs(dirs)
    _check_inputs(inputs, out)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn("scanning"), BarColumn(), MofNCompleteColumn(), TextColumn("Spark tasks"),
                   TimeElapsedColumn(), transient=True, console=_console(stderr=True), disable=not show_progress)
    with bar:
        task = bar.add_task("scan", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total or None)

        if master is None and not spark_conf:
            summary = _scan_on_server(inputs, out, headers_only, topic, txn_timeout, transaction_state_partitions,
                                      progress, bar.console)
            if summary is not None:
                return summary
        from pyspark.sql import SparkSession

        from kforensics.spark.jobs import run_scan
        from kforensics.spark.session import build_session

        already_running = SparkSession.getActiveSession() is not None
        spark = build_session(master, **(spark_conf or {}))
        try:
            return run_scan(spark, inputs, out, headers_only=headers_only, topic_glob=topic, txn_timeout_ms=txn_timeout,
                            transaction_state_partitions=transaction_state_partitions,
                            progress=progress if show_progress else None)
        finally:
            if not already_running:  # a session we did not start (tests, notebooks) is not ours to stop
                spark.stop()


def _scan_on_server(inputs: list[tuple[str, str]], out: str, headers_only: bool, topic: str | None, txn_timeout: int,
                    transaction_state_partitions: int, progress: Callable[[int, int], None], console: Any) -> Any:
    """The ScanSummary of the scan the running server did, or None when no usable server runs."""
    from kforensics.server import ServerError, scan_on_server

    def absolute(path: str) -> str:
        return path if "://" in path else os.path.abspath(path)

    request = {"inputs": [[label, absolute(path)] for label, path in inputs], "out": absolute(out),
               "headers_only": headers_only, "topic_glob": topic, "txn_timeout_ms": txn_timeout,
               "transaction_state_partitions": transaction_state_partitions}
    try:
        summary = scan_on_server(request, progress=progress, note=lambda message: console.print(message, style="dim"))
    except ServerError as exc:
        if exc.usage:
            raise click.BadParameter(str(exc), param_hint="DIR") from exc
        raise click.ClickException(str(exc)) from exc
    if summary is None:
        return None
    from kforensics.spark.summary import ScanSummary

    summary["findings"] = [tuple(f) for f in summary["findings"]]
    return ScanSummary(**summary)


def _console(stderr: bool = False):
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    return Console(stderr=stderr, width=None if stream.isatty() else 200)


def _finding_json(row: dict[str, Any]) -> dict[str, Any]:
    out = {k: row.get(k) for k in FINDING_FIELDS}
    for key, value in json.loads(row.get("details") or "{}").items():
        out.setdefault(key, value)
    return out


def _read(out: str, table: str) -> list[dict[str, Any]]:
    """A table's rows, file by file: pyarrow.parquet.ParquetFile, because read_table goes through
    pyarrow.dataset, whose import pulls in pandas (0.6 s of a ~13 s scan on a warm server)."""
    import pyarrow.parquet as pq

    path = os.path.join(out, table)
    if not os.path.isdir(path):
        raise click.ClickException(f"{out} holds no `{table}` table: is it the --out of a kforensics scan?")
    rows: list[dict[str, Any]] = []
    for name in sorted(os.listdir(path)):
        if name.endswith(".parquet") and not name.startswith(("_", ".")):  # not Spark's _SUCCESS and .crc files
            rows += pq.ParquetFile(os.path.join(path, name)).read().to_pylist()
    return rows


def _print_json_lines(rows: list[dict[str, Any]]) -> None:
    for row in rows:
        sys.stdout.write(json.dumps(row, default=str) + "\n")


def _findings_table(rows: list[dict[str, Any]], title: str):
    from rich.table import Table

    table = Table(title=title, show_lines=False)
    for column in ("severity", "kind", "broker", "topic", "partition", "offset", "position", "producer_id",
                   "message"):
        table.add_column(column, overflow="fold", style="bold red" if column == "severity" else None)
    for r in rows:
        table.add_row(*[("" if r.get(c) is None else str(r.get(c))) for c in
                        ("severity", "kind", "broker", "topic", "partition", "offset", "position", "producer_id",
                         "message")])
    return table


def render_summary(summary: Any, findings: list[dict[str, Any]]) -> None:
    from rich.table import Table

    console = _console()
    facts = Table(title=f"kforensics scan -> {summary.out}", show_header=False)
    facts.add_column("what")
    facts.add_column("value", justify="right")
    for label, value in (("partitions", summary.partitions), ("segments", summary.segments),
                         ("batches", summary.batches), ("records", summary.records),
                         ("bytes", summary.bytes), ("producers", summary.producers),
                         *((f"transactions {k}", v) for k, v in sorted(summary.transactions.items())),
                         ("seconds", f"{summary.seconds:.1f}")):
        facts.add_row(label, f"{value:,}" if isinstance(value, int) else str(value))
    console.print(facts)
    by_kind = Table(title="findings by kind")
    for column in ("kind", "severity", "count"):
        by_kind.add_column(column, justify="right" if column == "count" else "left")
    for kind, severity, count in summary.findings:
        by_kind.add_row(kind, severity, str(count))
    console.print(by_kind)
    if findings:
        console.print(_findings_table(findings, "findings"))
    if getattr(summary, "dump_inputs", None):
        from kforensics.parsers.dump_text import NOT_IN_TEXT

        console.print(f"Read as kafka-dump-log text: {', '.join(summary.dump_inputs)}. Only batch headers (and "
                      f"control records, with --deep-iteration) come from the text: {NOT_IN_TEXT}.")
    if summary.not_in_input:
        console.print(f"Named by a transaction coordinator or a consumer group but not in the input, so not judged: "
                      f"{', '.join(summary.not_in_input)}")


def _spark_conf(pairs: tuple[str, ...]) -> dict[str, str]:
    conf = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--conf")
        conf[key.strip()] = value
    return conf


@click.command("scan")
@click.argument("dirs", nargs=-1, required=True, metavar="[NAME=]DIR|FILE...")
@click.option("--out", default=DEFAULT_OUT, show_default=True, help="Where the Parquet tables go.")
@click.option("--master", help="Spark master URL (default: embedded local[*]).")
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON lines.")
@click.option("--headers-only", is_flag=True, help="Read batch headers only (no record decoding, no content checks).")
@click.option("--topic", help="Only topics matching this glob.")
@click.option("--txn-timeout", type=click.IntRange(min=1), default=900_000, show_default=True,
              help="Transaction timeout (ms) after which an open transaction is hanging.")
@click.option("--transaction-state-partitions", type=click.IntRange(min=1), default=50, show_default=True,
              help="The cluster's transaction.state.log.num.partitions (how many __transaction_state partitions "
                   "exist, to tell which are missing from the input).")
@click.option("--conf", "spark_conf", multiple=True, metavar="KEY=VALUE", callback=lambda _ctx, _param, value:
              _spark_conf(value), help="A Spark property for this scan, as spark-submit's --conf (repeatable).")
def scan(dirs: tuple[str, ...], out: str, master: str | None, as_json: bool, headers_only: bool, topic: str | None,
         txn_timeout: int, transaction_state_partitions: int, spark_conf: dict[str, str]) -> None:
    """Scan broker log dirs with Spark and report what is wrong.

    A FILE is read as kafka-dump-log text (`kafka-dump-log.sh --files ... [--deep-iteration]`): its batch
    headers only.

    Runs on a `kforensics serve` of this user when one is running (unless --master or --conf is given, or
    KFORENSICS_SERVER=off), else in an embedded Spark session.

    \b
    Exit codes: 0 no warning or error finding, 1 findings, 2 usage error or unreadable input.
    \b
    Examples:
      kforensics scan sample_logs/broker-1 sample_logs/broker-2
      kforensics scan b1=/data/kafka-1 b2=/data/kafka-2 --out /tmp/incident --master spark://10.0.0.5:7077
      kforensics scan /data/kafka --json --topic 'payments*' > findings.jsonl
      kforensics scan /data/kafka --conf spark.driver.memory=8g
      kforensics scan broker-1=dump-b1.txt broker-2=dump-b2.txt
    """
    try:
        summary = run_scan_cli(dirs, out, master, headers_only, topic, txn_timeout,
                               show_progress=sys.stderr.isatty() and not as_json,
                               transaction_state_partitions=transaction_state_partitions, spark_conf=spark_conf)
    except OSError as exc:  # FileNotFoundError, or a remote listing refused after the first check
        raise click.BadParameter(str(exc), param_hint="DIR") from exc
    findings = [_finding_json(r) for r in _read(out, "findings")]
    if as_json:
        _print_json_lines(findings)
    else:
        render_summary(summary, [f for f in findings if f["severity"] != "info"])
    sys.exit(EXIT_FINDINGS if summary.has_problems else EXIT_OK)


@click.command("warmup")
@click.argument("dirs", nargs=-1, required=True, metavar="[NAME=]DIR...")
@click.option("--topic", help="Only topics matching this glob (a few partitions are enough).")
def warmup(dirs: tuple[str, ...], topic: str | None) -> None:
    """Record the embedded Spark JVM's classes once, so that later local Spark commands start faster.

    Scans DIR (headers-only, then in full; the tables go to a temporary folder that is deleted) in a JVM that
    writes the classes it loaded into a class-data archive under $KFORENSICS_CACHE_DIR (default
    ~/.cache/kforensics, about 200 MB). Later embedded sessions with the same Java, Spark and JVM options map
    it instead of reading the classes from Spark's jars. Which classes are loaded depends on the code paths,
    not on the amount of data: a small log dir, or --topic, keeps this short.

    \b
    Exit codes: 0 recorded, 1 no usable archive could be recorded, 2 usage error or unreadable input.
    """
    from kforensics.spark.jobs import warm_up
    from kforensics.spark.jvm_archive import record
    from kforensics.spark.session import LOCAL_JAVA_OPTIONS

    inputs = _inputs(dirs)
    _check_inputs(inputs, None)
    try:
        info = record(lambda spark: warm_up(spark, inputs, topic_glob=topic), LOCAL_JAVA_OPTIONS)
    except FileNotFoundError as exc:
        raise click.BadParameter(str(exc), param_hint="DIR") from exc
    except RuntimeError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"recorded {info['size'] / 1e6:,.0f} MB of class data in {info['seconds']:.0f} s: {info['path']}")


@click.command("serve")
@click.option("--warm", "warm_dirs", multiple=True, metavar="[NAME=]DIR",
              help="Scan DIR at start (headers-only, then in full, into a temporary folder that is deleted), so that "
                   "the first real scan already finds the JVM's code compiled; a small log dir is enough (repeatable).")
@click.option("--idle-timeout", type=click.IntRange(min=0), default=30, show_default=True,
              help="Minutes without a scan after which the server exits and frees its memory (0: never).")
@click.option("--socket", "socket_file", help="Unix socket to listen on [default: $KFORENSICS_SERVER_SOCKET, else "
                                              "server.sock in the cache dir].")
@click.option("--conf", "spark_conf", multiple=True, metavar="KEY=VALUE", callback=lambda _ctx, _param, value:
              _spark_conf(value), help="A Spark property of the server's session (repeatable).")
@click.option("--stop", is_flag=True, help="Ask the running server to exit (after its current scan) and return.")
def serve(warm_dirs: tuple[str, ...], idle_timeout: int, socket_file: str | None, spark_conf: dict[str, str],
          stop: bool) -> None:
    """Keep one embedded Spark session warm for this user's scans.

    While it runs, `kforensics scan` and the reports that scan a log dir hand their scan to it instead of
    starting Spark (unless --master or --conf is given, or KFORENSICS_SERVER=off): no session start, and the
    JVM's code is already compiled, so a scan of the same data takes about half as long. It holds the session's
    memory (spark.driver.memory, 3g by default) until it stops. Runs in the foreground; Ctrl-C or SIGTERM stop it.

    \b
    Exit codes: 0 stopped (idle, --stop, signal), 1 another server runs or the socket cannot be used
    (with --stop: no server runs), 2 usage error.
    \b
    Examples:
      kforensics serve --warm sample_logs/broker-1 &
      kforensics scan /data/kafka --headers-only     # runs on the server
      kforensics serve --stop
    """
    from kforensics.server import ServerRunning, socket_path, stop_server
    from kforensics.server import serve as run_server

    path = socket_file or socket_path()
    if stop:
        pid = stop_server(path)
        if pid is None:
            raise click.ClickException(f"no kforensics server listens on {path}")
        click.echo(f"asked the kforensics server (pid {pid}) to stop")
        return
    warm = _inputs(warm_dirs)
    _check_inputs(warm, None)
    err = _console(stderr=True)

    def log(message: str) -> None:
        err.print(f"[dim]{time.strftime('%H:%M:%S')}[/dim] {message}", highlight=False)

    try:
        run_server(path, idle_timeout_s=idle_timeout * 60 or None, warm=warm, conf=spark_conf, log=log,
                   ready=lambda: log(f"listening on {path} (pid {os.getpid()})"))
    except ServerRunning as exc:
        raise click.ClickException(str(exc)) from exc
    except OSError as exc:
        raise click.ClickException(f"cannot listen on {path}: {exc}") from exc


# --- reports over a finished scan -----------------------------------------------------------------

def _source(source: tuple[str, ...]) -> str:
    """An OUT dir of a finished scan, or log dirs to scan first (into a temporary OUT)."""
    if len(source) == 1 and os.path.isdir(os.path.join(source[0], "findings")):
        return source[0]
    out = tempfile.mkdtemp(prefix="kforensics-out-")
    run_scan_cli(source, out, None, False, None, 900_000, show_progress=sys.stderr.isatty())
    return out


def _filter(rows: list[dict[str, Any]], topic: str | None, partition: int | None, pid: int | None) -> list[dict]:
    return [r for r in rows if (topic is None or fnmatch.fnmatchcase(r["topic"], topic))
            and (partition is None or r["partition"] == partition)
            and (pid is None or r.get("producer_id") == pid)]


def _report_options(fn: Callable) -> Callable:
    for option in reversed([
        click.argument("source", nargs=-1, required=True, metavar="OUT|[NAME=]DIR..."),
        click.option("--json", "as_json", is_flag=True, help="JSON lines."),
        click.option("--topic", help="Only topics matching this glob."),
        click.option("--partition", type=int, help="Only this partition."),
        click.option("--pid", type=int, help="Only this producer id."),
    ]):
        fn = option(fn)
    return fn


def _table(rows: list[dict[str, Any]], columns: list[str], title: str) -> None:
    from rich.table import Table

    table = Table(title=title)
    for column in columns:
        table.add_column(column, overflow="fold")
    for r in rows:
        table.add_row(*["" if r.get(c) is None else str(r.get(c)) for c in columns])
    _console().print(table)


GAP_KINDS = ("sequence_gap", "duplicate_sequence", "zombie_epoch", "content_duplicate")


@click.command("gaps")
@_report_options
def gaps(source: tuple[str, ...], as_json: bool, topic: str | None, partition: int | None, pid: int | None) -> None:
    """Sequence gaps, duplicates and zombie writes per producer.

    \b
    Example: kforensics gaps ./kforensics-out --topic orders --json
    """
    out = _source(source)
    rows = _filter([_finding_json(r) for r in _read(out, "findings") if r["kind"] in GAP_KINDS], topic, partition, pid)
    if as_json:
        _print_json_lines(rows)
    else:
        _table(rows, ["kind", "broker", "topic", "partition", "producer_id", "producer_epoch", "offset",
                      "expected_sequence", "found_sequence", "gap_size", "size_class", "message"], "sequence problems")


TXN_FIELDS = ("broker", "topic", "partition", "producer_id", "producer_epoch", "transactional_id",
              "expected_coordinator_partition", "first_offset",
              "last_data_offset", "marker_offset", "outcome", "coordinator_epoch", "batch_count", "record_count",
              "duration_ms")


@click.command("txns")
@_report_options
@click.option("--longest", type=int, default=10, show_default=True, help="How many of the longest to list.")
def txns(source: tuple[str, ...], as_json: bool, topic: str | None, partition: int | None, pid: int | None,
         longest: int) -> None:
    """Transactions: committed / aborted / open / empty, sizes, durations, the longest ones.

    \b
    Example: kforensics txns ./kforensics-out --pid 2001
    """
    out = _source(source)
    rows = _filter(_read(out, "transactions"), topic, partition, pid)
    rows.sort(key=lambda r: (r["broker"], r["topic"], r["partition"], r["first_offset"] if r["first_offset"] is not None
                             else r["marker_offset"]))
    lines = [{k: r.get(k) for k in TXN_FIELDS} for r in rows]
    if as_json:
        _print_json_lines(lines)
        return
    stats: dict[str, list[dict]] = {}
    for r in lines:
        outcome = "EMPTY" if r["outcome"] != "OPEN" and not r["batch_count"] else r["outcome"]
        stats.setdefault(outcome, []).append(r)
    summary = []
    for outcome, group in sorted(stats.items()):
        sizes = sorted(r["record_count"] or 0 for r in group)
        durations = sorted(r["duration_ms"] for r in group if r["duration_ms"] is not None)
        summary.append({"outcome": outcome, "count": len(group), "records_total": sum(sizes),
                        "records_median": sizes[len(sizes) // 2] if sizes else None,
                        "records_max": sizes[-1] if sizes else None,
                        "duration_ms_median": durations[len(durations) // 2] if durations else None,
                        "duration_ms_max": durations[-1] if durations else None})
    _table(summary, ["outcome", "count", "records_total", "records_median", "records_max", "duration_ms_median",
                     "duration_ms_max"], "transactions by outcome")
    ranked = sorted((r for r in lines if r["duration_ms"] is not None), key=lambda r: -r["duration_ms"])[:longest]
    _table(ranked, list(TXN_FIELDS), f"longest {longest} transactions")
    open_ones = [r for r in lines if r["outcome"] == "OPEN"]
    if open_ones:
        _table(open_ones, list(TXN_FIELDS), "open transactions")


@click.command("lso")
@_report_options
@click.option("--progression", is_flag=True, help="One line per LSO change point.")
def lso(source: tuple[str, ...], as_json: bool, topic: str | None, partition: int | None, pid: int | None,
        progression: bool) -> None:
    """Last stable offset per partition, where it is stuck and by whom.

    \b
    Example: kforensics lso ./kforensics-out --progression --topic payments
    """
    out = _source(source)
    if progression:
        rows = _filter(_read(out, "lso_changes"), topic, partition, None)
        rows.sort(key=lambda r: (r["broker"], r["topic"], r["partition"], r["offset"]))
        lines = [{k: r[k] for k in ("broker", "topic", "partition", "offset", "last_stable_offset",
                                    "held_by_producer_id")} for r in rows
                 if pid is None or r["held_by_producer_id"] == pid]
        columns = ["broker", "topic", "partition", "offset", "last_stable_offset", "held_by_producer_id"]
        title = "LSO change points"
    else:
        rows = _filter(_read(out, "lso"), topic, partition, None)
        rows.sort(key=lambda r: (r["broker"], r["topic"], r["partition"]))
        lines = [{k: r[k] for k in ("broker", "topic", "partition", "last_stable_offset", "high_watermark",
                                    "log_end_offset", "held_by_producer_id", "stuck")} for r in rows
                 if pid is None or r["held_by_producer_id"] == pid]
        columns = ["broker", "topic", "partition", "last_stable_offset", "high_watermark", "log_end_offset",
                   "held_by_producer_id", "stuck"]
        title = "last stable offset"
    if as_json:
        _print_json_lines(lines)
    else:
        _table(lines, columns, title)


PRODUCER_FIELDS = ("broker", "topic", "partition", "producer_id", "producer_epoch", "first_offset", "last_offset",
                   "first_sequence", "last_sequence", "batch_count", "record_count", "first_timestamp",
                   "last_timestamp", "is_transactional")


@click.command("producers")
@_report_options
def producers(source: tuple[str, ...], as_json: bool, topic: str | None, partition: int | None,
              pid: int | None) -> None:
    """Per producer id and epoch: offsets, sequence ranges, batch and record counts.

    \b
    Example: kforensics producers ./kforensics-out --topic orders
    """
    out = _source(source)
    rows = _filter(_read(out, "producers"), topic, partition, pid)
    rows.sort(key=lambda r: (r["broker"], r["topic"], r["partition"], r["producer_id"], r["producer_epoch"]))
    lines = [{k: r.get(k) for k in PRODUCER_FIELDS} for r in rows]
    if as_json:
        _print_json_lines(lines)
    else:
        _table(lines, list(PRODUCER_FIELDS), "producers")


@click.command("report")
@click.argument("out", metavar="OUT")
@click.option("--html", "html_file", type=click.Path(dir_okay=False, writable=True),
              help="Write one self-contained HTML file (plots inline, nothing fetched) instead of printing tables.")
@click.option("--max-plots", type=click.IntRange(min=0), default=40, show_default=True,
              help="Partition timelines to draw (partitions with findings first).")
def report(out: str, html_file: str | None, max_plots: int) -> None:
    """The scan under OUT as an incident-review report: summary, findings by kind and partition, replicas,
    the transaction coordinator, consumer offsets and per-partition timelines.

    \b
    Exit codes: 0 no warning or error finding, 1 findings, 2 usage error or no scan under OUT.
    \b
    Examples:
      kforensics report ./kforensics-out
      kforensics report ./kforensics-out --html incident.html
    """
    from kforensics.report import load_report, render_html, render_terminal

    try:
        loaded = load_report(out, max_plots=max_plots)
    except FileNotFoundError as exc:
        raise click.BadParameter(str(exc), param_hint="OUT") from exc
    if html_file:
        render_html(loaded, html_file)
        click.echo(f"wrote {html_file} ({os.path.getsize(html_file):,} bytes)", err=True)
    else:
        render_terminal(loaded, _console())
    sys.exit(EXIT_FINDINGS if loaded.has_problems else EXIT_OK)


COMMANDS = (scan, serve, warmup, gaps, txns, lso, producers, report)
