"""The sample KRaft cluster: three brokers (sample_logs/kraft-1, kraft-2, kraft-3) of one cluster, each with its copy
of the controller's metadata log (`__cluster_metadata-0`: log segments and a `<end offset>-<epoch>.checkpoint`
snapshot) and the data partitions it holds. Called by generate.py (same bytes every run).

The metadata records are encoded by kforensics' own schema interpreter (`parsers.cluster_metadata`, itself held to
the real KRaft logs in ../shared/realdata); batches, indexes and checkpoints by generate.py's writers. What the
controller would do is scripted here by hand, as Kafka 4.0's controller does it (PartitionChangeBuilder,
ReplicationControlManager, ClusterControlManager), and EXPECTED.json's `kraft` section is this script's bookkeeping:

- `ledger-0` (replicas [1, 2]): broker 2 falls out of the ISR, broker 1 goes on alone (high watermark 90, offsets
  to 99) and dies; the partition goes offline (leader -1, leader epoch 1); an operator elects broker 2 uncleanly
  (leader epoch 2, RECOVERING, Isr [2]) and it writes on from offset 60: offsets 60-89, committed on broker 1, are
  lost. Broker 1's disk (kraft-1) still holds them.
- `audit-0` (replicas [2, 3]): broker 2's controlled shutdown moves leadership cleanly to broker 3 (epoch 1); broker
  2 registers again and rejoins the ISR. Both copies agree.
- `scratch-0` (replicas [3]): the topic is deleted while broker 3's disk was copied before it applied the deletion:
  kraft-3 holds a stray partition dir (its topic id is no live topic).
- An aborted metadata transaction creates topic `ghost`: never applied.
- Copies: kraft-2's log starts at the snapshot's end offset (the older segment deleted) and reaches furthest (the
  reference); kraft-1's ends when broker 1 died, kraft-3's before the deletion (lagging copies, both from offset 0).
"""

from __future__ import annotations

import base64
import hashlib
import random
import struct
from pathlib import Path

import generate as g
from crc32c import crc32c

from kforensics.parsers.cluster_metadata import encode_metadata_record

CLUSTER_ID = "S2ZvcmVuc2ljcy1rcmFmdA"  # a base64 uuid, as kafka-storage format writes it
METADATA_TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAQ"  # Uuid.METADATA_TOPIC_ID
RAFT_EPOCH = 1
BROKERS = (1, 2, 3)
TS = g.BASE_TS + 5 * g.HOUR_MS


def _uuid(label: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(label.encode()).digest()[:16]).decode().rstrip("=")


DIRECTORIES = {b: _uuid(f"kraft-{b} log dir") for b in BROKERS}
TOPIC_IDS = {t: _uuid(f"kraft topic {t}") for t in ("ledger", "audit", "scratch", "ghost")}


def _features() -> list[tuple[str, int, dict]]:
    return [("FEATURE_LEVEL_RECORD", 0, {"name": name, "featureLevel": level}) for name, level in (
        ("metadata.version", 25), ("group.version", 1), ("transaction.version", 2),
        ("eligible.leader.replicas.version", 0))]


def _register(broker: int, epoch: int, *, fenced: bool) -> tuple[str, int, dict]:
    return ("REGISTER_BROKER_RECORD", 3, {
        "brokerId": broker, "isMigratingZkBroker": False, "incarnationId": _uuid(f"kraft-{broker} incarnation {epoch}"),
        "brokerEpoch": epoch, "endPoints": [{"name": "PLAINTEXT", "host": f"kraft-{broker}", "port": 9092,
                                              "securityProtocol": 0}],
        "features": [{"name": "metadata.version", "minSupportedVersion": 7, "maxSupportedVersion": 25}],
        "rack": None, "fenced": fenced, "inControlledShutdown": False, "logDirs": [DIRECTORIES[broker]]})


def _partition(topic: str, replicas: list[int], leader: int) -> tuple[str, int, dict]:
    return ("PARTITION_RECORD", 2, {
        "partitionId": 0, "topicId": TOPIC_IDS[topic], "replicas": replicas, "isr": replicas, "removingReplicas": [],
        "addingReplicas": [], "leader": leader, "leaderEpoch": 0, "partitionEpoch": 0,
        "directories": [DIRECTORIES[b] for b in replicas]})


def _change(topic: str, **fields) -> tuple[str, int, dict]:
    return ("PARTITION_CHANGE_RECORD", 1, {"partitionId": 0, "topicId": TOPIC_IDS[topic], **fields})


