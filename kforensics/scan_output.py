"""A scan's output folder (OUT): its tables, its manifest, and the rules that keep an operator's files safe.

A scan writes OUT only when it is absent, empty, or the output of an earlier kforensics scan, recognised by the
manifest `_kforensics.json` the scan writes there first. The manifest says `"completed": false` until every
table is written; readers refuse an OUT whose scan did not complete. Replacing an earlier scan's output removes
only what that scan wrote (the files its manifest lists; for an interrupted scan, Spark's output files in the
table folders it named), and nothing at all when anything else would be in the way.

Also the one reader of a finished scan's tables and its summary. No Spark here: the CLI, the reports, the
server and the Spark job all use it. Paths may be local or any URI pyarrow.fs
understands.
"""

from __future__ import annotations

import fnmatch
import json
import os
import socket
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs

from kforensics import __version__
from kforensics.parsers.findings import is_problem
from kforensics.parsers.uris import filesystem, join_uri
from kforensics.spark.registry import output_models
from kforensics.times import iso, now_iso

MANIFEST = "_kforensics.json"
#: Spark's and the JVM's log of an embedded scan, when OUT is local.
SPARK_LOG = "_kforensics-spark.log"
MANIFEST_FORMAT = 1

#: The parse pass's tables a scan writes under OUT (spark/schemas.py WRITTEN_INPUTS says what they hold).
PARSE_PASS_TABLES = ("batches", "segments", "snapshots", "txnindex", "leader_epochs", "partition_checkpoints",
                     "coordinator_records", "offset_commits")
#: Parquet tables a scan writes under OUT, in the order they are listed to an operator: the parse pass's, the facts
#: tables (the models declared `output`, spark/sql/), the findings.
OUTPUT_TABLES = (*PARSE_PASS_TABLES, *(m.name for m in output_models() if m.name != "findings"), "findings")

#: What Spark writes into a table folder (for an interrupted scan, whose manifest lists no files yet).
_SPARK_OUTPUT = ("part-*", ".part-*.crc", "_SUCCESS", "._SUCCESS.crc", "_temporary", "_started_*", "_committed_*")


class OutputError(Exception):
    """OUT cannot be written or read as asked (a usage error: exit code 2). The message says why and what to do."""


