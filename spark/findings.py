"""The `findings` table's columns and key, and a string literal for SQL text (the rows come from spark/sql/)."""

from __future__ import annotations

from kforensics.parsers.findings import FINDING_COLUMNS

KEY = ["broker", "topic", "partition"]
__all__ = ["FINDING_COLUMNS", "KEY", "sql_literal"]


def sql_literal(value: str) -> str:
    """A Spark SQL string literal (backslash and quote escaped, as Spark's parser reads them)."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


