"""`find`'s search of one partition dir: every copy of a matching record in it, each with its fate.

One pass over the dir's segments in offset order: the batch headers of every segment (CRC checked), the records of
the batches that can match decompressed and searched by the compiled reader (`RecordMatcher`: a record is built
only when it matches, or when its key is one whose next version is wanted), the transaction markers read as they
come. Nothing else is decompressed: a batch outside the time window is skipped on its header, unless a key found
earlier in the partition is still waiting for its next version.

The fate of each copy, as the partition's own log tells it:

- `transaction` (a transactional record): the outcome of the marker of its producer that closes its transaction
  in this partition dir (a producer's transaction runs from its first data batch after its previous marker to its
  next marker): COMMIT or ABORT; UNKNOWN when that marker's control record cannot be read. Without a marker: COMMIT
  when the transaction's data lies below the partition's cleaner-offset-checkpoint entry (the log cleaner cleans
  only below the last stable offset, so the transaction was complete; its marker was removed past its delete
  horizon, and aborted data never survives a cleaning), else OPEN. The same rule as the scan's `transactions`
  table (spark/transactions.py `transactions_table`); a read_committed consumer returns COMMIT and leaves out the
  others.
- `superseded_at`: the offset of the next record with the same key in this partition dir whose transaction did
  not abort, a tombstone too (Kafka's log cleaner keeps a key's newest record; its offset map leaves aborted
  records out: `buildOffsetMapForSegment` of LogCleaner.scala in Kafka 4.0, apache/kafka 1eb76443, Cleaner.java on
  trunk); null for the newest, and for a null key.

A batch whose CRC does not hold is reported (as the scan reports it) and its records are not searched; so is any
problem of the records read. No Spark and no CLI here: the Spark path (spark/find.py) runs the same search, one
task per partition dir.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from kforensics.find.query import Query
from kforensics.parsers._pure import MATCHED, WATCHED
from kforensics.parsers.findings import Finding
from kforensics.parsers.record_batch import Record, RecordBatch, open_log, record_problem_finding

#: The fates a transactional copy can have (`transaction`); null for a non-transactional one.
OUTCOMES = ("COMMIT", "ABORT", "OPEN", "UNKNOWN")


@dataclass(frozen=True)
class PartitionDirTask:
    """One partition dir to search: where it is, and what the search needs beside its segments."""

    broker: str
    topic: str
    partition: int
    dir_state: str  # live, delete, future, stray
    path: str  # the dir, as listed (a local path or a URI)
    segments: tuple[str, ...]  # its .log files, by base offset
    cleaner_offset: int | None = None  # its cleaner-offset-checkpoint entry (live dirs only)
    size: int | None = None  # bytes of its segments, where the listing said


@dataclass(frozen=True)
class FoundFinding:
    """A problem the search met (a damaged batch: what the scan reports for it), in its JSON-lines form: `type`
    "finding", the scan's finding fields (kind, severity, broker, topic, partition, file, position, offset,
    producer_id, producer_epoch, message), then the kind-specific ones."""

    line: dict[str, Any]

    @classmethod
    def of(cls, broker: str, topic: str | None, partition: int | None, f: Any) -> FoundFinding:
        details = dict(f.details)
        offset = details.get("base_offset", details.get("offset"))
        out = {"type": "finding", "kind": f.kind, "severity": f.effective_severity, "broker": broker,
               "topic": topic, "partition": partition, "file": f.file, "position": f.position,
               "offset": offset if isinstance(offset, int) else None, "producer_id": None, "producer_epoch": None,
               "message": f.message}
        for key, value in details.items():
            out.setdefault(key, value)
        return cls(out)


class _Transaction:
    """One transaction of one producer in the partition: its data's last offset, and its outcome once known."""

    __slots__ = ("last_data_offset", "outcome")

    def __init__(self) -> None:
        self.last_data_offset = -1
        self.outcome: str | None = None


class _Copy:
    """A copy found: its row (without its fate), its transaction, and what supersedes it."""

    __slots__ = ("row", "superseded_at", "transaction")

    def __init__(self, row: dict[str, Any], transaction: _Transaction | None) -> None:
        self.row = row
        self.transaction = transaction
        self.superseded_at: int | None = None


