"""Indexes, txn index, producer snapshots, text files, the directory model and internal-topic decoders,
on real broker files, on sample_logs (against EXPECTED.json) and on synthetic damage."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from conftest import REALDATA, SAMPLE_LOGS, realdata_files
from crc32c import crc32c

from kforensics.parsers import checkpoints
from kforensics.parsers.findings import Finding
from kforensics.parsers.index_check import BatchBounds, check_offset_index, check_time_index
from kforensics.parsers.internal_topics import (
    decode_cluster_metadata,
    decode_consumer_offsets,
    decode_transaction_state,
    format_transaction_state,
)
from kforensics.parsers.log_dir import detect_file_type, parse_partition_dir_name, scan_log_dir
from kforensics.parsers.offset_index import IndexEntry, iter_offset_index
from kforensics.parsers.producer_snapshot import read_producer_snapshot
from kforensics.parsers.record_batch import open_log
from kforensics.parsers.time_index import TimeIndexEntry, iter_time_index
from kforensics.parsers.txn_index import AbortedTxn, iter_txn_index

EXPECTED = json.loads((SAMPLE_LOGS / "EXPECTED.json").read_text())
needs_realdata = pytest.mark.skipif(not REALDATA.is_dir(), reason="../shared/realdata is absent")


def _split(items) -> tuple[list, list[Finding]]:
    items = list(items)
    return [i for i in items if not isinstance(i, Finding)], [i for i in items if isinstance(i, Finding)]


def _raw_batch_starts(log: Path) -> dict[int, tuple[int, int]]:
    """position -> (base offset, last offset), by a header walk written here, independent of our parser."""
    data = log.read_bytes()
    out, pos = {}, 0
    while pos + 61 <= len(data):
        base, length = struct.unpack_from(">qi", data, pos)
        if length <= 0 or pos + 12 + length > len(data):
            break
        last = base + struct.unpack_from(">i", data, pos + 23)[0] if data[pos + 16] == 2 else base
        out[pos] = (base, last)
        pos += 12 + length
    return out


@needs_realdata
@pytest.mark.parametrize("path", realdata_files("*.index"), ids=lambda p: str(p).split("realdata/")[-1])
def test_real_offset_indexes_point_at_batch_starts(path: Path) -> None:
    entries, findings = _split(iter_offset_index(path))
    assert findings == [] and entries
    log = path.with_suffix(".log")
    if log.exists():
        starts = _raw_batch_starts(log)
        for e in entries:
            assert e.position in starts and starts[e.position][0] <= e.offset


@needs_realdata
@pytest.mark.parametrize("path", realdata_files("*.timeindex"), ids=lambda p: str(p).split("realdata/")[-1])
def test_real_time_indexes_are_sound(path: Path) -> None:
    entries, findings = _split(iter_time_index(path))
    assert findings == [] and entries
    assert all(a.timestamp < b.timestamp for a, b in zip(entries, entries[1:], strict=False))
    log = path.with_suffix(".log")
    if log.exists():
        with open_log(log) as segment:
            bounds = [BatchBounds(b.position, b.base_offset, b.last_offset, b.max_timestamp)
                      for b in segment.batches() if not isinstance(b, Finding)]
        assert check_time_index(str(path), entries, bounds) == []


@needs_realdata
def test_provenance_facts_of_a_large_real_index() -> None:
    path = REALDATA / "ronem123-rupia-kraft/kafka-logs/__cluster_metadata-0/00000000000000839130.index"
    entries, _ = _split(iter_offset_index(path))
    # PROVENANCE.md: 15543 entries; first (relative 57, position 4104); last (886259, 63794925).
    assert len(entries) == 15543
    assert entries[0] == IndexEntry(839130 + 57, 4104) and entries[-1] == IndexEntry(886259 + 839130, 63794925)


def test_sample_indexes_match_the_log_and_the_generator() -> None:
    for broker, info in EXPECTED["brokers"].items():
        for name, facts in info["partitions"].items():
            planted = {(a.get("file"), a["kind"]) for a in facts["anomalies"]}
            for seg in facts["segments"]:
                base = seg["base_offset"]
                stem = SAMPLE_LOGS / broker / name / f"{base:020d}"
                with open_log(stem.with_suffix(".log")) as log:
                    bounds = [BatchBounds(b.position, b.base_offset, b.last_offset, b.max_timestamp)
                              for b in log.batches() if not isinstance(b, Finding)]
                entries, findings = _split(iter_offset_index(stem.with_suffix(".index")))
                assert {f.kind for f in findings} == ({"index_non_monotonic"} if (
                    stem.name + ".index", "index_non_monotonic") in planted else set())
                kinds = {f.kind for f in check_offset_index("x", entries, bounds)}
                assert kinds == ({"index_bad_entry"} if (stem.name + ".index", "index_bad_entry") in planted else set())
                tentries, findings = _split(iter_time_index(stem.with_suffix(".timeindex")))
                assert findings == []
                kinds = {f.kind for f in check_time_index("x", tentries, bounds)}
                assert kinds == ({"timeindex_bad_entry"} if (stem.name + ".timeindex", "timeindex_bad_entry")
                                 in planted else set())


def test_preallocated_zero_tail_is_not_an_entry_nor_a_finding(tmp_path: Path) -> None:
    path = tmp_path / "00000000000000000100.index"
    path.write_bytes(struct.pack(">iiii", 5, 0, 9, 4200) + bytes(8 * 1000))
    assert list(iter_offset_index(path)) == [IndexEntry(105, 0), IndexEntry(109, 4200)]
    empty = tmp_path / "00000000000000000200.index"
    empty.write_bytes(bytes(8 * 1000))
    assert list(iter_offset_index(empty)) == []
    one = tmp_path / "00000000000000000300.index"
    one.write_bytes(bytes(8))  # a trimmed index whose one entry is (base offset, position 0)
    assert list(iter_offset_index(one)) == [IndexEntry(300, 0)]
    tpath = tmp_path / "00000000000000000100.timeindex"
    tpath.write_bytes(struct.pack(">qi", 1000, 3) + bytes(12 * 500))
    assert list(iter_time_index(tpath)) == [TimeIndexEntry(1000, 103)]


def test_partial_and_non_monotonic_index_entries(tmp_path: Path) -> None:
    path = tmp_path / "00000000000000000000.index"
    path.write_bytes(struct.pack(">iiii", 9, 500, 4, 900) + b"\x01\x02\x03")
    entries, findings = _split(iter_offset_index(path))
    assert [f.kind for f in findings] == ["index_non_monotonic", "index_partial_entry"]
    assert (findings[0].position, findings[1].position) == (8, 16)
    tpath = tmp_path / "00000000000000000000.timeindex"
    tpath.write_bytes(struct.pack(">qiqi", 2000, 1, 1000, 2))
    _, findings = _split(iter_time_index(tpath))
    assert [(f.kind, f.position) for f in findings] == [("timeindex_non_monotonic", 12)]


def test_index_checks_name_kafka_dump_log_mismatches() -> None:
    bounds = [BatchBounds(0, 0, 4, 100), BatchBounds(300, 5, 9, 200), BatchBounds(600, 10, 14, 300)]
    findings = check_offset_index("i", [IndexEntry(9, 300), IndexEntry(14, 650), IndexEntry(12, 600),
                                        IndexEntry(4, 600)], bounds)
    assert [(f.kind, f.position) for f in findings] == [("index_bad_entry", 8), ("index_offset_mismatch", 16),
                                                        ("index_bad_entry", 24)]
    findings = check_time_index("t", [TimeIndexEntry(200, 7), TimeIndexEntry(250, 12), TimeIndexEntry(400, 99)],
                                bounds)
    assert [(f.kind, f.position) for f in findings] == [("timeindex_bad_entry", 12), ("timeindex_bad_entry", 24)]


def test_txn_index_of_sample_payments() -> None:
    path = SAMPLE_LOGS / "broker-1" / "payments-0" / "00000000000000000000.txnindex"
    entries, findings = _split(iter_txn_index(path))
    expected = EXPECTED["brokers"]["broker-1"]["partitions"]["payments-0"]["aborted_ranges"]
    assert findings == []
    assert entries == [AbortedTxn(0, r["producer_id"], r["first_offset"], r["last_offset"], r["last_stable_offset"])
                       for r in expected]


def test_bad_txn_index_entries(tmp_path: Path) -> None:
    path = tmp_path / "00000000000000000000.txnindex"
    path.write_bytes(struct.pack(">hqqqq", 0, 7, 50, 40, 41) + struct.pack(">hqqqq", 3, 7, 1, 2, 3) + b"\0" * 5)
    _, findings = _split(iter_txn_index(path))
    assert [(f.kind, f.position) for f in findings] == [("txnindex_bad_entry", 0), ("txnindex_bad_entry", 34),
                                                        ("index_partial_entry", 68)]


@needs_realdata
@pytest.mark.parametrize("path", realdata_files("*.snapshot"), ids=lambda p: str(p).split("realdata/")[-1])
def test_real_producer_snapshots(path: Path) -> None:
    snapshot, findings = read_producer_snapshot(path)
    assert findings == [] and snapshot.crc_valid and snapshot.version == 1


def test_sample_snapshot_matches_the_generator_state() -> None:
    snapshot, findings = read_producer_snapshot(SAMPLE_LOGS / "broker-1" / "payments-0" / "00000000000000000106.snapshot")
    assert findings == [] and snapshot.offset == 106
    by_pid = {e.producer_id: e for e in snapshot.entries}
    hanging = next(t for t in EXPECTED["brokers"]["broker-1"]["partitions"]["payments-0"]["transactions"]
                   if t["outcome"] == "OPEN")
    assert by_pid[2001].current_txn_first_offset == hanging["first_offset"]
    assert by_pid[2000].current_txn_first_offset == -1 and by_pid[2000].coordinator_epoch == 5


def test_damaged_snapshots(tmp_path: Path) -> None:
    entry = struct.pack(">qhiqiqiq", 1, 0, 9, 100, 4, 1000, -1, -1)
    body = struct.pack(">i", 1) + entry
    good = struct.pack(">hI", 1, crc32c(body)) + body
    cases = {"crc": good[:2] + b"\0\0\0\0" + good[6:], "short": good[:30], "version": b"\x00\x02" + good[2:],
             "tiny": good[:4]}
    kinds = {}
    for name, data in cases.items():
        path = tmp_path / f"{name}.snapshot"
        path.write_bytes(data)
        _, findings = read_producer_snapshot(path)
        kinds[name] = [f.kind for f in findings]
    assert kinds == {"crc": ["snapshot_corrupt_crc"], "short": ["snapshot_corrupt_crc", "snapshot_truncated"],
                     "version": ["snapshot_unsupported_version"], "tiny": ["snapshot_truncated"]}


@needs_realdata
def test_every_real_text_file_reads_without_finding() -> None:
    readers = {"leader_epoch_checkpoint": checkpoints.read_leader_epoch_checkpoint,
               "offset_checkpoint": checkpoints.read_offset_checkpoint,
               "partition_metadata": checkpoints.read_partition_metadata,
               "meta_properties": checkpoints.read_meta_properties, "quorum_state": checkpoints.read_quorum_state,
               "clean_shutdown": checkpoints.read_clean_shutdown}
    seen = {}
    for path in REALDATA.rglob("*"):
        kind = detect_file_type(path) if path.is_file() else None
        if kind in readers:
            _, findings = readers[kind](path)
            assert findings == [], path
            seen[kind] = seen.get(kind, 0) + 1
    assert set(seen) == set(readers)


def test_malformed_text_files(tmp_path: Path) -> None:
    path = tmp_path / "leader-epoch-checkpoint"
    path.write_text("0\n4\n0 0\n2 10\n1 20\n")
    entries, findings = checkpoints.read_leader_epoch_checkpoint(path)
    assert [f.details["line"] for f in findings] == [2, 5]  # 4 declared, 3 held; epoch going back
    path.write_text("1\n0\n")
    assert checkpoints.read_leader_epoch_checkpoint(path)[1][0].kind == "checkpoint_malformed"
    path = tmp_path / "replication-offset-checkpoint"
    path.write_text("0\n2\norders 0 100\norders x 5\n")
    entries, findings = checkpoints.read_offset_checkpoint(path)
    assert entries == [checkpoints.OffsetCheckpointEntry("orders", 0, 100)]
    assert findings[0].position == len("0\n2\norders 0 100\n")
    (tmp_path / "quorum-state").write_text("{not json")
    assert checkpoints.read_quorum_state(tmp_path / "quorum-state")[1][0].kind == "checkpoint_malformed"


def test_directory_model_of_sample_broker() -> None:
    log_dir, findings = scan_log_dir(SAMPLE_LOGS / "broker-1")
    assert findings == []
    names = {p.name: p for p in log_dir.partitions}
    assert set(names) == set(EXPECTED["brokers"]["broker-1"]["partitions"])
    orders = names["orders-0"]
    assert [s.base_offset for s in orders.segments] == [s["base_offset"] for s in
                                                         EXPECTED["brokers"]["broker-1"]["partitions"]["orders-0"]["segments"]]
    assert all(s.log and s.index and s.timeindex for s in orders.segments)
    assert names["payments-0"].segments[0].txnindex is not None
    assert set(log_dir.checkpoints) == {"replication-offset-checkpoint", "recovery-point-offset-checkpoint",
                                        "log-start-offset-checkpoint", "cleaner-offset-checkpoint"}


def test_partition_dir_names() -> None:
    assert parse_partition_dir_name("my-topic.v2-12") == ("my-topic.v2", 12, "live")
    assert parse_partition_dir_name("orders-3.0123456789abcdef0123456789abcdef-delete") == ("orders", 3, "delete")
    assert parse_partition_dir_name("orders-3.0123456789abcdef0123456789abcdef-future") == ("orders", 3, "future")
    assert parse_partition_dir_name("lost+found") is None
    assert detect_file_type("00000000000000000042-0000000003.checkpoint") == "metadata_snapshot"
    assert detect_file_type("00000000000000000042.log.deleted") == "log"


def test_transaction_state_of_sample_matches_markers() -> None:
    """The coordinator records name the producer ids whose markers payments-0 holds."""
    with open_log(SAMPLE_LOGS / "broker-1" / "__transaction_state-0" / "00000000000000000000.log") as log:
        decoded = [decode_transaction_state(r.key, r.value) for b in log.batches() for r in log.records(b)]
    assert all("error" not in d for d in decoded)
    assert {d["value"]["version"] for d in decoded} == {0, 1}
    assert {d["key"]["transactional_id"]: d["value"]["producer_id"] for d in decoded} == {
        "payments-app-0": 2000, "payments-app-1": 2001}
    completes = [d["value"]["state"] for d in decoded if d["value"]["state"].startswith("Complete")]
    outcomes = [t["outcome"] for t in EXPECTED["brokers"]["broker-1"]["partitions"]["payments-0"]["transactions"]
                if t["outcome"] != "OPEN"]
    assert completes == ["Complete" + o.capitalize() for o in outcomes]


def test_consumer_offsets_of_sample() -> None:
    with open_log(SAMPLE_LOGS / "broker-1" / "__consumer_offsets-0" / "00000000000000000000.log") as log:
        decoded = [decode_consumer_offsets(r.key, r.value) for b in log.batches() for r in log.records(b)]
    commits = [d for d in decoded if d["key"]["type"] == "offset_commit" and d["key"]["group"] == "orders-service"]
    assert [c["value"]["offset"] for c in commits] == [120, 250, 370]
    assert decoded[-1]["value"] is None and decoded[-1]["key"]["group"] == "old-group"
    assert decoded[0]["value"]["members"][0]["clientId"] == "consumer-1"


@needs_realdata
def test_real_internal_topics_decode_and_agree_with_their_disks() -> None:
    base = REALDATA / "ksqldb-patient-admissions-cp" / "kafka-data"
    with open_log(base / "__transaction_state-44" / "00000000000000000000.log") as log:
        txn = [decode_transaction_state(r.key, r.value) for b in log.batches() for r in log.records(b)]
    producer_ids = {d["value"]["producer_id"] for d in txn}
    with open_log(base / "_confluent-ksql-default__command_topic-0" / "00000000000000000000.log") as log:
        data_pids = {b.producer_id for b in log.batches() if b.is_transactional}
    assert data_pids and data_pids <= producer_ids
    topics = set()
    for path in (base / "__cluster_metadata-0").glob("*.checkpoint"):
        with open_log(path) as log:
            for b in log.batches():
                if not b.is_control:
                    for r in log.records(b):
                        d = decode_cluster_metadata(r.key, r.value)
                        assert "error" not in d
                        if d["type"] == "TOPIC_RECORD":
                            topics.add(d["data"]["name"])
    on_disk = {p.name.rsplit("-", 1)[0] for p in base.iterdir() if p.is_dir()}
    assert on_disk - {"__cluster_metadata"} <= topics


def test_undecodable_internal_records_do_not_raise() -> None:
    for fn in (decode_consumer_offsets, decode_transaction_state, decode_cluster_metadata):
        for key, value in ((None, None), (b"\x00", b"\x00"), (b"\x00\x00\x7f\xff", b"\xff" * 3)):
            assert "error" in fn(key, value)
    assert format_transaction_state(None, None)[0].startswith("Error")


def test_the_file_type_registry_names_a_parser_and_a_dumper_for_every_type() -> None:
    """log_dir.FILE_TYPES is the one name -> type -> parser registry: every type's parser imports, every type
    has a `kforensics dump` dumper (its --type choices are the registry's names), and each name pattern takes
    the broker's own file names of that type and no other type's."""
    from kforensics.dump_engine import DUMPERS, FILE_TYPES
    from kforensics.parsers.log_dir import FILE_TYPE, file_type_of

    assert set(DUMPERS) == set(FILE_TYPE) == set(FILE_TYPES)
    for file_type in FILE_TYPE.values():
        assert callable(file_type.read())
    examples = {"00000000000000000042.log": "log", "00000000000000000042.index": "index",
                "00000000000000000042.timeindex": "timeindex", "00000000000000000042.txnindex": "txnindex",
                "00000000000000000042.snapshot": "snapshot", "00000000000000000042-0000000003.checkpoint":
                "metadata_snapshot", "bootstrap.checkpoint": "metadata_snapshot",
                "leader-epoch-checkpoint": "leader_epoch_checkpoint", "cleaner-offset-checkpoint": "offset_checkpoint",
                "partition.metadata": "partition_metadata", "meta.properties": "meta_properties",
                "quorum-state": "quorum_state", ".kafka_cleanshutdown": "clean_shutdown"}
    assert {name: getattr(file_type_of(name), "name", None) for name in examples} == examples
    for name in ("00000000000000000042.log.deleted", "42.log", "partition.metadata.tmp", "leader-epoch-checkpoint2"):
        assert file_type_of(name) is None
    assert detect_file_type("00000000000000000042.log.deleted") == "log"  # dump still names renamed segments
