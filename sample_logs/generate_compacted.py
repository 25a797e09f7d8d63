"""Write sample_logs/compacted-1: a broker whose compacted partitions the log cleaner has cleaned, and
sample_logs/EXPECTED-compacted.json (deterministic: the same bytes on every run).

The partitions are first appended as their producers wrote them, by generate.py's writers (kafka-python's
DefaultRecordBatchBuilder for the batches, PartitionWriter for base offsets, indexes, the `.txnindex`, producer
state and snapshots), then cleaned in rounds by a simulation of Kafka's log cleaner as apache/kafka trunk has it
(storage/.../internals/log/Cleaner.java at 08528988; CleanedTransactionMetadata.java and clients/.../record/
MemoryRecords.filterTo, buildRetainedRecordsInto at c4342d76; MemoryRecordsBuilder, DefaultRecordBatch.writeEmptyHeader,
LocalLog.replaceSegments, UnifiedLog.deleteProducerSnapshots, LogSegment.append at 1eb76443, 4.0.0-SNAPSHOT):

- buildOffsetMap: key -> latest offset over the dirty section (from the last checkpoint to the first uncleanable
  offset, the active segment's base here), skipping control batches and aborted data (from the `.txnindex`);
- cleanSegments: every segment below that offset is cleaned, as one group, into one segment named for the first
  one's base offset (a merged segment); its offset and time indexes rebuilt as LogSegment.append writes them; the
  producer snapshots of the segments merged away deleted;
- checkBatchRetention: aborted data is discarded; a marker may go once no batch of its transaction is left
  (CleanedTransactionMetadata), first getting a delete horizon (KIP-534: attributes bit 6, baseTimestamp =
  now + delete.retention.ms), then removed past it; the batch holding an active producer's last data offset, and
  the last batch of the round, are kept even when empty (RETAIN_EMPTY: a 61-byte header, count 0, codec none,
  baseTimestamp -1); other batches left without records are deleted (DELETE_EMPTY);
- shouldRetainRecord: a record stays if it is the latest of its key (or past the map); a tombstone gets a delete
  horizon and goes once past it;
- a rewritten batch keeps its baseOffset, its original lastOffset (overrideLastOffset), baseSequence, producer id
  and epoch, partition leader epoch and codec: offsets and sequences inside it have holes;
- the cleaned segment's `.txnindex` keeps the AbortedTxn (as first written) of each ABORT marker kept because
  batches of its transaction were seen; cleaner-offset-checkpoint is the end of the last round.

Nothing here uses kforensics: the files are the oracle. EXPECTED-compacted.json is this script's bookkeeping.

    python sample_logs/generate_compacted.py [OUT_DIR]      (default: the folder this script is in)
"""

from __future__ import annotations

import json
import random
import shutil
import struct
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import generate as g
from crc32c import crc32c
from kafka.record.default_records import DefaultRecordBatchBuilder

BROKER = "compacted-1"
#: segment.index.bytes of the sample broker (the default is 10 MiB): the active segments' preallocated indexes
INDEX_BYTES = 4096
#: delete.retention.ms of the compacted topics (the default is a day): how long a delete horizon lasts
DELETE_RETENTION_MS = 3_600_000
MINUTE_MS = 60_000
ATTR_TRANSACTIONAL, ATTR_CONTROL, ATTR_DELETE_HORIZON = 0x10, 0x20, 0x40


@dataclass
class Rec:
    offset: int
    timestamp: int
    key: bytes
    value: bytes | None  # None: a tombstone
    headers: tuple = ()


@dataclass
class Batch:
    """One batch on disk, with what the cleaner reads of it."""

    data: bytes
    base_offset: int
    last_offset: int
    records: list[Rec]
    max_timestamp: int
    producer_id: int = -1
    producer_epoch: int = -1
    base_sequence: int = -1
    transactional: bool = False
    control: str | None = None  # ABORT, COMMIT
    coordinator_epoch: int = -1
    codec: int = g.NONE
    leader_epoch: int = 0
    delete_horizon: int | None = None
    rewritten: str | None = None  # what the cleaner did to it: thinned, horizon, empty

    @property
    def count(self) -> int:
        return len(self.records)


