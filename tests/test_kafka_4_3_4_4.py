"""What Kafka 4.3 and 4.4 write to disk, decoded (issue 50, point 1): RegisterBrokerRecord v4 and
BrokerRegistrationChangeRecord v3 (CordonedLogDirs, KIP-1066), UnregisterControllerRecord (apiKey 29, KIP-1312),
ConsumerGroupCurrentMemberAssignmentValue's AssignmentEpochs (KIP-1251), the zero checkpoint holding the KRaftVersion
and Voters records and the bootstrap records (KIP-853, KIP-1170), a pure data dir holding a `__cluster_metadata-0`
left by a formatter, and `kforensics dump` in step with the Java DumpLogSegments of 4.3 and the state names of
4.4's `--transaction-log-decoder`, both read back as dump text.

Every record here is written byte by byte after Kafka's JSON schemas (tests/kraft_files.py), not by the tables that
read it; the table-driven encoder must write the same bytes back."""

from __future__ import annotations

import base64
import io
import json
import struct
from pathlib import Path

import kraft_files as k
import pyarrow as pa
import pytest
from click.testing import CliRunner
from conftest import KRAFT_INPUTS, SAMPLE_LOGS

from kforensics.cli import main
from kforensics.dump_out import TextOut
from kforensics.parsers.cluster_metadata import decode_metadata_record, encode_metadata_record
from kforensics.parsers.dump_text import DumpBatch, iter_dump_text
from kforensics.parsers.findings import Finding
from kforensics.parsers.internal_topics import (
    decode_consumer_offsets,
    decode_coordinator_record,
    encode_coordinator_record,
    format_consumer_offsets,
)
from kforensics.parsers.log_dir import ZERO_CHECKPOINT, scan_log_dir
from kforensics.parsers.producer_snapshot import ProducerStateEntry

U = [bytes([i] * 16) for i in range(1, 9)]
TS = 1780000000000  # May 2026


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _encoded_back(value: bytes) -> bytes:
    rec = decode_metadata_record(value)
    return encode_metadata_record(rec.type_name, rec.version, rec.data)


# --- metadata records -------------------------------------------------------------------------------------------

def test_register_broker_record_v4_with_cordoned_log_dirs() -> None:
    value = k.register_broker_v4(3, U[0], 42, [k.endpoint("PLAINTEXT", "b3", 9092, 0)], [U[1], U[2]], [U[2]],
                                 rack="r1", fenced=False)
    rec = decode_metadata_record(value)
    assert (rec.type_name, rec.api_key, rec.version, rec.newer, rec.known_versions) == (
        "REGISTER_BROKER_RECORD", 0, 4, False, "0-4")
    assert rec.data == {
        "brokerId": 3, "isMigratingZkBroker": False, "incarnationId": b64(U[0]), "brokerEpoch": 42,
        "endPoints": [{"name": "PLAINTEXT", "host": "b3", "port": 9092, "securityProtocol": 0}],
        "features": [{"name": "metadata.version", "minSupportedVersion": 7, "maxSupportedVersion": 30}],
        "rack": "r1", "fenced": False, "inControlledShutdown": False, "logDirs": [b64(U[1]), b64(U[2])],
        "cordonedLogDirs": [b64(U[2])]}
    assert _encoded_back(value) == value
    # a v4 registration without the tag: CordonedLogDirs absent (null, its default), not printed
    bare = k.register_broker_v4(3, U[0], 42, [], [U[1]], None)
    assert "cordonedLogDirs" not in decode_metadata_record(bare).data and _encoded_back(bare) == bare
    # an empty list is written, read and printed: a registration that cordons nothing
    empty = k.register_broker_v4(3, U[0], 42, [], [U[1]], [])
    assert decode_metadata_record(empty).data["cordonedLogDirs"] == [] and _encoded_back(empty) == empty


