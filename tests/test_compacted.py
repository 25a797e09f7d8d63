"""sample_logs/compacted-1: partitions the log cleaner has cleaned (sample_logs/generate_compacted.py, a simulation of
Kafka's log cleaner, apache/kafka trunk, over what an idempotent and a transactional producer appended). The bytes are read as
EXPECTED-compacted.json says by an independent reader (kafka-python); one scan of the broker finds the genuine
problems planted in the dirty tails and nothing else; dump, the tables, the restart prediction and export read the
cleaned log as Kafka does."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from conftest import SAMPLE_LOGS
from kafka.record.memory_records import MemoryRecords

from kforensics.cli import main

BROKER = SAMPLE_LOGS / "compacted-1"
EXPECTED = json.loads((SAMPLE_LOGS / "EXPECTED-compacted.json").read_text())
PARTITIONS = EXPECTED["partitions"]


@pytest.fixture(scope="session")
def compacted_scan(spark, tmp_path_factory) -> Path:
    """One full scan of compacted-1 for the session (record checks included: empty and thinned batches)."""
    from kforensics.spark.jobs import run_scan

    out = tmp_path_factory.mktemp("scan-compacted")
    run_scan(spark, [("compacted-1", str(BROKER))], str(out), headers_only=False)
    return out


def _table(out: Path, name: str) -> list[dict]:
    return pq.read_table(out / name).to_pylist()


def _sha256_tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_regenerating_gives_identical_bytes(tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(SAMPLE_LOGS / "generate_compacted.py"), str(tmp_path)], check=True,
                   capture_output=True)
    assert _sha256_tree(tmp_path / "compacted-1") == _sha256_tree(BROKER)
    assert (tmp_path / "EXPECTED-compacted.json").read_bytes() == (SAMPLE_LOGS / "EXPECTED-compacted.json").read_bytes()


def test_kafka_python_reads_the_cleaned_log_as_expected() -> None:
    """What the cleaner leaves: holes between and inside batches (a batch keeps its base and last offset and base
    sequence), an empty batch (count 0), delete horizons in baseTimestamp (attributes bit 6), a merged segment."""
    shapes = set()
    for name, facts in PARTITIONS.items():
        seen = []
        for base in facts["segments"]:
            data = (BROKER / name / f"{base:020d}.log").read_bytes()
            reader = MemoryRecords(data)
            while reader.has_next():
                b = reader.next_batch()
                assert b.validate_crc()
                offsets = [r.offset for r in b if not b.is_control_batch] if not b.is_control_batch else \
                    [b.base_offset] * b.records_count
                horizon = b.first_timestamp if b.attributes & 0x40 else None
                seen.append((b.base_offset, b.last_offset, b.records_count, offsets, b.producer_id, b.base_sequence,
                             horizon))
        assert seen == [(b["base_offset"], b["last_offset"], b["count"], b["offsets"], b["producer_id"],
                         b["base_sequence"], b["delete_horizon_ms"]) for b in facts["batches"]], name
        shapes |= {b["cleaned"] for b in facts["batches"]}
        assert any(r["segments_merged"] > 1 for r in facts["rounds"])
    assert shapes == {None, "thinned", "empty", "horizon"}


def test_the_scan_finds_the_dirty_tails_problems_and_nothing_else(compacted_scan: Path) -> None:
    found = sorted((f["topic"], f["kind"], f["severity"], Path(f["file"]).name, f["position"], f["offset"],
                    f["producer_id"], f["producer_epoch"]) for f in _table(compacted_scan, "findings"))
    from kforensics.kinds import severity_of

    planted = sorted((facts["topic"], a["kind"], severity_of(a["kind"]), a["file"], a["position"], a["offset"],
                      a["producer_id"], a["producer_epoch"]) for facts in PARTITIONS.values()
                     for a in facts["anomalies"])
    assert found == planted
    details = {(f["topic"], f["kind"]): json.loads(f["details"]) for f in _table(compacted_scan, "findings")}
    for facts in PARTITIONS.values():
        for a in facts["anomalies"]:
            got = details[(facts["topic"], a["kind"])]
            assert {k: got[k] for k in got if k in a} == {k: a[k] for k in got if k in a}, a["kind"]


def test_the_tables_read_the_cleaned_log(compacted_scan: Path) -> None:
    batches = {(b["topic"], b["base_offset"]): b for b in _table(compacted_scan, "batches")}
    for name, facts in PARTITIONS.items():
        for b in facts["batches"]:
            row = batches[(facts["topic"], b["base_offset"])]
            assert (row["last_offset"], row["count"], row["delete_horizon_ms"]) == (
                b["last_offset"], b["count"], b["delete_horizon_ms"]), (name, b["base_offset"])
            if b["delete_horizon_ms"] is not None:  # the column as on disk: baseTimestamp holds the horizon
                assert row["base_timestamp"] == b["delete_horizon_ms"]
    replicas = {r["topic"]: r for r in _table(compacted_scan, "replicas")}
    assert {t: (r["compacted"], r["cleaned_up_to"]) for t, r in replicas.items()} == {
        facts["topic"]: (True, facts["cleaner_offset"]) for facts in PARTITIONS.values()}
    # an aborted transaction whose data the cleaner removed: its range is its .txnindex entry, which agrees
    aborted = [(r["topic"], r["producer_id"], r["first_offset"], r["last_offset"], r["last_stable_offset"],
                r["txnindex_agrees"]) for r in _table(compacted_scan, "aborted_ranges")]
    assert sorted(aborted) == sorted((facts["topic"], a["producer_id"], a["first_offset"], a["last_offset"],
                                      a["last_stable_offset"], True)
                                     for facts in PARTITIONS.values() for a in facts["aborted_ranges"])
    assert aborted
    # the one open transaction is the dirty tail's; the cleaned range's are complete
    (hanging,) = [a for facts in PARTITIONS.values() for a in facts["anomalies"] if a["kind"] == "hanging_transaction"]
    txns = _table(compacted_scan, "transactions")
    assert [(t["producer_id"], t["first_offset"]) for t in txns if t["outcome"] == "OPEN"] == [
        (hanging["producer_id"], hanging["first_offset"])]
    assert {(r["topic"], r["last_stable_offset"]) for r in _table(compacted_scan, "lso") if r["stuck"]} == {
        ("changelog", hanging["first_offset"])}
    # a restart recovers the merged segment, the holes and the empty batch without cutting anything
    restart = {r["topic"]: r for r in _table(compacted_scan, "restart_prediction")}
    assert restart["profiles"]["segments_recovered"] == len(PARTITIONS["profiles-0"]["segments"])
    assert all(r["truncate_at_offset"] is None and not r["restart_fails"] and r["bytes_discarded"] == 0
               for r in restart.values())


def test_dump_prints_the_delete_horizon_as_kafka_dump_log_does() -> None:
    facts = PARTITIONS["profiles-0"]
    (horizon,) = [b for b in facts["batches"] if b["delete_horizon_ms"] is not None]
    (empty,) = [b for b in facts["batches"] if b["cleaned"] == "empty"]
    log = str(BROKER / "profiles-0" / horizon["segment"])
    result = CliRunner().invoke(main, ["dump", "--deep-iteration", log])
    assert result.exit_code == 0, result.output  # no finding: an empty batch holds the none it declares
    lines = {int(line.split()[1]): line for line in result.stdout.splitlines() if line.startswith("baseOffset:")}
    assert f"deleteHorizonMs: OptionalLong[{horizon['delete_horizon_ms']}]" in lines[horizon["base_offset"]]
    assert " count: 0 " in lines[empty["base_offset"]] and "OptionalLong.empty" in lines[empty["base_offset"]]
    result = CliRunner().invoke(main, ["dump", "--json", log])
    rows = {r["base_offset"]: r for r in map(json.loads, result.stdout.splitlines()) if r["type"] == "batch"}
    assert rows[horizon["base_offset"]]["delete_horizon_ms"] == horizon["delete_horizon_ms"]
    assert rows[empty["base_offset"]]["delete_horizon_ms"] is None


def test_export_writes_what_the_cleaner_kept(tmp_path: Path) -> None:
    facts = PARTITIONS["profiles-0"]
    out = tmp_path / "profiles.jsonl"
    result = CliRunner().invoke(main, ["export", str(BROKER), "--topic", "profiles", "--partition", "0",
                                       "--out", str(out)])
    assert result.exit_code == 0, result.output
    offsets = [json.loads(line)["offset"] for line in out.read_text().splitlines()]
    assert offsets == [o for b in facts["batches"] for o in b["offsets"]]
    changelog = tmp_path / "changelog.jsonl"
    result = CliRunner().invoke(main, ["export", str(BROKER), "--topic", "changelog", "--partition", "0",
                                       "--isolation", "read_committed", "--out", str(changelog)])
    assert result.exit_code == 0, result.output
    kept = [json.loads(line) for line in changelog.read_text().splitlines()]
    data = [o for b in PARTITIONS["changelog-0"]["batches"] if not b["control_type"] for o in b["offsets"]]
    (hanging,) = [a for a in PARTITIONS["changelog-0"]["anomalies"] if a["kind"] == "hanging_transaction"]
    # read_committed stops at the last stable offset, held by the hanging transaction
    assert [r["offset"] for r in kept] == [o for o in data if o < hanging["first_offset"]]
