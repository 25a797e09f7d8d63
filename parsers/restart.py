"""What a broker restart would do to a partition's log, replayed on the disk as it is.

The rules are Apache Kafka's log loading as of 3.9 / trunk (October 2024): `LogManager.loadLogs`,
`LogLoader.load`/`recoverLog`, `LogSegment.sanityCheck`/`recover`, `FileLogInputStream.nextBatch`:

- The clean-shutdown marker `.kafka_cleanshutdown` at the log dir root (any content: KRaft brokers since 3.7 write
  the broker epoch into it) makes the whole log dir skip recovery (`LogManager.loadLogs`, KAFKA-10471).
- Recovery point and log start offset per partition come from `recovery-point-offset-checkpoint` and
  `log-start-offset-checkpoint`; a partition absent from them gets 0, and a checkpoint the broker cannot read
  resets every partition of the dir to 0 (`LogManager.loadLogs`, `getOrDefault(tp, 0L)`).
- Without the marker, `recoverLog` recovers the unflushed segments `segments.values(recoveryPoint, MAX)`: the
  segment holding the recovery point (the floor of it) and every later one, in order. The first segment whose
  recovery truncates bytes is cut there and every later unflushed segment is deleted ("Corruption found in
  segment ..., truncating to offset ...").
- `LogSegment.recover` walks the batches: `ensureValid()` (size at least the batch overhead, CRC; a legacy
  message's CRC), `ensureOffsetInRange` (a last offset not representable relative to the segment's base
  offset throws `LogSegmentOffsetOverflowException`: the broker splits the segment, nothing is truncated), and
  it rebuilds the offset and time indexes every `index.interval.bytes` (4096 by default): an index entry whose
  offset is not above the previous one throws `InvalidOffsetException`, and `recoverLog` then empties the whole
  segment (`segment.truncateTo(baseOffset)`). The batch walk ends where `nextBatch` cannot frame a batch (fewer
  than 17 bytes left, a size below 14, a batch running past the file end): everything from there is truncated.
  Records are not decompressed or decoded: damage inside a batch whose CRC holds passes recovery.
- A segment whose `.index` file is missing (or whose `.txnindex` is corrupt) is recovered while loading, even
  after a clean shutdown or below the recovery point (`LogLoader.loadSegmentFiles`, `sanityCheck`): it is
  truncated at its first invalid batch, but no later segment is deleted.
- After recovery, a log end offset below the log start offset deletes every segment (`LogLoader.
  deleteSegmentsIfLogStartGreaterThanLogEnd`).
- `.deleted` files are deleted, `.cleaned` files are deleted with every `.swap` at or above the lowest
  `.cleaned` offset, and the remaining `.swap` files replace the segments they cover (an interrupted compaction
  or split completes with the cleaned copy: no offset is lost, so a pending swap is not modelled here);
  `-delete` directories are loaded and deleted, `-stray` ones are deleted later, `-future` ones are loaded as the
  target of a replica move (`LogLoader.removeTempFilesAndCollectSwapFiles`, `LogManager.loadLog`; their rows are
  spark/restart.py's).

Pure Python and no I/O but `segment_state` (which walks one local `.log` file): the scan feeds `predict` from its
batches and segments tables (spark/restart.py), the tests from segments they build.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kforensics.parsers.findings import Finding

#: Parser findings at which `FileLogInputStream.nextBatch` or `ensureValid` ends a segment's batch walk.
STOP_KINDS = ("truncated_tail", "zero_filled_tail", "invalid_batch_length", "unknown_magic")
#: `index.interval.bytes`' default: recovery appends an index entry once more than this many bytes went by.
DEFAULT_INDEX_INTERVAL_BYTES = 4096
INT32_MAX = 2**31 - 1
#: Topics a broker's `LogManager` does not load (KRaft's metadata log is loaded by `KafkaMetadataLog`).
NOT_LOADED_TOPICS = ("__cluster_metadata",)


@dataclass(frozen=True)
class IndexedBatch:
    """What index rebuilding reads of one batch before the stop."""

    position: int
    size: int
    last_offset: int
    max_timestamp: int


@dataclass(frozen=True)
class SegmentState:
    """One segment as recovery would see it. Offsets of `valid_*` are those of the batches whose CRC holds."""

    file: str
    base_offset: int  # from the file name
    size: int
    has_offset_index: bool = True
    txnindex_corrupt: bool = False
    stop_position: int | None = None  # first byte `recover` rejects; None when every byte is a valid batch
    stop_kind: str | None = None  # corrupt_crc or one of STOP_KINDS
    kept_last_offset: int | None = None  # last offset of the batches before the stop
    discarded_first_offset: int | None = None  # valid batches after the stop
    discarded_last_offset: int | None = None
    discarded_valid_batches: int = 0
    valid_first_offset: int | None = None  # all valid batches of the segment
    valid_last_offset: int | None = None
    valid_batches: int = 0
    last_offset: int | None = None  # of every framed batch (readNextOffset - 1 as the files are)
    offset_overflow: bool = False  # a last offset before the stop not relative to base_offset in [0, 2^31-1]
    #: The batches before the stop, only where their offsets go backwards (to replay index rebuilding).
    regressing_batches: tuple[IndexedBatch, ...] | None = None

    @property
    def kept_next_offset(self) -> int:
        """`readNextOffset` after truncating at the stop."""
        return self.base_offset if self.kept_last_offset is None else self.kept_last_offset + 1

    @property
    def next_offset(self) -> int:
        """`readNextOffset` of the segment as it is."""
        return self.base_offset if self.last_offset is None else self.last_offset + 1


@dataclass(frozen=True)
class PartitionState:
    broker: str
    topic: str
    partition: int
    segments: tuple[SegmentState, ...]  # by base offset
    clean_shutdown: bool
    recovery_point: int | None  # None: not in the checkpoint (the broker uses 0)
    log_start_offset: int | None = None
    high_watermark: int | None = None
    recovery_checkpoint_unreadable: bool = False
    index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES


@dataclass
class Prediction:
    """One row of `restart_prediction` and the findings about it."""

    row: dict[str, Any]
    #: Each finding with the offset it is about (the findings table's `offset` column).
    findings: list[tuple[Finding, int | None]] = field(default_factory=list)


PREDICTION_COLUMNS = ("broker", "topic", "partition", "clean_shutdown", "recovery_point", "segments_recovered",
                      "truncate_at_offset", "truncate_at_file", "truncate_at_position", "bytes_discarded",
                      "segments_deleted", "offsets_discarded", "committed_offsets_discarded", "reason")


def index_failure(batches: tuple[IndexedBatch, ...], interval: int) -> int | None:
    """Replays `LogSegment.recover`'s index rebuilding: the byte position of the batch whose offset or time index
    append throws `InvalidOffsetException` (an offset not above the offset index's last entry, or below the time
    index's), or None."""
    valid_bytes = last_index_entry = 0
    index_last = time_last = None
    max_ts, max_ts_offset = -1, -1
    for b in batches:
        if b.max_timestamp > max_ts:
            max_ts, max_ts_offset = b.max_timestamp, b.last_offset
        if valid_bytes - last_index_entry > interval:
            if index_last is not None and b.last_offset <= index_last:
                return b.position
            index_last = b.last_offset
            if time_last is None or max_ts > time_last[0]:
                if time_last is not None and max_ts_offset < time_last[1]:
                    return b.position
                time_last = (max_ts, max_ts_offset)
            last_index_entry = valid_bytes
        valid_bytes += b.size
    return None


def _span(first: int | None, last: int | None) -> list[int] | None:
    return None if first is None or last is None else [first, last]


def _merge(a: list[int] | None, first: int | None, last: int | None) -> list[int] | None:
    if first is None or last is None:
        return a
    return [first, last] if a is None else [min(a[0], first), max(a[1], last)]


def predict(p: PartitionState) -> Prediction:
    """The restart prediction of one partition (see the module docstring for the rules)."""
    key = {"broker": p.broker, "topic": p.topic, "partition": p.partition}
    recovery_point = 0 if p.recovery_point is None or p.recovery_checkpoint_unreadable else p.recovery_point
    log_start = p.log_start_offset or 0
    row: dict[str, Any] = {**key, "clean_shutdown": p.clean_shutdown, "recovery_point": recovery_point,
                           "segments_recovered": 0, "truncate_at_offset": None, "truncate_at_file": None,
                           "truncate_at_position": None, "bytes_discarded": 0, "segments_deleted": 0,
                           "offsets_discarded": None, "committed_offsets_discarded": None, "reason": ""}
    out = Prediction(row)
    if p.topic in NOT_LOADED_TOPICS:
        row.update(recovery_point=None, bytes_discarded=None, segments_deleted=None,
                   reason=f"{p.topic} is loaded by the KRaft metadata log, not by LogManager: not predicted")
        return out
    reasons: list[str] = []
    if p.recovery_checkpoint_unreadable:
        reasons.append("recovery-point-offset-checkpoint is unreadable: the broker recovers from offset 0")
    elif p.recovery_point is None:
        reasons.append("not in recovery-point-offset-checkpoint: the broker recovers from offset 0")
    segments = list(p.segments)
    # Unflushed: the segment holding the recovery point and every later one (LogSegments.values(from, MAX)).
    floor = max((i for i, s in enumerate(segments) if s.base_offset <= recovery_point), default=0)
    unflushed = set() if p.clean_shutdown else set(range(floor, len(segments)))
    cut: tuple[int, SegmentState, int, str, int | None] | None = None  # (index, segment, position, kind, offset)
    discarded_bytes = 0
    offsets: list[int] | None = None
    valid_lost = 0
    recovered: set[int] = set()
    trimmed: set[int] = set()  # cut while loading (no offset index)
    deleted: list[SegmentState] = []
    overflow: list[str] = []

    def lose(s: SegmentState, nbytes: int, first: int | None, last: int | None, batches: int) -> None:
        nonlocal discarded_bytes, offsets, valid_lost
        discarded_bytes += nbytes
        offsets = _merge(offsets, first, last)
        valid_lost += batches

    # 1. LogLoader.loadSegmentFiles: a segment without its offset index (or with a corrupt txn index) is recovered
    # as it is loaded, whatever the marker and the recovery point; only that segment is cut.
    for i, s in enumerate(segments):
        if s.has_offset_index and not s.txnindex_corrupt:
            continue
        recovered.add(i)
        if s.offset_overflow:
            overflow.append(s.file)
        elif s.regressing_batches and index_failure(s.regressing_batches, p.index_interval_bytes) is not None:
            reasons.append(f"rebuilding the index of {_name(s.file)} throws InvalidOffsetException: the broker "
                           "fails to load this log")
        elif s.stop_position is not None and s.stop_position < s.size:
            trimmed.add(i)
            lose(s, s.size - s.stop_position, s.discarded_first_offset, s.discarded_last_offset,
                 s.discarded_valid_batches)
            reasons.append(f"{_name(s.file)} has no offset index: recovered while loading and cut at byte "
                           f"{s.stop_position} ({s.stop_kind}), later segments kept")
    # 2. LogLoader.recoverLog without the marker: the unflushed segments in order, until one is truncated.
    for i in sorted(unflushed):
        s = segments[i]
        if cut is not None:
            deleted.append(s)
            lose(s, s.size, s.valid_first_offset, s.valid_last_offset, s.valid_batches)
            continue
        recovered.add(i)
        if i in trimmed or s.offset_overflow:
            if s.offset_overflow and s.file not in overflow:
                overflow.append(s.file)
            continue
        failed_at = index_failure(s.regressing_batches, p.index_interval_bytes) if s.regressing_batches else None
        if failed_at is not None:  # InvalidOffsetException: the whole segment is emptied
            lose(s, s.size, s.valid_first_offset, s.valid_last_offset, s.valid_batches)
            cut = (i, s, 0, "offset_overlap", s.base_offset)
        elif s.stop_position is not None and s.stop_position < s.size:
            lose(s, s.size - s.stop_position, s.discarded_first_offset, s.discarded_last_offset,
                 s.discarded_valid_batches)
            cut = (i, s, s.stop_position, s.stop_kind or "corrupt_crc", s.kept_next_offset)
    served = [s for i, s in enumerate(segments) if i not in recovered and s.stop_position is not None]
    remaining = [s for s in segments if all(s is not d for d in deleted)]
    if cut is not None:
        i, s, position, kind, at = cut
        row.update(truncate_at_offset=at, truncate_at_file=s.file, truncate_at_position=position)
        reasons.insert(0, f"no clean-shutdown marker: {kind} in unflushed segment {_name(s.file)} at byte {position} "
                          f"truncates the log to offset {at}"
                       + (f" and deletes {len(deleted)} later segment(s)" if deleted else ""))
    elif not p.clean_shutdown:
        reasons.insert(0, f"no clean-shutdown marker: {len(unflushed)} unflushed segment(s) from the recovery point "
                          f"{recovery_point} re-validated, nothing truncated")
    else:
        reasons.insert(0, "clean-shutdown marker: no segment is re-validated")
    # Log end below log start: every segment is deleted.
    if not remaining:
        log_end = None
    elif cut is not None and remaining[-1] is cut[1]:
        log_end = cut[4]
    elif segments.index(remaining[-1]) in trimmed:
        log_end = remaining[-1].kept_next_offset
    else:
        log_end = remaining[-1].next_offset
    wiped = log_end is not None and log_end < log_start
    if wiped:
        for s in remaining:
            shortened = cut is not None and s is cut[1] or segments.index(s) in trimmed
            if shortened:
                kept = cut[2] if cut is not None and s is cut[1] else s.stop_position or 0
                lose(s, kept, s.valid_first_offset if kept else None, s.kept_last_offset,
                     max(0, s.valid_batches - s.discarded_valid_batches) if kept else 0)
            else:
                lose(s, s.size, s.valid_first_offset, s.valid_last_offset, s.valid_batches)
        deleted = list(segments)
        row.update(truncate_at_offset=log_start, truncate_at_file=segments[0].file, truncate_at_position=0)
        reasons.append(f"log end offset {log_end} is below the log start offset {log_start}: every segment is "
                       "deleted")
    if overflow:
        reasons.append(f"offsets out of range of their segment's base offset in {', '.join(map(_name, overflow))}: "
                       "the broker splits the segment (nothing truncated)")
    row.update(segments_recovered=len(recovered), bytes_discarded=discarded_bytes, segments_deleted=len(deleted),
               offsets_discarded=offsets)
    if offsets is not None and p.high_watermark is not None and offsets[0] < p.high_watermark:
        row["committed_offsets_discarded"] = [offsets[0], min(offsets[1], p.high_watermark - 1)]
    row["reason"] = "; ".join(reasons)
    _findings(p, out, cut, wiped, valid_lost, recovery_point, served)
    return out


def _name(file: str) -> str:
    return file.rsplit("/", 1)[-1]


def _findings(p: PartitionState, out: Prediction, cut: tuple | None, wiped: bool, valid_lost: int,
              recovery_point: int, served: list[SegmentState]) -> None:
    row = out.row
    fields = {"truncate_at_offset": row["truncate_at_offset"], "bytes_discarded": row["bytes_discarded"],
              "segments_deleted": row["segments_deleted"], "offsets_discarded": row["offsets_discarded"],
              "committed_offsets_discarded": row["committed_offsets_discarded"], "recovery_point": recovery_point}
    if cut is not None or wiped:
        if cut is not None:
            _, s, position, kind, _ = cut
            file, at = s.file, (position if kind != "offset_overlap" else 0)
        else:
            s, kind, file, at = p.segments[0], "log_end_below_log_start", p.segments[0].file, 0
        if valid_lost or wiped:
            out.findings.append((Finding(
                "restart_would_truncate", file, at,
                f"a restart without a clean shutdown would discard {row['bytes_discarded']} bytes "
                f"({valid_lost} valid batches, offsets {_range(row['offsets_discarded'])}"
                + (f", committed {_range(row['committed_offsets_discarded'])}"
                   if row["committed_offsets_discarded"] else "")
                + f") of {p.topic}-{p.partition} behind {kind} at byte {at} of {_name(file)}"
                + (f" and delete {row['segments_deleted']} segment(s)" if row["segments_deleted"] else ""),
                {**fields, "damage_kind": kind}), row["truncate_at_offset"]))
        else:
            out.findings.append((Finding(
                "restart_trims_tail", file, at,
                f"a restart would trim the damaged tail of {_name(file)} ({row['bytes_discarded']} bytes of "
                f"{kind}, no valid batch behind it): what recovery is for",
                {"truncate_at_offset": row["truncate_at_offset"], "bytes_discarded": row["bytes_discarded"],
                 "damage_kind": kind, "recovery_point": recovery_point}), row["truncate_at_offset"]))
    for s in served:
        where = "with a clean-shutdown marker" if p.clean_shutdown else f"below the recovery point {recovery_point}"
        out.findings.append((Finding(
            "damage_below_recovery_point", s.file, s.stop_position,
            f"{s.stop_kind} at byte {s.stop_position} of {_name(s.file)} ({where}): a restart does not re-validate "
            "this segment, the damaged batch stays and is served to consumers as is",
            {"damage_kind": s.stop_kind, "recovery_point": recovery_point, "clean_shutdown": p.clean_shutdown}),
            s.kept_next_offset))


def _range(span: list[int] | None) -> str:
    return "none" if span is None else f"{span[0]}-{span[1]}"


def segment_state(path: str, base_offset: int, *, has_offset_index: bool = True, name: str | None = None) -> SegmentState:
    """A local `.log` file's SegmentState, from its batch headers (the scan builds the same from its tables)."""
    from kforensics.parsers.record_batch import RecordBatch, open_log

    stop: tuple[int, str] | None = None
    batches: list[RecordBatch] = []
    with open_log(path) as log:
        size = log.size
        for b in log.batches():
            if isinstance(b, RecordBatch):
                batches.append(b)
                if not b.crc_valid and stop is None:
                    stop = (b.position, "corrupt_crc")
            elif b.kind in STOP_KINDS and (stop is None or b.position < stop[0]):  # type: ignore[operator]
                stop = (b.position or 0, b.kind)
    return state_from_batches(name or path, base_offset, size,
                              [(b.position, b.size, b.base_offset, b.last_offset, b.crc_valid, b.max_timestamp)
                               for b in batches], stop, has_offset_index=has_offset_index)


def state_from_batches(file: str, base_offset: int, size: int,
                       batches: list[tuple[int, int, int, int, bool, int]], stop: tuple[int, str] | None, *,
                       has_offset_index: bool = True, txnindex_corrupt: bool = False) -> SegmentState:
    """A SegmentState from a segment's (position, size, base_offset, last_offset, crc_valid, max_timestamp) batches
    in file order and its first stop (position, kind)."""
    stop_pos = stop[0] if stop else None
    before = [b for b in batches if stop_pos is None or b[0] < stop_pos]
    after = [b for b in batches if stop_pos is not None and b[0] > stop_pos and b[4]]
    valid = [b for b in batches if b[4]]
    regress = any(b[3] <= a[3] for a, b in zip(before, before[1:]))
    return SegmentState(
        file=file, base_offset=base_offset, size=size, has_offset_index=has_offset_index,
        txnindex_corrupt=txnindex_corrupt, stop_position=stop_pos, stop_kind=stop[1] if stop else None,
        kept_last_offset=max((b[3] for b in before), default=None),
        discarded_first_offset=min((b[2] for b in after), default=None),
        discarded_last_offset=max((b[3] for b in after), default=None), discarded_valid_batches=len(after),
        valid_first_offset=min((b[2] for b in valid), default=None),
        valid_last_offset=max((b[3] for b in valid), default=None), valid_batches=len(valid),
        last_offset=max((b[3] for b in batches), default=None),
        offset_overflow=any(not 0 <= b[3] - base_offset <= INT32_MAX for b in before),
        regressing_batches=tuple(IndexedBatch(b[0], b[1], b[3], b[5]) for b in before) if regress else None)


__all__ = ["PREDICTION_COLUMNS", "STOP_KINDS", "IndexedBatch", "PartitionState", "Prediction", "SegmentState",
           "index_failure", "predict", "segment_state", "state_from_batches"]
