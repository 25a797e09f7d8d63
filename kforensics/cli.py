"""The `kforensics` command line. Commands parse options, call the library and render; nothing more.

Start-up matters: this module imports neither pyspark nor the parsers at import time. Each command
imports what it needs when it runs, so `kforensics --help` and `kforensics dump` never load Spark.
"""

from __future__ import annotations

import click

from kforensics import __version__


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


def _register() -> None:
    from kforensics.dump_cmd import dump
    from kforensics.locate_cmd import locate
    from kforensics.scan_cmd import COMMANDS

    main.add_command(dump)
    main.add_command(locate)
    for command in COMMANDS:
        main.add_command(command)


_register()