def test_broker_registration_change_record_v3_cordons_uncordons_or_leaves_alone() -> None:
    cordon = k.broker_registration_change_v3(3, 42, cordoned=[U[1], U[2]])
    uncordon = k.broker_registration_change_v3(3, 42, cordoned=[])
    unfence = k.broker_registration_change_v3(3, 42, fenced=-1)
    assert decode_metadata_record(cordon).data == {"brokerId": 3, "brokerEpoch": 42,
                                                   "cordonedLogDirs": [b64(U[1]), b64(U[2])]}
    assert decode_metadata_record(uncordon).data == {"brokerId": 3, "brokerEpoch": 42, "cordonedLogDirs": []}
    assert decode_metadata_record(unfence).data == {"brokerId": 3, "brokerEpoch": 42, "fenced": -1}
    for value in (cordon, uncordon, unfence):
        rec = decode_metadata_record(value)
        assert (rec.version, rec.newer, rec.known_versions, rec.unknown_tags) == (3, False, "0-3", ())
        assert _encoded_back(value) == value


def test_unregister_controller_record() -> None:
    value = k.unregister_controller(2)
    assert value == bytes([1, 29, 0]) + struct.pack(">i", 2) + b"\x00"
    rec = decode_metadata_record(value)
    assert (rec.type_name, rec.api_key, rec.version, rec.data, rec.newer) == (
        "UNREGISTER_CONTROLLER_RECORD", 29, 0, {"controllerId": 2}, False)
    assert _encoded_back(value) == value
    # apiKey 30 is past the tables: newer, not damage
    assert decode_metadata_record(bytes([1, 30, 0, 0])).newer


def test_a_4_3_record_of_a_version_past_4_4_still_reads_as_newer() -> None:
    """RegisterBrokerRecord v5 (not written by any Kafka yet): the v4 fields read, the version is newer."""
    v5 = k.frame(0, 5) + k.register_broker_v4(3, U[0], 42, [], [U[1]], [U[1]])[3:]
    rec = decode_metadata_record(v5)
    assert rec.newer and rec.version == 5 and rec.data["cordonedLogDirs"] == [b64(U[1])]


# --- __consumer_offsets: KIP-1251 --------------------------------------------------------------------------------

def _topic_partitions(topic_id: bytes, partitions: list[int], epochs: list[int] | None) -> bytes:
    tagged = [] if epochs is None else [(0, k.carr([struct.pack(">i", e) for e in epochs]))]
    return topic_id + k.carr([struct.pack(">i", p) for p in partitions]) + k.tags(*tagged)


def test_consumer_group_current_member_assignment_value_with_assignment_epochs() -> None:
    key = struct.pack(">h", 8) + struct.pack(">h", 1) + b"g" + struct.pack(">h", 1) + b"m"
    value = (struct.pack(">hiib", 0, 12, 11, 0)
             + k.carr([_topic_partitions(U[0], [0, 2], [12, 9]), _topic_partitions(U[1], [1], None)])
             + k.carr([_topic_partitions(U[2], [4], [7])]) + k.NO_TAGS)
    rec = decode_coordinator_record("__consumer_offsets", key, value)
    assert (rec.value_name, rec.newer, rec.unknown_tags) == ("ConsumerGroupCurrentMemberAssignmentValue", False, ())
    assert rec.value == {
        "memberEpoch": 12, "previousMemberEpoch": 11, "state": 0,
        "assignedPartitions": [{"topicId": b64(U[0]), "partitions": [0, 2], "assignmentEpochs": [12, 9]},
                               {"topicId": b64(U[1]), "partitions": [1]}],
        "partitionsPendingRevocation": [{"topicId": b64(U[2]), "partitions": [4], "assignmentEpochs": [7]}]}
    assert encode_coordinator_record("__consumer_offsets", 8, rec.key, rec.value) == (key, value)
    assert '"assignmentEpochs":[12,9]' in format_consumer_offsets(key, value, 0)[1]
    assert decode_consumer_offsets(key, value)["key"]["type"] == "consumer_group_current_member_assignment"


# --- the zero checkpoint and the parse pass ----------------------------------------------------------------------

