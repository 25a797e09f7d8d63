"""Restart prediction in the scan: what a broker restart would do to each partition (the rules and the Kafka
version they follow: parsers/restart.py).

The per-segment facts recovery depends on (its first invalid batch, the valid batches before and after it, offsets
going backwards) are aggregated from the scan's batches, segments and parser findings; one row per partition then
goes through `parsers.restart.predict` in a mapInArrow (a few segments per partition: no batch reaches Python).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from kforensics.parsers.findings import FINDING_COLUMNS
from kforensics.parsers.restart import (
    STOP_KINDS,
    IndexedBatch,
    PartitionState,
    SegmentState,
    predict,
)
from kforensics.spark import schemas as S

KEY = ["broker", "topic", "partition"]
INT32_MAX = 2**31 - 1

#: Columns of the `restart_prediction` table (offsets_discarded and committed_offsets_discarded: [first, last]).
PREDICTION_COLUMNS = ["broker", "topic", "partition", "clean_shutdown", "recovery_point", "segments_recovered",
                      "truncate_at_offset", "truncate_at_file", "truncate_at_position", "bytes_discarded",
                      "segments_deleted", "offsets_discarded", "committed_offsets_discarded", "reason"]

_ROWS = pa.schema([
    ("row_kind", pa.string()), *S.PARTITION_KEY, ("clean_shutdown", pa.bool_()), ("recovery_point", pa.int64()),
    ("segments_recovered", pa.int32()), ("truncate_at_offset", pa.int64()), ("truncate_at_file", pa.string()),
    ("truncate_at_position", pa.int64()), ("bytes_discarded", pa.int64()), ("segments_deleted", pa.int32()),
    ("discarded_first", pa.int64()), ("discarded_last", pa.int64()), ("committed_first", pa.int64()),
    ("committed_last", pa.int64()), ("reason", pa.string()),
    *[(f.name, f.type) for f in S.FINDINGS if f.name not in ("broker", "topic", "partition")],
])


def segment_states(batches: DataFrame, segments: DataFrame, parser_findings: DataFrame, *,
                   skip_brokers: tuple[str, ...] = ()) -> DataFrame:
    """Needs batches (KEY, file, segment_base_offset, position, size, base_offset, last_offset, crc_valid,
    max_timestamp), segments (KEY, file, base_offset, size, has_offset_index) and parser_findings (KEY, kind, file,
    position); one row per segment with the fields of `parsers.restart.SegmentState` (stop_position and stop_kind:
    the first byte recovery rejects, a bad CRC or where the batch walk ends). `skip_brokers`: inputs that are not
    log dirs (kafka-dump-log text)."""
    if skip_brokers:
        segments = segments.filter(~F.col("broker").isin(*skip_brokers))
    stops = (batches.filter(~F.col("crc_valid")).select(*KEY, "file", "position", F.lit("corrupt_crc").alias("kind"))
             .unionByName(parser_findings.filter(F.col("kind").isin(*STOP_KINDS) & F.col("file").endswith(".log"))
                          .select(*KEY, "file", "position", "kind"))
             .groupBy(*KEY, "file").agg(F.min(F.struct("position", "kind")).alias("stop")))
    stop = F.col("stop.position")
    before = stop.isNull() | (F.col("position") < stop)
    after = stop.isNotNull() & (F.col("position") > stop) & F.col("crc_valid")
    by_file = Window.partitionBy(*KEY, "file").orderBy("position")
    b = (batches.join(stops, [*KEY, "file"], "left").withColumn("before", before).withColumn("after", after)
         .withColumn("regress", F.col("before") & (F.col("last_offset") <= F.lag("last_offset").over(by_file))))
    relative = F.col("last_offset") - F.col("segment_base_offset")

    def when(cond: Any, col: str) -> Any:
        return F.when(cond, F.col(col))

    facts = b.groupBy(*KEY, "file").agg(
        F.max(when(F.col("before"), "last_offset")).alias("kept_last_offset"),
        F.min(when(F.col("after"), "base_offset")).alias("discarded_first_offset"),
        F.max(when(F.col("after"), "last_offset")).alias("discarded_last_offset"),
        F.sum(F.col("after").cast("int")).alias("discarded_valid_batches"),
        F.min(when(F.col("crc_valid"), "base_offset")).alias("valid_first_offset"),
        F.max(when(F.col("crc_valid"), "last_offset")).alias("valid_last_offset"),
        F.sum(F.col("crc_valid").cast("int")).alias("valid_batches"),
        F.max("last_offset").alias("last_offset"),
        F.max(F.col("before") & ((relative < 0) | (relative > INT32_MAX))).alias("offset_overflow"),
        F.max(F.coalesce(F.col("regress"), F.lit(False))).alias("regress"))
    # Only the segments whose offsets go backwards carry their batches, to replay the index rebuild.
    regressing = (b.join(facts.filter("regress").select(*KEY, "file"), [*KEY, "file"], "left_semi")
                  .filter("before").groupBy(*KEY, "file")
                  .agg(F.array_sort(F.collect_list(F.struct("position", "size", "last_offset", "max_timestamp")))
                       .alias("regressing_batches")))
    txn_corrupt = (parser_findings.filter((F.col("kind") == "index_partial_entry") & F.col("file").endswith(".txnindex"))
                   .select(*KEY, F.regexp_replace("file", r"\.txnindex$", ".log").alias("file"),
                           F.lit(True).alias("txnindex_corrupt")).dropDuplicates())
    return (segments.select(*KEY, "file", "base_offset", "size", "has_offset_index")
            .join(stops, [*KEY, "file"], "left").join(facts.drop("regress"), [*KEY, "file"], "left")
            .join(regressing, [*KEY, "file"], "left").join(txn_corrupt, [*KEY, "file"], "left")
            .select(*KEY, "file", "base_offset", "size", F.coalesce("has_offset_index", F.lit(True)).alias(
                "has_offset_index"), F.coalesce("txnindex_corrupt", F.lit(False)).alias("txnindex_corrupt"),
                    F.col("stop.position").alias("stop_position"), F.col("stop.kind").alias("stop_kind"),
                    "kept_last_offset", "discarded_first_offset", "discarded_last_offset",
                    F.coalesce("discarded_valid_batches", F.lit(0)).alias("discarded_valid_batches"),
                    "valid_first_offset", "valid_last_offset", F.coalesce("valid_batches", F.lit(0)).alias(
                        "valid_batches"), "last_offset",
                    F.coalesce("offset_overflow", F.lit(False)).alias("offset_overflow"), "regressing_batches"))


def partition_states(states: DataFrame, checkpoints: DataFrame, log_dirs: DataFrame) -> DataFrame:
    """Needs segment_states' rows, partition_checkpoints (KEY, recovery_point, log_start_offset, high_watermark) and
    log_dirs (broker, clean_shutdown, recovery_checkpoint_unreadable); one row per partition with its segments."""
    fields = [c for c in states.columns if c not in KEY]
    return (states.groupBy(*KEY).agg(F.collect_list(F.struct(*fields)).alias("segments"))
            .join(checkpoints.select(*KEY, "recovery_point", "log_start_offset", "high_watermark"), KEY, "left")
            .join(log_dirs, "broker", "left"))


def _segment(d: dict[str, Any]) -> SegmentState:
    regress = d.pop("regressing_batches")
    return SegmentState(**d, regressing_batches=None if regress is None else tuple(IndexedBatch(**b) for b in regress))


def _predict_rows(chunks: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """mapInArrow: partition rows -> one prediction row each, and finding rows."""
    for chunk in chunks:
        rows: list[dict[str, Any]] = []
        for r in chunk.to_pylist():
            segments = tuple(sorted((_segment(s) for s in r["segments"]), key=lambda s: s.base_offset))
            p = predict(PartitionState(r["broker"], r["topic"], r["partition"], segments,
                                       clean_shutdown=bool(r["clean_shutdown"]), recovery_point=r["recovery_point"],
                                       log_start_offset=r["log_start_offset"], high_watermark=r["high_watermark"],
                                       recovery_checkpoint_unreadable=bool(r["recovery_checkpoint_unreadable"])))
            row = dict(p.row)
            lost, committed = row.pop("offsets_discarded") or [None, None], row.pop("committed_offsets_discarded")
            committed = committed or [None, None]
            rows.append({"row_kind": "prediction", **row, "discarded_first": lost[0], "discarded_last": lost[1],
                         "committed_first": committed[0], "committed_last": committed[1]})
            for f, offset in p.findings:
                rows.append({"row_kind": "finding", "broker": r["broker"], "topic": r["topic"],
                             "partition": r["partition"], "kind": f.kind, "severity": f.effective_severity,
                             "file": f.file, "position": f.position, "offset": offset, "message": f.message,
                             "details": json.dumps(dict(f.details))})
        if rows:
            yield pa.RecordBatch.from_pylist(rows, schema=_ROWS)


def _span(first: str, last: str) -> Any:
    return F.when(F.col(first).isNotNull(), F.array(F.col(first), F.col(last)))


def predictions(partitions: DataFrame) -> DataFrame:
    """Needs partition_states' rows; the prediction rows and finding rows (`row_kind`), computed once per partition."""
    return partitions.mapInArrow(_predict_rows, S.ddl(_ROWS))


