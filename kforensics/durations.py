"""Durations on the command line: `90m`, `1h`, `45s`, `500ms`, or a plain number of milliseconds."""

from __future__ import annotations

import click

from kforensics.scan_options import parse_duration_ms


class Duration(click.ParamType):
    """A duration, converted to milliseconds (`scan_options.parse_duration_ms`)."""

    name = "duration"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> int:
        try:
            return parse_duration_ms(value)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)
