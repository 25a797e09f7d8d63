"""The exactly-once samples (issue 39): two broker disks of clusters on Transactions V2 (KIP-890, Kafka 4.x), written
record by record as Kafka 4.x's coordinators write them, and their bookkeeping in EXPECTED_EOS.json (same bytes every
run).

- `eos-1` (cluster `kforensics-eos`): healthy. A Streams-like app `wordcount` (exactly_once_v2: one transactional id
  per stream thread) reads `words-0/1`, writes its changelog `wordcount-counts-changelog-0/1` and its output
  `word-counts-0/1`, and commits its input offsets in each transaction (TxnOffsetCommit). Every end of a transaction
  bumps the epoch (the markers carry data epoch + 1); thread `wordcount-a-1` exhausts producer id 5000 at epoch 32766
  and is rotated to 5001 (markers of 5000 at 32767, CompleteCommit naming 5001 at epoch 0 with PreviousProducerId
  5000); its client clock runs 40 ms ahead of the coordinator's. Thread `wordcount-a-2` was rotated long ago from
  3990 to 3991; its coordinator records are compacted away but for the newest (the __transaction_state partition's
  cleaned segment holds the newest record per id, the dirty head the rest). Task 0_0 migrates from `wordcount-a-2` to
  `wordcount-b-1` (producer 6000): the old thread aborts its open transaction (its offset commit dropped), the new one
  re-writes the same records and commits. `wordcount-a-1` aborts one transaction and redoes it, and has one in flight
  at the log end. `inventory-sync` (transaction timeout 1 h) holds a transaction open for 30 min in the compacted
  `inventory-0`; `ledger-2pc` (KIP-939 two-phase commit, timeout Integer.MAX_VALUE) holds a prepared transaction in
  `ledger-0`. `pageviews-0` is tiered (offsets 0-99 in the remote tier, 100-199 local) and group `pageview-reader`
  reads from the remote tier; group `audit-reader`'s commits on `audit-0` were written across a coordinator failover
  whose new leader's clock ran 5 s behind (log order and timestamps disagree).
- `eos-2` (cluster `kforensics-eos-broken`): the genuinely broken cases under Transactions V2, with all 50
  `__transaction_state` partitions in the input (49 empty): a COMMIT marker missing from `orders-0` (its data is
  committed only by the next transaction's marker there, which orders-0's leader stamped with a clock 1.5 s behind),
  a zombie write by a fenced epoch in `shipments-0` (after a marker of a higher epoch, and 30 s after the
  coordinator's PrepareCommit), and an open transaction of a producer id no coordinator knows.

Batches are kafka-python's and generate.py's (imported, not copied); the __transaction_state values (TransactionLogValue
v1 with its tagged fields, as TransactionLog.valueToBytes writes them for transaction.version 2) and everything else
only a broker writes are written here with struct. Rules followed (apache/kafka): TransactionMetadata
prepareAbortOrCommit / prepareComplete / prepareIncrementProducerEpoch (transaction-coordinator 38666db4),
TransactionCoordinator.endTransaction (core bb126f2d), TransactionLog.valueToBytes (014bd42a), CoordinatorRuntime
(TxnOffsetCommit batches carry the producer's id and epoch and base sequence 0; coordinator-common 1eb76443) and
OffsetMetadataManager (group-coordinator 2d7df031).

    python sample_logs/generate_eos.py [OUT_DIR]      (default: the folder this script is in)
"""

from __future__ import annotations

import json
import shutil
import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path

import generate as g

T0 = g.BASE_TS + 10 * g.HOUR_MS
CLUSTER = "kforensics-eos"
BROKEN_CLUSTER = "kforensics-eos-broken"
PARTITIONS = 50  # transaction.state.log.num.partitions, offsets.topic.num.partitions
TWO_PHASE_COMMIT_TIMEOUT = 2**31 - 1  # Integer.MAX_VALUE (KIP-939)
EXHAUSTED = 32766  # TransactionMetadata.isEpochExhausted: the last epoch a client may use
COORDINATOR_EPOCH = 2
WORDS = ("kafka", "stream", "commit", "abort", "epoch", "marker", "offset", "fence")


def partition_for(key: str) -> int:
    """Utils.abs(key.hashCode()) % 50 (TransactionStateManager / GroupMetadataManager partitionFor)."""
    h = g._java_string_hash(key)
    return (0 if h == -(1 << 31) else abs(h)) % PARTITIONS


# --- __transaction_state values (TransactionLogValue v1, flexible, with tagged fields) ----------------------------

