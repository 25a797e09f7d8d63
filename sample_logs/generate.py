"""Write the sample broker log directories under sample_logs/ (deterministic: same bytes every run).

Batches are written by an independent writer, kafka-python's builders (DefaultRecordBatchBuilder,
LegacyRecordBatchBuilder). What only a broker writes is done here with struct, following the broker's
rules (LogSegment, OffsetIndex, TimeIndex, TransactionIndex, ProducerStateManager): base offsets and
partition leader epochs (both outside the CRC), control batches (COMMIT/ABORT markers), one raw
(non-xerial) snappy batch, index, time index, txn index, producer snapshot and checkpoint files.
Nothing here uses kforensics itself: the output is the oracle for kforensics' decoders. The one exception is
`__share_group_state`, whose records are written by kforensics' table-driven encoder
(`parsers.internal_topics.encode_coordinator_record`); tests/test_message_schema.py holds that encoder to bytes
written by hand after Kafka's schemas.

EXPECTED.json is written from this script's own bookkeeping of what it wrote.

    python sample_logs/generate.py [OUT_DIR]      (default: the folder this script is in)
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import os
import random
import shutil
import struct
import sys
import zlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import cramjam
import kafka.record.default_records as default_records
import kafka.record.legacy_records as legacy_records
from crc32c import crc32c
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder


# kafka-python's gzip encoder stamps the wall clock into the gzip header; pin it for reproducibility.
def _gzip_encode(payload: bytes, compresslevel: int | None = None) -> bytes:
    return gzip.compress(payload, compresslevel=compresslevel or 9, mtime=0)


default_records.gzip_encode = _gzip_encode
legacy_records.gzip_encode = _gzip_encode

BASE_TS = int(datetime(2025, 11, 20, 10, 0, tzinfo=UTC).timestamp() * 1000)
NONE, GZIP, SNAPPY, LZ4, ZSTD = 0, 1, 2, 3, 4
CODEC_NAMES = ("none", "gzip", "snappy", "lz4", "zstd")
INDEX_INTERVAL_BYTES = 1024
PREALLOCATED_INDEX_BYTES = 64 * 1024  # segment.index.bytes, set low for the sample (the default is 10 MiB)
TOPIC_IDS = {}


def varint(value: int) -> bytes:
    """Zigzag varint as in Kafka's record format."""
    return _uvarint((value << 1) ^ (value >> 63))


def _kstr(s: str | None) -> bytes:
    if s is None:
        return struct.pack(">h", -1)
    b = s.encode()
    return struct.pack(">h", len(b)) + b


def _uvarint(v: int) -> bytes:
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _compact_str(s: str | None) -> bytes:
    if s is None:
        return _uvarint(0)
    b = s.encode()
    return _uvarint(len(b) + 1) + b


# --- batch writers ------------------------------------------------------------------------------

def data_batch(records: list[tuple[int, bytes | None, bytes | None, list[tuple[str, bytes]]]], *, codec: int = NONE,
               producer_id: int = -1, producer_epoch: int = -1, base_sequence: int = -1,
               transactional: bool = False) -> bytearray:
    """A v2 batch by kafka-python; records are (timestamp, key, value, headers) at offset deltas 0..n-1."""
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=codec, is_transactional=transactional,
                                        producer_id=producer_id, producer_epoch=producer_epoch,
                                        base_sequence=base_sequence, batch_size=1 << 30)
    for delta, (ts, key, value, headers) in enumerate(records):
        builder.append(delta, timestamp=ts, key=key, value=value, headers=headers)
    return bytearray(builder.build())


def raw_snappy_batch(records, **kwargs) -> bytearray:
    """Like data_batch, but snappy without xerial framing (as librdkafka and others write it)."""
    batch = data_batch(records, codec=NONE, **kwargs)
    body = bytes(cramjam.snappy.compress_raw(bytes(batch[61:])))
    out = bytearray(batch[:61]) + body
    attributes = struct.unpack_from(">h", out, 21)[0] | SNAPPY
    struct.pack_into(">h", out, 21, attributes)
    struct.pack_into(">i", out, 8, len(out) - 12)
    struct.pack_into(">I", out, 17, crc32c(bytes(out[21:])))
    return out


def control_batch(producer_id: int, producer_epoch: int, commit: bool, coordinator_epoch: int, ts: int) -> bytearray:
    """A COMMIT/ABORT marker batch, as the broker writes it (kafka-python cannot)."""
    key = struct.pack(">hh", 0, 1 if commit else 0)
    value = struct.pack(">hi", 0, coordinator_epoch)
    body = b"\x00" + varint(0) + varint(0) + varint(len(key)) + key + varint(len(value)) + value + varint(0)
    record = varint(len(body)) + body
    attributes = 0x10 | 0x20
    header = struct.pack(">qiibIhiqqqhii", 0, 61 - 12 + len(record), 0, 2, 0, attributes, 0, ts, ts, producer_id,
                         producer_epoch, -1, 1)
    out = bytearray(header + record)
    struct.pack_into(">I", out, 17, crc32c(bytes(out[21:])))
    return out


def legacy_set(magic: int, codec: int, messages: list[tuple[int, int, bytes | None, bytes | None]]) -> bytearray:
    """A legacy message set by kafka-python: messages are (offset, timestamp, key, value).

    Compressed magic-1 wrappers get inner offsets 0..n-1 (as producers write them) and the wrapper
    takes the absolute offset of the last inner message (as the broker assigns it).
    """
    builder = LegacyRecordBatchBuilder(magic=magic, compression_type=codec, batch_size=1 << 30)
    last = messages[-1][0]
    for i, (offset, ts, key, value) in enumerate(messages):
        inner = i if (codec and magic == 1) else offset
        builder.append(inner, timestamp=ts if magic else None, key=key, value=value)
    out = bytearray(builder.build())
    if codec:
        struct.pack_into(">q", out, 0, last)
    if codec and magic == 1:
        # kafka-python leaves the wrapper's timestamp 0; the broker (LogValidator, CreateTime) sets it to the
        # largest inner timestamp and recomputes the wrapper's CRC-32 (bytes 16.. = magic to end).
        struct.pack_into(">q", out, 18, max(ts for _o, ts, _k, _v in messages))
        struct.pack_into(">I", out, 12, zlib.crc32(bytes(out[16:])))
    return out


# --- a partition as the broker would lay it out --------------------------------------------------

@dataclass
class Segment:
    base_offset: int
    data: bytearray = field(default_factory=bytearray)
    index: list[tuple[int, int]] = field(default_factory=list)
    timeindex: list[tuple[int, int]] = field(default_factory=list)
    txnindex: list[tuple[int, int, int, int]] = field(default_factory=list)
    bytes_since_index: int = 0
    max_ts: int = -1
    max_ts_offset: int = -1


@dataclass
class ProducerState:
    epoch: int
    last_sequence: int
    last_offset: int
    offset_delta: int
    timestamp: int
    coordinator_epoch: int = -1
    txn_first_offset: int = -1