def _rows(path: Path, broker: str = "b1") -> list[dict]:
    from kforensics.spark import schemas as S
    from kforensics.spark.metadata_records import metadata_record_rows

    task = {"task_kind": "segment", "broker": broker, "topic": "__cluster_metadata", "partition": 0,
            "path": str(path), "base_offset": int(path.name[:20])}
    return [r for batch in metadata_record_rows(iter([pa.RecordBatch.from_pylist([task], schema=S.TASKS)]))
            for r in batch.to_pylist()]


VOTERS = k.voters(k.voter(1, U[5], [("CONTROLLER", "c1", 9093)]),
                  k.voter(2, U[6], [("CONTROLLER", "c2", 9093), ("CONTROLLER_TLS", "c2", 9094)], 0, 1))


def _zero_checkpoint(folder: Path) -> Path:
    part = folder / "__cluster_metadata-0"
    part.mkdir(parents=True, exist_ok=True)
    path = part / ZERO_CHECKPOINT
    path.write_bytes(k.zero_checkpoint([k.feature_level("metadata.version", 33), k.feature_level("group.version", 1)],
                                       VOTERS, ts=TS))
    return path


def test_the_zero_checkpoint_gives_its_voters_kraft_version_and_bootstrap_records(tmp_path: Path) -> None:
    """00000000000000000000-0000000000.checkpoint: every row at snapshot_offset 0, metadata_offset -1 (before the
    log); the KRaftVersion and Voters records as rows of their own, the SnapshotHeader and Footer not; no finding."""
    rows = _rows(_zero_checkpoint(tmp_path))
    assert [r["row_kind"] for r in rows] == ["record"] * 4
    assert [(r["record_type"], r["record_index"], r["snapshot_offset"], r["metadata_offset"], r["file_first_offset"])
            for r in rows] == [("KRAFT_VERSION", 1, 0, -1, 0), ("KRAFT_VOTERS", 2, 0, -1, 0),
                               ("FEATURE_LEVEL_RECORD", 3, 0, -1, 0), ("FEATURE_LEVEL_RECORD", 4, 0, -1, 0)]
    kraft, voters, mv, gv = rows
    assert (kraft["kraft_version"], kraft["version"], kraft["voters"]) == (1, 0, None)
    assert voters["voters"] == [
        {"voter_id": 1, "voter_directory_id": b64(U[5]), "min_supported_version": 0, "max_supported_version": 1,
         "endpoints": [{"name": "CONTROLLER", "host": "c1", "port": 9093, "security_protocol": None}]},
        {"voter_id": 2, "voter_directory_id": b64(U[6]), "min_supported_version": 0, "max_supported_version": 1,
         "endpoints": [{"name": "CONTROLLER", "host": "c2", "port": 9093, "security_protocol": None},
                       {"name": "CONTROLLER_TLS", "host": "c2", "port": 9094, "security_protocol": None}]}]
    assert (mv["feature"], mv["feature_level"], gv["feature"], gv["feature_level"]) == (
        "metadata.version", 33, "group.version", 1)
    assert all(r["timestamp"] == TS and r["metadata_broker"] == "b1" for r in rows)


