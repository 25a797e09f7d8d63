"""The engine of `kforensics dump`: each file type's dumper walks its parser and hands the entities to a renderer
(:mod:`kforensics.dump_out`); the run's findings, epilogue and exit code. Knows nothing of click; never imports
pyspark.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from kforensics.dump_out import Decoded, Output, Renderer, TextOut, log_sink
from kforensics.parsers import log_dir
from kforensics.parsers.findings import Finding, is_problem
from kforensics.render import shown

if TYPE_CHECKING:
    from kforensics.parsers.index_check import BatchBounds
    from kforensics.parsers.record_batch import Record, RecordBatch

T = TypeVar("T")

FILE_TYPES = tuple(t.name for t in log_dir.FILE_TYPES)  # --type: the registry's names
DECODERS = ("offsets", "transaction_log", "cluster_metadata", "remote_log_metadata", "share_group_state")

EXIT_OK, EXIT_FINDINGS, EXIT_UNREADABLE = 0, 1, 2


@dataclass
class DumpOptions:
    print_data_log: bool = False
    deep_iteration: bool = False
    index_sanity_check: bool = False
    verify_index_only: bool = False
    max_bytes: int | None = None
    skip_record_metadata: bool = False
    decoder: str | None = None
    pids: tuple[int, ...] = ()
    producer_epoch: int | None = None
    leader_epoch: int | None = None
    offsets: tuple[int | None, int | None] = (None, None)


@dataclass
class DumpState:
    """What the run found so far: drives the trailing stderr report and the exit code."""

    findings: list[Finding] = field(default_factory=list)
    unreadable: bool = False
    index_mismatches: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    non_consecutive: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    #: (topic, record type, version) already reported as internal_record_newer_version
    newer_versions: set[tuple[str, str, int]] = field(default_factory=set)

    @property
    def exit_code(self) -> int:
        if self.unreadable:
            return EXIT_UNREADABLE
        if any(is_problem(f.effective_severity) for f in self.findings):
            return EXIT_FINDINGS
        return EXIT_OK


def detect_type(path: Path) -> str | None:
    return log_dir.detect_file_type(path)


def run_dump(files: Iterable[Path], file_type: str | None, opts: DumpOptions, out: Output) -> DumpState:
    """Dump every file (a partition directory: its files in offset order) to `out`, then, as text, kafka-dump-log's
    stderr epilogue. A reader that goes away (`| head`) ends the run quietly, as a Unix tool does."""
    state = DumpState()
    try:
        for path in files:
            if path.is_dir():
                dump_dir(path, file_type, opts, out, state)
            else:
                dump_file(path, file_type, opts, out, state)
        if isinstance(out, TextOut):
            _print_trailing_reports(state, out)
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return state


def partition_dir_files(path: Path) -> tuple[list[Path], list[Finding]] | None:
    """A partition directory's files in the order an operator reads them: each segment's .log, then its
    .index, .timeindex and .txnindex, by base offset; then producer snapshots, KRaft metadata snapshots,
    leader-epoch-checkpoint, partition.metadata and quorum-state. None when `path` is not a partition directory
    (not named `<topic>-<partition>`, or holding partition directories or broker files: a broker log dir)."""
    from kforensics.parsers.log_dir import parse_partition_dir_name, scan_partition_dir

    parsed = parse_partition_dir_name(path.name)
    if parsed is None or _is_log_dir(path):
        return None
    part, findings = scan_partition_dir(str(path), *parsed)
    ordered = [f for seg in part.segments for f in (seg.log, seg.index, seg.timeindex, seg.txnindex) if f]
    ordered += [*part.snapshots, *part.metadata_snapshots]
    ordered += [f for f in (part.leader_epoch_checkpoint, part.partition_metadata, part.quorum_state) if f]
    return [Path(f) for f in ordered], findings


def _is_log_dir(path: Path) -> bool:
    """Does `path` hold what a broker log dir holds (partition directories, meta.properties, the checkpoints)?"""
    from kforensics.parsers.log_dir import BROKER_FILES, parse_partition_dir_name

    with os.scandir(path) as entries:
        return any((e.is_dir() and parse_partition_dir_name(e.name)) or e.name in BROKER_FILES for e in entries)


def dump_dir(path: Path, file_type: str | None, opts: DumpOptions, out: Output, state: DumpState) -> None:
    """Dump a partition directory's files in offset order; any other directory is named for what it is."""
    try:
        listed = partition_dir_files(path)
        log_dir = listed is None and _is_log_dir(path)
    except OSError as exc:
        state.unreadable = True
        _report(Finding("unreadable_file", str(path), None, f"cannot list {path}: {exc.strerror or exc}"), out, state)
        return
    if listed is None:
        what = ("a broker log dir, not a partition directory: dump one of its <topic>-<partition> directories or "
                "files, or scan it with `kforensics scan`" if log_dir else
                "a directory, not a partition directory (<topic>-<partition>) or a file")
        state.unreadable = True
        _report(Finding("unreadable_file", str(path), None, f"{path} is {what}"), out, state)
        return
    files, findings = listed
    for finding in findings:
        _report(finding, out, state)
    for file in files:
        dump_file(file, file_type, opts, out, state)


