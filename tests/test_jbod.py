"""Issue 50 point 3 end to end: one broker's several log dirs given under one label (JBOD), on real files made from
the sample KRaft cluster (sample_logs/kraft-1..3, whose metadata log assigns every replica of broker 3 to the
directory.id of kraft-3's meta.properties). A replica moved to a sibling dir behind the controller's back, and dirs
of another node, a clone and an unformatted one are found; a replica being moved (a -future dir) is silent, and so is
everything else a plain scan of the cluster finds."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner
from conftest import SAMPLE_LOGS

from kforensics.cli import main
from kforensics.inputs import input_problem, label_problem, parse_inputs
from kforensics.scan_output import read_table

KRAFT = json.loads((SAMPLE_LOGS / "EXPECTED.json").read_text())["kraft"]
OFFSET_CHECKPOINTS = ("recovery-point-offset-checkpoint", "replication-offset-checkpoint",
                      "log-start-offset-checkpoint")
FUTURE = "audit-0.0123456789abcdef0123456789abcdef-future"


def _meta(props: Path, **changes: str) -> str:
    lines = [line for line in props.read_text().splitlines() if line and not line.startswith("#")]
    values = dict(line.split("=", 1) for line in lines)
    values.update(changes)
    return "".join(f"{k}={v}\n" for k, v in values.items())


def _split_checkpoints(source: Path, target: Path, partition: str) -> None:
    """Kafka's checkpoint of each dir names the partitions of that dir: `partition`'s entries move to `target`."""
    for name in OFFSET_CHECKPOINTS:
        path = source / name
        version, _, *entries = path.read_text().splitlines()
        moved = [e for e in entries if " ".join(e.split()[:2]) == partition.replace("-", " ")]
        kept = [e for e in entries if e not in moved]
        path.write_text("\n".join([version, str(len(kept)), *kept]) + "\n")
        (target / name).write_text("\n".join([version, str(len(moved)), *moved]) + "\n")


def _broker_3(root: Path, *, moving: bool) -> list[tuple[str, str]]:
    """kraft-3 as a broker of several log dirs: d1 the sample's, d2 a second formatted dir holding audit-0 (moved
    there behind the controller's back) or, `moving`, a -future copy of it (a move the broker is making); unless
    `moving`, d3 a disk of node 4, d4 a clone of d1 (its directory.id too), d5 never formatted."""
    d1, d2 = root / "d1", root / "d2"
    shutil.copytree(SAMPLE_LOGS / "kraft-3", d1)
    d2.mkdir()
    (d2 / "meta.properties").write_text(_meta(d1 / "meta.properties", **{"directory.id": "yCmF5Y0sR0u0x0KfJb0m2g"}))
    if moving:
        shutil.copytree(d1 / "audit-0", d2 / FUTURE)
        for name in OFFSET_CHECKPOINTS:
            (d2 / name).write_text("0\n0\n")
        return [("kraft-3", str(d)) for d in (d1, d2)]
    shutil.move(d1 / "audit-0", d2 / "audit-0")
    _split_checkpoints(d1, d2, "audit-0")
    for name, changes in (("d3", {"node.id": "4", "directory.id": "nOdEfOuRAAAAAAAAAAAAAA"}), ("d4", {})):
        (root / name).mkdir()
        (root / name / "meta.properties").write_text(_meta(d1 / "meta.properties", **changes))
    (root / "d5").mkdir()
    return [("kraft-3", str(root / d)) for d in ("d1", "d2", "d3", "d4", "d5")]


def _scan(spark, tmp_path: Path, *, moving: bool) -> tuple[Path, list[dict]]:
    from kforensics.spark.jobs import run_scan

    inputs = [(f"kraft-{b}", str(SAMPLE_LOGS / f"kraft-{b}")) for b in (1, 2)]
    inputs += _broker_3(tmp_path / "kraft-3", moving=moving)
    out = tmp_path / "out"
    run_scan(spark, inputs, str(out), headers_only=True)
    found = [{**f, **json.loads(f["details"] or "{}")} for f in read_table(str(out), "findings")]
    return out, found


def _planted() -> list[tuple]:
    return sorted((p["kind"], p["broker"], p["topic"], p["partition"]) for p in KRAFT["findings"])


def _problems(found: list[dict], *new: str) -> list[tuple]:
    return sorted((f["kind"], f["broker"], f["topic"], f["partition"]) for f in found
                  if f["severity"] in ("error", "warning") and f["kind"] not in new)


def test_jbod_broker_wrong_dir_and_identity_found(spark, tmp_path: Path) -> None:
    out, found = _scan(spark, tmp_path, moving=False)
    root = tmp_path / "kraft-3"
    # what the plain cluster holds is found as before, and nothing else but the planted JBOD faults
    assert _problems(found, "replica_in_wrong_dir", "log_dir_identity_mismatch") == _planted()
    (wrong,) = [f for f in found if f["kind"] == "replica_in_wrong_dir"]
    assert (wrong["broker"], wrong["topic"], wrong["partition"], wrong["reason"], wrong["file"], wrong["log_dir"],
            wrong["assigned_log_dir"], wrong["severity"]) == (
        "kraft-3", "audit", 0, "other_dir", str(root / "d2" / "audit-0"), str(root / "d2"), str(root / "d1"), "error")
    identity = sorted((f["reason"], f["log_dir"], f.get("found"), f.get("expected"), f["file"])
                      for f in found if f["kind"] == "log_dir_identity_mismatch")
    directory_id = (root / "d1" / "meta.properties").read_text().split("directory.id=")[1].split()[0]
    assert identity == [
        ("directory_id_shared", str(root / "d4"), directory_id, None, str(root / "d4" / "meta.properties")),
        ("meta_properties_missing", str(root / "d5"), None, None, str(root / "d5")),
        ("node_id", str(root / "d3"), "4", "3", str(root / "d3" / "meta.properties"))]
    # the restart prediction reads the checkpoints of the partition's own log dir
    restart = {(r["topic"], r["partition"]): r for r in read_table(str(out), "restart_prediction")
               if r["broker"] == "kraft-3"}
    assert restart[("audit", 0)]["recovery_point"] == 100  # d2's own checkpoint, split from d1's
    assert {k: r["log_dir"] for k, r in restart.items() if k[0] != "__cluster_metadata"} == {
        ("audit", 0): str(root / "d2"), ("scratch", 0): str(root / "d1")}
    replicas = {(r["topic"], r["partition"]): r["log_dir"] for r in read_table(str(out), "replicas")
                if r["broker"] == "kraft-3" and r["topic"] != "__cluster_metadata"}
    assert replicas == {("audit", 0): str(root / "d2"), ("scratch", 0): str(root / "d1")}


def test_jbod_broker_moving_a_replica_is_silent(spark, tmp_path: Path) -> None:
    _, found = _scan(spark, tmp_path, moving=True)
    assert _problems(found) == _planted()


def test_one_label_names_one_brokers_dirs(tmp_path: Path) -> None:
    d1, d2 = tmp_path / "a" / "kafka", tmp_path / "b" / "kafka"
    d1.mkdir(parents=True)
    d2.mkdir(parents=True)
    named = [f"b3={d1}", f"b3={d2}"]
    assert parse_inputs(named) == [("b3", str(d1)), ("b3", str(d2))]
    assert label_problem(named) is None and input_problem(parse_inputs(named), None) is None
    # two dirs of one base name are two brokers until the user names them one
    assert "same broker label kafka" in label_problem([str(d1), str(d2)])[1]
    assert "the same log dir is given twice" in input_problem(parse_inputs([f"b3={d1}", f"b4={d1}/"]), None)[1]
    dump = tmp_path / "seg.txt"
    dump.write_text("")
    assert "kafka-dump-log file" in input_problem(parse_inputs([f"b3={d1}", f"b3={dump}"]), None)[1]
    refused = CliRunner().invoke(main, ["scan", str(d1), str(d2), "--out", str(tmp_path / "out")])
    assert refused.exit_code == 2 and "same broker label kafka" in refused.output
    assert not (tmp_path / "out").exists()