def txn_value(pid: int, epoch: int, timeout: int, state: str, parts: list[tuple[str, list[int]]] | None,
              updated: int, started: int, *, prev: int, next_pid: int = -1, tv: int = 2) -> bytes:
    """TransactionLog.valueToBytes at transaction.version 2: value version 1; Empty has null partitions; tagged
    PreviousProducerId (0), NextProducerId (1), ClientTransactionVersion (2), written where not their defaults."""
    out = struct.pack(">hqhib", 1, pid, epoch, timeout, g.TXN_STATES[state])
    if parts is None:
        out += g._uvarint(0)
    else:
        out += g._uvarint(len(parts) + 1) + b"".join(
            g._compact_str(t) + g._uvarint(len(ps) + 1) + b"".join(struct.pack(">i", x) for x in ps) + b"\x00"
            for t, ps in parts)
    out += struct.pack(">qq", updated, started)
    tags = [(0, struct.pack(">q", prev))] if prev != -1 else []
    tags += [(1, struct.pack(">q", next_pid))] if next_pid != -1 else []
    tags += [(2, struct.pack(">h", tv))] if tv != 0 else []
    return out + g._uvarint(len(tags)) + b"".join(g._uvarint(t) + g._uvarint(len(d)) + d for t, d in tags)


def txn_key(tid: str) -> bytes:
    return struct.pack(">h", 0) + g._kstr(tid)


# --- one broker's partitions ---------------------------------------------------------------------------------------

@dataclass
class Broker:
    """The partitions of one broker disk, the coordinators' logs before they are laid out, and the bookkeeping."""

    name: str
    cluster_id: str
    node_id: int
    parts: dict[str, g.PartitionWriter] = field(default_factory=dict)
    coordinator: dict[int, list[tuple[int, bytes, bytes]]] = field(default_factory=dict)  # partition -> records
    compact_before: dict[int, int] = field(default_factory=dict)  # partition -> first dirty record index
    sequences: dict[tuple[int, int, str], int] = field(default_factory=dict)
    expected_transactions: list[dict] = field(default_factory=list)
    healthy: list[dict] = field(default_factory=list)
    anomalies: list[dict] = field(default_factory=list)

    def part(self, name: str) -> g.PartitionWriter:
        if name not in self.parts:
            topic, _, partition = name.rpartition("-")
            p = g.PartitionWriter(topic, int(partition))
            p.set_leader_epoch(0)
            self.parts[name] = p
        return self.parts[name]

    def record(self, tid: str, at: int, value: bytes) -> None:
        """A __transaction_state record of `tid`, in the partition it hashes to, at coordinator time `at`."""
        self.coordinator.setdefault(partition_for(tid), []).append((at, txn_key(tid), value))

    def data(self, name: str, pid: int, epoch: int, recs: list[tuple[int, bytes, bytes]], *,
             transactional: bool = True) -> dict:
        """A batch of `recs` (timestamp, key, value) by producer `pid` (sequence per producer, epoch and partition)."""
        key = (pid, epoch, name)
        seq = self.sequences.get(key, 0)
        self.sequences[key] = seq + len(recs)
        rows = [(ts, k, v, []) for ts, k, v in recs]
        return self.part(name).append(
            g.data_batch(rows, producer_id=pid, producer_epoch=epoch, base_sequence=seq, transactional=transactional),
            count=len(recs), max_ts=max(ts for ts, _, _ in recs), producer_id=pid, producer_epoch=epoch,
            base_sequence=seq, transactional=transactional)

    def marker(self, name: str, pid: int, epoch: int, commit: bool, at: int) -> dict:
        return self.part(name).append(g.control_batch(pid, epoch, commit, COORDINATOR_EPOCH, at), count=1, max_ts=at,
                                      producer_id=pid, producer_epoch=epoch, transactional=True,
                                      control="COMMIT" if commit else "ABORT", coordinator_epoch=COORDINATOR_EPOCH)

    def commit(self, group: str, topic: str, partition: int, offset: int, at: int, *, pid: int = -1,
               epoch: int = -1) -> dict:
        """An offset commit in the group's __consumer_offsets partition, stamped by the group coordinator: a plain
        one, or (pid) a TxnOffsetCommit in a transactional batch of that producer, base sequence 0 as
        CoordinatorRuntime writes every batch."""
        _, key, value = g.offset_commit(group, topic, partition, offset, at)
        p = self.part(f"__consumer_offsets-{partition_for(group)}")
        transactional = pid >= 0
        return p.append(g.data_batch([(at, key, value, [])], producer_id=pid, producer_epoch=epoch,
                                     base_sequence=0 if transactional else -1, transactional=transactional),
                        count=1, max_ts=at, producer_id=pid, producer_epoch=epoch,
                        base_sequence=0 if transactional else -1, transactional=transactional)


