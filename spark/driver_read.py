"""A small local input's parse pass, run by the driver itself: the input tables as Arrow, with no Spark job.

The executor functions of the parse pass (`read.segment_rows`, `read.small_file_rows`, `read.internal_rows`,
`remote_storage.event_rows`, `metadata_records.metadata_record_rows`) run in the driver's process over the same task
rows that `read.read_tables` hands them through mapInArrow, and their rows are split into the input tables with
pyarrow, table by table as `read_tables` splits them with Spark. A few MB of segments parse in milliseconds here;
the same pass as Spark jobs cost the two sample brokers ~1.7 s in a warm session and ~5.7 s in a fresh JVM
(benchmarks/bench_query_floor.py). `tests/test_driver_read.py` holds the two paths to the same rows.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from kforensics.parsers.log_dir import DIR_STATE_OF_FILE
from kforensics.spark import schemas as S
from kforensics.spark.control_plane import METADATA_TOPIC
from kforensics.spark.metadata_records import metadata_record_rows
from kforensics.spark.read import DIR_STATE_TABLES, Listing, internal_rows, segment_rows, small_file_rows
from kforensics.spark.remote_storage import TOPIC as REMOTE_TOPIC
from kforensics.spark.remote_storage import event_rows
from kforensics.spark.session import is_small

_DIR_STATE = re.compile(DIR_STATE_OF_FILE)
_KEY = ["broker", "topic", "partition"]
NEWER_VERSION = "internal_record_newer_version"


def reads_on_driver(listing: Listing, master: str) -> bool:
    """Whether the driver parses this input itself: a small input (`session.is_small`) of local files, scanned by
    embedded Spark, with no kafka-dump-log text (its parse is a Spark transform)."""
    return (master.startswith("local") and is_small(listing.facts.input_bytes) and not listing.facts.dump_brokers
            and all("://" not in task["path"] for task in listing.tasks))


def dir_state(path: str | None) -> str | None:
    """`read.with_dir_state` of one path: live, delete, future or stray, from the name of its partition dir."""
    if path is None:
        return None
    match = _DIR_STATE.search(path)
    return (match.group(1) if match else None) or "live"


def _run(parse: Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]], tasks: list[dict[str, Any]],
         task_schema: pa.Schema, schema: pa.Schema) -> pa.Table:
    """`parse` (a mapInArrow function) over task rows of `task_schema`, its output as one table of `schema`."""
    if not tasks:
        return schema.empty_table()
    batch = pa.RecordBatch.from_pylist([{name: t.get(name) for name in task_schema.names} for t in tasks],
                                       schema=task_schema)
    return pa.Table.from_batches([b for b in parse(iter([batch])) if b.num_rows], schema=schema)


def _kind(rows: pa.Table, kind: str, log_only: bool = False) -> pa.Table:
    """The rows of one `row_kind` (of `.log` files only: `read_tables`'s `in_log`)."""
    keep = pc.equal(rows["row_kind"], kind)
    if log_only:
        keep = pc.and_kleene(keep, pc.ends_with(rows["file"], ".log"))
    return rows.filter(keep)


def _table(schema: pa.Schema, rows: pa.Table, renamed: dict[str, str] | None = None,
           **values: list[Any] | pa.ChunkedArray) -> pa.Table:
    """`rows` as a table of `schema`: each column from the column of its name (or of the name `renamed` gives it),
    or from `values`; a column none of them has is null (`lit(None)` in `read_tables`)."""
    renamed = renamed or {}
    columns = []
    for field in schema:
        source = renamed.get(field.name, field.name)
        if field.name in values:
            column = values[field.name]
            column = column if isinstance(column, pa.ChunkedArray) else pa.array(column, field.type)
        elif source in rows.column_names:
            column = rows[source]
        else:
            column = pa.nulls(rows.num_rows, field.type)
        columns.append(column.cast(field.type))
    return pa.Table.from_arrays(columns, schema=schema)


def _with_dir_state(table: pa.Table, schema: pa.Schema, path: str = "file") -> pa.Table:
    """`read.with_dir_state`: the state is computed once per file, not per row (a batch row per batch)."""
    files = table[path].combine_chunks().dictionary_encode()
    states = pa.array([dir_state(p) for p in files.dictionary.to_pylist()], pa.string())
    return _table(schema, table, dir_state=pa.chunked_array([states.take(files.indices)], pa.string()))


def _json_field(details: str | None, name: str) -> str | None:
    """Spark's `get_json_object(details, '$.name')`: a string as it is, any other value as JSON text."""
    try:
        value = json.loads(details)[name] if details is not None else None
    except (ValueError, TypeError, KeyError):
        return None
    return value if isinstance(value, str) or value is None else json.dumps(value, separators=(",", ":"))


def _nulls_first(value: Any) -> tuple[bool, Any]:
    return value is not None, value


def first_newer_version(findings: pa.Table) -> pa.Table:
    """`read.first_newer_version`: one `internal_record_newer_version` per topic, record type and version (the first
    by broker, file, position, offset; nulls first) and every other finding as it is."""
    rows = findings.to_pylist()
    first: dict[tuple, dict[str, Any]] = {}
    for row in sorted((r for r in rows if r["kind"] == NEWER_VERSION),
                      key=lambda r: tuple(_nulls_first(r[c]) for c in ("broker", "file", "position", "offset"))):
        first.setdefault((row["topic"], _json_field(row["details"], "record_type"),
                          _json_field(row["details"], "version")), row)
    kept = [r for r in rows if r["kind"] is not None and r["kind"] != NEWER_VERSION] + list(first.values())
    return pa.Table.from_pylist(kept, schema=S.FINDINGS)


def broker_identities(log_dirs: pa.Table) -> pa.Table:
    """`read.broker_identities`: per broker label, cluster_id and node_id of its first log dir, by path, with a
    meta.properties."""
    first: dict[str, dict[str, Any]] = {}
    for row in sorted(log_dirs.to_pylist(), key=lambda r: (r["file"] is None, r["log_dir"] or "")):
        first.setdefault(row["broker"], row)
    return pa.Table.from_pylist([{n: r[n] for n in ("broker", "cluster_id", "node_id")} for r in first.values()],
                                schema=S.INPUT_TABLES["brokers"])


def read_on_driver(listing: Listing, *, headers_only: bool, readers: Any = None) -> dict[str, pa.Table]:
    """Every input table of `read.read_tables`, as Arrow tables of `schemas.INPUT_TABLES`, parsed in this
    process. `readers` (a ReadersParam accumulator) receives the driver's reader."""
    facts = listing.facts
    segment_tasks = [{**t, "dir_state": dir_state(t["path"])} for t in listing.tasks if t["task_kind"] == "segment"]
    live = [t for t in segment_tasks if t["dir_state"] == "live"]
    with_state = pa.schema([*S.TASKS, pa.field("dir_state", pa.string())])
    seg = _run(functools.partial(segment_rows, check_records=not headers_only, readers=readers), segment_tasks,
               with_state, S.SEGMENT_ROWS)
    small = _run(small_file_rows, [t for t in listing.tasks if t["task_kind"] in ("broker", "partition")], S.TASKS,
                 S.SMALL_ROWS)
    internal = _run(internal_rows, [t for t in live if t["topic"] in S.INTERNAL_TOPICS and t["path"].endswith(".log")]
                    if facts.has_transaction_state or facts.has_consumer_offsets or facts.has_share_group_state
                    else [], with_state, S.INTERNAL_ROWS)
    remote = _run(event_rows, [t for t in live if t["topic"] == REMOTE_TOPIC and t["path"].endswith(".log")]
                  if facts.has_remote_log_metadata else [], with_state, S.REMOTE_EVENT_ROWS)
    metadata = _run(metadata_record_rows, [t for t in live if t["topic"] == METADATA_TOPIC and t["partition"] == 0]
                    if facts.has_cluster_metadata else [], with_state, S.METADATA_ROWS)

    schemas = S.INPUT_TABLES
    segment_facts = _kind(seg, "segment", log_only=True)
    broker_rows = _kind(small, "broker")
    tables = {
        "batches": _table(schemas["batches"], _kind(seg, "batch", log_only=True)),
        "segments": _table(schemas["segments"], segment_facts, {"base_offset": "segment_base_offset"}),
        "segment_recovery": _table(schemas["segment_recovery"], segment_facts, {"base_offset": "segment_base_offset"}),
        "txnindex": _table(schemas["txnindex"], _kind(small, "txnindex")),
        "snapshot_entries": _table(schemas["snapshot_entries"], _kind(small, "snapshot")),
        "leader_epochs": _table(schemas["leader_epochs"], _kind(small, "leader_epoch")),
        "segment_files": _table(schemas["segment_files"], _kind(small, "segment_file")),
        "brokers": _table(schemas["brokers"], broker_identities(broker_rows)),
        "partition_checkpoints": _table(schemas["partition_checkpoints"], _kind(small, "checkpoint")),
        "coordinator_records": _table(schemas["coordinator_records"], _kind(internal, "txn")),
        "offset_commits": _table(schemas["offset_commits"], _kind(internal, "commit")),
        "group_records": _table(schemas["group_records"], _kind(internal, "group")),
        "share_state_records": _table(schemas["share_state_records"], _kind(internal, "share")),
        "remote_log_events": _table(schemas["remote_log_events"], _kind(remote, "event")),
        "partition_topic_ids": _with_dir_state(_kind(small, "topic_id"), schemas["partition_topic_ids"]),
        "partition_dirs": pa.Table.from_pylist([{n: d.get(n) for n in schemas["partition_dirs"].names}
                                                for d in listing.dirs], schema=schemas["partition_dirs"]),
    }
    refused = {(d["broker"], d["log_dir"]): d["refused_dirs"] for d in listing.log_dirs}
    tables["log_dirs"] = _table(schemas["log_dirs"], broker_rows, {"meta_properties": "file"},
                                refused_dirs=[refused.get(k) for k in zip(broker_rows["broker"].to_pylist(),
                                                                          broker_rows["log_dir"].to_pylist(), strict=True)])
    cluster_ids = {b["broker"]: b["cluster_id"] for b in tables["brokers"].to_pylist()}
    records = _kind(metadata, "record")
    brokers = records["metadata_broker"].combine_chunks().dictionary_encode()  # per broker, not per record
    ids = pa.array([cluster_ids.get(b) or "" for b in brokers.dictionary.to_pylist()], pa.string())
    tables["metadata_records"] = _table(schemas["metadata_records"], records,
                                        cluster_id=pa.chunked_array([pc.fill_null(ids.take(brokers.indices), "")]))
    metadata_findings = _kind(metadata, "finding")
    tables["parser_findings"] = pa.concat_tables([
        _table(S.FINDINGS, _kind(seg, "finding")),
        _table(S.FINDINGS, _kind(small, "finding")),
        first_newer_version(_table(S.FINDINGS, _kind(internal, "finding"))),
        pa.Table.from_pylist([{n: f.get(n) for n in S.FINDINGS.names} for f in listing.findings], schema=S.FINDINGS),
        first_newer_version(_table(S.FINDINGS, metadata_findings, {"broker": "metadata_broker", "offset": "record_index"},
                                   topic=[METADATA_TOPIC] * metadata_findings.num_rows,
                                   partition=[0] * metadata_findings.num_rows)),
        first_newer_version(_table(S.FINDINGS, _kind(remote, "finding"))),
    ])
    for name in DIR_STATE_TABLES:
        if name != "partition_topic_ids":  # its dir_state is the file's, set above
            tables[name] = _with_dir_state(tables[name], schemas[name])
    return tables
