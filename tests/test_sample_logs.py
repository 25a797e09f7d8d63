"""sample_logs: reproducible, small, and read by an independent reader (kafka-python) exactly as EXPECTED.json
says; companion files (indexes, txn index, snapshots, checkpoints) re-derived here from kafka-python's view of
the logs by the broker's rules. These tests do not use kforensics' parsers."""

from __future__ import annotations

import hashlib
import json
import re
import struct
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import SAMPLE_LOGS
from crc32c import crc32c
from kafka.record.memory_records import MemoryRecords

EXPECTED = json.loads((SAMPLE_LOGS / "EXPECTED.json").read_text())
#: The incident sample (generate_incident.py, issue 49): its partitions are read and re-derived here like the others.
INCIDENT = json.loads((SAMPLE_LOGS / "EXPECTED_INCIDENT.json").read_text())
BROKERS = {**EXPECTED["brokers"], **EXPECTED["kraft"]["brokers"], **INCIDENT["brokers"]}
INDEX_INTERVAL_BYTES = 1024
PREALLOCATED_INDEX_BYTES = 64 * 1024
FIFTEEN_MINUTES_MS = 15 * 60 * 1000
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")


def _partitions() -> Iterator[tuple[str, str, dict]]:
    """Every partition dir: the live ones, then those pending deletion (`<topic>-<p>.<uuid hex>-delete`)."""
    for broker, info in BROKERS.items():
        for name, facts in [*info["partitions"].items(), *info.get("deleted_partitions", {}).items()]:
            yield broker, name, facts


PARTITIONS = list(_partitions())
IDS = [f"{b}/{n}" for b, n, _ in PARTITIONS]


def _planted(facts: dict, kind: str) -> list[dict]:
    return [a for a in facts["anomalies"] if a["kind"] == kind]


@dataclass
class Batch:
    """One batch (or legacy message / wrapper) as kafka-python sees it."""

    segment: str
    position: int
    size: int
    magic: int
    base_offset: int
    last_offset: int
    count: int
    max_timestamp: int
    producer_id: int = -1
    producer_epoch: int = -1
    base_sequence: int = -1
    last_sequence: int = -1
    is_transactional: bool = False
    control: str | None = None
    coordinator_epoch: int = -1
    leader_epoch: int = -1
    codec: str = "none"
    crc_ok: bool = True
    records: list | None = None


def _read_segment(path: Path) -> tuple[list[Batch], int]:
    """Every batch kafka-python finds in a .log, and the number of trailing bytes it could not frame."""
    data = path.read_bytes()
    reader = MemoryRecords(data)
    out, position = [], 0
    while reader.has_next():
        batch = reader.next_batch()
        size = batch.size_in_bytes if batch.magic == 2 else 12 + struct.unpack_from(">i", data, position + 8)[0]
        crc_ok = batch.validate_crc()
        try:
            records = list(batch)
        except Exception:  # the planted corrupt batch may not decompress
            records = None
        if batch.magic == 2:
            control = coordinator_epoch = None
            if batch.is_control_batch and records:
                control = {0: "ABORT", 1: "COMMIT"}.get(records[0].type, str(records[0].type))
                coordinator_epoch = struct.unpack_from(">i", records[0].value, 2)[0]
            b = Batch(path.name, position, size, 2, batch.base_offset, batch.last_offset, batch.records_count,
                      batch.max_timestamp, batch.producer_id, batch.producer_epoch, batch.base_sequence,
                      batch.last_sequence, batch.is_transactional, control,
                      -1 if coordinator_epoch is None else coordinator_epoch, batch.leader_epoch,
                      CODECS[batch.compression_type], crc_ok, records)
        else:
            wrapper_offset = struct.unpack_from(">q", data, position)[0]
            wrapper_ts = struct.unpack_from(">q", data, position + 18)[0] if batch.magic == 1 else -1
            n = len(records) if records is not None else 1
            b = Batch(path.name, position, size, batch.magic, wrapper_offset - n + 1, wrapper_offset, n, wrapper_ts,
                      codec=CODECS[batch.compression_type], crc_ok=crc_ok, records=records)
        out.append(b)
        position += size
    return out, len(data) - position


def _read_partition(broker: str, name: str, facts: dict) -> dict[str, tuple[list[Batch], int]]:
    pdir = SAMPLE_LOGS / broker / name
    return {f"{s['base_offset']:020d}": _read_segment(pdir / f"{s['base_offset']:020d}.log") for s in facts["segments"]}


def _all_batches(segments: dict[str, tuple[list[Batch], int]]) -> list[Batch]:
    return [b for batches, _tail in segments.values() for b in batches]