#: An occurrence of a watched key: (offset, its transaction or None, the copy when it is one of the matches).
_Entry = tuple[int, "_Transaction | None", "_Copy | None"]


def _aborted(txn: _Transaction | None) -> bool:
    return txn is not None and txn.outcome == "ABORT"


def _settled(txn: _Transaction | None) -> bool:
    return txn is None or txn.outcome is not None


def _resolve(chain: list[_Entry]) -> None:
    """Set superseded_at of every copy in `chain` (one key's occurrences, in log order, whose fates are known): the
    next occurrence whose transaction did not abort."""
    superseder = None
    for offset, txn, copy in reversed(chain):
        if copy is not None:
            copy.superseded_at = superseder
        if not _aborted(txn):
            superseder = offset


def _plain(path: str) -> AbstractContextManager[str | None]:
    return contextlib.nullcontext(path if os.path.isfile(path) else None)


class PartitionSearch:
    """The copies of the query's records in one partition dir, and the problems met (`run`)."""

    def __init__(self, task: PartitionDirTask, query: Query, *,
                 local_file: Callable[[str], AbstractContextManager[str | None]] = _plain,
                 implementation: Any = None) -> None:
        self.task, self.query = task, query
        self.local_file = local_file  # a local path for a segment (remote ones: a temporary copy)
        self.implementation = implementation
        self.findings: list[FoundFinding] = []

    def run(self, progress: Callable[[int], None] | None = None) -> list[dict[str, Any]]:
        """The rows of the copies found, in offset order, each with `transaction` and `superseded_at`; `progress`
        is told the bytes of each segment once it is searched."""
        self._matcher = self.query.matcher(self.implementation)
        self._copies: list[_Copy] = []
        self._chains: dict[bytes, list[_Entry]] = {}
        self._limits: dict[bytes, int] = {}
        self._open: dict[int, _Transaction] = {}  # producer id -> its transaction not closed yet
        for uri in self.task.segments:
            try:
                with self.local_file(uri) as path:
                    if path is None:
                        self._problem(_unreadable(uri, None))
                        continue
                    with open_log(path) as log:
                        for b in log.batches():
                            if isinstance(b, RecordBatch):
                                self._batch(log, b, uri)
                            else:
                                self._problem(_relocated(b, uri))
                        if progress is not None:
                            progress(log.size)
            except OSError as exc:  # the other segments are searched on
                self._problem(_unreadable(uri, exc))
        cleaner = self.task.cleaner_offset
        for txn in self._open.values():
            txn.outcome = "COMMIT" if cleaner is not None and txn.last_data_offset < cleaner else "OPEN"
        for chain in self._chains.values():
            _resolve(chain)
        rows = []
        for copy in self._copies:
            copy.row["transaction"] = None if copy.transaction is None else copy.transaction.outcome
            copy.row["superseded_at"] = copy.superseded_at
            rows.append(copy.row)
        return rows

    def _problem(self, finding: Any) -> None:
        self.findings.append(FoundFinding.of(self.task.broker, self.task.topic, self.task.partition, finding))

    def _batch(self, log: Any, b: Any, uri: str) -> None:
        if not b.crc_valid:  # reported by the walk itself (corrupt_crc); a consumer refuses it: not searched
            return
        txn = None
        if b.magic == 2 and b.is_transactional and b.producer_id >= 0:
            if b.is_control:
                self._marker(log, b)
                return
            txn = self._open.get(b.producer_id)
            if txn is None:
                txn = self._open[b.producer_id] = _Transaction()
            txn.last_data_offset = b.last_offset
        if b.magic == 2 and b.is_control:
            return
        query = self.query.may_match(b.max_timestamp, b.timestamp_type == "LogAppendTime")
        if not query and not self._matcher.watched():
            return  # nothing of this batch can be wanted: not decompressed
        if b.magic == 2:
            section = log.records_section(b)
            if isinstance(section, Finding):
                self._problem(_relocated(section, uri))
                return
            hits, problem = self._matcher.match_v2(*section, b, Record, query)
            for flags, record in hits:
                self._hit(flags, record, b, txn, uri)
            if problem is not None:
                self._problem(record_problem_finding(uri, b, problem))
            return
        for record in log.records(b):  # legacy messages (magic 0/1): decoded in Python, the same query
            if isinstance(record, Finding):
                self._problem(_relocated(record, uri))
                break
            flags = self._matcher.flags(record.key, record.value, record.headers, record.timestamp)
            if not query:
                flags &= WATCHED
            if flags:
                self._hit(flags, record, b, None, uri)

    def _marker(self, log: Any, b: Any) -> None:
        txn = self._open.pop(b.producer_id, None)
        if txn is None:  # an empty transaction: nothing of it to judge
            return
        marker = log.control_record(b)
        control_type = None if marker is None else marker.control_type
        txn.outcome = control_type if control_type in ("COMMIT", "ABORT") else "UNKNOWN"

    def _hit(self, flags: int, r: Any, b: Any, txn: _Transaction | None, uri: str) -> None:
        copy = None
        if flags & MATCHED:
            value = r.value
            row = {"broker": self.task.broker, "topic": self.task.topic, "partition": self.task.partition,
                   "offset": r.offset, "timestamp": r.timestamp, "timestamp_type": b.timestamp_type, "key": r.key}
            if self.query.values:
                row["value"] = value
            row.update({"value_size": None if value is None else len(value),
                        "headers": [{"key": k, "value": v} for k, v in r.headers],
                        "producer_id": b.producer_id, "producer_epoch": b.producer_epoch, "sequence": r.sequence,
                        "leader_epoch": b.partition_leader_epoch, "transaction": None, "file": uri,
                        "position": b.position, "dir_state": self.task.dir_state, "superseded_at": None})
            copy = _Copy(row, txn)
            self._copies.append(copy)
        key = r.key
        if key is None:  # no key, no next version
            return
        chain = self._chains.get(key)
        if chain is None:
            if copy is None:  # a key no longer waited for (stale watch): nothing to do
                return
            chain = self._chains[key] = []
            self._matcher.watch(key)
        chain.append((r.offset, txn, copy))
        if txn is None or len(chain) >= self._limits.get(key, 16):
            self._settle(key, chain)

    def _settle(self, key: bytes, chain: list[_Entry]) -> None:
        """Resolve what a chain's known fates decide: within its longest prefix of closed transactions, the copies up
        to the last occurrence that did not abort; keep the copies waiting after it and the occurrences not
        settled yet, and stop watching the key when nothing is left. The next try waits for a chain twice as long
        as what is kept (the work stays linear in the occurrences)."""
        settled = next((i for i, (_, txn, _) in enumerate(chain) if not _settled(txn)), len(chain))
        last = max((i for i in range(settled) if not _aborted(chain[i][1])), default=-1)
        if last >= 0:
            _resolve(chain[:last + 1])
        kept = [e for i, e in enumerate(chain) if i >= settled or (e[2] is not None and i >= last)]
        if kept:
            self._chains[key] = kept
            self._limits[key] = max(16, 2 * len(kept))
        else:
            del self._chains[key]
            self._limits.pop(key, None)
            self._matcher.unwatch(key)


def _relocated(f: Any, uri: str) -> Any:
    """A finding of a local (maybe temporary) copy, named by the file's URI."""
    return Finding(f.kind, uri, f.position, f.message, f.details, f.severity)


def _unreadable(uri: str, exc: OSError | None) -> Any:
    why = f": {exc.strerror or exc}" if exc is not None else ""
    return Finding("unreadable_file", uri, None, f"cannot read {uri}{why}",
                   {"errno": exc.errno} if exc is not None and exc.errno is not None else {})


def search_all(tasks: list[PartitionDirTask], query: Query,
               progress: Callable[[int], None] | None = None) -> Iterator[dict[str, Any] | FoundFinding]:
    """Every partition dir in turn, in this process: its copies (rows), then its findings."""
    for task in tasks:
        search = PartitionSearch(task, query)
        yield from search.run(progress)
        yield from search.findings
