"""The directory model: broker log dir -> topic-partition dirs -> segments and their companion files.

Only file names are read here, through pyarrow.fs (local paths and URIs alike); nothing is opened for
writing, and odd files become `unknown_file` findings instead of errors. `kforensics dump DIR` and the
scan's listing share it.
"""

from __future__ import annotations

import errno
import importlib
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kforensics.parsers.findings import Finding
from kforensics.parsers.uris import filesystem, join_uri

if TYPE_CHECKING:  # pyarrow.fs is imported by the listings only: `kforensics dump --help` stays light
    import pyarrow.fs as pafs

#: The files of a segment, named by its base offset (Segment's fields).
SEGMENT_FILE_TYPES = ("log", "index", "timeindex", "txnindex", "snapshot")
TRANSIENT_FILE = re.compile(r"^(\d{20})\.(log|index|timeindex|txnindex|snapshot)\.(deleted|cleaned|swap)$")
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

#: `RemoteIndexCache.DIR_NAME`: tiered storage's index cache in a log dir, the one directory `LogManager.loadLogs`
#: skips (Kafka 3.9); the listing leaves it alone too.
REMOTE_INDEX_CACHE_DIR = "remote-log-index-cache"
#: Kafka's checks of a -delete, -future or -stray dir name (`LocalLog.DeleteDirPattern` and its siblings; `\S` as
#: Java's: ASCII whitespace only).
_KAFKA_SUFFIXED_DIR = re.compile(r"^(\S+)-(\S+)\.(\S+)-(delete|future|stray)$", re.ASCII)
_JAVA_INT = re.compile(r"[+-]?\d+")

#: The zero checkpoint (raft `Snapshots.BOOTSTRAP_SNAPSHOT_ID`, end offset 0, epoch 0) that `kafka-storage format`
#: writes into a controller's `__cluster_metadata-0`: the KRaftVersion and Voters control records of a dynamic quorum
#: (KIP-853) and, from Kafka 4.4, the bootstrap metadata records `bootstrap.checkpoint` held before (KIP-1170).
ZERO_CHECKPOINT = "00000000000000000000-0000000000.checkpoint"
OFFSET_CHECKPOINTS = ("replication-offset-checkpoint", "recovery-point-offset-checkpoint",
                      "log-start-offset-checkpoint", "cleaner-offset-checkpoint")
BROKER_FILES = (*OFFSET_CHECKPOINTS, "meta.properties", ".kafka_cleanshutdown", "bootstrap.checkpoint", ".lock")


@dataclass(frozen=True)
class FileType:
    """A kind of file a broker writes: its name (`kforensics dump --type`), the file names it goes by, and the
    parser that reads it ("module:function" in kforensics.parsers, imported when asked for)."""

    name: str
    names: re.Pattern[str]
    reader: str

    def read(self) -> Callable[..., Any]:
        """The parser of this type of file."""
        module, _, function = self.reader.partition(":")
        return getattr(importlib.import_module(f"kforensics.parsers.{module}"), function)


def _names(*names: str) -> re.Pattern[str]:
    return re.compile("^(" + "|".join(re.escape(n) for n in names) + ")$")


