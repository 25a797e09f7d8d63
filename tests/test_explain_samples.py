"""`kforensics explain` over every committed sample and every data set of ../shared/realdata (issue 49).

Each sample explains without error, and its incidents are exactly the findings table's `incident_id`s: every warning
and error finding sits in exactly one incident, each incident lists its own findings (its cause among them), its
severity is its worst finding's, its timeline runs in time order and its plan saves before it destroys. And each
sample's incidents are the ones its generator planted (`incidents` in its EXPECTED file: each planted cause and the
planted findings that follow from it, from the generator's own bookkeeping): the same causes, the same members. The
incident sample's story against its hand-counted ground truth is tests/test_incident.py. The real broker disks explain to no
warning or error incident but their copies' gaps: tests/test_scan.py, on the realdata test's scans."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import SAMPLE_LOGS

from kforensics.cli import main
from kforensics.scan_output import read_table

_RANK = {"error": 0, "warning": 1, "info": 2}
#: The samples tests/conftest.py does not scan already: (inputs, headers_only, EXPECTED file).
OTHER_SAMPLES = {
    "compacted": (["compacted-1"], False, "EXPECTED-compacted.json"),
    "eos": (["eos-1", "eos-2"], False, "EXPECTED_EOS.json"),
    "groups": (["groups-1"], False, "EXPECTED_GROUPS.json"),
}
EXPECTED = json.loads((SAMPLE_LOGS / "EXPECTED.json").read_text())


def _key(f: dict) -> tuple:
    return f["kind"], f["broker"], f["topic"], f["partition"], f["offset"], f["producer_id"]


def _shape(incidents: list[dict]) -> list[tuple]:
    """Incidents as (cause, members), comparable whatever their order (a key with None in it does not sort)."""
    return sorted((repr(_key(r["cause"])), sorted(repr(_key(f)) for f in r["findings"])) for r in incidents)


def _as_planted(incidents: list[dict], planted: list[dict]) -> None:
    """The scan's incidents are the planted ones: each planted cause an incident's cause, with exactly the planted
    findings that follow from it; no incident the planting did not make."""
    assert planted and all(_key(r["cause"]) in {_key(f) for f in r["findings"]} for r in planted)
    assert _shape(incidents) == _shape(planted)


def _explained(out: Path) -> list[dict]:
    """`explain --json` of a finished scan, held to the findings table and to the contract's invariants."""
    result = CliRunner().invoke(main, ["explain", str(out), "--json"])
    assert result.exit_code in (0, 1), result.output[-3000:]
    incidents = [json.loads(line) for line in result.stdout.splitlines()]
    findings = read_table(str(out), "findings")
    problems = [f for f in findings if f["severity"] in ("warning", "error")]
    assert result.exit_code == (1 if problems else 0)
    by_id = {r["id"]: r for r in incidents}
    assert len(by_id) == len(incidents)
    assert all(f["incident_id"] in by_id for f in problems)  # each in one incident: incident_id is one value
    for r in incidents:
        mine = [f for f in findings if f["incident_id"] == r["id"]]
        assert Counter(_key(f) for f in r["findings"]) == Counter(_key(f) for f in mine), r["id"]
        assert _key(r["cause"]) in {_key(f) for f in mine}
        assert r["severity"] == min((f["severity"] for f in mine), key=_RANK.__getitem__)
        assert r["type"] == "incident" and r["title"]
        timed = [e["at"] for e in r["timeline"] if e["at"] is not None]
        assert timed == sorted(timed) and all(e["at"] is None for e in r["timeline"][len(timed):])
        steps = r["actions"]
        assert [a["step"] for a in steps] == list(range(1, len(steps) + 1))
        saves = [a["step"] for a in steps if a["command"].startswith("kforensics export")]
        destructive = [a["step"] for a in steps if a["destructive"]]
        assert not saves or not destructive or max(saves) < min(destructive), steps
        cost = r["cost"]
        assert set(cost) == {"records_lost", "acknowledged_records_lost", "lost_offsets", "groups_affected",
                             "transactions_stuck"}
        assert cost["acknowledged_records_lost"] is None or cost["records_lost"] is None or \
            0 <= cost["acknowledged_records_lost"] <= cost["records_lost"]
    return incidents


def test_the_sample_brokers_explain(full_scan: Path) -> None:
    incidents = _explained(full_scan)
    _as_planted(incidents, EXPECTED["incidents"])
    assert any(r["severity"] == "error" for r in incidents)
    # the planted diverged replica: inventory-0's lost range on broker-1, counted from the bytes
    (divergence,) = [r for r in incidents if r["cause"]["kind"] == "replica_divergence"]
    assert [(o["broker"], o["topic"], o["from"]) for o in divergence["cost"]["lost_offsets"]] == [
        ("broker-1", "inventory", 60)]
    # the damaged segment's restart trims what the damage holds: one incident, not three
    (damaged,) = [r for r in incidents if r["cause"]["kind"] == "truncated_tail"]
    assert {"restart_trims_tail", "truncated_tail"} <= {f["kind"] for f in damaged["findings"]}


def test_the_kraft_sample_explains(kraft_scan: Path) -> None:
    _as_planted(_explained(kraft_scan), EXPECTED["kraft"]["incidents"])


def test_the_incident_sample_explains(incident_scan: Path) -> None:
    """One incident, the election's, holding every finding (each planted finding names its `incident`)."""
    truth = json.loads((SAMPLE_LOGS / "EXPECTED_INCIDENT.json").read_text())
    planted = truth["findings"] + truth["findings_full_only"]
    causes = {json.dumps(f["incident"], sort_keys=True): f["incident"] for f in planted}
    _as_planted(_explained(incident_scan), [
        {"cause": cause, "findings": [f for f in planted if f["incident"] == cause]} for cause in causes.values()])


@pytest.fixture(scope="module", params=sorted(OTHER_SAMPLES))
def other_scan(request, spark, tmp_path_factory) -> Path:
    from kforensics.spark.jobs import run_scan

    brokers, headers_only, expected = OTHER_SAMPLES[request.param]
    out = tmp_path_factory.mktemp(f"scan-{request.param}")
    run_scan(spark, [(b, str(SAMPLE_LOGS / b)) for b in brokers], str(out), headers_only=headers_only)
    return out, json.loads((SAMPLE_LOGS / expected).read_text())["incidents"]


def test_the_other_samples_explain(other_scan: tuple[Path, list[dict]]) -> None:
    out, planted = other_scan
    _as_planted(_explained(out), planted)
