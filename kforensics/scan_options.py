"""A scan's options, defined once: `ScanOptions` reaches `run_scan`, `analyze`, the manifest, the server protocol and
the spark-submit entry point as one value, and the `scan` command's options and spark-submit's arguments are
derived from `SCAN_OPTIONS`.

Light (no click, no pyspark): the CLI, the server and `spark/` import it; it imports none of them. Adding an
option is adding a field here (with its `ScanOption`), reading it in the check that uses it, and a line in the
README.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from kforensics.defaults import (
    DEFAULT_CLOCK_SKEW_MS,
    DEFAULT_REMOTE_STUCK_AFTER_MS,
    DEFAULT_RESEND_MIN_RECORDS,
    DEFAULT_RESEND_TAIL,
    DEFAULT_RESEND_WINDOW_MS,
    DEFAULT_TRANSACTION_STATE_PARTITIONS,
    DEFAULT_TXN_TIMEOUT_MS,
)
from kforensics.times import parse_time_ms

_UNITS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
_DURATION = re.compile(r"^\s*(\d+)\s*(ms|s|m|h|d)?\s*$")


def parse_duration_ms(value: object) -> int:
    """`90m`, `1h`, `45s`, `500ms`, `2d` or a plain number of milliseconds -> milliseconds; ValueError otherwise."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    m = _DURATION.match(str(value))
    if not m:
        raise ValueError(f"{value!r} is not a duration such as 1h, 90m, 45s, 500ms or a number of milliseconds")
    return int(m.group(1)) * _UNITS[m.group(2) or "ms"]


@dataclass(frozen=True)
class ScanOption:
    """How a field of ScanOptions is spelled on the command line. `kind`: flag, glob (text), count (an integer
    >= `minimum`), duration (milliseconds, written as parse_duration_ms reads them) or time (epoch milliseconds or
    ISO-8601 UTC, as `export --from-time` reads them; None: not given); `shown`: the default as `--help` shows it."""

    flag: str
    kind: str
    help: str
    minimum: int | None = None
    shown: str | None = None


def _option(default: Any, flag: str, kind: str, help_text: str, **more: Any) -> Any:
    return field(default=default, metadata={"cli": ScanOption(flag, kind, help_text, **more)})


@dataclass(frozen=True)
class ScanOptions:
    """What a scan is asked to do besides its inputs and OUT (the manifest records them)."""

    headers_only: bool = _option(False, "--headers-only", "flag",
                                 "Read batch headers only (no record decoding, no content checks).")
    topic_glob: str | None = _option(None, "--topic", "glob", "Only topics matching this glob.")
    txn_timeout_ms: int = _option(DEFAULT_TXN_TIMEOUT_MS, "--txn-timeout", "count",
                                  "Transaction timeout (ms) after which an open transaction is hanging.", minimum=1)
    transaction_state_partitions: int = _option(
        DEFAULT_TRANSACTION_STATE_PARTITIONS, "--transaction-state-partitions", "count",
        "The cluster's transaction.state.log.num.partitions (how many __transaction_state partitions exist, to "
        "tell which are missing from the input).", minimum=1)
    remote_stuck_after_ms: int = _option(
        DEFAULT_REMOTE_STUCK_AFTER_MS, "--remote-stuck-after", "duration",
        "A remote segment left in COPY_SEGMENT_STARTED or DELETE_SEGMENT_STARTED this long before the image time "
        "is stuck (1h, 90m, 45s, or ms).", shown="1h")
    resend_min_records: int = _option(DEFAULT_RESEND_MIN_RECORDS, "--resend-min-records", "count",
                                      "Re-sends by a new producer id: the fewest consecutive records that make one.",
                                      minimum=1)
    resend_tail: int = _option(DEFAULT_RESEND_TAIL, "--resend-tail", "count",
                               "Re-sends by a new producer id: how many of an earlier producer id's last records "
                               "one may come from.", minimum=1)
    resend_window_ms: int = _option(DEFAULT_RESEND_WINDOW_MS, "--resend-window", "duration",
                                    "Re-sends by a new producer id: the longest time between an earlier producer id's "
                                    "last write and the new one's first (1h, 90m, 45s, or ms; 0: no limit).", shown="15m")
    resend_aborted: bool = _option(False, "--resend-aborted", "flag",
                                   "Re-sends by a new producer id: also compare the records of aborted transactions (left "
                                   "out by "
                                   "default: a fenced producer's aborted copy re-written by its successor is "
                                   "exactly-once at work).")
    clock_skew_ms: int = _option(DEFAULT_CLOCK_SKEW_MS, "--clock-skew", "duration",
                                 "epoch_fenced_write: how far a client's clock may run ahead of the transaction "
                                 "coordinator's (200ms, 1s, or ms).", shown="200ms")
    image_time_ms: int | None = _option(
        None, "--image-time", "time",
        "When every broker's disk was imaged (ms or ISO-8601, UTC): ages are judged at it. Default: per broker, the "
        "newest timestamp its files carry.")
    profile: bool = _option(False, "--profile", "flag",
                            "Print where the scan's seconds went (each step's wall time, Spark jobs and tasks); the "
                            "manifest records it in any case.")

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: the manifest's `options`, the server protocol's scan request."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ScanOptions:
        """The options named in `data` (a server request, a manifest); others keep their defaults. Values are
        checked as the command line checks them (ValueError)."""
        known = {f.name: data[f.name] for f in fields(cls) if f.name in data}
        return cls(**known)

    def __post_init__(self) -> None:
        for f in fields(self):
            spec: ScanOption = f.metadata["cli"]
            value = getattr(self, f.name)
            if spec.kind == "flag" and not isinstance(value, bool):
                raise ValueError(f"{f.name} must be true or false, not {value!r}")
            if spec.kind == "glob" and value is not None and not isinstance(value, str):
                raise ValueError(f"{f.name} must be a text, not {value!r}")
            if spec.kind == "time" and value is not None and (not isinstance(value, int) or isinstance(value, bool)):
                raise ValueError(f"{f.name} must be epoch milliseconds, not {value!r}")
            if spec.kind in ("count", "duration"):
                if not isinstance(value, int) or isinstance(value, bool):
                    raise ValueError(f"{f.name} must be an integer, not {value!r}")
                if value < (spec.minimum if spec.minimum is not None else 0):
                    raise ValueError(f"{f.name} must be at least {spec.minimum or 0}, not {value}")


#: (field name, how the command line spells it), in the order `--help` lists them.
SCAN_OPTIONS: tuple[tuple[str, ScanOption], ...] = tuple((f.name, f.metadata["cli"]) for f in fields(ScanOptions))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Every scan option as an argparse argument (the spark-submit entry point), destinations named as the fields."""
    for name, spec in SCAN_OPTIONS:
        default = ScanOptions.__dataclass_fields__[name].default
        if spec.kind == "flag":
            parser.add_argument(spec.flag, dest=name, action="store_true", help=spec.help)
        elif spec.kind == "glob":
            parser.add_argument(spec.flag, dest=name, default=default, help=spec.help)
        elif spec.kind == "time":
            parser.add_argument(spec.flag, dest=name, type=parse_time_ms, default=default, help=spec.help)
        else:
            convert = parse_duration_ms if spec.kind == "duration" else int
            parser.add_argument(spec.flag, dest=name, type=convert, default=default, help=spec.help)


def from_arguments(args: argparse.Namespace) -> ScanOptions:
    return ScanOptions(**{name: getattr(args, name) for name, _ in SCAN_OPTIONS})
