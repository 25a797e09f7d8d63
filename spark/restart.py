"""Restart prediction in the scan: what a broker restart would do to each partition dir (the rules and the Kafka
version they follow: parsers/restart.py).

Each segment's executor replays `LogSegment.recover` on its own walk of the file (`segment_recovery`'s `recovery`:
where recovery stops, what it keeps, the valid batches behind the stop, what it throws); the `.txnindex` sanity
check comes from the parser's `txnindex_bad_entry` findings. One row per partition dir (live, `-delete`, `-future`
and `-stray` alike, with its TopicPartition's checkpoints) then goes through `parsers.restart.predict` in a
mapInArrow (a few segments per partition: no batch reaches Python here).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from kforensics.parsers.restart import PREDICTION_COLUMNS, PartitionState, SegmentState, predict
from kforensics.spark import schemas as S

KEY = ["broker", "topic", "partition"]
_SPANS = ("offsets_discarded", "committed_offsets_discarded")

_ROWS = pa.schema([
    ("row_kind", pa.string()),
    *[(name, S.OUTPUT_TABLES["restart_prediction"].field(name).type) for name in PREDICTION_COLUMNS
      if name not in _SPANS],
    ("discarded_first", pa.int64()), ("discarded_last", pa.int64()), ("committed_first", pa.int64()),
    ("committed_last", pa.int64()),
    *[(f.name, f.type) for f in S.FINDINGS if f.name not in ("broker", "topic", "partition")],
])


def txnindex_errors(parser_findings: DataFrame) -> DataFrame:
    """Needs parser_findings (KEY, kind, file, position, details); per segment (`file`: its `.log`) what Kafka's
    `TransactionIndex.sanityCheck` throws at the first entry that trips it, in file order: `txnindex_error`
    ("unknown_version": an entry of version > 0, KafkaException; "corrupt": an entry whose last offset is below the
    segment's base offset, CorruptIndexException) and `txnindex_error_position`. A partial trailing entry is not
    read by Kafka (its iterator needs 34 bytes): no error."""
    details = F.col("details")
    version = F.get_json_object(details, "$.version").cast("int")
    last_offset = F.get_json_object(details, "$.last_offset").cast("long")
    base = F.regexp_extract("file", r"(\d{20})\.txnindex$", 1).cast("long")
    error = F.when(version > 0, F.lit("unknown_version")).when(last_offset < base, F.lit("corrupt"))
    return (parser_findings.filter((F.col("kind") == "txnindex_bad_entry") & F.col("file").endswith(".txnindex"))
            .withColumn("error", error).filter(F.col("error").isNotNull())
            .groupBy(*KEY, "file").agg(F.min(F.struct("position", "error")).alias("first"))
            .select(*KEY, F.regexp_replace("file", r"\.txnindex$", ".log").alias("file"),
                    F.col("first.error").alias("txnindex_error"),
                    F.col("first.position").alias("txnindex_error_position")))


def segment_states(segment_recovery: DataFrame, parser_findings: DataFrame, *,
                   skip_brokers: tuple[str, ...] = ()) -> DataFrame:
    """Needs segment_recovery (KEY, file, base_offset, size, has_offset_index, recovery, dir_state) and
    parser_findings; one row per segment with its partition dir (`dir`) and the fields of
    `parsers.restart.SegmentState` (`recovery` still as JSON). `skip_brokers`: inputs that are not log dirs
    (kafka-dump-log text)."""
    if skip_brokers:
        segment_recovery = segment_recovery.filter(~F.col("broker").isin(*skip_brokers))
    return (segment_recovery.join(txnindex_errors(parser_findings), [*KEY, "file"], "left")
            .select(*KEY, "dir_state", F.regexp_extract("file", r"^(.*)/[^/]*$", 1).alias("dir"), "file",
                    "base_offset", "size", F.coalesce("has_offset_index", F.lit(True)).alias("has_offset_index"),
                    "txnindex_error", "txnindex_error_position", "recovery"))


def partition_states(states: DataFrame, checkpoints: DataFrame, log_dirs: DataFrame) -> DataFrame:
    """Needs segment_states' rows, partition_checkpoints (KEY, recovery_point, log_start_offset, high_watermark) and
    log_dirs (broker, clean_shutdown, recovery_checkpoint_unreadable, refused_dirs); one row per partition dir with
    its segments and its TopicPartition's checkpoints (as `LogManager.loadLog` looks them up)."""
    fields = [c for c in states.columns if c not in (*KEY, "dir_state", "dir")]
    return (states.groupBy(*KEY, "dir_state", "dir").agg(F.collect_list(F.struct(*fields)).alias("segments"))
            .join(checkpoints.select(*KEY, "recovery_point", "log_start_offset", "high_watermark"), KEY, "left")
            .join(log_dirs, "broker", "left"))


def _segment(d: dict[str, Any]) -> SegmentState:
    recovery = d.pop("recovery")
    return SegmentState(**d, **(json.loads(recovery) if recovery else {}))


def _predict_rows(chunks: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """mapInArrow: partition dir rows -> one prediction row each, and finding rows."""
    for chunk in chunks:
        rows: list[dict[str, Any]] = []
        for r in chunk.to_pylist():
            segments = tuple(sorted((_segment(s) for s in r["segments"]), key=lambda s: s.base_offset))
            p = predict(PartitionState(r["broker"], r["topic"], r["partition"], segments,
                                       clean_shutdown=bool(r["clean_shutdown"]), recovery_point=r["recovery_point"],
                                       log_start_offset=r["log_start_offset"], high_watermark=r["high_watermark"],
                                       recovery_checkpoint_unreadable=bool(r["recovery_checkpoint_unreadable"]),
                                       dir_state=r["dir_state"] or "live", dir=r["dir"],
                                       refused_dirs=tuple(r["refused_dirs"] or ())))
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
    """Needs partition_states' rows; the prediction rows and finding rows (`row_kind`), computed once per partition
    dir."""
    return partitions.mapInArrow(_predict_rows, S.ddl(_ROWS))


def restart_prediction_table(predicted: DataFrame) -> DataFrame:
    """Needs predictions' rows; the `restart_prediction` table (PREDICTION_COLUMNS), one row per partition dir."""
    return predicted.filter(F.col("row_kind") == "prediction").select(*[
        _span(*{"offsets_discarded": ("discarded_first", "discarded_last"),
                "committed_offsets_discarded": ("committed_first", "committed_last")}[name]).alias(name)
        if name in _SPANS else name for name in PREDICTION_COLUMNS])


