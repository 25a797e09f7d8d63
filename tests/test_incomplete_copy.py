"""Issue 47's property on the sample disks: take any one segment away from a copy (its `.log`, or every file of it) and
scan again: the scan names what the copy lacks (`segment_missing`, or, where nothing proves the offsets were on disk
for good, the partition as incomplete) and raises no other new warning or error anywhere.

The default run scans a handful of chosen cases, all in one headers-only scan (tests/incomplete_copies.py keeps the
copies apart as clusters of their own). The full sweep, every segment of every sample cluster in both ways (a few
hundred cases in scans of 25), is marked `process` and runs on request (`KFORENSICS_SWEEP=1 pytest -m process tests/test_incomplete_copy.py`): it
is too long for the default run and for CI.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import SAMPLE_LOGS
from incomplete_copies import Removal, by_case, copy_cluster, new_problems, removals

BROKERS = [(b, SAMPLE_LOGS / b) for b in ("broker-1", "broker-2", "broker-3")]
#: The sample clusters (each scanned as a whole: replicas, coordinators and groups cross their log dirs).
CLUSTERS = {"brokers": BROKERS, "kraft": [(b, SAMPLE_LOGS / b) for b in ("kraft-1", "kraft-2", "kraft-3")],
            "compacted": [("compacted-1", SAMPLE_LOGS / "compacted-1")], "eos-1": [("eos-1", SAMPLE_LOGS / "eos-1")],
            "eos-2": [("eos-2", SAMPLE_LOGS / "eos-2")], "groups": [("groups-1", SAMPLE_LOGS / "groups-1")]}

#: The default run's cases: a middle segment of a replicated partition (replicas, sequences, snapshots), the last
#: one (committed offsets beyond it, snapshots), the first one of a transactional partition whole (markers, commits
#: below the log start), a follower's only segment (the longest replica), a coordinator's log (producers no record
#: names any more), a crashed broker's segment above its recovery point (a crash may lose it: incomplete, unproven).
CHOSEN = [
    Removal("broker-1", "orders-0", 130, "log"),
    Removal("broker-1", "orders-0", 260, "segment"),
    Removal("broker-1", "payments-0", 0, "segment"),
    Removal("broker-2", "inventory-0", 0, "log"),
    Removal("broker-1", "__transaction_state-0", 0, "segment"),
    Removal("broker-3", "unflushed-0", 60, "segment"),
]
CHUNK = 25


def _cases() -> list:
    """The chosen cases (default run), then every segment of every sample cluster in chunks (`process`)."""
    # the sweep passed every chunk of every cluster (2026-11-29, on the tree with the image-time rules merged); a
    # cluster added later is marked until its chunks have run (not strict)
    verified = {"brokers", "kraft", "compacted", "groups", "eos-1", "eos-2"}
    unverified = pytest.mark.xfail(strict=False, reason="not yet run: the sweep of this cluster may still find a "
                                   "rule that does not report not_judged")
    # the sweep (~15 scans of 25 copies each) runs on request: it would add most of an hour to CI's process tests
    sweep = pytest.mark.skipif(os.environ.get("KFORENSICS_SWEEP") != "1",
                               reason="the full sweep runs with KFORENSICS_SWEEP=1 (pytest -m process)")
    out = [pytest.param("brokers", CHOSEN, id="brokers-chosen")]
    for name, cluster in CLUSTERS.items():
        every = removals(cluster)
        out += [pytest.param(name, every[i:i + CHUNK], id=f"{name}-every-{i // CHUNK}",
                             marks=[pytest.mark.process, sweep] + ([] if name in verified else [unverified]))
                for i in range(0, len(every), CHUNK)]
    return out


def _companions_left(removal: Removal, root: Path) -> bool:
    """Whether a file of the segment stays in the copy (only its `.log` taken: its indexes prove it)."""
    stem = f"{removal.base_offset:020d}"
    return removal.mode == "log" and any((root / removal.partition_dir / f"{stem}.{ext}").exists()
                                         for ext in ("index", "timeindex", "txnindex"))


@pytest.mark.parametrize("cluster_name, cases", _cases())
def test_a_copy_without_one_segment_names_what_it_lacks_and_accuses_nothing_else(spark, tmp_path, cluster_name,
                                                                                 cases):
    from kforensics.spark.jobs import run_scan

    cluster = CLUSTERS[cluster_name]
    inputs = copy_cluster(cluster, tmp_path / "in", "base")
    for removal in cases:
        inputs += copy_cluster(cluster, tmp_path / "in", removal.case, removal)
    out = tmp_path / "out"
    run_scan(spark, inputs, str(out), headers_only=True)
    found = by_case(pq.read_table(out / "findings").to_pylist())
    replicas = pq.read_table(out / "replicas").to_pylist()
    roots = dict(cluster)
    base = found.get("base", [])
    assert not [f for f in base if f["kind"] in ("segment_missing", "not_judged")]
    for removal in cases:
        case = found.get(removal.case, [])
        assert new_problems(base, case) == [], removal
        topic, partition = removal.topic_partition
        named = [json.loads(f["details"]) for f in case if f["kind"] == "segment_missing"
                 and (f["broker"], f["topic"], f["partition"]) == (removal.broker, topic, partition)]
        if _companions_left(removal, roots[removal.broker]):
            # its indexes name it: the absent segment and the offsets it held from its base offset on
            assert any(d["absent_segment"] == removal.base_offset and d["missing_offsets"][0] == removal.base_offset
                       for d in named), removal
        elif not named:
            # nothing proves the offsets were on disk for good (a log that starts later, as retention or tiered
            # storage leave it; a crashed broker's unflushed segment): the partition is incomplete or shows no
            # offset at all
            rows = [r for r in replicas if r["broker"] == f"{removal.case}/{removal.broker}"
                    and (r["topic"], r["partition"]) == (topic, partition) and r["dir_state"] == "live"]
            assert all(r["complete"] is False for r in rows) or _retention_shape(removal, roots), removal
        # nothing else on any other partition
        assert not [f for f in case if f["kind"] == "segment_missing"
                    and (f["broker"], f["topic"], f["partition"]) != (removal.broker, topic, partition)], removal


def _retention_shape(removal: Removal, roots: dict[str, Path]) -> bool:
    """The copy without this segment is what Kafka's retention leaves: its first segment, taken whole, from a log
    whose checkpoints say nothing of a lower start."""
    segments = sorted(p.name for p in (roots[removal.broker] / removal.partition_dir).glob("*.log"))
    return removal.mode == "segment" and segments and segments[0] == f"{removal.base_offset:020d}.log"