@dataclass
class Producer:
    """A transactional producer under Transactions V2, as its coordinator sees it: transactional id, producer id,
    epoch, timeout, and how far its client clock runs from the coordinator's."""

    broker: Broker
    tid: str
    pid: int
    epoch: int
    timeout: int = 60_000
    skew: int = 0
    started: bool = False

    def init(self, at: int) -> None:
        """InitProducerId for a new transactional id: Empty at epoch 0 (prepareIncrementProducerEpoch from -1)."""
        self.broker.record(self.tid, at, txn_value(self.pid, self.epoch, self.timeout, "Empty", None, at, -1,
                                                   prev=self.pid))

    def transaction(self, at: int, writes: list[tuple[str, list[tuple[bytes, bytes]]]],
                    offsets: list[tuple[str, str, int, int]] = (), *, outcome: str | None = "COMMIT",
                    missing_marker: tuple[str, ...] = (), leader_clock: dict[str, int] | None = None) -> dict:
        """One transaction from coordinator time `at`: each written partition added (an Ongoing record per partition,
        as the broker's implicit AddPartitionsToTxn writes them under TV2), its batches (client clock), the offset
        commits (group, topic, partition, offset: AddOffsetsToTxn adds the group's __consumer_offsets partition, the
        group coordinator writes the TxnOffsetCommit), then EndTxn: Prepare* at epoch + 1 (with NextProducerId when
        the epoch is exhausted), the markers at that epoch, Complete* (the next producer id at epoch 0 on a rotation).
        `outcome` None: still in flight (no EndTxn); `missing_marker`: partitions whose marker is never written;
        `leader_clock`: how far a partition leader's clock (which stamps the marker) runs from the coordinator's.
        Returns what the coordinator completed."""
        b, t = self.broker, at
        names = [n for n, _ in writes] + sorted({f"__consumer_offsets-{partition_for(grp)}" for grp, *_ in offsets})
        added: list[str] = []
        first: dict[str, int] = {}
        for name, recs in writes:
            if name not in added:
                added.append(name)
                b.record(self.tid, t, txn_value(self.pid, self.epoch, self.timeout, "Ongoing", _parts(added), t, at,
                                                prev=self.pid))
            t += 3
            batch = b.data(name, self.pid, self.epoch, [(t + self.skew + i, k, v) for i, (k, v) in enumerate(recs)])
            first.setdefault(name, batch["base_offset"])
            t += 5
        for grp, topic, partition, offset in offsets:
            co = f"__consumer_offsets-{partition_for(grp)}"
            if co not in added:
                added.append(co)
                b.record(self.tid, t, txn_value(self.pid, self.epoch, self.timeout, "Ongoing", _parts(added), t, at,
                                                prev=self.pid))
            t += 2
            batch = b.commit(grp, topic, partition, offset, t, pid=self.pid, epoch=self.epoch)
            first.setdefault(co, batch["base_offset"])
        done = {"transactional_id": self.tid, "producer_id": self.pid, "data_epoch": self.epoch, "partitions":
                sorted(names, key=_tp_key), "start": at, "first_offsets": first}
        if outcome is None:
            done["outcome"] = "ONGOING"
            return done
        t += 4  # the client's EndTxn; TransactionCoordinator.endTransaction (TV2) bumps the epoch
        bumped = self.epoch + 1
        next_pid = self.pid + 1 if self.epoch >= EXHAUSTED else -1
        commit = outcome == "COMMIT"
        prepare = "PrepareCommit" if commit else "PrepareAbort"
        b.record(self.tid, t, txn_value(self.pid, bumped, self.timeout, prepare, _parts(added), t, at, prev=self.pid,
                                        next_pid=next_pid))
        prepared_at = t
        for name in added:  # TransactionMarkerChannelManager: the Prepare record's producer id and epoch
            t += 1
            if name not in missing_marker:
                b.marker(name, self.pid, bumped, commit, t + (leader_clock or {}).get(name, 0))
        t += 3
        complete = "CompleteCommit" if commit else "CompleteAbort"
        if next_pid != -1:  # rotation: prepareComplete names the next producer id at epoch 0
            b.record(self.tid, t, txn_value(next_pid, 0, self.timeout, complete, [], t, at, prev=self.pid))
            self.pid, self.epoch = next_pid, 0
        else:
            b.record(self.tid, t, txn_value(self.pid, bumped, self.timeout, complete, [], t, at, prev=self.pid))
            self.epoch = bumped
        done.update(outcome=outcome, marker_producer_id=done["producer_id"], marker_epoch=bumped,
                    prepared_at=prepared_at, completed_at=t)
        return done


