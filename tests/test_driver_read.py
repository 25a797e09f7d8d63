"""The driver's own parse pass of a small local input (spark/driver_read.py) against the executors' parse pass
(`read.read_tables`): the same rows in every input table, on the sample brokers and on real broker log dirs."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from conftest import REALDATA, SAMPLE_INPUTS

from kforensics.spark import schemas as S
from kforensics.spark.driver_read import dir_state, first_newer_version, read_on_driver, reads_on_driver
from kforensics.spark.read import list_input, read_tables


def _canonical(rows: list[dict]) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True, default=str) for r in rows)


def _assert_same_tables(spark, inputs: list[tuple[str, str]], headers_only: bool) -> dict[str, pa.Table]:
    listing = list_input(inputs)
    ours = read_on_driver(listing, headers_only=headers_only)
    theirs, _ = read_tables(spark, inputs, headers_only=headers_only, listing=listing)
    # dump_text_inputs is the listing's, built by the runner (spark/runner.py), not parsed from files
    assert set(ours) == set(theirs) == set(S.INPUT_TABLES) - {"dump_text_inputs"}
    for name, table in ours.items():
        assert table.schema == S.INPUT_TABLES[name], name
        assert _canonical(table.to_pylist()) == _canonical(theirs[name].toArrow().to_pylist()), name
    return ours


@pytest.mark.parametrize("headers_only", [False, True], ids=["full", "headers-only"])
def test_the_driver_parses_the_sample_brokers_as_the_executors_do(spark, headers_only: bool) -> None:
    tables = _assert_same_tables(spark, SAMPLE_INPUTS, headers_only)
    # every kind of row is there to compare: the sample has internal topics, tiered storage, damage (its KRaft metadata: the real log dirs below)
    for name in ("batches", "segments", "txnindex", "snapshot_entries", "leader_epochs", "brokers",
                 "partition_checkpoints", "parser_findings", "coordinator_records", "offset_commits",
                 "remote_log_events", "partition_topic_ids", "partition_dirs", "log_dirs"):
        assert tables[name].num_rows > 0, name
    assert set(tables["batches"]["dir_state"].to_pylist()) > {"live"}  # -delete/-future/-stray dirs too


def test_the_driver_parses_the_kraft_sample_as_the_executors_do(spark, sample_logs: Path) -> None:
    tables = _assert_same_tables(spark, [(b, str(sample_logs / b)) for b in ("kraft-1", "kraft-2", "kraft-3")],
                                 headers_only=False)
    assert tables["metadata_records"].num_rows > 0
    assert set(tables["metadata_records"]["cluster_id"].to_pylist()) != {""}  # from each broker's meta.properties


def _real_log_dirs() -> list[Path]:
    if not REALDATA.is_dir():
        return []
    return sorted({p.parent for p in REALDATA.rglob("meta.properties")})


@pytest.mark.parametrize("log_dir", _real_log_dirs() or [None], ids=lambda p: p.parent.name if p else "absent")
def test_the_driver_parses_real_broker_log_dirs_as_the_executors_do(spark, log_dir: Path | None) -> None:
    if log_dir is None:
        pytest.skip(f"real broker files not present: {REALDATA} (they live in the project's shared/ folder)")
    tables = _assert_same_tables(spark, [("real", str(log_dir))], headers_only=False)
    # some copies hold a log dir's metadata and checkpoints but no segment bytes (ogs59-kraft37-3node's brokers)
    holds_records = any(f.stat().st_size > 0 for f in log_dir.rglob("*.log"))
    assert (tables["batches"].num_rows > 0) == holds_records


def test_only_a_small_input_of_local_files_on_embedded_spark_is_read_by_the_driver(monkeypatch) -> None:
    from kforensics.spark import session

    listing = list_input(SAMPLE_INPUTS)
    assert reads_on_driver(listing, "local[2]")
    assert not reads_on_driver(listing, "spark://127.0.0.1:7077")  # a cluster's executors parse
    monkeypatch.setattr(session, "SMALL_INPUT_BYTES", -1)
    assert not reads_on_driver(listing, "local[2]")


def test_dir_state_is_the_partition_dirs() -> None:
    assert dir_state("/d/orders-0/00000000000000000000.log") == "live"
    assert dir_state("/d/orders-0.9a1b2c3d4e5f40718293a4b5c6d7e8f9-delete/00000000000000000000.log") == "delete"
    assert dir_state("/d/orders-0.9a1b2c3d4e5f40718293a4b5c6d7e8f9-stray/00000000000000000000.log") == "stray"
    assert dir_state("/d/orders-0.9a1b2c3d4e5f40718293a4b5c6d7e8f9-future/x.index") == "future"
    assert dir_state(None) is None


def test_first_newer_version_keeps_the_first_of_each_record_type_and_version() -> None:
    def finding(broker: str, position: int, record_type: str | int, version: int, kind: str = "internal_record_"
                "newer_version") -> dict:
        return {"kind": kind, "severity": "info", "broker": broker, "topic": "__consumer_offsets", "partition": 0,
                "file": "f.log", "position": position, "offset": position, "producer_id": None,
                "producer_epoch": None, "message": "m",
                "details": json.dumps({"record_type": record_type, "version": version})}

    rows = [finding("b2", 1, "OffsetCommitValue", 5), finding("b1", 9, "OffsetCommitValue", 5),
            finding("b1", 3, "OffsetCommitValue", 6), finding("b1", 4, 7, 6), finding("b1", 5, "7", 6),
            finding("b1", 2, "x", 1, kind="internal_record_undecodable")]
    kept = first_newer_version(pa.Table.from_pylist(rows, schema=S.FINDINGS)).to_pylist()
    assert sorted((r["broker"], r["position"]) for r in kept) == [("b1", 2), ("b1", 3), ("b1", 4), ("b1", 9)]