@dataclass
class Manifest:
    """What `_kforensics.json` says about the scan that wrote OUT."""

    inputs: list[list[str]]
    options: dict[str, Any]
    tables: list[str]
    started_at: str = field(default_factory=now_iso)
    ended_at: str | None = None
    completed: bool = False
    files: list[str] = field(default_factory=list)  # every file the scan wrote, relative to OUT (when completed)
    spark_log: str | None = None
    version: str = __version__
    #: Where the scan's seconds went (`spark/scan_profile.py`): total seconds, Spark jobs and tasks, and the steps.
    profile: dict[str, Any] | None = None
    #: Per broker, the moment its disk was imaged, as the `image_times` table holds it (`image_times`).
    image_times: list[dict[str, Any]] = field(default_factory=list)
    #: Which segment reader the Python workers that parsed the segments ran: {"host", "python", "reader"} each.
    executor_readers: list[dict[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"tool": "kforensics", "format": MANIFEST_FORMAT, "version": self.version, "completed": self.completed,
                "started_at": self.started_at, "ended_at": self.ended_at, "host": socket.gethostname(),
                "inputs": self.inputs, "options": self.options, "tables": self.tables, "spark_log": self.spark_log,
                "files": self.files, "profile": self.profile,
                "executor_readers": self.executor_readers, "image_times": self.image_times}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Manifest:
        return cls(inputs=list(data.get("inputs") or []), options=dict(data.get("options") or {}),
                   tables=[str(t) for t in data.get("tables") or []], started_at=str(data.get("started_at")),
                   ended_at=data.get("ended_at"), completed=data.get("completed") is True,
                   files=[str(f) for f in data.get("files") or []], spark_log=data.get("spark_log"),
                   version=str(data.get("version")), profile=data.get("profile"),
                   executor_readers=list(data.get("executor_readers") or []),
                   image_times=list(data.get("image_times") or []))


def read_manifest(out: str) -> Manifest | None:
    """OUT's manifest; None when OUT has none. Raises OutputError when the file is there but is not ours."""
    fs, root = filesystem(out)
    path = join_uri(root, MANIFEST)
    if fs.get_file_info(path).type != pafs.FileType.File:
        return None
    try:
        with fs.open_input_stream(path) as stream:
            data = json.loads(stream.read(1 << 20).decode("utf-8"))
    except (OSError, ValueError) as exc:
        raise OutputError(f"{join_uri(out, MANIFEST)} cannot be read as a kforensics manifest ({exc}); kforensics "
                          "leaves this folder alone: choose another --out") from exc
    if not isinstance(data, dict) or data.get("tool") != "kforensics":
        raise OutputError(f"{join_uri(out, MANIFEST)} was not written by kforensics; kforensics leaves this folder "
                          "alone: choose another --out")
    return Manifest.from_dict(data)


def write_manifest(out: str, manifest: Manifest) -> None:
    """Write the manifest (atomically on a local filesystem: a crash leaves the old one or the new one)."""
    fs, root = filesystem(out)
    text = json.dumps(manifest.to_dict(), indent=1).encode("utf-8")
    final = join_uri(root, MANIFEST)
    if isinstance(fs, pafs.LocalFileSystem):
        partial = f"{final}.{os.getpid()}.partial"
        with open(partial, "wb") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(partial, final)
    else:
        with fs.open_output_stream(final) as stream:
            stream.write(text)


def _entries(fs: pafs.FileSystem, path: str, recursive: bool = False) -> list[pafs.FileInfo]:
    return fs.get_file_info(pafs.FileSelector(path, recursive=recursive))


def _relative(root: str, path: str) -> str:
    return path[len(root.rstrip("/")) + 1:]


def _spark_output(name: str) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in _SPARK_OUTPUT)


def prepare(out: str, *, inputs: list[tuple[str, str]], options: dict[str, Any], spark_log: bool = False,
            tables: tuple[str, ...] = OUTPUT_TABLES) -> Manifest:
    """Make OUT ready for a new scan, or raise OutputError without having touched anything.

    OUT must be absent, empty, or an earlier scan's output. The earlier scan's files are removed (only those),
    and the new scan's manifest is written with `completed: false` before any table."""
    fs, root = filesystem(out)
    info = fs.get_file_info(root)
    if info.type == pafs.FileType.File:
        raise OutputError(f"--out {out} is a file, not a folder: choose a folder that is absent or empty")
    doomed: list[str] = []  # files of the earlier scan, deleted only once everything is known to be in order
    folders: list[str] = []
    if info.type == pafs.FileType.Directory:
        present = {_relative(root, e.path): e for e in _entries(fs, root)}
        if present:
            earlier = read_manifest(out)
            if earlier is None:
                raise OutputError(
                    f"--out {out} is not empty and holds no {MANIFEST}, so it is not the output of a kforensics "
                    "scan. kforensics never deletes or overwrites what it did not write: choose an absent or empty "
                    "folder, or move its contents away.")
            doomed, folders = _earlier_files(fs, root, out, earlier, present)
            in_the_way = [name for name in (*tables, SPARK_LOG) if name in present
                          and join_uri(root, name) not in folders and join_uri(root, name) not in doomed]
            if in_the_way:
                raise OutputError(f"--out {out} holds {', '.join(in_the_way)}, which the earlier kforensics scan "
                                  "there did not write and this scan would write: move it away or choose another "
                                  "--out")
    for path in doomed:
        fs.delete_file(path)
    for folder in sorted(folders, key=len, reverse=True):
        if not _entries(fs, folder, recursive=True):
            fs.delete_dir(folder)
    fs.create_dir(root, recursive=True)
    manifest = Manifest(inputs=[[label, path] for label, path in inputs], options=options, tables=list(tables),
                        spark_log=SPARK_LOG if spark_log else None)
    write_manifest(out, manifest)
    return manifest


