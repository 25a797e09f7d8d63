"""The directory model: broker log dir -> topic-partition dirs -> segments and their companion files.

Only file names are read here, through pyarrow.fs (local paths and URIs alike); nothing is opened for
writing, and odd files become `unknown_file` findings instead of errors. `kforensics dump DIR` and the
scan's listing share it.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from dataclasses import dataclass, field

import pyarrow.fs as pafs

from kforensics.parsers.findings import Finding

SEGMENT_FILE = re.compile(r"^(\d{20})\.(log|index|timeindex|txnindex|snapshot)$")
TRANSIENT_FILE = re.compile(r"^(\d{20})\.(log|index|timeindex|txnindex|snapshot)\.(deleted|cleaned|swap)$")
METADATA_SNAPSHOT = re.compile(r"^(\d{20})-(\d{10})\.checkpoint$")
# `<topic>-<partition>`, or `<topic>-<partition>.<uniqueId>-delete|-future|-stray` (Kafka 4.1 `LocalLog`:
# logDirNameWithSuffix / logDirNameWithSuffixCappedLength; uniqueId is a dashless random UUID after the LAST '.';
# for -delete and -stray the topic is cut so that the name stays within 255 characters).
PARTITION_DIR = re.compile(r"^(?P<topic>.+)-(?P<partition>\d+)(?:\.(?P<unique_id>[^.]+)-(?P<state>delete|future|stray))?$")
#: What a partition dir's name says of it (the `dir_state` column): a live replica, one renamed for deletion
#: (topic deleted or replica moved away; LogManager deletes it after `file.delete.delay.ms`), the copy of a
#: replica being moved between log dirs (ReplicaAlterLogDirsThread), or one Kafka found should not be here.
DIR_STATES = ("live", "delete", "future", "stray")
#: The same grammar for a file's path as a Java regex (Spark's regexp_extract): group 1 is the dir_state of the
#: partition dir holding the file, empty for a live dir (tests hold it to `parse_partition_dir_name`).
DIR_STATE_OF_FILE = r"-[0-9]+\.[^./]+-(delete|future|stray)/[^/]*$"

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
    """(topic, partition, dir_state) with dir_state one of DIR_STATES; the partition is after the LAST '-' (of
    the part before the unique id), as Kafka's `LocalLog.parseTopicPartitionName` reads it."""
    m = PARTITION_DIR.match(name)
    if not m or len(m.group("partition")) > 10 or int(m.group("partition")) > 2**31 - 1:
        return None
    return m.group("topic"), int(m.group("partition")), m.group("state") or "live"


def dir_state_of(path: str) -> str:
    """The dir_state of the partition dir holding `path` (a file in it); "live" when its name says nothing else."""
    parts = path.rstrip("/").rsplit("/", 2)
    parsed = parse_partition_dir_name(parts[-2]) if len(parts) >= 2 else None
    return parsed[2] if parsed else "live"


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
    dir_state: str = "live"
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


@dataclass(frozen=True)
class Entry:
    """One name in a directory, for what it is: `file`, `dir`, or what the scan never opens: `fifo`, `socket`,
    `device`, `dangling_symlink`, `symlink_loop`, `unreadable` (its type could not be read), `other`. Symbolic
    links to files and folders count as what they point to, as they do for the broker."""

    name: str
    path: str  # on the listing's filesystem
    kind: str
    error: str | None = None

    @property
    def what(self) -> str:
        """The entry in a few words, for a finding's message."""
        return {"dir": "a folder", "file": "a file", "fifo": "a named pipe (FIFO)", "socket": "a socket",
                "device": "a device node", "dangling_symlink": "a symbolic link to nothing",
                "symlink_loop": "a symbolic link loop", "missing": "no such file",
                "unreadable": f"unreadable ({self.error})"}.get(self.kind, "not a regular file or folder")


def local_entry(path: str | os.PathLike[str]) -> Entry:
    """What a local path is, by stat (following links, as the broker does); never opens it."""
    path = os.fspath(path)
    name = os.path.basename(path.rstrip("/"))
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return Entry(name, path, "dangling_symlink" if os.path.islink(path) else "missing")
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return Entry(name, path, "symlink_loop")
        return Entry(name, path, "unreadable", exc.strerror or str(exc))
    for test, kind in ((stat.S_ISREG, "file"), (stat.S_ISDIR, "dir"), (stat.S_ISFIFO, "fifo"),
                       (stat.S_ISSOCK, "socket"), (stat.S_ISCHR, "device"), (stat.S_ISBLK, "device")):
        if test(mode):
            return Entry(name, path, kind)
    return Entry(name, path, "other")


