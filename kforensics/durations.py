"""Durations on the command line: `90m`, `1h`, `45s`, `500ms`, or a plain number of milliseconds."""

from __future__ import annotations

import re

import click

_UNITS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
_DURATION = re.compile(r"^\s*(\d+)\s*(ms|s|m|h|d)?\s*$")


class Duration(click.ParamType):
    """A duration, converted to milliseconds."""

    name = "duration"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        m = _DURATION.match(str(value))
        if not m:
            self.fail(f"{value!r} is not a duration such as 1h, 90m, 45s, 500ms or a number of milliseconds", param, ctx)
        return int(m.group(1)) * _UNITS[m.group(2) or "ms"]
