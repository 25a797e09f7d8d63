"""The scan's profile (`scan --profile`, the manifest's `profile`): each step with its Spark jobs, stages and tasks."""

from __future__ import annotations

from pathlib import Path

from kforensics.scan_output import OUTPUT_TABLES, read_manifest
from kforensics.spark.analysis import CHECKS
from kforensics.spark.profile import CALL_SITE_LONG, CALL_SITE_SHORT, ScanProfile


def test_the_manifest_profiles_the_listing_every_table_and_every_check(full_scan: Path) -> None:
    manifest = read_manifest(str(full_scan))
    assert manifest is not None and manifest.profile is not None
    profile = manifest.profile
    steps = {step["step"]: step for step in profile["steps"]}
    assert "listing" in steps
    assert set(OUTPUT_TABLES) <= set(steps)  # each table's write is a step of its own
    checks = {name.removeprefix("check ") for name in steps if name.startswith("check ")}
    assert checks <= {check.name for check in CHECKS}
    # the checks every scan plans, whatever the listing found
    assert {"sequence_gap", "duplicate_sequence", "hanging_transaction", "txnindex", "restart"} <= checks
    for step in profile["steps"]:
        assert step["seconds"] >= 0 and step["jobs"] >= 0 and step["tasks"] >= step["stages"] >= 0
    assert steps["batches"]["jobs"] >= 1 and steps["findings"]["jobs"] >= 1
    assert steps["findings"]["stages"] >= 1 and profile["jobs"] >= len(OUTPUT_TABLES)


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