def _tp_key(name: str) -> tuple[str, int]:
    topic, _, partition = name.rpartition("-")
    return topic, int(partition)


def _parts(names: list[str]) -> list[tuple[str, list[int]]]:
    by_topic: dict[str, list[int]] = {}
    for name in names:
        topic, partition = _tp_key(name)
        by_topic.setdefault(topic, []).append(partition)
    return sorted((t, sorted(ps)) for t, ps in by_topic.items())


def _input(b: Broker, name: str, n: int, at: int) -> list[tuple[bytes, bytes]]:
    """`n` words into an input partition by the idempotent producer 100, 4 records a batch; returns them."""
    words = [(f"w{i:03d}".encode(), WORDS[(i * 3 + len(name)) % len(WORDS)].encode()) for i in range(n)]
    for i in range(0, n, 4):
        b.data(name, 100, 0, [(at + i * 10 + j, k, v) for j, (k, v) in enumerate(words[i:i + 4])],
               transactional=False)
    return words


@dataclass
class Task:
    """A Streams task: its input partition, changelog and output partitions, its counts, and its input position."""

    n: int
    words: list[tuple[bytes, bytes]]
    counts: dict[bytes, int] = field(default_factory=dict)
    position: int = 0

    def process(self, size: int = 4) -> tuple[list, list, int, dict]:
        """The next `size` input records: changelog and output records (word -> count), the offset to commit and
        the counts before (to restore them when the transaction aborts)."""
        before = dict(self.counts)
        out = []
        for _key, word in self.words[self.position:self.position + size]:
            self.counts[word] = self.counts.get(word, 0) + 1
            out.append((word, str(self.counts[word]).encode()))
        self.position += size
        return out, out, self.position, before

    def writes(self, changelog: list, output: list) -> list[tuple[str, list]]:
        return [(f"wordcount-counts-changelog-{self.n}", changelog), (f"word-counts-{self.n}", output)]


def streams(b: Broker) -> tuple[list[dict], list[dict]]:
    """The wordcount app on eos-1: its transactions (as the coordinator completed them) and its lineage facts."""
    t = T0
    tasks = [Task(0, _input(b, "words-0", 24, t - 60_000)), Task(1, _input(b, "words-1", 40, t - 60_000))]
    a1 = Producer(b, "wordcount-a-1", 5000, 32761, timeout=10_000, skew=40)   # client clock 40 ms ahead
    a2 = Producer(b, "wordcount-a-2", 3990, EXHAUSTED, timeout=10_000)
    b1 = Producer(b, "wordcount-b-1", 6000, 0, timeout=10_000, skew=-25)      # and this one 25 ms behind
    done: list[dict] = []

    def step(p: Producer, task: Task, at: int, outcome: str | None = "COMMIT") -> dict:
        changelog, output, position, before = task.process()
        d = p.transaction(at, task.writes(changelog, output), [("wordcount", "words", task.n, position)],
                          outcome=outcome)
        d["input_offsets"] = [position - 4, position - 1]
        if outcome == "ABORT":  # the state store goes back to the last commit; the input is read again
            task.counts, task.position = before, position - 4
        done.append(d)
        return d

    # task 0_0 on wordcount-a-2: the last transaction of producer id 3990 (epoch 32766: rotated to 3991), two more
    for _ in range(3):
        step(a2, tasks[0], t)
        t += 120
    # task 0_1 on wordcount-a-1: epochs 32761-32766 of producer id 5000, the last one rotating it to 5001
    for _ in range(6):
        step(a1, tasks[1], t)
        t += 100
    # a rebalance moves task 0_0: wordcount-a-2's open transaction is aborted by its thread (TaskMigratedException),
    # its offset commit dropped; wordcount-b-1 (a new producer) re-writes the same records and commits them
    step(a2, tasks[0], t, "ABORT")
    t += 300
    b1.init(t)
    t += 20
    for _ in range(3):
        step(b1, tasks[0], t)
        t += 100
    # wordcount-a-1 (now 5001): a commit, a transaction its thread aborts (a processing error) and redoes, then one
    # in flight at the log end
    step(a1, tasks[1], t)
    t += 100
    step(a1, tasks[1], t, "ABORT")
    t += 150
    step(a1, tasks[1], t)
    t += 100
    step(a1, tasks[1], t, None)
    return done, [{"transactional_id": "wordcount-a-1", "producer_id": 5000, "next_producer_id": 5001,
                   "source": "coordinator"},
                  {"transactional_id": "wordcount-a-1", "producer_id": 5001, "previous_producer_id": 5000,
                   "source": "coordinator"},
                  {"transactional_id": "wordcount-a-2", "producer_id": 3990, "next_producer_id": 3991,
                   "source": "data"},
                  {"transactional_id": "wordcount-a-2", "producer_id": 3991, "previous_producer_id": 3990,
                   "source": "coordinator"},
                  {"transactional_id": "wordcount-b-1", "producer_id": 6000, "source": "coordinator"}]


