"""sample_logs: reproducible, small, and readable by an independent reader (kafka-python) exactly as
EXPECTED.json says. These tests do not use kforensics' parsers."""

from __future__ import annotations

import filecmp
import json
import struct
import subprocess
import sys
from pathlib import Path

from conftest import SAMPLE_LOGS
from kafka.record.default_records import DefaultRecordBatch
from kafka.record.legacy_records import LegacyRecordBatch

EXPECTED = json.loads((SAMPLE_LOGS / "EXPECTED.json").read_text())


def _partitions():
    for broker, info in EXPECTED["brokers"].items():
        for name, facts in info["partitions"].items():
            yield broker, name, facts


def test_regenerating_gives_identical_bytes(tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(SAMPLE_LOGS / "generate.py"), str(tmp_path)], check=True,
                   capture_output=True)
    cmp = filecmp.dircmp(SAMPLE_LOGS, tmp_path, ignore=["generate.py", "README.md", "__pycache__"])

    def differences(c: filecmp.dircmp) -> list[str]:
        out = [*c.left_only, *c.right_only, *c.diff_files]
        for sub in c.subdirs.values():
            out += differences(sub)
        return out

    assert differences(cmp) == []


def test_total_size_is_small() -> None:
    total = sum(p.stat().st_size for p in SAMPLE_LOGS.rglob("*") if p.is_file())
    assert total < 5_000_000


def test_kafka_python_reads_every_batch_where_expected() -> None:
    checked = 0
    for broker, name, facts in _partitions():
        for batch in facts["batches"]:
            path = SAMPLE_LOGS / broker / name / batch["segment"]
            data = path.read_bytes()
            raw = data[batch["position"]:batch["position"] + batch["size"]]
            assert struct.unpack_from(">q", raw, 0)[0] in (batch["base_offset"], batch["last_offset"])
            if batch["magic"] == 2:
                reader = DefaultRecordBatch(raw)
                assert reader.base_offset == batch["base_offset"]
                assert reader.producer_id == batch["producer_id"]
                assert reader.base_sequence == batch["base_sequence"]
                assert reader.is_control_batch == batch["is_control"]
                crc_ok = reader.validate_crc()
                records = list(reader)
            else:
                reader = LegacyRecordBatch(raw, batch["magic"])
                crc_ok = reader.validate_crc()
                records = list(reader)
            planted = [a for a in facts["anomalies"] if a["kind"] == "corrupt_crc"
                       and a["position"] == batch["position"] and a["file"] == batch["segment"]]
            assert crc_ok is not bool(planted), (broker, name, batch["position"])
            if not planted:
                assert len(records) == batch["count"]
                assert records[-1].offset == batch["last_offset"]
            checked += 1
    assert checked == sum(f["batch_count"] for _, _, f in _partitions())


def test_truncated_tail_is_where_expected() -> None:
    facts = EXPECTED["brokers"]["broker-1"]["partitions"]["damaged-0"]
    (tail,) = [a for a in facts["anomalies"] if a["kind"] == "truncated_tail"]
    path = SAMPLE_LOGS / "broker-1" / "damaged-0" / tail["file"]
    assert path.stat().st_size == tail["position"] + tail["bytes_present"]
    declared = struct.unpack_from(">i", path.read_bytes(), tail["position"] + 8)[0] + 12
    assert declared == tail["declared_size"]


def test_txnindex_matches_expected_aborted_ranges() -> None:
    facts = EXPECTED["brokers"]["broker-1"]["partitions"]["payments-0"]
    raw = b"".join(p.read_bytes() for p in sorted((SAMPLE_LOGS / "broker-1" / "payments-0").glob("*.txnindex")))
    entries = [struct.unpack_from(">hqqqq", raw, i) for i in range(0, len(raw), 34)]
    assert [(pid, f, last, lso) for _v, pid, f, last, lso in entries] == [
        (r["producer_id"], r["first_offset"], r["last_offset"], r["last_stable_offset"])
        for r in facts["aborted_ranges"]]
    aborted = [t for t in facts["transactions"] if t["outcome"] == "ABORT" and t["first_offset"] is not None]
    assert len(aborted) == len(entries)


def test_preallocated_indexes_are_zero_filled() -> None:
    for broker, name, facts in _partitions():
        active = facts["segments"][-1]["base_offset"]
        index = SAMPLE_LOGS / broker / name / f"{active:020d}.index"
        data = index.read_bytes()
        assert len(data) == 64 * 1024 // 8 * 8
        assert data.endswith(bytes(64))