def list_entries(fs: pafs.FileSystem, path: str) -> list[Entry]:
    """A directory's entries by name. Local folders are read with lstat/stat (pyarrow's listing leaves dangling
    links and link loops out, and cannot tell a FIFO from a device); other filesystems through pyarrow.fs.
    Raises OSError when the folder itself cannot be listed."""
    if isinstance(fs, pafs.LocalFileSystem):
        with os.scandir(path) as it:
            return sorted((local_entry(e.path) for e in it), key=lambda e: e.name)
    kinds = {pafs.FileType.File: "file", pafs.FileType.Directory: "dir"}
    return sorted((Entry(i.base_name, i.path, kinds.get(i.type, "other")) for i in fs.get_file_info(
        pafs.FileSelector(path))), key=lambda e: e.name)


def scan_partition_dir(path: str, topic: str, partition: int, dir_state: str = "live", *,
                       fs: pafs.FileSystem | None = None, uri: str | None = None) -> tuple[PartitionDir, list[Finding]]:
    """List one `<topic>-<partition>` dir: its segments by base offset and its other files. `path` is on `fs`
    (local by default); files are named by `uri` (the dir as the user gave it) joined with their names.
    Raises OSError when the dir cannot be listed."""
    fs = fs or pafs.LocalFileSystem()
    base = uri or path
    part = PartitionDir(base, topic, partition, dir_state)
    findings: list[Finding] = []
    segments: dict[int, Segment] = {}
    for entry in list_entries(fs, path):
        name = entry.name
        full = _join(base, name)
        if entry.kind != "file":
            part.other_files.append(full)
            findings.append(Finding("unknown_file", full, None, f"{name} is {entry.what}, not a file a broker "
                                                                 "writes in a partition dir; never opened",
                                    {"entry": entry.kind}))
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
                findings.append(Finding("unknown_file", full, None, f"{name} is not a file a broker writes here",
                                        {"entry": "file"}))
    # A snapshot-only offset (no .log) is not a segment.
    part.segments = [s for _, s in sorted(segments.items()) if s.log or s.index or s.timeindex or s.txnindex]
    return part, findings


def scan_log_dir(uri: str | os.PathLike[str]) -> tuple[LogDir, list[Finding]]:
    """List one broker log dir (the parent of `<topic>-<partition>` dirs), local or any URI pyarrow.fs
    understands: its broker files, its partition dirs (Kafka's `-delete`, `-future` and `-stray` dirs too, named
    by their dir_state) and their files. Whatever else it holds (lost+found, notes, hidden files, FIFOs,
    sockets, devices, broken links, unreadable entries) is an `unknown_file` finding, a folder as one finding,
    never opened. A partition dir that cannot be listed is an `unreadable_file` finding.
    Raises FileNotFoundError when the log dir itself is not a readable directory."""
    uri = os.fspath(uri)
    fs, path = filesystem(uri)
    base = uri.rstrip("/") if "://" in uri else path
    if fs.get_file_info(path).type != pafs.FileType.Directory:
        raise FileNotFoundError(f"{uri} is not a readable directory")
    try:
        entries = list_entries(fs, path)
    except OSError as exc:
        raise FileNotFoundError(f"{uri} is not a readable directory: {exc.strerror or exc}") from exc
    log_dir = LogDir(base)
    findings: list[Finding] = []
    for entry in entries:
        name = entry.name
        full = _join(base, name)
        parsed = parse_partition_dir_name(name) if entry.kind == "dir" else None
        if parsed is not None:
            try:
                part, part_findings = scan_partition_dir(entry.path, *parsed, fs=fs, uri=full)
            except OSError as exc:
                log_dir.other_files.append(full)
                findings.append(Finding("unreadable_file", full, None, f"cannot list the partition dir {name}: "
                                                                       f"{exc.strerror or exc}"))
                continue
            log_dir.partitions.append(part)
            findings.extend(part_findings)
        elif entry.kind != "file":
            log_dir.other_files.append(full)
            what = "a folder that is not a topic-partition directory" if entry.kind == "dir" else entry.what
            findings.append(Finding("unknown_file", full, None, f"{name} is {what}; the scan leaves it alone (never opened)",
                                    {"entry": entry.kind}))
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
            findings.append(Finding("unknown_file", full, None, f"{name} is not a file a broker writes in a log dir",
                                    {"entry": "file"}))
    return log_dir, findings