#: Samples written by generators of their own (each has its test), not by generate.py.
OTHER_SAMPLES = ("compacted-1", "generate_compacted.py", "EXPECTED-compacted.json",  # tests/test_compacted.py
                 "eos-1", "eos-2", "EXPECTED_EOS.json", "generate_eos.py",  # tests/test_eos.py
                 "groups-1", "EXPECTED_GROUPS.json", "generate_groups.py")  # tests/test_groups_sample.py
#: Written by generate_incident.py (regenerated below); its partitions are in PARTITIONS.
INCIDENT_SAMPLE = ("incident-1", "incident-2", "incident-3", "EXPECTED_INCIDENT.json", "generate_incident.py")


def _sha256_tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and p.parent.name != "__pycache__"
            and p.name not in ("generate.py", "generate_kraft.py", "README.md")
            and p.relative_to(root).parts[0] not in OTHER_SAMPLES + INCIDENT_SAMPLE}


# --- reproducibility and size ---------------------------------------------------------------------------------

def test_regenerating_gives_identical_bytes(tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(SAMPLE_LOGS / "generate.py"), str(tmp_path)], check=True, capture_output=True)
    committed, fresh = _sha256_tree(SAMPLE_LOGS), _sha256_tree(tmp_path)
    assert "EXPECTED.json" in fresh and len(fresh) > 100
    assert fresh == committed


def test_regenerating_the_incident_sample_gives_identical_bytes(tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(SAMPLE_LOGS / "generate_incident.py"), str(tmp_path)], check=True,
                   capture_output=True)

    def tree(root: Path) -> dict[str, str]:
        return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
                for name in INCIDENT_SAMPLE[:4] for p in sorted([root / name, *(root / name).rglob("*")])
                if p.is_file()}

    fresh = tree(tmp_path)
    assert len(fresh) > 90 and fresh == tree(SAMPLE_LOGS)