def test_a_4_4_log_gives_cordoned_dirs_controller_registrations_and_voter_changes(tmp_path: Path) -> None:
    """A log segment of a 4.4 controller: RegisterBrokerRecord v4, BrokerRegistrationChangeRecord v3,
    RegisterControllerRecord, UnregisterControllerRecord, and a Voters control batch after a voter was removed.
    None is newer than the tables (no internal_record_newer_version); each carries its new columns."""
    part = tmp_path / "__cluster_metadata-0"
    part.mkdir()
    path = part / "00000000000000000100.log"
    register = k.register_broker_v4(3, U[0], 100, [k.endpoint("PLAINTEXT", "b3", 9092, 0)], [U[1], U[2]], [U[2]])
    data = (k.batch(100, [(None, register), (None, k.broker_registration_change_v3(3, 100, cordoned=[]))], ts=TS)
            + k.batch(102, [(None, k.register_controller(2, U[3], [k.endpoint("CONTROLLER", "c2", 9093, 0)]))],
                      ts=TS + 1)
            + k.control(103, [(k.KRAFT_VOTERS, k.voters(k.voter(1, U[5], [("CONTROLLER", "c1", 9093)])))], ts=TS + 2)
            + k.batch(104, [(None, k.unregister_controller(2))], ts=TS + 3))
    path.write_bytes(data)
    rows = _rows(path)
    assert not [r for r in rows if r["row_kind"] == "finding"]
    by_type = {r["record_type"]: r for r in rows}
    assert [r["record_type"] for r in rows] == ["REGISTER_BROKER_RECORD", "BROKER_REGISTRATION_CHANGE_RECORD",
                                                "REGISTER_CONTROLLER_RECORD", "KRAFT_VOTERS",
                                                "UNREGISTER_CONTROLLER_RECORD"]
    assert [r["metadata_offset"] for r in rows] == [100, 101, 102, 103, 104]
    reg = by_type["REGISTER_BROKER_RECORD"]
    assert (reg["version"], reg["broker_id"], reg["log_dirs"], reg["cordoned_log_dirs"], reg["endpoints"]) == (
        4, 3, [b64(U[1]), b64(U[2])], [b64(U[2])],
        [{"name": "PLAINTEXT", "host": "b3", "port": 9092, "security_protocol": 0}])
    change = by_type["BROKER_REGISTRATION_CHANGE_RECORD"]
    assert (change["version"], change["cordoned_log_dirs"], change["fenced"]) == (3, [], 0)
    ctl = by_type["REGISTER_CONTROLLER_RECORD"]
    assert (ctl["controller_id"], ctl["incarnation_id"], ctl["broker_id"]) == (2, b64(U[3]), None)
    assert ctl["endpoints"] == [{"name": "CONTROLLER", "host": "c2", "port": 9093, "security_protocol": 0}]
    assert [v["voter_id"] for v in by_type["KRAFT_VOTERS"]["voters"]] == [1]
    assert by_type["UNREGISTER_CONTROLLER_RECORD"]["controller_id"] == 2
    # a Voters record of a version past the tables reads what it shares, once reported
    newer = part / "00000000000000000200.log"
    voters_v1 = struct.pack(">h", 1) + VOTERS[2:]
    newer.write_bytes(k.control(200, [(k.KRAFT_VOTERS, voters_v1), (k.KRAFT_VOTERS, voters_v1)], ts=TS))
    rows = _rows(newer)
    findings = [r for r in rows if r["row_kind"] == "finding"]
    assert [(f["kind"], json.loads(f["details"])["record_type"]) for f in findings] == [
        ("internal_record_newer_version", "KRAFT_VOTERS")]
    assert [len(r["voters"]) for r in rows if r["row_kind"] == "record"] == [2, 2]
    # a Voters value that does not decode is a finding, never a row
    broken = part / "00000000000000000300.log"
    broken.write_bytes(k.control(300, [(k.KRAFT_VOTERS, VOTERS[:9])], ts=TS))
    (f,) = _rows(broken)
    assert (f["row_kind"], f["kind"], f["record_index"]) == ("finding", "internal_record_undecodable", 300)


def test_real_snapshots_give_their_voters(realdata: Path) -> None:
    """The real 4.x snapshots of ../shared/realdata hold a KRaftVersion and a Voters record (a dynamic quorum of
    one controller): the parse pass reads them, with no finding."""
    snaps = sorted((realdata / "ronem123-rupia-kraft").rglob("*-0000000001.checkpoint"))
    if not snaps:
        pytest.skip("ronem123-rupia-kraft is not in ../shared/realdata")
    rows = _rows(snaps[0], "kafka-logs")
    assert not [r for r in rows if r["row_kind"] == "finding"]
    control = [r for r in rows if r["record_type"] in ("KRAFT_VERSION", "KRAFT_VOTERS")]
    assert [(r["record_type"], r["record_index"]) for r in control] == [("KRAFT_VERSION", 1), ("KRAFT_VOTERS", 2)]
    assert control[0]["kraft_version"] == 1
    (voter,) = control[1]["voters"]
    assert voter["voter_id"] == 1 and voter["endpoints"][0]["port"] > 0 and len(voter["voter_directory_id"]) == 22
    offset = int(snaps[0].name[:20])
    assert {(r["snapshot_offset"], r["metadata_offset"]) for r in rows} == {(offset, offset - 1)}