def inventory_and_ledger(b: Broker) -> list[dict]:
    """inventory-sync (timeout 1 h) holding a transaction open 30 min in the compacted inventory-0, and ledger-2pc
    (KIP-939, timeout Integer.MAX_VALUE) holding a prepared one 2 h in ledger-0, while idempotent producers write on.
    Both before wordcount's activity (from T0), which the disk was imaged in the middle of: the inventory transaction
    is 40 min old at the image time, within its timeout (issue 50: ages are judged at the image time)."""
    t = T0 - 40 * 60_000 - 120_000
    ledger_t = T0 - 2 * g.HOUR_MS - 10 * 60_000
    inv = Producer(b, "inventory-sync", 7100, 0, timeout=3_600_000)
    inv.init(t - 1000)
    done = []
    for i in range(2):
        done.append(inv.transaction(t, [("inventory-0", [(f"sku-{i}-{j}".encode(), b"reserved") for j in range(3)])]))
        t += 60_000
    done.append(inv.transaction(t, [("inventory-0", [(b"sku-9", b"reserved"), (b"sku-8", b"reserved")])],
                                outcome=None))
    for i in range(30):  # the stock feed goes on for 30 min: the transaction is 30 min old at the log end
        b.data("inventory-0", 7200, 0, [(t + 60_000 * (i + 1), f"feed-{i}".encode(), b"42")], transactional=False)
    two_pc = Producer(b, "ledger-2pc", 7300, 0, timeout=TWO_PHASE_COMMIT_TIMEOUT)
    two_pc.init(ledger_t)
    done.append(two_pc.transaction(ledger_t + 500, [("ledger-0", [(b"debit-17", b"-250"), (b"credit-18", b"250")])],
                                   outcome=None))
    for i in range(12):  # 2 h of other ledger entries behind the prepared transaction
        b.data("ledger-0", 7400, 0, [(ledger_t + 600_000 * (i + 1), f"entry-{i}".encode(), b"0")], transactional=False)
    return done


def groups(b: Broker) -> None:
    """pageview-reader on the tiered pageviews-0, reading from the remote tier; audit-reader's commits across a
    coordinator failover to a broker whose clock runs 5 s behind (timestamps go back, log order does not)."""
    b.commit("pageview-reader", "pageviews", 0, 40, T0 - 40_000)
    co = b.part(f"__consumer_offsets-{partition_for('audit-reader')}")
    b.commit("audit-reader", "audit", 0, 100, T0 - 30_000)
    co.set_leader_epoch(1)  # the new coordinator
    b.commit("audit-reader", "audit", 0, 150, T0 - 35_000)


def tiered(b: Broker) -> g.PartitionWriter:
    """pageviews-0: offsets 0-99 copied to the remote tier (COPY_SEGMENT_FINISHED) and deleted locally, 100-199
    local; log-start-offset-checkpoint 0 (the broker's log start, in the remote tier)."""
    p = g.PartitionWriter("pageviews", 0)
    p.segments = [g.Segment(100)]
    p.next_offset = 100
    p.log_start_offset = 0
    p.set_leader_epoch(0)
    for i in range(10):
        recs = [(T0 + i * 1000 + j, f"page-{i}-{j}".encode(), b"view", []) for j in range(10)]
        p.append(g.data_batch(recs), count=10, max_ts=recs[-1][0])
    b.parts[p.name] = p
    seg = g.RemoteSegment("pageviews-a", 0, 99, [(0, 0)], [(g.COPY_STARTED, 10 * g.HOUR_MS - 60_000),
                                                            (g.COPY_FINISHED, 10 * g.HOUR_MS - 55_000)])
    events = []
    for state, at in seg.events:
        ts = g.BASE_TS + at
        events.append((ts, None, g.rlmm_segment("pageviews", 0, seg.segment_id, 0, 99, 1, ts - 60_000, ts, seg.epochs,
                                                14_000) if state == g.COPY_STARTED
                       else g.rlmm_update("pageviews", 0, seg.segment_id, 1, ts, state)))
    meta = g.coordinator_partition("__remote_log_metadata", g.remote_log_metadata_partition("pageviews", 0), events)
    b.parts[meta.name] = meta
    return p


