"""Building rows of the `findings` table from analysis DataFrames."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from kforensics.parsers.findings import FINDING_COLUMNS, severity_of
from kforensics.spark.views import run_sql

KEY = ["broker", "topic", "partition"]
__all__ = ["FINDING_COLUMNS", "KEY", "finding_columns", "findings_sql", "fmt", "fmt_sql", "sql_literal", "to_findings"]


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


# Finding checks as SQL text. A scan's cost on a small input is Spark's per-query and per-operation work, not rows:
# every DataFrame operation is analysed as a query of its own and every Column is built through py4j round trips.
# A check written as one SQL query costs one parse and one analysis, and the checks of a family run as one
# statement (their UNION ALL) cost one plan. A check's query is a *fragment*: SQL text that refers to its input
# tables as `{name}` (braces of its own doubled) and returns the findings columns (`finding_columns`).


def sql_literal(value: str) -> str:
    """A Spark SQL string literal (backslash and quote escaped, as Spark's parser reads them)."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def fmt_sql(template: str, *exprs: str) -> str:
    """`fmt` as SQL text: format_string over SQL expressions."""
    return f"format_string({sql_literal(template)}, {', '.join(exprs)})"


def finding_columns(kind: str, *, message: str, severity: str | None = None, file: str | None = "file",
                    position: str | None = "position", offset: str | None = "base_offset",
                    producer_id: str | None = "producer_id", producer_epoch: str | None = "producer_epoch",
                    details: dict[str, str] | None = None) -> str:
    """The SELECT list of a check's fragment, as `to_findings` builds it: each argument is a SQL expression over
    the fragment's rows (None: null); `severity` an expression for the kinds whose severity depends on the row.
    Needs KEY."""
    registered = severity_of(kind)  # KeyError: every kind is registered before it is reported

    def typed(expr: str | None, sql_type: str) -> str:
        return f"CAST({'NULL' if expr is None else expr} AS {sql_type})"

    detail = (f"to_json(named_struct({', '.join(f'{sql_literal(k)}, {v}' for k, v in details.items())}))"
              if details else "'{{}}'")
    return ", ".join([
        f"{sql_literal(kind)} AS kind", f"{severity or sql_literal(registered)} AS severity", *KEY,
        f"{typed(file, 'STRING')} AS file", f"{typed(position, 'BIGINT')} AS position",
        f"{typed(offset, 'BIGINT')} AS offset", f"{typed(producer_id, 'BIGINT')} AS producer_id",
        f"{typed(producer_epoch, 'INT')} AS producer_epoch", f"{message} AS message", f"{detail} AS details"])


def findings_sql(fragments: list[str], **tables: DataFrame) -> DataFrame:
    """Runs check fragments over `tables` (name -> DataFrame, as the fragments name them) as one statement: the
    UNION ALL of their findings."""
    return run_sql(" UNION ALL ".join(f"({fragment})" for fragment in fragments), **tables)

