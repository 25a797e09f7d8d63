"""The scan's profile (`scan --profile`, the manifest's `profile`): each step with its Spark jobs, stages and tasks."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
from conftest import SAMPLE_LOGS

from kforensics.scan_output import OUTPUT_TABLES, read_manifest
from kforensics.spark import registry
from kforensics.spark.jobs import READ_BACK
from kforensics.spark.scan_profile import CALL_SITE_LONG, CALL_SITE_SHORT, ScanProfile


def test_the_manifest_profiles_the_listing_every_table_and_every_check(full_scan: Path) -> None:
    manifest = read_manifest(str(full_scan))
    assert manifest is not None and manifest.profile is not None
    profile = manifest.profile
    steps = {step["step"]: step for step in profile["steps"]}
    assert "listing" in steps
    assert set(OUTPUT_TABLES) <= set(steps)  # each table's write is a step of its own
    checks = {name.removeprefix("check ") for name in steps if name.startswith("check ")}
    assert checks <= {check.family for check in registry.check_models()}
    # the checks every scan plans, whatever the listing found
    assert {"log", "transactions", "txnindex_markers", "restart"} <= checks
    for step in profile["steps"]:
        assert step["seconds"] >= 0 and step["jobs"] >= 0 and step["tasks"] >= step["stages"] >= 0
    # in the order they started, each within the scan
    starts = [step["start_s"] for step in profile["steps"] if step["step"] != "session start"]
    assert starts == sorted(starts) and 0 <= starts[0] and starts[-1] <= profile["seconds"]
    # a small local input is parsed by the driver (spark/driver_read.py): its parse pass and the writes of its input
    # tables run no Spark job; every facts table with rows and the findings are Spark jobs, and a table the runner
    # knows has no rows is written from its columns without one (issue 52)
    assert "parse pass" in steps
    assert {steps[name]["jobs"] for name in ("parse pass", *READ_BACK)} == {0}
    assert steps["findings"]["jobs"] >= 1 and steps["findings"]["stages"] >= 1
    rows = {m.name: pq.read_table(full_scan / m.name).num_rows for m in registry.output_models()}
    assert all(steps[name]["jobs"] >= 1 for name in rows if rows[name]), rows
    assert {name for name in rows if steps[name]["jobs"] == 0} <= {name for name in rows if not rows[name]}
    assert any(steps[name]["jobs"] == 0 for name in rows)  # the sample brokers have empty tables


def test_a_large_input_is_parsed_by_spark_jobs_each_in_its_step(spark, tmp_path: Path, monkeypatch) -> None:
    from kforensics.spark import session
    from kforensics.spark.jobs import run_scan

    monkeypatch.setattr(session, "SMALL_INPUT_BYTES", -1)
    run_scan(spark, [("b", str(SAMPLE_LOGS / "broker-2"))], str(tmp_path / "out"), headers_only=True)
    steps = {step["step"]: step for step in read_manifest(str(tmp_path / "out")).profile["steps"]}
    assert "parse pass plan" in steps and "parse pass" not in steps
    assert all(steps[name]["jobs"] >= 1 for name in READ_BACK)
    assert any(name.startswith("kept ") and step["jobs"] >= 1 for name, step in steps.items())


def test_a_step_names_its_jobs_and_stages_and_leaves_the_thread_as_it_found_it(spark) -> None:
    context = spark.sparkContext
    profile = ScanProfile(context)
    with profile.step("kept example", "kforensics scan: example"):
        group = context.getLocalProperty("spark.jobGroup.id")
        spark.range(5).localCheckpoint(eager=True)
    tracker = context.statusTracker()
    stages = [tracker.getStageInfo(stage) for job in tracker.getJobIdsForGroup(group)
              for stage in tracker.getJobInfo(job).stageIds]
    assert stages and {stage.name for stage in stages} == {"kforensics scan: kept example"}
    # Spark walks no stack for a call site in the step, and none is left behind for the thread's later jobs
    assert context.getLocalProperty(CALL_SITE_SHORT) is None
    assert context.getLocalProperty(CALL_SITE_LONG) is None
    assert context.getLocalProperty("spark.jobGroup.id") is None
    (step,) = profile.to_dict()["steps"]
    assert step["step"] == "kept example" and step["jobs"] == 1 and step["tasks"] >= 1
