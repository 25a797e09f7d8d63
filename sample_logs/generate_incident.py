"""The incident sample (issue 49): three brokers of one KRaft cluster (sample_logs/incident-1, incident-2,
incident-3) imaged after an unclean leader election that cost acknowledged records, removed a transaction's COMMIT
marker and stranded two consumer groups, and sample_logs/EXPECTED_INCIDENT.json: the findings a scan must raise on
it and the incident's ground truth, counted from this script's own bookkeeping (same bytes every run).

    python sample_logs/generate_incident.py [OUT_DIR]      (default: the folder this script is in)

The story (t = seconds after T0 = 2025-11-22T12:00:00Z; metadata offsets in brackets):

- The cluster: brokers 1, 2, 3 (these disks), a quorum of three dedicated controllers (101-103, static
  controller.quorum.voters: kraft.version 0; not imaged), metadata.version 25 (4.0-IV3), transaction.version 2,
  group.version 1, eligible.leader.replicas.version 0 (ELR off, as a 4.0 cluster has it). `__consumer_offsets` and
  `__transaction_state` have their defaults: 50 partitions, replication factor 3 (`__transaction_state`
  min.insync.replicas 2). The broker default min.insync.replicas is 1 (Kafka's default).
- t=0 [3000] topic `payments` is created, one partition, replicas [1, 2] (leader 1, leader epoch 0); t=1 [3002]
  `ledger`, replicas [3, 2] (leader 3). Neither sets min.insync.replicas: 1.
- t=10..105 three producers write payments-0 while both replicas are in sync: idempotent producers 4000
  (`payment-gateway-a`, lz4) and 4001 (`outbox-relay`), and transactional producer 5000 (`payments-settler`,
  Transactions V2, coordinator broker 3, `__transaction_state-11`): transaction T0 (t=40, payments-0 30-33 and
  ledger-0 0-3, COMMIT markers of epoch 1 at payments-0 34 and ledger-0 4), then T1's data (t=105, epoch 1:
  payments-0 95-99 and ledger-0 5-9). Offsets 0-99, all replicated to broker 2.
- t=107 [3004-3106] broker 2 starts a controlled shutdown (maintenance): the controller removes it from every ISR
  (payments-0's ISR is [1] from [3105] on) and moves the leadership of the partitions it led to broker 3; t=108.5
  [3107] it is fenced.
  With the ISR the leader alone and min.insync.replicas 1, every acks=all write to payments-0 is acknowledged as
  soon as broker 1 appends it: its high watermark moves with its log end.
- t=110..185 broker 1 alone writes payments-0 offsets 100-180: 80 records of 4000, 4001 and a third idempotent
  producer 4002 (`payment-gateway-b`, lz4, started at t=118 while broker 2 was down), and at 105 T1's COMMIT marker
  (t=111; the coordinator completes T1 at t=111.005: CompleteCommit). Groups `payments-reconciler` (a client without
  KIP-320: commits carry leader epoch -1) and `payments-archiver` (a Java consumer: leader epoch 0) commit offsets in
  that range: 170 and 160 (t=186), in `__consumer_offsets-38` (coordinator broker 3).
- broker 1's replication-offset-checkpoint was last written at t=182.4 (every 5 s): high watermark 176 for
  payments-0 (its log end then), 5 records short of what the metadata log proves acknowledged (181).
- t=187.0 broker 1's JVM dies (killed: the page cache survives, its disk holds everything it appended). t=196.1
  [3108-3209] the controller fences it (broker.session.timeout.ms 9 s): payments-0 goes offline [3208] (leader -1,
  leader epoch 1, ISR stays [1] as ELR is off); broker 3 takes the leadership of the internal partitions broker 1 led.
- t=203 [3210] broker 2 registers again (broker epoch 3210, its RegisterBrokerRecord's offset), t=206 [3211] is
  unfenced; payments-0 stays offline (broker 2 is not in its ISR). t=208 [3212-3312] broker 3 adds broker 2 back to
  the ISR of ledger-0 and the internal partitions. t=215 the operator stops both consumer groups (runbook), each group's
  last commit is written again on close and the group goes Empty (generation 2, no members).
- t=225.000 [3313] the operator runs `kafka-leader-election.sh --election-type UNCLEAN --topic payments --partition
  0`: leader 2, ISR [2], leader epoch 2, LeaderRecoveryState RECOVERING; t=225.080 [3314] broker 2, leading,
  reports RECOVERED. Broker 2 starts leader epoch 2 at its log end, 100 (leader-epoch-checkpoint `2 100`).
- t=225.2.. the producers write into the new leader from offset 100: 4002's blocked batch (sequence 30, created at
  t=190) is accepted though broker 2 never saw 4002's sequences 0-29 (no producer state: any sequence is taken);
  4000's blocked batch (epoch 0, sequence 80) is rejected (OUT_OF_ORDER_SEQUENCE_NUMBER: broker 2's last sequence of
  4000 is 44), the Java client bumps its epoch and re-sends it as epoch 1, sequence 0; the outbox relay, restarted
  at t=212 (new producer id 5001), re-sends its outbox from the position it last persisted (t=92, before its batch at
  offsets 90-94): 5 records broker 2 still holds (a content duplicate), the 15 it had written in the lost range, and
  5 new ones. Then 4002 and 4000 write on. At t=238 the disks are imaged: broker 2's payments-0 ends at 145.

What the disks show (the planted facts): payments-0 on broker 1 (incident-1) holds offsets 100-180 that the new
leader (incident-2) replaced with other records from 100: 80 data records and one COMMIT marker lost, all 80
acknowledged (the checkpoint alone proves 75). T1 is committed on ledger-0 but its payments-0 part, 95-99 on the new
leader, has no marker: open for good (the coordinator completed it), the last stable offset stuck at 95. Both groups
committed offsets above the new leader's log end (145) and below broker 1's (181). A restart of broker 1 would make
it a follower of epoch 2 and truncate its payments-0 to 100 (OffsetsForLeaderEpoch: epoch 0 ends at 100 on the
leader), discarding 100-180 for good.

Kafka rules followed (apache/kafka trunk 1eb76443, 2024-10-25, the 4.0 line): PartitionChangeBuilder (electLeader,
unclean election: Isr [leader], RECOVERING; no leader epoch bump on an ISR change from metadata version 3.6; an empty
target ISR with ELR off keeps the ISR), ReplicationControlManager (handleBrokerInControlledShutdown,
handleBrokerFenced: the change records then the BrokerRegistrationChangeRecord, handleBrokerUnfenced,
generateLeaderAndIsrUpdates), QuorumController.registerBroker (broker epoch = the record's offset),
MetadataVersion.partitionChangeRecordVersion (2), Partition.makeLeader (epoch start offset = log end at election;
RECOVERING marked RECOVERED), ProducerAppendInfo.checkSequence (a known producer's out-of-order sequence is
rejected, an unknown producer's any sequence taken), TransactionManager.canRetry / bumpIdempotentProducerEpoch (the
client bumps its epoch and restarts at sequence 0), SubscriptionState.maybeCompleteValidation (KIP-320: a committed
leader epoch lets a Java consumer find the truncation), UnifiedLog/ProducerStateManager (a snapshot at a clean
shutdown's log end, kept as the latest stray snapshot after restart), LogSegment (time index entry at close, index
entries every index.interval.bytes, counter reset at restart), TransactionStateManager.transactionTopicConfigs,
and Transactions V2 as generate_eos.py writes it (markers at data epoch + 1, TransactionLogValue v1).

Simplifications, said here and in sample_logs/README.md: the active controller's NoOpRecords (every 500 ms) are
left out of the metadata log; each image holds the partitions of the story only (the 49 other partitions of
`__consumer_offsets` and of `__transaction_state` on each broker are empty and left out); the metadata log copies
start at the snapshot 3000 (older segments deleted); active indexes are preallocated to segment.index.bytes 1024
(set low for the sample; the default is 10 MiB); followers index batch by batch.

Record batches by kafka-python through generate.py's writers (PartitionWriter, data_batch, control_batch); metadata
records by kforensics' table-driven encoder (parsers.cluster_metadata, held to real KRaft logs), coordinator records
by parsers.internal_topics.encode_coordinator_record and generate_eos.txn_value; everything else with struct.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import shutil
import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path

import generate as g
import generate_eos as eos
import generate_groups as gg
from crc32c import crc32c

from kforensics.parsers.cluster_metadata import encode_metadata_record
from kforensics.parsers.internal_topics import CONSUMER_OFFSETS, encode_coordinator_record

T0 = g.BASE_TS + 50 * g.HOUR_MS  # 2025-11-22T12:00:00Z
BROKERS = (1, 2, 3)
CONTROLLERS = (101, 102, 103)
RAFT_EPOCH = 7
RAFT_LEADER = 101
SNAPSHOT_END = 3000
INDEX_BYTES = 1024  # segment.index.bytes (log.index.size.max.bytes) of this cluster, set low for the sample
INTERNAL_PARTITIONS = 50
METADATA_VERSION = 25  # 4.0-IV3
COORDINATOR_EPOCH = 0  # the leader epoch of __transaction_state-11 when broker 3 loaded it
TXN_TIMEOUT_MS = 60_000
CHECKPOINT_PHASE_MS = 2_400  # the replication-offset-checkpoint runs every 5 s at t = 2.4 (mod 5)
TID = "payments-settler"
RECONCILER, ARCHIVER = "payments-reconciler", "payments-archiver"


def _uuid(label: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(label.encode()).digest()[:16]).decode().rstrip("=")


CLUSTER_ID = _uuid("kforensics incident cluster")
DIRECTORIES = {b: _uuid(f"incident-{b} log dir") for b in BROKERS}
TOPIC_IDS = {t: _uuid(f"incident topic {t}") for t in ("payments", "ledger", "__consumer_offsets",
                                                        "__transaction_state")}
METADATA_TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAQ"


def at(seconds: float) -> int:
    """Epoch ms of `seconds` after T0."""
    return T0 + round(seconds * 1000)


def coordinator_partition(key: str) -> int:
    return eos.partition_for(key)


# --- the control plane: the controller's state and its metadata log --------------------------------------------

@dataclass
class Partition:
    topic: str
    partition: int
    replicas: list[int]
    isr: list[int]
    leader: int
    leader_epoch: int = 0
    partition_epoch: int = 0
    recovering: bool = False


def _broker_features() -> list[dict]:
    return [{"name": n, "minSupportedVersion": lo, "maxSupportedVersion": hi} for n, lo, hi in (
        ("metadata.version", 7, METADATA_VERSION), ("kraft.version", 0, 1), ("group.version", 0, 1),
        ("transaction.version", 0, 2), ("eligible.leader.replicas.version", 0, 1))]


def _register(broker: int, epoch: int, incarnation: str, *, fenced: bool) -> tuple[str, int, dict]:
    return ("REGISTER_BROKER_RECORD", 3, {
        "brokerId": broker, "isMigratingZkBroker": False, "incarnationId": _uuid(incarnation), "brokerEpoch": epoch,
        "endPoints": [{"name": "PLAINTEXT", "host": f"incident-{broker}", "port": 9092, "securityProtocol": 0}],
        "features": _broker_features(), "rack": None, "fenced": fenced, "inControlledShutdown": False,
        "logDirs": [DIRECTORIES[broker]]})


def _register_controller(controller: int) -> tuple[str, int, dict]:
    return ("REGISTER_CONTROLLER_RECORD", 0, {
        "controllerId": controller, "incarnationId": _uuid(f"controller {controller}"), "zkMigrationReady": False,
        "endPoints": [{"name": "CONTROLLER", "host": f"controller-{controller}", "port": 9093, "securityProtocol": 0}],
        "features": [f for f in _broker_features() if f["name"] != "eligible.leader.replicas.version"]})


class Controller:
    """The active controller: the partitions' registrations and the brokers' states, and the records it writes,
    one batch per operation, as ReplicationControlManager builds them."""

    def __init__(self) -> None:
        self.parts: dict[tuple[str, int], Partition] = {}
        self.active = {1: True, 2: True, 3: True}  # registered, unfenced, not shutting down
        self.epochs = {1: 12, 2: 13, 3: 14}  # broker epochs: the offsets of their RegisterBrokerRecords, days ago
        self.ops: list[tuple[int, int, list[tuple[str, int, dict]], str]] = []  # (base offset, ts, records, what)
        self.next_offset = SNAPSHOT_END
        self.history: list[dict] = []  # payments-0 and ledger-0 after each record, for EXPECTED

    # records
    def _partition_record(self, p: Partition) -> tuple[str, int, dict]:
        return ("PARTITION_RECORD", 2, {
            "partitionId": p.partition, "topicId": TOPIC_IDS[p.topic], "replicas": p.replicas, "isr": p.isr,
            "removingReplicas": [], "addingReplicas": [], "leader": p.leader, "leaderEpoch": p.leader_epoch,
            "partitionEpoch": p.partition_epoch, "directories": [DIRECTORIES[b] for b in p.replicas]})

    def op(self, ts: int, what: str, records: list[tuple[str, int, dict]]) -> int:
        base = self.next_offset
        self.ops.append((base, ts, records, what))
        self.next_offset += len(records)
        return base

    def _changed(self, p: Partition, offset: int, ts: int, election: str) -> None:
        if p.topic in ("payments", "ledger"):
            self.history.append({"topic": p.topic, "partition": p.partition, "metadata_offset": offset,
                                 "election": election, "leader": p.leader, "leader_epoch": p.leader_epoch,
                                 "isr": list(p.isr), "partition_epoch": p.partition_epoch,
                                 "leader_recovery_state": "RECOVERING" if p.recovering else "RECOVERED",
                                 "timestamp": ts})

    def change(self, p: Partition, *, isr: list[int] | None = None, leader: int | None = None,
               recovery: int | None = None) -> tuple[str, int, dict]:
        """A PartitionChangeRecord, applied as PartitionRegistration.merge does."""
        data: dict = {"partitionId": p.partition, "topicId": TOPIC_IDS[p.topic]}
        if isr is not None:
            data["isr"] = isr
            p.isr = list(isr)
        if leader is not None:
            data["leader"] = leader
            p.leader = leader
            p.leader_epoch += 1
        if recovery is not None:
            data["leaderRecoveryState"] = recovery
            p.recovering = recovery == 1
        p.partition_epoch += 1
        return ("PARTITION_CHANGE_RECORD", 2, data)

    def create_topic(self, ts: int, topic: str, replicas: list[int]) -> int:
        p = Partition(topic, 0, replicas, list(replicas), replicas[0])
        self.parts[(topic, 0)] = p
        base = self.op(ts, f"CreateTopics {topic}", [("TOPIC_RECORD", 0, {"name": topic, "topicId": TOPIC_IDS[topic]}),
                                                      self._partition_record(p)])
        self._changed(p, base + 1, ts, "initial")
        return base

    def _remove_from_isrs(self, broker: int, ts: int, base: int, records: list) -> None:
        """generateLeaderAndIsrUpdates(brokerToRemove=broker) over partitionsWithBrokerInIsr(broker)."""
        for p in self.parts.values():
            if broker not in p.isr:
                continue
            target = [b for b in p.isr if b != broker]
            leader = None
            if p.leader == broker or p.leader == -1:
                # electAnyLeader: the first replica (replica order) in the target ISR that is active
                new = next((r for r in p.replicas if r in target and self.active[r] and r != broker), -1)
                if new != p.leader:
                    leader = new
            # an empty target ISR is not written while ELR is off: the ISR keeps its last member
            isr = target if target else None
            if isr is None and leader is None:
                continue
            rec = self.change(p, isr=isr, leader=leader)
            offset = base + len(records)
            records.append(rec)
            self._changed(p, offset, ts, "offline" if leader == -1 else ("clean" if leader is not None else "none"))

    def controlled_shutdown(self, broker: int, ts: int) -> int:
        self.active[broker] = False
        records = [("BROKER_REGISTRATION_CHANGE_RECORD", 1, {"brokerId": broker, "brokerEpoch": self.epochs[broker],
                                                              "inControlledShutdown": 1})]
        self._remove_from_isrs(broker, ts, self.next_offset, records)
        return self.op(ts, f"broker {broker} enters controlled shutdown", records)

    def fence(self, broker: int, ts: int, what: str) -> int:
        self.active[broker] = False
        records: list = []
        self._remove_from_isrs(broker, ts, self.next_offset, records)
        records.append(("BROKER_REGISTRATION_CHANGE_RECORD", 0, {"brokerId": broker,
                                                                 "brokerEpoch": self.epochs[broker], "fenced": 1}))
        return self.op(ts, what, records)

    def register(self, broker: int, ts: int) -> int:
        self.epochs[broker] = self.next_offset
        return self.op(ts, f"broker {broker} registers", [_register(broker, self.next_offset,
                                                                    f"incident-{broker} incarnation 2", fenced=True)])

    def unfence(self, broker: int, ts: int) -> int:
        self.active[broker] = True
        # handleBrokerUnfenced: leaderless partitions elect (online election) among their ISR: payments-0's ISR is
        # [1], so broker 2 is no valid leader and no change record is written
        return self.op(ts, f"broker {broker} unfenced", [("BROKER_REGISTRATION_CHANGE_RECORD", 0, {
            "brokerId": broker, "brokerEpoch": self.epochs[broker], "fenced": -1})])

    def expand_isrs(self, leader: int, follower: int, ts: int) -> int:
        """AlterPartition from `leader`: `follower` caught up on every partition it leads with `follower` a replica."""
        records: list = []
        base = self.next_offset
        for p in self.parts.values():
            if p.leader == leader and follower in p.replicas and follower not in p.isr:
                rec = self.change(p, isr=[*p.isr, follower])
                self._changed(p, base + len(records), ts, "none")
                records.append(rec)
        return self.op(ts, f"broker {leader} adds broker {follower} back to the ISRs", records)

    def unclean_election(self, topic: str, leader: int, ts: int) -> int:
        p = self.parts[(topic, 0)]
        rec = self.change(p, leader=leader, isr=[leader], recovery=1)
        base = self.op(ts, f"unclean election of {topic}-0", [rec])
        self._changed(p, base, ts, "unclean")
        return base

    def recovered(self, topic: str, ts: int) -> int:
        p = self.parts[(topic, 0)]
        rec = self.change(p, recovery=0)
        base = self.op(ts, f"{topic}-0 RECOVERED", [rec])
        self._changed(p, base, ts, "none")
        return base


def internal_placement(partition: int) -> list[int]:
    """StripedReplicaPlacer on three brokers without racks: leaders round robin, followers the next brokers."""
    first = partition % 3
    return [BROKERS[(first + i) % 3] for i in range(3)]


def snapshot_records(c: Controller) -> list[tuple[str, int, dict]]:
    """The metadata image at offset 3000 as a broker's snapshot writes it (features, brokers, controllers, each topic
    with its partitions, configs, producer ids), the order of a real 4.x snapshot (realdata ronem123-rupia-kraft)."""
    out: list[tuple[str, int, dict]] = [("FEATURE_LEVEL_RECORD", 0, {"name": n, "featureLevel": v}) for n, v in (
        ("metadata.version", METADATA_VERSION), ("group.version", 1), ("eligible.leader.replicas.version", 0),
        ("transaction.version", 2))]
    out += [_register(b, c.epochs[b], f"incident-{b} incarnation 1", fenced=False) for b in BROKERS]
    out += [_register_controller(k) for k in CONTROLLERS]
    for topic in ("__consumer_offsets", "__transaction_state"):
        out.append(("TOPIC_RECORD", 0, {"name": topic, "topicId": TOPIC_IDS[topic]}))
        for n in range(INTERNAL_PARTITIONS):
            replicas = internal_placement(n)
            p = Partition(topic, n, replicas, list(replicas), replicas[0])
            c.parts[(topic, n)] = p
            out.append(c._partition_record(p))
    out += [("CONFIG_RECORD", 0, {"resourceType": 2, "resourceName": "__consumer_offsets", "name": n, "value": v})
            for n, v in (("compression.type", "producer"), ("cleanup.policy", "compact"),
                         ("segment.bytes", "104857600"))]
    out += [("CONFIG_RECORD", 0, {"resourceType": 2, "resourceName": "__transaction_state", "name": n, "value": v})
            for n, v in (("unclean.leader.election.enable", "false"), ("compression.type", "uncompressed"),
                         ("cleanup.policy", "compact"), ("min.insync.replicas", "2"),
                         ("segment.bytes", "104857600"))]
    out.append(("PRODUCER_IDS_RECORD", 0, {"brokerId": -1, "brokerEpoch": -1, "nextProducerId": 6000}))
    return out


def _records_batch(records: list[tuple[str, int, dict]], ts: int) -> bytearray:
    return g.data_batch([(ts, None, encode_metadata_record(t, v, d), []) for t, v, d in records])


def _snapshot_header(ts: int, last_contained: int) -> bytearray:
    """The SnapshotHeader control batch (ControlRecordType 3, SnapshotHeaderRecord v0)."""
    key = struct.pack(">hh", 0, 3)
    value = struct.pack(">hq", 0, last_contained) + b"\x00"
    body = b"\x00" + g.varint(0) + g.varint(0) + g.varint(len(key)) + key + g.varint(len(value)) + value + g.varint(0)
    record = g.varint(len(body)) + body
    header = struct.pack(">qiibIhiqqqhii", 0, 61 - 12 + len(record), RAFT_EPOCH, 2, 0, 0x20, 0, ts, ts, -1, -1, -1, 1)
    out = bytearray(header + record)
    struct.pack_into(">I", out, 17, crc32c(bytes(out[21:])))
    return out


def _snapshot_footer(ts: int, offset: int) -> bytearray:
    key = struct.pack(">hh", 0, 4)
    value = struct.pack(">h", 0) + b"\x00"
    body = b"\x00" + g.varint(0) + g.varint(0) + g.varint(len(key)) + key + g.varint(len(value)) + value + g.varint(0)
    record = g.varint(len(body)) + body
    header = struct.pack(">qiibIhiqqqhii", offset, 61 - 12 + len(record), RAFT_EPOCH, 2, 0, 0x20, 0, ts, ts, -1, -1,
                         -1, 1)
    out = bytearray(header + record)
    struct.pack_into(">I", out, 17, crc32c(bytes(out[21:])))
    return out


def snapshot_bytes(records: list[tuple[str, int, dict]], ts: int, last_contained: int) -> bytes:
    """`00000000000000003000-0000000007.checkpoint`: SnapshotHeader, the records (offsets 1..n), SnapshotFooter."""
    body = _records_batch(records, ts)
    struct.pack_into(">q", body, 0, 1)
    struct.pack_into(">i", body, 12, RAFT_EPOCH)
    return bytes(_snapshot_header(ts, last_contained) + body + _snapshot_footer(ts, 1 + len(records)))


# --- the data plane: partition logs and their replicas ----------------------------------------------------------

@dataclass
class Append:
    """One batch as its leader appended it: the bytes (base offset and leader epoch patched), the writer's
    arguments and the append time (ms)."""

    raw: bytes
    kwargs: dict
    at: int
    fact: dict
    records: list[tuple[bytes, bytes]] | None = None  # (key, value) of a data batch


@dataclass
class Log:
    """A leader's log and its history of appends, from which a follower's copy is replayed."""

    writer: g.PartitionWriter
    appends: list[Append] = field(default_factory=list)

    def append(self, batch: bytearray, appended_at: int, **kwargs) -> dict:
        fact = self.writer.append(batch, **kwargs)
        self.appends.append(Append(bytes(batch), {**kwargs, "leader_epoch": fact["partition_leader_epoch"]},
                                   appended_at, fact))
        return fact

    def count_before(self, ms: int) -> int:
        """The log end offset as of `ms` (every append before it)."""
        done = [a for a in self.appends if a.at < ms]
        return done[-1].fact["last_offset"] + 1 if done else 0


def follower_copy(log: Log, upto: int, into: g.PartitionWriter | None = None) -> g.PartitionWriter:
    """A follower's copy of `log` with every batch appended before `upto` ms, byte for byte (the follower appends
    the leader's batches as they are, recording each new leader epoch at its first batch)."""
    f = into or g.PartitionWriter(log.writer.topic, log.writer.partition)
    if into is None:
        f.epochs = []
    for a in log.appends:
        if a.at >= upto or a.fact["base_offset"] < f.next_offset:
            continue
        epoch = a.kwargs["leader_epoch"]
        if not f.epochs or f.epochs[-1][0] != epoch:
            f.set_leader_epoch(epoch)
        f.append(bytearray(a.raw), **a.kwargs)
    return f


