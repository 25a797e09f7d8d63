"""`kforensics eos`: the exactly-once audit of a finished scan (kforensics/eos_report.py), as tables or JSON lines."""

from __future__ import annotations

import sys

import click

from kforensics.commands import options
from kforensics.commands.reports import _source


@click.command("eos")
@options.source
@click.option("--transactional-id", help="Only this transactional id (its producer ids, transactions, offset commits).")
@click.option("--group", help="Only this consumer group (its transactional offset commits and their transactions).")
@options.as_json
def eos(source: tuple[str, ...], transactional_id: str | None, group: str | None, as_json: bool) -> None:
    """Did exactly-once hold? Per transactional id: its producer ids and epochs over time, its transactions by
    outcome with the partitions each touched and the offset commits each carried with their fate; per consumer
    group: which input offsets were committed atomically with which outputs; and the findings that say it did not.

    Exit codes: 0 no warning or error finding among them, 1 some, 2 usage error or no completed scan under OUT.

    \b
    Examples:
      kforensics eos ./kforensics-out
      kforensics eos ./kforensics-out --transactional-id wordcount-a-1 --json
    """
    from kforensics import eos_report, render

    with _source(source) as out:
        audit = eos_report.load_audit(out, transactional_id=transactional_id, group=group)
    if as_json:
        render.json_lines(audit.lines())
    else:
        if audit.producers:
            render.table(audit.producers, eos_report.PRODUCER_TABLE, "producer ids per transactional id")
        if audit.transactions:
            render.table(eos_report.transaction_rows(audit), eos_report.TRANSACTION_TABLE, "transactions")
        if audit.group_commits:
            render.table(eos_report.group_rows(audit), eos_report.GROUP_TABLE,
                         "offsets committed with their outputs")
        if audit.findings:
            render.table(audit.findings, eos_report.FINDING_TABLE, "findings", style={"severity": "bold"})
        if not (audit.producers or audit.transactions or audit.group_commits):
            click.echo("no transactional id or transactional offset commit in the scan's input", err=True)
    sys.exit(options.EXIT_FINDINGS if audit.has_problems else options.EXIT_OK)