def _what_it_is(path: Path) -> str:
    """What a path that is not a readable regular file is, in a few words."""
    from kforensics.parsers.log_dir import local_entry

    entry = local_entry(path)
    if entry.kind == "file":
        return "not readable (permission denied)"
    return entry.what if entry.kind in ("missing", "unreadable") else f"{entry.what}, not a regular file"


def dump_file(path: Path, file_type: str | None, opts: DumpOptions, out: Output, state: DumpState) -> None:
    """Dump one file of any known type; unreadable or unknown files are reported, never raised."""
    out.line(f"Dumping {path}")
    kind = file_type or detect_type(path)
    if not path.is_file() or not os.access(path, os.R_OK):
        state.unreadable = True
        _report(Finding("unreadable_file", str(path), None, f"cannot read {path}: {_what_it_is(path)}"), out, state)
        return
    if kind is None:
        state.unreadable = True
        _report(Finding("unknown_file", str(path), None,
                        f"do not know how to dump {path.name}; pass --type", severity="error"), out, state)
        return
    try:
        DUMPERS[kind](path, opts, out, state)
    except BrokenPipeError:
        raise
    except OSError as exc:
        state.unreadable = True
        _report(Finding("unreadable_file", str(path), None, f"cannot read {path}: {exc.strerror or exc}"), out, state)


def _report(finding: Finding, out: Renderer, state: DumpState) -> None:
    state.findings.append(finding)
    out.finding(finding)


def _emit_all(items: Iterable[T | Finding], emit: Callable[[T], None], out: Output, state: DumpState) -> int:
    count = 0
    for item in items:
        if isinstance(item, Finding):
            _report(item, out, state)
        else:
            emit(item)
            count += 1
    return count


# --- record batches: *.log and KRaft metadata snapshots -------------------------------------------

def _batch_selected(b: RecordBatch, opts: DumpOptions) -> bool:
    if opts.pids and b.producer_id not in opts.pids:
        return False
    if opts.producer_epoch is not None and b.producer_epoch != opts.producer_epoch:
        return False
    if opts.leader_epoch is not None and b.partition_leader_epoch != opts.leader_epoch:
        return False
    lo, hi = opts.offsets
    if lo is not None and b.last_offset < lo:
        return False
    return not (hi is not None and b.base_offset > hi)


def _record_selected(r: Record, opts: DumpOptions) -> bool:
    lo, hi = opts.offsets
    return (lo is None or r.offset >= lo) and (hi is None or r.offset <= hi)


def dump_log(path: Path, opts: DumpOptions, out: Output, state: DumpState) -> None:
    name = path.name
    if name.endswith(".log"):
        out.line(f"Log starting offset: {_base_offset_from_name(name)}")
    elif name == "bootstrap.checkpoint":
        out.line("KRaft bootstrap snapshot")
    elif m := log_dir.FILE_TYPE["metadata_snapshot"].names.match(name):
        out.line(f"Snapshot end offset: {int(m.group(1))}, epoch: {int(m.group(2))}")
    size, valid_bytes = _dump_log_batches(path, opts, out, state)
    trailing = size - valid_bytes
    if trailing > 0 and opts.max_bytes is None:
        out.line(f"Found {trailing} invalid bytes at the end of {name}")


