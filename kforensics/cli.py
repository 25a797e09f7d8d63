"""The `kforensics` command line: registers the commands of `kforensics.commands`; nothing more.

Start-up matters: this module imports neither pyspark nor pyarrow at import time (only the light parts of the
parsers that the options name: the file types, the finding kinds). Each command imports what it needs when it
runs, so `kforensics --help` and `kforensics dump` never load Spark.
"""

from __future__ import annotations

import click

from kforensics import __version__
from kforensics.commands.dump import dump
from kforensics.commands.eos import eos
from kforensics.commands.export import export
from kforensics.commands.locate import locate
from kforensics.commands.reports import gaps, leaders, lso, producers, report, txns
from kforensics.commands.scan import scan
from kforensics.commands.serve import serve, warmup


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from kforensics.parsers.core import reader_description  # only here: --help stays light

    click.echo(f"kforensics, version {__version__}, {reader_description()}")
    ctx.exit()


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Show the version and which segment reader runs (compiled or pure-Python), then exit.")
def main() -> None:
    """Forensics for Apache Kafka broker disks.

    \b
    Examples:
      kforensics dump /var/lib/kafka/orders-0/00000000000000000000.log --deep-iteration
      kforensics scan broker-1=/var/lib/kafka broker-2=/mnt/copy-of-broker-2/kafka
      kforensics txns ./kforensics-out --pid 4000
      kforensics eos ./kforensics-out --transactional-id wordcount-a-1
      kforensics locate --transactional-id payments-app-1 /var/lib/kafka
      kforensics leaders ./kforensics-out --topic orders
      kforensics report ./kforensics-out --html incident.html
      kforensics export /var/lib/kafka --topic orders --partition 0 --offsets 1200:1899 --out lost.jsonl
    """


for _command in (dump, scan, locate, export, serve, warmup, gaps, txns, lso, producers, leaders, eos, report):
    main.add_command(_command)