def _earlier_files(fs: pafs.FileSystem, root: str, out: str, earlier: Manifest,
                   present: dict[str, pafs.FileInfo]) -> tuple[list[str], list[str]]:
    """The files and folders an earlier scan wrote under OUT; OutputError when its table folders hold other files."""
    doomed = [join_uri(root, MANIFEST)]
    if earlier.spark_log and earlier.spark_log in present:
        doomed.append(join_uri(root, earlier.spark_log))
    written = set(earlier.files)
    folders: list[str] = []
    strangers: list[str] = []
    for table in earlier.tables:
        if table not in present:
            continue
        folder = join_uri(root, table)
        if present[table].type != pafs.FileType.Directory:
            strangers.append(table)
            continue
        folders.append(folder)
        for entry in _entries(fs, folder, recursive=True):
            rel = _relative(root, entry.path)
            if entry.type == pafs.FileType.Directory:
                folders.append(entry.path)
                continue
            ours = rel in written if earlier.completed else _spark_output(rel.split("/")[1]) or "/_temporary/" in rel
            (doomed if ours else strangers).append(entry.path if ours else rel)
    if strangers:
        shown = ", ".join(strangers[:5]) + (f" and {len(strangers) - 5} more" if len(strangers) > 5 else "")
        raise OutputError(f"--out {out} is an earlier kforensics scan's output, but {shown} was not written by it. "
                          "kforensics never deletes what it did not write: move those files away or choose another "
                          "--out")
    return doomed, folders


def _table_files(fs: pafs.FileSystem, root: str, table: str) -> list[pafs.FileInfo]:
    """The files of a table's folder under OUT's root (none if it was not written)."""
    folder = join_uri(root, table)
    if fs.get_file_info(folder).type != pafs.FileType.Directory:
        return []
    return [e for e in _entries(fs, folder, recursive=True) if e.type == pafs.FileType.File]


def complete(out: str, manifest: Manifest) -> Manifest:
    """Mark OUT complete: list every file the scan wrote and write the manifest with `completed: true`."""
    fs, root = filesystem(out)
    manifest.files = [_relative(root, f.path) for table in manifest.tables
                      for f in sorted(_table_files(fs, root, table), key=lambda f: f.path)]
    manifest.completed = True
    manifest.ended_at = now_iso()
    write_manifest(out, manifest)
    return manifest


def table_bytes(out: str, tables: Iterable[str]) -> int:
    """The bytes of the files of `tables` under OUT (a table not written counts nothing)."""
    fs, root = filesystem(out)
    return sum(f.size or 0 for table in tables for f in _table_files(fs, root, table))


def require_complete(out: str) -> Manifest:
    """The manifest of a completed scan under OUT; OutputError (exit 2) otherwise, saying what OUT is."""
    try:
        manifest = read_manifest(out)
    except OSError as exc:
        raise OutputError(f"cannot read {out}: {exc}") from exc
    if manifest is None:
        fs, root = filesystem(out)
        if fs.get_file_info(root).type != pafs.FileType.Directory:
            raise OutputError(f"{out} is not a folder")
        if fs.get_file_info(join_uri(root, "findings")).type == pafs.FileType.Directory:
            raise OutputError(f"{out} holds scan tables but no {MANIFEST}: it was written by a kforensics older "
                              "than the manifest, or copied in part. Scan again to get an output that can be trusted")
        raise OutputError(f"{out} holds no {MANIFEST}: it is not the output of a kforensics scan")
    if not manifest.completed:
        raise OutputError(f"the scan that wrote {out} (started {manifest.started_at}) did not complete: it was "
                          "interrupted or failed, so its tables may be partial. Scan again into the same --out to "
                          "replace it")
    return manifest


def is_scan_output(path: str) -> bool:
    """Does `path` look like a scan's OUT (a manifest, or the tables of a pre-manifest scan)?"""
    fs, root = filesystem(path)
    return any(fs.get_file_info(join_uri(root, name)).type != pafs.FileType.NotFound for name in (MANIFEST, "findings"))


