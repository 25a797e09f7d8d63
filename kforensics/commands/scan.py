"""`kforensics scan`: scan broker log dirs with Spark and report what is wrong."""

from __future__ import annotations

import sys

import click

from kforensics.commands import options
from kforensics.defaults import DEFAULT_OUT, DEFAULT_RESEND_MIN_RECORDS, DEFAULT_RESEND_TAIL
from kforensics.durations import Duration


@click.command("scan")
@click.argument("dirs", nargs=-1, required=True, metavar="[NAME=]DIR|FILE...")
@click.option("--out", default=DEFAULT_OUT, show_default=True, help="Where the Parquet tables go.")
@click.option("--master", help="Spark master URL (default: embedded local[*]).")
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON lines.")
@click.option("--headers-only", is_flag=True, help="Read batch headers only (no record decoding, no content checks).")
@click.option("--topic", help="Only topics matching this glob.")
@options.txn_timeout
@options.transaction_state_partitions
@click.option("--remote-stuck-after", type=Duration(), default="1h", show_default=True,
              help="A remote segment left in COPY_SEGMENT_STARTED or DELETE_SEGMENT_STARTED this long before its "
                   "partition's newest __remote_log_metadata event is stuck (1h, 90m, 45s, or ms).")
@click.option("--resend-min-records", type=click.IntRange(min=1), default=DEFAULT_RESEND_MIN_RECORDS,
              show_default=True, help="content_duplicate: the fewest consecutive records that make a re-send.")
@click.option("--resend-tail", type=click.IntRange(min=1), default=DEFAULT_RESEND_TAIL, show_default=True,
              help="content_duplicate: how many of an earlier producer id's last records a re-send may come from.")
@click.option("--resend-window", type=Duration(), default="15m", show_default=True,
              help="content_duplicate: the longest time between an earlier producer id's last write and the new "
                   "one's first (1h, 90m, 45s, or ms; 0: no limit).")
@options.spark_conf("A Spark property for this scan, as spark-submit's --conf (repeatable).")
@options.verbose("OUT/_kforensics-spark.log")
def scan(dirs: tuple[str, ...], out: str, master: str | None, as_json: bool, headers_only: bool, topic: str | None,
         txn_timeout: int, transaction_state_partitions: int, remote_stuck_after: int, resend_min_records: int,
         resend_tail: int, resend_window: int, spark_conf: dict[str, str], verbose: bool) -> None:
    """Scan broker log dirs with Spark and report what is wrong.

    Runs on a `kforensics serve` of this user when one is running (unless --master or --conf is given, or
    KFORENSICS_SERVER=off), else in an embedded Spark session.

    A FILE is read as kafka-dump-log text (`kafka-dump-log.sh --files ... [--deep-iteration]`): its batch
    headers only.

    OUT must be absent, empty or an earlier scan's output (its `_kforensics.json` manifest): only what that
    scan wrote is replaced, and nothing else in OUT is ever deleted. The manifest says `completed: true` only
    once every table is written.

    \b
    Exit codes: 0 no warning or error finding, 1 findings (or the scan failed), 2 usage error, unreadable
    input, or an OUT kforensics may not write.
    \b
    Examples:
      kforensics scan sample_logs/broker-1 sample_logs/broker-2
      kforensics scan b1=/data/kafka-1 b2=/data/kafka-2 --out /tmp/incident --master spark://10.0.0.5:7077
      kforensics scan /data/kafka --json --topic 'payments*' > findings.jsonl
      kforensics scan /data/kafka --conf spark.driver.memory=8g
      kforensics scan broker-1=dump-b1.txt broker-2=dump-b2.txt
    """
    from kforensics import queries, render
    from kforensics.scan_runner import ScanOptions

    scan_options = ScanOptions(headers_only=headers_only, topic_glob=topic, txn_timeout_ms=txn_timeout,
                               transaction_state_partitions=transaction_state_partitions,
                               remote_stuck_after_ms=remote_stuck_after, resend_min_records=resend_min_records,
                               resend_tail=resend_tail, resend_window_ms=resend_window)
    summary = run_scan(dirs, out, scan_options,
                       master=master, spark_conf=spark_conf, verbose=verbose,
                       show_progress=sys.stderr.isatty() and not as_json)
    findings = queries.findings(out)
    if as_json:
        render.json_lines(findings)
    else:
        render.scan_summary(summary, findings)
    sys.exit(options.EXIT_FINDINGS if summary.has_problems else options.EXIT_OK)


def run_scan(dirs: tuple[str, ...], out: str, scan_options: object, *, master: str | None = None,
             spark_conf: dict[str, str] | None = None, verbose: bool = False, show_progress: bool = False):  # noqa: ANN201
    """The scan behind `scan` and the reports over log dirs, with a progress bar; click errors for exit codes."""
    from kforensics import render, scan_runner

    inputs = options.inputs(dirs, out)
    bar, progress = render.progress_bar(show_progress)
    try:
        with bar:
            return scan_runner.run(inputs, out, scan_options, master=master, spark_conf=spark_conf, verbose=verbose,
                                   progress=progress if show_progress else None,
                                   note=lambda message: bar.console.print(message, style="dim"))
    except scan_runner.ScanFailed as exc:
        if exc.usage:
            raise click.BadParameter(str(exc), param_hint=exc.param) from exc
        raise click.ClickException(str(exc)) from exc
