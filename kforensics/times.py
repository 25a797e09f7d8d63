"""Epoch milliseconds as UTC time: the one formatter of every command's text and JSON, and the datetimes of the
report's figures."""

from __future__ import annotations

import time
from datetime import UTC, datetime


def utc_datetime(ms: int | None) -> datetime | None:
    """Epoch milliseconds as an aware UTC datetime (None for a missing or negative sentinel)."""
    return None if ms is None or ms < 0 else datetime.fromtimestamp(ms / 1000, UTC)


def iso(ms: int | None) -> str:
    """Epoch milliseconds as ISO 8601 UTC with milliseconds, `2025-11-20T10:00:00.000Z` (negative sentinels and
    what no datetime holds are kept as numbers)."""
    if ms is None or ms < 0:
        return str(ms)
    try:
        return datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    except (OverflowError, OSError, ValueError):
        return str(ms)


def parse_time_ms(text: str) -> int:
    """Milliseconds since the epoch, or an ISO-8601 time (UTC unless it says otherwise), as epoch milliseconds
    (`export --from-time`, `scan --image-time`); ValueError says what is wrong."""
    if text.lstrip("-").isdigit():
        return int(text)
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{text!r} is neither milliseconds since the epoch nor an ISO-8601 time") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


def now_iso() -> str:
    """The time now, ISO 8601 UTC to the second (`written_at` of a manifest or an export's sidecar)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
