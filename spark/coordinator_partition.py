"""The coordinator partition a transactional id (or group id) hashes to, as a Spark column.

The same rule as `kforensics.parsers.coordinator_partition.partition_for` (Utils.abs(id.hashCode()) % N),
written with Spark's own functions instead of a Python UDF: the id's UTF-16 code units are folded with
h = 31 * h + unit modulo 2^32.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from kforensics.parsers.coordinator_partition import TRANSACTION_STATE

_TWO_32 = 1 << 32
_TWO_31 = 1 << 31


def java_string_hash(column: str) -> Column:
    """Java's String.hashCode of the string column named `column` (null stays null), as a signed 32-bit value
    in a long. SQL text, not a Python lambda: PySpark names a lambda's variables afresh at every build, and each
    scan then generated and compiled its code again."""
    units = f"hex(encode(`{column}`, 'UTF-16BE'))"  # four hex digits per UTF-16 code unit
    folded = (f"aggregate(sequence(0, cast(length({units}) / 4 - 1 as int)), cast(0 as bigint), "
              f"(h, i) -> pmod(h * 31 + cast(conv(substring({units}, i * 4 + 1, 4), 16, 10) as bigint), {_TWO_32}))")
    # an empty string folds over sequence(0, -1) = [0, -1]: its hash is 0
    unsigned = F.when(F.length(F.col(column)) == 0, F.lit(0).cast("long")).otherwise(F.expr(folded))
    return F.when(F.col(column).isNotNull(),
                  F.when(unsigned >= _TWO_31, unsigned - _TWO_32).otherwise(unsigned))


def partition_for(column: str, partitions: int) -> Column:
    """Utils.abs(hashCode) % partitions of the string column named `column` (Utils.abs maps Integer.MIN_VALUE
    to 0)."""
    h = java_string_hash(column)
    return (F.when(h == -_TWO_31, F.lit(0)).otherwise(F.abs(h)) % partitions).cast("int")


def with_expected_coordinator_partition(df: DataFrame, partitions: int) -> DataFrame:
    """Needs `transactional_id`; adds `expected_coordinator_partition`: the `__transaction_state-<n>` partition
    whose coordinator owns that id among `partitions` (null without a transactional id)."""
    return df.withColumn("expected_coordinator_partition",
                         F.when(F.col("transactional_id").isNotNull(),
                                F.format_string(f"{TRANSACTION_STATE}-%d",
                                                partition_for("transactional_id", partitions))))