def _known(table: str) -> None:
    if table not in OUTPUT_TABLES:
        raise ValueError(f"{table!r} is not a table a scan writes (scan_output.OUTPUT_TABLES)")


def read_table(out: str, table: str, columns: list[str] | None = None,
               filters: list[tuple[str, str, Any]] | None = None) -> list[dict[str, Any]]:
    """A table's rows (all columns, or `columns`; all rows, or those matching `filters`, pyarrow's
    [(column, op, value), ...] conjunction). A table the scan did not write (a folder that is absent, or holds no
    Parquet file, as Spark leaves an empty table) has no rows: this is the one reader of a scan's tables.

    Without filters, file by file with ParquetFile: pyarrow.parquet.read_table goes through pyarrow.dataset,
    whose import pulls in pandas (docs/benchmarks/cli-and-parsers.md); with filters, through it (row-group pruning)."""
    import pyarrow.parquet as pq

    _known(table)
    fs, root = filesystem(out)
    folder = join_uri(root, table)
    if fs.get_file_info(folder).type != pafs.FileType.Directory:
        return []
    files = sorted(e.path for e in _entries(fs, folder)
                   if e.base_name.endswith(".parquet") and not e.base_name.startswith(("_", ".")))
    if not files:
        return []
    if filters:
        return pq.read_table(files, filesystem=fs, columns=columns, filters=filters).to_pylist()
    rows: list[dict[str, Any]] = []
    for path in files:
        with fs.open_input_file(path) as fh:
            rows += pq.ParquetFile(fh).read(columns=columns).to_pylist()
    return rows


def table_batches(out: str, table: str, columns: list[str]) -> Iterator[pa.RecordBatch]:
    """A table's `columns`, record batch by record batch (nothing when the table is absent or lacks a column)."""
    import pyarrow.parquet as pq

    _known(table)
    fs, root = filesystem(out)
    folder = join_uri(root, table)
    if fs.get_file_info(folder).type != pafs.FileType.Directory:
        return
    for entry in sorted(_entries(fs, folder), key=lambda e: e.path):
        if entry.base_name.endswith(".parquet") and not entry.base_name.startswith(("_", ".")):
            with fs.open_input_file(entry.path) as fh:
                parquet = pq.ParquetFile(fh)
                if all(c in parquet.schema_arrow.names for c in columns):
                    yield from parquet.iter_batches(columns=columns)


@dataclass
class ScanSummary:
    """What a scan tells at its end, computed once from the tables it wrote (`summarize`)."""

    out: str
    brokers: list[str] = field(default_factory=list)
    partitions: int = 0  # replicas: (broker, topic, partition)
    topic_partitions: int = 0
    segments: int = 0
    batches: int = 0
    records: int = 0
    bytes: int = 0
    producers: int = 0
    transactions: dict[str, int] = field(default_factory=dict)  # outcome -> count
    findings: list[tuple[str, str, int]] = field(default_factory=list)  # (kind, severity, count)
    #: Partitions a coordinator transaction or a group commit names that are not in the input (not judged).
    not_in_input: list[str] = field(default_factory=list)
    #: Kafka's special partition dirs read beside the live ones: "delete", "future", "stray" -> how many.
    special_dirs: dict[str, int] = field(default_factory=dict)
    #: Broker labels of inputs read as kafka-dump-log text (what such text lacks is not checked).
    dump_inputs: list[str] = field(default_factory=list)
    #: Partitions whose copy lacks offsets they held (`replicas.complete` false), as `topic-partition on broker`:
    #: what needs those offsets is not judged (issue 47).
    incomplete: list[str] = field(default_factory=list)
    #: Per broker, the moment its disk was imaged (`image_times`): broker, image_time (epoch ms), source, clock.
    image_times: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def has_problems(self) -> bool:
        return any(is_problem(severity) for _, severity, _ in self.findings)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (the server's answer, spark-submit's output)."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ScanSummary:
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        known["findings"] = [tuple(f) for f in known.get("findings") or []]
        return cls(**known)