def audit(b: Broker) -> None:
    """audit-0: retention deleted offsets below 120 (log start 120)."""
    p = g.PartitionWriter("audit", 0)
    p.segments = [g.Segment(120)]
    p.next_offset = p.log_start_offset = 120
    p.set_leader_epoch(0)
    for i in range(8):
        recs = [(T0 - 50_000 + i * 100 + j, None, f"event {120 + 10 * i + j}".encode(), []) for j in range(10)]
        p.append(g.data_batch(recs), count=10, max_ts=recs[-1][0])
    b.parts[p.name] = p


# --- laying the broker out ----------------------------------------------------------------------------------------

def lay_out_coordinators(b: Broker) -> dict[str, int]:
    """Each __transaction_state partition: a compacted one holds in its cleaned segment only the newest record of
    each transactional id among those before its dirty head (LogCleaner keeps the latest per key, at its offset),
    then the dirty head whole. Returns the cleaner checkpoints (partition dir -> first dirty offset)."""
    cleaned: dict[str, int] = {}
    for partition, records in sorted(b.coordinator.items()):
        records = sorted(records, key=lambda r: r[0])
        p = g.PartitionWriter("__transaction_state", partition)
        p.set_leader_epoch(0)
        dirty = b.compact_before.get(partition, 0)
        if dirty:
            newest = {key: i for i, (_at, key, _v) in enumerate(records[:dirty])}
            for i in sorted(newest.values()):
                at, _key, value = records[i]
                p.next_offset = i
                p.append(g.data_batch([(at, records[i][1], value, [])]), count=1, max_ts=at)
            p.next_offset = dirty
            p.roll()
            cleaned[p.name] = dirty
        for at, key, value in records[dirty:]:
            p.append(g.data_batch([(at, key, value, [])]), count=1, max_ts=at)
        b.parts[p.name] = p
    return cleaned


def write_broker(out: Path, b: Broker, cleaner: dict[str, int], *, empty: tuple[str, ...] = ()) -> dict:
    """Write the broker dir (a clean shutdown: indexes trimmed, .kafka_cleanshutdown) and return its facts."""
    d = out / b.name
    d.mkdir(parents=True)
    facts = {}
    hw = []
    for name in sorted(b.parts, key=_tp_key):
        p = b.parts[name]
        p.open_transactions()
        files = p.write(d, active_preallocated=False)
        hw.append((p.topic, p.partition, p.next_offset))
        facts[name] = {"log_start_offset": p.log_start_offset, "log_end_offset": p.next_offset,
                       "segments": sorted(int(f) for f in files), "batch_count": len(p.fact_batches),
                       "transactions": p.transactions,
                       "aborted_ranges": [list(e) for seg in p.segments for e in seg.txnindex]}
    for name in empty:  # a partition dir whose segment holds no record yet
        pdir = d / name
        pdir.mkdir()
        for suffix in ("log", "index", "timeindex"):
            (pdir / f"{0:020d}.{suffix}").write_bytes(b"")
        (pdir / "leader-epoch-checkpoint").write_text("0\n0\n")
        topic, partition = _tp_key(name)
        g.TOPIC_IDS.setdefault(topic, g._topic_id(topic))
        (pdir / "partition.metadata").write_text(f"version: 0\ntopic_id: {g.TOPIC_IDS[topic]}\n")
        hw.append((topic, partition, 0))
        facts[name] = {"log_start_offset": 0, "log_end_offset": 0, "segments": [0], "batch_count": 0,
                       "transactions": [], "aborted_ranges": []}
    (d / "meta.properties").write_text(f"#\n#Thu Nov 20 20:00:00 UTC 2025\nnode.id={b.node_id}\n"
                                       f"directory.id=RW9zLXNhbXBsZS1kaXItMQ\nversion=1\ncluster.id={b.cluster_id}\n")
    (d / ".kafka_cleanshutdown").write_text("")
    hw.sort()
    g.write_checkpoint(d / "replication-offset-checkpoint", hw)
    g.write_checkpoint(d / "recovery-point-offset-checkpoint", hw)
    starts = {(p.topic, p.partition): p.log_start_offset for p in b.parts.values()}
    g.write_checkpoint(d / "log-start-offset-checkpoint", [(t, p, starts.get((t, p), 0)) for t, p, _ in hw])
    g.write_checkpoint(d / "cleaner-offset-checkpoint", sorted((*_tp_key(n), o) for n, o in cleaner.items()))
    return facts


