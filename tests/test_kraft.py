"""End to end on the sample KRaft cluster (sample_logs/kraft-1..3, generate_kraft.py): the metadata log replayed into
partition_history, broker_history, topics and features, and each planted control-plane fact found exactly, nothing
else; the real single-node KRaft logs of ../shared/realdata replay to a consistent state without a finding."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import REALDATA, SAMPLE_LOGS

from kforensics.scan_output import read_table

KRAFT = json.loads((SAMPLE_LOGS / "EXPECTED.json").read_text())["kraft"]
CONTROL_PLANE_KINDS = {"unclean_leader_election", "stray_partition", "offline_partition", "leader_epoch_unknown"}


def _findings(out: Path) -> list[dict]:
    return [{**f, **json.loads(f["details"] or "{}")} for f in read_table(str(out), "findings")]


def test_each_planted_fact_is_found_exactly_and_nothing_else(kraft_scan: Path) -> None:
    found = _findings(kraft_scan)
    problems = sorted((f["kind"], f["broker"], f["topic"], f["partition"]) for f in found
                      if f["severity"] in ("error", "warning"))
    assert problems == sorted((p["kind"], p["broker"], p["topic"], p["partition"]) for p in KRAFT["findings"])
    for planted in KRAFT["findings"]:
        (f,) = [f for f in found if (f["kind"], f["broker"], f["topic"]) == (planted["kind"], planted["broker"],
                                                                            planted["topic"])]
        for key, value in planted.items():
            if key == "file":
                assert f["file"].endswith(f"{planted['broker']}/{value}"), (key, f)
            else:
                assert f.get(key) == value, (planted["kind"], key, f.get(key), value)


def test_unclean_election_message_names_the_cost(kraft_scan: Path) -> None:
    (f,) = [f for f in _findings(kraft_scan) if f["kind"] == "unclean_leader_election"]
    assert "Broker 2 was elected leader of ledger-0 (leader epoch 2" in f["message"]
    assert "committed offsets 60-89 on broker kraft-1" in f["message"]
    (s,) = [f for f in _findings(kraft_scan) if f["kind"] == "stray_partition"]
    assert "only remaining copy" in s["message"]


def test_partition_history_is_the_replay_of_the_reference_copy(kraft_scan: Path) -> None:
    rows = read_table(str(kraft_scan), "partition_history")
    assert {(r["cluster_id"], r["metadata_broker"]) for r in rows} == {(KRAFT["cluster_id"], "kraft-2")}
    got = sorted((r["topic"], r["metadata_offset"], r["election"], r["leader"], r["leader_epoch"], r["isr"],
                  r["leader_recovery_state"]) for r in rows)
    base = KRAFT["snapshot_end_offset"] - 1  # the reference copy starts from its snapshot
    # a PartitionRecord the generator wrote at creation is, in the reference copy, one of its snapshot's: the replay's
    # baseline (`snapshot`), not an election
    expected = sorted((h["topic"], base if h["election"] == "initial" else h["metadata_offset"],
                       "snapshot" if h["election"] == "initial" else h["election"],
                       h["leader"], h["leader_epoch"], h["isr"], h["leader_recovery_state"])
                      for h in KRAFT["partition_history"])
    assert got == expected
    unclean = next(r for r in rows if r["election"] == "unclean")
    assert (unclean["previous_leader"], unclean["previous_isr"], unclean["previous_elr"], unclean["partition_epoch"],
            unclean["replicas"], unclean["topic_id"]) == (-1, [1], [], 3, [1, 2], KRAFT["topic_ids"]["ledger"])
    assert all(r["file"].endswith(".checkpoint") == (r["election"] == "snapshot") for r in rows)


def test_broker_history_topics_and_features(kraft_scan: Path) -> None:
    events = sorted((r["metadata_offset"], r["broker_id"], r["event"], r["fenced"], r["in_controlled_shutdown"])
                    for r in read_table(str(kraft_scan), "broker_history"))
    base = KRAFT["snapshot_end_offset"] - 1
    assert events == [(base, 1, "registered", False, False), (base, 2, "registered", False, False),
                      (base, 3, "registered", False, False), (base + 2, 2, "controlled_shutdown", False, True),
                      (base + 4, 2, "fenced", True, True), (base + 5, 2, "registered", True, False),
                      (base + 6, 2, "unfenced", False, False), (base + 8, 1, "fenced", True, False)]
    topics = {r["topic"]: r for r in read_table(str(kraft_scan), "topics")}
    assert set(topics) == {"ledger", "audit", "scratch"}  # ghost was created in an aborted metadata transaction
    assert topics["scratch"]["deleted_offset"] == KRAFT["deleted_offset"] and topics["ledger"]["deleted_offset"] is None
    assert all(t["partitions"] == 1 and t["created_offset"] is None for t in topics.values())  # from the snapshot
    features = {(r["feature"], r["feature_level"]) for r in read_table(str(kraft_scan), "features")}
    assert ("metadata.version", 25) in features and len(features) == 4


def test_scan_without_metadata_writes_the_tables_empty(full_scan: Path) -> None:
    for table in ("partition_history", "broker_history", "topics", "features"):
        assert read_table(str(full_scan), table) == []


@pytest.fixture(scope="module")
def realdata_kraft_scan(spark, realdata, tmp_path_factory) -> Path:
    from kforensics.spark.jobs import run_scan

    # the six real KRaft clusters in one scan (each its own cluster.id: nothing is compared across them)
    inputs = [("ronem", str(REALDATA / "ronem123-rupia-kraft" / "kafka-logs")),
              ("christseng", str(REALDATA / "christseng89-realtime-kraft" / "kafka-logs")),
              ("niloufar", str(REALDATA / "niloufar-ldi-poc-kraft")),
              ("bigdatatech", str(REALDATA / "ksqldb-bigdatatech-v2" / "kafka_data")),
              ("flink", str(REALDATA / "flink-on-prem-cp76" / "data")),
              ("admissions", str(REALDATA / "ksqldb-patient-admissions-cp" / "kafka-data"))]
    out = tmp_path_factory.mktemp("scan-realdata-kraft")
    run_scan(spark, inputs, str(out), headers_only=True)
    return out


def test_real_kraft_logs_replay_to_a_consistent_state(realdata_kraft_scan: Path) -> None:
    out = str(realdata_kraft_scan)
    first_three = {"ronem", "christseng", "niloufar"}
    history = [r for r in read_table(out, "partition_history") if r["metadata_broker"] in first_three]
    assert history and {r["metadata_broker"] for r in history} == {"ronem", "niloufar"}
    # every change record applies to a partition the replay knows (from the snapshot or a PartitionRecord)
    assert all(r["election"] is not None and r["leader_epoch"] is not None for r in history)
    assert not [f for f in _findings(realdata_kraft_scan) if f["kind"] in CONTROL_PLANE_KINDS | {"replica_divergence"}]
    # ronem: the log starts at 1725413 (the older segment is not in the copy); the snapshot at 1734780 is the base
    ronem = [r for r in history if r["metadata_broker"] == "ronem"]
    assert {r["metadata_offset"] for r in ronem if r["record_type"] == "PARTITION_RECORD"} == {1734779}
    # both end stopped: the broker in controlled shutdown, every partition without a leader; shown, not reported
    for broker in ("ronem", "niloufar"):
        last = {}
        for r in sorted((r for r in history if r["metadata_broker"] == broker), key=lambda r: r["metadata_offset"]):
            last[(r["topic_id"], r["partition"])] = r
        assert {r["leader"] for r in last.values()} == {-1}, broker
    brokers = read_table(out, "broker_history")
    assert any(r["event"] == "controlled_shutdown" for r in brokers if r["metadata_broker"] == "ronem")
    features = {(r["metadata_broker"], r["feature"]) for r in read_table(out, "features")}
    assert ("christseng", "metadata.version") in features and ("ronem", "eligible.leader.replicas.version") in features


def test_more_real_kraft_logs_replay_silently(realdata_kraft_scan: Path) -> None:
    """Three more real clusters: ksqldb-bigdatatech-v2 ends running (a live broker, its partitions re-elected after
    the restart: no offline partition may be reported), flink-on-prem-cp76 (Confluent 7.6, 151 partitions, two
    snapshots) ends stopped, ksqldb-patient-admissions-cp has snapshots only. The replay knows every partition a
    change record names, and no control-plane finding is made on these healthy clusters."""
    out = str(realdata_kraft_scan)
    history = [r for r in read_table(out, "partition_history")
               if r["metadata_broker"] in ("bigdatatech", "flink", "admissions")]
    assert {r["metadata_broker"] for r in history} == {"bigdatatech", "flink", "admissions"}
    assert all(r["election"] is not None and r["leader_epoch"] is not None for r in history)
    assert not [f for f in _findings(realdata_kraft_scan)
                if f["kind"] in CONTROL_PLANE_KINDS | {"replica_divergence"}]
    brokers = read_table(out, "broker_history")
    last: dict[tuple, dict] = {}
    for r in sorted(brokers, key=lambda r: r["metadata_offset"]):
        last[(r["metadata_broker"], r["broker_id"])] = r
    running = {b for (b, _), r in last.items() if not r["fenced"] and not r["in_controlled_shutdown"]}
    assert "bigdatatech" in running  # the cluster runs at the end of its log: offline_partition judges it
    led = {}
    for r in sorted((r for r in history if r["metadata_broker"] == "bigdatatech"), key=lambda r: r["metadata_offset"]):
        led[(r["topic_id"], r["partition"])] = r["leader"]
    assert led and -1 not in led.values()


def test_leaders_command(kraft_scan: Path) -> None:
    from click.testing import CliRunner

    from kforensics.cli import main

    result = CliRunner().invoke(main, ["leaders", str(kraft_scan), "--topic", "led*", "--json"])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.output.splitlines()]
    assert [(r["metadata_offset"], r["leader_epoch"], r["leader"], r["isr"], r["election"]) for r in lines] == [
        (21, 0, 1, [1, 2], "snapshot"), (22, 0, 1, [1], "none"), (30, 1, -1, [1], "offline"),
        (31, 2, 2, [2], "unclean"), (32, 2, 2, [2], "none")]
    assert lines[3]["time"] == "2025-11-20T15:02:00.000Z" and lines[3]["leader_recovery_state"] == "RECOVERING"
    table = CliRunner().invoke(main, ["leaders", str(kraft_scan), "--partition", "0"])
    assert table.exit_code == 0 and "unclean" in table.output and "audit" in table.output


def test_html_report_draws_the_leadership_lanes(kraft_scan: Path, tmp_path: Path) -> None:
    from kforensics.report import load_report, render_html

    page = tmp_path / "r.html"
    render_html(load_report(str(kraft_scan)), str(page))
    text = page.read_text()
    assert text.count("class='leadership'") == 3
    assert ("<bdi>ledger</bdi>-0: epoch 1 offline (leader -1, metadata offset 30); epoch 2 unclean (leader 2, metadata "
            "offset 31)") in text
    assert "<bdi>audit</bdi>-0: epoch 1 clean (leader 3, metadata offset 24)" in text
