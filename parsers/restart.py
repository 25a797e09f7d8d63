"""What a broker restart would do to a partition's log, replayed on the disk as it is.

The rules are Apache Kafka's log loading as of 3.9 / trunk (October 2024, 4.0.0-SNAPSHOT 1eb7644):
`LogManager.loadLogs`/`loadLog`, `LogLoader.load`/`loadSegmentFiles`/`recoverLog`, `LogSegment.sanityCheck`/
`recover`, `TransactionIndex.sanityCheck`, `LocalLog.splitOverflowedSegment`/`parseTopicPartitionName`,
`FileLogInputStream.nextBatch`, `DefaultRecordBatch.ensureValid`:

- The clean-shutdown marker `.kafka_cleanshutdown` at the log dir root (any content: KRaft brokers since 3.7 write
  the broker epoch into it) makes the whole log dir skip `recoverLog` (`LogManager.loadLogs`, KAFKA-10471).
- A directory of the log dir that is not `remote-log-index-cache` and not in the form topic-partition makes
  `LogManager.loadLogs` throw KafkaException outside its IOException handling: the broker does not start.
- Recovery point and log start offset per partition come from `recovery-point-offset-checkpoint` and
  `log-start-offset-checkpoint`, by TopicPartition (a `-future` or `-stray` dir gets its partition's); a partition
  absent from them gets 0, and a checkpoint the broker cannot read resets every partition of the dir to 0.
- `LogSegment.recover` walks the batches as `FileLogInputStream.nextBatch` frames them: a magic byte read as a
  signed byte >= 2 is a v2 batch (a flipped magic byte 3..127 keeps a valid CRC: `DefaultRecordBatch.ensureValid`
  checks the size and a CRC that starts at the attributes), below 2 a legacy one; the walk ends where it cannot
  frame a batch (fewer than 17 bytes left, a size below 14, a batch past the file end), and at the first batch
  `ensureValid` rejects (size, CRC). Everything from there is truncated: the bytes behind it are lost even where
  they hold valid batches (counted here by resynchronising on the next batch whose CRC holds). Records are not
  decoded but for the first record of a control batch with a producer id, which `updateProducerState` reads as an
  end transaction marker (`ProducerAppendInfo.append`, `EndTransactionMarker.deserialize`): an
  InvalidRecordException (a key or value too short, a negative version) is caught and the segment truncated right
  after that batch (its bytes were already counted valid); a control type other than ABORT/COMMIT
  (IllegalArgumentException) or a null key or value (NullPointerException) is not caught: the load fails. Damage
  inside any other batch whose CRC holds passes recovery.
  `ensureOffsetInRange` throws `LogSegmentOffsetOverflowException` for a last offset not representable relative to
  the segment's base offset; the loader then splits the segment (`splitOverflowedSegment`), whose
  `require(segment.hasOverflow())` holds only for an upward overflow of the segment's last offset: a batch below
  the base offset fails the load (IllegalArgumentException). The offset and time indexes are rebuilt every
  `index.interval.bytes` (4096 by default): an entry whose offset is not above the previous one throws
  `InvalidOffsetException`.
- `LogLoader.loadSegmentFiles` runs `sanityCheck` on every segment, whatever the marker and the recovery point: a
  missing `.index` (NoSuchFileException), or a `.txnindex` entry whose last offset is below the segment's base
  offset (CorruptIndexException), recovers that segment while loading: it is cut at its first invalid batch, later
  segments are kept. A `.txnindex` entry of version > 0 throws KafkaException, and so does an
  `InvalidOffsetException` there: the log fails to load and the broker does not start.
- Without the marker, `recoverLog` recovers the unflushed segments `segments.values(recoveryPoint, MAX)`: the
  segment holding the recovery point (the floor of it) and every later one, in order. The first segment whose
  recovery truncates bytes is cut there and every later unflushed segment is deleted ("Corruption found in
  segment ..., truncating to offset ..."); an `InvalidOffsetException` empties that segment
  (`segment.truncateTo(baseOffset)`). A log end offset below the log start offset then deletes every segment
  (`deleteSegmentsIfLogStartGreaterThanLogEnd`).
- `.deleted` files are deleted, `.cleaned` files are deleted with every `.swap` at or above the lowest `.cleaned`
  offset, and the remaining `.swap` files replace the segments they cover (an interrupted compaction or split
  completes with the cleaned copy: a pending swap is not modelled here). `LogLoader.load` skips `recoverLog` only
  for a `-delete` dir (loaded, then deleted); `-future` and `-stray` dirs are recovered like live ones.

Pure Python and no I/O but `segment_state` (which walks one local `.log` file): the scan's executors feed
`SegmentRecovery` from their own walk of each segment (spark/read.py) and `predict` from its rows
(spark/restart.py), the tests from segments they build.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kforensics.parsers.findings import Finding

if TYPE_CHECKING:
    from kforensics.parsers.record_batch import LogFile, RecordBatch

#: Parser findings at which the reader stops framing a segment (`SegmentRecovery.facts` goes on from there as Kafka
#: does: a magic byte above 2 is framed as v2, anything else ends recovery's walk).
STOP_KINDS = ("truncated_tail", "zero_filled_tail", "invalid_batch_length", "unknown_magic")
#: `index.interval.bytes`' default: recovery appends an index entry once more than this many bytes went by.
DEFAULT_INDEX_INTERVAL_BYTES = 4096
INT32_MAX = 2**31 - 1
#: Topics a broker's `LogManager` does not load (KRaft's metadata log is loaded by `KafkaMetadataLog`).
NOT_LOADED_TOPICS = ("__cluster_metadata",)
#: What `LogSegment.recover` throws rather than truncating (`SegmentState.recover_throws`): offsets out of the
#: segment's range (LogSegmentOffsetOverflowException), an index entry going backwards (InvalidOffsetException), a
#: transaction marker that is not one (`EndTransactionMarker.deserialize`: IllegalArgumentException for a control
#: type other than ABORT/COMMIT, NullPointerException for a null key or value).
OFFSET_OVERFLOW_ABOVE, OFFSET_OVERFLOW_BELOW, INVALID_OFFSET, NOT_A_MARKER = (
    "offset_overflow_above", "offset_overflow_below", "invalid_offset", "not_an_end_txn_marker")
#: The stop kind of an end transaction marker `EndTransactionMarker.deserialize` rejects with InvalidRecordException
#: (a key or value too short, a negative version, a record that cannot be read): `recover` truncates right after its
#: batch, which it already counted as valid.
INVALID_MARKER = "invalid_end_txn_marker"
_INT16 = struct.Struct(">h")


@dataclass(frozen=True)
class IndexedBatch:
    """What index rebuilding reads of one batch."""

    position: int
    size: int
    last_offset: int
    max_timestamp: int


class _IndexRebuild:
    """`LogSegment.recover`'s offset and time index appends, replayed: `append` is False for the batch whose
    `OffsetIndex.append` (an offset not above the last entry's) or `TimeIndex.maybeAppend` (an offset below the last
    entry's) throws `InvalidOffsetException`."""

    __slots__ = ("interval", "valid_bytes", "last_index_entry", "index_last", "time_last", "max_ts", "max_ts_offset")

    def __init__(self, interval: int) -> None:
        self.interval = interval
        self.valid_bytes = self.last_index_entry = 0
        self.index_last: int | None = None
        self.time_last: tuple[int, int] | None = None
        self.max_ts = self.max_ts_offset = -1

    def append(self, size: int, last_offset: int, max_timestamp: int) -> bool:
        if max_timestamp > self.max_ts:
            self.max_ts, self.max_ts_offset = max_timestamp, last_offset
        if self.valid_bytes - self.last_index_entry > self.interval:
            if self.index_last is not None and last_offset <= self.index_last:
                return False
            self.index_last = last_offset
            if self.time_last is None or self.max_ts > self.time_last[0]:
                if self.time_last is not None and self.max_ts_offset < self.time_last[1]:
                    return False
                self.time_last = (self.max_ts, self.max_ts_offset)
            self.last_index_entry = self.valid_bytes
        self.valid_bytes += size
        return True


def index_failure(batches: tuple[IndexedBatch, ...], interval: int) -> int | None:
    """The byte position of the batch whose index append throws `InvalidOffsetException` while `LogSegment.recover`
    rebuilds the indexes, or None."""
    rebuild = _IndexRebuild(interval)
    for b in batches:
        if not rebuild.append(b.size, b.last_offset, b.max_timestamp):
            return b.position
    return None


class SegmentRecovery:
    """`LogSegment.recover` replayed over one segment, fed the reader's batches and findings in file order (`add`),
    then ended on the file (`facts`). O(1) memory: the scan's executors feed it from their one walk of a segment.
    Before the stop every batch is valid (the first invalid one is the stop), after it the valid ones are
    discarded: the segment's valid batches are the two together."""

    __slots__ = ("log", "base_offset", "_index", "_framing", "_resynced", "stop_position", "stop_kind",
                 "stop_batch_position", "kept_batches", "kept_first_offset", "kept_last_offset",
                 "discarded_first_offset", "discarded_last_offset", "discarded_valid_batches", "_framed_last_offset",
                 "recover_throws", "recover_throws_position")

    def __init__(self, log: LogFile, base_offset: int,
                 index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES) -> None:
        self.log = log
        self.base_offset = base_offset
        self._index = _IndexRebuild(index_interval_bytes)
        self._framing: tuple[int, str] | None = None  # where the reader stopped framing, and its finding
        self._resynced = False
        self.stop_position: int | None = None
        self.stop_kind: str | None = None
        self.stop_batch_position: int | None = None  # the batch that ends the walk when it is kept (a marker)
        self.kept_batches = 0
        self.kept_first_offset: int | None = None
        self.kept_last_offset: int | None = None
        self.discarded_first_offset: int | None = None
        self.discarded_last_offset: int | None = None
        self.discarded_valid_batches = 0
        self._framed_last_offset: int | None = None  # framed from the stop on, before any resync
        self.recover_throws: str | None = None
        self.recover_throws_position: int | None = None

    def add(self, b: RecordBatch | Finding) -> None:
        """One item of `LogFile.batches()`, in file order."""
        if isinstance(b, Finding):
            if b.kind in STOP_KINDS:
                self._framing = (b.position or 0, b.kind)
            return
        last_offset = b.last_offset
        if self.stop_position is None and b.crc_valid:  # nearly every batch: one recovery keeps
            self.kept_batches += 1
            if self.kept_first_offset is None or b.base_offset < self.kept_first_offset:
                self.kept_first_offset = b.base_offset
            if self.kept_last_offset is None or last_offset > self.kept_last_offset:
                self.kept_last_offset = last_offset
            if self.recover_throws is None:
                relative = last_offset - self.base_offset
                index = self._index
                if relative < 0 or relative > INT32_MAX:  # ensureOffsetInRange
                    self.recover_throws = OFFSET_OVERFLOW_BELOW if relative < 0 else OFFSET_OVERFLOW_ABOVE
                elif b.max_timestamp <= index.max_ts and index.valid_bytes - index.last_index_entry <= index.interval:
                    index.valid_bytes += b.size  # no index entry due
                elif not index.append(b.size, last_offset, b.max_timestamp):
                    self.recover_throws = INVALID_OFFSET
                # updateProducerState: a control batch with a producer id goes through EndTransactionMarker
                if self.recover_throws is None and b.is_control and b.producer_id >= 0 and b.magic >= 2:
                    marker = self._marker_problem(b)
                    if marker == INVALID_MARKER:
                        self.stop_position, self.stop_kind = b.position + b.size, INVALID_MARKER
                        self.stop_batch_position = b.position
                    elif marker is not None:
                        self.recover_throws = marker
                if self.recover_throws is not None:
                    self.recover_throws_position = b.position
            return
        if self.stop_position is None:  # ensureValid throws CorruptRecordException: recover truncates here
            self.stop_position, self.stop_kind = b.position, "corrupt_crc"
        if not self._resynced and (self._framed_last_offset is None or last_offset > self._framed_last_offset):
            self._framed_last_offset = last_offset
        if b.crc_valid:
            self.discarded_valid_batches += 1
            if self.discarded_first_offset is None or b.base_offset < self.discarded_first_offset:
                self.discarded_first_offset = b.base_offset
            if self.discarded_last_offset is None or last_offset > self.discarded_last_offset:
                self.discarded_last_offset = last_offset

    def _marker_problem(self, b: RecordBatch) -> str | None:
        """What `ProducerAppendInfo.append` throws on a control batch's first record, read as an end transaction
        marker (`ControlRecordType.parseTypeId`, `EndTransactionMarker.deserializeValue`): INVALID_MARKER
        (InvalidRecordException), NOT_A_MARKER (an exception `recover` does not catch), or None."""
        if b.count == 0:  # an empty control batch: its transaction was cleaned away, nothing to append
            return None
        # read as v2 whatever the magic byte above 2 says, as FileLogInputStream frames the batch
        first = self.log.control_record(b) if b.count > 0 else None
        if first is None:  # a record that cannot be read (or a negative count)
            return INVALID_MARKER
        key, value = first.key, first.value
        if key is None or value is None:
            return NOT_A_MARKER
        if len(key) < 4 or _INT16.unpack_from(key)[0] < 0:
            return INVALID_MARKER
        if _INT16.unpack_from(key, 2)[0] not in (0, 1):  # ABORT, COMMIT
            return NOT_A_MARKER
        if len(value) < 6 or _INT16.unpack_from(value)[0] < 0:
            return INVALID_MARKER
        return None

    def facts(self) -> dict[str, Any]:
        """Ends the walk on the segment's file where the reader stopped framing: a batch whose magic byte is above 2
        is framed as Kafka frames it (`LogFile.frame_as_v2`) and the walk goes on; anything else Kafka cannot frame
        ends recovery's walk there, and the bytes behind it are resynchronised (`LogFile.resync`) only to count the
        valid batches recovery throws away with them. Returns the recovery fields of `SegmentState`."""
        log = self.log
        while self._framing is not None:
            position, kind = self._framing
            self._framing = None
            batch = log.frame_as_v2(position) if kind == "unknown_magic" else None
            if batch is not None and batch.crc_valid:
                self.add(batch)
                resume: int | None = position + batch.size
            else:
                if self.stop_position is None:
                    self.stop_position, self.stop_kind = position, kind
                resume = None if kind == "zero_filled_tail" else log.resync(position + 1, self.base_offset,
                                                                           self.base_offset + INT32_MAX)
                self._resynced = self._resynced or resume is not None
            if resume is not None:
                for item in log.batches(start=resume):
                    self.add(item)
        return {
            "stop_position": self.stop_position, "stop_kind": self.stop_kind,
            "stop_batch_position": self.stop_batch_position,
            "kept_first_offset": self.kept_first_offset, "kept_last_offset": self.kept_last_offset,
            "discarded_first_offset": self.discarded_first_offset,
            "discarded_last_offset": self.discarded_last_offset,
            "discarded_valid_batches": self.discarded_valid_batches,
            "valid_first_offset": _extreme(min, self.kept_first_offset, self.discarded_first_offset),
            "valid_last_offset": _extreme(max, self.kept_last_offset, self.discarded_last_offset),
            "valid_batches": self.kept_batches + self.discarded_valid_batches,
            "last_offset": _extreme(max, self.kept_last_offset, self._framed_last_offset),
            "recover_throws": self.recover_throws, "recover_throws_position": self.recover_throws_position}


def _extreme(pick: Any, a: int | None, b: int | None) -> int | None:
    return a if b is None else b if a is None else pick(a, b)


@dataclass(frozen=True)
class SegmentState:
    """One segment as log loading sees it. Offsets of `valid_*` are those of the batches whose CRC holds (behind
    bytes Kafka cannot frame, those found by resynchronising)."""

    file: str
    base_offset: int  # from the file name
    size: int
    has_offset_index: bool = True
    #: What `TransactionIndex.sanityCheck` throws on the `.txnindex` (run only when the `.index` exists):
    #: "corrupt" (an entry whose last offset is below the base offset: CorruptIndexException, the segment is
    #: recovered while loading), "unknown_version" (an entry of version > 0: KafkaException, the load fails).
    txnindex_error: str | None = None
    txnindex_error_position: int | None = None  # that entry's byte position in the .txnindex
    stop_position: int | None = None  # first byte `recover` rejects; None when every byte is a valid batch
    stop_kind: str | None = None  # corrupt_crc, INVALID_MARKER or one of STOP_KINDS
    stop_batch_position: int | None = None  # for INVALID_MARKER: the marker's batch (kept; the cut is after it)
    kept_first_offset: int | None = None  # of the batches before the stop
    kept_last_offset: int | None = None
    discarded_first_offset: int | None = None  # valid batches after the stop
    discarded_last_offset: int | None = None
    discarded_valid_batches: int = 0
    valid_first_offset: int | None = None  # all valid batches of the segment
    valid_last_offset: int | None = None
    valid_batches: int = 0
    last_offset: int | None = None  # of every framed batch (readNextOffset - 1 as the files are)
    #: What `recover` throws at a batch before its stop (OFFSET_OVERFLOW_ABOVE, OFFSET_OVERFLOW_BELOW,
    #: INVALID_OFFSET at the default index interval, NOT_A_MARKER), and that batch's byte position.
    recover_throws: str | None = None
    recover_throws_position: int | None = None

    @property
    def kept_next_offset(self) -> int:
        """`readNextOffset` after truncating at the stop."""
        return self.base_offset if self.kept_last_offset is None else self.kept_last_offset + 1

    @property
    def next_offset(self) -> int:
        """`readNextOffset` of the segment as it is."""
        return self.base_offset if self.last_offset is None else self.last_offset + 1

    @property
    def has_overflow(self) -> bool:
        """`LogSegment.hasOverflow`: the segment's last offset is above what its base offset can index."""
        return self.last_offset is not None and self.last_offset - self.base_offset > INT32_MAX


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
    dir_state: str = "live"  # live, delete, future, stray (parsers/log_dir.py)
    dir: str | None = None  # the partition dir (named in the reason of a -delete, -future or -stray dir)
    #: Directories of the log dir that Kafka cannot take for a partition dir (the broker does not start).
    refused_dirs: tuple[str, ...] = ()


@dataclass
class Prediction:
    """One row of `restart_prediction` and the findings about it."""

    row: dict[str, Any]
    #: Each finding with the offset it is about (the findings table's `offset` column).
    findings: list[tuple[Finding, int | None]] = field(default_factory=list)


PREDICTION_COLUMNS = ("broker", "topic", "partition", "dir_state", "clean_shutdown", "recovery_point",
                      "segments_recovered", "truncate_at_offset", "truncate_at_file", "truncate_at_position",
                      "bytes_discarded", "segments_deleted", "offsets_discarded", "committed_offsets_discarded",
                      "restart_fails", "reason")

_SPECIAL_DIR_REASONS = {
    "delete": "directory marked for deletion (-delete): the broker loads it and deletes it",
    "future": "future replica of a move between log dirs (-future): recovered like a live log, the move's target",
    "stray": "stray replica directory (-stray): recovered like a live log, deleted once the metadata shows the "
             "partition is not assigned here",
}


@dataclass(frozen=True)
class _Cut:
    """A segment truncated by recovery: at byte `position` (where its offsets end: `offset`), for damage of `kind`
    at byte `damage_position`."""

    segment: SegmentState
    position: int
    damage_position: int
    kind: str
    offset: int


@dataclass(frozen=True)
class _Failure:
    """What makes the log fail to load: the exception, where it is thrown, the file and byte it is about."""

    exception: str
    where: str
    file: str
    position: int | None
    damage_kind: str
    why: str
    offset: int | None


@dataclass
class _Loss:
    bytes: int = 0
    offsets: list[int] | None = None
    valid_batches: int = 0

    def add(self, nbytes: int, first: int | None, last: int | None, batches: int) -> None:
        self.bytes += nbytes
        self.valid_batches += batches
        if first is not None and last is not None:
            self.offsets = [first, last] if self.offsets is None else [min(self.offsets[0], first),
                                                                       max(self.offsets[1], last)]


def _name(file: str) -> str:
    return file.rsplit("/", 1)[-1]


def _damage(s: SegmentState) -> int | None:
    """The byte position of the batch that ends `recover`'s walk of `s`."""
    return s.stop_position if s.stop_batch_position is None else s.stop_batch_position


def _throws(s: SegmentState, where: str) -> _Failure | None:
    """The load failure of recovering `s` (`where`: the caller that does not catch it), or None."""
    if s.recover_throws == NOT_A_MARKER:
        return _Failure("IllegalArgumentException", "EndTransactionMarker.deserialize", s.file,
                        s.recover_throws_position, "not_an_end_txn_marker",
                        f"the control batch at byte {s.recover_throws_position} of {_name(s.file)} has a producer id "
                        "but its record is not an ABORT or COMMIT marker (or has a null key or value): "
                        "ProducerAppendInfo.append throws an exception LogSegment.recover does not catch",
                        s.base_offset)
    if s.recover_throws == INVALID_OFFSET and where == "LogLoader.loadSegmentFiles":
        return _Failure("InvalidOffsetException", where, s.file, s.recover_throws_position, "offset_overlap",
                        f"rebuilding the index of {_name(s.file)} throws InvalidOffsetException at byte "
                        f"{s.recover_throws_position} (offsets going backwards), which {where} does not catch",
                        s.base_offset)
    if s.recover_throws == OFFSET_OVERFLOW_BELOW and not s.has_overflow:
        return _Failure("IllegalArgumentException", "LocalLog.splitOverflowedSegment", s.file,
                        s.recover_throws_position, "offset_overflow",
                        f"a batch at byte {s.recover_throws_position} of {_name(s.file)} has offsets below its base "
                        f"offset {s.base_offset}: LogSegmentOffsetOverflowException, and splitting the segment fails "
                        "its require(segment.hasOverflow())", s.base_offset)
    return None


def predict(p: PartitionState) -> Prediction:
    """The restart prediction of one partition dir (see the module docstring for the rules)."""
    key = {"broker": p.broker, "topic": p.topic, "partition": p.partition, "dir_state": p.dir_state}
    recovery_point = 0 if p.recovery_point is None or p.recovery_checkpoint_unreadable else p.recovery_point
    log_start = p.log_start_offset or 0
    row: dict[str, Any] = {**key, "clean_shutdown": p.clean_shutdown, "recovery_point": recovery_point,
                           "segments_recovered": 0, "truncate_at_offset": None, "truncate_at_file": None,
                           "truncate_at_position": None, "bytes_discarded": 0, "segments_deleted": 0,
                           "offsets_discarded": None, "committed_offsets_discarded": None,
                           "restart_fails": bool(p.refused_dirs), "reason": ""}
    out = Prediction(row)
    if p.topic in NOT_LOADED_TOPICS:
        row.update(recovery_point=None, bytes_discarded=None, segments_deleted=None,
                   reason=f"{p.topic} is loaded by the KRaft metadata log, not by LogManager: not predicted")
        return out
    reasons: list[str] = []
    recover_log = p.dir_state != "delete"  # LogLoader.load skips recoverLog for a -delete dir only
    if recover_log and p.recovery_checkpoint_unreadable:
        reasons.append("recovery-point-offset-checkpoint is unreadable: the broker recovers from offset 0")
    elif recover_log and p.recovery_point is None:
        reasons.append("not in recovery-point-offset-checkpoint: the broker recovers from offset 0")
    segments = list(p.segments)
    # Unflushed: the segment holding the recovery point and every later one (LogSegments.values(from, MAX)).
    floor = max((i for i, s in enumerate(segments) if s.base_offset <= recovery_point), default=0)
    unflushed = range(floor, len(segments)) if recover_log and not p.clean_shutdown else range(0)
    loss = _Loss()
    cuts: dict[int, _Cut] = {}  # by segment index
    recovered: set[int] = set()
    deleted: list[int] = []
    split: list[str] = []
    failure: _Failure | None = None

    def kept(i: int) -> tuple[int, int | None, int | None, int]:
        """(bytes, first offset, last offset, valid batches) left of segment i by the cuts so far."""
        s, cut = segments[i], cuts.get(i)
        if cut is None:
            return s.size, s.valid_first_offset, s.valid_last_offset, s.valid_batches
        if cut.position == 0:
            return 0, None, None, 0
        return cut.position, s.kept_first_offset, s.kept_last_offset, s.valid_batches - s.discarded_valid_batches

    def cut_at_stop(i: int, s: SegmentState) -> None:
        loss.add(s.size - s.stop_position, s.discarded_first_offset, s.discarded_last_offset,  # type: ignore[operator]
                 s.discarded_valid_batches)
        cuts[i] = _Cut(s, s.stop_position, _damage(s), s.stop_kind or "corrupt_crc",  # type: ignore[arg-type]
                       s.kept_next_offset)

    # 1. LogLoader.loadSegmentFiles: sanityCheck on every segment, whatever the marker and the recovery point.
    for i, s in enumerate(segments):
        if s.has_offset_index and s.txnindex_error == "unknown_version":
            txnindex = s.file[: -len(".log")] + ".txnindex" if s.file.endswith(".log") else s.file
            failure = _Failure("KafkaException", "TransactionIndex.sanityCheck", txnindex, s.txnindex_error_position,
                               "txnindex_bad_entry", f"{_name(txnindex)} holds an entry of version > 0 at byte "
                               f"{s.txnindex_error_position}: TransactionIndex throws KafkaException", s.base_offset)
            break
        if s.has_offset_index and s.txnindex_error != "corrupt":
            continue
        recovered.add(i)
        why = "has no offset index" if not s.has_offset_index else \
            "has a .txnindex entry whose last offset is below its base offset (CorruptIndexException)"
        failure = _throws(s, "LogLoader.loadSegmentFiles")
        if failure is not None:
            break
        if s.recover_throws is not None:
            split.append(s.file)
        elif s.stop_position is not None and s.stop_position < s.size:
            cut_at_stop(i, s)
            reasons.append(f"{_name(s.file)} {why}: recovered while loading and cut at byte {s.stop_position} "
                           f"({s.stop_kind}) to offset {s.kept_next_offset}, later segments kept")
    # 2. LogLoader.recoverLog without the marker: the unflushed segments in order, until one is truncated.
    truncated: _Cut | None = None
    for i in unflushed if failure is None else ():
        s = segments[i]
        if truncated is not None:  # "Corruption found in segment ...": every later unflushed segment is deleted
            deleted.append(i)
            loss.add(*kept(i))
            continue
        recovered.add(i)
        if i in cuts:  # cut while loading: nothing more to truncate
            continue
        failure = _throws(s, "LogLoader.recoverLog")
        if failure is not None:
            break
        if s.recover_throws == INVALID_OFFSET:  # caught: the segment is emptied (truncateTo(baseOffset))
            loss.add(s.size, s.valid_first_offset, s.valid_last_offset, s.valid_batches)
            truncated = cuts[i] = _Cut(s, 0, s.recover_throws_position or 0, "offset_overlap", s.base_offset)
        elif s.recover_throws is not None:
            split += [] if s.file in split else [s.file]
        elif s.stop_position is not None and s.stop_position < s.size:
            cut_at_stop(i, s)
            truncated = cuts[i]
    if truncated is not None:
        reasons.insert(0, f"no clean-shutdown marker: {truncated.kind} in unflushed segment "
                          f"{_name(truncated.segment.file)} at byte {truncated.damage_position} truncates the log to offset {truncated.offset}"
                          + (f" and deletes {len(deleted)} later segment(s)" if deleted else ""))
    elif recover_log and not p.clean_shutdown:
        reasons.insert(0, f"no clean-shutdown marker: {len(unflushed)} unflushed segment(s) from the recovery point "
                          f"{recovery_point} re-validated, nothing truncated")
    elif recover_log:
        reasons.insert(0, "clean-shutdown marker: recoverLog re-validates no segment")
    # 3. recoverLog: a log end offset below the log start offset deletes every segment.
    remaining = [i for i in range(len(segments)) if i not in deleted]
    wiped = False
    if remaining and failure is None and recover_log:
        last = remaining[-1]
        log_end = cuts[last].offset if last in cuts else segments[last].next_offset
        if log_end < log_start:
            wiped = True
            for i in remaining:
                loss.add(*kept(i))
            deleted = list(range(len(segments)))
            reasons.append(f"log end offset {log_end} is below the log start offset {log_start}: every segment is "
                           "deleted")
    if split:
        reasons.append(f"offsets above the range of their segment's base offset in {', '.join(map(_name, split))}: "
                       "the broker splits the segment (nothing truncated)")
    if failure is not None:
        row["restart_fails"] = True
        reasons.insert(0, f"the log fails to load: {failure.why} ({failure.where}); the broker does not start")
    if p.refused_dirs:
        reasons.insert(0, f"the broker does not start: its log dir holds {', '.join(map(_name, p.refused_dirs))}, "
                          "not in the form topic-partition (LogManager.loadLogs throws KafkaException)")
    if p.dir_state != "live":
        reasons.append(f"{p.dir or p.topic}: {_SPECIAL_DIR_REASONS[p.dir_state]}")
    first = cuts[min(cuts)] if cuts else None
    if wiped:
        row.update(truncate_at_offset=log_start, truncate_at_file=segments[0].file, truncate_at_position=0)
    elif first is not None:
        row.update(truncate_at_offset=first.offset, truncate_at_file=first.segment.file,
                   truncate_at_position=first.position)
    row.update(segments_recovered=len(recovered), bytes_discarded=loss.bytes, segments_deleted=len(deleted),
               offsets_discarded=loss.offsets, reason="; ".join(reasons))
    if loss.offsets is not None and p.high_watermark is not None and loss.offsets[0] < p.high_watermark:
        row["committed_offsets_discarded"] = [loss.offsets[0], min(loss.offsets[1], p.high_watermark - 1)]
    if failure is not None:
        _failure_finding(p, out, failure)
    if p.dir_state == "delete":  # deleted once loaded: what recovery would cut of it is not a loss
        row.update(recovery_point=None, segments_recovered=None, truncate_at_offset=None, truncate_at_file=None,
                   truncate_at_position=None, bytes_discarded=None, segments_deleted=None, offsets_discarded=None,
                   committed_offsets_discarded=None)
        return out
    served = [s for i, s in enumerate(segments) if i not in recovered and s.stop_position is not None
              and p.dir_state in ("live", "future")]
    _findings(p, out, first, wiped, loss.valid_batches, recovery_point, served)
    return out


def _failure_finding(p: PartitionState, out: Prediction, failure: _Failure) -> None:
    out.findings.append((Finding(
        "restart_would_fail", failure.file, failure.position,
        f"a restart of this broker would fail: {failure.why}; {p.topic}-{p.partition}"
        + ("" if p.dir_state == "live" else f" ({p.dir_state} dir)") + " cannot be loaded and the broker does not "
        "start", {"exception": failure.exception, "thrown_by": failure.where, "damage_kind": failure.damage_kind,
                  "dir_state": p.dir_state}), failure.offset))


def _findings(p: PartitionState, out: Prediction, first: _Cut | None, wiped: bool, valid_lost: int,
              recovery_point: int, served: list[SegmentState]) -> None:
    row = out.row
    fields = {"truncate_at_offset": row["truncate_at_offset"], "bytes_discarded": row["bytes_discarded"],
              "segments_deleted": row["segments_deleted"], "offsets_discarded": row["offsets_discarded"],
              "committed_offsets_discarded": row["committed_offsets_discarded"], "recovery_point": recovery_point,
              "dir_state": p.dir_state}
    where = "" if p.dir_state == "live" else f" ({p.dir_state} dir)"
    if first is not None or wiped:
        if first is not None:
            file, at, kind = first.segment.file, first.damage_position, first.kind
        else:
            file, at, kind = p.segments[0].file, 0, "log_end_below_log_start"
        if valid_lost or wiped:
            out.findings.append((Finding(
                "restart_would_truncate", file, at,
                f"a restart of this broker would discard {row['bytes_discarded']} bytes ({valid_lost} valid batches, "
                f"offsets {_range(row['offsets_discarded'])}"
                + (f", committed {_range(row['committed_offsets_discarded'])}"
                   if row["committed_offsets_discarded"] else "")
                + f") of {p.topic}-{p.partition}{where} behind {kind} at byte {at} of {_name(file)}"
                + (f" and delete {row['segments_deleted']} segment(s)" if row["segments_deleted"] else ""),
                {**fields, "damage_kind": kind}), row["truncate_at_offset"]))
        else:
            out.findings.append((Finding(
                "restart_trims_tail", file, at,
                f"a restart would trim the damaged tail of {_name(file)}{where} ({row['bytes_discarded']} bytes of "
                f"{kind}, no valid batch behind it): what recovery is for",
                {"truncate_at_offset": row["truncate_at_offset"], "bytes_discarded": row["bytes_discarded"],
                 "damage_kind": kind, "recovery_point": recovery_point, "dir_state": p.dir_state}),
                row["truncate_at_offset"]))
    for s in served:
        state = "with a clean-shutdown marker" if p.clean_shutdown else f"below the recovery point {recovery_point}"
        out.findings.append((Finding(
            "damage_below_recovery_point", s.file, _damage(s),
            f"{s.stop_kind} at byte {_damage(s)} of {_name(s.file)}{where} ({state}): a restart does not "
            "re-validate this segment, the damaged batch stays and is served to consumers as is",
            {"damage_kind": s.stop_kind, "recovery_point": recovery_point, "clean_shutdown": p.clean_shutdown}),
            s.kept_next_offset))


def _range(span: list[int] | None) -> str:
    return "none" if span is None else f"{span[0]}-{span[1]}"


def segment_state(path: str, base_offset: int, *, has_offset_index: bool = True, name: str | None = None,
                  index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES, txnindex_error: str | None = None,
                  txnindex_error_position: int | None = None) -> SegmentState:
    """A local `.log` file's SegmentState from its own walk (the scan's executors feed `SegmentRecovery` the same
    way)."""
    from kforensics.parsers.record_batch import open_log

    with open_log(path) as log:
        walk = SegmentRecovery(log, base_offset, index_interval_bytes)
        for item in log.batches():
            walk.add(item)
        facts = walk.facts()
        size = log.size
    return SegmentState(file=name or path, base_offset=base_offset, size=size, has_offset_index=has_offset_index,
                        txnindex_error=txnindex_error, txnindex_error_position=txnindex_error_position, **facts)


__all__ = ["PREDICTION_COLUMNS", "STOP_KINDS", "IndexedBatch", "PartitionState", "Prediction",
           "SegmentRecovery", "SegmentState", "index_failure", "predict", "segment_state"]
