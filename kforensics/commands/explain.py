"""`kforensics explain`: the incidents of a finished scan (kforensics/incident_report.py), each as a short story
(title, cost, timeline, next safe actions) or as JSON lines."""

from __future__ import annotations

import sys

import click

from kforensics.commands import options


@click.command("explain")
@click.argument("out", metavar="OUT")
@click.option("--incident", "incident", metavar="ID", help="Only this incident (its id, as the list shows it).")
@options.as_json
def explain(out: str, incident: str | None, as_json: bool) -> None:
    """What happened, what it cost and what to do next: the findings of a finished scan grouped into incidents, one
    root cause and the findings that follow from it (docs/incidents.md has every rule). Each incident's plan puts
    what saves data first (a kforensics export of exactly what a later step would destroy), then checks, then
    Kafka's own commands with every value filled in (<BOOTSTRAP> stays: your cluster's bootstrap servers);
    DESTRUCTIVE marks the steps that discard or hide data.

    Exit codes: 0 no incident holds a warning or error, 1 some do, 2 usage error or no completed scan under OUT.

    \b
    Examples:
      kforensics explain ./kforensics-out
      kforensics explain ./kforensics-out --incident 3f9c2a0d1e5b7a44 --json
    """
    from kforensics import incident_report, render, scan_output

    try:
        scan_output.require_complete(out)
        incidents = incident_report.load(out, incident)
    except scan_output.OutputError as exc:
        raise click.BadParameter(str(exc), param_hint="OUT") from exc
    if incident is not None and not incidents:
        raise click.BadParameter(f"no incident {incident!r} in {out}", param_hint="--incident")
    if as_json:
        render.json_lines(incident_report.json_line(r, out) for r in incidents)
    elif not incidents:
        render.echo(f"no incident: the scan under {out} found nothing that is wrong")
    else:
        for r in incidents:
            render.incident(r, incident_report.timeline_rows(r), incident_report.action_rows(r, out),
                            incident_report.cost_line(r))
    sys.exit(options.EXIT_FINDINGS if incident_report.has_problems(incidents) else options.EXIT_OK)
