"""sample_logs/groups-1 (sample_logs/generate_groups.py) scanned once: the group tables hold the rows
EXPECTED_GROUPS.json lists, the findings are exactly the planted ones, `kforensics groups` prints them, the HTML report
draws them, and regenerating the sample gives the same bytes."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from conftest import REPO, SAMPLE_LOGS

from kforensics.cli import main

EXPECTED = json.loads((SAMPLE_LOGS / "EXPECTED_GROUPS.json").read_text())
BROKER = EXPECTED["broker"]


@pytest.fixture(scope="session")
def groups_scan(spark, tmp_path_factory) -> Path:
    """One headers-only scan of sample_logs/groups-1 for the session (group records are decoded in every mode)."""
    from kforensics.spark.jobs import run_scan

    out = tmp_path_factory.mktemp("scan-groups")
    run_scan(spark, [(BROKER, str(SAMPLE_LOGS / BROKER))], str(out), headers_only=True)
    return out


def _table(out: Path, name: str) -> list[dict]:
    return pq.read_table(out / name).to_pylist()


def _project(rows: list[dict], expected: list[dict]) -> tuple[list, list]:
    """The table's rows and the expected ones on the columns the expected rows name, both sorted."""
    keys = sorted({k for e in expected for k in e})
    norm = lambda rows: sorted(tuple((v is not None, v) for v in (r.get(k) for k in keys)) for r in rows)  # noqa: E731
    return norm(rows), norm(expected)


def test_the_findings_are_exactly_the_planted_ones(groups_scan: Path) -> None:
    found = _table(groups_scan, "findings")
    assert sorted((f["kind"], f["topic"], f["partition"], f["offset"]) for f in found) == sorted(
        (p["kind"], p["topic"], p["partition"], p["offset"]) for p in EXPECTED["findings"])
    for planted in EXPECTED["findings"]:
        (f,) = [f for f in found if (f["kind"], f["topic"], f["partition"]) == (
            planted["kind"], planted["topic"], planted["partition"])]
        details = json.loads(f["details"])
        assert f["broker"] == BROKER and f["position"] == planted["position"], f
        assert Path(f["file"]).name == planted["file"] and Path(f["file"]).parent.name == planted[
            "coordinator_partition"], f
        for key in ("group", "members", "group_type", "member_id", "member_client_id", "log_end_offset",
                    "log_start_offset", "deleted_offsets", "first_offset", "last_offset", "delivery_count",
                    "leader_epoch", "recorded_leader_epoch"):
            if key in planted:
                assert details[key] == planted[key], (planted["kind"], key, details)


def test_group_members(groups_scan: Path) -> None:
    rows = [r for r in _table(groups_scan, "group_members") if r["group"] in ("billing", "orders-app")]
    got, want = _project(rows, EXPECTED["group_members"])
    assert got == want
    everyone = {(r["group"], r["group_type"]) for r in _table(groups_scan, "group_members")}
    assert everyone == {("billing", "classic"), ("orders-app", "consumer"), ("fraud-check", "consumer"),
                        ("wordcount", "streams"), ("alerts-share", "share")}


def test_group_assignments(groups_scan: Path) -> None:
    rows = [r for r in _table(groups_scan, "group_assignments") if r["group"] != "fraud-check"]
    got, want = _project(rows, EXPECTED["group_assignments"])
    assert got == want


def test_consumer_lag_and_share_partition_state(groups_scan: Path) -> None:
    got, want = _project(_table(groups_scan, "consumer_lag"), EXPECTED["consumer_lag"])
    assert got == want
    got, want = _project(_table(groups_scan, "share_partition_state"), EXPECTED["share_partition_state"])
    assert got == want


def test_kforensics_groups_lines(groups_scan: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["groups", str(groups_scan), "--group", "orders-app", "--json"])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.output.splitlines()]
    assert [t for t in ("member", "assignment", "commit", "lag") if any(r["type"] == t for r in lines)] == [
        "member", "assignment", "commit", "lag"]
    assert {r["group"] for r in lines} == {"orders-app"}
    # in force at m1's first epoch: m1 alone, owning the three partitions; the commits written by then
    first = next(r for r in lines if r["type"] == "assignment" and r["member_epoch"] == 1)
    result = runner.invoke(main, ["groups", str(groups_scan), "--group", "orders-app", "--json", "--at",
                                  first["from_time"]])
    at = [json.loads(line) for line in result.output.splitlines()]
    assert sorted((r["member_id"], r["partition"]) for r in at if r["type"] == "assignment") == [
        (first["member_id"], p) for p in (0, 1, 2)]
    assert not [r for r in at if r["type"] == "commit"]
    shared = runner.invoke(main, ["groups", str(groups_scan), "--group", "alerts-share", "--json"])
    states = [json.loads(line) for line in shared.output.splitlines() if '"share_partition"' in line]
    assert {(s["partition"], s["start_offset"]) for s in states} == {(0, 16), (1, 25), (2, 150)}
    assert runner.invoke(main, ["groups", str(groups_scan), "--at", "yesterday"]).exit_code == 2


def test_the_cli_page_shows_what_kforensics_groups_prints(groups_scan: Path) -> None:
    """docs/cli.md's `kforensics groups` example is the sample's output (its OUT named ./groups-out there)."""
    page = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    block = page[page.index("$ kforensics groups ./groups-out --group billing"):]
    block = block[:block.index("```")].splitlines()
    result = CliRunner().invoke(main, ["groups", str(groups_scan), "--group", "billing"])
    assert result.exit_code == 0
    assert [line.rstrip() for line in result.output.splitlines()] == [line.rstrip() for line in block[1:]]


def test_regenerating_the_groups_sample_gives_identical_bytes(tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(SAMPLE_LOGS / "generate_groups.py"), str(tmp_path)], check=True,
                   capture_output=True)

    def tree(root: Path) -> dict[str, str]:
        return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
                for p in sorted([*(root / BROKER).rglob("*"), root / "EXPECTED_GROUPS.json"]) if p.is_file()}

    assert tree(tmp_path) == tree(SAMPLE_LOGS) and len(tree(tmp_path)) > 50


def test_the_html_report_draws_a_lane_per_partition_colored_by_owner(groups_scan: Path, tmp_path: Path) -> None:
    from kforensics.report import load_report, render_html

    report = load_report(str(groups_scan))
    assert {(g["group"], g["group_type"], g["members"], g["partitions"]) for g in report.groups} == {
        ("billing", "classic", 2, 2), ("orders-app", "consumer", 3, 3), ("fraud-check", "consumer", 2, 1),
        ("wordcount", "streams", 2, 3), ("alerts-share", "share", 2, 3)}
    page = tmp_path / "r.html"
    render_html(report, str(page))
    text = page.read_text()
    assert text.count("class='group-ownership'") == 5 and "id='groups-table'" in text
    assert "<bdi>orders-app</bdi>: 2 member(s) over 3 partition(s)" in text  # m3 owns nothing yet