# --- a pure data dir with a leftover __cluster_metadata-0 --------------------------------------------------------

def _data_dir(folder: Path, *, leftover: bool) -> Path:
    """A second log dir of the sample KRaft cluster's broker 1 (its own directory.id), holding no partition: with
    `leftover` the `__cluster_metadata-0` a formatter wrote into every log dir (Kafka trunk between KIP-1170 and
    apache/kafka#22418), its zero checkpoint only."""
    folder.mkdir()
    props = (SAMPLE_LOGS / "kraft-1" / "meta.properties").read_text()
    (folder / "meta.properties").write_text(props.replace("directory.id=", "directory.id=ZDJkMmQyZDJkMmQyZDJkMg\n#"))
    for name in ("recovery-point-offset-checkpoint", "replication-offset-checkpoint", "log-start-offset-checkpoint"):
        (folder / name).write_text("0\n0\n")
    if leftover:
        _zero_checkpoint(folder)
    return folder


def test_a_leftover_cluster_metadata_dir_in_a_data_dir_lists_silently(tmp_path: Path) -> None:
    log_dir, findings = scan_log_dir(_data_dir(tmp_path / "d2", leftover=True))
    assert findings == [] and log_dir.refused_dirs == []
    (part,) = log_dir.partitions
    assert (part.topic, part.partition, part.segments, [Path(p).name for p in part.metadata_snapshots]) == (
        "__cluster_metadata", 0, [], [ZERO_CHECKPOINT])


def test_a_leftover_cluster_metadata_dir_in_a_data_dir_scans_without_a_finding(spark, kraft_scan: Path,
                                                                             tmp_path: Path) -> None:
    """The sample KRaft cluster scanned with broker 1's second log dir holding a leftover `__cluster_metadata-0`
    (its zero checkpoint only): the same findings as without it, and that copy is not the cluster's reference."""
    from kforensics.scan_output import read_table
    from kforensics.spark.jobs import run_scan

    out = tmp_path / "out"
    run_scan(spark, [*KRAFT_INPUTS, ("kraft-1-d2", str(_data_dir(tmp_path / "d2", leftover=True)))], str(out),
             headers_only=True)

    def findings(scan: Path) -> list[tuple]:
        return sorted((f["kind"], f["severity"], f["broker"], f["topic"], f["partition"], f["message"])
                      for f in read_table(str(scan), "findings"))

    assert findings(out) == findings(kraft_scan)
    assert {r["metadata_broker"] for r in read_table(str(out), "partition_history")} == {"kraft-2"}


# --- kforensics dump --------------------------------------------------------------------------------------------

def _dump(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["dump", *args])
    return result.exit_code, result.stdout, result.stderr


def test_dump_of_the_zero_checkpoint_text_and_json(tmp_path: Path) -> None:
    path = _zero_checkpoint(tmp_path)
    code, out, err = _dump("--cluster-metadata-decoder", str(path))
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[:2] == [f"Dumping {path}", "Snapshot end offset: 0, epoch: 0"]
    assert (f"| offset: 1 CreateTime: {TS} keySize: 4 valueSize: {len(k.kraft_version(1))} sequence: -1 "
            'headerKeys: [] KRaftVersion {"version":0,"kRaftVersion":1}') in lines
    assert any('KRaftVoters {"version":0,"voters":[{"voterId":1,"voterDirectoryId":"' + b64(U[5]) + '",' in line
               for line in lines)
    size = len(k.feature_level("metadata.version", 33))
    assert (f"| offset: 3 CreateTime: {TS} keySize: -1 valueSize: {size} sequence: -1 headerKeys: [] payload: "
            '{"type":"FEATURE_LEVEL_RECORD","version":0,"data":{"name":"metadata.version","featureLevel":33}}') in lines
    code, out, _ = _dump("--cluster-metadata-decoder", "--json", str(path))
    records = [json.loads(line) for line in out.splitlines() if json.loads(line)["type"] == "record"]
    assert [r["control_type"] for r in records] == ["SNAPSHOT_HEADER", "KRAFT_VERSION", "KRAFT_VOTERS", None, None,
                                                    "SNAPSHOT_FOOTER"]
    assert records[1]["control_data"] == {"version": 0, "kRaftVersion": 1}
    assert [v["voterId"] for v in records[2]["control_data"]["voters"]] == [1, 2]
    assert records[4]["decoded"] == {"type": "FEATURE_LEVEL_RECORD", "version": 0,
                                     "data": {"name": "group.version", "featureLevel": 1}}