def _dump_log_batches(path: Path, opts: DumpOptions, out: Output, state: DumpState) -> tuple[int, int]:
    """The batch and record lines of one segment (the one traversal: selection by --pid, --producer-epoch,
    --leader-epoch and --offsets, the record offsets' bookkeeping for the epilogue), written by the compiled
    lines or by `out` (dump_out.log_sink): (file size, end of the last whole batch)."""
    from kforensics.parsers.record_batch import open_log, record_problem_finding

    decode = _decoder(opts.decoder, as_json=out.structured) if opts.print_data_log else None
    sink = log_sink(out, str(path), print_data=opts.print_data_log,
                    python_per_record=decode is not None or opts.offsets != (None, None))
    resolved = str(path.resolve())
    last_record_offset = -1
    valid_bytes = 0
    try:
        with open_log(path) as log:
            for item in log.batches(max_bytes=opts.max_bytes):
                if isinstance(item, Finding):
                    _report(item, sink, state)
                    continue
                batch = item
                valid_bytes = batch.position + batch.size
                selected = _batch_selected(batch, opts)
                if selected:
                    sink.batch(batch, str(path))
                if not opts.deep_iteration:
                    continue
                if selected and sink.formats_records(batch):  # every record line in one call
                    section = log.records_section(batch)
                    if isinstance(section, Finding):
                        _report(section, sink, state)
                        continue
                    problem, last_record_offset, gaps = sink.record_lines(batch, section, last_record_offset)
                    if gaps:
                        state.non_consecutive.setdefault(resolved, []).extend(gaps)
                    if problem is not None:
                        _report(record_problem_finding(log.path, batch, problem), sink, state)
                    continue
                for rec in log.records(batch):
                    if isinstance(rec, Finding):
                        _report(rec, sink, state)
                        continue
                    if last_record_offset != -1 and rec.offset != last_record_offset + 1:
                        state.non_consecutive.setdefault(resolved, []).append((last_record_offset, rec.offset))
                    last_record_offset = rec.offset
                    if selected and _record_selected(rec, opts):
                        decoded = None
                        if decode is not None and not batch.is_control:
                            decoded, findings = decode(rec, batch, str(path), state)
                            for finding in findings:
                                _report(finding, sink, state)
                        sink.record(batch, rec, print_data=opts.print_data_log, decoded=decoded)
            return log.size, valid_bytes
    finally:
        sink.close()


def _base_offset_from_name(name: str) -> int | str:
    head = name.split(".")[0]
    return int(head) if head.isdigit() else head


#: decoder name -> the internal topic its records belong to
DECODER_TOPICS = {"offsets": "__consumer_offsets", "transaction_log": "__transaction_state",
                  "cluster_metadata": "__cluster_metadata", "remote_log_metadata": "__remote_log_metadata",
                  "share_group_state": "__share_group_state"}


#: A --*-decoder: (record, its batch, file, state) -> (what to print, findings)
RecordDecoder = Callable[["Record", "RecordBatch", str, "DumpState"], tuple[Decoded, list[Finding]]]