def clean_close(p: g.PartitionWriter) -> None:
    """UnifiedLog.close at a clean shutdown: the active segment's final time index entry (LogSegment.close) and a
    producer snapshot at the log end."""
    seg = p.active
    if seg.max_ts >= 0 and (not seg.timeindex or seg.max_ts > seg.timeindex[-1][0]):
        seg.timeindex.append((seg.max_ts, seg.max_ts_offset))
    p.snapshots[p.next_offset] = p._snapshot_bytes()


def reopen(p: g.PartitionWriter) -> None:
    """The log loaded again at a restart: LogSegment's bytes-since-last-index-entry counter starts from 0."""
    p.active.bytes_since_index = 0


def payment_records(rng: random.Random, n: int, ts: int, prefix: str) -> list:
    """`n` payment records (key, JSON value) created 7 ms apart from `ts`."""
    out = []
    for i in range(n):
        value = json.dumps({"payment_id": f"{prefix}-{rng.randrange(10**8):08d}", "amount_cents": rng.randrange(100, 99_999),
                            "currency": rng.choice(["EUR", "USD", "GBP"]), "status": "captured"}).encode()
        out.append((ts + i * 7, f"{prefix}-{rng.randrange(10**6):06d}".encode(), value, []))
    return out


@dataclass
class Producer:
    """An idempotent or transactional producer: id, epoch, its next sequence per partition, codec, name."""

    pid: int
    client: str
    codec: int = g.NONE
    epoch: int = 0
    seq: dict[str, int] = field(default_factory=dict)


