"""The `kforensics` command line: registers the commands of `kforensics.commands`; nothing more.

Start-up matters: this module imports neither pyspark nor pyarrow at import time (only the light parts of the
parsers that the options name: the file types, the finding kinds). Each command imports what it needs when it
runs, so `kforensics --help` and `kforensics dump` never load Spark.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
import traceback
from typing import Any

import click

from kforensics import __version__
from kforensics.commands.dump import dump
from kforensics.commands.eos import eos
from kforensics.commands.explain import explain
from kforensics.commands.export import export
from kforensics.commands.find import find
from kforensics.commands.locate import locate
from kforensics.commands.reports import gaps, groups, leaders, lso, producers, report, txns
from kforensics.commands.scan import scan
from kforensics.commands.serve import serve, warmup


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from kforensics.parsers.core import reader_description  # only here: --help stays light

    click.echo(f"kforensics, version {__version__}, {reader_description()}")
    ctx.exit()


#: Exit codes beyond 0 (done, nothing wrong), 1 (findings) and 2 (usage error or failure): see docs/output.md.
EXIT_FAILED, EXIT_INTERRUPTED, EXIT_BROKEN_PIPE = 2, 130, 141


class Commands(click.Group):
    """The command group, with one rule for how a command ends: 1 means findings and nothing else; a usage error or
    any failure (an exception included) exits with 2 after one line on stderr, never a traceback
    (KFORENSICS_DEBUG=1 adds it); the input's strings in that line are shown, not obeyed (kforensics.render)."""

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        argv = list(sys.argv[1:] if args is None else args)
        try:
            code = super().main(argv, prog_name, complete_var, False, **extra)
        except click.ClickException as exc:
            _show_click_error(exc)
            sys.exit(EXIT_FAILED)
        except (click.Abort, KeyboardInterrupt):
            _stderr_line(f"kforensics {_command_name(argv, self)}: interrupted")
            sys.exit(EXIT_INTERRUPTED)
        except BrokenPipeError:  # the reader of stdout went away (`| head`): end as a tool killed by SIGPIPE does
            with contextlib.suppress(OSError, ValueError):  # no more writes to the closed pipe at exit
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(EXIT_BROKEN_PIPE)
        except Exception as exc:  # noqa: BLE001 - the one place every other failure ends
            _stderr_line(_failure_line(argv, _command_name(argv, self), exc))
            sys.exit(EXIT_FAILED)
        sys.exit(code if isinstance(code, int) else 0)


def _command_name(argv: list[str], group: click.Group) -> str:
    return next((a for a in argv if a in group.commands), "").strip() or "-"


def _stderr_line(message: str) -> None:
    from kforensics.render import echo

    echo(message, err=True)


def _show_click_error(exc: click.ClickException) -> None:
    from kforensics.render import shown

    exc.message = shown(exc.message)
    if isinstance(exc, click.FileError):
        exc.ui_filename = shown(exc.ui_filename)
    exc.show()


def _failure_line(argv: list[str], command: str, exc: BaseException) -> str:
    """What failed, in one line, and where its traceback is (a file of kforensics' log dir)."""
    lines = str(exc).strip().splitlines()
    what = f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__
    trace = "".join(traceback.format_exception(exc))
    if os.environ.get("KFORENSICS_DEBUG", "").lower() in ("1", "true", "yes", "on"):
        sys.stderr.write(trace)
    try:
        from kforensics.paths import log_dir

        path = log_dir() / f"error-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}.log"
        path.write_text(f"kforensics {' '.join(argv)}\n{trace}", encoding="utf-8",
                        errors="backslashreplace")
        where = f"; traceback in {path} (KFORENSICS_DEBUG=1 prints it)"
    except OSError:
        where = "; KFORENSICS_DEBUG=1 prints the traceback"
    return f"kforensics {command} failed: {what}{where}"


@click.group(cls=Commands, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
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
      kforensics groups ./kforensics-out --group billing
      kforensics explain ./kforensics-out
      kforensics report ./kforensics-out --html incident.html
      kforensics find b1=/var/lib/kafka b2=/mnt/copy-of-broker-2/kafka --key A-1042
      kforensics export /var/lib/kafka --topic orders --partition 0 --offsets 1200:1899 --out lost.jsonl
    """


for _command in (dump, scan, explain, locate, find, export, serve, warmup, gaps, txns, lso, producers, leaders, eos,
                 groups, report):
    main.add_command(_command)