def test_dump_decodes_the_4_3_and_4_4_metadata_records_without_a_newer_version(tmp_path: Path) -> None:
    part = tmp_path / "__cluster_metadata-0"
    part.mkdir()
    path = part / "00000000000000000000.log"
    path.write_bytes(k.batch(0, [(None, k.register_broker_v4(3, U[0], 7, [], [U[1]], [U[1]])),
                                 (None, k.broker_registration_change_v3(3, 7, cordoned=[])),
                                 (None, k.unregister_controller(2))], ts=TS))
    code, out, err = _dump("--cluster-metadata-decoder", str(path))
    assert (code, err) == (0, "")
    payloads = [line.split(" payload: ", 1)[1] for line in out.splitlines() if " payload: " in line]
    assert [json.loads(p)["type"] for p in payloads] == ["REGISTER_BROKER_RECORD", "BROKER_REGISTRATION_CHANGE_RECORD",
                                                         "UNREGISTER_CONTROLLER_RECORD"]
    assert json.loads(payloads[0])["data"]["cordonedLogDirs"] == [b64(U[1])]
    assert payloads[1] == ('{"type":"BROKER_REGISTRATION_CHANGE_RECORD","version":3,'
                           '"data":{"brokerId":3,"brokerEpoch":7,"cordonedLogDirs":[]}}')
    assert payloads[2] == '{"type":"UNREGISTER_CONTROLLER_RECORD","version":0,"data":{"controllerId":2}}'
    code, out, _ = _dump("--cluster-metadata-decoder", "--json", str(path))
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and not [x for x in lines if x["type"] == "finding"]
    assert [x["decoded"]["version"] for x in lines if x["type"] == "record"] == [4, 3, 0]


def test_dump_transaction_log_decoder_prints_states_by_name_and_json_keeps_the_id(tmp_path: Path) -> None:
    """Kafka 4.4's --transaction-log-decoder (KAFKA-20712) prints transactionStatus as the state's name in its place;
    dump --json keeps the schema's id in `value` and names it in `state`; an id no state has stays a number."""
    part = tmp_path / "__transaction_state-0"
    part.mkdir()
    key = struct.pack(">hh", 0, 2) + b"tx"
    values = [struct.pack(">hqhib", 0, 5, 0, 60000, status) + struct.pack(">i", 0) + struct.pack(">qq", 11, 10)
              for status in (2, 9)]  # v0 (classic): an empty partition array, then the two timestamps
    path = part / "00000000000000000000.log"
    path.write_bytes(k.batch(0, [(key, v) for v in values], ts=TS))
    code, out, _ = _dump("--transaction-log-decoder", str(path))
    payloads = [line.split(" payload: ", 1)[1] for line in out.splitlines() if " payload: " in line]
    assert [json.loads(p)["data"]["transactionStatus"] for p in payloads] == ["PrepareCommit", 9]
    assert '"transactionTimeoutMs":60000,"transactionStatus":"PrepareCommit","transactionPartitions":[]' in payloads[0]
    code, out, _ = _dump("--transaction-log-decoder", "--json", str(path))
    decoded = [json.loads(line)["decoded"] for line in out.splitlines() if json.loads(line)["type"] == "record"]
    assert [(d["value"]["data"]["transactionStatus"], d["state"]) for d in decoded] == [(2, "PrepareCommit"), (9, None)]