def produce(log: Log, prod: Producer, recs: list, appended_at: int, *, transactional: bool = False,
            base_sequence: int | None = None) -> dict:
    name = log.writer.name
    seq = prod.seq.get(name, 0) if base_sequence is None else base_sequence
    batch = g.data_batch(recs, codec=prod.codec, producer_id=prod.pid, producer_epoch=prod.epoch,
                         base_sequence=seq, transactional=transactional)
    fact = log.append(batch, appended_at, count=len(recs), max_ts=max(r[0] for r in recs), producer_id=prod.pid,
                      producer_epoch=prod.epoch, base_sequence=seq, transactional=transactional,
                      codec=struct.unpack_from(">h", batch, 21)[0] & 7)
    prod.seq[name] = seq + len(recs)
    log.appends[-1].records = [(r[1], r[2]) for r in recs]
    return fact


def marker(log: Log, pid: int, epoch: int, commit: bool, ts: int) -> dict:
    return log.append(g.control_batch(pid, epoch, commit, COORDINATOR_EPOCH, ts), ts, count=1, max_ts=ts,
                      producer_id=pid, producer_epoch=epoch, transactional=True,
                      control="COMMIT" if commit else "ABORT", coordinator_epoch=COORDINATOR_EPOCH)


def coordinator_log(name: str) -> Log:
    topic, _, partition = name.rpartition("-")
    w = g.PartitionWriter(topic, int(partition))
    w.set_leader_epoch(0)
    return Log(w)