class PartitionWriter:
    def __init__(self, topic: str, partition: int) -> None:
        self.topic, self.partition = topic, partition
        self.segments = [Segment(0)]
        self.next_offset = 0
        self.leader_epoch = 0
        self.epochs: list[tuple[int, int]] = []
        self.producers: dict[int, ProducerState] = {}
        self.snapshots: dict[int, bytes] = {}
        self.ongoing: dict[int, int] = {}  # producer id -> first offset of its open transaction
        self.fact_batches: list[dict] = []
        self.transactions: list[dict] = []
        self.anomalies: list[dict] = []
        self.legal: list[dict] = []
        self.log_start_offset = 0
        self.high_watermark: int | None = None
        self.recovery_point: int | None = None
        self.remote: list = []  # RemoteSegment, for a tiered partition
        self.remote_records: dict = {}  # for __remote_log_metadata: event label -> record index

    @property
    def name(self) -> str:
        return f"{self.topic}-{self.partition}"

    @property
    def active(self) -> Segment:
        return self.segments[-1]

    def set_leader_epoch(self, epoch: int) -> None:
        self.leader_epoch = epoch
        if not self.epochs or self.epochs[-1][0] != epoch:
            self.epochs.append((epoch, self.next_offset))

    def roll(self) -> None:
        seg = self.active
        if seg.max_ts >= 0 and (not seg.timeindex or seg.max_ts > seg.timeindex[-1][0]):
            seg.timeindex.append((seg.max_ts, seg.max_ts_offset))
        self.snapshots[self.next_offset] = self._snapshot_bytes()
        self.segments.append(Segment(self.next_offset))

    def _snapshot_bytes(self) -> bytes:
        body = bytearray()
        for pid in sorted(self.producers):
            p = self.producers[pid]
            body += struct.pack(">qhiqiqiq", pid, p.epoch, p.last_sequence, p.last_offset, p.offset_delta, p.timestamp,
                                p.coordinator_epoch, self.ongoing.get(pid, -1))
        count_and_entries = struct.pack(">i", len(self.producers)) + bytes(body)
        return struct.pack(">hI", 1, crc32c(count_and_entries)) + count_and_entries

    def append(self, batch: bytearray, *, count: int, max_ts: int, producer_id: int = -1, producer_epoch: int = -1,
               base_sequence: int = -1, transactional: bool = False, control: str | None = None,
               coordinator_epoch: int = -1, record_offsets: list[int] | None = None, magic: int = 2,
               codec: int = NONE, leader_epoch: int | None = None) -> dict:
        """Place a batch at the log end: patch base offset and leader epoch, index it, track state."""
        seg = self.active
        base = self.next_offset
        position = len(seg.data)
        if magic == 2:
            struct.pack_into(">q", batch, 0, base)
            struct.pack_into(">i", batch, 12, self.leader_epoch if leader_epoch is None else leader_epoch)
            last = base + struct.unpack_from(">i", batch, 23)[0]
        else:
            last = struct.unpack_from(">q", batch, 0)[0] if codec else base + count - 1
            base = last - count + 1
        if max_ts > seg.max_ts:
            seg.max_ts, seg.max_ts_offset = max_ts, last
        if seg.bytes_since_index > INDEX_INTERVAL_BYTES:
            seg.index.append((last, position))
            if not seg.timeindex or seg.max_ts > seg.timeindex[-1][0]:
                seg.timeindex.append((seg.max_ts, seg.max_ts_offset))
            seg.bytes_since_index = 0
        seg.bytes_since_index += len(batch)
        seg.data += batch
        self.next_offset = last + 1
        last_sequence = -1 if base_sequence < 0 else (base_sequence + (last - base)) % 2**31
        fact = {"segment": f"{seg.base_offset:020d}.log", "position": position, "size": len(batch), "magic": magic,
                "base_offset": base, "last_offset": last, "count": count, "producer_id": producer_id,
                "producer_epoch": producer_epoch, "base_sequence": base_sequence, "last_sequence": last_sequence,
                "is_transactional": transactional, "is_control": control is not None, "control_type": control,
                "codec": CODEC_NAMES[codec], "max_timestamp": max_ts,
                "partition_leader_epoch": (self.leader_epoch if leader_epoch is None else leader_epoch)
                if magic == 2 else -1}
        self.fact_batches.append(fact)
        if producer_id >= 0:
            self._track_producer(fact, coordinator_epoch)
        return fact

    def _track_producer(self, fact: dict, coordinator_epoch: int) -> None:
        pid = fact["producer_id"]
        state = self.producers.get(pid)
        if fact["control_type"] is None:
            self.producers[pid] = ProducerState(fact["producer_epoch"], fact["last_sequence"], fact["last_offset"],
                                                fact["last_offset"] - fact["base_offset"], fact["max_timestamp"],
                                                state.coordinator_epoch if state else -1)
            if fact["is_transactional"] and pid not in self.ongoing:
                self.ongoing[pid] = fact["base_offset"]
            return
        # A marker ends the producer's transaction (or an empty one) and records the coordinator epoch.
        first = self.ongoing.pop(pid, None)
        if state is None:
            state = ProducerState(fact["producer_epoch"], -1, -1, 0, fact["max_timestamp"])
            self.producers[pid] = state
        state.epoch = fact["producer_epoch"]
        state.coordinator_epoch = coordinator_epoch
        state.timestamp = fact["max_timestamp"]
        data = [b for b in self.fact_batches if b["producer_id"] == pid and not b["is_control"]
                and first is not None and first <= b["base_offset"] < fact["base_offset"]]
        self.transactions.append({
            "producer_id": pid, "producer_epoch": fact["producer_epoch"], "first_offset": first,
            "last_data_offset": data[-1]["last_offset"] if data else None, "marker_offset": fact["base_offset"],
            "outcome": fact["control_type"], "coordinator_epoch": coordinator_epoch, "batch_count": len(data),
            "record_count": sum(b["count"] for b in data),
            "duration_ms": fact["max_timestamp"] - min(b["max_timestamp"] for b in data) if data else 0,
        })
        if fact["control_type"] == "ABORT" and first is not None:
            others = [o for p, o in self.ongoing.items() if p != pid]
            lso = min(others) if others else fact["base_offset"] + 1
            self.active.txnindex.append((pid, first, fact["base_offset"], lso))

    def open_transactions(self) -> None:
        for pid, first in sorted(self.ongoing.items()):
            data = [b for b in self.fact_batches if b["producer_id"] == pid and b["base_offset"] >= first]
            self.transactions.append({
                "producer_id": pid, "producer_epoch": data[-1]["producer_epoch"], "first_offset": first,
                "last_data_offset": data[-1]["last_offset"], "marker_offset": None, "outcome": "OPEN",
                "coordinator_epoch": None, "batch_count": len(data), "record_count": sum(b["count"] for b in data),
                "duration_ms": None,
            })

    # -- files ------------------------------------------------------------------------------------

    def write(self, log_dir: Path, *, active_preallocated: bool = True, truncate_tail: int = 0,
              final_snapshot: bool = True, index_bytes: int | None = None) -> dict:
        """Lay the partition out under `log_dir`; a preallocated active index is `index_bytes` long (the
        topic's segment.index.bytes, rounded down to whole entries; default PREALLOCATED_INDEX_BYTES as set when
        called, which generate_compacted.py lowers)."""
        if index_bytes is None:
            index_bytes = PREALLOCATED_INDEX_BYTES
        pdir = log_dir / self.name
        pdir.mkdir(parents=True)
        files = {}
        for i, seg in enumerate(self.segments):
            active = i == len(self.segments) - 1
            name = f"{seg.base_offset:020d}"
            data = bytes(seg.data)
            if active and truncate_tail:
                data = data[:-truncate_tail]
            (pdir / f"{name}.log").write_bytes(data)
            index = b"".join(struct.pack(">ii", off - seg.base_offset, pos) for off, pos in seg.index)
            entries = list(seg.timeindex)
            if active and not active_preallocated and seg.max_ts >= 0 and (
                    not entries or seg.max_ts > entries[-1][0]):
                entries.append((seg.max_ts, seg.max_ts_offset))  # LogSegment.close(): the final time index entry
            timeindex = b"".join(struct.pack(">qi", ts, off - seg.base_offset) for ts, off in entries)
            if active and active_preallocated:
                index = index.ljust(index_bytes // 8 * 8, b"\0")
                timeindex = timeindex.ljust(index_bytes // 12 * 12, b"\0")
            (pdir / f"{name}.index").write_bytes(index)
            (pdir / f"{name}.timeindex").write_bytes(timeindex)
            if seg.txnindex:
                (pdir / f"{name}.txnindex").write_bytes(b"".join(
                    struct.pack(">hqqqq", 0, pid, first, last, lso) for pid, first, last, lso in seg.txnindex))
            files[name] = len(data)
        if final_snapshot:
            self.snapshots[self.next_offset] = self._snapshot_bytes()
        for offset, snap in sorted(self.snapshots.items()):
            (pdir / f"{offset:020d}.snapshot").write_bytes(snap)
        epochs = self.epochs or [(0, 0)]
        (pdir / "leader-epoch-checkpoint").write_text(
            f"0\n{len(epochs)}\n" + "".join(f"{e} {o}\n" for e, o in epochs))
        topic_id = TOPIC_IDS.setdefault(self.topic, _topic_id(self.topic))
        (pdir / "partition.metadata").write_text(f"version: 0\ntopic_id: {topic_id}\n")
        return files


def _topic_id(topic: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(topic.encode()).digest()[:16]).decode().rstrip("=")


def records(rng: random.Random, n: int, ts: int, *, prefix: str = "order", null_key_every: int = 0,
            headers: bool = False) -> list:
    out = []
    for i in range(n):
        key = None if null_key_every and i % null_key_every == 0 else f"{prefix}-{rng.randrange(10_000):05d}".encode()
        value = json.dumps({"id": rng.randrange(10**6), "status": rng.choice(["new", "paid", "shipped"]),
                            "amount": rng.randrange(100, 99_999), "note": "sample " * 3}).encode()
        hdrs = [("trace-id", f"{rng.randrange(16**8):08x}".encode()), ("source", b"checkout")] if headers else []
        out.append((ts + i * 7, key, value, hdrs))
    return out


# --- the partitions ----------------------------------------------------------------------------

def build_orders(rng: random.Random) -> PartitionWriter:
    """Clean idempotent producers over 3 segments, every codec, a clean leader change, an epoch bump
    restarting at sequence 0, and a sequence wrapping past 2147483647."""
    p = PartitionWriter("orders", 0)
    p.set_leader_epoch(0)
    ts = BASE_TS
    seqs = {1000: 0, 1001: 0, 1002: 2**31 - 25}
    epochs = {1000: 0, 1001: 0, 1002: 3}
    codecs = [NONE, GZIP, SNAPPY, LZ4, ZSTD]
    for i in range(60):
        if i in (20, 40):
            p.roll()
        if i == 30:
            p.set_leader_epoch(1)
            p.legal.append({"kind": "clean_leader_change", "offset": p.next_offset, "new_leader_epoch": 1})
        if i == 45:
            epochs[1001] += 1
            seqs[1001] = 0
        pid = (1000, 1001, 1002)[i % 3]
        if pid == 1001 and epochs[pid] == 1 and seqs[pid] == 0:
            p.legal.append({"kind": "epoch_bump_sequence_restart", "producer_id": 1001, "offset": p.next_offset,
                            "producer_epoch": epochs[1001]})
        n = 5 + i % 4
        recs = records(rng, n, ts, null_key_every=4 if i % 5 == 0 else 0, headers=i % 2 == 0)
        codec = codecs[i % 5]
        if i == 7:
            batch = raw_snappy_batch(recs, producer_id=pid, producer_epoch=epochs[pid], base_sequence=seqs[pid])
            codec = SNAPPY
        else:
            batch = data_batch(recs, codec=codec, producer_id=pid, producer_epoch=epochs[pid], base_sequence=seqs[pid])
            codec = struct.unpack_from(">h", batch, 21)[0] & 7
        before = seqs[pid]
        p.append(batch, count=n, max_ts=recs[-1][0], producer_id=pid, producer_epoch=epochs[pid],
                 base_sequence=seqs[pid], codec=codec)
        seqs[pid] = (seqs[pid] + n) % 2**31
        if pid == 1002 and seqs[pid] < before:
            p.legal.append({"kind": "sequence_wraparound", "producer_id": pid, "offset": p.next_offset - n,
                            "base_sequence": before})
        ts += 1000
    return p


def build_legacy(rng: random.Random) -> PartitionWriter:
    """Magic 0 and 1 message sets, plain and compressed wrappers, then v2 after an upgrade."""
    p = PartitionWriter("legacy", 0)
    ts = BASE_TS
    for magic, codec in [(0, NONE), (0, GZIP), (0, SNAPPY), (0, LZ4), (1, NONE), (1, GZIP), (1, SNAPPY), (1, LZ4)]:
        n = 4
        msgs = [(p.next_offset + i, ts + i, f"k{p.next_offset + i}".encode(), f"legacy value {i} ".encode() * 4)
                for i in range(n)]
        data = legacy_set(magic, codec, msgs)
        if codec:
            p.append(data, count=n, max_ts=msgs[-1][1] if magic else -1, magic=magic, codec=codec)
        else:
            # An uncompressed message set is one "batch" per message on disk.
            pos = 0
            for _off, mts, _k, _v in msgs:
                size = 12 + struct.unpack_from(">i", data, pos + 8)[0]
                p.append(bytearray(data[pos:pos + size]), count=1, max_ts=mts if magic else -1, magic=magic)
                pos += size
        ts += 1000
    p.set_leader_epoch(2)
    for codec in (NONE, GZIP):
        recs = records(rng, 4, ts, prefix="upgraded")
        batch = data_batch(recs, codec=codec)
        p.append(batch, count=4, max_ts=recs[-1][0], codec=struct.unpack_from(">h", batch, 21)[0] & 7)
        ts += 1000
    return p


def build_payments(rng: random.Random) -> tuple[PartitionWriter, list[dict]]:
    """Two transactional producers interleaving commits and aborts, an empty transaction, and an
    open transaction left hanging while an idempotent producer keeps writing for 20 minutes."""
    p = PartitionWriter("payments", 0)
    p.set_leader_epoch(0)
    ts = BASE_TS
    seq = {2000: 0, 2001: 0, 3000: 0}
    coordinator_log: list[dict] = []

    def data(pid: int, n: int, transactional: bool = True) -> None:
        nonlocal ts
        recs = records(rng, n, ts, prefix=f"pay{pid}")
        batch = data_batch(recs, codec=GZIP if n > 3 else NONE, producer_id=pid, producer_epoch=0,
                           base_sequence=seq[pid], transactional=transactional)
        p.append(batch, count=n, max_ts=recs[-1][0], producer_id=pid, producer_epoch=0, base_sequence=seq[pid],
                 transactional=transactional, codec=struct.unpack_from(">h", batch, 21)[0] & 7)
        seq[pid] += n
        ts += 500

    def marker(pid: int, commit: bool) -> None:
        nonlocal ts
        p.append(control_batch(pid, 0, commit, 5, ts), count=1, max_ts=ts, producer_id=pid, producer_epoch=0,
                 transactional=True, control="COMMIT" if commit else "ABORT", coordinator_epoch=5)
        coordinator_log.append({"producer_id": pid, "outcome": "COMMIT" if commit else "ABORT", "ts": ts})
        ts += 500

    data(2000, 4)
    data(2000, 3)
    marker(2000, True)                # committed
    data(2000, 5)
    data(2001, 4)                     # interleaved
    marker(2000, False)               # aborted while 2001 is open: txnindex LSO = 2001's first offset
    data(2001, 2)
    marker(2001, True)
    marker(2001, True)                # an empty transaction: a marker with nothing open (legal)
    empty_marker = p.fact_batches[-1]["base_offset"]
    for _ in range(3):
        data(2001, 3)
        marker(2001, False)           # aborted, sequences continue across aborts (legal)
    p.roll()
    data(2000, 4)
    data(2000, 4)
    marker(2000, True)
    data(2001, 3)                     # opens a transaction that never ends: hanging
    for _ in range(12):
        ts += 100_000                 # 12 x 100 s = 20 min of other traffic after it
        data(3000, 5, transactional=False)
    p.open_transactions()
    open_txn = next(t for t in p.transactions if t["outcome"] == "OPEN")
    p.anomalies.append({"kind": "hanging_transaction", "producer_id": 2001, "producer_epoch": 0,
                        "offset": open_txn["first_offset"], "first_offset": open_txn["first_offset"],
                        "lso_stuck_at": open_txn["first_offset"]})
    p.legal.append({"kind": "empty_transaction", "producer_id": 2001, "offset": empty_marker})
    p.legal.append({"kind": "sequences_continue_across_aborts", "producer_id": 2001})
    return p, coordinator_log


def build_events(rng: random.Random) -> PartitionWriter:
    """Sequence anomalies: a small gap, a large gap, a duplicated batch, a zombie-epoch write."""
    p = PartitionWriter("events", 0)
    p.set_leader_epoch(0)
    ts = BASE_TS

    def write(pid: int, epoch: int, base_seq: int, n: int = 5) -> dict:
        nonlocal ts
        recs = records(rng, n, ts, prefix="evt")
        batch = data_batch(recs, producer_id=pid, producer_epoch=epoch, base_sequence=base_seq)
        ts += 1000
        return p.append(batch, count=n, max_ts=recs[-1][0], producer_id=pid, producer_epoch=epoch,
                        base_sequence=base_seq)

    for s in range(0, 25, 5):
        write(4000, 0, s)
    f = write(4000, 0, 35)  # expected 25: 2 batches of 5 missing -> small
    p.anomalies.append({"kind": "sequence_gap", "producer_id": 4000, "producer_epoch": 0, "offset": f["base_offset"],
                        "position": f["position"], "expected_sequence": 25, "found_sequence": 35, "gap_size": 10,
                        "size_class": "small", "leader_epoch_change": False})
    write(4000, 0, 40)
    f = write(4000, 0, 45)
    dup = write(4000, 0, 45)  # the same sequence range written again
    p.anomalies.append({"kind": "duplicate_sequence", "producer_id": 4000, "producer_epoch": 0,
                        "offset": dup["base_offset"], "position": dup["position"], "sequence_range": [45, 49],
                        "offsets": [f["base_offset"], dup["base_offset"]]})
    f = write(4000, 0, 200)  # expected 50: 150 missing -> large
    p.anomalies.append({"kind": "sequence_gap", "producer_id": 4000, "producer_epoch": 0, "offset": f["base_offset"],
                        "position": f["position"], "expected_sequence": 50, "found_sequence": 200, "gap_size": 150,
                        "size_class": "large", "leader_epoch_change": False})
    write(4001, 1, 0)
    write(4001, 2, 0)   # the producer was fenced and bumped its epoch
    newer = p.fact_batches[-1]
    z = write(4001, 1, 5)  # a zombie still writing with the fenced epoch
    p.anomalies.append({"kind": "zombie_epoch", "producer_id": 4001, "producer_epoch": 1, "offset": z["base_offset"],
                        "position": z["position"], "newer_epoch": 2, "newer_epoch_first_offset": newer["base_offset"]})
    write(4001, 2, 5)
    return p


def build_damaged(rng: random.Random) -> tuple[PartitionWriter, int, dict]:
    """A corrupt CRC in a rolled segment and a truncated active segment with a preallocated index."""
    p = PartitionWriter("damaged", 0)
    p.set_leader_epoch(0)
    ts = BASE_TS
    seq = 0
    corrupt = None
    for i in range(16):
        if i == 8:
            p.roll()
        recs = records(rng, 6, ts, prefix="dmg")
        batch = data_batch(recs, codec=LZ4 if i % 2 else NONE, producer_id=5000, producer_epoch=0, base_sequence=seq)
        if i == 3:
            stored = struct.unpack_from(">I", batch, 17)[0]
            batch[100] ^= 0x20  # one flipped bit inside a record
            corrupt = (stored, crc32c(bytes(batch[21:])))
        fact = p.append(batch, count=6, max_ts=recs[-1][0], producer_id=5000, producer_epoch=0, base_sequence=seq,
                        codec=struct.unpack_from(">h", batch, 21)[0] & 7)
        if i == 3:
            p.anomalies.append({"kind": "corrupt_crc", "file": "00000000000000000000.log", "position": fact["position"],
                                "offset": fact["base_offset"], "stored_crc": corrupt[0], "computed_crc": corrupt[1]})
        seq += 6
        ts += 1000
    last = p.fact_batches[-1]
    cut = last["size"] - 37
    p.anomalies.append({"kind": "truncated_tail", "file": last["segment"], "position": last["position"],
                        "offset": last["base_offset"], "declared_size": last["size"], "bytes_present": 37})
    # The index and time index were written before the crash cut the log: their last entries now
    # point at the lost batch.
    seg = p.active
    for kind, entries, size in (("index_bad_entry", seg.index, 8), ("timeindex_bad_entry", seg.timeindex, 12)):
        for i, entry in enumerate(entries):
            offset = entry[0] if kind == "index_bad_entry" else entry[1]
            if offset >= last["base_offset"]:
                p.anomalies.append({"kind": kind, "file": f"{seg.base_offset:020d}.{'index' if size == 8 else 'timeindex'}",
                                    "position": i * size, "offset": offset})
    return p, cut, last


def build_txnbad(rng: random.Random) -> PartitionWriter:
    """A .txnindex that disagrees with the log: an abort it lacks, one with a wrong LSO, an orphan entry."""
    p = PartitionWriter("txnbad", 0)
    p.set_leader_epoch(0)
    ts = BASE_TS
    seq = 0
    for _ in range(3):
        recs = records(rng, 3, ts, prefix="txb")
        batch = data_batch(recs, producer_id=7000, producer_epoch=0, base_sequence=seq, transactional=True)
        p.append(batch, count=3, max_ts=recs[-1][0], producer_id=7000, producer_epoch=0, base_sequence=seq,
                 transactional=True)
        seq += 3
        ts += 500
        p.append(control_batch(7000, 0, False, 2, ts), count=1, max_ts=ts, producer_id=7000, producer_epoch=0,
                 transactional=True, control="ABORT", coordinator_epoch=2)
        ts += 500
    entries = p.active.txnindex  # (producer id, first offset, last offset, lso) as the broker wrote them
    missing, wrong, kept = entries
    p.active.txnindex = [(wrong[0], wrong[1], wrong[2], wrong[3] - 3), kept, (7001, 3, 4, 5)]
    txnindex = f"{p.active.base_offset:020d}.txnindex"
    p.anomalies += [
        {"kind": "txnindex_missing", "producer_id": 7000, "producer_epoch": 0, "offset": missing[1],
         "first_offset": missing[1], "last_offset": missing[2], "file": txnindex, "position": None},
        {"kind": "txnindex_mismatch", "producer_id": 7000, "producer_epoch": 0, "offset": wrong[1],
         "first_offset": wrong[1], "last_offset": wrong[2], "last_stable_offset": wrong[3], "file": txnindex,
         "position": 0},
        {"kind": "txnindex_orphan", "producer_id": 7001, "producer_epoch": None, "offset": 3, "first_offset": 3,
         "last_offset": 4, "file": txnindex, "position": 2 * 34},
    ]
    return p


def build_resend(rng: random.Random) -> PartitionWriter:
    """A producer that stops, and a new producer id re-sending its last records 3 s later: duplicates the
    broker cannot see. Also values that repeat in ordinary traffic (a status flag), which must stay quiet."""
    p = PartitionWriter("resend", 0)
    p.set_leader_epoch(0)
    ts = BASE_TS
    sent = []
    seq = 0
    for i in range(5):
        recs = [(ts + j, f"order-{i * 2 + j}".encode(), f'{{"order":{i * 2 + j},"total":{(i * 2 + j) * 7}}}'.encode(),
                 []) for j in range(2)]
        p.append(data_batch(recs, producer_id=6000, producer_epoch=0, base_sequence=seq), count=2,
                 max_ts=recs[-1][0], producer_id=6000, producer_epoch=0, base_sequence=seq)
        sent += recs
        seq += 2
        ts += 1000
    first_resent = p.next_offset
    ts += 3000
    resent = [(ts + j, k, v, h) for j, (_t, k, v, h) in enumerate(sent[-6:])]
    p.append(data_batch(resent, producer_id=6001, producer_epoch=0, base_sequence=0), count=6, max_ts=resent[-1][0],
             producer_id=6001, producer_epoch=0, base_sequence=0)
    seq = 6
    for i in range(4):  # the same small status value again and again: ordinary, not a re-send
        ts += 1000
        recs = [(ts, b"heartbeat", b"OK", []), (ts + 1, f"order-{100 + i}".encode(), b'{"status":"new"}', [])]
        p.append(data_batch(recs, producer_id=6001, producer_epoch=0, base_sequence=seq), count=2, max_ts=ts + 1,
                 producer_id=6001, producer_epoch=0, base_sequence=seq)
        seq += 2
    p.anomalies.append({"kind": "content_duplicate", "producer_id": 6001, "offset": first_resent,
                        "producer_ids": [6000, 6001], "matches": 6})
    return p


def build_mangled(rng: random.Random) -> PartitionWriter:
    """Companion files that contradict the log: a leader epoch missing from leader-epoch-checkpoint, a producer
    snapshot with a wrong sequence, a non-monotonic index, and a segment whose offsets overlap the previous
    one (misnamed)."""
    p = PartitionWriter("mangled", 0)
    p.set_leader_epoch(0)
    ts = BASE_TS
    seq = 0

    def write(n: int = 10) -> dict:
        nonlocal ts, seq
        recs = records(rng, n, ts, prefix="mgl")
        fact = p.append(data_batch(recs, producer_id=8000, producer_epoch=0, base_sequence=seq), count=n,
                        max_ts=recs[-1][0], producer_id=8000, producer_epoch=0, base_sequence=seq)
        seq += n
        ts += 1000
        return fact

    for _ in range(6):
        write()
    p.leader_epoch = 1  # a new leader epoch that leader-epoch-checkpoint never got
    first_unlisted = write()
    write()
    real = p.producers[8000].last_sequence
    p.producers[8000].last_sequence = real + 3  # the snapshot taken at this roll lies about the sequence
    p.roll()
    p.producers[8000].last_sequence = real
    snapshot_offset = p.next_offset
    write()
    write()
    p.roll()
    p.active.base_offset = p.next_offset
    misnamed = p.next_offset
    p.next_offset -= 5  # the next batch re-uses offsets the previous segment holds
    overlap = write()
    write()
    seg0 = p.segments[0]
    swapped = seg0.index[0]
    seg0.index[0], seg0.index[1] = seg0.index[1], seg0.index[0]
    seg1 = p.segments[1]
    indexed_offset, batch_position = seg1.index[0]
    seg1.index[0] = (indexed_offset, batch_position + 100)  # points into the middle of a batch
    p.anomalies += [
        {"kind": "index_bad_entry", "file": f"{seg1.base_offset:020d}.index", "position": 0, "offset": indexed_offset,
         "index_position": batch_position + 100, "batch_position": batch_position},
        {"kind": "leader_epoch_mismatch", "offset": first_unlisted["base_offset"], "position":
         first_unlisted["position"], "batch_leader_epoch": 1, "checkpoint_epoch": 0},
        {"kind": "snapshot_mismatch", "producer_id": 8000, "producer_epoch": 0, "offset": snapshot_offset,
         "file": f"{snapshot_offset:020d}.snapshot", "position": 10},  # its one entry, after the 10-byte header
        {"kind": "index_non_monotonic", "file": "00000000000000000000.index", "position": 8, "offset": swapped[0]},
        {"kind": "offset_overlap", "producer_id": 8000, "offset": overlap["base_offset"], "position": overlap["position"],
         "file": overlap["segment"]},
        {"kind": "segment_name_mismatch", "file": f"{misnamed:020d}.log", "offset": overlap["base_offset"]},
    ]
    return p


def build_retained(rng: random.Random) -> PartitionWriter:
    """Retention removed the first segments: the log and a long-lived producer's history start mid-sequence,
    near the top of the sequence space, which then wraps 2147483647 -> 0 between two batches (both legal)."""
    p = PartitionWriter("retained", 0)
    p.segments = [Segment(500)]
    p.next_offset = 500
    p.log_start_offset = 500
    p.set_leader_epoch(3)
    ts = BASE_TS
    first = 2**31 - 10
    for i in range(4):
        recs = records(rng, 5, ts, prefix="ret")
        seq = (first + 5 * i) % 2**31
        fact = p.append(data_batch(recs, producer_id=9000, producer_epoch=0, base_sequence=seq), count=5,
                        max_ts=recs[-1][0], producer_id=9000, producer_epoch=0, base_sequence=seq)
        if seq == 0:
            p.legal.append({"kind": "sequence_wraparound", "producer_id": 9000, "offset": fact["base_offset"],
                            "base_sequence": 0, "previous_last_sequence": 2**31 - 1})
        ts += 1000
    p.legal.append({"kind": "history_starts_mid_sequence", "producer_id": 9000, "offset": 500,
                    "base_sequence": first})
    return p


def build_scratch(rng: random.Random) -> PartitionWriter:
    """A short-lived topic (plain, non-idempotent producer) that was deleted afterwards."""
    p = PartitionWriter("scratch", 0)
    p.set_leader_epoch(0)
    ts = BASE_TS + 3_600_000
    for _ in range(3):
        recs = records(rng, 4, ts, prefix="tmp")
        p.append(data_batch(recs), count=4, max_ts=recs[-1][0])
        ts += 1000
    return p


def transaction_state_records(coordinator_log: list[dict]) -> list[tuple[bytes, bytes | None]]:
    """__transaction_state key/values for payments-0's transactional producers."""
    out = []
    tids = {2000: "payments-app-0", 2001: "payments-app-1"}
    partitions = [("payments", [0])]
    for i, entry in enumerate(coordinator_log):
        tid = tids[entry["producer_id"]]
        key = struct.pack(">h", 0) + _kstr(tid)
        for status, ts in ((1, entry["ts"] - 400), (2 if entry["outcome"] == "COMMIT" else 3, entry["ts"] - 10),
                           (4 if entry["outcome"] == "COMMIT" else 5, entry["ts"] + 5)):
            parts = [] if status >= 4 else partitions
            if i % 2 == 0:
                value = struct.pack(">hqhib", 0, entry["producer_id"], 0, 60_000, status)
                value += struct.pack(">i", len(parts)) + b"".join(
                    _kstr(t) + struct.pack(">i", len(ps)) + b"".join(struct.pack(">i", x) for x in ps) for t, ps in parts)
                value += struct.pack(">qq", ts, entry["ts"] - 400)
            else:  # flexible version 1 with tagged fields
                value = struct.pack(">hqhib", 1, entry["producer_id"], 0, 60_000, status)
                value += _uvarint(len(parts) + 1) + b"".join(
                    _compact_str(t) + _uvarint(len(ps) + 1) + b"".join(struct.pack(">i", x) for x in ps) + b"\x00"
                    for t, ps in parts)
                value += struct.pack(">qq", ts, entry["ts"] - 400)
                value += _uvarint(1) + _uvarint(2) + _uvarint(2) + struct.pack(">h", 0)  # tag 2: clientTransactionVersion
            out.append((key, value))
    return out


def consumer_offsets_records() -> list[tuple[bytes, bytes | None]]:
    group = "orders-service"
    out = []
    gm_key = struct.pack(">h", 2) + _kstr(group)
    member = (_kstr("consumer-1-5c1d") + _kstr(None) + _kstr("consumer-1") + _kstr("/10.0.0.7") +
              struct.pack(">ii", 300_000, 45_000) + struct.pack(">i", 4) + b"\x00\x01\x00\x00" +
              struct.pack(">i", 4) + b"\x00\x01\x00\x00")
    gm_value = (struct.pack(">h", 3) + _kstr("consumer") + struct.pack(">i", 1) + _kstr("range") +
                _kstr("consumer-1-5c1d") + struct.pack(">q", BASE_TS) + struct.pack(">i", 1) + member)
    out.append((gm_key, gm_value))
    for i, offset in enumerate((120, 250, 370)):
        key = struct.pack(">h", 1) + _kstr(group) + _kstr("orders") + struct.pack(">i", 0)
        if i == 0:  # value version 1 (with expire timestamp)
            value = struct.pack(">hq", 1, offset) + _kstr("") + struct.pack(">qq", BASE_TS + i, -1)
        else:  # value version 3 (with leader epoch)
            value = struct.pack(">hqi", 3, offset, 1) + _kstr("") + struct.pack(">q", BASE_TS + i * 60_000)
        out.append((key, value))
    stale = struct.pack(">h", 1) + _kstr("old-group") + _kstr("orders") + struct.pack(">i", 0)
    out.append((stale, struct.pack(">hqi", 3, 10, 0) + _kstr("") + struct.pack(">q", BASE_TS)))
    out.append((stale, None))  # tombstone: the commit was deleted
    return out


def internal_partition(topic: str, kvs: list[tuple[bytes, bytes | None]]) -> PartitionWriter:
    p = PartitionWriter(topic, 0)
    p.set_leader_epoch(0)
    ts = BASE_TS
    for key, value in kvs:
        batch = data_batch([(ts, key, value, [])])
        p.append(batch, count=1, max_ts=ts)
        ts += 250
    return p


# --- whole-cluster cases: a diverged replica, a coordinator that disagrees, committed offsets ------

TXN_STATES = {"Empty": 0, "Ongoing": 1, "PrepareCommit": 2, "PrepareAbort": 3, "CompleteCommit": 4,
              "CompleteAbort": 5, "Dead": 6, "PrepareEpochFence": 7}


def txn_log_entry(tid: str, pid: int, epoch: int, state: str, parts: list[tuple[str, list[int]]], at: int,
                  start: int, timeout_ms: int = 60_000) -> tuple[int, bytes, bytes]:
    """(timestamp, key, value) of a __transaction_state record (key v0, value v0), as the coordinator writes it."""
    key = struct.pack(">h", 0) + _kstr(tid)
    value = struct.pack(">hqhib", 0, pid, epoch, timeout_ms, TXN_STATES[state])
    value += struct.pack(">i", len(parts)) + b"".join(
        _kstr(t) + struct.pack(">i", len(ps)) + b"".join(struct.pack(">i", x) for x in ps) for t, ps in parts)
    value += struct.pack(">qq", at, start)
    return at, key, value


def build_inventory(rng: random.Random) -> tuple[PartitionWriter, PartitionWriter]:
    """An unclean leader election. Broker-1 led inventory-0 in epoch 0; broker-2 replicated up to offset 60
    and fell out of the ISR; broker-1 went on alone (high watermark 90, offsets up to 99) and died; broker-2
    was elected uncleanly (epoch 1 from offset 60) and producer 5001 wrote on. Broker-1's disk was copied
    before it came back (and truncated): its offsets 60-89 were committed and are gone from the new leader."""
    leader = PartitionWriter("inventory", 0)
    leader.set_leader_epoch(0)
    ts = BASE_TS + 3 * 3_600_000
    for i in range(20):
        recs = records(rng, 5, ts, prefix="inv")
        leader.append(data_batch(recs, codec=LZ4 if i % 2 else NONE, producer_id=5000, producer_epoch=0,
                                 base_sequence=5 * i), count=5, max_ts=recs[-1][0], producer_id=5000,
                      producer_epoch=0, base_sequence=5 * i, codec=LZ4 if i % 2 else NONE)
        ts += 1000
    leader.high_watermark = 90
    follower = _truncated_copy(leader, 12)
    follower.set_leader_epoch(1)
    ts += 30_000
    for i in range(14):
        recs = records(rng, 5, ts, prefix="inv")
        follower.append(data_batch(recs, producer_id=5001, producer_epoch=0, base_sequence=5 * i), count=5,
                        max_ts=recs[-1][0], producer_id=5001, producer_epoch=0, base_sequence=5 * i)
        ts += 1000
    follower.high_watermark = follower.next_offset
    lost_from = follower.epochs[-1][1]
    leader.anomalies.append({"kind": "replica_divergence", "offset": lost_from, "common_prefix_end_offset": lost_from,
                             "brokers": ["broker-1", "broker-2"], "lost_offsets": [lost_from, 89]})
    return leader, follower


def build_transfers(rng: random.Random, txnbad: PartitionWriter) -> tuple[PartitionWriter, list]:
    """transfers-0 and the __transaction_state-1 records of its transactional ids (plus txnbad-0's producer):
    one sound commit, a completed commit whose marker never reached transfers-0 (marker_missing), a COMMIT
    marker for a transaction the coordinator aborted (outcome_mismatch), a write by an epoch the coordinator
    had fenced (epoch_fenced_write) and transactional data from a producer no coordinator knows
    (unknown_producer)."""
    p = PartitionWriter("transfers", 0)
    p.set_leader_epoch(0)
    ts = BASE_TS + 2 * 3_600_000
    seq: dict[int, int] = {}
    log: list[tuple[int, bytes, bytes]] = []
    here = [("transfers", [0])]

    def tick(ms: int = 200) -> int:
        nonlocal ts
        ts += ms
        return ts

    def data(pid: int, epoch: int, n: int = 3) -> dict:
        recs = records(rng, n, tick(), prefix=f"trf{pid}")
        s = seq.get((pid, epoch), 0)
        seq[(pid, epoch)] = s + n
        return p.append(data_batch(recs, producer_id=pid, producer_epoch=epoch, base_sequence=s, transactional=True),
                        count=n, max_ts=recs[-1][0], producer_id=pid, producer_epoch=epoch, base_sequence=s,
                        transactional=True)

    def marker(pid: int, epoch: int, commit: bool) -> dict:
        at = tick()
        return p.append(control_batch(pid, epoch, commit, 3, at), count=1, max_ts=at, producer_id=pid,
                        producer_epoch=epoch, transactional=True, control="COMMIT" if commit else "ABORT",
                        coordinator_epoch=3)

    def coord(tid: str, pid: int, epoch: int, state: str, parts=(), start: int = -1) -> int:
        at = tick(50)
        log.append(txn_log_entry(tid, pid, epoch, state, list(parts), at, start))
        return at

    # txnbad-0's producer 7000: three aborts the coordinator also completed (the .txnindex damage is local).
    for m in (b for b in txnbad.fact_batches if b["is_control"]):
        start = m["max_timestamp"] - 900
        log.append(txn_log_entry("txnbad-app", 7000, 0, "Ongoing", [("txnbad", [0])], start, start))
        log.append(txn_log_entry("txnbad-app", 7000, 0, "PrepareAbort", [("txnbad", [0])], m["max_timestamp"] - 5,
                                 start))
        log.append(txn_log_entry("txnbad-app", 7000, 0, "CompleteAbort", [], m["max_timestamp"] + 5, start))
    # Sound: transfers-app-0 commits.
    coord("transfers-app-0", 8000, 0, "Empty")
    start = coord("transfers-app-0", 8000, 0, "Ongoing", here, ts)
    data(8000, 0)
    data(8000, 0)
    coord("transfers-app-0", 8000, 0, "PrepareCommit", here, start)
    marker(8000, 0, True)
    coord("transfers-app-0", 8000, 0, "CompleteCommit", (), start)
    # outcome_mismatch: the coordinator aborted transfers-app-1's transaction; the partition holds a COMMIT.
    coord("transfers-app-1", 8001, 0, "Empty")
    start = coord("transfers-app-1", 8001, 0, "Ongoing", here, ts)
    data(8001, 0)
    coord("transfers-app-1", 8001, 0, "PrepareAbort", here, start)
    wrong = marker(8001, 0, True)
    coord("transfers-app-1", 8001, 0, "CompleteAbort", (), start)
    # epoch_fenced_write: a new transfers-app-3 instance fences epoch 0 (PrepareEpochFence, epoch 1) while the
    # old one is mid-transaction; the old one's next batch (epoch 0) lands after the fence, before the ABORT.
    coord("transfers-app-3", 8003, 0, "Empty")
    start = coord("transfers-app-3", 8003, 0, "Ongoing", here, ts)
    data(8003, 0)
    fenced_at = coord("transfers-app-3", 8003, 1, "PrepareEpochFence", here, start)
    coord("transfers-app-3", 8003, 1, "PrepareAbort", here, start)
    zombie = data(8003, 0)
    marker(8003, 1, False)
    coord("transfers-app-3", 8003, 1, "CompleteAbort", (), start)
    coord("transfers-app-3", 8003, 2, "Empty")
    # marker_missing: transfers-app-0's second transaction (transfers-0 and ledger-0, which is not in the input)
    # completed at the coordinator, but no COMMIT marker reached transfers-0.
    start = coord("transfers-app-0", 8000, 0, "Ongoing", [*here, ("ledger", [0])], ts)
    missing = data(8000, 0)
    coord("transfers-app-0", 8000, 0, "PrepareCommit", [*here, ("ledger", [0])], start)
    complete = coord("transfers-app-0", 8000, 0, "CompleteCommit", (), start)
    # unknown_producer: transactional data from producer id 8002, which no coordinator record names.
    unknown = data(8002, 0)
    data(8002, 0)
    p.open_transactions()
    p.anomalies += [
        {"kind": "outcome_mismatch", "producer_id": 8001, "offset": wrong["base_offset"],
         "transactional_id": "transfers-app-1", "coordinator_outcome": "ABORT", "marker_outcome": "COMMIT"},
        {"kind": "epoch_fenced_write", "producer_id": 8003, "offset": zombie["base_offset"],
         "transactional_id": "transfers-app-3", "fenced_at": fenced_at, "fencing_epoch": 1},
        {"kind": "marker_missing", "producer_id": 8000, "offset": missing["base_offset"],
         "transactional_id": "transfers-app-0", "coordinator_outcome": "COMMIT", "completed_at": complete,
         "partitions_not_in_input": ["ledger-0"]},
        {"kind": "unknown_producer", "producer_id": 8002, "offset": unknown["base_offset"]},
        # judged at broker-1's image time (hours after these writes), both transactions left open hang: 8000's
        # marker never came, and no coordinator knows 8002 to abort it
        {"kind": "hanging_transaction", "producer_id": 8000, "offset": missing["base_offset"]},
        {"kind": "hanging_transaction", "producer_id": 8002, "offset": unknown["base_offset"]},
    ]
    p.legal.append({"kind": "coordinator_agrees", "producer_id": 8000, "transactional_id": "transfers-app-0"})
    return p, sorted(log)


def offset_commit(group: str, topic: str, partition: int, offset: int | None, at: int) -> tuple[int, bytes, bytes | None]:
    """(timestamp, key, value) of an offset commit (key v1, value v3), or its tombstone (offset None)."""
    key = struct.pack(">h", 1) + _kstr(group) + _kstr(topic) + struct.pack(">i", partition)
    if offset is None:
        return at, key, None
    return at, key, struct.pack(">hqi", 3, offset, -1) + _kstr("") + struct.pack(">q", at)


def consumer_offsets_1(payments: PartitionWriter) -> tuple[list, list[dict]]:
    """__consumer_offsets-1: the three bad committed offsets and the sound cases around them."""
    ts = BASE_TS + 4 * 3_600_000
    aborted = next(e for seg in payments.segments for e in seg.txnindex)  # (pid, first, last, lso)
    inside = aborted[1] + 2
    commits = [
        ("analytics", "legacy", 0, 999), ("analytics", "legacy", 0, 30),     # superseded: only 30 counts
        ("old-reports", "events", 0, 100_000), ("old-reports", "events", 0, None),  # deleted by a tombstone
        ("inventory-sync", "inventory", 0, 130),  # = the longest replica's log end (broker-1 alone has 100)
        ("billing", "ledger", 0, 5),              # ledger-0 is not in the input: not judged
        ("billing", "payments", 0, inside),       # inside an aborted transaction
        ("archiver", "retained", 0, 120),         # retention deleted everything below 500
        ("analytics", "events", 0, 110),          # events-0 ends at 70
    ]
    out = [offset_commit(g, t, p, o, ts + 1000 * i) for i, (g, t, p, o) in enumerate(commits)]
    anomalies = [
        {"kind": "committed_offset_in_aborted_range", "topic": "payments", "partition": 0, "group": "billing",
         "offset": inside, "aborted_first_offset": aborted[1], "aborted_last_offset": aborted[2]},
        {"kind": "committed_offset_below_log_start", "topic": "retained", "partition": 0, "group": "archiver",
         "offset": 120, "log_start_offset": 500},
        {"kind": "committed_offset_beyond_log_end", "topic": "events", "partition": 0, "group": "analytics",
         "offset": 110, "log_end_offset": 70},
    ]
    for a in anomalies:  # which commit (= which batch of the partition) each one is
        a["commit_index"] = commits.index((a["group"], a["topic"], a["partition"], a["offset"]))
    return out, anomalies


def coordinator_partition(topic: str, partition: int, entries: list[tuple[int, bytes, bytes | None]]
                          ) -> PartitionWriter:
    """An internal topic partition: one record per batch, timestamped as written."""
    p = PartitionWriter(topic, partition)
    p.set_leader_epoch(0)
    for at, key, value in entries:
        p.append(data_batch([(at, key, value, [])]), count=1, max_ts=at)
    return p


# --- share groups (KIP-932): __share_group_state ---------------------------------------------------------------

SHARE_STATE_PARTITIONS = 50  # share.coordinator.state.topic.num.partitions


def _java_string_hash(text: str) -> int:
    h = 0
    for (unit,) in struct.iter_unpack(">H", text.encode("utf-16-be")):
        h = (31 * h + unit) & 0xFFFFFFFF
    return _java_int(h)


def share_state_partition(group: str, topic: str, partition: int) -> int:
    """ShareCoordinatorService.partitionFor(SharePartitionKey.asCoordinatorKey()): Utils.abs of the Java hash of
    "<group>:<topic id>:<partition>", modulo the partition count."""
    h = _java_string_hash(f"{group}:{_topic_id(topic)}:{partition}")
    return (0 if h == -(1 << 31) else abs(h)) % SHARE_STATE_PARTITIONS


def build_share_group_state() -> tuple[PartitionWriter, list[dict]]:
    """The __share_group_state partition of share group orders-share's state of orders-0: a first snapshot, two
    updates (acknowledged, released and archived batches) and a later snapshot that folds them in, as the share
    coordinator writes them (Kafka 4.2 schemas). Returns the partition and the decoded records to expect."""
    from kforensics.parsers.internal_topics import SHARE_GROUP_STATE, encode_coordinator_record

    group, topic, partition = "orders-share", "orders", 0
    key = {"groupId": group, "topicId": _topic_id(topic), "partition": partition}
    t0 = BASE_TS + 5 * 60_000
    batch = lambda first, last, state, count: {"firstOffset": first, "lastOffset": last,  # noqa: E731
                                               "deliveryState": state, "deliveryCount": count}
    entries = [
        (t0, 0, {"snapshotEpoch": 0, "stateEpoch": 0, "leaderEpoch": 0, "startOffset": 0, "createTimestamp": t0,
                 "writeTimestamp": t0, "stateBatches": []}),
        (t0 + 1_000, 1, {"snapshotEpoch": 0, "leaderEpoch": 0, "startOffset": 40, "deliveryCompleteCount": 10,
                         "stateBatches": [batch(40, 49, 2, 1), batch(50, 59, 0, 2)]}),
        (t0 + 2_000, 1, {"snapshotEpoch": 0, "leaderEpoch": 0, "startOffset": -1,
                         "stateBatches": [batch(60, 64, 4, 5)]}),
        (t0 + 3_000, 0, {"snapshotEpoch": 1, "stateEpoch": 0, "leaderEpoch": 0, "startOffset": 50,
                         "deliveryCompleteCount": 0, "createTimestamp": t0, "writeTimestamp": t0 + 3_000,
                         "stateBatches": [batch(50, 59, 0, 2), batch(60, 64, 4, 5)]}),
    ]
    written, expected = [], []
    for offset, (at, record_type, value) in enumerate(entries):
        k, v = encode_coordinator_record(SHARE_GROUP_STATE, record_type, key, value)
        written.append((at, k, v))
        expected.append({"offset": offset, "record_type": record_type, "key": key, "value_version": 0,
                         "value": value})
    p = coordinator_partition("__share_group_state", share_state_partition(group, topic, partition), written)
    return p, expected


# --- tiered storage: __remote_log_metadata and partitions whose history is in the remote tier -----

REMOTE_LOG_METADATA_PARTITIONS = 50  # remote.log.metadata.topic.num.partitions
COPY_STARTED, COPY_FINISHED, DELETE_STARTED, DELETE_FINISHED = range(4)  # RemoteLogSegmentState ids
SEGMENT_STATE_NAMES = ("COPY_SEGMENT_STARTED", "COPY_SEGMENT_FINISHED", "DELETE_SEGMENT_STARTED",
                       "DELETE_SEGMENT_FINISHED")
HOUR_MS = 3_600_000


def _topic_id_bytes(topic: str) -> bytes:
    topic_id = TOPIC_IDS.setdefault(topic, _topic_id(topic))
    return base64.urlsafe_b64decode(topic_id + "==")


def _java_int(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v & 0x80000000 else v


def _java_long_hash(v: int) -> int:
    v &= 0xFFFFFFFFFFFFFFFF
    return _java_int(v ^ (v >> 32))


def remote_log_metadata_partition(topic: str, partition: int) -> int:
    """RemoteLogMetadataTopicPartitioner.metadataPartition: murmur2 over the 4 bytes of
    Objects.hash(topicId lsb, topicId msb, partition), made positive, modulo the partition count."""
    from kafka.partitioner.default import murmur2

    raw = _topic_id_bytes(topic)
    msb, lsb = struct.unpack(">qq", raw)
    h = 1
    for part in (_java_long_hash(lsb), _java_long_hash(msb), partition):
        h = _java_int(31 * h + part)
    return (murmur2(struct.pack(">i", h)) & 0x7FFFFFFF) % REMOTE_LOG_METADATA_PARTITIONS


def _tip(topic: str, partition: int) -> bytes:
    """TopicIdPartitionEntry, flexible: compact string, uuid, int32, no tagged fields."""
    return _compact_str(topic) + _topic_id_bytes(topic) + struct.pack(">i", partition) + b"\x00"


def _segment_id(topic: str, partition: int, segment_id: bytes) -> bytes:
    return _tip(topic, partition) + segment_id + b"\x00"


def rlmm_segment(topic: str, partition: int, segment_id: bytes, start: int, end: int, broker: int, max_ts: int,
                 event_ts: int, epochs: list[tuple[int, int]], size: int) -> bytes:
    """RemoteLogSegmentMetadataRecord v0 (apiKey 0) framed as RemoteLogMetadataSerde writes it, as the leader
    publishes it when a copy starts (state COPY_SEGMENT_STARTED, no custom metadata)."""
    body = _segment_id(topic, partition, segment_id) + struct.pack(">qqiqq", start, end, broker, max_ts, event_ts)
    body += _uvarint(len(epochs) + 1) + b"".join(struct.pack(">iq", e, o) + b"\x00" for e, o in epochs)
    body += struct.pack(">i", size) + _uvarint(0) + struct.pack(">b", COPY_STARTED) + b"\x00"
    return _uvarint(1) + _uvarint(0) + _uvarint(0) + body


def rlmm_update(topic: str, partition: int, segment_id: bytes, broker: int, event_ts: int, state: int) -> bytes:
    """RemoteLogSegmentMetadataUpdateRecord v0 (apiKey 1)."""
    body = _segment_id(topic, partition, segment_id) + struct.pack(">iq", broker, event_ts) + _uvarint(0)
    body += struct.pack(">b", state) + b"\x00"
    return _uvarint(1) + _uvarint(1) + _uvarint(0) + body


def rlmm_partition_delete(topic: str, partition: int, broker: int, event_ts: int, state: int) -> bytes:
    """RemotePartitionDeleteMetadataRecord v0 (apiKey 2)."""
    body = _tip(topic, partition) + struct.pack(">iqb", broker, event_ts, state) + b"\x00"
    return _uvarint(1) + _uvarint(2) + _uvarint(0) + body


@dataclass
class RemoteSegment:
    name: str  # the sample's own label
    start: int
    end: int
    epochs: list[tuple[int, int]]
    events: list[tuple[int, int]]  # (state, ms after BASE_TS), in order
    broker: int = 1

    @property
    def segment_id(self) -> bytes:
        return hashlib.sha256(f"remote segment {self.name}".encode()).digest()[:16]

    @property
    def segment_id_text(self) -> str:
        return base64.urlsafe_b64encode(self.segment_id).decode().rstrip("=")


def build_tiered(rng: random.Random, topic: str, local_start: int, local_end: int, epochs: list[tuple[int, int]],
                 remote: list[RemoteSegment], log_start: int) -> PartitionWriter:
    """A tiered partition: its local log starts at `local_start` (older segments were copied to the remote
    tier and deleted locally), 10-record batches of a plain producer, one segment per 50 offsets, leader
    epochs from `epochs` ((epoch, start offset)); the leader-epoch-checkpoint begins at the local log start,
    as the broker truncates it from the start. `log_start` is the log start offset the broker checkpoints:
    with tiered storage, the earliest offset in the remote tier."""
    p = PartitionWriter(topic, 0)
    p.segments = [Segment(local_start)]
    p.next_offset = local_start
    p.log_start_offset = log_start
    p.remote = remote
    ts = BASE_TS + 6 * HOUR_MS
    while p.next_offset < local_end:
        if p.next_offset != local_start and p.next_offset % 50 == 0:
            p.roll()
        epoch = max(e for e, o in epochs if o <= p.next_offset)
        if p.leader_epoch != epoch or not p.epochs:
            p.set_leader_epoch(epoch)
        recs = records(rng, 10, ts, prefix=topic)
        p.append(data_batch(recs), count=10, max_ts=recs[-1][0])
        ts += 1000
    return p


def build_clicks(rng: random.Random) -> PartitionWriter:
    """Tiered and broken: the copy of offsets 200-249 started and never finished (a stuck copy) while the
    local segment was deleted anyway (a gap neither tier holds); a second copy of 150-199 with another leader
    epoch (an overlap); and the copy of 300-349 says epoch 2 throughout while the local log and its
    leader-epoch-checkpoint say epoch 3 from 340 (an epoch mismatch)."""
    remote = [
        RemoteSegment("clicks-a", 0, 99, [(0, 0)], [(COPY_STARTED, 0), (COPY_FINISHED, 5_000)]),
        RemoteSegment("clicks-b", 100, 199, [(0, 100), (1, 150)], [(COPY_STARTED, 600_000), (COPY_FINISHED, 605_000)]),
        RemoteSegment("clicks-b2", 150, 199, [(0, 150)], [(COPY_STARTED, 900_000), (COPY_FINISHED, 905_000)],
                      broker=2),
        RemoteSegment("clicks-c", 200, 249, [(1, 200)], [(COPY_STARTED, 1_200_000)]),
        RemoteSegment("clicks-d", 250, 299, [(1, 250), (2, 280)], [(COPY_STARTED, 1_800_000),
                                                                   (COPY_FINISHED, 1_805_000)]),
        RemoteSegment("clicks-e", 300, 349, [(2, 300)], [(COPY_STARTED, 2 * HOUR_MS), (COPY_FINISHED, 2 * HOUR_MS + 5_000)]),
    ]
    p = build_tiered(rng, "clicks", 300, 400, [(2, 300), (3, 340)], remote, log_start=0)
    return p


def build_views(rng: random.Random) -> PartitionWriter:
    """Tiered and sound: retention deleted the oldest remote segment (0-99) and has just started deleting the
    next (100-199: the newest event of broker-1's __remote_log_metadata, so in progress at its image time); the rest of the history is in the remote tier up to 349, the local log holds 250-379."""
    remote = [
        RemoteSegment("views-a", 0, 99, [(0, 0)], [(COPY_STARTED, 0), (COPY_FINISHED, 4_000),
                                                  (DELETE_STARTED, 3 * HOUR_MS), (DELETE_FINISHED, 3 * HOUR_MS + 2_000)]),
        RemoteSegment("views-b", 100, 199, [(0, 100)], [(COPY_STARTED, 600_000), (COPY_FINISHED, 604_000),
                                                       (DELETE_STARTED, 7 * HOUR_MS + 10_000)]),
        RemoteSegment("views-c", 200, 299, [(0, 200), (1, 250)], [(COPY_STARTED, HOUR_MS), (COPY_FINISHED, HOUR_MS + 4_000)]),
        RemoteSegment("views-d", 300, 349, [(1, 300)], [(COPY_STARTED, 4 * HOUR_MS), (COPY_FINISHED, 4 * HOUR_MS + 4_000)]),
    ]
    return build_tiered(rng, "views", 250, 380, [(1, 250)], remote, log_start=100)


def remote_log_metadata_partitions(tiered: list[PartitionWriter], deleted_topic: str) -> dict[int, PartitionWriter]:
    """The __remote_log_metadata partitions holding the tiered partitions' remote segments (each partition's
    records in the metadata partition its topic id hashes to), plus the remote deletion of a deleted topic.
    Records where each event landed in `<writer>.remote_records` (segment name, state) -> (partition, index)."""
    events: dict[int, list[tuple[int, bytes | None, bytes, tuple]]] = {}
    for p in tiered:
        n = remote_log_metadata_partition(p.topic, p.partition)
        for seg in p.remote:
            size = (seg.end - seg.start + 1) * 140
            for state, at in seg.events:
                ts = BASE_TS + at
                value = (rlmm_segment(p.topic, p.partition, seg.segment_id, seg.start, seg.end, seg.broker,
                                      ts - 60_000, ts, seg.epochs, size) if state == COPY_STARTED
                         else rlmm_update(p.topic, p.partition, seg.segment_id, seg.broker, ts, state))
                events.setdefault(n, []).append((ts, None, value, (p.name, seg.name, state)))
    n = remote_log_metadata_partition(deleted_topic, 0)
    for state, at in ((0, 7 * HOUR_MS), (1, 7 * HOUR_MS + 1_000), (2, 7 * HOUR_MS + 3_000)):
        events.setdefault(n, []).append((BASE_TS + at, None, rlmm_partition_delete(deleted_topic, 0, 1, BASE_TS + at,
                                                                                   state), (None, None, state)))
    out = {}
    for n, entries in sorted(events.items()):
        entries.sort(key=lambda e: e[0])
        w = coordinator_partition("__remote_log_metadata", n, [(ts, key, value) for ts, key, value, _ in entries])
        w.remote_records = {label: i for i, (*_x, label) in enumerate(entries)}
        out[n] = w
    return out


def remote_facts(p: PartitionWriter, metadata: dict[int, PartitionWriter]) -> tuple[list[dict], str]:
    """EXPECTED's remote_segments of a tiered partition (final state and where its records are), and the
    metadata partition's dir name."""
    n = remote_log_metadata_partition(p.topic, p.partition)
    w = metadata[n]
    out = []
    for seg in p.remote:
        where = [w.fact_batches[w.remote_records[(p.name, seg.name, state)]] for state, _ in seg.events]
        out.append({"remote_segment_id": seg.segment_id_text, "start_offset": seg.start, "end_offset": seg.end,
                    "segment_leader_epochs": [list(e) for e in seg.epochs], "state": SEGMENT_STATE_NAMES[seg.events[-1][0]],
                    "broker_id": seg.broker, "size": (seg.end - seg.start + 1) * 140,
                    "first_event_at": BASE_TS + seg.events[0][1], "last_event_at": BASE_TS + seg.events[-1][1],
                    "file": where[-1]["segment"], "position": where[-1]["position"],
                    "first_position": where[0]["position"]})
    return out, w.name


def clicks_anomalies(remote: list[dict], metadata_dir: str) -> list[dict]:
    """The four remote-tier anomalies planted in clicks-0 (files are relative to the clicks-0 dir)."""
    by_start = {(r["start_offset"], r["broker_id"]): r for r in remote}
    b, b2, c, e = by_start[(100, 1)], by_start[(150, 2)], by_start[(200, 1)], by_start[(300, 1)]
    file = f"../{metadata_dir}/{b['file']}"
    return [
        # the latest metadata record among the finished segments ending just below the gap (b and b2 end at 199)
        {"kind": "remote_log_gap", "offset": 200, "file": file, "position": max(b["position"], b2["position"]),
         "missing_offsets": [200, 249], "remote_end_offset": 199, "local_log_start_offset": 300},
        {"kind": "remote_segment_stuck", "offset": 200, "file": file, "position": c["position"],
         "remote_segment_id": c["remote_segment_id"], "state": "COPY_SEGMENT_STARTED"},
        {"kind": "remote_leader_epoch_mismatch", "offset": 340, "file": file, "position": e["position"],
         "remote_segment_id": e["remote_segment_id"], "remote_epoch": 2, "expected_epoch": 3,
         "against": "leader-epoch-checkpoint"},
        {"kind": "remote_overlap", "offset": 150, "file": file, "position": b2["position"],
         "remote_segment_id": b2["remote_segment_id"], "other_remote_segment_id": b["remote_segment_id"],
         "overlap": [150, 199]},
    ]


# --- broker dirs ---------------------------------------------------------------------------------

def write_checkpoint(path: Path, entries: list[tuple[str, int, int]]) -> None:
    path.write_text(f"0\n{len(entries)}\n" + "".join(f"{t} {p} {o}\n" for t, p, o in entries))


# --- the incidents the planting makes (issue 49: `kforensics explain`) --------------------------------------------

#: Planted kinds of severity info: such a finding belongs to an incident only when it follows from a cause.
NOTE_KINDS = {"restart_trims_tail", "share_records_archived", "cleaned_sequence_holes"}


def finding_key(kind: str, broker: str, topic: str | None, partition: int | None, offset: int | None = None,
                producer_id: int | None = None) -> dict:
    """A planted finding as `kforensics explain --json` names it (kind, broker, topic, partition, offset,
    producer_id). A torn batch (truncated_tail) is named by its file and byte position alone: no offset."""
    return {"kind": kind, "broker": broker, "topic": topic, "partition": partition,
            "offset": None if kind == "truncated_tail" else offset, "producer_id": producer_id}


def planted_incidents(planted: list[tuple[dict, dict | None]]) -> list[dict]:
    """The incidents a sample's planting makes: `planted` holds each planted finding's key and the key of the planted
    finding it follows from (None: a cause of its own). Each chain is followed to its root cause; an incident is the
    root and every finding that follows from it; an info finding that follows from nothing is in no incident."""
    def name(key: dict) -> str:
        return json.dumps(key, sort_keys=True)

    follows = {name(key): cause for key, cause in planted}
    assert len(follows) == len(planted), "two planted findings under one key"

    def root(key: dict) -> dict:
        while follows[name(key)] is not None:
            key = follows[name(key)]
        return key

    incidents: dict[str, dict] = {}
    for key, cause in planted:
        if cause is None and key["kind"] in NOTE_KINDS:
            continue
        top = root(key)
        incidents.setdefault(name(top), {"cause": top, "findings": []})["findings"].append(key)
    for incident in incidents.values():
        incident["findings"].sort(key=name)
    return [incidents[k] for k in sorted(incidents)]


#: broker-1..3: the planted anomalies that follow from another planted in the same partition, (broker, partition
#: dir, kind[, producer id]) -> (broker, kind[, producer id]) of that cause (a producer id where a partition holds
#: several of a kind); every other planted anomaly is a cause of its own (README, Partitions).
FOLLOWS = {
    # transfers-0: at broker-1's image time the transaction whose marker is missing hangs, and so does the one no
    # coordinator knows
    ("broker-1", "transfers-0", "hanging_transaction", 8000): ("broker-1", "marker_missing", 8000),
    ("broker-1", "transfers-0", "hanging_transaction", 8002): ("broker-1", "unknown_producer", 8002),
    # damaged-0: the flipped bit lies below the recovery point; the torn last batch is what recovery trims, and the
    # preallocated index and time index still hold entries for it
    ("broker-1", "damaged-0", "damage_below_recovery_point"): ("broker-1", "corrupt_crc"),
    ("broker-1", "damaged-0", "restart_trims_tail"): ("broker-1", "truncated_tail"),
    ("broker-1", "damaged-0", "index_bad_entry"): ("broker-1", "truncated_tail"),
    ("broker-1", "damaged-0", "timeindex_bad_entry"): ("broker-1", "truncated_tail"),
    # clicks-0: the copy of 200-249 never finished and its local segment was deleted anyway: the gap
    ("broker-1", "clicks-0", "remote_log_gap"): ("broker-1", "remote_segment_stuck"),
    # mangled-0: the segment named 100 whose first batch is 95 overlaps the segment before it
    ("broker-1", "mangled-0", "offset_overlap"): ("broker-1", "segment_name_mismatch"),
    # payments-0: producer 2001's transaction left open holds the LSO, where the cleaner stops; the follower's copy
    # holds the same open transaction the leader (broker-1) appended
    ("broker-1", "payments-0", "cleaner_blocked"): ("broker-1", "hanging_transaction"),
    ("broker-2", "payments-0", "hanging_transaction"): ("broker-1", "hanging_transaction"),
    # broker-3: the flipped bit above the recovery point makes the restart truncate; below it, it is served as is
    ("broker-3", "unflushed-0", "restart_would_truncate"): ("broker-3", "corrupt_crc"),
    ("broker-3", "flushed-0", "damage_below_recovery_point"): ("broker-3", "corrupt_crc"),
}


def broker_incidents(brokers: dict) -> list[dict]:
    """EXPECTED.json's `incidents`: those of broker-1..3's planted anomalies (FOLLOWS)."""
    keys: dict[tuple[str, str, str], list[tuple[int | None, dict]]] = {}
    for broker, info in brokers.items():
        for name, facts in info["partitions"].items():
            topic, partition = name.rsplit("-", 1)
            for a in facts["anomalies"]:
                keys.setdefault((broker, name, a["kind"]), []).append((a["producer_id"], finding_key(
                    a["kind"], broker, a.get("topic", topic), a.get("partition", int(partition)), a["offset"],
                    a["producer_id"])))
    planted: list[tuple[dict, dict | None]] = []
    for (broker, name, kind), found in keys.items():
        for producer_id, key in found:
            cause = FOLLOWS.get((broker, name, kind, producer_id)) or FOLLOWS.get((broker, name, kind))
            cause_key = None
            if cause is not None:
                # the one planted anomaly of that kind there (of that producer, where FOLLOWS names one)
                (cause_key,) = [k for p, k in keys[(cause[0], name, cause[1])] if cause[2:] in ((), (p,))]
            planted.append((key, cause_key))
    return planted_incidents(planted)


#: Every anomaly in EXPECTED.json carries these keys (None where they do not apply).
ANOMALY_KEYS = ("kind", "file", "position", "offset", "producer_id", "producer_epoch")
#: Kinds about one batch of the log: file, position and producer epoch are that batch's.
BATCH_ANOMALIES = {"sequence_gap", "duplicate_sequence", "zombie_epoch", "hanging_transaction", "content_duplicate",
                   "offset_overlap", "leader_epoch_mismatch", "replica_divergence", "marker_missing",
                   "outcome_mismatch", "unknown_producer", "epoch_fenced_write", "cleaner_blocked"}


def _complete_anomaly(anomaly: dict, batches: list[dict]) -> dict:
    """Fill the standard keys of a planted anomaly from the batch it is about (or None)."""
    out = dict(anomaly)
    if anomaly["kind"] in BATCH_ANOMALIES:
        batch = next(b for b in batches if b["base_offset"] == anomaly["offset"]
                     and anomaly.get("producer_id", b["producer_id"]) == b["producer_id"])
        out.setdefault("file", batch["segment"])
        out.setdefault("position", batch["position"])
        if "producer_id" in anomaly:
            out.setdefault("producer_epoch", batch["producer_epoch"])
    for key in ANOMALY_KEYS:
        out.setdefault(key, None)
    return out


def partition_facts(p: PartitionWriter, files: dict[str, int], log_end: int, hw: int, *,
                    preallocated: bool = True) -> dict:
    data = [b for b in p.fact_batches if b["base_offset"] < log_end]
    producers: dict[int, dict] = {}
    for b in data:
        if b["producer_id"] < 0 or b["is_control"]:
            continue
        s = producers.setdefault(b["producer_id"], {"producer_id": b["producer_id"], "epochs": [], "batch_count": 0,
                                                    "record_count": 0, "first_sequence": b["base_sequence"]})
        if b["producer_epoch"] not in s["epochs"]:
            s["epochs"].append(b["producer_epoch"])
        s["batch_count"] += 1
        s["record_count"] += b["count"]
        s["last_sequence"] = b["last_sequence"]
    return {
        "topic": p.topic, "partition": p.partition,
        "segments": [{"base_offset": int(name), "log_bytes": size} for name, size in files.items()],
        "batch_count": len(data), "record_count": sum(b["count"] for b in data),
        "first_offset": data[0]["base_offset"] if data else None,
        "last_offset": data[-1]["last_offset"] if data else None,
        "log_end_offset": log_end, "high_watermark": hw, "log_start_offset": p.log_start_offset,
        "codecs": sorted({b["codec"] for b in data}), "magics": sorted({b["magic"] for b in data}),
        "leader_epochs": [list(e) for e in p.epochs],
        "producers": sorted(producers.values(), key=lambda s: s["producer_id"]),
        "transactions": p.transactions,
        "aborted_ranges": [{"producer_id": pid, "first_offset": f, "last_offset": last, "last_stable_offset": lso}
                           for seg in p.segments for pid, f, last, lso in seg.txnindex],
        "anomalies": [_complete_anomaly(a, p.fact_batches) for a in p.anomalies], "legal": p.legal + ([
            {"kind": "preallocated_index_tail", "file": f"{p.active.base_offset:020d}.{suffix}"}
            for suffix in ("index", "timeindex")] if preallocated else []), "batches": data,
    }


def main(out: Path) -> None:
    rng = random.Random(20251120)
    for name in ("broker-1", "broker-2"):
        shutil.rmtree(out / name, ignore_errors=True)
    b1, b2 = out / "broker-1", out / "broker-2"
    b1.mkdir(parents=True)
    b2.mkdir(parents=True)
    expected: dict = {"generated_by": "sample_logs/generate.py", "base_timestamp": BASE_TS, "brokers": {}}

    orders = build_orders(rng)
    legacy = build_legacy(rng)
    payments, coordinator_log = build_payments(rng)
    events = build_events(rng)
    damaged, cut, damaged_last = build_damaged(rng)
    txn_state = internal_partition("__transaction_state", transaction_state_records(coordinator_log))
    offsets = internal_partition("__consumer_offsets", consumer_offsets_records())
    extra = [build_txnbad(rng), build_resend(rng), build_mangled(rng), build_retained(rng)]
    # Whole-cluster cases, from their own random streams (the partitions above keep their bytes).
    inventory_1, inventory_2 = build_inventory(random.Random(20251122))
    transfers, txn_log_1 = build_transfers(random.Random(20251123), extra[0])
    commits_1, commit_anomalies = consumer_offsets_1(payments)
    extra += [inventory_1, transfers]
    # Tiered storage: two partitions with history in the remote tier, and the metadata topic describing it.
    tiered = [build_clicks(random.Random(20251124)), build_views(random.Random(20251125))]
    metadata = remote_log_metadata_partitions(tiered, "scratch")
    extra += [*tiered, *metadata.values()]
    share_state, share_records = build_share_group_state()
    extra.append(share_state)

    # payments-0 is compacted on broker-1 (the cleaner has cleaned up to its active segment, 34): the hanging
    # transaction at 43 holds the LSO, past which the cleaner never goes (KIP-664's unbounded growth).
    cleaned_to = payments.segments[-1].base_offset
    hanging = next(a for a in payments.anomalies if a["kind"] == "hanging_transaction")
    blocked = {"kind": "cleaner_blocked", "producer_id": hanging["producer_id"], "offset": hanging["first_offset"],
               "cleaner_offset": cleaned_to, "last_stable_offset": hanging["first_offset"],
               "held_by_producer_id": hanging["producer_id"], "txn_first_offset": hanging["first_offset"],
               "bytes_behind": sum(b["size"] for b in payments.fact_batches
                                   if b["last_offset"] >= hanging["first_offset"])}
    payments.anomalies.append(blocked)

    parts1 = {}
    hw1 = []
    for p in (orders, legacy, payments, events, txn_state, offsets, *extra):
        files = p.write(b1)
        hw = p.next_offset if p.high_watermark is None else p.high_watermark
        parts1[p.name] = partition_facts(p, files, p.next_offset, hw)
        hw1.append((p.topic, p.partition, hw))
    for p in tiered:
        remote, metadata_dir = remote_facts(p, metadata)
        parts1[p.name]["remote_segments"] = remote
        parts1[p.name]["remote_log_metadata_partition"] = metadata_dir
        if p.topic == "clicks":
            parts1[p.name]["anomalies"] += [{"producer_id": None, "producer_epoch": None, **a}
                                            for a in clicks_anomalies(remote, metadata_dir)]
    parts1[share_state.name]["share_group_state"] = share_records
    files = damaged.write(b1, truncate_tail=cut, final_snapshot=False)  # crashed: no snapshot at shutdown
    damaged_end = damaged_last["base_offset"]
    parts1[damaged.name] = partition_facts(damaged, files, damaged_end, damaged_end)
    hw1.append((damaged.topic, damaged.partition, damaged_end))
    (b1 / "meta.properties").write_text(
        "#\n#Thu Nov 20 10:00:00 UTC 2025\nnode.id=1\ndirectory.id=Wm9Lq0xhS0GJ3sVQfT7o2A\nversion=1\n"
        "cluster.id=kforensics-sample-cluster\n")
    write_checkpoint(b1 / "replication-offset-checkpoint", hw1)
    write_checkpoint(b1 / "recovery-point-offset-checkpoint",
                     [(t, p, o) for t, p, o in hw1 if t != "damaged"] + [("damaged", 0, 48)])
    damaged_restart_prediction(parts1[damaged.name], 48)
    starts = {(p.topic, p.partition): p.log_start_offset for p in (orders, legacy, payments, events, txn_state,
                                                                   offsets, damaged, *extra)}
    write_checkpoint(b1 / "log-start-offset-checkpoint", [(t, p, starts[(t, p)]) for t, p, _ in hw1])
    write_checkpoint(b1 / "cleaner-offset-checkpoint", [("__consumer_offsets", 0, 0), ("payments", 0, cleaned_to)])
    expected["brokers"]["broker-1"] = {"node_id": 1, "clean_shutdown": False, "partitions": parts1}

    # broker-2: a lagging but sound follower of orders-0 and payments-0 (same bytes, a shorter log).
    parts2 = {}
    hw2 = []
    for p, lag in ((orders, 3), (payments, 2)):
        follower = _truncated_copy(p, len(p.fact_batches) - lag)
        files = follower.write(b2, active_preallocated=False)  # clean shutdown: active indexes trimmed
        parts2[p.name] = partition_facts(follower, files, follower.next_offset, follower.next_offset,
                                         preallocated=False)
        hw2.append((p.topic, p.partition, follower.next_offset))
    # The new leader of inventory-0 after the unclean election, and the coordinators for transfers-0 and the
    # group offsets of the whole-cluster checks.
    txn_state_1 = coordinator_partition("__transaction_state", 1, txn_log_1)
    offsets_1 = coordinator_partition("__consumer_offsets", 1, commits_1)
    for p in (inventory_2, txn_state_1, offsets_1):
        files = p.write(b2, active_preallocated=False)
        parts2[p.name] = partition_facts(p, files, p.next_offset, p.next_offset, preallocated=False)
        hw2.append((p.topic, p.partition, p.next_offset))
    commits = parts2[offsets_1.name]
    for anomaly in commit_anomalies:
        batch = commits["batches"][anomaly.pop("commit_index")]
        commits["anomalies"].append({**anomaly, "file": batch["segment"], "position": batch["position"],
                                     "producer_id": None, "producer_epoch": None})
    (b2 / "meta.properties").write_text(
        "#\n#Thu Nov 20 10:00:00 UTC 2025\nbroker.id=2\nversion=0\ncluster.id=kforensics-sample-cluster\n")
    (b2 / ".kafka_cleanshutdown").write_text("")
    write_checkpoint(b2 / "replication-offset-checkpoint", hw2)
    write_checkpoint(b2 / "recovery-point-offset-checkpoint", hw2)
    write_checkpoint(b2 / "log-start-offset-checkpoint", [(t, p, 0) for t, p, _ in hw2])
    write_checkpoint(b2 / "cleaner-offset-checkpoint", [("__consumer_offsets", 1, 0)])
    # A deleted topic whose partition dir the broker renamed `<topic>-<partition>.<uuid hex>-delete` and has not
    # removed yet: no longer in any checkpoint.
    scratch = build_scratch(random.Random(20251121))
    files = scratch.write(b2, active_preallocated=False)
    deleted_dir = f"{scratch.name}.{hashlib.md5(b'scratch-0 deleted').hexdigest()}-delete"
    (b2 / scratch.name).rename(b2 / deleted_dir)
    deleted = partition_facts(scratch, files, scratch.next_offset, scratch.next_offset, preallocated=False)
    deleted["legal"].append({"kind": "pending_delete_dir", "file": deleted_dir})
    expected["brokers"]["broker-2"] = {"node_id": 2, "clean_shutdown": True, "partitions": parts2,
                                       "deleted_partitions": {deleted_dir: deleted}}

    build_broker_3(out, expected)
    # A three-broker KRaft cluster with its metadata log (generate_kraft.py).
    import generate_kraft

    expected["kraft"] = generate_kraft.main(out)
    expected["incidents"] = broker_incidents(expected["brokers"])
    (out / "EXPECTED.json").write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")


# --- broker-3: a crashed broker, and what its restart would do (issue 28) -------------------------------------

def _restart_partition(rng: random.Random, topic: str, batches: int, roll_at: tuple[int, ...], corrupt_at: int,
                       ts: int) -> tuple[PartitionWriter, dict]:
    """`batches` batches of 5 records (none / lz4 alternating); one flipped bit inside the records of batch
    `corrupt_at` (its length and framing intact). Returns the writer and the corrupt_crc anomaly."""
    p = PartitionWriter(topic, 0)
    p.set_leader_epoch(3)
    bad = None
    for i in range(batches):
        if i in roll_at:
            p.roll()
        recs = records(rng, 5, ts, prefix=topic[:4], headers=True)
        codec = LZ4 if i % 2 else NONE
        batch = data_batch(recs, codec=codec)
        stored = None
        if i == corrupt_at:
            stored = struct.unpack_from(">I", batch, 17)[0]
            batch[-5] ^= 0x08
        fact = p.append(batch, count=5, max_ts=recs[-1][0], codec=codec)
        if stored is not None:
            bad = {"kind": "corrupt_crc", "file": fact["segment"], "position": fact["position"],
                   "offset": fact["base_offset"], "stored_crc": stored, "computed_crc": crc32c(bytes(batch[21:]))}
            p.anomalies.append(bad)
        ts += 500
    return p, bad


def build_broker_3(out: Path, expected: dict) -> None:
    """broker-3 crashed (no `.kafka_cleanshutdown`): in `unflushed-0` a bad CRC in the middle of the segment
    holding the recovery point, with a later segment behind it (a restart truncates there and deletes the later
    segment); in `flushed-0` a bad CRC below the recovery point (a restart keeps serving it). Same cluster as
    broker-1 and broker-2, topics of its own (no replicas to compare)."""
    b3 = out / "broker-3"
    shutil.rmtree(b3, ignore_errors=True)
    b3.mkdir(parents=True)
    rng = random.Random(20251128)
    ts = BASE_TS + 3 * 3600_000
    # unflushed-0: segments 0 (0-29), 30 (30-59, corrupt batch 40-44), 60 (60-89); recovery point 35, HW 80.
    unflushed, bad_u = _restart_partition(rng, "unflushed", 18, (6, 12), 8, ts)
    unflushed.recovery_point, unflushed.high_watermark = 35, 80
    # flushed-0: segments 0 (0-29, corrupt batch 10-14), 30 (30-59); recovery point 60 (= log end), HW 60.
    flushed, bad_f = _restart_partition(rng, "flushed", 12, (6,), 2, ts)
    flushed.recovery_point, flushed.high_watermark = 60, 60
    parts: dict = {}
    for p in (unflushed, flushed):
        files = p.write(b3, final_snapshot=False)  # crashed: no snapshot at shutdown, active indexes preallocated
        parts[p.name] = partition_facts(p, files, p.next_offset, p.high_watermark)
    seg_u = [b for b in unflushed.fact_batches if b["segment"] == bad_u["file"]]
    cut = (b3 / unflushed.name / bad_u["file"]).stat().st_size - bad_u["position"]
    later = sum(size for name, size in files_of(b3 / unflushed.name) if int(name) > int(bad_u["file"][:20]))
    truncate = {"truncate_at_offset": bad_u["offset"], "bytes_discarded": cut + later, "segments_deleted": 1,
                "offsets_discarded": [bad_u["offset"] + 5, unflushed.next_offset - 1],
                "committed_offsets_discarded": [bad_u["offset"] + 5, unflushed.high_watermark - 1],
                "damage_kind": "corrupt_crc", "recovery_point": unflushed.recovery_point}
    assert seg_u[-1]["last_offset"] > bad_u["offset"]  # valid batches behind the damage in the same segment
    parts[unflushed.name]["anomalies"].append(
        {"kind": "restart_would_truncate", "file": bad_u["file"], "position": bad_u["position"],
         "offset": bad_u["offset"], "producer_id": None, "producer_epoch": None, **truncate})
    parts[unflushed.name]["restart_prediction"] = {
        "clean_shutdown": False, "recovery_point": 35, "segments_recovered": 1, "truncate_at_file": bad_u["file"],
        "truncate_at_position": bad_u["position"], **{k: truncate[k] for k in (
            "truncate_at_offset", "bytes_discarded", "segments_deleted", "offsets_discarded",
            "committed_offsets_discarded")}}
    parts[flushed.name]["anomalies"].append(
        {"kind": "damage_below_recovery_point", "file": bad_f["file"], "position": bad_f["position"],
         "offset": bad_f["offset"], "producer_id": None, "producer_epoch": None, "damage_kind": "corrupt_crc",
         "recovery_point": 60, "clean_shutdown": False})
    parts[flushed.name]["restart_prediction"] = {
        "clean_shutdown": False, "recovery_point": 60, "segments_recovered": 1, "truncate_at_offset": None,
        "truncate_at_file": None, "truncate_at_position": None, "bytes_discarded": 0, "segments_deleted": 0,
        "offsets_discarded": None, "committed_offsets_discarded": None}
    (b3 / "meta.properties").write_text(
        "#\n#Thu Nov 20 10:00:00 UTC 2025\nnode.id=3\ndirectory.id=c2FtcGxlLWJyb2tlci0zAA\nversion=1\n"
        "cluster.id=kforensics-sample-cluster\n")
    ps = (unflushed, flushed)
    write_checkpoint(b3 / "replication-offset-checkpoint", [(p.topic, p.partition, p.high_watermark) for p in ps])
    write_checkpoint(b3 / "recovery-point-offset-checkpoint", [(p.topic, p.partition, p.recovery_point) for p in ps])
    write_checkpoint(b3 / "log-start-offset-checkpoint", [(p.topic, p.partition, 0) for p in ps])
    write_checkpoint(b3 / "cleaner-offset-checkpoint", [])
    expected["brokers"]["broker-3"] = {"node_id": 3, "clean_shutdown": False, "partitions": parts}


def files_of(pdir: Path) -> list[tuple[str, int]]:
    """(stem, size) of a partition dir's .log files."""
    return sorted((f.stem, f.stat().st_size) for f in pdir.glob("*.log"))


def damaged_restart_prediction(facts: dict, recovery_point: int) -> None:
    """broker-1's damaged-0 after its crash: the corrupt batch is below the recovery point (served as is), the
    torn last batch above it (trimmed: nothing valid behind it)."""
    bad = next(a for a in facts["anomalies"] if a["kind"] == "corrupt_crc")
    tail = next(a for a in facts["anomalies"] if a["kind"] == "truncated_tail")
    facts["anomalies"] += [
        {"kind": "damage_below_recovery_point", "file": bad["file"], "position": bad["position"],
         "offset": bad["offset"], "producer_id": None, "producer_epoch": None, "damage_kind": "corrupt_crc",
         "recovery_point": recovery_point, "clean_shutdown": False},
        {"kind": "restart_trims_tail", "file": tail["file"], "position": tail["position"], "offset": tail["offset"],
         "producer_id": None, "producer_epoch": None, "truncate_at_offset": tail["offset"],
         "bytes_discarded": tail["bytes_present"], "damage_kind": "truncated_tail",
         "recovery_point": recovery_point}]
    facts["restart_prediction"] = {
        "clean_shutdown": False, "recovery_point": recovery_point, "segments_recovered": 1,
        "truncate_at_offset": tail["offset"], "truncate_at_file": tail["file"], "truncate_at_position": tail["position"],
        "bytes_discarded": tail["bytes_present"], "segments_deleted": 0, "offsets_discarded": None,
        "committed_offsets_discarded": None}


def _truncated_copy(p: PartitionWriter, keep_batches: int) -> PartitionWriter:
    """Replay the first `keep_batches` batches of a partition into a new writer (a follower's log)."""
    f = PartitionWriter(p.topic, p.partition)
    f.epochs = []
    rolls = {seg.base_offset for seg in p.segments[1:]}
    for b in p.fact_batches[:keep_batches]:
        if b["base_offset"] in rolls:
            f.roll()
        if not f.epochs or f.epochs[-1][0] != b["partition_leader_epoch"]:
            f.set_leader_epoch(b["partition_leader_epoch"])
        seg = next(s for s in p.segments if f"{s.base_offset:020d}.log" == b["segment"])
        raw = bytearray(seg.data[b["position"]:b["position"] + b["size"]])
        f.append(raw, count=b["count"], max_ts=b["max_timestamp"], producer_id=b["producer_id"],
                 producer_epoch=b["producer_epoch"], base_sequence=b["base_sequence"],
                 transactional=b["is_transactional"], control=b["control_type"], coordinator_epoch=5,
                 codec=CODEC_NAMES.index(b["codec"]), leader_epoch=b["partition_leader_epoch"])
    f.open_transactions()
    # The follower's copy still ends with the leader's open transaction, and still long after it began.
    f.anomalies = [a for a in p.anomalies if a["kind"] == "hanging_transaction" and a["offset"] < f.next_offset]
    f.legal = [c for c in p.legal if c.get("offset") is None or c["offset"] < f.next_offset]
    return f


# --- a disk whose strings are hostile (issue 42): built by tests into a temporary folder, never committed ----------

#: Strings a client or a disk may hold, each a legal Kafka name: rich markup (a closing tag with nothing to close),
#: emoji codes, CSI and OSC sequences, a C1 CSI, bidirectional overrides and isolates, NUL, CR and LF.
HOSTILE_DIR = "notes\x1b[31mRED\x1b[0m[bold]B:x:"
HOSTILE_TOPIC = "t[bold]\x1b]0;pwned\x07\u202eevil:x:\r"  # a partition dir name: no '/', no NUL, no LF
HOSTILE_GROUP = "g[/]\x1b[2J\u2066x\x00\n:smile:"
HOSTILE_TID = "tx[/bold]\x9b31m\u202e\x00"
HOSTILE_KEY = b"k[/]\x1b[31m\xe2\x80\xae"  # a key, a value and a header: UTF-8 with controls in it
HOSTILE_HEADER = "h\x1b[1m[/]"
HOSTILE_UNDECODABLE = os.fsdecode(b"\xdcbersicht-0")  # a folder named in Latin-1: not UTF-8, so no partition


def build_hostile_broker(out: Path) -> dict[str, str]:
    """A small broker disk whose names and ids are hostile strings (the HOSTILE_* constants): a stray folder, a
    topic whose transactional producer is left open and whose idempotent one skips sequences, the coordinator's
    records of that transactional id, a group committing beyond the log end, and a folder whose name is not UTF-8.
    Returns the strings used and the disk's path."""
    out.mkdir(parents=True, exist_ok=True)
    (out / HOSTILE_UNDECODABLE).mkdir()
    (out / HOSTILE_DIR).mkdir()
    (out / HOSTILE_DIR / "readme.txt").write_text("not a partition\n")
    data = PartitionWriter(HOSTILE_TOPIC, 0)
    data.set_leader_epoch(0)
    ts = BASE_TS
    for i, base_sequence in enumerate((0, 3, 9)):  # 3 -> 9: a sequence gap
        recs = [(ts + j, HOSTILE_KEY, HOSTILE_KEY + b"-value", [(HOSTILE_HEADER, HOSTILE_KEY)]) for j in range(3)]
        data.append(data_batch(recs, producer_id=100, producer_epoch=0, base_sequence=base_sequence), count=3,
                    max_ts=recs[-1][0], producer_id=100, producer_epoch=0, base_sequence=base_sequence)
        ts += 1000 * (i + 1)
    recs = [(ts, HOSTILE_KEY, None, [])]
    data.append(data_batch(recs, producer_id=200, producer_epoch=0, base_sequence=0, transactional=True), count=1,
                max_ts=ts, producer_id=200, producer_epoch=0, base_sequence=0, transactional=True)
    data.open_transactions()
    data.write(out, active_preallocated=False)
    parts = [(HOSTILE_TOPIC, [0])]
    txn = coordinator_partition("__transaction_state", 0, [
        txn_log_entry(HOSTILE_TID, 200, 0, "Ongoing", parts, ts - 10, ts - 10, timeout_ms=1000)])
    txn.write(out, active_preallocated=False)
    offsets = coordinator_partition("__consumer_offsets", 0, [offset_commit(HOSTILE_GROUP, HOSTILE_TOPIC, 0, 10_000,
                                                                            ts + 5)])
    offsets.write(out, active_preallocated=False)
    (out / "meta.properties").write_text("node.id=9\nversion=1\ncluster.id=hostile-cluster\n")
    ends = [(p.topic, p.partition, p.next_offset) for p in (data, txn, offsets)]
    for name in ("replication-offset-checkpoint", "recovery-point-offset-checkpoint"):
        write_checkpoint(out / name, ends)
    write_checkpoint(out / "log-start-offset-checkpoint", [(t, p, 0) for t, p, _ in ends])
    return {"path": str(out), "dir": HOSTILE_DIR, "topic": HOSTILE_TOPIC, "group": HOSTILE_GROUP,
            "transactional_id": HOSTILE_TID}


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent
    target.mkdir(parents=True, exist_ok=True)
    main(target)
    total = sum(f.stat().st_size for f in target.rglob("*") if f.is_file())
    print(f"wrote {target} ({total / 1e6:.2f} MB)", file=sys.stderr)

