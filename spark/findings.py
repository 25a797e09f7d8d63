"""The `findings` table's columns and the key of a partition of a broker (the rows come from spark/sql/)."""

from __future__ import annotations

from kforensics.parsers.findings import FINDING_COLUMNS

KEY = ["broker", "topic", "partition"]
__all__ = ["FINDING_COLUMNS", "KEY"]