def _broker_change(broker: int, epoch: int, **fields) -> tuple[str, int, dict]:
    return ("BROKER_REGISTRATION_CHANGE_RECORD", 2, {"brokerId": broker, "brokerEpoch": epoch, **fields})


def _kraft_control_batch(control_type: int, value: bytes, ts: int) -> bytearray:
    """A KRaft control batch (SnapshotHeader 3 / SnapshotFooter 4), as the raft layer writes it."""
    key = struct.pack(">hh", 0, control_type)
    body = b"\x00" + g.varint(0) + g.varint(0) + g.varint(len(key)) + key + g.varint(len(value)) + value + g.varint(0)
    record = g.varint(len(body)) + body
    header = struct.pack(">qiibIhiqqqhii", 0, 61 - 12 + len(record), RAFT_EPOCH, 2, 0, 0x20, 0, ts, ts, -1, -1, -1, 1)
    out = bytearray(header + record)
    struct.pack_into(">I", out, 17, crc32c(bytes(out[21:])))
    return out


def _records_batch(records: list[tuple[str, int, dict]], ts: int) -> bytearray:
    return g.data_batch([(ts, None, encode_metadata_record(t, v, d), []) for t, v, d in records])


class MetadataLog:
    """The controller's log: one batch per controller operation, with what each record is expected to be."""

    def __init__(self) -> None:
        self.ops: list[tuple[int, int, list[tuple[str, int, dict]]]] = []  # (base offset, ts, records)
        self.next_offset = 0
        self.ts = TS

    def op(self, *records: tuple[str, int, dict], at: int) -> int:
        """Append one batch written `at` seconds after TS; returns the offset of its first record."""
        base = self.next_offset
        self.ts = TS + at * 1000
        self.ops.append((base, self.ts, list(records)))
        self.next_offset += len(records)
        return base

    def copy(self, *, start: int = 0, end: int | None = None) -> g.PartitionWriter:
        """A broker's copy: the batches from `start` (a batch boundary) up to `end` (exclusive)."""
        w = g.PartitionWriter("__cluster_metadata", 0)
        w.segments = [g.Segment(start)]
        w.next_offset = start
        w.set_leader_epoch(RAFT_EPOCH)
        for base, ts, recs in self.ops:
            if base < start or (end is not None and base >= end):
                continue
            w.append(_records_batch(recs, ts), count=len(recs), max_ts=ts)
        return w

    def position_of(self, copy: g.PartitionWriter, offset: int) -> tuple[str, int]:
        batch = next(b for b in copy.fact_batches if b["base_offset"] <= offset <= b["last_offset"])
        return batch["segment"], batch["position"]


def snapshot_bytes(records: list[tuple[str, int, dict]], ts: int) -> bytes:
    """A `<end offset>-<epoch>.checkpoint`: SnapshotHeader, the records (offsets 1..n), SnapshotFooter."""
    header = _kraft_control_batch(3, struct.pack(">hq", 0, ts) + b"\x00", ts)
    body = _records_batch(records, ts)
    struct.pack_into(">q", body, 0, 1)
    struct.pack_into(">i", body, 12, RAFT_EPOCH)
    footer = _kraft_control_batch(4, struct.pack(">h", 0) + b"\x00", ts)
    struct.pack_into(">q", footer, 0, 1 + len(records))
    return bytes(header + body + footer)


def _data(topic: str, epochs: list[tuple[int, int, int, int, int]], rng: random.Random) -> g.PartitionWriter:
    """A data partition: runs of 5-record batches one second apart, each (leader epoch, producer id, batches, first
    sequence, seconds after TS of its first batch)."""
    p = g.PartitionWriter(topic, 0)
    for epoch, pid, n, seq, at in epochs:
        ts = TS + at * 1000
        p.set_leader_epoch(epoch)
        for i in range(n):
            recs = g.records(rng, 5, ts, prefix=topic)
            p.append(g.data_batch(recs, producer_id=pid, producer_epoch=0, base_sequence=seq + 5 * i), count=5,
                     max_ts=recs[-1][0], producer_id=pid, producer_epoch=0, base_sequence=seq + 5 * i)
            ts += 1000
    return p


