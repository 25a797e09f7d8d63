"""Options and argument handling the commands share (click only; nothing heavy is imported here)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2

#: The options of the reports over a scan, declared once (gaps, txns, lso, producers, leaders, groups, eos).
source = click.argument("source", nargs=-1, required=True, metavar="OUT|[NAME=]DIR...")
as_json = click.option("--json", "as_json", is_flag=True, help="JSON lines.")
topic = click.option("--topic", help="Only topics matching this glob.")
partition = click.option("--partition", type=int, help="Only this partition.")
pid = click.option("--pid", type=int, help="Only this producer id.")


def inputs(dirs: tuple[str, ...], out: str | None = None, *, files: bool = True,
           uri_queries: bool = False) -> list[tuple[str, str]]:
    """`[NAME=]DIR...` (and, `files`, `[NAME=]FILE` of kafka-dump-log text) as (label, path), checked (usage
    error, exit code 2, for a missing dir, two equal labels not written as NAME=, the same dir twice, or an --out
    inside an input; one NAME given several dirs is one broker's log dirs; `out` None: the tables
    go to a fresh temporary folder)."""
    from kforensics.inputs import input_problem, label_problem, parse_inputs

    parsed = parse_inputs(list(dirs))
    problem = label_problem(list(dirs)) or input_problem(parsed, out, files=files, uri_queries=uri_queries)
    if problem is not None:
        raise click.BadParameter(problem[1], param_hint=problem[0])
    return parsed


def parse_offsets(text: str | None) -> tuple[int | None, int | None]:
    """FROM:TO, inclusive, either side may be empty (100:200, 100:, :200), as (first, last); ValueError says what is
    wrong (an inverted range too: a start after its end selects nothing, so it is a typo)."""
    if text is None:
        return None, None
    first, sep, last = text.partition(":")
    try:
        if not sep:
            raise ValueError
        lo, hi = (int(first) if first else None, int(last) if last else None)
    except ValueError:
        raise ValueError(f"{text!r} is not FROM:TO (e.g. 100:200, 100: or :200)") from None
    if lo is not None and hi is not None and lo > hi:
        raise ValueError(f"{text!r}: start is after end")
    return lo, hi


def _offsets(_ctx: Any, _param: Any, text: str | None) -> tuple[int | None, int | None]:
    try:
        return parse_offsets(text)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--offsets") from None


def offsets(name: str) -> Callable:
    """--offsets FROM:TO, passed to the command as `name`: (first, last), None for an open side."""
    return click.option("--offsets", name, metavar="FROM:TO", callback=_offsets,
                        help="Only offsets in this inclusive range (either side may be empty; FROM after TO is a usage "
                             "error).")


def _spark_conf(_ctx: Any, _param: Any, pairs: tuple[str, ...]) -> dict[str, str]:
    conf = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--conf")
        conf[key.strip()] = value
    return conf


def spark_conf(help_text: str) -> Callable:
    return click.option("--conf", "spark_conf", multiple=True, metavar="KEY=VALUE", callback=_spark_conf,
                        help=help_text)


def verbose(where: str) -> Callable:
    return click.option("--verbose", is_flag=True, help=f"Spark's and the JVM's log on stderr instead of in {where} "
                                                        "(also KFORENSICS_VERBOSE=1).")


class Moment(click.ParamType):
    """A moment on the command line: epoch milliseconds or ISO-8601 (UTC unless it says otherwise), as epoch ms."""

    name = "time"

    def convert(self, value: Any, param: Any, ctx: Any) -> int:
        if isinstance(value, int):
            return value
        from kforensics.times import parse_time_ms

        try:
            return parse_time_ms(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


def scan_options(command: Callable) -> Callable:
    """The options of `scan_options.ScanOptions` (SCAN_OPTIONS), each passed to the command under its field name;
    `ScanOptions.from_dict(kwargs)` makes the value."""
    from kforensics.durations import Duration
    from kforensics.scan_options import SCAN_OPTIONS, ScanOptions

    for name, spec in reversed(SCAN_OPTIONS):
        default = ScanOptions.__dataclass_fields__[name].default
        if spec.kind == "flag":
            option = click.option(spec.flag, name, is_flag=True, help=spec.help)
        elif spec.kind == "glob":
            option = click.option(spec.flag, name, help=spec.help)
        elif spec.kind == "time":
            option = click.option(spec.flag, name, type=Moment(), metavar="T", help=spec.help)
        else:
            kind = Duration() if spec.kind == "duration" else click.IntRange(min=spec.minimum)
            option = click.option(spec.flag, name, type=kind, default=spec.shown or default, show_default=True,
                                  help=spec.help)
        command = option(command)
    return command