#: The one registry of file names -> file type -> parser; `kforensics dump`, the scan's listing and executors
#: and `locate` go through it. Segment files and their companions first (by base offset), then the rest.
FILE_TYPES: tuple[FileType, ...] = (
    FileType("log", re.compile(r"^(\d{20})\.log$"), "record_batch:open_log"),
    FileType("index", re.compile(r"^(\d{20})\.index$"), "offset_index:iter_offset_index"),
    FileType("timeindex", re.compile(r"^(\d{20})\.timeindex$"), "time_index:iter_time_index"),
    FileType("txnindex", re.compile(r"^(\d{20})\.txnindex$"), "txn_index:iter_txn_index"),
    FileType("snapshot", re.compile(r"^(\d{20})\.snapshot$"), "producer_snapshot:read_producer_snapshot"),
    # KRaft snapshots `<end offset>-<epoch>.checkpoint` of __cluster_metadata-0, the zero checkpoint (ZERO_CHECKPOINT)
    # among them, and the log dir's legacy `bootstrap.checkpoint`: record batches, as a segment
    FileType("metadata_snapshot", re.compile(r"^(\d{20})-(\d{10})\.checkpoint$|^bootstrap\.checkpoint$"),
             "record_batch:open_log"),
    FileType("leader_epoch_checkpoint", _names("leader-epoch-checkpoint"), "checkpoints:read_leader_epoch_checkpoint"),
    FileType("offset_checkpoint", _names(*OFFSET_CHECKPOINTS), "checkpoints:read_offset_checkpoint"),
    FileType("partition_metadata", _names("partition.metadata"), "checkpoints:read_partition_metadata"),
    FileType("meta_properties", _names("meta.properties"), "checkpoints:read_meta_properties"),
    FileType("quorum_state", _names("quorum-state"), "checkpoints:read_quorum_state"),
    FileType("clean_shutdown", _names(".kafka_cleanshutdown"), "checkpoints:read_clean_shutdown"),
)
FILE_TYPE = {t.name: t for t in FILE_TYPES}


def file_type_of(name: str) -> FileType | None:
    """The type of a file a broker writes under this name (exactly as the broker names it), or None."""
    for file_type in FILE_TYPES:
        if file_type.names.match(name):
            return file_type
    return None


def detect_file_type(path: str | os.PathLike[str]) -> str | None:
    """The kind of broker file a name denotes (a FILE_TYPES name), or None. Segment files renamed by the broker
    (`.deleted`, `.cleaned`, `.swap`) and segment files with another base name keep the type of their suffix."""
    name = os.path.basename(os.fspath(path))
    transient = TRANSIENT_FILE.match(name)
    if transient:
        return transient.group(2)
    file_type = file_type_of(name)
    if file_type is not None:
        return file_type.name
    for suffix in (".log", ".index", ".timeindex", ".txnindex", ".snapshot"):
        if name.endswith(suffix):
            return suffix[1:]
    return None


def partition_dir_name(topic: str, partition: int) -> str:
    """The name of a live partition directory: `<topic>-<partition>` (parse_partition_dir_name reads it back)."""
    return f"{topic}-{partition}"


def parse_partition_dir_name(name: str) -> tuple[str, int, str] | None:
    """(topic, partition, dir_state) with dir_state one of DIR_STATES; the partition is after the LAST '-' (of
    the part before the unique id), as Kafka's `LocalLog.parseTopicPartitionName` reads it."""
    m = PARTITION_DIR.match(name)
    if not m or len(m.group("partition")) > 10 or int(m.group("partition")) > 2**31 - 1:
        return None
    return m.group("topic"), int(m.group("partition")), m.group("state") or "live"


