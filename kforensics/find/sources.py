"""Where `find` searches: every partition dir of the inputs (live, and Kafka's -delete, -future and -stray dirs)
of the topics the query names, with the cleaner offset of each live one, from the log dirs' listing (file names
only; the broker's cleaner-offset-checkpoint is the one file read)."""

from __future__ import annotations

import os
import tempfile
from typing import Any

from kforensics.find.query import FindError, Query
from kforensics.find.search import FoundFinding, PartitionDirTask


def partition_dirs(inputs: list[tuple[str, str]], query: Query) -> tuple[list[PartitionDirTask], list[FoundFinding]]:
    """The partition dirs to search, input by input (in the order given) and by name; and the findings of the
    listing about them (a partition dir that cannot be listed, a cleaner-offset-checkpoint that cannot be read)."""
    from kforensics.parsers.log_dir import DIR_STATES, scan_log_dir

    tasks: list[PartitionDirTask] = []
    findings: list[FoundFinding] = []
    for broker, uri in inputs:
        try:
            log_dir, listed = scan_log_dir(uri)
        except FileNotFoundError as exc:
            raise FindError(str(exc)) from exc
        findings += [FoundFinding.of(broker, None, None, f) for f in listed if f.kind == "unreadable_file"]
        cleaner: dict[tuple[str, int], int] = {}
        checkpoint = log_dir.checkpoints.get("cleaner-offset-checkpoint")
        if checkpoint is not None and any(query.wants_topic(p.topic) for p in log_dir.partitions):
            entries, problems = _read_checkpoint(checkpoint)
            cleaner = {(e.topic, e.partition): e.offset for e in entries}
            findings += [FoundFinding.of(broker, None, None, f) for f in problems]
        for part in sorted(log_dir.partitions, key=lambda p: (p.topic, p.partition, DIR_STATES.index(p.dir_state),
                                                              p.path)):
            if not query.wants_topic(part.topic):
                continue
            logs = tuple(s.log for s in part.segments if s.log)
            sizes = [part.sizes.get(path) for path in logs]
            # the cleaner cleans a broker's current logs only (LogCleaner over LogManager.currentLogs)
            offset = cleaner.get((part.topic, part.partition)) if part.dir_state == "live" else None
            tasks.append(PartitionDirTask(broker, part.topic, part.partition, part.dir_state, part.path, logs,
                                          offset, None if None in sizes else sum(sizes)))  # type: ignore[arg-type]
    return tasks, findings


def _read_checkpoint(uri: str) -> tuple[list[Any], list[Any]]:
    """cleaner-offset-checkpoint's entries (a remote one through a temporary copy of the same name)."""
    from kforensics.parsers.checkpoints import read_offset_checkpoint

    if "://" not in uri or uri.startswith("file://"):
        return read_offset_checkpoint(uri.removeprefix("file://"))
    from kforensics.parsers.uris import filesystem

    fs, path = filesystem(uri)
    with tempfile.TemporaryDirectory(prefix="kforensics-") as scratch:
        local = os.path.join(scratch, os.path.basename(path))
        with fs.open_input_stream(path) as src, open(local, "wb") as out:
            out.write(src.read(1 << 24))
        entries, problems = read_offset_checkpoint(local)
    from kforensics.parsers.findings import Finding

    return entries, [Finding(f.kind, uri, f.position, f.message, f.details, f.severity) for f in problems]


def input_bytes(tasks: list[PartitionDirTask]) -> int | None:
    """Bytes of the segments to search (None: a filesystem did not say)."""
    sizes = [t.size for t in tasks]
    return None if None in sizes else sum(sizes)  # type: ignore[arg-type]


def is_remote(tasks: list[PartitionDirTask]) -> bool:
    return any("://" in t.path and not t.path.startswith("file://") for t in tasks)