# --- batches as the cleaner rewrites them -----------------------------------------------------------------------

def _record_bytes(rec: Rec, base_offset: int, base_timestamp: int) -> bytes:
    """A DefaultRecord (varints zigzag), its timestamp relative to the batch's baseTimestamp."""
    body = (b"\x00" + g.varint(rec.timestamp - base_timestamp) + g.varint(rec.offset - base_offset)
            + g.varint(len(rec.key)) + rec.key
            + (g.varint(-1) if rec.value is None else g.varint(len(rec.value)) + rec.value)
            + g.varint(len(rec.headers)))
    for name, value in rec.headers:
        body += g.varint(len(name)) + name.encode() + g.varint(len(value)) + value
    return g.varint(len(body)) + body


def _header(b: Batch, *, attributes: int, base_timestamp: int, max_timestamp: int, count: int,
            records: bytes) -> bytes:
    """A v2 batch around `records` (uncompressed), CRC-32C over [21:]: lastOffsetDelta is the original batch's."""
    header = struct.pack(">qiibIhiqqqhii", b.base_offset, 61 - 12 + len(records), b.leader_epoch, 2, 0, attributes,
                         b.last_offset - b.base_offset, base_timestamp, max_timestamp, b.producer_id,
                         b.producer_epoch, b.base_sequence, count)
    out = bytearray(header + records)
    struct.pack_into(">I", out, 17, crc32c(bytes(out[21:])))
    return bytes(out)


def _control_record(control: str, coordinator_epoch: int, offset: int, timestamp: int) -> Rec:
    key = struct.pack(">hh", 0, 1 if control == "COMMIT" else 0)
    return Rec(offset, timestamp, key, struct.pack(">hi", 0, coordinator_epoch))


def rewritten(b: Batch, kept: list[Rec], horizon: int | None) -> Batch:
    """buildRetainedRecordsInto: the kept records in a batch with the original's base offset, last offset
    (overrideLastOffset), producer id, epoch, base sequence and codec; with a delete horizon, baseTimestamp holds it
    and the records' timestamps are relative to it (MemoryRecordsBuilder)."""
    max_ts = max(r.timestamp for r in kept)
    attributes = (b.codec | (ATTR_TRANSACTIONAL if b.transactional else 0) | (ATTR_CONTROL if b.control else 0)
                  | (ATTR_DELETE_HORIZON if horizon is not None else 0))
    if horizon is None and b.control is None:
        builder = DefaultRecordBatchBuilder(magic=2, compression_type=b.codec, is_transactional=b.transactional,
                                            producer_id=b.producer_id, producer_epoch=b.producer_epoch,
                                            base_sequence=b.base_sequence, batch_size=1 << 30)
        for r in kept:
            builder.append(r.offset - b.base_offset, timestamp=r.timestamp, key=r.key, value=r.value,
                           headers=list(r.headers))
        data = bytearray(builder.build())
        struct.pack_into(">q", data, 0, b.base_offset)
        struct.pack_into(">i", data, 12, b.leader_epoch)
        struct.pack_into(">i", data, 23, b.last_offset - b.base_offset)  # overrideLastOffset
        struct.pack_into(">I", data, 17, crc32c(bytes(data[21:])))
        return replace(b, data=bytes(data), records=kept, max_timestamp=max_ts, rewritten="thinned")
    assert b.codec == g.NONE, "the sample writes the batches that get a delete horizon uncompressed"
    base_ts = horizon if horizon is not None else kept[0].timestamp
    body = b"".join(_record_bytes(r, b.base_offset, base_ts) for r in kept)
    data = _header(b, attributes=attributes, base_timestamp=base_ts, max_timestamp=max_ts, count=len(kept),
                   records=body)
    return replace(b, data=data, records=kept, max_timestamp=max_ts, delete_horizon=horizon,
                   rewritten="horizon" if horizon is not None else "thinned")