def coordinator_append(log: Log, ts: int, key: bytes, value: bytes | None) -> dict:
    """One coordinator record in its own batch, appended (and stamped) at `ts`."""
    return log.append(g.data_batch([(ts, key, value, [])]), ts, count=1, max_ts=ts)


# --- consumer groups ---------------------------------------------------------------------------------------------

def _subscription_v0(topics: list[str]) -> str:
    """ConsumerProtocolSubscription v0 (Topics, null UserData), as clients before KIP-429 write it."""
    out = struct.pack(">hi", 0, len(topics)) + b"".join(gg._s(t) for t in topics) + struct.pack(">i", -1)
    return base64.b64encode(out).decode()


def _assignment_v0(partitions: dict[str, list[int]]) -> str:
    out = struct.pack(">hi", 0, len(partitions))
    for topic, ps in partitions.items():
        out += gg._s(topic) + struct.pack(">i", len(ps)) + b"".join(struct.pack(">i", p) for p in ps)
    return base64.b64encode(out + struct.pack(">i", -1)).decode()


GROUPS = {
    # group: (member id, client id, host, subscription, assignment, leader epoch committed)
    RECONCILER: ("reconciler-7d1f4c2a-5b8e-4f0a-9c3d-2e6b8a1f0c47", "reconciler", "/10.30.0.21",
                 _subscription_v0(["payments"]), _assignment_v0({"payments": [0]}), -1),
    ARCHIVER: ("payments-archiver-1-0b6e2f91-3c4d-4a8b-b7e5-9f1a2c3d4e5f", "payments-archiver-1", "/10.30.0.22",
               gg.subscription(["payments"], {}, -1, "rack-b"), gg.assignment({"payments": [0]}), 0),
}


def group_metadata(group: str, generation: int, ts: int, *, empty: bool = False) -> tuple[bytes, bytes]:
    member_id, client_id, host, sub, assign, _ = GROUPS[group]
    members = [] if empty else [{
        "memberId": member_id, "groupInstanceId": None, "clientId": client_id, "clientHost": host,
        "rebalanceTimeout": 300_000, "sessionTimeout": 45_000, "subscription": sub, "assignment": assign}]
    key, value = encode_coordinator_record(CONSUMER_OFFSETS, 2, {"group": group}, {
        "protocolType": "consumer", "generation": generation, "protocol": None if empty else "range",
        "leader": None if empty else member_id, "currentStateTimestamp": ts, "members": members}, version=3)
    return key, value


def offset_commit(group: str, offset: int, ts: int) -> tuple[bytes, bytes]:
    key, value = encode_coordinator_record(CONSUMER_OFFSETS, 1, {"group": group, "topic": "payments", "partition": 0},
                                           {"offset": offset, "leaderEpoch": GROUPS[group][5], "metadata": "",
                                            "commitTimestamp": ts}, version=3)
    return key, value


# --- the story ---------------------------------------------------------------------------------------------------

