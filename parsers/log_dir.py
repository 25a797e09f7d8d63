"""The directory model: broker log dir -> topic-partition dirs -> segments and their companion files.

Only file names are read here, through pyarrow.fs (local paths and URIs alike); nothing is opened for
writing, and odd files become `unknown_file` findings instead of errors. `kforensics dump DIR` and the
scan's listing share it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

import pyarrow.fs as pafs

from kforensics.parsers.findings import Finding

SEGMENT_FILE = re.compile(r"^(\d{20})\.(log|index|timeindex|txnindex|snapshot)$")
TRANSIENT_FILE = re.compile(r"^(\d{20})\.(log|index|timeindex|txnindex|snapshot)\.(deleted|cleaned|swap)$")
METADATA_SNAPSHOT = re.compile(r"^(\d{20})-(\d{10})\.checkpoint$")
# `<topic>-<partition>` or `<topic>-<partition>.<uuid hex>-delete|-future|-stray` (UnifiedLog's DeleteDirSuffix,
# FutureDirSuffix and, since Kafka 3.7, StrayDirSuffix)
PARTITION_DIR = re.compile(r"^(?P<topic>.+)-(?P<partition>\d+)(?:\.(?P<uuid>[0-9a-fA-F]{32})-(?P<kind>delete|future|stray))?$")

OFFSET_CHECKPOINTS = ("replication-offset-checkpoint", "recovery-point-offset-checkpoint",
                      "log-start-offset-checkpoint", "cleaner-offset-checkpoint")
BROKER_FILES = (*OFFSET_CHECKPOINTS, "meta.properties", ".kafka_cleanshutdown", "bootstrap.checkpoint", ".lock")


def detect_file_type(path: str | os.PathLike[str]) -> str | None:
    """The kind of broker file a name denotes, or None."""
    name = os.path.basename(os.fspath(path))
    m = SEGMENT_FILE.match(name) or TRANSIENT_FILE.match(name)
    if m:
        return m.group(2)
    if METADATA_SNAPSHOT.match(name) or name == "bootstrap.checkpoint":
        return "metadata_snapshot"
    simple = {
        "leader-epoch-checkpoint": "leader_epoch_checkpoint", "partition.metadata": "partition_metadata",
        "meta.properties": "meta_properties", "quorum-state": "quorum_state",
        ".kafka_cleanshutdown": "clean_shutdown",
    }
    if name in simple:
        return simple[name]
    if name in OFFSET_CHECKPOINTS:
        return "offset_checkpoint"
    for suffix in (".log", ".index", ".timeindex", ".txnindex", ".snapshot"):
        if name.endswith(suffix):
            return suffix[1:]
    return None


def parse_partition_dir_name(name: str) -> tuple[str, int, str] | None:
    """(topic, partition, kind) with kind live|delete|future|stray; the partition is after the LAST '-'."""
    m = PARTITION_DIR.match(name)
    if not m:
        return None
    return m.group("topic"), int(m.group("partition")), m.group("kind") or "live"


@dataclass
class Segment:
    base_offset: int
    log: str | None = None
    index: str | None = None
    timeindex: str | None = None
    txnindex: str | None = None
    snapshot: str | None = None  # a producer snapshot named with the same offset


@dataclass
class PartitionDir:
    path: str
    topic: str
    partition: int
    kind: str = "live"
    segments: list[Segment] = field(default_factory=list)
    snapshots: list[str] = field(default_factory=list)
    leader_epoch_checkpoint: str | None = None
    partition_metadata: str | None = None
    metadata_snapshots: list[str] = field(default_factory=list)
    quorum_state: str | None = None
    other_files: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.topic}-{self.partition}"


@dataclass
class LogDir:
    path: str
    meta_properties: str | None = None
    clean_shutdown: str | None = None
    checkpoints: dict[str, str] = field(default_factory=dict)
    partitions: list[PartitionDir] = field(default_factory=list)
    other_files: list[str] = field(default_factory=list)


def filesystem(uri: str | os.PathLike[str]) -> tuple[pafs.FileSystem, str]:
    """The filesystem and path of a local path or a URI pyarrow.fs understands (file://, s3://, hdfs://)."""
    uri = os.fspath(uri)
    if "://" in uri:
        return pafs.FileSystem.from_uri(uri)
    return pafs.LocalFileSystem(), os.path.abspath(uri)


def _join(base: str, name: str) -> str:
    return base.rstrip("/") + "/" + name


def _listing(fs: pafs.FileSystem, path: str) -> list[pafs.FileInfo]:
    return sorted(fs.get_file_info(pafs.FileSelector(path)), key=lambda e: e.base_name)


def scan_partition_dir(path: str, topic: str, partition: int, kind: str = "live", *,
                       fs: pafs.FileSystem | None = None, uri: str | None = None) -> tuple[PartitionDir, list[Finding]]:
    """List one `<topic>-<partition>` dir: its segments by base offset and its other files. `path` is on `fs`
    (local by default); files are named by `uri` (the dir as the user gave it) joined with their names."""
    fs = fs or pafs.LocalFileSystem()
    base = uri or path
    part = PartitionDir(base, topic, partition, kind)
    findings: list[Finding] = []
    segments: dict[int, Segment] = {}
    for entry in _listing(fs, path):
        name = entry.base_name
        full = _join(base, name)
        if entry.type != pafs.FileType.File:
            part.other_files.append(full)
            continue
        m = SEGMENT_FILE.match(name)
        if m:
            offset, suffix = int(m.group(1)), m.group(2)
            if suffix == "snapshot":
                part.snapshots.append(full)
            seg = segments.setdefault(offset, Segment(offset))
            setattr(seg, suffix, full)
        elif METADATA_SNAPSHOT.match(name):
            part.metadata_snapshots.append(full)
        elif name == "leader-epoch-checkpoint":
            part.leader_epoch_checkpoint = full
        elif name == "partition.metadata":
            part.partition_metadata = full
        elif name == "quorum-state":
            part.quorum_state = full
        else:
            part.other_files.append(full)
            if not TRANSIENT_FILE.match(name) and not name.endswith((".tmp", ".deleted", ".cleaned", ".swap")):
                findings.append(Finding("unknown_file", full, None, f"{name} is not a file a broker writes here"))
    # A snapshot-only offset (no .log) is not a segment.
    part.segments = [s for _, s in sorted(segments.items()) if s.log or s.index or s.timeindex or s.txnindex]
    return part, findings


def scan_log_dir(uri: str | os.PathLike[str]) -> tuple[LogDir, list[Finding]]:
    """List one broker log dir (the parent of `<topic>-<partition>` dirs), local or any URI pyarrow.fs
    understands: its broker files, its partition dirs and their files, and findings for what is not a broker's.
    Raises FileNotFoundError when it is not a readable directory."""
    uri = os.fspath(uri)
    fs, path = filesystem(uri)
    base = uri.rstrip("/") if "://" in uri else path
    if fs.get_file_info(path).type != pafs.FileType.Directory:
        raise FileNotFoundError(f"{uri} is not a readable directory")
    log_dir = LogDir(base)
    findings: list[Finding] = []
    for entry in _listing(fs, path):
        name = entry.base_name
        full = _join(base, name)
        if entry.type == pafs.FileType.Directory:
            parsed = parse_partition_dir_name(name)
            if parsed is None:
                log_dir.other_files.append(full)
                findings.append(Finding("unknown_file", full, None, f"{name} is not a topic-partition directory"))
                continue
            part, part_findings = scan_partition_dir(entry.path, *parsed, fs=fs, uri=full)
            log_dir.partitions.append(part)
            findings.extend(part_findings)
        elif name == "meta.properties":
            log_dir.meta_properties = full
        elif name == ".kafka_cleanshutdown":
            log_dir.clean_shutdown = full
        elif name in OFFSET_CHECKPOINTS:
            log_dir.checkpoints[name] = full
        elif name in BROKER_FILES or name.endswith(".tmp"):
            log_dir.other_files.append(full)
        else:
            log_dir.other_files.append(full)
            findings.append(Finding("unknown_file", full, None, f"{name} is not a file a broker writes in a log dir"))
    return log_dir, findings