def empty_header(b: Batch) -> Batch:
    """DefaultRecordBatch.writeEmptyHeader: count 0, codec none, no delete horizon, baseTimestamp -1
    (NO_TIMESTAMP), maxTimestamp the batch's; base offset, last offset, producer id, epoch, base sequence and
    partition leader epoch kept."""
    attributes = (ATTR_TRANSACTIONAL if b.transactional else 0) | (ATTR_CONTROL if b.control else 0)
    data = _header(b, attributes=attributes, base_timestamp=-1, max_timestamp=b.max_timestamp, count=0, records=b"")
    return replace(b, data=data, records=[], codec=g.NONE, delete_horizon=None, rewritten="empty")


# --- the cleaner ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class AbortedTxn:
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


class TxnMetadata:
    """CleanedTransactionMetadata: the aborted transactions met so far, the ongoing committed ones, the cleaned
    segment's index."""

    def __init__(self) -> None:
        self.pending: list[AbortedTxn] = []  # by first offset (the PriorityQueue)
        self.ongoing_aborted: dict[int, list] = {}  # pid -> [AbortedTxn, last observed batch offset or None]
        self.ongoing_committed: set[int] = set()
        self.cleaned_index: list[AbortedTxn] = []

    def add(self, txns: list[AbortedTxn]) -> None:
        self.pending = sorted([*self.pending, *txns], key=lambda t: t.first_offset)

    def _consume_up_to(self, offset: int) -> None:
        while self.pending and self.pending[0].first_offset <= offset:
            txn = self.pending.pop(0)
            self.ongoing_aborted.setdefault(txn.producer_id, [txn, None])

    def on_control(self, b: Batch) -> bool:
        """True: the marker can go (its transaction has no batch left)."""
        self._consume_up_to(b.last_offset)
        if not b.records:  # an empty control batch was already cleaned
            return True
        if b.control == "ABORT":
            meta = self.ongoing_aborted.pop(b.producer_id, None)
            if meta is not None and meta[1] is not None:  # retain the marker until its batches are removed
                self.cleaned_index.append(meta[0])
                return False
            return True
        if b.control == "COMMIT":
            if b.producer_id in self.ongoing_committed:
                self.ongoing_committed.discard(b.producer_id)
                return False
            return True
        return False

    def on_data(self, b: Batch) -> bool:
        """True: the batch is aborted data (discarded)."""
        self._consume_up_to(b.last_offset)
        if not b.transactional:
            return False
        meta = self.ongoing_aborted.get(b.producer_id)
        if meta is not None:
            meta[1] = b.last_offset
            return True
        self.ongoing_committed.add(b.producer_id)
        return False


