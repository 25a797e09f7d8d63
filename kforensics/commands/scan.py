"""`kforensics scan`: scan broker log dirs with Spark and report what is wrong."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from kforensics.commands import options
from kforensics.defaults import DEFAULT_OUT

if TYPE_CHECKING:
    from kforensics.scan_options import ScanOptions


@click.command("scan")
@click.argument("dirs", nargs=-1, required=True, metavar="[NAME=]DIR|FILE...")
@click.option("--out", default=DEFAULT_OUT, show_default=True, help="Where the Parquet tables go.")
@click.option("--master", help="Spark master URL (default: embedded local[*]).")
@click.option("--ship-env", is_flag=True, help="With --master: pack this Python environment (venv-pack, cached) and "
                                               "ship it to the executors, which then run kforensics' compiled core.")
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON lines.")
@options.scan_options
@options.spark_conf("A Spark property for this scan, as spark-submit's --conf (repeatable).")
@options.verbose("OUT/_kforensics-spark.log")
def scan(dirs: tuple[str, ...], out: str, master: str | None, ship_env: bool, as_json: bool,
         spark_conf: dict[str, str], verbose: bool, **option_values: object) -> None:
    """Scan broker log dirs with Spark and report what is wrong.

    Runs on a `kforensics serve` of this user when one is running (unless --master or --conf is given, or
    KFORENSICS_SERVER=off), else in an embedded Spark session.

    A FILE is read as kafka-dump-log text (`kafka-dump-log.sh --files ... [--deep-iteration]`): its batch
    headers only.

    OUT must be absent, empty or an earlier scan's output (its `_kforensics.json` manifest): only what that
    scan wrote is replaced, and nothing else in OUT is ever deleted. The manifest says `completed: true` only
    once every table is written.

    \b
    Exit codes: 0 no warning or error finding, 1 findings, 2 usage error, unreadable input, an OUT
    kforensics may not write, or the scan failed (one line on stderr names Spark's log).
    \b
    Examples:
      kforensics scan sample_logs/broker-1 sample_logs/broker-2
      kforensics scan b1=/data/kafka-1 b2=/data/kafka-2 --out /tmp/incident --master spark://10.0.0.5:7077
      kforensics scan /data/kafka --json --topic 'payments*' > findings.jsonl
      kforensics scan /data/kafka --conf spark.driver.memory=8g
      kforensics scan broker-1=dump-b1.txt broker-2=dump-b2.txt
    """
    from kforensics import queries, render
    from kforensics.scan_options import ScanOptions

    if ship_env and not master:
        raise click.BadParameter("needs --master (an embedded scan's executors run this Python already)",
                                 param_hint="--ship-env")
    scan_options = ScanOptions.from_dict(option_values)
    summary = run_scan(dirs, out, scan_options,
                       master=master, spark_conf=spark_conf, verbose=verbose, ship_env=ship_env,
                       show_progress=sys.stderr.isatty() and not as_json)
    findings = queries.findings(out)
    if as_json:
        render.json_lines(findings)
    else:
        from kforensics import incident_report

        render.scan_summary(summary, findings, incident_report.summary_rows(incident_report.load(out)))
    if scan_options.profile:
        render.profile(out)
    sys.exit(options.EXIT_FINDINGS if summary.has_problems else options.EXIT_OK)


def run_scan(dirs: tuple[str, ...], out: str, scan_options: ScanOptions, *, master: str | None = None,
             spark_conf: dict[str, str] | None = None, verbose: bool = False, show_progress: bool = False,
             ship_env: bool = False):  # noqa: ANN201
    """The scan behind `scan` and the reports over log dirs, with a progress bar; click errors for exit codes."""
    from kforensics import render, scan_runner

    inputs = options.inputs(dirs, out)
    bar, progress, note = render.progress_bar(show_progress)
    try:
        with bar:
            return scan_runner.run(inputs, out, scan_options, master=master, spark_conf=spark_conf, verbose=verbose,
                                   ship_env=ship_env,
                                   progress=progress if show_progress else None,
                                   note=note)
    except scan_runner.ScanFailed as exc:
        if exc.usage:
            raise click.BadParameter(str(exc), param_hint=exc.param) from exc
        raise click.ClickException(str(exc)) from exc
