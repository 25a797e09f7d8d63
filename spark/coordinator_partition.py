"""The coordinator partition a transactional id (or group id) hashes to, as Spark SQL.

The same rule as `kforensics.parsers.coordinator_partition.partition_for` (Utils.abs(id.hashCode()) % N),
written with Spark's own functions instead of a Python UDF: the id's UTF-16 code units are folded with
h = 31 * h + unit modulo 2^32.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from kforensics.parsers.coordinator_partition import TRANSACTION_STATE
from kforensics.spark.findings import sql_literal
from kforensics.spark.views import run_sql

_TWO_32 = 1 << 32
_TWO_31 = 1 << 31


def java_string_hash_sql(column: str) -> str:
    """Java's String.hashCode of the string column named `column` (null stays null), as a signed 32-bit value
    in a long, as SQL expression text. SQL text, not a Python lambda: PySpark names a lambda's variables afresh at
    every build, and each scan then generated and compiled its code again."""
    col = f"`{column}`"
    units = f"hex(encode({col}, 'UTF-16BE'))"  # four hex digits per UTF-16 code unit
    folded = (f"aggregate(sequence(0, cast(length({units}) / 4 - 1 as int)), cast(0 as bigint), "
              f"(h, i) -> pmod(h * 31 + cast(conv(substring({units}, i * 4 + 1, 4), 16, 10) as bigint), {_TWO_32}))")
    # an empty string folds over sequence(0, -1) = [0, -1]: its hash is 0
    unsigned = f"(CASE WHEN length({col}) = 0 THEN CAST(0 AS BIGINT) ELSE {folded} END)"
    return (f"CASE WHEN {col} IS NOT NULL THEN "
            f"CASE WHEN {unsigned} >= {_TWO_31} THEN {unsigned} - {_TWO_32} ELSE {unsigned} END END")


def java_string_hash(column: str) -> Column:
    """`java_string_hash_sql` as a Column."""
    return F.expr(java_string_hash_sql(column))


def partition_for_sql(column: str) -> str:
    """Utils.abs(hashCode) % :transaction_state_partitions of the string column named `column` (Utils.abs maps
    Integer.MIN_VALUE to 0), as SQL expression text with that named parameter."""
    h = f"({java_string_hash_sql(column)})"
    return f"CAST(CASE WHEN {h} = {-_TWO_31} THEN 0 ELSE abs({h}) END % :transaction_state_partitions AS INT)"


def expected_coordinator_partition_sql() -> str:
    """The `expected_coordinator_partition` expression over `transactional_id`, as SQL text with the named
    parameter `:transaction_state_partitions`."""
    return (f"CASE WHEN transactional_id IS NOT NULL THEN format_string("
            f"{sql_literal(f'{TRANSACTION_STATE}-%d')}, {partition_for_sql('transactional_id')}) END")


def with_expected_coordinator_partition(df: DataFrame, partitions: int) -> DataFrame:
    """Needs `transactional_id`; adds `expected_coordinator_partition`: the `__transaction_state-<n>` partition
    whose coordinator owns that id among `partitions` (null without a transactional id)."""
    return run_sql(f"SELECT *, {expected_coordinator_partition_sql()} AS expected_coordinator_partition FROM {{df}}",
                   {"transaction_state_partitions": int(partitions)}, df=df)
