"""Options and argument handling the commands share (click only; nothing heavy is imported here)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from kforensics.defaults import DEFAULT_TRANSACTION_STATE_PARTITIONS, DEFAULT_TXN_TIMEOUT_MS

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


def inputs(dirs: tuple[str, ...], out: str | None = None, *, files: bool = True,
           uri_queries: bool = False) -> list[tuple[str, str]]:
    """`[NAME=]DIR...` (and, `files`, `[NAME=]FILE` of kafka-dump-log text) as (label, path), checked (usage
    error, exit code 2, for a missing dir, two equal labels, or an --out inside an input; `out` None: the tables
    go to a fresh temporary folder)."""
    from kforensics.inputs import input_problem, parse_inputs

    parsed = parse_inputs(list(dirs))
    problem = input_problem(parsed, out, files=files, uri_queries=uri_queries)
    if problem is not None:
        raise click.BadParameter(problem[1], param_hint=problem[0])
    return parsed


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


txn_timeout = click.option("--txn-timeout", type=click.IntRange(min=1), default=DEFAULT_TXN_TIMEOUT_MS,
                           show_default=True, help="Transaction timeout (ms) after which an open transaction is "
                                                   "hanging.")
transaction_state_partitions = click.option(
    "--transaction-state-partitions", type=click.IntRange(min=1), default=DEFAULT_TRANSACTION_STATE_PARTITIONS,
    show_default=True, help="The cluster's transaction.state.log.num.partitions (how many __transaction_state "
                            "partitions exist, to tell which are missing from the input).")