class Log:
    """A partition: generate.py's PartitionWriter (offsets, indexes, producer state, snapshots) and the batches of
    each of its segments, which the cleaner rewrites."""

    def __init__(self, topic: str) -> None:
        self.p = g.PartitionWriter(topic, 0)
        self.p.set_leader_epoch(0)
        self.batches: list[list[Batch]] = [[]]
        self.cleaner_offset = 0
        self.rounds: list[dict] = []
        self.seqs: dict[int, int] = {}

    def append(self, recs: list[tuple[int, bytes, bytes | None]], *, pid: int = -1, epoch: int = 0,
               transactional: bool = False, codec: int = g.NONE, skip: int = 0) -> Batch:
        """A data batch of (timestamp, key, value) records; `skip` sequence numbers lost before it."""
        seq = -1
        if pid >= 0:
            seq = (self.seqs.get((pid, epoch), 0) + skip) % 2**31
            self.seqs[(pid, epoch)] = seq + len(recs)
        data = g.data_batch([(ts, k, v, []) for ts, k, v in recs], codec=codec, producer_id=pid,
                            producer_epoch=epoch if pid >= 0 else -1, base_sequence=seq, transactional=transactional)
        fact = self.p.append(data, count=len(recs), max_ts=max(ts for ts, _k, _v in recs), producer_id=pid,
                             producer_epoch=epoch if pid >= 0 else -1, base_sequence=seq,
                             transactional=transactional, codec=codec)
        base = fact["base_offset"]
        b = Batch(bytes(data), base, fact["last_offset"], [Rec(base + i, ts, k, v) for i, (ts, k, v) in
                                                            enumerate(recs)],
                  fact["max_timestamp"], pid, epoch if pid >= 0 else -1, seq, transactional, codec=codec,
                  leader_epoch=self.p.leader_epoch)
        self.batches[-1].append(b)
        return b

    def marker(self, pid: int, commit: bool, ts: int, *, epoch: int = 0, coordinator_epoch: int = 3) -> Batch:
        data = g.control_batch(pid, epoch, commit, coordinator_epoch, ts)
        fact = self.p.append(data, count=1, max_ts=ts, producer_id=pid, producer_epoch=epoch, transactional=True,
                             control="COMMIT" if commit else "ABORT", coordinator_epoch=coordinator_epoch)
        control = "COMMIT" if commit else "ABORT"
        b = Batch(bytes(data), fact["base_offset"], fact["last_offset"],
                  [_control_record(control, coordinator_epoch, fact["base_offset"], ts)], ts, pid, epoch, -1, True,
                  control, coordinator_epoch, leader_epoch=self.p.leader_epoch)
        self.batches[-1].append(b)
        return b

    def roll(self) -> None:
        self.p.roll()
        self.batches.append([])

    def _aborted(self, start: int, upper: int) -> list[AbortedTxn]:
        """collectAbortedTransactions: the `.txnindex` entries with last offset >= start, first offset < upper."""
        out = [AbortedTxn(pid, first, last, lso) for seg in self.p.segments for pid, first, last, lso in seg.txnindex
               if last >= start and first < upper]
        return list(dict.fromkeys(out))

    def _last_records(self) -> dict[int, tuple[int | None, int]]:
        """lastRecordsOfActiveProducers: per producer its last data offset (ProducerStateEntry.lastDataOffset) and
        epoch, over the whole log (the state the broker holds)."""
        out: dict[int, tuple[int | None, int]] = {}
        for b in (b for seg in self.batches for b in seg if b.producer_id >= 0):
            last, _epoch = out.get(b.producer_id, (None, -1))
            out[b.producer_id] = (last if b.control else b.last_offset, b.producer_epoch)
        return out

    def clean(self, now: int) -> dict:
        """One round (Cleaner.doClean): every segment below the active one is cleaned into one segment."""
        upto = self.p.active.base_offset  # firstUncleanableOffset: no transaction is open at a round here
        first_dirty = self.cleaner_offset
        group = self.batches[:-1]
        # buildOffsetMap: the dirty section's keys, aborted data and markers skipped
        index_meta = TxnMetadata()
        index_meta.add(self._aborted(first_dirty, upto))
        offset_map: dict[bytes, int] = {}
        for b in (b for seg in group for b in seg):
            if b.control:
                index_meta.on_control(b)
            elif not index_meta.on_data(b):
                for r in b.records:
                    if r.offset >= first_dirty:
                        offset_map[r.key] = r.offset
        latest_offset = upto - 1
        meta = TxnMetadata()
        active = self._last_records()
        kept: list[Batch] = []
        did = {"deleted": 0, "thinned": 0, "emptied": 0, "horizon_set": 0, "markers_removed": 0, "tombstones": 0}
        for i, seg in enumerate(group):
            base = self.p.segments[i].base_offset
            upper = self.p.segments[i + 1].base_offset
            meta.add(self._aborted(base, upper))
            for b in seg:
                can_discard = meta.on_control(b) if b.control else meta.on_data(b)
                if b.control:
                    discard_records = (can_discard and b.delete_horizon is not None and b.delete_horizon <= now)
                else:
                    discard_records = can_discard
                last = active.get(b.producer_id)
                is_last = last is not None and (b.last_offset == last[0] if last[0] is not None
                                                else b.control is not None and b.producer_epoch == last[1])
                if b.producer_id >= 0 and is_last:
                    retention = "RETAIN_EMPTY"
                elif b.last_offset + 1 == upto:  # the last batch of the round keeps its offsets
                    retention = "RETAIN_EMPTY"
                elif discard_records:
                    retention = "DELETE"
                else:
                    retention = "DELETE_EMPTY"
                marker_for_empty_txn = can_discard and b.control is not None
                if retention == "DELETE":
                    did["deleted"] += 1
                    did["markers_removed"] += b.control is not None
                    continue
                if discard_records:
                    records: list[Rec] = []
                elif b.control:
                    records = list(b.records)
                else:
                    shed_deletes = b.delete_horizon is not None and now >= b.delete_horizon
                    records = [r for r in b.records if r.offset > latest_offset
                               or (r.offset >= offset_map.get(r.key, -1) and (r.value is not None or not shed_deletes))]
                    did["tombstones"] += sum(1 for r in b.records if r.value is None and r not in records)
                if records:
                    tombstones = any(r.value is None for r in records)
                    set_horizon = (tombstones or marker_for_empty_txn) and b.delete_horizon is None
                    if len(records) == len(b.records) and not set_horizon:
                        kept.append(b)
                    else:
                        horizon = now + DELETE_RETENTION_MS if set_horizon else b.delete_horizon
                        kept.append(rewritten(b, records, horizon))
                        did["horizon_set" if set_horizon else "thinned"] += 1
                elif retention == "RETAIN_EMPTY":
                    kept.append(b if not b.records and b.rewritten == "empty" else empty_header(b))
                    did["emptied"] += bool(b.records)
                else:
                    did["deleted"] += 1
                    did["markers_removed"] += b.control is not None
        merged = _segment(self.p.segments[0].base_offset, kept, meta.cleaned_index)
        for seg in self.p.segments[1:len(group)]:  # deleteProducerSnapshots of the segments merged away
            self.p.snapshots.pop(seg.base_offset, None)
        self.p.segments[:len(group)] = [merged]
        self.batches[:len(group)] = [kept]
        self.cleaner_offset = upto
        record = {"at": now, "first_dirty_offset": first_dirty, "cleaned_up_to": upto,
                  "segments_merged": len(group), **did}
        self.rounds.append(record)
        return record


