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


def java_string_hash(text: Column) -> Column:
    """Java's String.hashCode of a string column (null stays null), as a signed 32-bit value in a long."""
    units = F.hex(F.encode(text, "UTF-16BE"))  # four hex digits per UTF-16 code unit

    def unit(i: Column) -> Column:
        return F.conv(F.substring(units, i * 4 + 1, 4), 16, 10).cast("long")

    last = (F.length(units) / 4 - 1).cast("int")
    folded = F.aggregate(F.sequence(F.lit(0), last), F.lit(0).cast("long"),
                         lambda h, i: F.pmod(h * 31 + unit(i), F.lit(_TWO_32)))
    # an empty string folds over sequence(0, -1) = [0, -1]: its hash is 0
    unsigned = F.when(F.length(text) == 0, F.lit(0).cast("long")).otherwise(folded)
    return F.when(text.isNotNull(), F.when(unsigned >= _TWO_31, unsigned - _TWO_32).otherwise(unsigned))


def partition_for(text: Column, partitions: int) -> Column:
    """Utils.abs(hashCode) % partitions (Utils.abs maps Integer.MIN_VALUE to 0)."""
    h = java_string_hash(text)
    return (F.when(h == -_TWO_31, F.lit(0)).otherwise(F.abs(h)) % partitions).cast("int")


def with_expected_coordinator_partition(df: DataFrame, partitions: int) -> DataFrame:
    """Needs `transactional_id`; adds `expected_coordinator_partition`: the `__transaction_state-<n>` partition
    whose coordinator owns that id among `partitions` (null without a transactional id)."""
    return df.withColumn("expected_coordinator_partition",
                         F.when(F.col("transactional_id").isNotNull(),
                                F.format_string(f"{TRANSACTION_STATE}-%d",
                                                partition_for(F.col("transactional_id"), partitions))))
