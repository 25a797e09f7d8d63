"""Builders for the transform unit tests (tests/test_unit_*.py): small inline DataFrames with explicit schemas.

Rows are dicts; a column a row leaves out is null unless the builder gives it a default.
"""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from kforensics.spark.schemas import BATCH_FIELDS, PARTITION_KEY, ddl

BATCHES = [*PARTITION_KEY, *BATCH_FIELDS]
CLUSTERED_BATCHES = [*BATCHES, ("cluster_id", pa.string())]


def frame(spark: SparkSession, fields: list[tuple[str, pa.DataType]], rows: list[dict], **defaults) -> DataFrame:
    """A DataFrame with exactly `fields` (name, Arrow type), one row per dict."""
    names = [name for name, _ in fields]
    extra = {key for row in rows for key in row} - set(names)
    assert not extra, f"columns not in the schema: {sorted(extra)}"
    data = [tuple({**defaults, **row}.get(name) for name in names) for row in rows]
    return spark.createDataFrame(data, ddl(pa.schema(fields)))


def batch(base_offset: int, count: int = 1, **kw) -> dict:
    """A sound v2 batch row of the batches table (non-idempotent data unless told otherwise)."""
    row = dict(broker="b1", topic="t", partition=0, file="t-0/00000000000000000000.log", segment_base_offset=0,
               position=base_offset * 100, size=100, magic=2, base_offset=base_offset,
               last_offset=base_offset + count - 1, count=count, partition_leader_epoch=0, producer_id=-1,
               producer_epoch=-1, base_sequence=-1, last_sequence=-1, is_transactional=False, is_control=False,
               control_type=None, coordinator_epoch=None, codec="none", timestamp_type="CreateTime",
               base_timestamp=0, max_timestamp=0, crc=base_offset, crc_valid=True)
    row.update(kw)
    return row


def txn_data(pid: int, base_offset: int, count: int = 1, *, epoch: int = 0, **kw) -> dict:
    """A transactional data batch of producer `pid`."""
    return batch(base_offset, count, producer_id=pid, producer_epoch=epoch, base_sequence=0,
                 last_sequence=count - 1, is_transactional=True, **kw)


def marker(pid: int, offset: int, outcome: str, *, epoch: int = 0, coordinator_epoch: int = 0, **kw) -> dict:
    """A COMMIT or ABORT control batch of producer `pid`."""
    return batch(offset, 1, producer_id=pid, producer_epoch=epoch, is_transactional=True, is_control=True,
                 control_type=outcome, coordinator_epoch=coordinator_epoch, **kw)


def batches(spark: SparkSession, rows: list[dict], *, clustered: bool = False) -> DataFrame:
    """The batches table (with `cluster_id`, as replicas.with_cluster_id adds it, when `clustered`)."""
    return frame(spark, CLUSTERED_BATCHES if clustered else BATCHES, rows)


FINDING_VIEW = ("kind string, severity string, broker string, topic string, partition int, file string, "
                "position bigint, offset bigint, producer_id bigint, producer_epoch int")


def findings_view(df: DataFrame, *details: str) -> DataFrame:
    """The common findings columns and the named `details` fields (as JSON text; null when absent)."""
    return df.select("kind", "severity", "broker", "topic", "partition", "file", "position", "offset",
                     "producer_id", "producer_epoch",
                     *[F.get_json_object("details", f"$.{key}").alias(key) for key in details])


def expected_findings(spark: SparkSession, rows: list[tuple], *details: str) -> DataFrame:
    """Expected rows of findings_view (detail values as their JSON text)."""
    return spark.createDataFrame(rows, FINDING_VIEW + "".join(f", `{key}` string" for key in details))


def scan_of(params: dict | None = None, options=None, facts=None, **tables: DataFrame):
    """A scan (`runner.Scan`) over the inline `tables` (by the names the models read; any other table it needs is
    built by its model, or is an input of no rows), its parameters the scan's defaults but for `params`."""
    from kforensics.spark.runner import Scan

    tables = {name: with_declared_columns(name, df) for name, df in tables.items()}
    return Scan(tables, options, facts, small=True, params=params)


def with_declared_columns(name: str, df: DataFrame) -> DataFrame:
    """An inline table with the columns its model (or input schema) declares, in that order: those a test leaves out
    are typed nulls (a case names what it needs; a column added since reads null there), extra ones kept last."""
    from kforensics.spark import registry

    try:
        declared = registry.columns_of(name)
    except KeyError:  # not a table of the runner: given as it is
        return df
    names = {c.name for c in declared}
    return df.select(*[F.col(f"`{c.name}`") if c.name in df.columns else F.lit(None).cast(c.type).alias(c.name)
                       for c in declared], *[F.col(f"`{c}`") for c in df.columns if c not in names])


def run_model(name: str, params: dict | None = None, **tables: DataFrame) -> DataFrame:
    """The table `name`, built by its model as a scan builds it, over the inline `tables`."""
    return scan_of(params, **tables).table(name)


def run_check(kind: str, params: dict | None = None, **tables: DataFrame) -> DataFrame:
    """The `kind` findings of the check that declares it (its file, run as a scan runs it: with its severity), or all
    findings of the check file or family of that name, over the inline `tables` (by the names the files read), their
    parameters the scan's defaults but for `params`."""
    from kforensics.spark import registry

    scan = scan_of(params, **tables)
    checks = registry.check_models()
    by_kind = [c for c in checks if kind in c.kinds]
    if by_kind:
        found = scan.checks(by_kind)
        return found if by_kind[0].kinds == (kind,) else found.where(F.col("kind") == kind)
    by_name = [c for c in checks if c.name == kind]
    return scan.checks(by_name) if by_name else scan.family(kind)


def with_timeouts(txns: DataFrame) -> DataFrame:
    """transactions_table as the timeout checks read it (`timed_transactions`): with `cluster_id` and
    `transaction_timeout_ms` (null: not known, the global timeout applies)."""
    if "cluster_id" not in txns.columns:  # as timed_transactions gives it: '' where no meta.properties says
        txns = txns.withColumn("cluster_id", F.lit(""))
    if "transaction_timeout_ms" in txns.columns:
        return txns
    return txns.withColumn("transaction_timeout_ms", F.lit(None).cast("int"))


def aborted_ranges(sweep: DataFrame, txnindex: DataFrame, ends: DataFrame | None = None) -> tuple[DataFrame, DataFrame]:
    """The aborted_ranges table and the txnindex findings of lso_sweep's rows against `txnindex`, as a scan builds
    them (ends: partition_ends' log_first_offset and cleaner_offset; none: unknown)."""
    if ends is None:
        ends = sweep.sparkSession.createDataFrame([], "broker string, topic string, partition int, "
                                                      "cleaner_offset bigint, log_first_offset bigint")
    scan = scan_of(lso_sweep=sweep, txnindex=txnindex, partition_ends=ends)
    return scan.table("aborted_ranges"), scan.checks([m for m in _checks() if m.name == "txnindex_markers"])


def _checks():
    from kforensics.spark import registry

    return registry.check_models()
