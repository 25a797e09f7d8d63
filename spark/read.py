"""Broker disks -> DataFrames. The driver lists file names only; executors open and parse the files.

Paths may be local or any URI pyarrow.fs understands (file://, s3://, hdfs://). One task per
segment (the unit of parallelism), one per partition directory for its small files (.txnindex,
producer snapshots, leader-epoch-checkpoint) and one per log dir for the broker checkpoints.
Executors emit Arrow record batches through mapInArrow with the schemas of `schemas.py`.
"""

from __future__ import annotations

import fnmatch
import functools
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs
from pyspark.accumulators import AccumulatorParam
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from kforensics.parsers.findings import Finding, severity_of
from kforensics.parsers.log_dir import DIR_STATE_OF_FILE, LogDir, file_type_of, scan_log_dir
from kforensics.parsers.record_batch import BATCH_FIELDS
from kforensics.parsers.uris import filesystem, join_uri
from kforensics.spark import schemas as S
from kforensics.spark.executor_files import FLUSH_ROWS, local_file, unreadable
from kforensics.spark.executor_files import Rows as _Rows
from kforensics.spark.executor_files import finding_row as _finding_row
from kforensics.spark.executor_files import relocated as _relocated
from kforensics.spark.session import is_small

# --- driver: listing ---------------------------------------------------------------------------

