"""ScanOptions, defined once: the `scan` command, the spark-submit entry point and the server request all take every
option, spelled and checked the same way (no Spark started here)."""

from __future__ import annotations

import argparse
import dataclasses

import pytest
from click.testing import CliRunner

from kforensics.cli import main
from kforensics.scan_options import SCAN_OPTIONS, ScanOptions, add_arguments, from_arguments, parse_duration_ms


def test_every_option_is_on_the_command_line_and_in_spark_submit() -> None:
    assert [name for name, _ in SCAN_OPTIONS] == [f.name for f in dataclasses.fields(ScanOptions)]
    helped = CliRunner().invoke(main, ["scan", "--help"]).output
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    for name, spec in SCAN_OPTIONS:
        assert spec.flag in helped
        assert name in {action.dest for action in parser._actions}


def test_spark_submit_arguments_make_the_same_options_as_the_cli_defaults() -> None:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    assert from_arguments(parser.parse_args([])) == ScanOptions()
    given = from_arguments(parser.parse_args(["--headers-only", "--topic", "orders*", "--txn-timeout", "60000",
                                              "--transaction-state-partitions", "3", "--remote-stuck-after", "90m",
                                              "--resend-min-records", "5", "--resend-tail", "7",
                                              "--resend-window", "0", "--profile",
                                              "--image-time", "2026-11-29T01:00:00Z"]))
    assert given == ScanOptions(headers_only=True, topic_glob="orders*", txn_timeout_ms=60_000,
                                transaction_state_partitions=3, remote_stuck_after_ms=90 * 60_000,
                                resend_min_records=5, resend_tail=7, resend_window_ms=0, profile=True,
                                image_time_ms=1_795_914_000_000)
    assert ScanOptions.from_dict(given.to_dict()) == given  # the manifest's and the server request's form


@pytest.mark.parametrize("bad", [{"txn_timeout_ms": 0}, {"resend_tail": "ten"}, {"headers_only": "yes"},
                                 {"resend_window_ms": -1}, {"topic_glob": 3}, {"image_time_ms": "soon"}])
def test_bad_values_are_refused_as_the_cli_refuses_them(bad: dict) -> None:
    with pytest.raises(ValueError):
        ScanOptions.from_dict(bad)


def test_durations() -> None:
    assert [parse_duration_ms(v) for v in ("1h", "90m", "45s", "500ms", "2d", "1500", 7)] == [
        3_600_000, 5_400_000, 45_000, 500, 172_800_000, 1500, 7]
    with pytest.raises(ValueError, match="not a duration"):
        parse_duration_ms("soon")
