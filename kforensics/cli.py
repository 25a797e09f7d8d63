"""The `kforensics` command line: registers the commands of `kforensics.commands`; nothing more.

Start-up matters: this module imports neither pyspark nor the parsers at import time. Each command
imports what it needs when it runs, so `kforensics --help` and `kforensics dump` never load Spark.
"""

from __future__ import annotations

import click

from kforensics import __version__
from kforensics.commands.dump import dump
from kforensics.commands.locate import locate
from kforensics.commands.reports import gaps, lso, producers, report, txns
from kforensics.commands.scan import scan
from kforensics.commands.serve import serve, warmup


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.version_option(__version__, prog_name="kforensics")
def main() -> None:
    """Forensics for Apache Kafka broker disks.

    \b
    Examples:
      kforensics dump /var/lib/kafka/orders-0/00000000000000000000.log --deep-iteration
      kforensics scan broker-1=/var/lib/kafka broker-2=/mnt/copy-of-broker-2/kafka
      kforensics txns ./kforensics-out --pid 4000
      kforensics locate --transactional-id payments-app-1 /var/lib/kafka
      kforensics report ./kforensics-out --html incident.html
    """


for _command in (dump, scan, locate, serve, warmup, gaps, txns, lso, producers, report):
    main.add_command(_command)
