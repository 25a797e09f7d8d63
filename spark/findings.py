"""Building rows of the `findings` table from analysis DataFrames."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from kforensics.parsers.findings import FINDING_COLUMNS, severity_of

KEY = ["broker", "topic", "partition"]
__all__ = ["FINDING_COLUMNS", "KEY", "fmt", "sql_literal", "to_findings"]


def _col(value: Column | str | int | None) -> Column:
    if isinstance(value, Column):
        return value
    if isinstance(value, str):
        return F.col(value)
    return F.lit(value)


def to_findings(df: DataFrame, kind: str, severity: Column | None = None, *, message: Column,
                file: Column | str | None = "file",
                position: Column | str | None = "position", offset: Column | str | None = "base_offset",
                producer_id: Column | str | None = "producer_id", producer_epoch: Column | str | None = "producer_epoch",
                details: dict[str, Column | str] | None = None) -> DataFrame:
    """Needs KEY and the named columns; returns rows with the findings columns (details as a JSON string).
    The severity is the kind's in the registry (`parsers.findings.KINDS`), or `severity`, a Column, for the
    kinds whose severity depends on the row."""
    registered = severity_of(kind)  # KeyError: every kind is registered before it is reported
    detail_cols = [_col(v).alias(k) for k, v in (details or {}).items()]
    return df.select(
        F.lit(kind).alias("kind"), (F.lit(registered) if severity is None else severity).alias("severity"),
        *KEY,
        _col(file).cast("string").alias("file"), _col(position).cast("long").alias("position"),
        _col(offset).cast("long").alias("offset"), _col(producer_id).cast("long").alias("producer_id"),
        _col(producer_epoch).cast("int").alias("producer_epoch"), message.alias("message"),
        (F.to_json(F.struct(*detail_cols)) if detail_cols else F.lit("{}")).alias("details"),
    )


def fmt(template: str, *cols: Column | str) -> Column:
    """A one-sentence message: format_string over columns."""
    return F.format_string(template, *[_col(c) for c in cols])


def sql_literal(value: str) -> str:
    """A Spark SQL string literal (backslash and quote escaped, as Spark's parser reads them)."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