def summarize(out: str) -> ScanSummary:
    """Small aggregates over the tables under OUT, streamed a few columns at a time (no Spark job: cheaper on a small
    scan, docs/benchmarks/cli-and-parsers.md)."""
    summary = ScanSummary(out=out)
    replicas: set[tuple] = set()
    special: set[tuple] = set()
    for batch in table_batches(out, "segments", ["broker", "topic", "partition", "dir_state", "batch_count",
                                                 "record_count", "size"]):
        for broker, topic, partition, state in _rows(batch.select(["broker", "topic", "partition", "dir_state"])):
            (replicas if state == "live" else special).add((broker, topic, partition, state))
        summary.segments += batch.num_rows
        summary.batches += _sum(batch, "batch_count")
        summary.records += _sum(batch, "record_count")
        summary.bytes += _sum(batch, "size")
    summary.brokers = sorted({broker for broker, *_ in replicas | special})
    summary.partitions = len(replicas)
    summary.topic_partitions = len({(topic, partition) for _, topic, partition, _ in replicas})
    summary.special_dirs = dict(sorted(Counter(state for *_, state in special).items()))
    producers: set[tuple] = set()
    for batch in table_batches(out, "producers", ["broker", "topic", "partition", "producer_id"]):
        producers.update(_rows(batch))
    summary.producers = len(producers)
    outcomes: Counter[str] = Counter()
    for batch in table_batches(out, "transactions", ["outcome"]):
        outcomes.update(batch.column(0).to_pylist())
    summary.transactions = dict(sorted(outcomes.items()))
    kinds: Counter[tuple[str, str]] = Counter()
    for batch in table_batches(out, "findings", ["kind", "severity"]):
        kinds.update(_rows(batch))
    summary.findings = [(kind, severity, n) for (kind, severity), n in sorted(kinds.items())]
    summary.not_in_input = not_in_input(out)
    summary.incomplete = incomplete(out)
    summary.image_times = image_times(out)
    return summary


#: The columns of `image_times` the summary and the manifest give.
IMAGE_TIME_COLUMNS = ["broker", "image_time", "source", "file", "clock", "set_aside_time", "set_aside_source"]


def image_times(out: str) -> list[dict[str, Any]]:
    """Per broker, the moment its disk was imaged, as the scan's `image_times` table holds it (the summary's and the
    manifest's `image_times`), with `image_time_iso`."""
    rows = []
    for batch in table_batches(out, "image_times", IMAGE_TIME_COLUMNS):
        rows += [dict(zip(IMAGE_TIME_COLUMNS, row, strict=True)) for row in _rows(batch)]
    return [{**r, "image_time_iso": iso(r["image_time"]) if r["image_time"] is not None else None}
            for r in sorted(rows, key=lambda r: r["broker"])]


def incomplete(out: str) -> list[str]:
    """The partitions whose copy lacks offsets they held (`replicas.complete` false): `topic-partition on broker`."""
    found: set[str] = set()
    for batch in table_batches(out, "replicas", ["broker", "topic", "partition", "complete"]):
        found.update(f"{topic}-{partition} on {broker}" for broker, topic, partition, complete in _rows(batch)
                     if complete is False)
    return sorted(found)


def not_in_input(out: str) -> list[str]:
    """Partitions a coordinator transaction or a consumer group names that the scan's input did not hold."""
    named: set[str] = set()
    for batch in table_batches(out, "coordinator_transactions", ["partitions_not_in_input"]):
        named.update(p for ps in batch.column(0).to_pylist() for p in ps or ())
    for batch in table_batches(out, "consumer_offsets", ["topic", "partition", "in_input"]):
        named.update(f"{topic}-{partition}" for topic, partition, known in _rows(batch) if known is False)
    return sorted(named)


def _rows(batch: pa.RecordBatch) -> Iterator[tuple]:
    return zip(*(column.to_pylist() for column in batch.columns), strict=True)


def _sum(batch: pa.RecordBatch, column: str) -> int:
    return sum(v for v in batch.column(column).to_pylist() if v is not None)