def _segment(base_offset: int, batches: list[Batch], txnindex: list[AbortedTxn]) -> g.Segment:
    """The cleaned segment as LogSegment.append builds it batch by batch (index entries every
    index.interval.bytes, the time index's largest timestamp so far), with its final time index entry
    (onBecomeInactiveSegment) and the cleaned `.txnindex`."""
    seg = g.Segment(base_offset)
    for b in batches:
        position = len(seg.data)
        if b.max_timestamp > seg.max_ts:
            seg.max_ts, seg.max_ts_offset = b.max_timestamp, b.last_offset
        if seg.bytes_since_index > g.INDEX_INTERVAL_BYTES:
            seg.index.append((b.last_offset, position))
            if not seg.timeindex or seg.max_ts > seg.timeindex[-1][0]:
                seg.timeindex.append((seg.max_ts, seg.max_ts_offset))
            seg.bytes_since_index = 0
        seg.bytes_since_index += len(b.data)
        seg.data += b.data
    if seg.max_ts >= 0 and (not seg.timeindex or seg.max_ts > seg.timeindex[-1][0]):
        seg.timeindex.append((seg.max_ts, seg.max_ts_offset))
    seg.txnindex = [(t.producer_id, t.first_offset, t.last_offset, t.last_stable_offset) for t in txnindex]
    return seg


# --- the partitions ---------------------------------------------------------------------------------------------

def _value(rng: random.Random, label: str) -> bytes:
    return json.dumps({"v": label, "n": rng.randrange(10**6), "pad": "x" * rng.randrange(20, 60)}).encode()