def main(out: Path) -> dict:
    """Write kraft-1..3 under `out`; returns EXPECTED.json's `kraft` section."""
    import shutil

    for b in BROKERS:
        shutil.rmtree(out / f"kraft-{b}", ignore_errors=True)
    g.TOPIC_IDS.update({"__cluster_metadata": METADATA_TOPIC_ID, **TOPIC_IDS})
    log = MetadataLog()
    history: list[dict] = []

    def expect(offset: int, topic: str, election: str, leader: int, leader_epoch: int, isr: list[int],
               recovery: str = "RECOVERED") -> None:
        history.append({"topic": topic, "partition": 0, "metadata_offset": offset, "election": election,
                        "leader": leader, "leader_epoch": leader_epoch, "isr": isr, "leader_recovery_state": recovery,
                        "timestamp": log.ts})

    # the times (seconds after TS) bracket the data below: each leader epoch's batches follow its election
    log.op(("BEGIN_TRANSACTION_RECORD", 0, {"name": "Bootstrap records"}), *_features(),
           ("END_TRANSACTION_RECORD", 0, {}), at=0)
    epochs = {1: 10, 2: 11, 3: 12}
    for b in BROKERS:
        log.op(_register(b, epochs[b], fenced=True), at=b)
    for b in BROKERS:
        log.op(_broker_change(b, epochs[b], fenced=-1), at=3 + b)
    created = {}
    for i, (topic, replicas) in enumerate((("ledger", [1, 2]), ("audit", [2, 3]), ("scratch", [3]))):
        created[topic] = log.op(("TOPIC_RECORD", 0, {"name": topic, "topicId": TOPIC_IDS[topic]}),
                                _partition(topic, replicas, replicas[0]), at=7 + i)
        expect(created[topic] + 1, topic, "initial", replicas[0], 0, replicas)
    log.op(("BEGIN_TRANSACTION_RECORD", 0, {"name": "CreateTopics"}),
           ("TOPIC_RECORD", 0, {"name": "ghost", "topicId": TOPIC_IDS["ghost"]}), _partition("ghost", [1], 1),
           ("ABORT_TRANSACTION_RECORD", 0, {"reason": "controller failover"}), at=10)
    snapshot_end = log.next_offset
    snapshot_ts = TS + 11_000
    snapshot = [*_features(), *(_register(b, epochs[b], fenced=False) for b in BROKERS),
                *(r for topic, replicas in (("ledger", [1, 2]), ("audit", [2, 3]), ("scratch", [3]))
                  for r in (("TOPIC_RECORD", 0, {"name": topic, "topicId": TOPIC_IDS[topic]}),
                            _partition(topic, replicas, replicas[0])))]

    expect(log.op(_change("ledger", isr=[1]), at=44), "ledger", "none", 1, 0, [1])
    shutdown = log.op(_broker_change(2, 11, inControlledShutdown=1), _change("audit", leader=3, isr=[3]), at=45)
    expect(shutdown + 1, "audit", "clean", 3, 1, [3])
    log.op(_broker_change(2, 11, fenced=1), at=46)
    log.op(_register(2, 40, fenced=True), at=52)
    log.op(_broker_change(2, 40, fenced=-1), at=53)
    expect(log.op(_change("audit", isr=[3, 2]), at=58), "audit", "none", 3, 1, [3, 2])
    kraft_1_end = log.next_offset  # broker 1 dies: its copy ends here
    offline = log.op(_broker_change(1, 10, fenced=1), _change("ledger", leader=-1), at=90)
    expect(offline + 1, "ledger", "offline", -1, 1, [1])
    offline_at = log.ts
    unclean = log.op(_change("ledger", leader=2, isr=[2], leaderRecoveryState=1), at=120)
    expect(unclean, "ledger", "unclean", 2, 2, [2], "RECOVERING")
    elected_at = log.ts
    expect(log.op(_change("ledger", leaderRecoveryState=0), at=140), "ledger", "none", 2, 2, [2])
    kraft_3_end = log.next_offset  # broker 3's disk was copied before it applied the deletion
    deleted = log.op(("REMOVE_TOPIC_RECORD", 0, {"topicId": TOPIC_IDS["scratch"]}), at=150)

    copies = {1: log.copy(end=kraft_1_end), 2: log.copy(start=snapshot_end), 3: log.copy(end=kraft_3_end)}
    snap = snapshot_bytes(snapshot, snapshot_ts)

    # data: ledger-0 on brokers 1 and 2 (the unclean election), audit-0 on 2 and 3, scratch-0 on 3
    rng = random.Random(20251126)
    ledger_1 = _data("ledger", [(0, 7000, 20, 0, 60)], rng)
    ledger_1.high_watermark = 90
    ledger_2 = g._truncated_copy(ledger_1, 12)
    more = _data("ledger", [(2, 7001, 14, 0, 125)], rng)
    ledger_2.set_leader_epoch(2)
    for b in more.fact_batches:
        seg = more.segments[0]
        ledger_2.append(bytearray(seg.data[b["position"]:b["position"] + b["size"]]), count=b["count"],
                        max_ts=b["max_timestamp"], producer_id=b["producer_id"], producer_epoch=0,
                        base_sequence=b["base_sequence"])
    audit = _data("audit", [(0, 7100, 10, 0, 30), (1, 7100, 10, 50, 48)], rng)
    scratch = _data("scratch", [(0, 7200, 4, 0, 20)], rng)
    holds = {1: [ledger_1], 2: [ledger_2, audit], 3: [audit, scratch]}

    brokers: dict = {}
    for b in BROKERS:
        root = out / f"kraft-{b}"
        root.mkdir(parents=True)
        parts = {}
        hws = []
        for p in holds[b]:
            files = p.write(root)  # disks copied from running (or crashed) brokers: active indexes preallocated
            hw = p.next_offset if p.high_watermark is None else p.high_watermark
            parts[p.name] = g.partition_facts(p, files, p.next_offset, hw)
            hws.append((p.topic, p.partition, hw))
        meta = copies[b]
        files = meta.write(root)
        parts[meta.name] = g.partition_facts(meta, files, meta.next_offset, meta.next_offset)
        (root / meta.name / f"{snapshot_end:020d}-{RAFT_EPOCH:010d}.checkpoint").write_bytes(snap)
        (root / "meta.properties").write_text(
            f"#\n#Thu Nov 20 15:00:00 UTC 2025\nnode.id={b}\ndirectory.id={DIRECTORIES[b]}\nversion=1\n"
            f"cluster.id={CLUSTER_ID}\n")
        g.write_checkpoint(root / "replication-offset-checkpoint", hws)
        g.write_checkpoint(root / "recovery-point-offset-checkpoint", hws)
        g.write_checkpoint(root / "log-start-offset-checkpoint", [(t, p, 0) for t, p, _ in hws])
        brokers[f"kraft-{b}"] = {"node_id": b, "clean_shutdown": False, "partitions": parts,
                                 "metadata_log": {"log_start_offset": meta.segments[0].base_offset,
                                                  "log_end_offset": meta.next_offset,
                                                  "snapshots": [f"{snapshot_end:020d}-{RAFT_EPOCH:010d}.checkpoint"]}}

    ref = copies[2]
    file, position = log.position_of(ref, unclean)
    lost = [60, 89]
    elections = [{"leader_epoch": 1, "leader": -1, "election": "offline", "elected_at": offline_at},
                 {"leader_epoch": 2, "leader": 2, "election": "unclean", "elected_at": elected_at}]
    findings = [
        {"kind": "unclean_leader_election", "broker": "kraft-2", "topic": "ledger", "partition": 0,
         "file": f"__cluster_metadata-0/{file}", "position": position, "offset": 60, "leader": 2, "leader_epoch": 2,
         "previous_leader": -1, "previous_isr": [1], "previous_elr": [], "metadata_offset": unclean,
         "elected_at": elected_at, "metadata_broker": "kraft-2", "lost_offsets": lost},
        {"kind": "replica_divergence", "broker": "kraft-1", "topic": "ledger", "partition": 0, "offset": 60,
         "lost_offsets": lost, "elections": elections},
        {"kind": "stray_partition", "broker": "kraft-3", "topic": "scratch", "partition": 0, "file": "scratch-0",
         "reason": "topic_deleted", "topic_id": TOPIC_IDS["scratch"], "metadata_topic_id": None},
    ]
    # the incidents: the unclean election replaced kraft-1's range 60-89 (its divergence); the stray dir stands alone
    keys = [g.finding_key(f["kind"], f["broker"], f["topic"], f["partition"], f.get("offset")) for f in findings]
    incidents = g.planted_incidents([(keys[0], None), (keys[1], keys[0]), (keys[2], None)])
    return {"cluster_id": CLUSTER_ID, "reference_broker": "kraft-2", "snapshot_end_offset": snapshot_end,
            "log_end_offset": log.next_offset, "topic_ids": TOPIC_IDS, "deleted_offset": deleted,
            "partition_history": history, "brokers": brokers, "findings": findings, "incidents": incidents,
            "silent": ["clean leader change of audit-0 (controlled shutdown of broker 2)",
                       "aborted metadata transaction creating topic ghost", "lagging copies kraft-1 and kraft-3",
                       "ledger-0 RECOVERING after its unclean election", "ledger-0 offline before the election"]}
