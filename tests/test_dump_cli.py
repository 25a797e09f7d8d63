"""`kforensics dump`: golden text per file type, kafka-dump-log's templates, the JSON contract, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import REALDATA, SAMPLE_LOGS
from kafka.record import MemoryRecords

from kforensics.cli import main

GOLDEN = Path(__file__).parent / "golden"
B1 = SAMPLE_LOGS / "broker-1"

# One file of every type, with the options that exercise it.
GOLDEN_CASES = {
    "log_deep_data": (B1 / "orders-0" / "00000000000000000000.log", ["--deep-iteration", "--print-data-log"]),
    "log_legacy_deep": (B1 / "legacy-0" / "00000000000000000000.log", ["--deep-iteration"]),
    "log_transactional": (B1 / "payments-0" / "00000000000000000000.log", ["--deep-iteration"]),
    "log_damaged": (B1 / "damaged-0" / "00000000000000000048.log", []),
    "index": (B1 / "orders-0" / "00000000000000000000.index", []),
    "timeindex": (B1 / "orders-0" / "00000000000000000000.timeindex", []),
    "txnindex": (B1 / "payments-0" / "00000000000000000000.txnindex", []),
    "snapshot": (B1 / "payments-0" / "00000000000000000106.snapshot", []),
    "leader_epoch_checkpoint": (B1 / "orders-0" / "leader-epoch-checkpoint", []),
    "replication_offset_checkpoint": (B1 / "replication-offset-checkpoint", []),
    "partition_metadata": (B1 / "orders-0" / "partition.metadata", []),
    "meta_properties": (B1 / "meta.properties", []),
    "offsets_decoder": (B1 / "__consumer_offsets-0" / "00000000000000000000.log", ["--offsets-decoder"]),
    "transaction_log_decoder": (B1 / "__transaction_state-0" / "00000000000000000000.log",
                                ["--transaction-log-decoder"]),
    "remote_log_metadata_decoder": (B1 / "__remote_log_metadata-9" / "00000000000000000000.log",
                                    ["--remote-log-metadata-decoder"]),
    "share_group_state_decoder": (B1 / "__share_group_state-17" / "00000000000000000000.log",
                                  ["--share-group-state-decoder"]),
}


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["dump", *args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def _relative(text: str) -> str:
    return text.replace(str(SAMPLE_LOGS), "sample_logs")


@pytest.mark.parametrize("name", sorted(GOLDEN_CASES))
def test_golden_text(name: str) -> None:
    path, options = GOLDEN_CASES[name]
    _code, out, err = run(str(path), *options)
    text = _relative(out) + ("--- stderr ---\n" + _relative(err) if err else "")
    golden = GOLDEN / f"{name}.txt"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(text)
    assert text == golden.read_text()


def test_batch_and_record_lines_follow_kafka_dump_log_templates() -> None:
    """Rebuild the expected lines from kafka-python's decoding, with DumpLogSegments' templates."""
    path = B1 / "orders-0" / "00000000000000000130.log"
    records = MemoryRecords(path.read_bytes())
    expected = [f"Dumping {path}", "Log starting offset: 130"]
    position = 0
    while records.has_next():
        b = records.next_batch()
        size = b.size_in_bytes if hasattr(b, "size_in_bytes") else None
        raw = path.read_bytes()[position:]
        size = int.from_bytes(raw[8:12], "big") + 12
        valid = b.validate_crc()
        recs = list(b)
        codec = ["none", "gzip", "snappy", "lz4", "zstd"][b.compression_type]
        expected.append(
            f"baseOffset: {b.base_offset} lastOffset: {recs[-1].offset} count: {len(recs)} "
            f"baseSequence: {b.base_sequence} lastSequence: {b.base_sequence + recs[-1].offset - b.base_offset} "
            f"producerId: {b.producer_id} producerEpoch: {b.producer_epoch} "
            f"partitionLeaderEpoch: {int.from_bytes(raw[12:16], 'big', signed=True)} "
            f"isTransactional: {str(b.is_transactional).lower()} isControl: {str(b.is_control_batch).lower()} "
            f"deleteHorizonMs: OptionalLong.empty position: {position} CreateTime: {b.max_timestamp} size: {size} "
            f"magic: 2 compresscodec: {codec} crc: {b.crc} isvalid: {str(valid).lower()}")
        for r in recs:
            expected.append(
                f"| offset: {r.offset} CreateTime: {r.timestamp} keySize: {-1 if r.key is None else len(r.key)} "
                f"valueSize: {-1 if r.value is None else len(r.value)} "
                f"sequence: {b.base_sequence + r.offset - b.base_offset} "
                f"headerKeys: [{','.join(k for k, _ in r.headers)}]")
        position += size
    code, out, err = run(str(path), "--deep-iteration")
    assert (code, err) == (0, "")
    assert out.splitlines() == expected


JSON_FIELDS = {
    "batch": ["type", "file", "position", "size", "magic", "base_offset", "last_offset", "count",
              "partition_leader_epoch", "producer_id", "producer_epoch", "base_sequence", "last_sequence",
              "is_transactional", "is_control", "delete_horizon_ms", "codec", "timestamp_type", "base_timestamp",
              "max_timestamp", "crc", "crc_valid"],
    "record": ["type", "offset", "timestamp", "sequence", "key_size", "value_size", "header_keys", "control_type",
               "coordinator_epoch"],
    "index_entry": ["type", "offset", "position"],
    "time_index_entry": ["type", "timestamp", "offset"],
    "aborted_txn": ["type", "version", "producer_id", "first_offset", "last_offset", "last_stable_offset"],
    "producer_state": ["type", "producer_id", "producer_epoch", "last_sequence", "last_offset", "offset_delta",
                       "timestamp", "coordinator_epoch", "current_txn_first_offset"],
    "leader_epoch": ["type", "epoch", "start_offset"],
}


def _json_lines(*args: str) -> tuple[int, list[dict]]:
    code, out, _ = run("--json", *args)
    return code, [json.loads(line) for line in out.splitlines()]


def test_json_field_names_are_the_contract() -> None:
    seen = {}
    for path in (B1 / "payments-0" / "00000000000000000000.log", B1 / "payments-0" / "00000000000000000000.index",
                 B1 / "payments-0" / "00000000000000000000.timeindex",
                 B1 / "payments-0" / "00000000000000000000.txnindex",
                 B1 / "payments-0" / "00000000000000000106.snapshot", B1 / "payments-0" / "leader-epoch-checkpoint"):
        _, lines = _json_lines(str(path), "--deep-iteration")
        for line in lines:
            seen.setdefault(line["type"], list(line))
    assert seen == JSON_FIELDS
    _, lines = _json_lines(str(B1 / "orders-0" / "00000000000000000000.log"), "--print-data-log")
    record = next(line for line in lines if line["type"] == "record")
    assert list(record) == [*JSON_FIELDS["record"], "key", "value"]
    marker = next(line for line in _json_lines(str(B1 / "payments-0" / "00000000000000000000.log"),
                                               "--deep-iteration")[1] if line.get("control_type"))
    assert (marker["control_type"], marker["coordinator_epoch"]) == ("COMMIT", 5)


def test_json_findings_carry_file_and_position() -> None:
    code, lines = _json_lines(str(B1 / "damaged-0" / "00000000000000000000.log"))
    expected = json.loads((SAMPLE_LOGS / "EXPECTED.json").read_text())["brokers"]["broker-1"]["partitions"]
    (planted,) = [a for a in expected["damaged-0"]["anomalies"] if a["kind"] == "corrupt_crc"]
    (finding,) = [line for line in lines if line["type"] == "finding"]
    assert code == 1
    assert (finding["kind"], finding["severity"], finding["position"], finding["stored_crc"],
            finding["computed_crc"]) == ("corrupt_crc", "error", planted["position"], planted["stored_crc"],
                                         planted["computed_crc"])
    bad = next(line for line in lines if line["type"] == "batch" and line["position"] == planted["position"])
    assert bad["crc_valid"] is False


def test_binary_values_are_base64_in_json(tmp_path: Path) -> None:
    from kafka.record.default_records import DefaultRecordBatchBuilder

    builder = DefaultRecordBatchBuilder(2, 0, False, -1, -1, -1, 1 << 20)
    builder.append(0, timestamp=1, key=b"\xff\xfe", value=b"plain text", headers=[])
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(bytes(builder.build()))
    _, lines = _json_lines(str(path), "--print-data-log")
    record = lines[1]
    assert (record["key"], record["value"]) == ("base64://4=", "plain text")


def test_filters_select_batches_and_records() -> None:
    path = str(B1 / "orders-0" / "00000000000000000000.log")
    _, lines = _json_lines(path, "--pid", "1001", "--deep-iteration", "--offsets", "10:30")
    batches = [line for line in lines if line["type"] == "batch"]
    records = [line for line in lines if line["type"] == "record"]
    assert batches and {b["producer_id"] for b in batches} == {1001}
    assert all(b["last_offset"] >= 10 and b["base_offset"] <= 30 for b in batches)
    assert records and all(10 <= r["offset"] <= 30 for r in records)
    _, lines = _json_lines(str(B1 / "orders-0" / "00000000000000000260.log"), "--leader-epoch", "0")
    assert {b["partition_leader_epoch"] for b in lines if b["type"] == "batch"} <= {0}


def test_iso_time() -> None:
    _, out, _ = run(str(B1 / "orders-0" / "00000000000000000000.timeindex"), "--iso-time")
    assert "timestamp: 2025-11-20T10:00:" in out


def test_exit_codes(tmp_path: Path) -> None:
    assert run(str(B1 / "orders-0" / "00000000000000000000.log"))[0] == 0
    assert run(str(B1 / "damaged-0" / "00000000000000000048.log"))[0] == 1
    assert run(str(tmp_path / "missing.log"))[0] == 2
    assert run("--offsets", "nonsense", str(B1 / "orders-0" / "00000000000000000000.log"))[0] == 2
    inverted = run("--offsets", "200:100", str(B1 / "orders-0" / "00000000000000000000.log"))
    assert inverted[0] == 2 and "start is after end" in inverted[2]  # as export says it (test_export.py)
    assert run()[0] == 2
    odd = tmp_path / "notes.txt"
    odd.write_text("hello")
    assert run(str(odd))[0] == 2


def test_files_option_and_positional_are_both_accepted() -> None:
    a, b = B1 / "orders-0" / "00000000000000000000.index", B1 / "orders-0" / "00000000000000000000.timeindex"
    _, out, _ = run("--files", f"{a},{b}")
    assert out.count("Dumping ") == 2


def test_verify_index_only_and_sanity_check() -> None:
    index = B1 / "damaged-0" / "00000000000000000048.index"
    code, out, err = run(str(index), "--verify-index-only")
    assert code == 1 and "offset:" not in out and "index_bad_entry" in err
    code, out, _ = run(str(B1 / "orders-0" / "00000000000000000000.index"), "--index-sanity-check")
    assert code == 0 and "passed sanity check." in out


def test_trailing_invalid_bytes_line() -> None:
    _, out, _ = run(str(B1 / "damaged-0" / "00000000000000000048.log"))
    assert out.splitlines()[-1] == "Found 37 invalid bytes at the end of 00000000000000000048.log"


def test_dump_and_help_never_import_pyspark() -> None:
    code = ("import sys; from click.testing import CliRunner; from kforensics.cli import main; "
            f"CliRunner().invoke(main, ['dump', {str(B1 / 'orders-0' / '00000000000000000000.log')!r}]); "
            "CliRunner().invoke(main, ['--help']); print('pyspark' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


@pytest.mark.skipif(not REALDATA.is_dir(), reason="../shared/realdata is absent")
def test_every_real_file_dumps_without_traceback() -> None:
    from kforensics.parsers.log_dir import detect_file_type

    codes = {}
    for path in sorted(p for p in REALDATA.rglob("*") if p.is_file() and detect_file_type(p)):
        code, _, _ = run(str(path), "--deep-iteration")
        codes[str(path.relative_to(REALDATA))] = code
    bad = {k: v for k, v in codes.items() if v != 0}
    assert len(codes) > 250
    assert bad == {}


def test_remote_log_metadata_decoder_json_and_undecodable_values(tmp_path: Path) -> None:
    """--remote-log-metadata-decoder implies --print-data-log; in JSON `decoded` is the decoded record, and a
    value that does not decode is a finding at its batch's position (exit 1) while the rest is still printed."""
    facts = json.loads((SAMPLE_LOGS / "EXPECTED.json").read_text())["brokers"]["broker-1"]["partitions"]["clicks-0"]
    src = B1 / facts["remote_log_metadata_partition"] / "00000000000000000000.log"
    code, out, _err = run(str(src), "--remote-log-metadata-decoder", "--json")
    records = [json.loads(line) for line in out.splitlines() if json.loads(line)["type"] == "record"]
    assert code == 0 and len(records) == 11
    starts = {(r["decoded"]["data"]["remoteLogSegmentId"]["id"], r["decoded"]["data"]["startOffset"])
              for r in records if r["decoded"]["type"] == "RemoteLogSegmentMetadataRecord"}
    assert starts == {(s["remote_segment_id"], s["start_offset"]) for s in facts["remote_segments"]}
    # Damage one value inside its batch (and fix the CRC, so that only the value is wrong): api key 9.
    from crc32c import crc32c

    data = bytearray(src.read_bytes())
    second = facts["remote_segments"][0]["position"]  # the batch of clicks-a's COPY_SEGMENT_FINISHED update
    at = data.index(b"\x01\x01\x00", second + 61)
    data[at + 1] = 9
    struct_crc = crc32c(bytes(data[second + 21:second + 12 + int.from_bytes(data[second + 8:second + 12], "big")]))
    data[second + 17:second + 21] = struct_crc.to_bytes(4, "big")
    bad = tmp_path / "00000000000000000000.log"
    bad.write_bytes(bytes(data))
    code, out, err = run(str(bad), "--remote-log-metadata-decoder")
    assert code == 1
    assert (f"WARNING internal_record_undecodable: {bad} at byte {second}: record at offset 1 could not be "
            "decoded: unknown api key 9") in err
    assert "payload: Error at offset 1, skipping. unknown api key 9" in out
    assert out.count("payload: RemoteLogSegment") == 10
    assert run(str(src), "--remote-log-metadata-decoder", "--offsets-decoder")[0] == 2
