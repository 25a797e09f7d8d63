"""Restart prediction in the scan: what a broker restart would do to each partition dir (the rules and the Kafka
version they follow: parsers/restart.py).

Each segment's executor replays `LogSegment.recover` on its own walk of the file (`segment_recovery`'s `recovery`:
where recovery stops, what it keeps, the valid batches behind the stop, what it throws); the `.txnindex` sanity
check comes from the parser's `txnindex_bad_entry` findings (spark/sql/txnindex_errors.sql). One row per partition
dir (spark/sql/partition_dirs_to_load.sql) then goes through `parsers.restart.predict` here, a Python model.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame

from kforensics.parsers.restart import PREDICTION_COLUMNS, PartitionState, SegmentState, predict
from kforensics.spark import output_schemas
from kforensics.spark import schemas as S
from kforensics.spark.registry import python_model

KEY = ["broker", "topic", "partition"]
_SPANS = ("offsets_discarded", "committed_offsets_discarded")

_ROWS = pa.schema([
    ("row_kind", pa.string()),
    *[(name, output_schemas.OUTPUT_TABLES["restart_prediction"].field(name).type) for name in PREDICTION_COLUMNS
      if name not in _SPANS],
    ("discarded_first", pa.int64()), ("discarded_last", pa.int64()), ("committed_first", pa.int64()),
    ("committed_last", pa.int64()),
    ("log_dir", pa.string()),  # the log dir holding the partition dir (JBOD: one of its broker's several)
    *[(f.name, f.type) for f in S.FINDINGS if f.name not in ("broker", "topic", "partition")],
])


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
                         "committed_first": committed[0], "committed_last": committed[1],
                         "log_dir": r["log_dir"]})
            for f, offset in p.findings:
                rows.append({"row_kind": "finding", "broker": r["broker"], "topic": r["topic"],
                             "partition": r["partition"], "kind": f.kind, "severity": f.effective_severity,
                             "file": f.file, "position": f.position, "offset": offset, "message": f.message,
                             "details": json.dumps(dict(f.details))})
        if rows:
            yield pa.RecordBatch.from_pylist(rows, schema=_ROWS)


@python_model("restart_predictions", inputs=("partition_dirs_to_load",), columns=S.ddl(_ROWS), keep=True,
              doc="Per partition dir, a broker restart replayed on its segments and checkpoints "
                  "(`parsers.restart.predict`, in a mapInArrow: a few segments per partition, no batch reaches "
                  "Python here): one `prediction` row each, and its `finding` rows (`row_kind`).")
def restart_predictions(partition_dirs_to_load: DataFrame) -> DataFrame:
    return partition_dirs_to_load.mapInArrow(_predict_rows, S.ddl(_ROWS))