def kafka_topic_partition(name: str) -> tuple[str, int] | None:
    """(topic, partition) as Kafka 3.9's `LocalLog.parseTopicPartitionName` reads a directory name, or None where it
    throws KafkaException ("... is not in the form of topic-partition ..."): a name without '-', a -delete, -future
    or -stray name its pattern refuses, an empty topic, or a partition `Integer.parseInt` refuses. Looser than
    `parse_partition_dir_name` in places (`orders-+1` is partition 1 to Kafka)."""
    if "-" not in name:
        return None
    if name.endswith(("-delete", "-future", "-stray")):
        if not _KAFKA_SUFFIXED_DIR.match(name):
            return None
        name = name[: name.rindex(".")]
    topic, _, partition = name.rpartition("-")
    if not topic or not _JAVA_INT.fullmatch(partition) or not -(2**31) <= int(partition) <= 2**31 - 1:
        return None
    return topic, int(partition)


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
    #: The size of each file the listing saw (by its name as listed), where the filesystem said
    sizes: dict[str, int] = field(default_factory=dict)

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
    #: Directories `LogManager.loadLogs` cannot take for partition dirs (`kafka_topic_partition` is None): the broker
    #: does not start with them in the log dir.
    refused_dirs: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Entry:
    """One name in a directory, for what it is: `file`, `dir`, or what the scan never opens: `fifo`, `socket`,
    `device`, `dangling_symlink`, `symlink_loop`, `unreadable` (its type could not be read), `other`. Symbolic
    links to files and folders count as what they point to, as they do for the broker."""

    name: str
    path: str  # on the listing's filesystem
    kind: str
    error: str | None = None
    size: int | None = None  # of a file, in bytes (as listed: no file is opened)

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
        st = os.stat(path)
        mode = st.st_mode
    except FileNotFoundError:
        return Entry(name, path, "dangling_symlink" if os.path.islink(path) else "missing")
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return Entry(name, path, "symlink_loop")
        return Entry(name, path, "unreadable", exc.strerror or str(exc))
    for test, kind in ((stat.S_ISREG, "file"), (stat.S_ISDIR, "dir"), (stat.S_ISFIFO, "fifo"),
                       (stat.S_ISSOCK, "socket"), (stat.S_ISCHR, "device"), (stat.S_ISBLK, "device")):
        if test(mode):
            return Entry(name, path, kind, size=st.st_size if kind == "file" else None)
    return Entry(name, path, "other")


def list_entries(fs: pafs.FileSystem, path: str) -> list[Entry]:
    """A directory's entries by name. Local folders are read with lstat/stat (pyarrow's listing leaves dangling
    links and link loops out, and cannot tell a FIFO from a device); other filesystems through pyarrow.fs.
    Raises OSError when the folder itself cannot be listed."""
    import pyarrow.fs as pafs

    if isinstance(fs, pafs.LocalFileSystem):
        with os.scandir(path) as it:
            return sorted((local_entry(e.path) for e in it), key=lambda e: e.name)
    kinds = {pafs.FileType.File: "file", pafs.FileType.Directory: "dir"}
    return sorted((Entry(i.base_name, i.path, kinds.get(i.type, "other"),
                         size=i.size if i.type == pafs.FileType.File else None)
                   for i in fs.get_file_info(pafs.FileSelector(path))), key=lambda e: e.name)


def utf8_name(name: str) -> tuple[str, dict[str, Any]]:
    """A listed name as the tables can hold it: itself, or, for a name that is not UTF-8 (its undecodable bytes
    kept by Python as surrogates), the name with those bytes as `\\xNN`, and its bytes in hex for the details (no
    Kafka name has such bytes: such an entry is never a partition, a segment or a checkpoint)."""
    try:
        name.encode("utf-8")
        return name, {}
    except UnicodeEncodeError:
        raw = os.fsencode(name)
        return raw.decode("utf-8", "backslashreplace"), {"name_hex": raw.hex()}