def list_tasks(inputs: list[tuple[str, str]], *, topic_glob: str | None,
               dirs: list[dict[str, Any]] | None = None,
               log_dirs: list[dict[str, Any]] | None = None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """One task row per segment, partition dir and log dir, from the directory model (file names only); and
    finding rows for what the listing found (entries that are not a broker's: `unknown_file`, which also says when
    Kafka would not start with a folder in its log dir). `dirs`, when given, receives one row per live, stray or
    future partition dir (broker, topic, partition, path, dir_state, log_dir) for the control plane's checks;
    `log_dirs` one row per log dir (broker, log_dir, refused_dirs) for the restart prediction. One broker label may
    name several log dirs (JBOD): each is a `broker` task of its own."""
    tasks: list[dict[str, Any]] = []
    findings: list[dict[str, Any]] = []
    listed_dirs: list[tuple[str, LogDir]] = []
    for broker, uri in inputs:
        fs, path = filesystem(uri)
        info = fs.get_file_info(path)
        if info.type == pafs.FileType.File:  # kafka-dump-log text (spark/dump_input.py)
            tasks.append({"task_kind": "dump_text", "broker": broker, "topic": None, "partition": None,
                          "path": uri if "://" in uri else path, "base_offset": None, "size": info.size})
            continue
        log_dir, listed = scan_log_dir(uri)
        listed_dirs.append((broker, log_dir))
        findings += [_finding_row({"broker": broker, "topic": None, "partition": None, "base_offset": None}, f)
                     for f in listed]
    # A broker's checkpoint files name the partitions of their own log dir: an entry for a partition that lives in
    # a sibling dir only (left behind by a move between dirs) is not the one the broker reads (LogManager.loadLog)
    live_in: dict[str, dict[str, set[str]]] = {}  # broker -> partition name -> the log dirs holding it live
    for broker, log_dir in listed_dirs:
        for part in log_dir.partitions:
            if part.dir_state == "live":
                live_in.setdefault(broker, {}).setdefault(part.name, set()).add(log_dir.path)
    for broker, log_dir in listed_dirs:
        base = {"broker": broker, "topic": None, "partition": None, "base_offset": None}
        elsewhere = sorted(name for name, where in live_in.get(broker, {}).items() if log_dir.path not in where)
        tasks.append({**base, "task_kind": "broker", "path": log_dir.path, "elsewhere": elsewhere or None})
        if log_dirs is not None:
            log_dirs.append({"broker": broker, "log_dir": log_dir.path, "refused_dirs": list(log_dir.refused_dirs)})
        for part in log_dir.partitions:  # Kafka's -delete, -future and -stray dirs too: `dir_state` names them
            if topic_glob and not fnmatch.fnmatchcase(part.topic, topic_glob):
                continue
            if dirs is not None and part.dir_state in ("live", "stray", "future"):
                dirs.append({"broker": broker, "topic": part.topic, "partition": part.partition, "path": part.path,
                             "dir_state": part.dir_state, "log_dir": log_dir.path})
            key = {"broker": broker, "topic": part.topic, "partition": part.partition, "dir_state": part.dir_state}
            tasks.append({**key, "task_kind": "partition", "path": part.path, "base_offset": None})
            for path in [s.log for s in part.segments if s.log] + part.metadata_snapshots:
                name = path.rsplit("/", 1)[-1]
                tasks.append({**key, "task_kind": "segment", "path": path, "base_offset": int(name[:20]),
                              "size": part.sizes.get(path)})
    return tasks, findings


# --- executors: parsing ------------------------------------------------------------------------

#: The columns a batch row takes from the reader's RecordBatch by name (the task gives the file, its control record the
#: control type and coordinator epoch).
_BATCH_ROW_COLUMNS = [f.name for f in BATCH_FIELDS if f.column and f.source == "header"]


def _batch_rows(task: dict[str, Any], items: list[tuple[Any, str | None, int | None]]) -> pa.RecordBatch:
    """Batch rows in bulk: one Arrow column per header field (the batches are the reader's NamedTuples)."""
    n = len(items)
    batches = [b for b, _, _ in items]
    columns: dict[str, pa.Array] = {
        "row_kind": pa.repeat(pa.scalar("batch"), n), "file": pa.repeat(pa.scalar(task["path"]), n),
        "segment_base_offset": pa.repeat(pa.scalar(task["base_offset"], pa.int64()), n),
        "control_type": pa.array([c for _, c, _ in items], pa.string()),
        "coordinator_epoch": pa.array([e for _, _, e in items], pa.int32()),
    }
    for name in ("broker", "topic", "partition"):
        columns[name] = pa.repeat(pa.scalar(task[name], S.SEGMENT_ROWS.field(name).type), n)
    for name in _BATCH_ROW_COLUMNS:
        columns[name] = pa.array([getattr(b, name) for b in batches], S.SEGMENT_ROWS.field(name).type)
    return pa.RecordBatch.from_arrays([columns[f.name] if f.name in columns else pa.nulls(n, f.type)
                                       for f in S.SEGMENT_ROWS], schema=S.SEGMENT_ROWS)


class ReadersParam(AccumulatorParam):
    """An accumulator of the readers the executors ran: a set of (host, Python, reader) tuples."""

    def zero(self, value: set) -> set:
        return set()

    def addInPlace(self, value1: set, value2: set) -> set:  # noqa: N802 - pyspark's name
        value1 |= value2
        return value1


def executor_reader() -> tuple[str, str, str]:
    """(host, Python executable, reader: compiled or pure) of this Python worker."""
    import socket
    import sys

    from kforensics.parsers.core import READER

    return socket.gethostname(), sys.executable, READER


def segment_rows(tasks: Iterator[pa.RecordBatch], *, check_records: bool = False,
                 readers: Any = None) -> Iterator[pa.RecordBatch]:
    """mapInArrow: segment tasks -> batch rows, parser/index finding rows and one segment row each.

    With `check_records` (full mode) every record of every batch is decoded too (any producer, any codec, a
    batch with a bad CRC as well), and what the decoder finds is reported as `dump --deep-iteration` reports
    it: decompression_failed, unknown_codec, invalid_record, record_count_mismatch."""
    if readers is not None:  # `readers`: a ReadersParam accumulator
        readers.add({executor_reader()})
    out = _Rows(S.SEGMENT_ROWS)
    for chunk in tasks:
        for task in chunk.to_pylist():
            try:
                yield from _segment_task_rows(task, out, check_records)
            except OSError as exc:  # the file could not be copied or opened: the other segments are read on
                yield from out.add(_finding_row(task, unreadable(task["path"], exc)))
    yield from out.flush()


def _segment_task_rows(task: dict[str, Any], out: _Rows, check_records: bool) -> Iterator[pa.RecordBatch]:
    """One segment task's batch rows, finding rows and segment row (`segment_rows`). An I/O error part way
    keeps the batches read before it and ends the segment with an `unreadable_file` finding at that byte."""
    from kforensics.parsers.index_check import BatchBounds, check_index_file
    from kforensics.parsers.record_batch import RecordBatch, open_log
    from kforensics.parsers.restart import SegmentRecovery

    key = {"broker": task["broker"], "topic": task["topic"], "partition": task["partition"]}
    uri = task["path"]
    with local_file(uri) as path:
        if path is None:
            yield from out.add(_finding_row(task, Finding("unreadable_file", uri, None, f"cannot read {uri}")))
            return
        bounds: list[BatchBounds] = []
        batch_rows: list[tuple[RecordBatch, str | None, int | None]] = []
        first_base = last_offset = None
        records = valid_bytes = 0
        failed: OSError | None = None
        try:
            with open_log(path) as log:
                # log recovery replayed on the same walk (restart_prediction): the segments of a partition's log
                walk = SegmentRecovery(log, task["base_offset"]) if uri.endswith(".log") else None
                for b in log.batches():
                    if walk is not None:
                        walk.add(b)
                    if not isinstance(b, RecordBatch):
                        yield from out.add(_finding_row(task, _relocated(b, uri)))
                        continue
                    if check_records:
                        for f in log.record_findings(b):
                            yield from out.add(_finding_row(task, _relocated(f, uri)))
                    control_type = coordinator_epoch = None
                    if b.is_control and b.magic == 2:
                        rec = log.control_record(b)
                        if rec is not None:
                            control_type, coordinator_epoch = rec.control_type, rec.coordinator_epoch
                    batch_rows.append((b, control_type, coordinator_epoch))
                    if len(batch_rows) >= FLUSH_ROWS:
                        yield _batch_rows(task, batch_rows)
                        batch_rows = []
                    bounds.append(BatchBounds(b.position, b.base_offset, b.last_offset, b.max_timestamp))
                    first_base = b.base_offset if first_base is None else first_base
                    last_offset = b.last_offset
                    records += b.count
                    valid_bytes = b.position + b.size
                size = log.size
                recovery = None if walk is None else json.dumps(walk.facts())
        except OSError as exc:
            failed = exc
        if batch_rows:
            yield _batch_rows(task, batch_rows)
        if failed is not None:
            yield from out.add(_finding_row(task, unreadable(uri, failed, valid_bytes)))
            return
    segment = {"row_kind": "segment", **key, "file": uri, "segment_base_offset": task["base_offset"],
               "size": size, "first_batch_base_offset": first_base, "last_offset": last_offset,
               "batch_count": len(bounds), "record_count": records, "valid_bytes": valid_bytes, "recovery": recovery}
    stem = uri[: -len(".log")] if uri.endswith(".log") else None
    for kind in ("index", "timeindex") if stem is not None else ():
        index_uri = f"{stem}.{kind}"
        try:
            with local_file(index_uri) as index_path:
                if kind == "index":
                    segment["has_offset_index"] = index_path is not None
                if index_path is None:
                    continue
                checked = check_index_file(index_path, kind, bounds, base_offset=task["base_offset"],
                                           name=index_uri)
        except OSError as exc:
            yield from out.add(_finding_row(task, unreadable(index_uri, exc)))
            continue
        for f in (*checked.read_findings, *checked.log_findings):
            yield from out.add(_finding_row(task, f))
    yield from out.add(segment)


def import_readers(_: Iterator[Any]) -> Iterator[Any]:
    """A Python worker's imports of the parse pass: the readers and the Arrow and pandas modules PySpark's Arrow
    runner loads (`jobs.warm_python_workers`); yields nothing."""
    import pandas  # noqa: F401
    import pyarrow  # noqa: F401

    from kforensics.parsers import internal_topics, record_batch  # noqa: F401
    from kforensics.spark import control_plane, metadata_records, remote_storage  # noqa: F401

    return iter(())


def record_rows(chunks: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """mapInArrow: batches named by (broker, topic, partition, file, position, size), in file order -> one row
    per record of those batches, with content hashes (`parsers/record_rows.py`: decoded in bulk into columns,
    C buffers with the compiled reader). Only the batches asked for are read."""
    from kforensics.parsers.record_batch import RecordBatch, open_log
    from kforensics.parsers.record_rows import RecordColumns

    columns = RecordColumns()
    for chunk in chunks:
        for uri, rows in _by_file(chunk.to_pylist()):
            task = rows[0]
            try:
                with local_file(uri) as path:
                    if path is None:
                        continue
                    with open_log(path) as log:
                        for row in rows:
                            for b in log.batches(start=row["position"], max_bytes=row["size"]):
                                if isinstance(b, RecordBatch):
                                    columns.add(log, b)
                            if len(columns) >= FLUSH_ROWS:
                                yield _record_batch(task, columns)
            except OSError:
                pass  # the parse pass reported the file as unreadable_file; its records are not compared
            if len(columns):
                yield _record_batch(task, columns)


def _by_file(rows: list[dict[str, Any]]) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Runs of consecutive rows naming the same file."""
    start = 0
    for i in range(1, len(rows) + 1):
        if i == len(rows) or rows[i]["file"] != rows[start]["file"]:
            yield rows[start]["file"], rows[start:i]
            start = i


def batch_record_rows(batches: DataFrame) -> DataFrame:
    """Needs KEY, file, position, size of some batches; the record rows (RECORD_ROWS) of exactly those,
    decoded on the executors, a file's batches in one task and in file order."""
    spark = batches.sparkSession
    parallelism = max(2, spark.sparkContext.defaultParallelism)
    return (batches.select("broker", "topic", "partition", "file", "position", "size")
            .repartition(parallelism, "file").sortWithinPartitions("file", "position")
            .mapInArrow(record_rows, S.ddl(S.RECORD_ROWS)))


def _record_batch(task: dict[str, Any], columns: Any) -> pa.RecordBatch:
    arrays = columns.take()
    n = len(arrays["offset"])
    key = [pa.repeat(pa.scalar(task[name], S.RECORD_ROWS.field(name).type), n)
           for name in ("broker", "topic", "partition")]
    return pa.RecordBatch.from_arrays([*key, *(arrays[name] for name, _ in S.RECORD_FIELDS)], schema=S.RECORD_ROWS)


def internal_rows(tasks: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """mapInArrow: segment tasks of __transaction_state / __consumer_offsets / __share_group_state -> one row per
    coordinator record, offset commit, group record (`groups.group_record_rows`) or share state record
    (`share_groups.share_record_rows`), and undecodable-record findings."""
    from kforensics.parsers.internal_topics import (
        NewerVersions,
        decode_consumer_offsets,
        decode_share_group_state,
        decode_transaction_state,
    )
    from kforensics.parsers.record_batch import Record, RecordBatch, open_log
    from kforensics.spark.groups import group_record_rows
    from kforensics.spark.share_groups import share_record_rows

    out = _Rows(S.INTERNAL_ROWS)
    # issue 41: the group and share state records are rows of their own beside the commits
    decoders = {"__transaction_state": decode_transaction_state, "__consumer_offsets": decode_consumer_offsets,
                "__share_group_state": decode_share_group_state}
    group_rows = {"__consumer_offsets": group_record_rows, "__share_group_state": share_record_rows}
    for chunk in tasks:
        for task in chunk.to_pylist():
            key = {"broker": task["broker"], "topic": task["topic"], "partition": task["partition"]}
            is_txn = task["topic"] == "__transaction_state"
            decode, more_rows = decoders[task["topic"]], group_rows.get(task["topic"])
            newer = NewerVersions()
            try:
                with local_file(task["path"]) as path:
                    if path is None:
                        continue
                    with open_log(path) as log:
                        for b in log.batches():
                            if not isinstance(b, RecordBatch) or b.is_control or not b.crc_valid:
                                continue
                            for r in log.records(b):
                                if not isinstance(r, Record):
                                    continue
                                where = {**key, "file": task["path"], "position": b.position, "offset": r.offset,
                                         "timestamp": r.timestamp}
                                decoded = decode(r.key, r.value)
                                if decoded.get("newer"):
                                    finding = _newer_row(where, decoded, newer)
                                    if finding is not None:
                                        yield from out.add(finding)
                                row = _internal_row(where, decoded, is_txn, {
                                    "producer_id": b.producer_id, "producer_epoch": b.producer_epoch,
                                    "transactional": b.is_transactional})
                                if row is not None:
                                    yield from out.add(row)
                                for row in more_rows(where, decoded) if more_rows else ():
                                    yield from out.add(row)
            except OSError:
                pass  # the parse pass reports the segment as unreadable_file; the records read before stay
    yield from out.flush()


def _newer_row(where: dict[str, Any], decoded: dict[str, Any], seen: Any) -> dict[str, Any] | None:
    """An `internal_record_newer_version` finding row for the first record of its record type and version in
    this task (the scan keeps the first of each across tasks)."""
    from kforensics.parsers.internal_topics import COORDINATOR_RECORDS

    k, v = decoded["key"], decoded.get("value") or {}
    pair = COORDINATOR_RECORDS[where["topic"]].get(k.get("version", 0))
    record_type = pair[1].name if pair is not None else f"record type {k.get('version')}"
    version = v.get("version", k.get("version", -1))
    f = seen.finding(where["topic"], where["file"], where["position"], where["offset"], record_type,
                     k.get("version", 0), version, decoded.get("known_versions", ""))
    if f is None:
        return None
    return {"row_kind": "finding", **where, "kind": f.kind, "severity": f.effective_severity, "message": f.message,
            "details": json.dumps(dict(f.details))}


def _internal_row(where: dict[str, Any], decoded: dict[str, Any], is_txn: bool,
                  batch: dict[str, Any] | None = None) -> dict[str, Any] | None:
    if "error" in decoded:
        return {"row_kind": "finding", **where, "kind": "internal_record_undecodable", "severity": severity_of("internal_record_undecodable"),
                "message": f"record at offset {where['offset']} of {where['topic']}-{where['partition']} could not be "
                           f"decoded: {decoded['error']}", "details": json.dumps(decoded)}
    k, v = decoded["key"], decoded["value"]
    if is_txn:
        if v is not None and "producer_id" not in v:
            return None  # a newer value version whose fields could not be read (its finding says so)
        row = {"row_kind": "txn", **where, "transactional_id": k["transactional_id"], "tombstone": v is None}
        if v is not None:
            parts = v.get("partitions") or {}
            row.update(producer_id=v["producer_id"], producer_epoch=v["producer_epoch"], state=v["state"],
                       transaction_timeout_ms=v["transaction_timeout_ms"],
                       txn_partitions=",".join(sorted(f"{t}-{p}" for t, ps in parts.items() for p in ps or [])),
                       last_update_timestamp=v["last_update_timestamp_ms"], start_timestamp=v["start_timestamp_ms"],
                       # v1's tagged fields, absent where equal to their defaults (-1, -1, -1, 0)
                       previous_producer_id=v.get("previous_producer_id", -1),
                       next_producer_id=v.get("next_producer_id", -1),
                       next_producer_epoch=v.get("next_producer_epoch", -1),
                       client_transaction_version=v.get("client_transaction_version", 0))
        return row
    if k.get("type") != "offset_commit" or (v is not None and "offset" not in v):
        return None
    row = {"row_kind": "commit", **where, "group_id": k["group"], "commit_topic": k["topic"],
           "commit_partition": k["partition"], "tombstone": v is None}
    row.update(batch or {})  # the producer of its batch: a TxnOffsetCommit is pending until its transaction's marker
    if v is not None:
        row.update(committed_offset=v["offset"], committed_leader_epoch=v.get("leaderEpoch"),
                   commit_timestamp=v["commitTimestamp"])
    return row


def small_file_rows(tasks: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """mapInArrow: partition and broker tasks -> txnindex, snapshot, leader epoch, checkpoint and finding rows."""
    out = _Rows(S.SMALL_ROWS)
    for chunk in tasks:
        for task in chunk.to_pylist():
            rows = _broker_rows(task) if task["task_kind"] == "broker" else _partition_rows(task)
            try:
                for row in rows:
                    yield from out.add(row)
            except OSError as exc:  # the directory could not be listed any more
                yield from out.add(_finding_row(task, unreadable(task["path"], exc)))
    yield from out.flush()


def _file_rows(task: dict[str, Any], uri: str, read: Callable[[str], Iterator[dict[str, Any]]]) \
        -> Iterator[dict[str, Any]]:
    """The rows `read` makes of one small file (a local copy of it), or an `unreadable_file` finding row when the
    file cannot be copied, opened or read (a small file: its rows are made before any is given out)."""
    try:
        with local_file(uri) as path:
            rows = [] if path is None else list(read(path))
    except OSError as exc:
        rows = [_finding_row(task, unreadable(uri, exc))]
    yield from rows


def _list_files(uri: str) -> list[str]:
    fs, root = filesystem(uri)
    base = uri if "://" in uri else root
    return sorted(join_uri(base, f.base_name) for f in fs.get_file_info(pafs.FileSelector(root))
                  if f.type == pafs.FileType.File)


def _partition_rows(task: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The rows of a partition directory's small files, each read by its type's parser (log_dir.FILE_TYPES), and
    one `segment_file` row per segment file and metadata snapshot it lists (`_segment_file_rows`)."""
    uris = _list_files(task["path"])
    for uri in uris:
        name = uri.rsplit("/", 1)[-1]
        file_type = file_type_of(name)
        if file_type is None or file_type.name not in PARTITION_FILE_TYPES:
            continue
        yield from _file_rows(task, uri, functools.partial(_small_file_rows, task, uri, file_type.name,
                                                           file_type.read()))
    yield from _segment_file_rows(task, uris)


#: The files a `segment_files` row lists: a segment's files by base offset, and KRaft metadata snapshots.
LISTED_SEGMENT_FILES = ("log", "index", "timeindex", "txnindex", "snapshot", "metadata_snapshot")


def _segment_file_rows(task: dict[str, Any], uris: list[str]) -> Iterator[dict[str, Any]]:
    """One row per segment file of a partition dir (`segment_files`): its type and the offset its name carries (a
    metadata snapshot's end offset); for an offset or time index whose `.log` is not in the dir, the offset (and
    timestamp) of its last entry: how far the absent segment went (the copy lacks it)."""
    from kforensics.parsers import offset_index, time_index

    key = {"broker": task["broker"], "topic": task["topic"], "partition": task["partition"]}
    names = {uri.rsplit("/", 1)[-1] for uri in uris}
    for uri in uris:
        name = uri.rsplit("/", 1)[-1]
        file_type = file_type_of(name)
        if file_type is None or file_type.name not in LISTED_SEGMENT_FILES or name == "bootstrap.checkpoint":
            continue
        row = {"row_kind": "segment_file", **key, "file": uri, "file_type": file_type.name,
               "base_offset": int(name[:20])}
        if file_type.name in ("index", "timeindex") and f"{name[:20]}.log" not in names:
            reader = offset_index if file_type.name == "index" else time_index
            try:
                with local_file(uri) as path:
                    entry = None if path is None else reader.last_entry(path, row["base_offset"])
                row.update(last_offset=None if entry is None else entry.offset,
                           last_timestamp=getattr(entry, "timestamp", None))
            except OSError as exc:  # the file is listed all the same: its row stays, without its last entry
                yield _finding_row(task, unreadable(uri, exc))
        yield row


def _small_file_rows(task: dict[str, Any], uri: str, kind: str, read: Callable[..., Any],
                     path: str) -> Iterator[dict[str, Any]]:
    """The rows of one small file of a partition dir (a local copy at `path`), by its type."""
    key = {"broker": task["broker"], "topic": task["topic"], "partition": task["partition"]}
    name = uri.rsplit("/", 1)[-1]
    if kind == "txnindex":
        for item in read(path):
            if isinstance(item, Finding):
                yield _finding_row(task, _relocated(item, uri))
            else:
                yield {"row_kind": "txnindex", **key, "file": uri, "version": item.version,
                       "producer_id": item.producer_id, "first_offset": item.first_offset,
                       "last_offset": item.last_offset, "last_stable_offset": item.last_stable_offset}
    elif kind == "snapshot":
        snapshot, findings = read(path)
        for f in findings:
            yield _finding_row(task, _relocated(f, uri))
        if snapshot is not None:
            offset = int(name[:20]) if name[:20].isdigit() else None
            for e in snapshot.entries:
                yield {"row_kind": "snapshot", **key, "file": uri, "snapshot_offset": offset,
                       "producer_id": e.producer_id, "producer_epoch": e.producer_epoch,
                       "last_sequence": e.last_sequence, "last_offset": e.last_offset,
                       "offset_delta": e.offset_delta, "timestamp": e.timestamp,
                       "coordinator_epoch": e.coordinator_epoch,
                       "current_txn_first_offset": e.current_txn_first_offset}
    elif kind == "partition_metadata":
        props, findings = read(path)
        for f in findings:
            yield _finding_row(task, _relocated(f, uri))
        if props.get("topic_id"):
            yield {"row_kind": "topic_id", **key, "file": uri, "topic_id": str(props["topic_id"])}
    elif kind == "leader_epoch_checkpoint":
        entries, findings = read(path)
        for f in findings:
            yield _finding_row(task, _relocated(f, uri))
        for e in entries:
            yield {"row_kind": "leader_epoch", **key, "file": uri, "epoch": e.epoch, "start_offset": e.start_offset}


#: The small files of a partition directory the executors read (segments, indexes and metadata snapshots are
#: segment tasks).
PARTITION_FILE_TYPES = ("txnindex", "snapshot", "partition_metadata", "leader_epoch_checkpoint")
CHECKPOINT_COLUMNS = {"replication-offset-checkpoint": "high_watermark",
                      "recovery-point-offset-checkpoint": "recovery_point",
                      "log-start-offset-checkpoint": "log_start_offset", "cleaner-offset-checkpoint": "cleaner_offset"}


def _broker_rows(task: dict[str, Any]) -> Iterator[dict[str, Any]]:
    from kforensics.parsers.checkpoints import read_meta_properties, read_offset_checkpoint

    at_root = {**task, "topic": None, "partition": None}
    props: dict[str, Any] = {}
    clean_shutdown = False
    meta_properties = join_uri(task["path"], "meta.properties")
    try:
        with local_file(meta_properties) as path:
            props = read_meta_properties(path)[0] if path is not None else {}
            meta_properties = meta_properties if path is not None else None
        with local_file(join_uri(task["path"], ".kafka_cleanshutdown")) as path:
            clean_shutdown = path is not None
    except OSError as exc:
        yield _finding_row(at_root, unreadable(task["path"], exc))
    # Replicas are only compared within one cluster: two disks of different clusters share topic names.
    node = props.get("node.id", props.get("broker.id"))
    broker = {"row_kind": "broker", "broker": task["broker"], "cluster_id": props.get("cluster.id"),
              "node_id": int(node) if isinstance(node, str) and node.lstrip("-").isdigit() else None,
              "log_dir": task["path"], "file": meta_properties, "directory_id": props.get("directory.id"),
              "clean_shutdown": clean_shutdown, "recovery_checkpoint_unreadable": False}
    elsewhere = set(task.get("elsewhere") or ())

    merged: dict[tuple[str, int], dict[str, Any]] = {}
    for name, column in CHECKPOINT_COLUMNS.items():
        uri = join_uri(task["path"], name)
        try:
            with local_file(uri) as path:
                if path is None:
                    continue
                entries, findings = read_offset_checkpoint(path)
        except OSError as exc:
            entries, findings = [], [unreadable(uri, exc)]
        if findings and column == "recovery_point":  # the broker then recovers every partition from 0
            broker["recovery_checkpoint_unreadable"] = True
        for f in findings:
            yield _finding_row(at_root, _relocated(f, uri))
        for e in entries:
            if f"{e.topic}-{e.partition}" not in elsewhere:
                merged.setdefault((e.topic, e.partition), {})[column] = e.offset
    yield broker
    for (topic, partition), values in sorted(merged.items()):
        yield {"row_kind": "checkpoint", "broker": task["broker"], "topic": topic, "partition": partition, **values}


# --- Spark side --------------------------------------------------------------------------------

DIR_STATE_TABLES = S.DIR_STATE_TABLES


def with_dir_state(df: DataFrame, path: str = "file") -> DataFrame:
    """Needs `path` (a file in a partition dir); adds dir_state: live, delete, future or stray, from the name of
    the partition dir (`parsers/log_dir.py`)."""
    state = F.regexp_extract(F.col(path), DIR_STATE_OF_FILE, 1)
    return df.withColumn("dir_state", F.when(state == "", F.lit("live")).otherwise(state))


def live_only(tables: dict[str, DataFrame]) -> dict[str, DataFrame]:
    """The input tables as the analyses read them: the rows of live partition dirs, without dir_state."""
    return {name: df.filter(F.col("dir_state") == "live").drop("dir_state") if name in DIR_STATE_TABLES else df
            for name, df in tables.items()}


@dataclass(frozen=True)
class InputFacts:
    """What the driver knows from the listing alone, so that analyses with nothing to judge plan no jobs."""

    #: Some topic-partition dir exists under two or more broker labels (replicas are possible).
    replicas_possible: bool
    has_transaction_state: bool
    has_consumer_offsets: bool
    has_remote_log_metadata: bool = True
    #: A `__share_group_state` partition is in the input.
    has_share_group_state: bool = True
    #: The parse pass may have kept group records (`group_records`, `share_state_records`): the listing's
    #: `has_consumer_offsets` / `has_share_group_state`, made exact by a driver's parse (`jobs.run_scan`).
    has_group_records: bool = True
    has_share_state_records: bool = True
    #: Some broker holds a -future copy of a partition it also holds live (a move between log dirs).
    has_future_replicas: bool = False
    #: Some broker's `__cluster_metadata-0` (KRaft metadata log) is in the input.
    has_cluster_metadata: bool = False
    #: Some broker label names two or more log dirs (JBOD: one broker's `log.dirs`).
    several_log_dirs: bool = False
    #: Broker labels of kafka-dump-log text inputs (their partitions are known only once parsed).
    dump_brokers: tuple[str, ...] = ()
    #: Bytes of the segments and dump files to parse, as the listing saw them (None: a filesystem did not say).
    input_bytes: int | None = None


def input_facts(tasks: list[dict[str, Any]]) -> InputFacts:
    live = [t for t in tasks if t.get("dir_state", "live") == "live"]
    partitions = [(t["topic"], t["partition"]) for t in live if t["task_kind"] == "partition"]
    topics = {t["topic"] for t in live if t["task_kind"] == "segment"}
    dumps = tuple(t["broker"] for t in tasks if t["task_kind"] == "dump_text")
    sizes = [t.get("size") for t in tasks if t["task_kind"] in ("segment", "dump_text")]
    log_dir_brokers = [t["broker"] for t in tasks if t["task_kind"] == "broker"]
    return InputFacts(input_bytes=None if None in sizes else sum(sizes), replicas_possible=len(partitions) != len(set(partitions)) or bool(dumps),
                      has_transaction_state="__transaction_state" in topics,
                      has_consumer_offsets="__consumer_offsets" in topics,
                      has_share_group_state="__share_group_state" in topics,
                      has_group_records="__consumer_offsets" in topics,
                      has_share_state_records="__share_group_state" in topics,
                      has_remote_log_metadata="__remote_log_metadata" in topics, dump_brokers=dumps,
                      has_future_replicas=any(t["task_kind"] == "partition" and t.get("dir_state") == "future"
                                              for t in tasks),
                      has_cluster_metadata="__cluster_metadata" in topics,
                      several_log_dirs=len(log_dir_brokers) != len(set(log_dir_brokers)))


@dataclass(frozen=True)
class Listing:
    """The driver's listing of the inputs (`list_tasks`): the task rows, the listing's finding rows, the live and
    stray partition dirs, each log dir's refused dirs, and the facts the scan is planned by."""

    tasks: list[dict[str, Any]]
    findings: list[dict[str, Any]]
    dirs: list[dict[str, Any]]
    log_dirs: list[dict[str, Any]]
    facts: InputFacts


def list_input(inputs: list[tuple[str, str]], *, topic_glob: str | None = None) -> Listing:
    """List broker log dirs (label, path or URI): file names only, nothing is parsed."""
    dirs: list[dict[str, Any]] = []
    log_dirs: list[dict[str, Any]] = []
    tasks, findings = list_tasks(inputs, topic_glob=topic_glob, dirs=dirs, log_dirs=log_dirs)
    return Listing(tasks, findings, dirs, log_dirs, input_facts(tasks))


def read_tables(spark: SparkSession, inputs: list[tuple[str, str]], *, headers_only: bool,
                topic_glob: str | None = None, readers: Any = None,
                listing: Listing | None = None) -> tuple[dict[str, DataFrame], InputFacts]:
    """All input tables of the analysis (see README "Parquet tables"), parsed on the executors, and what the
    listing tells about them. `readers` (a ReadersParam accumulator) collects which reader each Python worker
    that parsed segments ran. `listing`: the inputs' listing, if the caller made it already."""
    listing = listing or list_input(inputs, topic_glob=topic_glob)
    tasks, listing_findings, dirs, refused, facts = (listing.tasks, listing.findings, listing.dirs, listing.log_dirs,
                                                     listing.facts)
    # A small input is parsed in a few tasks: each costs a Python worker's round trip and a task binary, more
    # than its segments' parsing
    parallelism = 1 if is_small(facts.input_bytes) else max(2, spark.sparkContext.defaultParallelism)
    # A Python RDD, not a local relation from Arrow: the optimizer carries a local relation's few-KB size estimate
    # to the tables parsed from it and then broadcasts them (a full scan of 2 GB ran the driver out of memory).
    task_df = S.frame(spark, S.TASKS, tasks)
    segments = with_dir_state(task_df.filter(F.col("task_kind") == "segment"), "path")
    n_segments = max(1, sum(1 for t in tasks if t["task_kind"] == "segment"))
    segments = segments.repartition(min(n_segments, 2 if parallelism == 1 else parallelism * 4))
    seg_rows = segments.mapInArrow(functools.partial(segment_rows, check_records=not headers_only, readers=readers),
                                   S.ddl(S.SEGMENT_ROWS))
    n_dumps = sum(1 for t in tasks if t["task_kind"] == "dump_text")
    if n_dumps:
        from kforensics.spark.dump_input import dump_rows

        seg_rows = seg_rows.unionByName(dump_rows(task_df, n_dumps, topic_glob))
    seg_rows = seg_rows.cache()
    small = task_df.filter(F.col("task_kind").isin("broker", "partition")).repartition(parallelism)
    small_rows = small.mapInArrow(small_file_rows, S.ddl(S.SMALL_ROWS)).cache()

    key = ["broker", "topic", "partition"]
    # KRaft metadata snapshots (<offset>-<epoch>.checkpoint) are parsed for damage but are not part of the
    # partition's log: their batches restart at offset 0.
    in_log = F.col("file").endswith(".log")
    segment_facts = seg_rows.filter((F.col("row_kind") == "segment") & in_log)
    segment_base = F.col("segment_base_offset").alias("base_offset")
    tables = {
        "batches": seg_rows.filter((F.col("row_kind") == "batch") & in_log).select(*key, *S.columns(S.BATCH_FIELDS)),
        "segments": segment_facts.select(*key, "file", segment_base, "size", "first_batch_base_offset",
                                         "last_offset", "batch_count", "record_count", "valid_bytes",
                                         "has_offset_index"),
        "segment_recovery": segment_facts.select(*key, "file", segment_base, "size", "has_offset_index", "recovery"),
        "txnindex": small_rows.filter(F.col("row_kind") == "txnindex").select(*key, *S.columns(S.TXNINDEX_FIELDS)),
        "snapshot_entries": small_rows.filter(F.col("row_kind") == "snapshot").select(
            *key, *S.columns(S.SNAPSHOT_FIELDS)),
        "leader_epochs": small_rows.filter(F.col("row_kind") == "leader_epoch").select(*key,
                                                                                        *S.columns(S.EPOCH_FIELDS)),
        "segment_files": small_rows.filter(F.col("row_kind") == "segment_file").select(
            *key, *S.columns(S.SEGMENT_FILE_FIELDS)),
        "brokers": broker_identities(small_rows.filter(F.col("row_kind") == "broker")),
        "log_dirs": small_rows.filter(F.col("row_kind") == "broker").select(
            "broker", "log_dir", F.col("file").alias("meta_properties"), "cluster_id", "node_id", "directory_id",
            "clean_shutdown", "recovery_checkpoint_unreadable")
        .join(S.frame(spark, pa.schema([S.INPUT_TABLES["log_dirs"].field(n)
                                        for n in ("broker", "log_dir", "refused_dirs")]), refused),
              ["broker", "log_dir"], "left"),
        "partition_checkpoints": small_rows.filter(F.col("row_kind") == "checkpoint").select(
            *key, *S.columns(S.CHECKPOINT_FIELDS)),
        "parser_findings": seg_rows.filter(F.col("row_kind") == "finding").select(*S.FINDINGS.names).unionByName(
            small_rows.filter(F.col("row_kind") == "finding").select(*S.FINDINGS.names)),
    }
    # Coordinator records and offset commits are decoded in every mode: they are small and the cluster-wide
    # checks need them.
    internal = (segments.filter(F.col("topic").isin(*S.INTERNAL_TOPICS) & F.col("path").endswith(".log")
                                & (F.col("dir_state") == "live"))
                .mapInArrow(internal_rows, S.ddl(S.INTERNAL_ROWS)))
    if not (facts.has_transaction_state or facts.has_consumer_offsets or facts.has_share_group_state):
        internal = internal.limit(0)  # nothing to decode: no job
    internal = internal.cache()
    tables["coordinator_records"] = internal.filter(F.col("row_kind") == "txn").select(
        *S.INPUT_TABLES["coordinator_records"].names)
    tables["offset_commits"] = internal.filter(F.col("row_kind") == "commit").select(
        *S.INPUT_TABLES["offset_commits"].names)
    for name, kind in (("group_records", "group"), ("share_state_records", "share")):  # issue 41
        tables[name] = internal.filter(F.col("row_kind") == kind).select(*S.INPUT_TABLES[name].names)
    tables["parser_findings"] = tables["parser_findings"].unionByName(
        first_newer_version(internal.filter(F.col("row_kind") == "finding").select(*S.FINDINGS.names)))
    if listing_findings:
        tables["parser_findings"] = tables["parser_findings"].unionByName(S.frame(spark, S.FINDINGS, listing_findings))
    # Tiered storage's __remote_log_metadata, decoded in every mode too (spark/remote_storage.py).
    from kforensics.spark.remote_storage import read_events

    remote = read_events(segments.filter(F.col("dir_state") == "live"), facts.has_remote_log_metadata).cache()
    tables["remote_log_events"] = remote.filter(F.col("row_kind") == "event").drop("row_kind")
    tables["partition_topic_ids"] = with_dir_state(small_rows.filter(F.col("row_kind") == "topic_id")).select(
        *key, "topic_id", "dir_state")
    # KRaft: the __cluster_metadata records the control plane replays (spark/metadata_records.py, replayed by
    # spark/control_plane.py), and the partition dirs (live and stray) it holds against them.
    from kforensics.spark.metadata_records import read_metadata_records

    metadata = read_metadata_records(segments.filter(F.col("dir_state") == "live"), tables["brokers"],
                                     facts.has_cluster_metadata).cache()
    tables["metadata_records"] = metadata.filter(F.col("row_kind") == "record").select(*S.METADATA_RECORDS.names)
    tables["parser_findings"] = tables["parser_findings"].unionByName(first_newer_version(
        metadata.filter(F.col("row_kind") == "finding").select(
            F.col("metadata_broker").alias("broker"), F.lit("__cluster_metadata").alias("topic"),
            F.lit(0).alias("partition"), "kind", "severity", "file", "position",
            F.col("record_index").alias("offset"), F.lit(None).cast("long").alias("producer_id"),
            F.lit(None).cast("int").alias("producer_epoch"), "message", "details")))
    tables["partition_dirs"] = S.frame(spark, S.INPUT_TABLES["partition_dirs"], dirs)
    tables["parser_findings"] = tables["parser_findings"].unionByName(first_newer_version(
        remote.filter(F.col("row_kind") == "finding").select(*key, "kind", "severity", "file", "position", "offset",
                                                             F.lit(None).cast("long").alias("producer_id"),
                                                             F.lit(None).cast("int").alias("producer_epoch"),
                                                             "message", "details")))
    for name in DIR_STATE_TABLES:
        if name != "partition_topic_ids":  # its file column is not kept
            tables[name] = with_dir_state(tables[name])
    return {name: df.select(*S.INPUT_TABLES[name].names) for name, df in tables.items()}, facts


def broker_identities(log_dirs: DataFrame) -> DataFrame:
    """One row per broker label from its log dirs' rows: cluster_id and node_id of the first dir, by path, with a
    meta.properties (a broker whose dirs disagree refuses to start: a check of its own says so)."""
    first = F.min_by(F.struct("cluster_id", "node_id"), F.struct(F.col("file").isNull(), F.col("log_dir")))
    return log_dirs.groupBy("broker").agg(first.alias("id")).select("broker", "id.cluster_id", "id.node_id")


def empty_tables(spark: SparkSession) -> dict[str, DataFrame]:
    """Every input table with no rows and its full schema (`schemas.INPUT_TABLES`): what a scan of an empty
    log dir gives the analyses."""
    return {name: S.frame(spark, schema, []) for name, schema in S.INPUT_TABLES.items()}


def first_newer_version(findings: DataFrame) -> DataFrame:
    """Needs finding rows (FINDINGS columns); keeps one `internal_record_newer_version` per topic, record type and
    version (the first by broker, file, position, offset) and every other finding as it is."""
    newer = F.col("kind") == "internal_record_newer_version"
    ranked = findings.filter(newer).withColumn("_n", F.row_number().over(
        Window.partitionBy("topic", F.get_json_object("details", "$.record_type"),
                           F.get_json_object("details", "$.version"))
        .orderBy("broker", "file", "position", "offset")))
    return findings.filter(~newer).unionByName(ranked.filter(F.col("_n") == 1).drop("_n"))