def test_record_lines_follow_the_java_dump_log_segments(tmp_path: Path) -> None:
    """Kafka 4.3's Java port: with --skip-record-metadata a record's content starts `| key: ` or `| payload: ` and
    a control record's line is empty; a legacy record's crc has no stray brace (tests/golden/log_legacy_deep.txt);
    a producer's line ends after lastTimestamp when the entry holds no batch."""
    part = tmp_path / "t-0"
    part.mkdir()
    path = part / "00000000000000000000.log"
    marker = struct.pack(">hh", 0, 1), struct.pack(">hi", 0, 4)
    path.write_bytes(k.batch(0, [(b"k", b"v"), (None, b"w")], ts=TS) + k.batch(2, [marker], ts=TS, control=True))
    _, out, _ = _dump("--print-data-log", "--skip-record-metadata", str(path))
    lines = out.splitlines()
    assert lines[3:5] == ["| key: k payload: v", "| payload: w"] and lines[6] == ""
    text = io.StringIO()
    TextOut(text).producer_state(ProducerStateEntry(7, 0, -1, -1, 0, TS, -1, -1))
    assert text.getvalue() == (f"producerId: 7 producerEpoch: 0 coordinatorEpoch: -1 currentTxnFirstOffset: "
                               f"OptionalLong.empty lastTimestamp: {TS}\n")


# --- kafka-dump-log text of 4.2 and of 4.3+ read back -----------------------------------------------------------

def test_dump_text_of_kafka_4_2_and_of_4_3_reads_the_same_batches(tmp_path: Path) -> None:
    """The same segment as the Scala tool of Kafka 4.0-4.2 printed it (a legacy record's `crc: N}`, a keyless
    record's pipe-less ` payload: ` line with --skip-record-metadata) and as 4.3's Java port prints it: the same
    batches, no line left unread."""
    legacy = SAMPLE_LOGS / "broker-1" / "legacy-0" / "00000000000000000000.log"
    java_43 = CliRunner().invoke(main, ["dump", "--deep-iteration", str(legacy)]).stdout
    assert "crc: 2102863156\n" in java_43
    scala_42 = "\n".join(line + "}" if line.startswith("| offset:") else line for line in java_43.splitlines())
    part = tmp_path / "t-0"
    part.mkdir()
    path = part / "00000000000000000000.log"
    path.write_bytes(k.batch(0, [(b"k", b"v"), (None, b"w")], ts=TS))
    skip_43 = CliRunner().invoke(main, ["dump", "--print-data-log", "--skip-record-metadata", str(path)]).stdout
    skip_42 = skip_43.replace("| payload: ", " payload: ")  # a keyless record; one with a key starts `| key: `
    assert skip_42 != skip_43
    for text_43, text_42 in ((java_43, scala_42), (skip_43, skip_42)):
        parsed = [list(iter_dump_text(io.BytesIO(t.encode()), "dump.txt")) for t in (text_43, text_42)]
        for items in parsed:
            assert not [f for f in items if isinstance(f, Finding) and f.kind == "dump_line_unparseable"], items
        batches = [[(b.base_offset, b.last_offset, b.count, b.records_seen) for b in items if isinstance(b, DumpBatch)]
                   for items in parsed]
        assert batches[0] == batches[1] and batches[0]


def test_dump_text_of_a_4_4_transaction_log_decoder_dump_reads() -> None:
    """`--transaction-log-decoder` output of Kafka 4.4 (states by name) is read back like any dump."""
    seg = SAMPLE_LOGS / "broker-1" / "__transaction_state-0" / "00000000000000000000.log"
    text = CliRunner().invoke(main, ["dump", "--transaction-log-decoder", str(seg)]).stdout
    assert '"transactionStatus":"CompleteCommit"' in text
    items = list(iter_dump_text(io.BytesIO(text.encode()), "dump.txt"))
    assert not [f for f in items if isinstance(f, Finding)]
    assert len([b for b in items if isinstance(b, DumpBatch)]) == text.count("baseOffset: ")

