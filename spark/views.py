"""SQL text over DataFrames: `run_named`, with the tables a scan's statements share registered as temp views once.

PySpark's `spark.sql(text, name=df)` registers a temp view for every DataFrame it is given and drops it after the
statement, and registering a view is a command Spark analyses and plans of its own (docs/benchmarks/spark-settings.md).
A scan's `SqlViews` registers each shared table once, on its first use, and drops them all when the scan is done.
"""

from __future__ import annotations

import re
import threading
import uuid
from collections.abc import Mapping, Sequence

from pyspark.sql import DataFrame, SparkSession

_SCOPE = "_kforensics_views"  # attribute of a shared DataFrame: the SqlViews that registers it
_NAME = "_kforensics_view"  # attribute of a registered DataFrame: its view's name


def _view_name() -> str:
    return f"kforensics_{uuid.uuid4().hex}"


class SqlViews:
    """The temp views of one scan's shared tables (`share`): each registered on first use by `run_named`, all dropped
    by `drop`."""

    def __init__(self, spark: SparkSession) -> None:
        self._spark, self._lock, self._names = spark, threading.Lock(), []

    def share(self, df: DataFrame) -> DataFrame:
        """`df`, marked as a table several statements read (registered once, when a statement first names it)."""
        setattr(df, _SCOPE, self)
        return df

    def name_of(self, df: DataFrame) -> str:
        with self._lock:  # two threads naming the same table register it once
            name = df.__dict__.get(_NAME)
            if name is None:
                name = _view_name()
                df.createOrReplaceTempView(name)
                setattr(df, _NAME, name)
                self._names.append(name)
            return name

    def drop(self) -> None:
        """Drop every view registered (the scan is done: its tables' plans and kept blocks are released)."""
        with self._lock:
            names, self._names = self._names, []
        for name in names:
            self._spark.catalog.dropTempView(name)


def _named(tables: Mapping[str, DataFrame]) -> tuple[dict[str, str], list[str]]:
    """The view name of each table (a shared table's scan view; any other registered here, for one statement) and
    the views registered here."""
    names, temporary = {}, []
    for key, df in tables.items():
        views = df.__dict__.get(_SCOPE)
        if views is not None:
            names[key] = views.name_of(df)
        else:
            names[key] = _view_name()
            df.createOrReplaceTempView(names[key])
            temporary.append(names[key])
    return names, temporary


def with_views(text: str, inputs: Sequence[str], names: Mapping[str, str]) -> str:
    """`text` with each table it reads by a name of `inputs` (after FROM or JOIN, keywords in capitals as the
    SQL files write them) read from its view instead."""
    if not inputs:
        return text
    pattern = re.compile(rf"\b(FROM|JOIN)(\s+)({'|'.join(map(re.escape, inputs))})\b")
    return pattern.sub(lambda m: f"{m[1]}{m[2]}{names[m[3]]}", text)


def run_named(statements: Sequence[tuple[str, Sequence[str]]], tables: Mapping[str, DataFrame],
              args: Mapping[str, object]) -> DataFrame:
    """The UNION ALL of `statements` (SQL text and the names of the tables it reads, as a file of spark/sql/ reads
    them) as one statement over `tables` (name -> DataFrame), its named parameters bound from `args` by Spark."""
    spark = next(iter(tables.values())).sparkSession
    names, temporary = _named(tables)
    try:
        text = " UNION ALL ".join(f"({with_views(sql, inputs, names)})" for sql, inputs in statements)
        return spark.sql(text, args=dict(args)) if args else spark.sql(text)
    finally:
        for name in temporary:
            spark.catalog.dropTempView(name)
