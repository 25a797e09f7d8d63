"""Whole-cluster checks on sample_logs: replicas against each other, the transaction coordinator against the
markers, committed consumer offsets against the log, and `kforensics report` (terminal, HTML, Chromium)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from conftest import SAMPLE_LOGS

from kforensics.cli import main

EXPECTED = json.loads((SAMPLE_LOGS / "EXPECTED.json").read_text())
PARTS = {b: info["partitions"] for b, info in EXPECTED["brokers"].items()}


def _table(out: Path, name: str) -> list[dict]:
    return pq.read_table(out / name).to_pylist()


def _findings(out: Path, kind: str) -> list[dict]:
    return [f | {"details": json.loads(f["details"])} for f in _table(out, "findings") if f["kind"] == kind]


# --- replicas ---------------------------------------------------------------------------------------

def test_replicas_table_against_what_was_written(full_scan: Path) -> None:
    rows = {(r["broker"], r["topic"], r["partition"]): r for r in _table(full_scan, "replicas")}
    for broker, parts in PARTS.items():
        for name, facts in parts.items():
            r = rows[(broker, facts["topic"], facts["partition"])]
            assert r["log_end_offset"] == facts["log_end_offset"], (broker, name)
            assert r["high_watermark"] == facts["high_watermark"], (broker, name)
            assert r["leader_epoch_checkpoint"] == ", ".join(f"{e}@{o}" for e, o in facts["leader_epochs"])
    # A lagging follower is in no divergence: it is behind, by exactly the batches it lacks.
    for topic in ("orders", "payments"):
        follower, leader = rows[("broker-2", topic, 0)], rows[("broker-1", topic, 0)]
        assert follower["diverged_at"] is None and follower["in_sync"] is False
        assert follower["lag"] == leader["log_end_offset"] - follower["log_end_offset"] > 0
        assert leader["in_sync"] is True and leader["longest_broker"] == "broker-1"
    old, new = rows[("broker-1", "inventory", 0)], rows[("broker-2", "inventory", 0)]
    assert (old["diverged_at"], old["in_sync"], old["lag"], old["longest_broker"]) == (60, False, None, "broker-2")
    assert (new["diverged_at"], new["in_sync"], new["latest_leader_epoch"]) == (None, True, 1)
    assert rows[("broker-1", "events", 0)]["replica_count"] == 1


def test_replica_divergence_names_the_lost_committed_offsets(full_scan: Path) -> None:
    found = _findings(full_scan, "replica_divergence")
    assert [(f["broker"], f["topic"], f["offset"]) for f in found] == [("broker-1", "inventory", 60)]
    f = found[0]
    planted = next(a for a in PARTS["broker-1"]["inventory-0"]["anomalies"] if a["kind"] == "replica_divergence")
    d = f["details"]
    assert f["severity"] == "error"
    assert (d["offset"], d["common_prefix_end_offset"], d["brokers"], d["lost_offsets"]) == (
        planted["offset"], planted["common_prefix_end_offset"], planted["brokers"], planted["lost_offsets"])
    assert d["winner"] == "broker-2" and d["lost_on"] == "broker-1"
    assert f["position"] == planted["position"] and f["file"].endswith("inventory-0/00000000000000000000.log")
    replicas = {r["broker"]: r for r in d["replicas"]}
    for broker in ("broker-1", "broker-2"):
        facts = PARTS[broker]["inventory-0"]
        assert replicas[broker]["log_end_offset"] == facts["log_end_offset"]
        assert replicas[broker]["high_watermark"] == facts["high_watermark"]
    assert (replicas["broker-1"]["leader_epoch_at_offset"], replicas["broker-2"]["leader_epoch_at_offset"]) == (0, 1)


def test_leader_epoch_lineage_side_by_side(full_scan: Path) -> None:
    rows = {(r["broker"], r["topic"], r["epoch"]): r for r in _table(full_scan, "leader_epoch_lineage")}
    assert (rows[("broker-2", "inventory", 1)]["checkpoint_start_offset"],
            rows[("broker-2", "inventory", 1)]["batch_start_offset"], rows[("broker-2", "inventory", 1)]["agrees"]) \
        == (60, 60, True)
    assert ("broker-1", "inventory", 1) not in rows
    # mangled-0's batches carry epoch 1 from offset 60; its checkpoint never lists epoch 1.
    bad = rows[("broker-1", "mangled", 1)]
    assert (bad["checkpoint_start_offset"], bad["batch_start_offset"], bad["agrees"]) == (None, 60, False)
    assert all(r["agrees"] in (True, None) for k, r in rows.items() if k[1] != "mangled")


# --- transaction coordinator ------------------------------------------------------------------------

def test_coordinator_transactions_follow_the_payments_markers(full_scan: Path) -> None:
    rows = [r for r in _table(full_scan, "coordinator_transactions")
            if r["transactional_id"] in ("payments-app-0", "payments-app-1")]
    written = [t for t in PARTS["broker-1"]["payments-0"]["transactions"] if t["outcome"] != "OPEN"]
    for pid, tid in ((2000, "payments-app-0"), (2001, "payments-app-1")):
        ours = [r["outcome"] for r in sorted(rows, key=lambda r: r["coordinator_first_offset"])
                if r["transactional_id"] == tid]
        theirs = [t["outcome"] for t in sorted(written, key=lambda t: t["marker_offset"]) if t["producer_id"] == pid]
        assert ours == theirs, tid
    for r in rows:
        assert r["partitions"] == ["payments-0"] and r["producer_id"] in (2000, 2001)
        assert r["states"][-1] in ("CompleteCommit", "CompleteAbort") and r["completed_at"] is not None
    fenced = [r for r in _table(full_scan, "coordinator_transactions") if r["transactional_id"] == "transfers-app-3"]
    states = sorted((r["coordinator_first_offset"], r["states"], r["producer_epoch"]) for r in fenced)
    assert states[0][1] == ["Empty", "Ongoing", "PrepareEpochFence", "PrepareAbort", "CompleteAbort"]
    assert (states[0][2], states[-1][1], states[-1][2]) == (1, ["Empty"], 2)


def test_coordinator_findings_name_the_transactional_id(full_scan: Path) -> None:
    planted = {a["kind"]: a for a in PARTS["broker-1"]["transfers-0"]["anomalies"]}
    for kind in ("marker_missing", "outcome_mismatch", "epoch_fenced_write", "unknown_producer"):
        found = _findings(full_scan, kind)
        assert [(f["broker"], f["topic"], f["offset"], f["producer_id"]) for f in found] == [
            ("broker-1", "transfers", planted[kind]["offset"], planted[kind]["producer_id"])], kind
        f = found[0]
        assert f["position"] == planted[kind]["position"]
        if kind != "unknown_producer":
            assert f["details"]["transactional_id"] == planted[kind]["transactional_id"]
            assert planted[kind]["transactional_id"] in f["message"]
    missing = _findings(full_scan, "marker_missing")[0]["details"]
    assert missing["partitions_not_in_input"] == ["ledger-0"] and missing["completed_at"] == planted[
        "marker_missing"]["completed_at"]
    assert _findings(full_scan, "outcome_mismatch")[0]["details"]["marker_outcome"] == "COMMIT"
    fenced = _findings(full_scan, "epoch_fenced_write")[0]["details"]
    assert (fenced["fenced_at"], fenced["fencing_epoch"]) == (planted["epoch_fenced_write"]["fenced_at"], 1)
    unknown = _findings(full_scan, "unknown_producer")[0]
    # 2 of the default 50 __transaction_state partitions are in the input: the producer may belong to another.
    assert unknown["severity"] == "warning"
    assert unknown["details"]["transaction_state_partitions_present"] == [0, 1]
    # Silence: payments-0 and txnbad-0 agree with their coordinators; a sound transfers-app-0 commit too.
    for f in _table(full_scan, "findings"):
        if f["kind"] in ("marker_missing", "outcome_mismatch", "epoch_fenced_write", "unknown_producer"):
            assert f["topic"] == "transfers"


def test_transactions_carry_the_transactional_id(full_scan: Path) -> None:
    ids = {(r["broker"], r["topic"], r["producer_id"]): r["transactional_id"] for r in _table(full_scan, "transactions")}
    assert ids[("broker-1", "payments", 2000)] == ids[("broker-2", "payments", 2000)] == "payments-app-0"
    assert ids[("broker-1", "payments", 2001)] == "payments-app-1"
    assert ids[("broker-1", "txnbad", 7000)] == "txnbad-app"
    assert ids[("broker-1", "transfers", 8003)] == "transfers-app-3"
    assert ids[("broker-1", "transfers", 8002)] is None


def test_unknown_producer_severity_follows_coverage(spark, full_scan: Path) -> None:
    from pyspark.sql import functions as F

    cluster = F.lit("kforensics-sample-cluster").alias("cluster_id")
    txns = spark.read.parquet(str(full_scan / "transactions")).select("*", cluster)
    from unit_frames import run_check, run_model

    # every record of the input, not only the longest replicas' (coordinator_log): the model over them
    known = run_model("transactional_ids", coordinator_log=spark.read.parquet(str(full_scan / "coordinator_records"))
                      .select("*", cluster))
    # the __transaction_state partition dirs in the input (broker-1's -0, broker-2's -1)
    dirs = spark.createDataFrame([("broker-1", "__transaction_state", 0, "p", "live"),
                                  ("broker-2", "__transaction_state", 1, "p", "live")],
                                 "broker string, topic string, partition int, path string, dir_state string")
    brokers = spark.createDataFrame([(b, "kforensics-sample-cluster", n) for n, b in enumerate(("broker-1", "broker-2"))],
                                    "broker string, cluster_id string, node_id int")
    def unknown(dirs, partitions: int):
        return run_check("unknown_producer", {"transaction_state_partitions": partitions}, timed_transactions=txns,
                         transactional_ids=known, partition_dirs=dirs, brokers=brokers)

    for partitions, severity in ((2, "error"), (50, "warning")):
        rows = unknown(dirs, partitions).collect()
        assert [(r["producer_id"], r["severity"]) for r in rows] == [(8002, severity)]
    assert unknown(dirs.limit(0), 2).count() == 0  # no coordinator: not judged


# --- consumer offsets -------------------------------------------------------------------------------

def test_consumer_offsets_latest_commit_and_status(full_scan: Path) -> None:
    rows = {(r["group_id"], r["topic"], r["partition"]): r for r in _table(full_scan, "consumer_offsets")}
    status = {k: (r["committed_offset"], r["status"]) for k, r in rows.items()}
    assert status[("billing", "payments", 0)][1] == "in_aborted_range"
    assert status[("archiver", "retained", 0)] == (120, "below_log_start")
    assert status[("analytics", "events", 0)] == (110, "beyond_log_end")
    assert status[("analytics", "legacy", 0)] == (30, "ok")          # the later commit wins
    assert status[("billing", "ledger", 0)] == (5, "not_in_input")
    assert status[("orders-service", "orders", 0)] == (370, "ok")   # beyond broker-2's lagging copy, not the log
    assert status[("inventory-sync", "inventory", 0)] == (130, "ok")
    assert rows[("inventory-sync", "inventory", 0)]["data_broker"] == "broker-2"
    assert ("old-reports", "events", 0) not in rows and ("old-group", "orders", 0) not in rows  # tombstones


def test_committed_offset_findings_name_the_group(full_scan: Path) -> None:
    planted = PARTS["broker-2"]["__consumer_offsets-1"]["anomalies"]
    for a in planted:
        found = _findings(full_scan, a["kind"])
        assert len(found) == 1, a["kind"]
        f = found[0]
        assert (f["broker"], f["topic"], f["partition"], f["offset"], f["position"]) == (
            "broker-2", a["topic"], a["partition"], a["offset"], a["position"])
        assert f["details"]["group"] == a["group"] and a["group"] in f["message"]
        assert f["file"].endswith("__consumer_offsets-1/00000000000000000000.log")


# --- CLI: txns and report ---------------------------------------------------------------------------

def test_txns_cli_shows_the_transactional_id(full_scan: Path) -> None:
    result = CliRunner().invoke(main, ["txns", str(full_scan), "--json", "--topic", "transfers"])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert {(line["producer_id"], line["transactional_id"]) for line in lines} == {
        (8000, "transfers-app-0"), (8001, "transfers-app-1"), (8003, "transfers-app-3"), (8002, None)}


def test_report_terminal_tables(full_scan: Path) -> None:
    result = CliRunner().invoke(main, ["report", str(full_scan)])
    assert result.exit_code == 1, result.output
    for text in ("findings by kind", "replica_divergence", "replicas", "coordinator transactions",
                 "consumer offsets", "transfers-app-3", "ledger-0", "divergence of inventory-0 at offset 60",
                 "leader-epoch lineage", "- / 60 (disagrees)", "60 / 60",
                 "tiered storage: remote and local coverage", "200-249 COPY_SEGMENT_STARTED"):
        assert text in result.output, text
    clicks = next(line for line in result.output.splitlines() if "│ clicks" in line and "0-199, 250-349" in line)
    # remote (finished), other states, local, in neither tier
    assert [c.strip() for c in clicks.split("│")[4:8]] == ["0-199, 250-349", "200-249 COPY_SEGMENT_STARTED",
                                                           "300-399", "200-249"]
    bad = CliRunner().invoke(main, ["report", str(SAMPLE_LOGS)])
    assert bad.exit_code == 2 and "kforensics scan" in bad.output


@pytest.fixture(scope="module")
def html_report(full_scan: Path, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("report") / "report.html"
    result = CliRunner().invoke(main, ["report", str(full_scan), "--html", str(path)])
    assert result.exit_code == 1, result.output
    return path


def test_report_html_holds_the_expected_elements(full_scan: Path, html_report: Path) -> None:
    text = html_report.read_text()
    kinds = {f["kind"] for f in _table(full_scan, "findings")}
    sections = set(re.findall(r"<section class='finding-kind'(?: id='[^']*')? data-kind='([a-z_]+)'>", text))
    assert sections == kinds
    timelines = re.findall(r"<figure class='timeline'(?: id='[^']*')? data-partition='([^']+)' data-broker='([^']+)'>", text)
    replicas = {(f"{r['topic']}-{r['partition']}", r["broker"]) for r in _table(full_scan, "replicas")}
    assert set(timelines) == replicas and len(timelines) == len(replicas) and ("transfers-0", "broker-1") in timelines
    assert re.findall(r"<figure class='divergence' data-partition='([^']+)'>", text) == ["inventory-0"]
    tiered = re.findall(r"<figure class='tiered' data-partition='([^']+)' data-broker='([^']+)'>", text)
    assert sorted(tiered) == [("clicks-0", "broker-1"), ("views-0", "broker-1")]
    assert "in neither tier 200-249" in text and "id='tiered-table'" in text
    assert text.count("<svg") == len(timelines) + 1 + len(tiered)
    for table_id in ("summary-table", "findings-by-kind", "replicas-table", "lineage-table", "coordinator-table",
                     "consumer-offsets-table", "partitions-table"):
        assert f"id='{table_id}'" in text
    # Self-contained: nothing to fetch, nothing to run.
    assert not re.search(r"(src|href)=['\"]?(https?:)?//", text) and "<script" not in text
    assert "<link" not in text and "@import" not in text


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
#: Network off: every host resolves to nothing and any proxy connection is refused.
OFFLINE = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run", "--host-resolver-rules=MAP * ~NOTFOUND",
           "--proxy-server=127.0.0.1:9", "--enable-logging=stderr", "--v=0"]


#: Tall enough for the whole sample report: the incidents (issue 49) come first, the plots after them.
WINDOW_HEIGHT = 40000


def _chromium(page: Path, shot: Path, profile: Path) -> list[str]:
    """Load a page in headless Chromium with the network off, screenshot it (a window tall enough for the
    whole sample report); returns its console messages."""
    proc = subprocess.run([CHROMIUM, *OFFLINE, f"--user-data-dir={profile}", f"--screenshot={shot}",
                           f"--window-size=1400,{WINDOW_HEIGHT}", page.as_uri()], capture_output=True, text=True,
                          timeout=120,
                          env={**os.environ, "HOME": str(profile)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    return [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]


@pytest.mark.process
@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (.ci/run installs Debian's package)")
def test_report_renders_in_headless_chromium(html_report: Path, tmp_path: Path) -> None:
    import matplotlib.image as mpimg
    import numpy as np

    # The console check can fail: a page that logs an error is caught.
    bad = tmp_path / "bad.html"
    bad.write_text("<html><body><script>console.error('boom')</script></body></html>")
    assert any("boom" in line for line in _chromium(bad, tmp_path / "bad.png", tmp_path / "p1"))

    shot = tmp_path / "report.png"
    assert _chromium(html_report, shot, tmp_path / "p2") == []
    pixels = mpimg.imread(shot)[:, :, :3]
    assert pixels.shape[0] == WINDOW_HEIGHT and pixels.std() > 0.05

    def share(hex_colour: str) -> float:
        rgb = np.array([int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5)])
        return float((np.abs(pixels - rgb).max(axis=2) < 0.06).mean())

    # The plots are on screen: the LSO's purple step line (timelines) and the red dashed divergence line.
    assert share("#7a5af8") > 1e-5 and share("#d92d20") > 1e-6


def test_scan_summary_lists_what_was_not_judged(spark, full_scan: Path) -> None:
    from kforensics.scan_output import summarize

    summary = summarize(str(full_scan))
    assert summary.not_in_input == ["ledger-0"]
    kinds = {kind for kind, _sev, _n in summary.findings}
    assert {"replica_divergence", "marker_missing", "committed_offset_beyond_log_end"} <= kinds


def test_internal_topic_records_that_do_not_decode_become_findings(tmp_path: Path) -> None:
    """A coordinator record of a newer version than the tables know, and one whose bytes do not decode, are each
    reported with their place, and the records around them are still read (the executor function, no Spark)."""
    import struct

    import pyarrow as pa
    from kafka.record.default_records import DefaultRecordBatchBuilder

    from kforensics.spark import schemas as S
    from kforensics.spark.read import internal_rows

    def tid_key(tid: str) -> bytes:
        return struct.pack(">hh", 0, len(tid)) + tid.encode()

    good = struct.pack(">hqhib", 0, 42, 3, 60_000, 0) + struct.pack(">i", 0) + struct.pack(">qq", 1000, -1)
    builder = DefaultRecordBatchBuilder(2, 0, False, -1, -1, -1, 1 << 20)
    # a version newer than the tables know (a newer Kafka wrote it: not damage), then bytes no version can read
    for delta, value in enumerate((good, struct.pack(">h", 9) + b"\x00" * 8, struct.pack(">hq", 0, 42) + b"\x00",
                                   good)):
        builder.append(delta, timestamp=1000 + delta, key=tid_key(f"app-{delta}"), value=value, headers=[])
    part = tmp_path / "__transaction_state-7"
    part.mkdir()
    (part / "00000000000000000000.log").write_bytes(bytes(builder.build()))
    task = {"task_kind": "segment", "broker": "b", "topic": "__transaction_state", "partition": 7,
            "path": str(part / "00000000000000000000.log"), "base_offset": 0, "headers_only": True}
    rows = [r for batch in internal_rows(iter([pa.RecordBatch.from_pylist([task], schema=S.TASKS)]))
            for r in batch.to_pylist()]
    assert [(r["row_kind"], r["offset"], r["transactional_id"]) for r in rows] == [
        ("txn", 0, "app-0"), ("finding", 1, None), ("finding", 2, None), ("txn", 3, "app-3")]
    newer, damaged = rows[1], rows[2]
    assert newer["kind"] == "internal_record_newer_version" and newer["severity"] == "info"
    assert newer["position"] == 0 and "version 9" in newer["message"]
    assert damaged["kind"] == "internal_record_undecodable" and damaged["severity"] == "warning"
    assert damaged["position"] == 0 and "offset 2" in damaged["message"]
    assert (rows[0]["producer_id"], rows[0]["producer_epoch"], rows[0]["state"]) == (42, 3, "Empty")