def main(out: Path) -> None:
    for b in BROKERS:
        shutil.rmtree(out / f"incident-{b}", ignore_errors=True)
    g.TOPIC_IDS.update({"__cluster_metadata": METADATA_TOPIC_ID, **TOPIC_IDS})
    rng = random.Random(20251122)
    c = Controller()
    snapshot = snapshot_records(c)
    snapshot_ts = at(-600)  # the brokers' snapshot at 3000, ten minutes before T0

    # -- control plane, part 1: the topics
    c.create_topic(at(0), "payments", [1, 2])
    c.create_topic(at(1), "ledger", [3, 2])

    payments = Log(g.PartitionWriter("payments", 0))
    payments.writer.set_leader_epoch(0)
    ledger = Log(g.PartitionWriter("ledger", 0))
    ledger.writer.set_leader_epoch(0)
    n_txn = f"__transaction_state-{coordinator_partition(TID)}"
    n_off = f"__consumer_offsets-{coordinator_partition(RECONCILER)}"
    assert coordinator_partition(ARCHIVER) == coordinator_partition(RECONCILER)
    txn_state, offsets = coordinator_log(n_txn), coordinator_log(n_off)
    assert internal_placement(txn_state.writer.partition)[0] == 3 == internal_placement(offsets.writer.partition)[0]

    gw_a = Producer(4000, "payment-gateway-a", g.LZ4)
    relay = Producer(4001, "outbox-relay")
    gw_b = Producer(4002, "payment-gateway-b", g.LZ4)
    settler = Producer(5000, TID)
    relay_rows: list[tuple[bytes, bytes]] = []  # the outbox relay's rows in order (its sequence = row index)
    txn_records: list[dict] = []

    def txn_record(ts: int, state: str, parts: list[str] | None, epoch: int, start: int) -> None:
        value = eos.txn_value(settler.pid, epoch, TXN_TIMEOUT_MS, state,
                              None if parts is None else eos._parts(parts), ts, start, prev=settler.pid)
        f = coordinator_append(txn_state, ts, eos.txn_key(TID), value)
        txn_records.append({"state": state, "producer_epoch": epoch, "offset": f["base_offset"], "timestamp": ts,
                            "partitions": parts})

    def relay_write(ts: int, appended_at: int) -> dict:
        recs = payment_records(rng, 5, ts, "outbox")
        relay_rows.extend((k, v) for _t, k, v, _h in recs)
        return produce(payments, relay, recs, appended_at)

    def gateway_write(prod: Producer, ts: int, appended_at: int | None = None) -> dict:
        recs = payment_records(rng, 5, ts, "gw-a" if prod is gw_a else "gw-b")
        return produce(payments, prod, recs, at_ms(ts) if appended_at is None else appended_at)

    def at_ms(ts: int) -> int:
        return ts + 40  # a batch is appended 40 ms after its first record was created (linger + network)

    transactions: list[dict] = []

    def begin(start_s: float, epoch: int, n_pay: int, n_ledger: int) -> dict:
        """A transaction of the settler (Transactions V2) up to its EndTxn: payments-0, then ledger-0, each added
        (an Ongoing record) as it is first written; a new producer epoch starts every sequence at 0."""
        start = at(start_s)
        settler.epoch, settler.seq = epoch, {}
        txn_record(start, "Ongoing", ["payments-0"], epoch, start)
        pay = produce(payments, settler, payment_records(rng, n_pay, start + 3, "settle"), start + 5,
                      transactional=True)
        txn_record(start + 8, "Ongoing", ["ledger-0", "payments-0"], epoch, start)
        led = produce(ledger, settler, payment_records(rng, n_ledger, start + 11, "ledger"), start + 13,
                      transactional=True)
        t = {"transactional_id": TID, "producer_id": settler.pid, "data_epoch": epoch, "marker_epoch": epoch + 1,
             "coordinator_epoch": COORDINATOR_EPOCH, "partitions": ["ledger-0", "payments-0"], "outcome": "COMMIT",
             "started_at": start, "data": {"payments-0": [pay["base_offset"], pay["last_offset"]],
                                           "ledger-0": [led["base_offset"], led["last_offset"]]}}
        transactions.append(t)
        return t

    def commit(t: dict, end: int) -> None:
        """EndTxn at `end`: PrepareCommit at the data epoch + 1, the markers (payments-0, then ledger-0) with that
        epoch, CompleteCommit."""
        txn_record(end, "PrepareCommit", t["partitions"], t["marker_epoch"], t["started_at"])
        m_pay = marker(payments, settler.pid, t["marker_epoch"], True, end + 1)
        m_led = marker(ledger, settler.pid, t["marker_epoch"], True, end + 2)
        txn_record(end + 5, "CompleteCommit", [], t["marker_epoch"], t["started_at"])
        t.update(prepared_at=end, completed_at=end + 5,
                 markers={"payments-0": m_pay["base_offset"], "ledger-0": m_led["base_offset"]})

    # -- the groups join (classic protocol) before the data flows
    group_log: list[dict] = []

    def group_event(ts: int, kind: str, group: str, key: bytes, value: bytes, offset: int | None = None) -> None:
        f = coordinator_append(offsets, ts, key, value)
        group_log.append({"group": group, "event": kind, "timestamp": ts, "coordinator_offset": f["base_offset"],
                          "committed_offset": offset})

    group_event(at(8), "joined (generation 1)", RECONCILER, *group_metadata(RECONCILER, 1, at(8)))
    group_event(at(9), "joined (generation 1)", ARCHIVER, *group_metadata(ARCHIVER, 1, at(9)))
    txn_record(at(38), "Empty", None, 0, -1)  # InitProducerId: producer id 5000 from broker 3's block, epoch 0

    # -- phase A: t = 10 + 5 i, both replicas in sync (offsets 0-99)
    commits = {RECONCILER: [(40, 25), (70, 55), (100, 90), (130, 115), (160, 140), (186, 170)],
               ARCHIVER: [(45, 30), (105.5, 95), (165.5, 155), (186.5, 160)]}
    pending_commits = sorted((at(s), grp, o) for grp, cs in commits.items() for s, o in cs)

    def commits_until(ms: int) -> None:
        while pending_commits and pending_commits[0][0] <= ms:
            ts, grp, o = pending_commits.pop(0)
            group_event(ts, "offset commit", grp, *offset_commit(grp, o, ts), offset=o)

    phase_a = ["a", "r", "a", "r", "a", "r", "T0", "a", "r", "a", "r", "a", "r", "a", "r", "a", "r", "a", "r", "T1"]
    for i, who in enumerate(phase_a):
        s = 10 + 5 * i
        commits_until(at(s))
        if who == "a":
            gateway_write(gw_a, at(s))
        elif who == "r":
            relay_write(at(s), at_ms(at(s)))
        elif who == "T0":
            commit(begin(s, 0, 4, 4), at(s + 0.015))
        else:  # T1: its data before broker 2's shutdown, its EndTxn after (t=111)
            t1 = begin(s, 1, 5, 5)
    commits_until(at(106))
    assert payments.writer.next_offset == 100
    relay_checkpoint = 40  # the relay persisted its outbox position at t=92: rows 0-39 delivered

    # -- control plane, part 2: broker 2's controlled shutdown (t=107) and fencing (t=108.5)
    c.controlled_shutdown(2, at(107))
    stop_2 = at(107)  # broker 2 stops fetching: its copies end with what it had appended by then
    fence_2 = c.fence(2, at(108.5), "broker 2 fenced (controlled shutdown done)")
    metadata_2_stop = fence_2  # its metadata copy had not fetched the fence record when it stopped

    # -- phase B: broker 1 alone (ISR [1]) writes offsets 100-180
    commits_until(at(110))
    gateway_write(gw_a, at(110))
    commit(t1, at(111))
    phase_b = ["r", "b", "a", "b", "a", "b", "r", "a", "b", "a", "b", "a", "r", "b", "a"]
    for i, who in enumerate(phase_b):
        s = 115 + 5 * i
        commits_until(at(s))
        if who == "a":
            gateway_write(gw_a, at(s))
        elif who == "b":
            gateway_write(gw_b, at(s))
        else:
            relay_write(at(s), at_ms(at(s)))
    commits_until(at(187))
    crash_1 = at(187)
    assert payments.writer.next_offset == 181 and not pending_commits
    last_checkpoint_1 = at(182.4)

    # -- control plane, part 3: broker 1 fenced, broker 2 back, the unclean election
    c.fence(1, at(196.1), "broker 1 fenced (session expired)")
    c.register(2, at(203))
    c.unfence(2, at(206))
    c.expand_isrs(3, 2, at(208))
    # the operator stops both groups (t=215): the close commits the last position again, the group goes Empty
    for grp, s in ((RECONCILER, 215), (ARCHIVER, 215.5)):
        last = commits[grp][-1][1]
        group_event(at(s), "offset commit (on close)", grp, *offset_commit(grp, last, at(s)), offset=last)
        group_event(at(s) + 10, "left: group Empty (generation 2)", grp,
                    *group_metadata(grp, 2, at(s) + 10, empty=True))
    election = c.unclean_election("payments", 2, at(225))
    c.recovered("payments", at(225.08))

    # -- broker 2's payments-0: its copy up to t=107, a clean shutdown, a restart, leader epoch 2 from 100
    pay_2 = follower_copy(payments, stop_2)
    assert pay_2.next_offset == 100
    clean_close(pay_2)
    reopen(pay_2)
    pay_2.set_leader_epoch(2)  # Partition.makeLeader: maybeAssignEpochStartOffset(2, log end 100)
    new_leader = Log(pay_2)
    # 4002's batch blocked since t=190 (sequence 30): broker 2 has no state of 4002 and takes it
    gw_b_blocked = payment_records(rng, 5, at(190), "gw-b")
    after = [produce(new_leader, gw_b, gw_b_blocked, at(225.21))]
    # 4000's batch blocked since t=195 (epoch 0, sequence 80): rejected, re-sent with epoch 1 from sequence 0
    gw_a_blocked = payment_records(rng, 5, at(195), "gw-a")
    rejected = {"producer_id": 4000, "producer_epoch": gw_a.epoch, "base_sequence": gw_a.seq["payments-0"],
                "broker_last_sequence": 44, "error": "OUT_OF_ORDER_SEQUENCE_NUMBER", "at": at(225.23)}
    gw_a.epoch, gw_a.seq = 1, {}
    after.append(produce(new_leader, gw_a, gw_a_blocked, at(225.26)))
    # the relay restarted at t=212 as producer 5001 and re-sends its outbox from row 40, five rows per send
    relay_new = Producer(5001, "outbox-relay")
    new_rows = payment_records(rng, 5, at(205), "outbox")  # rows 60-64, written to the outbox at t=205
    relay_rows.extend((k, v) for _t, k, v, _h in new_rows)
    resend = relay_rows[relay_checkpoint:]
    assert len(resend) == 25
    for i in range(0, len(resend), 5):
        created = at(212.3) if i == 0 else at(225.3) + 20 * (i // 5) - 15
        recs = [(created + j * 7, k, v, []) for j, (k, v) in enumerate(resend[i:i + 5])]
        after.append(produce(new_leader, relay_new, recs, at(225.3) + 20 * (i // 5)))
    after.append(gateway_write_to(new_leader, gw_b, at(230), rng))
    after.append(gateway_write_to(new_leader, gw_a, at(235), rng))
    image = at(238)
    assert new_leader.writer.next_offset == 145

    # -- the replicas of the other partitions
    # broker 2's copies: what it had fetched by t=107, closed cleanly, then caught up from broker 3 after t=203
    led_3, txn_3, off_3 = ledger.writer, txn_state.writer, offsets.writer
    txn_1, off_1 = follower_copy(txn_state, crash_1), follower_copy(offsets, crash_1)
    shutdown_ends = {"payments-0": pay_2.epochs[-1][1]}
    copies_2 = {}
    for name, log in (("ledger-0", ledger), (n_txn, txn_state), (n_off, offsets)):
        p = follower_copy(log, stop_2)
        shutdown_ends[name] = p.next_offset
        clean_close(p)
        reopen(p)
        copies_2[name] = follower_copy(log, image, into=p)
    led_2, txn_2, off_2 = copies_2["ledger-0"], copies_2[n_txn], copies_2[n_off]

    # -- the metadata log and its copies
    ends = {1: fence_2 + 1, 2: c.next_offset, 3: c.next_offset}  # broker 1's copy ends when it died
    meta = {b: metadata_copy(c, ends[b], restart_at=metadata_2_stop if b == 2 else None) for b in BROKERS}
    snap = snapshot_bytes(snapshot, snapshot_ts, snapshot_ts - 250)

    # -- the disks
    hw_checkpoint = {1: last_checkpoint_1, 2: at(237.4), 3: at(237.4)}
    holds = {1: {"payments-0": payments.writer, n_txn: txn_1, n_off: off_1},
             2: {"payments-0": pay_2, "ledger-0": led_2, n_txn: txn_2, n_off: off_2},
             3: {"ledger-0": led_3, n_txn: txn_3, n_off: off_3}}
    logs = {"payments-0": payments, "ledger-0": ledger, n_txn: txn_state, n_off: offsets}
    brokers: dict = {}
    for b in BROKERS:
        root = out / f"incident-{b}"
        root.mkdir(parents=True)
        parts: dict = {}
        hw, recovery = [], []
        for name, p in holds[b].items():
            p.open_transactions()
            files = p.write(root, final_snapshot=False, index_bytes=INDEX_BYTES)
            high_watermark = _high_watermark(b, name, p, logs, new_leader, hw_checkpoint[b])
            facts = g.partition_facts(p, files, p.next_offset, high_watermark)
            facts["snapshot_offsets"] = sorted(p.snapshots)
            if b == 2:
                facts["restarted_at"] = shutdown_ends[name]  # the clean shutdown's log end (time index, snapshot)
            parts[name] = facts
            hw.append((p.topic, p.partition, high_watermark))
            # never flushed since the log was created (no roll), but what broker 2 flushed at its clean shutdown
            recovery.append((p.topic, p.partition, shutdown_ends[name] if b == 2 else 0))
        m = meta[b]
        m.snapshots[SNAPSHOT_END] = m._snapshot_bytes()  # taken when the segment rolled at 3000
        files = m.write(root, final_snapshot=False, index_bytes=INDEX_BYTES)
        parts[m.name] = g.partition_facts(m, files, m.next_offset, m.next_offset)
        parts[m.name]["snapshot_offsets"] = sorted(m.snapshots)
        if b == 2:
            parts[m.name]["restarted_at"] = metadata_2_stop
        (root / m.name / f"{SNAPSHOT_END:020d}-{RAFT_EPOCH:010d}.checkpoint").write_bytes(snap)
        (root / m.name / "quorum-state").write_text(json.dumps(
            {"leaderId": RAFT_LEADER, "leaderEpoch": RAFT_EPOCH, "votedId": -1,
             "votedDirectoryId": "AAAAAAAAAAAAAAAAAAAAAA", "data_version": 1}, separators=(",", ":")))
        (root / "meta.properties").write_text(
            f"#\n#Sat Nov 15 09:00:00 UTC 2025\nnode.id={b}\ndirectory.id={DIRECTORIES[b]}\nversion=1\n"
            f"cluster.id={CLUSTER_ID}\n")
        hw.sort()
        recovery.sort()
        g.write_checkpoint(root / "replication-offset-checkpoint", hw)
        g.write_checkpoint(root / "recovery-point-offset-checkpoint", recovery)
        g.write_checkpoint(root / "log-start-offset-checkpoint", [(t, p, 0) for t, p, _ in hw])
        g.write_checkpoint(root / "cleaner-offset-checkpoint", [])
        brokers[f"incident-{b}"] = {
            "node_id": b, "clean_shutdown": False, "segment_index_bytes": INDEX_BYTES, "partitions": parts,
            "replication_offset_checkpoint_at": hw_checkpoint[b],
            "metadata_log": {"log_start_offset": SNAPSHOT_END, "log_end_offset": m.next_offset,
                             "snapshots": [f"{SNAPSHOT_END:020d}-{RAFT_EPOCH:010d}.checkpoint"]}}

    story = {"payments": payments, "new_leader": new_leader, "n_txn": n_txn, "n_off": n_off,
             "transactions": transactions, "txn_records": txn_records, "group_log": group_log, "commits": commits,
             "after": after, "election": election, "rejected": rejected, "last_checkpoint_1": last_checkpoint_1,
             "crash_1": crash_1}
    expected = expected_json(c, brokers, story)
    (out / "EXPECTED_INCIDENT.json").write_text(compact_json(expected) + "\n")


def compact_json(obj: object, indent: int = 0) -> str:
    """JSON with sorted keys, one line per container that holds no container (a batch, a finding's offsets),
    indented by one space a level: small to store, easy to read and to diff."""
    def flat(o: dict | list) -> bool:
        return not any(isinstance(v, (dict, list)) for v in (o.values() if isinstance(o, dict) else o))

    if not isinstance(obj, (dict, list)) or not obj or flat(obj):
        return json.dumps(obj, sort_keys=True)
    pad = " " * (indent + 1)
    if isinstance(obj, dict):
        body = ",\n".join(f"{pad}{json.dumps(k)}: {compact_json(obj[k], indent + 1)}" for k in sorted(obj))
        return "{\n" + body + "\n" + " " * indent + "}"
    return "[\n" + ",\n".join(pad + compact_json(v, indent + 1) for v in obj) + "\n" + " " * indent + "]"


def gateway_write_to(log: Log, prod: Producer, ts: int, rng: random.Random) -> dict:
    recs = payment_records(rng, 5, ts, "gw-a" if prod.pid == 4000 else "gw-b")
    return produce(log, prod, recs, ts + 40)


def metadata_copy(c: Controller, end: int, restart_at: int | None = None) -> g.PartitionWriter:
    """A broker's copy of the metadata log: the batches from the snapshot's end offset up to `end` (exclusive);
    `restart_at`: the broker shut down cleanly with its copy ending there, and fetched the rest after its restart."""
    w = g.PartitionWriter("__cluster_metadata", 0)
    w.segments = [g.Segment(SNAPSHOT_END)]
    w.next_offset = SNAPSHOT_END
    w.set_leader_epoch(RAFT_EPOCH)
    for base, ts, recs, _what in c.ops:
        if base == restart_at:
            clean_close(w)
            reopen(w)
        if base < end:
            w.append(_records_batch(recs, ts), count=len(recs), max_ts=ts)
    return w


def _high_watermark(broker: int, name: str, p: g.PartitionWriter, logs: dict, new_leader: Log, when: int) -> int:
    """The high watermark the broker's replication-offset-checkpoint holds: the partition's high watermark at the
    broker's last checkpoint. Every partition here had its whole ISR caught up within milliseconds, so the high
    watermark is the log end as of then: the leader's log for the partition (the new leader's for payments-0 on
    broker 2), never above this copy's end."""
    log = new_leader if (broker, name) == (2, "payments-0") else logs[name]
    return min(log.count_before(when), p.next_offset)


def expected_json(c: Controller, brokers: dict, v: dict) -> dict:
    """EXPECTED_INCIDENT.json from the script's bookkeeping (`v`: what main wrote, by name)."""
    payments: Log = v["payments"]
    new_leader: Log = v["new_leader"]
    n_off, n_txn = v["n_off"], v["n_txn"]
    b1 = brokers["incident-1"]["partitions"]["payments-0"]
    cut = 100
    lost = [a.fact for a in payments.appends if a.fact["base_offset"] >= cut]
    lost_data = [f for f in lost if not f["is_control"]]
    lost_markers = [f for f in lost if f["is_control"]]
    hw_checkpoint_1 = b1["high_watermark"]
    isr_alone = next(h for h in c.history if h["topic"] == "payments" and h["isr"] == [1])
    # acknowledged: below the checkpointed high watermark, or appended after the metadata shows the ISR the leader
    # alone (the high watermark then moves with every append)
    acknowledged = [f for f in lost_data if f["last_offset"] < hw_checkpoint_1
                    or _appended_at(payments, f) > isr_alone["timestamp"]]
    by_producer: dict[int, dict] = {}
    for f in lost_data:
        s = by_producer.setdefault(f["producer_id"], {"producer_id": f["producer_id"], "batches": [], "records": 0})
        s["batches"].append({"offsets": [f["base_offset"], f["last_offset"]], "producer_epoch": f["producer_epoch"],
                             "sequences": [f["base_sequence"], f["last_sequence"]],
                             "appended_at": _appended_at(payments, f)})
        s["records"] += f["count"]
    relay_lost = [f for f in lost_data if f["producer_id"] == 4001]
    relay_lost_records = {r for a in payments.appends if a.fact in relay_lost for r in a.records}
    resent = [a for a in new_leader.appends if a.fact["producer_id"] == 5001]
    resent_lost = [[a.fact["base_offset"], a.fact["last_offset"]] for a in resent
                   if set(a.records) <= relay_lost_records]
    t1 = v["transactions"][1]
    after = v["after"]
    original = next(a for a in payments.appends if a.fact["producer_id"] == 4001 and a.fact["base_offset"] == 90)
    dup_original, dup_resent = original.fact, after[2]
    assert new_leader.appends[2].records == original.records and new_leader.appends[2].fact is dup_resent
    new_end = new_leader.writer.next_offset
    meta_ref = "incident-2"
    election = next(h for h in c.history if h["election"] == "unclean")
    offline = next(h for h in c.history if h["election"] == "offline")
    commits_final = {grp: cs[-1][1] for grp, cs in v["commits"].items()}
    group_rows = v["group_log"]

    def last_commit(grp: str) -> dict:
        return [e for e in group_rows if e["group"] == grp and e["committed_offset"] is not None][-1]

    findings = [
        {"kind": "unclean_leader_election", "severity": "error", "broker": meta_ref, "topic": "payments",
         "partition": 0, "offset": cut, "producer_id": None, "leader": 2, "leader_epoch": 2, "previous_leader": -1,
         "previous_isr": [1], "previous_elr": [], "metadata_offset": v["election"], "elected_at": election["timestamp"],
         "metadata_broker": meta_ref, "lost_offsets": [cut, hw_checkpoint_1 - 1]},
        {"kind": "replica_divergence", "severity": "error", "broker": "incident-1", "topic": "payments", "partition": 0,
         "offset": cut, "producer_id": None, "common_prefix_end_offset": cut, "lost_offsets": [cut, hw_checkpoint_1 - 1],
         "lost_on": "incident-1", "winner": "incident-2",
         "elections": [{"leader_epoch": 1, "leader": -1, "election": "offline", "elected_at": offline["timestamp"]},
                       {"leader_epoch": 2, "leader": 2, "election": "unclean", "elected_at": election["timestamp"]}]},
        {"kind": "marker_missing", "severity": "error", "broker": "incident-2", "topic": "payments", "partition": 0,
         "offset": t1["data"]["payments-0"][0], "producer_id": t1["producer_id"], "producer_epoch": t1["marker_epoch"],
         "transactional_id": TID, "coordinator_outcome": "COMMIT", "completed_at": t1["completed_at"]},
        {"kind": "hanging_transaction", "severity": "error", "broker": "incident-2", "topic": "payments",
         "partition": 0, "offset": t1["data"]["payments-0"][0], "producer_id": t1["producer_id"],
         "first_offset": t1["data"]["payments-0"][0], "lso_stuck_at": t1["data"]["payments-0"][0],
         "last_data_offset": t1["data"]["payments-0"][1], "transaction_timeout_ms": TXN_TIMEOUT_MS},
    ] + [
        {"kind": "committed_offset_beyond_log_end", "severity": "error", "broker": "incident-3", "topic": "payments",
         "partition": 0, "offset": commits_final[grp], "producer_id": None, "group": grp,
         "committed_offset": commits_final[grp], "coordinator_partition": n_off,
         "coordinator_offset": last_commit(grp)["coordinator_offset"], "log_end_offset": new_end,
         "reference_broker": "incident-2"}
        for grp in (RECONCILER, ARCHIVER)]
    full_only = [
        {"kind": "content_duplicate", "severity": "warning", "broker": "incident-2", "topic": "payments",
         "partition": 0, "offset": dup_resent["base_offset"], "producer_id": 5001, "producer_ids": [4001, 5001],
         "matches": 5, "original_offsets": [dup_original["base_offset"], dup_original["last_offset"]],
         "resent_offsets": [dup_resent["base_offset"], dup_resent["last_offset"]],
         "ms_between": dup_resent["max_timestamp"] - 4 * 7 - dup_original["max_timestamp"]},
    ]
    incident = {
        "cause": {"kind": "unclean_leader_election", "topic": "payments", "partition": 0, "new_leader": 2,
                  "leader_epoch": 2, "metadata_offset": v["election"], "elected_at": election["timestamp"],
                  "by": "operator: kafka-leader-election.sh --election-type UNCLEAN --topic payments --partition 0"},
        "lost_offsets": [{"broker": "incident-1", "topic": "payments", "partition": 0, "from": cut,
                          "to": b1["log_end_offset"] - 1}],
        "lost_offsets_note": "only the old leader lost a range: the new leader (incident-2) never held offsets "
                             f"{cut}-{b1['log_end_offset'] - 1} of leader epoch 0, incident-3 holds no replica of "
                             "payments-0",
        "lost_batches": len(lost),
        "records_lost": sum(f["count"] for f in lost_data),
        "control_records_lost": [{"offset": f["base_offset"], "control_type": f["control_type"],
                                  "producer_id": f["producer_id"], "producer_epoch": f["producer_epoch"]}
                                 for f in lost_markers],
        "records_lost_by_producer": sorted(by_producer.values(), key=lambda s: s["producer_id"]),
        "acknowledged_records_lost": sum(f["count"] for f in acknowledged),
        "acknowledged_records_lost_by_checkpoint": sum(f["count"] for f in lost_data
                                                       if f["last_offset"] < hw_checkpoint_1),
        "acknowledged_how": {
            "checkpointed_high_watermark": hw_checkpoint_1,
            "checkpoint_written_at": v["last_checkpoint_1"],
            "checkpoint_proves": f"offsets {cut}-{hw_checkpoint_1 - 1}: "
                                 f"{sum(f['count'] for f in lost_data if f['last_offset'] < hw_checkpoint_1)} data "
                                 f"records (the marker at {lost_markers[0]['base_offset']} is no data record)",
            "isr_leader_alone_from": {"metadata_offset": isr_alone["metadata_offset"],
                                      "timestamp": isr_alone["timestamp"], "isr": [1]},
            "first_lost_append": _appended_at(payments, lost[0]),
            "last_lost_append": _appended_at(payments, lost[-1]),
            "isr_until": {"metadata_offset": offline["metadata_offset"], "timestamp": offline["timestamp"],
                          "note": "broker 1 fenced: leader -1, ISR still [1]"},
            "reasoning": "min.insync.replicas 1 and the ISR [1] from metadata offset "
                         f"{isr_alone['metadata_offset']} (t={isr_alone['timestamp']}) until broker 1 died: "
                         "Partition.maybeIncrementLeaderHW moved the high watermark to the log end on every append, "
                         "so every acks=all write was acknowledged when appended; all 16 lost data batches were "
                         "appended after that record. The checkpoint, written every 5 s, last ran before the final "
                         f"batch ({hw_checkpoint_1}-{b1['log_end_offset'] - 1})."},
        "content_recovered": {
            "records": sum(f["count"] for f in relay_lost),
            "note": "the outbox relay (4001, restarted as 5001) re-sent its rows 45-59, which were in the lost range, "
                    "from its persisted position: the same keys and values are on the new leader",
            "lost_offsets": [[f["base_offset"], f["last_offset"]] for f in relay_lost],
            "resent_offsets": resent_lost},
        "records_gone_from_the_new_leader": sum(f["count"] for f in lost_data) - sum(f["count"] for f in relay_lost),
        "transaction_marker_lost": {
            "transactional_id": TID, "producer_id": t1["producer_id"], "producer_epoch": t1["marker_epoch"],
            "data_epoch": t1["data_epoch"], "coordinator": "incident-3", "coordinator_partition": n_txn,
            "coordinator_outcome": "COMMIT", "completed_at": t1["completed_at"],
            "partitions": t1["partitions"], "data_offsets": t1["data"], "marker_offsets": t1["markers"],
            "marker_lost_on": {"broker": "incident-1", "topic": "payments", "partition": 0,
                               "offset": t1["markers"]["payments-0"]},
            "new_leader": {"broker": "incident-2", "open_from": t1["data"]["payments-0"][0],
                           "last_stable_offset": t1["data"]["payments-0"][0],
                           "records_held_back": t1["data"]["payments-0"][1] - t1["data"]["payments-0"][0] + 1},
            "note": "committed on ledger-0 (marker at 10 on incident-3 and incident-2) and on the old leader's "
                    "payments-0; open on the new leader's payments-0, which the coordinator will never end: "
                    "`kafka-transactions.sh abort --start-offset 95` would write an ABORT for data the coordinator "
                    "committed"},
        "groups_stranded": [
            {"group": RECONCILER, "topic": "payments", "partition": 0, "committed_offset": commits_final[RECONCILER],
             "committed_leader_epoch": -1, "coordinator_partition": n_off,
             "coordinator_offset": last_commit(RECONCILER)["coordinator_offset"], "new_log_end_offset": new_end,
             "old_leader_log_end_offset": b1["log_end_offset"], "state": "Empty (generation 2, no members)",
             "consumer_sees": "OFFSET_OUT_OF_RANGE on its next fetch, then auto.offset.reset; had the new leader "
                              f"grown past {commits_final[RECONCILER]} first it would skip offsets {cut}-"
                              f"{commits_final[RECONCILER] - 1} of the new leader in silence",
             "safe_offset": cut},
            {"group": ARCHIVER, "topic": "payments", "partition": 0, "committed_offset": commits_final[ARCHIVER],
             "committed_leader_epoch": 0, "coordinator_partition": n_off,
             "coordinator_offset": last_commit(ARCHIVER)["coordinator_offset"], "new_log_end_offset": new_end,
             "old_leader_log_end_offset": b1["log_end_offset"], "state": "Empty (generation 2, no members)",
             "consumer_sees": "a Java consumer (KIP-320) validates the committed position with OffsetsForLeaderEpoch "
                              f"(epoch 0 ends at {cut} on the new leader) and resets to {cut} unless "
                              "auto.offset.reset is none: it heals itself",
             "safe_offset": cut},
        ],
        "producers_with_sequence_gaps": sequence_gaps(payments, new_leader, cut),
        "producer_rejected_on_new_leader": rejected_fmt(v["rejected"]),
        "restart_of_old_leader": {
            "broker": "incident-1", "would_truncate_to": cut, "offsets_discarded": [cut, b1["log_end_offset"] - 1],
            "how": "as a follower of leader epoch 2 its fetcher asks OffsetsForLeaderEpoch(0): the leader answers "
                   f"{cut}, and the replica truncates its log there (not log recovery: nothing on its disk is "
                   "damaged)"},
        "timeline": timeline(c, v),
    }
    not_raised = [
        {"kind": "restart_would_truncate", "broker": "incident-1", "topic": "payments", "partition": 0,
         "offsets_discarded": [cut, b1["log_end_offset"] - 1],
         "why": "the restart prediction replays log recovery (damage) only; a restarted broker 1 truncates as a "
                "follower (OffsetsForLeaderEpoch), which the prediction does not model"},
        {"kind": "sequence_gap", "why": "correctly absent: on one replica's log no producer skips a sequence "
                                        "(the broker rejects a known producer's gap; see producers_with_sequence_gaps)"}]
    silent = [
        "broker 2's controlled shutdown and its return to the ISRs (102 and 101 partition changes)",
        "the internal partitions' leaders moving to broker 3 (clean elections)",
        f"payments-0 offline from metadata offset {offline['metadata_offset']} until the election (no live broker "
        "in its ISR)",
        "the lagging metadata copy of incident-1 (ends when broker 1 died)",
        "4000's epoch bump to 1 at sequence 0 on the new leader (the client's answer to OUT_OF_ORDER_SEQUENCE_NUMBER)",
        "4002's history on the new leader starting at sequence 30 (no state there)",
        "T0: committed with markers on every replica",
        "the stray-looking snapshot 100 on incident-2's payments-0 (the clean shutdown's, kept after the restart)",
        "preallocated zero-filled active indexes on all three (running or crashed) brokers",
    ]
    # every finding is one incident, the election's: its cause as `kforensics explain --json` names it
    cause = {"kind": "unclean_leader_election", "broker": meta_ref, "topic": "payments", "partition": 0,
             "offset": cut, "producer_id": None}
    for f in findings + full_only:
        f["incident"] = cause
    return {"generated_by": "sample_logs/generate_incident.py", "t0": T0, "cluster_id": CLUSTER_ID,
            "topic_ids": TOPIC_IDS, "brokers": brokers,
            "metadata": {"snapshot_end_offset": SNAPSHOT_END, "raft_epoch": RAFT_EPOCH,
                         "log_end_offset": c.next_offset, "reference_broker": meta_ref,
                         "operations": [{"metadata_offset": base, "timestamp": ts, "records": len(recs), "what": what}
                                        for base, ts, recs, what in c.ops],
                         "partition_history": c.history},
            "transactions": v["transactions"], "transaction_state": v["txn_records"], "groups": group_rows,
            "findings": findings, "findings_full_only": full_only, "not_raised_today": not_raised,
            "silent": silent, "incident": incident}


HOW = {
    4000: "its blocked batch (epoch 0, sequence 80) was rejected OUT_OF_ORDER_SEQUENCE_NUMBER by broker 2, whose last "
          "sequence of 4000 is 44; the client bumped its epoch and re-sent it from sequence 0: the new leader's log "
          "shows an epoch bump (legal), not a gap",
    4001: "the relay restarted as producer 5001 and re-sent its outbox rows 40-64 from sequence 0",
    4002: "broker 2 had no state of 4002 (it started writing while broker 2 was down): its blocked batch at sequence "
          "30 was accepted; on the new leader alone its history starts mid-sequence (legal)",
}


def sequence_gaps(old: Log, new: Log, cut: int) -> list[dict]:
    """Per producer that wrote in the lost range: its sequences on the old leader, on the new leader (per epoch), and
    the epoch-0 sequences only the old leader holds."""
    out = []
    for pid in sorted({a.fact["producer_id"] for a in old.appends if a.fact["base_offset"] >= cut
                       and not a.fact["is_control"]}):
        if pid == 5000:
            continue
        mine = [a.fact for a in old.appends if a.fact["producer_id"] == pid]
        on_new = [a.fact for a in new.appends if a.fact["producer_id"] == pid]
        kept = [f for f in mine if f["base_offset"] < cut]
        epochs: dict[int, list[int]] = {}
        for f in [*kept, *on_new]:
            first, last = epochs.get(f["producer_epoch"], [f["base_sequence"], f["last_sequence"]])
            epochs[f["producer_epoch"]] = [min(first, f["base_sequence"]), max(last, f["last_sequence"])]
        lost = [f for f in mine if f["base_offset"] >= cut]
        out.append({"producer_id": pid, "old_leader": {"producer_epoch": 0, "sequences": [
                        mine[0]["base_sequence"], mine[-1]["last_sequence"]]},
                    "new_leader": {"sequences_by_epoch": {str(e): r for e, r in sorted(epochs.items())},
                                   "first_offset_after_election": on_new[0]["base_offset"] if on_new else None},
                    "missing_on_new_leader": {"producer_epoch": 0, "sequences": [lost[0]["base_sequence"],
                                                                                 lost[-1]["last_sequence"]]},
                    "how": HOW[pid]})
    return out


def rejected_fmt(r: dict) -> dict:
    return {**r, "note": "not on any disk: the broker answers with an error and appends nothing"}


def _appended_at(log: Log, fact: dict) -> int:
    return next(a.at for a in log.appends if a.fact is fact or a.fact["base_offset"] == fact["base_offset"])


def timeline(c: Controller, v: dict) -> list[dict]:
    """The incident's events in time order, each with the broker whose disk shows it and what on that disk gives its
    time (`source`): a metadata record's batch timestamp, a data batch's max timestamp (the producer's CreateTime; a
    marker's is the leader's clock), a coordinator record's. `ground truth` marks the two moments no file records (the
    checkpoint's write, the crash): the disks only bound them."""
    ops = {what: (base, ts) for base, ts, _recs, what in c.ops}
    pay = {h["election"] if h["isr"] != [1] or h["leader"] != 1 else "alone": h for h in c.history
           if h["topic"] == "payments"}
    t1 = v["transactions"][1]
    payments: Log = v["payments"]
    first = next(a.fact for a in payments.appends if a.fact["base_offset"] == 100)
    last = payments.appends[-1].fact
    meta, batch, coordinator, truth = "metadata log", "batch max timestamp", "coordinator record", "ground truth"
    events = [
        (pay["alone"]["timestamp"], "incident-2", meta, "broker 2 enters controlled shutdown: payments-0's ISR "
                                                        f"becomes [1] (metadata offset {pay['alone']['metadata_offset']})"),
        (first["max_timestamp"], "incident-1", batch, "offsets 100-104, the first batch of the lost range, written "
                                                      "with the ISR [1]: acknowledged on append"),
        (t1["prepared_at"] + 1, "incident-1", batch, f"T1's COMMIT marker at payments-0 offset "
                                                     f"{t1['markers']['payments-0']}"),
        (t1["completed_at"], "incident-3", coordinator, f"the coordinator completes T1 (CompleteCommit, {v['n_txn']})"),
        (v["last_checkpoint_1"], "incident-1", truth, "broker 1's last replication-offset-checkpoint: high watermark "
                                                      "176"),
        (last["max_timestamp"], "incident-1", batch, f"broker 1's last batch: offsets {last['base_offset']}-"
                                                     f"{last['last_offset']}"),
        (v["crash_1"], "incident-1", truth, "broker 1 dies (its disk keeps offsets 100-180)"),
        (pay["offline"]["timestamp"], "incident-2", meta, "broker 1 fenced: payments-0 offline, leader epoch 1 "
                                                          f"(metadata offset {pay['offline']['metadata_offset']})"),
        (ops["broker 2 registers"][1], "incident-2", meta, "broker 2 registers again (metadata offset "
                                                           f"{ops['broker 2 registers'][0]})"),
        (ops["broker 2 unfenced"][1], "incident-2", meta, f"broker 2 unfenced (metadata offset "
                                                          f"{ops['broker 2 unfenced'][0]}); payments-0 stays offline"),
        (pay["unclean"]["timestamp"], "incident-2", meta,
         "unclean election: broker 2 leads payments-0, leader epoch 2 from offset 100, RECOVERING (metadata offset "
         f"{pay['unclean']['metadata_offset']})"),
        (ops["payments-0 RECOVERED"][1], "incident-2", meta,
         f"payments-0 RECOVERED (metadata offset {ops['payments-0 RECOVERED'][0]})"),
        (v["after"][2]["max_timestamp"], "incident-2", batch,
         "the outbox relay, restarted as producer 5001, re-sends offsets 90-94 at offsets 110-114"),
        (v["after"][0]["max_timestamp"], "incident-2", batch,
         "offsets 100-104 of leader epoch 2: producer 4002's batch (sequence 30) created before the election, "
         "appended after it"),
    ]
    for e in v["group_log"]:
        if e["event"] == "offset commit" and e["committed_offset"] in (160, 170):
            events.append((e["timestamp"], "incident-3", coordinator, f"group {e['group']} commits offset "
                           f"{e['committed_offset']} ({v['n_off']} offset {e['coordinator_offset']})"))
        if e["event"].startswith("left"):
            events.append((e["timestamp"], "incident-3", coordinator, f"group {e['group']} stopped: Empty"))
    return [{"at": ts, "broker": b, "source": src, "event": text}
            for ts, b, src, text in sorted(events, key=lambda e: e[0])]


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent)