def build_profiles(rng: random.Random, rounds: list[int]) -> tuple[Log, list[dict]]:
    """An upsert topic: idempotent producer 11000 over a few keys, with tombstones, and importer 11001 whose keys
    11000 later overwrites (its last batch kept empty), cleaned three times; then a dirty tail in which 11000 loses
    five sequence numbers (a genuine sequence gap) and 11001 writes once more."""
    log = Log("profiles")
    pid, importer = 11000, 11001
    ts = g.BASE_TS
    anomalies: list[dict] = []

    def write(keys: list[int], producer: int = pid, codec: int = g.NONE, *, tombstone: int | None = None,
              skip: int = 0) -> Batch:
        nonlocal ts
        recs = []
        for k in keys:
            ts += 1000
            recs.append((ts, f"user-{k:03d}".encode(), None if k == tombstone else _value(rng, f"user-{k}")))
        return log.append(recs, pid=producer, codec=codec, skip=skip)

    write([100, 101, 102], importer)
    write([103, 104], importer, g.LZ4)
    write([0, 1, 2])
    write([3, 4, 5], codec=g.GZIP)
    write([6, 7, 8])
    write([9, 10, 11], codec=g.GZIP)                   # thinned in round 1: 10 is written again
    write([0, 3, 6])
    write([12, 13], codec=g.GZIP)
    write([7, 8, 14], tombstone=8)                     # a delete horizon in round 1, the tombstone shed in round 2
    log.roll()
    write([1, 2, 4, 5], codec=g.LZ4)
    write([10])
    write([13, 14, 15], codec=g.LZ4)
    write([100, 101, 102, 103, 104])                   # the importer's keys, all of them
    write([5, 6])
    log.roll()
    log.clean(rounds[0])
    ts = rounds[0] + 5 * MINUTE_MS
    for keys, codec in (([0, 1], g.NONE), ([2, 3], g.ZSTD), ([14, 15], g.NONE), ([4], g.ZSTD), ([6, 7], g.NONE)):
        write(keys, codec=codec)
    log.roll()
    log.clean(rounds[1])
    ts = rounds[1] + 5 * MINUTE_MS
    write([0, 2, 4])
    write([1, 3, 5])
    write([6, 7, 16], tombstone=16)                    # a delete horizon in round 3, still ahead
    write([12, 13])
    write([0, 1])
    log.roll()
    log.clean(rounds[2])
    # the dirty tail: above the cleaner checkpoint, as appended
    ts = rounds[2] + 5 * MINUTE_MS
    write([2, 4])
    write([6, 8])
    gap = write([1, 3, 5], skip=5)                      # five sequence numbers of 11000 never reached the log
    anomalies.append({"kind": "sequence_gap", "producer_id": pid, "offset": gap.base_offset, "gap_size": 5,
                      "expected_sequence": gap.base_sequence - 5})
    write([104], importer)                              # continues the sequence of its empty batch
    write([7, 9])
    return log, anomalies