def _decoder(name: str | None, *, as_json: bool = False) -> RecordDecoder | None:
    """The --*-decoder function: (record, batch, file, state) -> (what to print, findings). Each record is decoded
    once and rendered either as (key text, payload text), as kafka-dump-log prints them, or with --json as the
    object. A value that does not decode gives `internal_record_undecodable`; a version newer than the tables
    `internal_record_newer_version` (once per topic, record type and version in the run)."""
    if name is None:
        return None
    from kforensics.parsers import internal_topics as it

    topic = DECODER_TOPICS[name]

    def findings_of(rec: Record, batch: RecordBatch, file: str, state: DumpState, error: str | None,
                    newer: tuple[str, int, int, str] | None, fields_read: bool = True) -> list[Finding]:
        if error is not None:
            return [Finding("internal_record_undecodable", file, batch.position,
                            f"record at offset {rec.offset} could not be decoded: {error}",
                            {"offset": rec.offset, "error": error})]
        if newer is not None:
            finding = it.NewerVersions(state.newer_versions).finding(topic, file, batch.position, rec.offset, *newer,
                                                                     fields_read=fields_read)
            return [] if finding is None else [finding]
        return []

    if name == "remote_log_metadata":
        from kforensics.parsers import remote_log_metadata as rlm

        def decode_remote(rec: Record, batch: RecordBatch, file: str, state: DumpState) -> tuple[Decoded, list[Finding]]:
            decoded = rlm.decode_remote_log_metadata(rec.key, rec.value)
            newer = ((decoded["type"], decoded["apiKey"], decoded["version"], decoded["knownVersions"])
                     if decoded.get("newer") else None)
            found = findings_of(rec, batch, file, state, decoded.get("error"), newer)
            return (decoded if as_json else rlm.remote_log_metadata_text(decoded, rec.offset)), found

        return decode_remote
    if name == "cluster_metadata":
        from kforensics.parsers.cluster_metadata import MessageDecodeError, decode_metadata_record

        def decode_metadata(rec: Record, batch: RecordBatch, file: str, state: DumpState) \
                -> tuple[Decoded, list[Finding]]:
            try:
                r = decode_metadata_record(rec.value)
            except MessageDecodeError as exc:
                error = str(exc)
                shown: Decoded = {"error": error} if as_json else (None, f"Error at {rec.offset}, skipping. {error}")
                return shown, findings_of(rec, batch, file, state, error, None)
            newer = (r.type_name, r.api_key, r.version, r.known_versions) if r.newer else None
            found = findings_of(rec, batch, file, state, None, newer, r.fields_read)
            return (r.to_json() if as_json else (None, it._json(r.to_json()))), found

        return decode_metadata

    def decode_coordinator(rec: Record, batch: RecordBatch, file: str, state: DumpState) \
            -> tuple[Decoded, list[Finding]]:
        try:
            r = it.decode_coordinator_record(topic, rec.key, rec.value)
        except it.MessageDecodeError as exc:
            error = str(exc)
            shown: Decoded = {"error": error} if as_json else it.coordinator_error_text(rec.key, rec.offset, exc)
            return shown, findings_of(rec, batch, file, state, error, None)
        newer = None
        if r.newer:
            newer = ((r.value_name or f"record type {r.record_type}"), r.record_type,
                     r.record_type if r.key_name is None else r.value_version, r.known_versions)
        found = findings_of(rec, batch, file, state, None, newer)
        if not as_json:
            return it.coordinator_text(r, rec.offset), found
        form = it.coordinator_dump_form(r)
        if form is None:
            return {"error": f"unknown record type {r.record_type}"}, found
        key, payload = form
        shown = {"record_type": it.record_type_name(r.key_name), "key": key, "value": payload}
        if payload is not None and "transactionStatus" in payload["data"]:  # the id stays a number in JSON
            shown["state"] = it.transaction_state_name(payload["data"]["transactionStatus"])
        if r.layout:  # read as an older layout of its version (Kafka 4.0's share records)
            shown["layout"] = r.layout
        return shown, found

    return decode_coordinator


# --- index files -----------------------------------------------------------------------------------

def _sibling_log_bounds(path: Path, out: Output, state: DumpState) -> list[BatchBounds] | None:
    """Batch bounds of the .log beside an index file (None when there is no such log)."""
    from kforensics.parsers.index_check import BatchBounds
    from kforensics.parsers.record_batch import open_log

    log_path = path.with_name(path.name.split(".")[0] + ".log")
    if not log_path.is_file():
        return None
    bounds = []
    with open_log(log_path) as log:
        for b in log.batches():
            if not isinstance(b, Finding):
                bounds.append(BatchBounds(b.position, b.base_offset, b.last_offset, b.max_timestamp))
    return bounds