def test_total_size_is_small() -> None:
    total = sum(p.stat().st_size for p in SAMPLE_LOGS.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    assert total < 5_300_000


def test_every_log_file_is_described() -> None:
    on_disk = {str(p.relative_to(SAMPLE_LOGS)) for p in SAMPLE_LOGS.rglob("*.log")
               if p.relative_to(SAMPLE_LOGS).parts[0] not in OTHER_SAMPLES}
    described = {f"{b}/{n}/{s['base_offset']:020d}.log" for b, n, f in PARTITIONS for s in f["segments"]}
    assert on_disk == described


# --- the logs, read by kafka-python ---------------------------------------------------------------------------

@pytest.mark.parametrize(("broker", "name", "facts"), PARTITIONS, ids=IDS)
def test_kafka_python_reads_the_partition_as_expected(broker: str, name: str, facts: dict) -> None:
    segments = _read_partition(broker, name, facts)
    (tail,) = _planted(facts, "truncated_tail") or [None]
    corrupt = {(a["file"], a["position"]) for a in _planted(facts, "corrupt_crc")}
    for seg in facts["segments"]:
        stem = f"{seg['base_offset']:020d}"
        batches, unread = segments[stem]
        size = (SAMPLE_LOGS / broker / name / f"{stem}.log").stat().st_size
        assert size == seg["log_bytes"]
        if tail and tail["file"] == f"{stem}.log":  # kafka-python stops where the planted cut begins
            assert (sum(b.size for b in batches), unread) == (tail["position"], tail["bytes_present"])
        else:
            assert unread == 0
    batches = _all_batches(segments)
    expected = facts["batches"]
    assert [(b.segment, b.position, b.size) for b in batches] == [(e["segment"], e["position"], e["size"])
                                                                  for e in expected]
    for b, e in zip(batches, expected, strict=True):
        where = (name, b.segment, b.position)
        assert b.crc_ok is ((b.segment, b.position) not in corrupt), where
        assert (b.magic, b.codec, b.base_offset, b.last_offset, b.count, b.max_timestamp) == (
            e["magic"], e["codec"], e["base_offset"], e["last_offset"], e["count"], e["max_timestamp"]), where
        if b.magic == 2:
            assert (b.producer_id, b.producer_epoch, b.base_sequence, b.last_sequence, b.is_transactional,
                    b.control, b.leader_epoch) == (
                e["producer_id"], e["producer_epoch"], e["base_sequence"], e["last_sequence"],
                e["is_transactional"], e["control_type"], e["partition_leader_epoch"]), where
        if b.crc_ok:
            assert b.records is not None and len(b.records) == b.count, where
            assert [r.offset for r in b.records] == list(range(b.base_offset, b.last_offset + 1)), where
            assert max(r.timestamp if r.timestamp is not None else -1 for r in b.records) == b.max_timestamp, where
    assert len(batches) == facts["batch_count"]
    assert sum(b.count for b in batches) == facts["record_count"]
    assert batches[0].base_offset == facts["first_offset"]
    assert batches[-1].last_offset == facts["last_offset"] == facts["log_end_offset"] - 1
    assert sorted({b.codec for b in batches}) == facts["codecs"]
    assert sorted({b.magic for b in batches}) == facts["magics"]


def test_orders_holds_every_codec_headers_null_keys_and_a_raw_snappy_batch() -> None:
    facts = EXPECTED["brokers"]["broker-1"]["partitions"]["orders-0"]
    batches = _all_batches(_read_partition("broker-1", "orders-0", facts))
    assert facts["codecs"] == sorted(CODECS) and len(facts["segments"]) >= 3
    records = [r for b in batches for r in b.records]
    assert any(r.key is None for r in records) and any(r.headers for r in records)
    pdir = SAMPLE_LOGS / "broker-1" / "orders-0"
    framing = []
    for b in batches:
        if b.codec == "snappy":
            raw = (pdir / b.segment).read_bytes()[b.position + 61:b.position + 61 + 8]
            framing.append(raw == b"\x82SNAPPY\x00")
    assert True in framing and False in framing  # xerial-framed (kafka-python's default) and raw snappy


def test_legacy_holds_magic_0_and_1_wrappers_then_v2() -> None:
    facts = EXPECTED["brokers"]["broker-1"]["partitions"]["legacy-0"]
    batches = _all_batches(_read_partition("broker-1", "legacy-0", facts))
    kinds = {(b.magic, b.codec) for b in batches}
    assert {(m, c) for m in (0, 1) for c in ("none", "gzip", "snappy", "lz4")} <= kinds
    assert [b.magic for b in batches] == sorted(b.magic for b in batches)  # upgraded once, never back
    data = (SAMPLE_LOGS / "broker-1" / "legacy-0" / batches[0].segment).read_bytes()
    for b in batches:
        if b.magic == 1 and b.codec != "none":  # inner offsets relative 0..n-1 on disk, wrapper = last offset
            assert struct.unpack_from(">q", data, b.position)[0] == b.last_offset
            assert [r.offset for r in b.records] == list(range(b.base_offset, b.last_offset + 1))


# --- companion files, re-derived by the broker's rules --------------------------------------------------------

def _index_entries(path: Path, entry: str) -> tuple[list[tuple[int, ...]], bytes]:
    data = path.read_bytes()
    size = struct.calcsize(entry)
    entries = [struct.unpack_from(entry, data, i) for i in range(0, len(data) - len(data) % size, size)]
    return entries, data


def _derived_indexes(batches: list[Batch], base: int, rolled: bool,
                     restarted_at: int | None = None) -> tuple[list, list]:
    """OffsetIndex / TimeIndex as LogSegment.append (and onBecomeInactiveSegment / close) writes them;
    `restarted_at`: the log end at a clean shutdown (LogSegment.close appends the time index's final entry) after
    which the broker restarted (the bytes-since-last-entry counter starts again from 0)."""
    index, timeindex = [], []
    since, max_ts, max_ts_offset = 0, -1, -1
    for b in batches:
        if b.base_offset == restarted_at:
            if max_ts >= 0 and (not timeindex or max_ts > timeindex[-1][0]):
                timeindex.append((max_ts, max_ts_offset - base))
            since = 0
        if b.max_timestamp > max_ts:
            max_ts, max_ts_offset = b.max_timestamp, b.last_offset
        if since > INDEX_INTERVAL_BYTES:
            index.append((b.last_offset - base, b.position))
            if not timeindex or max_ts > timeindex[-1][0]:
                timeindex.append((max_ts, max_ts_offset - base))
            since = 0
        since += b.size
    if rolled and max_ts >= 0 and (not timeindex or max_ts > timeindex[-1][0]):
        timeindex.append((max_ts, max_ts_offset - base))
    return index, timeindex


@pytest.mark.parametrize(("broker", "name", "facts"), PARTITIONS, ids=IDS)
def test_indexes_follow_the_broker_rules(broker: str, name: str, facts: dict) -> None:
    segments = _read_partition(broker, name, facts)
    clean = BROKERS[broker]["clean_shutdown"]
    index_bytes = BROKERS[broker].get("segment_index_bytes", PREALLOCATED_INDEX_BYTES)
    planted_files = {a.get("file") for a in facts["anomalies"]}
    stems = list(segments)
    for i, stem in enumerate(stems):
        active = i == len(stems) - 1
        base = int(stem)
        pdir = SAMPLE_LOGS / broker / name
        index, raw_index = _index_entries(pdir / f"{stem}.index", ">ii")
        timeindex, raw_time = _index_entries(pdir / f"{stem}.timeindex", ">qi")
        if active and not clean:  # preallocated and zero-filled, as a broker that did not shut down cleanly left it
            assert len(raw_index) == index_bytes // 8 * 8
            assert len(raw_time) == index_bytes // 12 * 12
            assert raw_index.endswith(bytes(64)) and raw_time.endswith(bytes(64))
            index = [e for e in index if e != (0, 0)]  # entries are never at position 0: the tail is fill
            timeindex = [e for e in timeindex if e != (0, 0)]
        derived_index, derived_time = _derived_indexes(segments[stem][0], base, rolled=not active or clean,
                                                       restarted_at=facts.get("restarted_at"))
        if f"{stem}.index" in planted_files or f"{stem}.timeindex" in planted_files:
            continue  # checked against the planted anomalies below
        assert index == derived_index, (broker, name, stem)
        assert timeindex == derived_time, (broker, name, stem)


def test_planted_index_damage_is_where_expected() -> None:
    seen = 0
    for broker, name, facts in PARTITIONS:
        segments = _read_partition(broker, name, facts)
        for a in facts["anomalies"]:
            if a["kind"] not in ("index_bad_entry", "timeindex_bad_entry", "index_non_monotonic"):
                continue
            seen += 1
            path = SAMPLE_LOGS / broker / name / a["file"]
            stem = path.name.split(".")[0]
            batches = segments[stem][0]
            if a["kind"] == "timeindex_bad_entry":
                _ts, rel = struct.unpack_from(">qi", path.read_bytes(), a["position"])
                assert not any(b.base_offset <= int(stem) + rel <= b.last_offset for b in batches)
                continue
            rel, pos = struct.unpack_from(">ii", path.read_bytes(), a["position"])
            if a["kind"] == "index_non_monotonic":
                prev_rel, prev_pos = struct.unpack_from(">ii", path.read_bytes(), a["position"] - 8)
                assert rel <= prev_rel or pos <= prev_pos
            else:  # points at no batch start, or at a batch that does not hold the offset
                at = [b for b in batches if b.position == pos]
                assert not at or not at[0].base_offset <= int(stem) + rel
    assert seen >= 3


def _derived_txns(batches: list[Batch], segment_bases: list[int]) -> tuple[list[dict], dict[int, list]]:
    """Transactions and per-segment aborted-transaction entries (TransactionIndex, ProducerStateManager rules)."""
    ongoing: dict[int, int] = {}
    txns, txnindex = [], {base: [] for base in segment_bases}
    for b in batches:
        if b.magic != 2 or not b.is_transactional:
            continue
        if b.control is None:
            ongoing.setdefault(b.producer_id, b.base_offset)
            continue
        first = ongoing.pop(b.producer_id, None)
        txns.append({"producer_id": b.producer_id, "first_offset": first, "marker_offset": b.base_offset,
                     "outcome": b.control, "coordinator_epoch": b.coordinator_epoch})
        if b.control == "ABORT" and first is not None:
            lso = min(ongoing.values()) if ongoing else b.base_offset + 1
            seg = max(s for s in segment_bases if s <= b.base_offset)
            txnindex[seg].append((b.producer_id, first, b.base_offset, lso))
    for pid, first in ongoing.items():
        txns.append({"producer_id": pid, "first_offset": first, "marker_offset": None, "outcome": "OPEN",
                     "coordinator_epoch": None})
    return txns, txnindex


@pytest.mark.parametrize(("broker", "name", "facts"), PARTITIONS, ids=IDS)
def test_transactions_and_txnindex(broker: str, name: str, facts: dict) -> None:
    segments = _read_partition(broker, name, facts)
    bases = [int(s) for s in segments]
    txns, txnindex = _derived_txns(_all_batches(segments), bases)
    key = ("producer_id", "first_offset", "marker_offset", "outcome", "coordinator_epoch")
    assert sorted(tuple(-1 if t[k] is None else t[k] for k in key) for t in txns) == sorted(
        tuple(-1 if t[k] is None else t[k] for k in key) for t in facts["transactions"])
    on_disk = {}
    for base in bases:
        path = SAMPLE_LOGS / broker / name / f"{base:020d}.txnindex"
        raw = path.read_bytes() if path.exists() else b""
        assert len(raw) % 34 == 0
        on_disk[base] = [struct.unpack_from(">hqqqq", raw, i)[1:] for i in range(0, len(raw), 34)]
        assert all(struct.unpack_from(">h", raw, i)[0] == 0 for i in range(0, len(raw), 34))
    flat = [e for base in bases for e in on_disk[base]]
    assert flat == [(r["producer_id"], r["first_offset"], r["last_offset"], r["last_stable_offset"])
                    for r in facts["aborted_ranges"]]
    if not any(a["kind"].startswith("txnindex_") for a in facts["anomalies"]):
        assert on_disk == txnindex
        return
    derived = {e for entries in txnindex.values() for e in entries}
    for a in facts["anomalies"]:
        present = [e for e in flat if e[0] == a["producer_id"] and e[1] == a["first_offset"]]
        if a["kind"] == "txnindex_missing":
            assert not present and any(e[1] == a["first_offset"] for e in derived)
        elif a["kind"] == "txnindex_orphan":
            assert present and not any(e[0] == a["producer_id"] for e in derived)
        elif a["kind"] == "txnindex_mismatch":
            assert present and present[0] not in derived
            assert (a["producer_id"], a["first_offset"], a["last_offset"], a["last_stable_offset"]) in derived


def test_payments_hanging_transaction_and_lso() -> None:
    facts = EXPECTED["brokers"]["broker-1"]["partitions"]["payments-0"]
    batches = _all_batches(_read_partition("broker-1", "payments-0", facts))
    txns, _ = _derived_txns(batches, [s["base_offset"] for s in facts["segments"]])
    (hanging,) = [t for t in txns if t["outcome"] == "OPEN"]
    (planted,) = _planted(facts, "hanging_transaction")
    assert (hanging["producer_id"], hanging["first_offset"]) == (planted["producer_id"], planted["first_offset"])
    start = next(b for b in batches if b.base_offset == hanging["first_offset"])
    assert batches[-1].max_timestamp - start.max_timestamp > FIFTEEN_MINUTES_MS
    outcomes = {t["outcome"] for t in txns}
    assert outcomes == {"COMMIT", "ABORT", "OPEN"}
    assert any(t["first_offset"] is None for t in txns)  # an empty transaction: a marker with nothing open
    lsos = [r["last_stable_offset"] for r in facts["aborted_ranges"]]
    assert any(lso != r["last_offset"] + 1 for lso, r in zip(lsos, facts["aborted_ranges"], strict=True))


def _replay_producers(batches: list[Batch], below: int) -> dict[int, tuple]:
    """Producer state as ProducerStateManager holds it below an offset: the snapshot's entries."""
    state: dict[int, list] = {}
    ongoing: dict[int, int] = {}
    for b in batches:
        if b.magic != 2 or b.producer_id < 0 or b.base_offset >= below or int(b.segment[:20]) >= below:
            continue
        s = state.setdefault(b.producer_id, [b.producer_epoch, -1, -1, 0, b.max_timestamp, -1])
        s[0] = b.producer_epoch
        s[4] = b.max_timestamp
        if b.control is None:
            s[1], s[2], s[3] = b.last_sequence, b.last_offset, b.last_offset - b.base_offset
            if b.is_transactional:
                ongoing.setdefault(b.producer_id, b.base_offset)
        else:
            s[5] = b.coordinator_epoch
            ongoing.pop(b.producer_id, None)
    return {pid: (*s[:5], s[5], ongoing.get(pid, -1)) for pid, s in state.items()}


@pytest.mark.parametrize(("broker", "name", "facts"), PARTITIONS, ids=IDS)
def test_producer_snapshots(broker: str, name: str, facts: dict) -> None:
    pdir = SAMPLE_LOGS / broker / name
    batches = _all_batches(_read_partition(broker, name, facts))
    bases = {s["base_offset"] for s in facts["segments"][1:]}
    lying = {a["file"] for a in _planted(facts, "snapshot_mismatch")}
    snapshots = sorted(pdir.glob("*.snapshot"))
    assert snapshots or not bases
    for path in snapshots:
        offset = int(path.stem)
        # at a roll (named for the next segment), at a clean shutdown's log end (kept after the restart as the
        # latest stray snapshot), or at the log end
        assert offset in bases or offset == facts["log_end_offset"] or offset in facts.get("snapshot_offsets", ())
        raw = path.read_bytes()
        version, crc, count = struct.unpack_from(">hIi", raw, 0)
        assert (version, crc, len(raw)) == (1, crc32c(raw[6:]), 10 + 46 * count)
        entries = {e[0]: e[1:] for e in (struct.unpack_from(">qhiqiqiq", raw, 10 + 46 * i) for i in range(count))}
        derived = _replay_producers(batches, offset)
        if path.name in lying:
            assert entries != derived
        else:
            assert entries == derived, path


@pytest.mark.parametrize(("broker", "name", "facts"), PARTITIONS, ids=IDS)
def test_leader_epoch_checkpoint_and_partition_metadata(broker: str, name: str, facts: dict) -> None:
    pdir = SAMPLE_LOGS / broker / name
    lines = (pdir / "leader-epoch-checkpoint").read_text().splitlines()
    assert lines[0] == "0" and int(lines[1]) == len(lines) - 2
    on_disk = [tuple(map(int, line.split())) for line in lines[2:]]
    assert [list(e) for e in on_disk] == facts["leader_epochs"]
    derived: list[tuple[int, int]] = []
    for b in _all_batches(_read_partition(broker, name, facts)):
        if b.magic == 2 and (not derived or b.leader_epoch > derived[-1][0]):
            derived.append((b.leader_epoch, b.base_offset))
    if _planted(facts, "leader_epoch_mismatch"):
        assert on_disk != derived
    else:
        assert on_disk == (derived or [(0, 0)])
    meta = (pdir / "partition.metadata").read_text().splitlines()
    assert meta[0] == "version: 0" and meta[1].startswith("topic_id: ") and len(meta[1]) == len("topic_id: ") + 22


@pytest.mark.parametrize("broker", [*sorted(EXPECTED["brokers"]), *sorted(INCIDENT["brokers"])])
def test_broker_checkpoints_and_meta_properties(broker: str) -> None:
    root = SAMPLE_LOGS / broker
    info = BROKERS[broker]
    # the KRaft metadata log is the raft layer's, in none of the ReplicaManager's checkpoints
    parts = {n: f for n, f in info["partitions"].items() if n != "__cluster_metadata-0"}

    def checkpoint(name: str) -> dict[str, int]:
        lines = (root / name).read_text().splitlines()
        assert lines[0] == "0" and int(lines[1]) == len(lines) - 2
        return {f"{t}-{p}": int(o) for t, p, o in (line.split() for line in lines[2:])}

    assert checkpoint("replication-offset-checkpoint") == {n: f["high_watermark"] for n, f in parts.items()}
    assert checkpoint("log-start-offset-checkpoint") == {n: f["log_start_offset"] for n, f in parts.items()}
    recovery = checkpoint("recovery-point-offset-checkpoint")
    assert set(recovery) == set(parts)
    assert all(recovery[n] <= f["log_end_offset"] for n, f in parts.items())
    assert set(checkpoint("cleaner-offset-checkpoint")) <= set(parts)
    props = dict(line.split("=", 1) for line in (root / "meta.properties").read_text().splitlines()
                 if line and not line.startswith("#"))
    assert props["version"] in ("0", "1") and props["cluster.id"]
    assert (root / ".kafka_cleanshutdown").exists() is info["clean_shutdown"]


def test_follower_is_a_byte_identical_prefix_of_the_leader() -> None:
    def log_bytes(broker: str, name: str, f: dict) -> bytes:
        return b"".join((SAMPLE_LOGS / broker / name / f"{s['base_offset']:020d}.log").read_bytes()
                        for s in f["segments"])

    for name in ("orders-0", "payments-0"):
        facts = EXPECTED["brokers"]["broker-2"]["partitions"][name]
        leader = EXPECTED["brokers"]["broker-1"]["partitions"][name]
        follower, own = log_bytes("broker-2", name, facts), log_bytes("broker-1", name, leader)
        assert 0 < len(follower) < len(own) and own.startswith(follower)
        assert facts["log_end_offset"] < leader["log_end_offset"]
        assert facts["high_watermark"] <= leader["high_watermark"]


def test_inventory_replicas_share_a_prefix_then_diverge() -> None:
    """The unclean election: the same bytes up to offset 60, then each replica its own history."""
    old = EXPECTED["brokers"]["broker-1"]["partitions"]["inventory-0"]
    new = EXPECTED["brokers"]["broker-2"]["partitions"]["inventory-0"]
    cut = next(a for a in old["anomalies"] if a["kind"] == "replica_divergence")
    a = (SAMPLE_LOGS / "broker-1" / "inventory-0" / "00000000000000000000.log").read_bytes()
    b = (SAMPLE_LOGS / "broker-2" / "inventory-0" / "00000000000000000000.log").read_bytes()
    common = cut["position"]
    assert a[:common] == b[:common] and a[common:common + 61] != b[common:common + 61]
    assert [b_["base_offset"] for b_ in new["batches"]][:12] == [b_["base_offset"] for b_ in old["batches"]][:12]
    assert new["leader_epochs"] == [[0, 0], [1, cut["offset"]]] and old["leader_epochs"] == [[0, 0]]
    assert old["high_watermark"] - 1 == cut["lost_offsets"][1] and old["log_end_offset"] < new["log_end_offset"]


def test_a_deleted_partition_dir_is_pending_on_broker_2() -> None:
    deleted = EXPECTED["brokers"]["broker-2"]["deleted_partitions"]
    assert len(deleted) == 1
    (name, facts), = deleted.items()
    assert re.fullmatch(r"(.+)-(\d+)\.[0-9a-f]{32}-delete", name) and (SAMPLE_LOGS / "broker-2" / name).is_dir()
    topic = name.split(".")[0].rsplit("-", 1)[0]
    for checkpoint in ("replication-offset-checkpoint", "recovery-point-offset-checkpoint",
                       "log-start-offset-checkpoint"):
        lines = (SAMPLE_LOGS / "broker-2" / checkpoint).read_text().splitlines()[2:]
        assert topic not in {line.split()[0] for line in lines}
    batches = _all_batches(_read_partition("broker-2", name, facts))
    assert sum(b.count for b in batches) == facts["record_count"] > 0


# --- the planted anomalies, checked on the bytes ---------------------------------------------------------------

def test_every_anomaly_names_kind_file_position_offset_and_producer() -> None:
    kinds = set()
    for broker, name, facts in PARTITIONS:
        for a in facts["anomalies"]:
            assert {"kind", "file", "position", "offset", "producer_id", "producer_epoch"} <= set(a), a
            assert a["file"] is None or (SAMPLE_LOGS / broker / name / a["file"]).is_file(), a
            kinds.add(a["kind"])
    assert {"sequence_gap", "duplicate_sequence", "zombie_epoch", "hanging_transaction", "corrupt_crc",
            "truncated_tail", "txnindex_missing", "txnindex_orphan", "snapshot_mismatch", "leader_epoch_mismatch",
            "index_bad_entry", "content_duplicate"} <= kinds
    sizes = {a["size_class"] for _b, _n, f in PARTITIONS for a in f["anomalies"] if a["kind"] == "sequence_gap"}
    assert sizes == {"small", "large"}


def test_planted_damage_is_at_the_planted_bytes() -> None:
    facts = EXPECTED["brokers"]["broker-1"]["partitions"]["damaged-0"]
    (bad,) = _planted(facts, "corrupt_crc")
    raw = (SAMPLE_LOGS / "broker-1" / "damaged-0" / bad["file"]).read_bytes()
    size = struct.unpack_from(">i", raw, bad["position"] + 8)[0] + 12
    batch = raw[bad["position"]:bad["position"] + size]
    assert struct.unpack_from(">q", batch, 0)[0] == bad["offset"]
    assert struct.unpack_from(">I", batch, 17)[0] == bad["stored_crc"]
    assert crc32c(batch[21:]) == bad["computed_crc"] != bad["stored_crc"]
    (tail,) = _planted(facts, "truncated_tail")
    path = SAMPLE_LOGS / "broker-1" / "damaged-0" / tail["file"]
    assert path.stat().st_size == tail["position"] + tail["bytes_present"]
    data = path.read_bytes()
    assert struct.unpack_from(">i", data, tail["position"] + 8)[0] + 12 == tail["declared_size"] > tail["bytes_present"]
    assert struct.unpack_from(">q", data, tail["position"])[0] == tail["offset"]


def test_planted_sequence_anomalies_are_in_the_batches() -> None:
    checked = 0
    for broker, name, facts in PARTITIONS:
        batches = [b for b in _all_batches(_read_partition(broker, name, facts)) if b.magic == 2 and b.control is None]
        at = {b.base_offset: b for b in batches}
        for a in facts["anomalies"]:
            kind = a["kind"]
            if kind not in ("sequence_gap", "duplicate_sequence", "zombie_epoch"):
                continue
            b = at[a["offset"]]
            assert (b.producer_id, b.producer_epoch, b.position) == (a["producer_id"], a["producer_epoch"],
                                                                     a["position"])
            before = [p for p in batches if (p.producer_id, p.producer_epoch) == (b.producer_id, b.producer_epoch)
                      and p.base_offset < b.base_offset]
            if kind == "sequence_gap":
                assert before[-1].last_sequence + 1 == a["expected_sequence"]
                assert b.base_sequence == a["found_sequence"] == a["expected_sequence"] + a["gap_size"]
            elif kind == "duplicate_sequence":
                assert [p.base_offset for p in before if p.base_sequence == b.base_sequence] == a["offsets"][:1]
                assert [b.base_sequence, b.last_sequence] == a["sequence_range"]
            else:
                newer = at[a["newer_epoch_first_offset"]]
                assert newer.producer_id == b.producer_id and newer.producer_epoch == a["newer_epoch"] > b.producer_epoch
                assert newer.base_offset < b.base_offset
            checked += 1
    assert checked >= 4


def test_content_duplicate_is_a_resend_by_a_new_producer_id() -> None:
    facts = EXPECTED["brokers"]["broker-1"]["partitions"]["resend-0"]
    (a,) = _planted(facts, "content_duplicate")
    batches = _all_batches(_read_partition("broker-1", "resend-0", facts))
    first, second = a["producer_ids"]
    old = [(r.key, r.value) for b in batches if b.producer_id == first for r in b.records]
    resent = next(b for b in batches if b.base_offset == a["offset"])
    assert resent.producer_id == second and resent.base_sequence == 0
    assert [(r.key, r.value) for r in resent.records] == old[-a["matches"]:]


def test_legal_cases_are_present_in_the_bytes() -> None:
    facts = EXPECTED["brokers"]["broker-1"]["partitions"]["orders-0"]
    batches = _all_batches(_read_partition("broker-1", "orders-0", facts))
    legal = {c["kind"]: c for c in facts["legal"]}
    bump = legal["epoch_bump_sequence_restart"]
    b = next(b for b in batches if b.base_offset == bump["offset"])
    assert (b.producer_id, b.producer_epoch, b.base_sequence) == (bump["producer_id"], bump["producer_epoch"], 0)
    assert any(x.producer_id == b.producer_id and x.producer_epoch == b.producer_epoch - 1 for x in batches)
    wrap = legal["sequence_wraparound"]
    w = next(b for b in batches if b.base_offset == wrap["offset"])
    assert w.base_sequence == wrap["base_sequence"] and w.last_sequence < w.base_sequence
    change = legal["clean_leader_change"]
    assert {b.leader_epoch for b in batches if b.base_offset < change["offset"]} == {change["new_leader_epoch"] - 1}
    assert {b.leader_epoch for b in batches if b.base_offset >= change["offset"]} == {change["new_leader_epoch"]}
    retained = EXPECTED["brokers"]["broker-1"]["partitions"]["retained-0"]
    assert retained["log_start_offset"] == retained["segments"][0]["base_offset"] > 0
    assert retained["producers"][0]["first_sequence"] > 0
    batches = _all_batches(_read_partition("broker-1", "retained-0", retained))
    assert batches[0].base_sequence == retained["producers"][0]["first_sequence"]
    (wrap,) = [c for c in retained["legal"] if c["kind"] == "sequence_wraparound"]
    i = next(i for i, b in enumerate(batches) if b.base_offset == wrap["offset"])
    assert (batches[i - 1].last_sequence, batches[i].base_sequence) == (2**31 - 1, 0)  # between two batches


# --- internal topics ---------------------------------------------------------------------------------------------

def _kstring(buf: bytes, pos: int) -> tuple[str, int]:
    (n,) = struct.unpack_from(">h", buf, pos)
    return buf[pos + 2:pos + 2 + n].decode(), pos + 2 + n


def test_transaction_state_follows_the_payments_markers() -> None:
    parts = EXPECTED["brokers"]["broker-1"]["partitions"]
    state = _all_batches(_read_partition("broker-1", "__transaction_state-0", parts["__transaction_state-0"]))
    payments = _all_batches(_read_partition("broker-1", "payments-0", parts["payments-0"]))
    markers = [(b.producer_id, b.control) for b in payments if b.control in ("COMMIT", "ABORT")]
    by_producer: dict[int, list[int]] = {}
    versions, ids = set(), {}
    for record in (r for b in state for r in b.records):
        key_version = struct.unpack_from(">h", record.key, 0)[0]
        tid, _ = _kstring(record.key, 2)
        value_version, pid, epoch, _timeout, status = struct.unpack_from(">hqhib", record.value, 0)
        assert key_version == 0 and epoch == 0
        versions.add(value_version)
        assert ids.setdefault(pid, tid) == tid
        by_producer.setdefault(pid, []).append(status)
    assert versions == {0, 1}
    for pid in {p for p, _ in markers}:
        outcomes = [o for p, o in markers if p == pid]
        expected = [s for o in outcomes for s in ((1, 2, 4) if o == "COMMIT" else (1, 3, 5))]
        assert by_producer[pid] == expected  # Ongoing -> PrepareCommit|PrepareAbort -> CompleteCommit|CompleteAbort


def test_consumer_offsets_commit_within_orders_and_hold_a_tombstone() -> None:
    parts = EXPECTED["brokers"]["broker-1"]["partitions"]
    batches = _all_batches(_read_partition("broker-1", "__consumer_offsets-0", parts["__consumer_offsets-0"]))
    records = [r for b in batches for r in b.records]
    kinds, commits = set(), []
    for r in records:
        version = struct.unpack_from(">h", r.key, 0)[0]
        group, pos = _kstring(r.key, 2)
        if version == 2:
            kinds.add(("group_metadata", struct.unpack_from(">h", r.value, 0)[0]))
            continue
        topic, pos = _kstring(r.key, pos)
        if r.value is None:
            kinds.add(("tombstone", group))
            continue
        value_version, offset = struct.unpack_from(">hq", r.value, 0)
        kinds.add(("commit", value_version))
        commits.append((group, topic, offset))
    assert {("group_metadata", 3), ("commit", 1), ("commit", 3)} <= kinds
    assert any(k[0] == "tombstone" for k in kinds)
    orders_end = parts["orders-0"]["log_end_offset"]
    assert all(topic == "orders" and 0 <= offset <= orders_end for _g, topic, offset in commits)