def build_changelog(rng: random.Random, rounds: list[int]) -> tuple[Log, list[dict]]:
    """A Kafka Streams changelog: transactional producer 12000 (coordinator epoch 3) committing and aborting,
    cleaned three times (aborted data removed with its ABORT marker and `.txnindex` entry kept; later the marker
    given a delete horizon and the entry dropped; past the horizon the marker removed); then a dirty tail in which
    12000 opens a transaction that never ends while repair tool 12001 writes on for 20 minutes (a hanging
    transaction, which holds the cleaner)."""
    log = Log("changelog")
    pid, repair = 12000, 12001
    ts = g.BASE_TS + 30_000
    anomalies: list[dict] = []

    def txn(keys: list[int], *, commit: bool, batches: int = 1) -> None:
        nonlocal ts
        per = max(1, len(keys) // batches)
        for i in range(0, len(keys), per):
            recs = []
            for k in keys[i:i + per]:
                ts += 400
                recs.append((ts, f"store-{k:02d}".encode(), _value(rng, f"s{k}")))
            log.append(recs, pid=pid, transactional=True)
        ts += 300
        log.marker(pid, commit, ts)
        ts += 2000

    txn([0, 1, 2, 3, 4], commit=True, batches=2)
    txn([5, 6, 7], commit=False)                    # aborted: removed in round 1
    txn([0, 1, 2], commit=True)
    txn([3, 4], commit=True)                        # with the commit above, supersedes the first transaction
    txn([8, 9], commit=True)
    log.roll()
    txn([5, 6, 7, 8], commit=True, batches=2)
    txn([10, 11], commit=True)
    log.roll()
    log.clean(rounds[0])
    ts = rounds[0] + 4 * MINUTE_MS
    txn([12, 13], commit=False)                     # aborted: removed in round 2
    txn([0, 9], commit=True)
    log.roll()
    log.clean(rounds[1])
    ts = rounds[1] + 4 * MINUTE_MS
    txn([14, 15, 16], commit=False, batches=2)      # aborted: removed in round 3, marker and entry kept
    txn([1, 10], commit=True)
    txn([2, 11], commit=True)
    log.roll()
    log.clean(rounds[2])
    # the dirty tail
    ts = rounds[2] + 4 * MINUTE_MS
    txn([3, 12], commit=True)
    ts += 1000
    first = log.append([(ts, b"store-13", _value(rng, "s13"))], pid=pid, transactional=True)
    anomalies.append({"kind": "hanging_transaction", "producer_id": pid, "offset": first.base_offset,
                      "first_offset": first.base_offset})
    for i in range(20):
        ts += MINUTE_MS
        log.append([(ts, f"repair-{i % 4}".encode(), _value(rng, "repair"))], pid=repair)
    anomalies.append({"kind": "cleaner_blocked", "producer_id": pid, "offset": first.base_offset,
                      "cleaner_offset": log.cleaner_offset, "last_stable_offset": first.base_offset,
                      "held_by_producer_id": pid, "txn_first_offset": first.base_offset,
                      "bytes_behind": sum(len(b.data) for seg in log.batches for b in seg
                                          if b.last_offset >= first.base_offset)})
    return log, anomalies


# --- EXPECTED ---------------------------------------------------------------------------------------------------

def _batch_facts(log: Log) -> list[dict]:
    out = []
    for seg, batches in zip(log.p.segments, log.batches, strict=True):
        position = 0
        for b in batches:
            out.append({"segment": f"{seg.base_offset:020d}.log", "position": position, "size": len(b.data),
                        "base_offset": b.base_offset, "last_offset": b.last_offset, "count": b.count,
                        "offsets": [r.offset for r in b.records], "producer_id": b.producer_id,
                        "producer_epoch": b.producer_epoch, "base_sequence": b.base_sequence,
                        "last_sequence": -1 if b.base_sequence < 0 else
                        (b.base_sequence + b.last_offset - b.base_offset) % 2**31,
                        "is_transactional": b.transactional, "control_type": b.control,
                        "codec": g.CODEC_NAMES[b.codec], "max_timestamp": b.max_timestamp,
                        "delete_horizon_ms": b.delete_horizon, "cleaned": b.rewritten,
                        "tombstones": sum(r.value is None for r in b.records)})
            position += len(b.data)
    return out


def _cleaned_holes(batches: list[dict], cleaner_offset: int) -> dict:
    """The sequence holes the cleaner made: consecutive surviving batches of one producer epoch whose sequences
    jump, the previous one ending more than one offset below the checkpoint."""
    holes, numbers, epochs, first = 0, 0, set(), None
    last: dict[tuple[int, int], dict] = {}
    for b in batches:
        if b["producer_id"] < 0 or b["control_type"]:
            continue
        key = (b["producer_id"], b["producer_epoch"])
        prev = last.get(key)
        if prev is not None and prev["last_offset"] + 1 < cleaner_offset:
            gap = (b["base_sequence"] - prev["last_sequence"] - 1) % 2**31
            if gap:
                holes, numbers = holes + 1, numbers + gap
                epochs.add(key)
                first = first or b
        last[key] = b
    return {"kind": "cleaned_sequence_holes", "offset": first["base_offset"], "file": first["segment"],
            "position": first["position"], "producer_id": first["producer_id"],
            "producer_epoch": first["producer_epoch"], "cleaner_offset": cleaner_offset, "holes": holes,
            "sequence_numbers": numbers, "producer_epochs": len(epochs)}


def _anomaly(a: dict, batches: list[dict]) -> dict:
    b = next(b for b in batches if b["base_offset"] == a["offset"])
    return {"file": b["segment"], "position": b["position"], "producer_epoch": b["producer_epoch"], **a}


def main(out: Path) -> None:
    shutil.rmtree(out / BROKER, ignore_errors=True)
    broker = out / BROKER
    broker.mkdir(parents=True)
    g.PREALLOCATED_INDEX_BYTES = INDEX_BYTES
    hour = 3_600_000
    rounds = [g.BASE_TS + hour, g.BASE_TS + 2 * hour, g.BASE_TS + 3 * hour + 30 * MINUTE_MS]
    logs = [build_profiles(random.Random(20251201), rounds), build_changelog(random.Random(20251202), rounds)]
    expected: dict = {"generated_by": "sample_logs/generate_compacted.py", "broker": BROKER,
                      "delete_retention_ms": DELETE_RETENTION_MS, "partitions": {}}
    hw, starts, cleaned, recovery = [], [], [], []
    for log, anomalies in logs:
        p = log.p
        p.write(broker)
        end = p.next_offset
        batches = _batch_facts(log)
        found = [_anomaly(a, batches) for a in anomalies]
        found.append(_cleaned_holes(batches, log.cleaner_offset))
        expected["partitions"][p.name] = {
            "topic": p.topic, "partition": p.partition, "cleaner_offset": log.cleaner_offset, "log_end_offset": end,
            "segments": [seg.base_offset for seg in p.segments], "rounds": log.rounds,
            "snapshots": sorted(p.snapshots), "batch_count": len(batches),
            "record_count": sum(b["count"] for b in batches),
            "aborted_ranges": [{"producer_id": pid, "first_offset": f, "last_offset": last, "last_stable_offset": lso}
                               for seg in p.segments for pid, f, last, lso in seg.txnindex],
            "anomalies": found, "batches": batches}
        hw.append((p.topic, p.partition, end))
        starts.append((p.topic, p.partition, 0))
        cleaned.append((p.topic, p.partition, log.cleaner_offset))
        # profiles-0 was never flushed since it was created: a restart recovers every segment, the merged one too
        recovery.append((p.topic, p.partition, 0 if p.topic == "profiles" else end))
    (broker / "meta.properties").write_text(
        "#\n#Thu Nov 20 13:30:00 UTC 2025\nnode.id=1\ndirectory.id=Q29tcGFjdGVkU2FtcGxlAA\nversion=1\n"
        "cluster.id=kforensics-compacted-sample\n")
    g.write_checkpoint(broker / "replication-offset-checkpoint", hw)
    g.write_checkpoint(broker / "recovery-point-offset-checkpoint", recovery)
    g.write_checkpoint(broker / "log-start-offset-checkpoint", starts)
    g.write_checkpoint(broker / "cleaner-offset-checkpoint", cleaned)
    # the incidents: changelog-0's transaction left open holds the cleaner at its first offset; profiles-0's lost
    # sequence numbers stand alone; the holes the cleaner made are notes, in none
    planted = []
    for facts in expected["partitions"].values():
        keys = {a["kind"]: g.finding_key(a["kind"], BROKER, facts["topic"], facts["partition"], a["offset"],
                                         a["producer_id"]) for a in facts["anomalies"]}
        planted += [(key, keys["hanging_transaction"] if kind == "cleaner_blocked" else None)
                    for kind, key in keys.items()]
    expected["incidents"] = g.planted_incidents(planted)
    (out / "EXPECTED-compacted.json").write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent)