def _index_dumper(kind: str) -> Callable[[Path, DumpOptions, Output, DumpState], None]:
    """The dumper of `.index` or `.timeindex`: read the entries, check them against the log, print them."""

    def dump_index(path: Path, opts: DumpOptions, out: Output, state: DumpState) -> None:
        from kforensics.parsers.index_check import check_index_file

        bounds = None if opts.index_sanity_check else _sibling_log_bounds(path, out, state)
        checked = check_index_file(str(path), kind, bounds)
        for f in checked.read_findings:
            _report(f, out, state)
        if not checked.entries:
            out.line(f"{path} is empty.")
            return
        if opts.index_sanity_check:
            if not checked.read_findings:
                out.line(f"{path} passed sanity check.")
            return
        for f in checked.log_findings:
            if f.kind == "index_offset_mismatch":
                state.index_mismatches.setdefault(str(path.resolve()), []).append(
                    (f.details.get("index_offset"), f.details.get("log_offset")))
                state.findings.append(f)
                out.index_mismatch(f)
            else:
                _report(f, out, state)
        if not opts.verify_index_only:
            emit = out.index_entry if kind == "index" else out.time_index_entry
            for e in checked.entries:
                emit(e)

    return dump_index


# --- small files -----------------------------------------------------------------------------------

def dump_txn_index(path: Path, opts: DumpOptions, out: Output, state: DumpState) -> None:
    from kforensics.parsers.txn_index import iter_txn_index

    _emit_all((t for t in iter_txn_index(path) if isinstance(t, Finding) or not opts.pids
               or t.producer_id in opts.pids), out.aborted_txn, out, state)


def dump_producer_snapshot(path: Path, opts: DumpOptions, out: Output, state: DumpState) -> None:
    from kforensics.parsers.producer_snapshot import read_producer_snapshot

    snapshot, findings = read_producer_snapshot(path)
    for f in findings:
        _report(f, out, state)
    if snapshot is not None:
        for entry in snapshot.entries:
            if not opts.pids or entry.producer_id in opts.pids:
                out.producer_state(entry)


def dump_leader_epoch_checkpoint(path: Path, opts: DumpOptions, out: Output, state: DumpState) -> None:
    from kforensics.parsers.checkpoints import read_leader_epoch_checkpoint

    entries, findings = read_leader_epoch_checkpoint(path)
    _emit_all([*findings, *entries], out.leader_epoch, out, state)


def dump_offset_checkpoint(path: Path, opts: DumpOptions, out: Output, state: DumpState) -> None:
    from kforensics.parsers.checkpoints import read_offset_checkpoint

    entries, findings = read_offset_checkpoint(path)
    _emit_all([*findings, *entries], out.checkpoint_entry, out, state)


def _properties_dumper(reader_name: str, kind: str) -> Callable[[Path, DumpOptions, Output, DumpState], None]:
    def dump_props(path: Path, opts: DumpOptions, out: Output, state: DumpState) -> None:
        from kforensics.parsers import checkpoints

        props, findings = getattr(checkpoints, reader_name)(path)
        for f in findings:
            _report(f, out, state)
        if props:
            out.properties(kind, dict(props))

    return dump_props


DUMPERS: dict[str, Callable[[Path, DumpOptions, Output, DumpState], None]] = {
    "log": dump_log,
    "metadata_snapshot": dump_log,
    "index": _index_dumper("index"),
    "timeindex": _index_dumper("timeindex"),
    "txnindex": dump_txn_index,
    "snapshot": dump_producer_snapshot,
    "leader_epoch_checkpoint": dump_leader_epoch_checkpoint,
    "offset_checkpoint": dump_offset_checkpoint,
    "partition_metadata": _properties_dumper("read_partition_metadata", "partition_metadata"),
    "meta_properties": _properties_dumper("read_meta_properties", "meta_properties"),
    "quorum_state": _properties_dumper("read_quorum_state", "quorum_state"),
    "clean_shutdown": _properties_dumper("read_clean_shutdown", "clean_shutdown"),
}


def _print_trailing_reports(state: DumpState, out: TextOut) -> None:
    """kafka-dump-log's stderr epilogue (its lists are built by prepending, so newest first)."""
    err = out.err
    for file_name, pairs in state.index_mismatches.items():
        err.write(f"Mismatches in :{shown(file_name)}\n")
        for index_offset, log_offset in reversed(pairs):
            err.write(f"  Index offset: {index_offset}, log offset: {log_offset}\n")
    for file_name, pairs in state.non_consecutive.items():
        err.write(f"Non-consecutive offsets in {shown(file_name)}\n")
        for first, second in reversed(pairs):
            err.write(f"  {first} is followed by {second}\n")