def eos_1(out: Path) -> dict:
    b = Broker("eos-1", CLUSTER, 1)
    audit(b)
    tiered(b)
    groups(b)
    before = inventory_and_ledger(b)  # written first: it happened first
    done, lineage = streams(b)
    done += before
    # wordcount-a-1's and wordcount-a-2's __transaction_state partitions were cleaned up to the start of this hour's
    # records: older ones survive only as each id's newest (a CompleteCommit of 5000 at epoch 32764, of 3991 at 1)
    for tid, keep_from in (("wordcount-a-1", T0 + 3 * 120 + 3 * 100), ("wordcount-a-2", T0 + 2 * 120)):
        n = partition_for(tid)
        b.compact_before[n] = sum(1 for at, _k, _v in b.coordinator[n] if at < keep_from)
    cleaner = lay_out_coordinators(b)
    cleaner["inventory-0"] = 0  # a compacted topic the cleaner has not cleaned yet
    facts = write_broker(out, b, cleaner)
    return {"cluster_id": CLUSTER, "node_id": 1, "partitions": facts, "coordinator_transactions": done,
            "lineage": lineage, "cleaner_offsets": cleaner,
            "consumer_offsets": [
                # group, topic, partition, the offset the group coordinator serves, its transaction's fate
                {"group": "wordcount", "topic": "words", "partition": 0, "committed_offset": 24,
                 "transaction_outcome": "COMMIT"},
                {"group": "wordcount", "topic": "words", "partition": 1, "committed_offset": 32,
                 "transaction_outcome": "COMMIT", "pending": 36},
                {"group": "pageview-reader", "topic": "pageviews", "partition": 0, "committed_offset": 40,
                 "transaction_outcome": None, "log_start_offset": 0},
                {"group": "audit-reader", "topic": "audit", "partition": 0, "committed_offset": 150,
                 "transaction_outcome": None}],
            "healthy": [
                {"case": "a transaction completed at a rotation: markers of 5000 at epoch 32767, CompleteCommit naming "
                         "5001 at epoch 0", "partitions": ["wordcount-counts-changelog-1", "word-counts-1",
                                                           f"__consumer_offsets-{partition_for('wordcount')}"],
                 "was": "marker_missing"},
                {"case": "marker-closed transactions of 3990, which no record names after compaction",
                 "was": "unknown_producer"},
                {"case": "wordcount-a-1's client clock 40 ms ahead of its coordinator's: the last batches of each "
                         "transaction stamped after its own PrepareCommit", "was": "epoch_fenced_write"},
                {"case": "pageview-reader at 40, in the remote tier of pageviews-0",
                 "was": "committed_offset_below_log_start"},
                {"case": "audit-reader's commits across a coordinator failover: 150 is the last in log order, 100 the "
                         "newest by timestamp", "was": "committed_offset_below_log_start"},
                {"case": "inventory-sync's transaction, 30 min open, timeout 1 h", "was": "hanging_transaction"},
                {"case": "inventory-sync's transaction holding the cleaner of the compacted inventory-0",
                 "was": "cleaner_blocked"},
                {"case": "ledger-2pc's prepared two-phase-commit transaction, 2 h open", "was": "hanging_transaction",
                 "now": "prepared_transaction"},
                {"case": "task 0_0 migrated: wordcount-b-1 (6000) re-writes what wordcount-a-2 (3991) wrote in its "
                         "aborted transaction", "partitions": ["wordcount-counts-changelog-0", "word-counts-0"],
                 "was": "content_duplicate"},
                {"case": "wordcount-a-1's aborted offset commit (words-1 at 32, then redone) and the one pending in "
                         "its transaction in flight (36)"}]}


