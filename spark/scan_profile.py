"""Where a scan's seconds go: wall time, Spark jobs, stages and tasks of each step (`kforensics scan --profile`, the
manifest's `profile`).

Each step runs its Spark jobs under a job group of its own (a thread-local property, so steps planned side by side
in several threads stay apart); once the step is done, Spark's status tracker tells which jobs, stages and tasks
ran under that group. No SparkListener (that would need a JVM class of ours): a stage Spark skipped because its
shuffle output existed already is not counted, and a kept table's stages count in the step that first read it.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
from collections.abc import Iterator
from typing import Any

_scans = itertools.count(1)
#: SparkContext's local properties of the call site its jobs and RDDs are shown with (Spark's CallSite.SHORT_FORM
#: and LONG_FORM)
CALL_SITE_SHORT, CALL_SITE_LONG = "callSite.short", "callSite.long"


class ScanProfile:
    """The steps of one scan, in the order they started."""

    def __init__(self, context: Any, started: float | None = None) -> None:
        """`started`: the time.perf_counter() the scan started at (before the session's start), else now."""
        self._context = context
        self._scan = f"kforensics-{id(self):x}-{next(_scans)}"
        self._steps: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self.started = time.perf_counter() if started is None else started

    def record(self, name: str, seconds: float, **extra: Any) -> None:
        """A step timed elsewhere (the session's start, the listing)."""
        with self._lock:
            self._steps.append({"step": name, "seconds": round(seconds, 3), "jobs": 0, "stages": 0, "tasks": 0,
                                **extra})

    @contextlib.contextmanager
    def step(self, name: str, description: str) -> Iterator[dict[str, Any]]:
        """Run a step's Spark jobs under a job group of its own (named `description` in Spark's UI) and time it.
        The yielded dict takes extra fields (`plan_s`: the seconds spent building the DataFrame on the driver)."""
        group = f"{self._scan}:{len(self._steps)}:{name}"
        entry: dict[str, Any] = {"step": name}
        with self._lock:  # steps are listed in the order they started
            started = time.perf_counter()
            entry["start_s"] = round(started - self.started, 3)
            self._steps.append(entry)
        self._context.setJobGroup(group, description)
        # Spark names every RDD it creates with a call site; without one given, it walks the thread's stack for it
        self._context.setLocalProperty(CALL_SITE_SHORT, f"kforensics scan: {name}")
        self._context.setLocalProperty(CALL_SITE_LONG, description)
        try:
            yield entry
        finally:
            entry["seconds"] = round(time.perf_counter() - started, 3)
            entry.update(self._jobs_of(group))
            # later jobs of this thread: no step, and no step's name (setJobGroup set both)
            self._context.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
            self._context.setLocalProperty("spark.job.description", None)  # type: ignore[arg-type]
            self._context.setLocalProperty(CALL_SITE_SHORT, None)  # type: ignore[arg-type]
            self._context.setLocalProperty(CALL_SITE_LONG, None)  # type: ignore[arg-type]

    def _jobs_of(self, group: str) -> dict[str, int]:
        tracker = self._context.statusTracker()
        jobs = tracker.getJobIdsForGroup(group)
        stages = tasks = 0
        for job_id in jobs:
            job = tracker.getJobInfo(job_id)
            for stage_id in job.stageIds if job else ():
                stage = tracker.getStageInfo(stage_id)
                if stage is not None and stage.numCompletedTasks:  # a skipped stage has no completed task
                    stages += 1
                    tasks += stage.numCompletedTasks
        return {"jobs": len(jobs), "stages": stages, "tasks": tasks}

    def to_dict(self) -> dict[str, Any]:
        """The manifest's `profile`: total seconds and the steps."""
        with self._lock:
            steps = [dict(s) for s in self._steps]
        return {"seconds": round(time.perf_counter() - self.started, 3),
                "jobs": sum(s.get("jobs", 0) for s in steps), "tasks": sum(s.get("tasks", 0) for s in steps),
                "steps": steps}