def restart_prediction_table(predicted: DataFrame, every_segment: DataFrame, log_dirs: DataFrame) -> DataFrame:
    """Needs predictions' rows, the segments of every partition dir (KEY, dir_state) and log_dirs; the
    `restart_prediction` table (PREDICTION_COLUMNS), one row per partition dir: the live ones predicted, the
    `-delete`/`-future`/`-stray` ones (with segments) named with what the broker does with them."""
    rows = predicted.filter(F.col("row_kind") == "prediction").select(
        *PREDICTION_COLUMNS[:11], _span("discarded_first", "discarded_last").alias("offsets_discarded"),
        _span("committed_first", "committed_last").alias("committed_offsets_discarded"), "reason")
    state = F.col("dir_state")
    reason = (F.when(state == "delete", F.lit("directory marked for deletion (-delete): the broker loads it and "
                                              "deletes it"))
              .when(state == "stray", F.lit("stray replica directory (-stray): the broker deletes it once its "
                                            "metadata shows the partition is not assigned"))
              .otherwise(F.lit("future replica of a move between log dirs (-future): loaded as the move's target")))
    marked = (every_segment.filter(state != "live")
              .groupBy(*KEY, "dir_state").agg(F.regexp_extract(F.min("file"), r"^(.*)/[^/]*$", 1).alias("dir"))
              .join(log_dirs, "broker", "left").select(
        *KEY, "clean_shutdown", *[F.lit(None).cast(t).alias(c) for c, t in (
            ("recovery_point", "long"), ("segments_recovered", "int"), ("truncate_at_offset", "long"),
            ("truncate_at_file", "string"), ("truncate_at_position", "long"), ("bytes_discarded", "long"),
            ("segments_deleted", "int"), ("offsets_discarded", "array<bigint>"),
            ("committed_offsets_discarded", "array<bigint>"))],
        F.concat_ws(": ", F.col("dir"), reason).alias("reason")))
    return rows.unionByName(marked)


def restart_findings(predicted: DataFrame) -> DataFrame:
    """Needs predictions' rows; the restart findings (FINDING_COLUMNS)."""
    return predicted.filter(F.col("row_kind") == "finding").select(*FINDING_COLUMNS)