def eos_2(out: Path) -> dict:
    """The broken cases under Transactions V2."""
    b = Broker("eos-2", BROKEN_CLUSTER, 2)
    t = T0 + 40 * g.HOUR_MS
    p = Producer(b, "orders-tx-1", 8100, 10, timeout=60_000)
    a = p.transaction(t, [("orders-0", [(b"o-1", b"new")]), ("shipments-0", [(b"s-1", b"ready")])])
    t += 1000
    missing = p.transaction(t, [("orders-0", [(b"o-2", b"new")]), ("shipments-0", [(b"s-2", b"ready")])],
                            missing_marker=("orders-0",))
    t += 1000
    c = p.transaction(t, [("shipments-0", [(b"s-3", b"ready")])])
    zombie = b.data("shipments-0", 8100, c["data_epoch"], [(c["prepared_at"] + 30_000, b"s-4", b"late")])
    t += 1000
    # orders-0's leader (this disk holds its follower copy) stamps markers with a clock 1.5 s behind the coordinator's:
    # this transaction's marker lies in time between the missing one's start and its own start
    d = p.transaction(t, [("orders-0", [(b"o-3", b"new")])], leader_clock={"orders-0": -1500})
    t += 60_000
    stranger = b.data("orders-0", 8200, 0, [(t, b"o-x", b"who")])
    for i in range(20):  # orders go on for 20 min
        b.data("orders-0", 8300, 0, [(t + 60_000 * (i + 1), f"o-{10 + i}".encode(), b"new")], transactional=False)
    orders = b.part("orders-0")
    missing_first = missing["first_offsets"]["orders-0"]
    b.anomalies = [
        {"kind": "marker_missing", "topic": "orders", "partition": 0, "offset": missing_first, "producer_id": 8100,
         "producer_epoch": missing["marker_epoch"], "transactional_id": "orders-tx-1", "coordinator_outcome": "COMMIT"},
        {"kind": "zombie_epoch", "topic": "shipments", "partition": 0, "offset": zombie["base_offset"],
         "producer_id": 8100, "producer_epoch": zombie["producer_epoch"], "newer_epoch": c["marker_epoch"]},
        {"kind": "epoch_fenced_write", "topic": "shipments", "partition": 0, "offset": zombie["base_offset"],
         "producer_id": 8100, "producer_epoch": zombie["producer_epoch"], "fencing_epoch": c["marker_epoch"],
         "fenced_at": c["prepared_at"]},
        {"kind": "unknown_producer", "topic": "orders", "partition": 0, "offset": stranger["base_offset"],
         "producer_id": 8200, "severity": "error"},
        {"kind": "hanging_transaction", "topic": "orders", "partition": 0, "offset": stranger["base_offset"],
         "producer_id": 8200, "transaction_timeout_ms": 15 * 60_000},
        # the zombie's write is the last of shipments-0 and no marker follows it: it holds the partition's LSO, and at
        # the image time (orders go on for 20 min) it is older than orders-tx-1's timeout (issue 50)
        {"kind": "hanging_transaction", "topic": "shipments", "partition": 0, "offset": zombie["base_offset"],
         "producer_id": 8100, "transaction_timeout_ms": 60_000},
    ]
    assert orders.next_offset > stranger["base_offset"]
    lay_out_coordinators(b)
    here = {f"__transaction_state-{n}" for n in b.coordinator}
    empty = tuple(f"__transaction_state-{n}" for n in range(PARTITIONS) if f"__transaction_state-{n}" not in here)
    facts = write_broker(out, b, {}, empty=empty)
    # the incidents: the zombie's out-of-order epoch is its write after the fence; the stranger's transaction hangs
    # because no coordinator knows it; the missing COMMIT marker stands alone (the next marker there closes its data);
    # the zombie's write, left open, hangs
    keys = [g.finding_key(a["kind"], "eos-2", a["topic"], a["partition"], a["offset"], a["producer_id"])
            for a in b.anomalies]
    incidents = g.planted_incidents([(keys[0], None), (keys[1], keys[2]), (keys[2], None), (keys[3], None),
                                     (keys[4], keys[3]), (keys[5], keys[2])])
    return {"cluster_id": BROKEN_CLUSTER, "node_id": 2, "partitions": facts, "anomalies": b.anomalies,
            "incidents": incidents,
            "coordinator_transactions": [a, missing, c, d],
            "healthy": [{"case": "orders-tx-1's next transaction on orders-0, whose marker the partition leader "
                                 "stamped 1.5 s behind the coordinator's clock: matched by its epoch",
                         "was": "marker_missing (and the missing one taken for found)"}]}


def main(out: Path) -> None:
    for name in ("eos-1", "eos-2"):
        shutil.rmtree(out / name, ignore_errors=True)
    brokers = {"eos-1": eos_1(out), "eos-2": eos_2(out)}
    # eos-1 is healthy: every incident is eos-2's
    expected = {"generated_by": "sample_logs/generate_eos.py", "base_timestamp": T0, "brokers": brokers,
                "incidents": brokers["eos-2"].pop("incidents")}
    (out / "EXPECTED_EOS.json").write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent)