def scan_partition_dir(path: str, topic: str, partition: int, dir_state: str = "live", *,
                       fs: pafs.FileSystem | None = None, uri: str | None = None) -> tuple[PartitionDir, list[Finding]]:
    """List one `<topic>-<partition>` dir: its segments by base offset and its other files. `path` is on `fs`
    (local by default); files are named by `uri` (the dir as the user gave it) joined with their names.
    Raises OSError when the dir cannot be listed."""
    import pyarrow.fs as pafs

    fs = fs or pafs.LocalFileSystem()
    base = uri or path
    part = PartitionDir(base, topic, partition, dir_state)
    findings: list[Finding] = []
    segments: dict[int, Segment] = {}
    for entry in list_entries(fs, path):
        name, undecodable = utf8_name(entry.name)
        full = join_uri(base, name)
        if entry.kind != "file":
            part.other_files.append(full)
            findings.append(Finding("unknown_file", full, None, f"{name} is {entry.what}, not a file a broker "
                                                                 "writes in a partition dir; never opened",
                                    {"entry": entry.kind, **undecodable}))
            continue
        if entry.size is not None:
            part.sizes[full] = entry.size
        file_type = file_type_of(name)
        kind = file_type.name if file_type is not None else None
        if file_type is not None and kind in SEGMENT_FILE_TYPES:
            offset = int(file_type.names.match(name).group(1))  # type: ignore[union-attr]
            if kind == "snapshot":
                part.snapshots.append(full)
            setattr(segments.setdefault(offset, Segment(offset)), kind, full)
        elif kind == "metadata_snapshot" and name != "bootstrap.checkpoint":  # the bootstrap is the log dir's
            part.metadata_snapshots.append(full)
        elif kind in ("leader_epoch_checkpoint", "partition_metadata", "quorum_state"):
            setattr(part, kind, full)
        else:
            part.other_files.append(full)
            if not TRANSIENT_FILE.match(name) and not name.endswith((".tmp", ".deleted", ".cleaned", ".swap")):
                findings.append(Finding("unknown_file", full, None, f"{name} is not a file a broker writes here",
                                        {"entry": "file", **undecodable}))
    # A snapshot-only offset (no .log) is not a segment.
    part.segments = [s for _, s in sorted(segments.items()) if s.log or s.index or s.timeindex or s.txnindex]
    return part, findings


def scan_log_dir(uri: str | os.PathLike[str]) -> tuple[LogDir, list[Finding]]:
    """List one broker log dir (the parent of `<topic>-<partition>` dirs), local or any URI pyarrow.fs
    understands: its broker files, its partition dirs (Kafka's `-delete`, `-future` and `-stray` dirs too, named
    by their dir_state) and their files. Whatever else it holds (lost+found, notes, hidden files, FIFOs,
    sockets, devices, broken links, unreadable entries) is an `unknown_file` finding, a folder as one finding,
    never opened; Kafka's `remote-log-index-cache` is skipped, as the broker skips it, and `refused_dirs` names the
    directories the broker cannot load. A partition dir that cannot be listed is an `unreadable_file` finding.
    Raises FileNotFoundError when the log dir itself is not a readable directory."""
    import pyarrow.fs as pafs

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
        name, undecodable = utf8_name(entry.name)
        full = join_uri(base, name)
        if entry.kind == "dir" and name == REMOTE_INDEX_CACHE_DIR:  # Kafka's own, not a partition
            log_dir.other_files.append(full)
            continue
        refused = entry.kind == "dir" and kafka_topic_partition(name) is None
        if refused:
            log_dir.refused_dirs.append(full)
        parsed = parse_partition_dir_name(name) if entry.kind == "dir" and not undecodable else None
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
            if undecodable:
                what = f"{entry.what} whose name is not UTF-8 (no Kafka topic's name has such bytes)"
            message, details = (f"{name} is {what}; the scan leaves it alone (never opened)",
                                {"entry": entry.kind, **undecodable})
            if refused:
                # a fact about this log dir as it is, not damage: often an artifact of the copy (lost+found at the
                # root of the volume it was copied to), so info like the rest; restart_prediction says it too
                message += ("; Kafka does not start a broker whose log dir holds it (LogManager.loadLogs: not in the "
                            "form topic-partition): if this is the broker's own log dir, move it out before a restart")
                details["broker_would_not_start"] = True
            findings.append(Finding("unknown_file", full, None, message, details))
        elif (kind := getattr(file_type_of(name), "name", None)) in ("meta_properties", "clean_shutdown"):
            setattr(log_dir, kind, full)
        elif kind == "offset_checkpoint":
            log_dir.checkpoints[name] = full
        elif name in BROKER_FILES or name.endswith(".tmp"):
            log_dir.other_files.append(full)
        else:
            log_dir.other_files.append(full)
            findings.append(Finding("unknown_file", full, None, f"{name} is not a file a broker writes in a log dir",
                                    {"entry": "file", **undecodable}))
    return log_dir, findings
