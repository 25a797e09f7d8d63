"""Incomplete copies of the sample disks (issue 47): a cluster's log dirs copied with one segment taken away (its
`.log`, or every file of the segment), many such copies scanned together.

Each copy is a cluster of its own: its log dirs' `meta.properties` get the cluster id `<id>-<case>`, so that
replicas, coordinators, groups and the control plane are compared within a copy and nothing crosses between copies
(every rule that joins brokers does so by cluster id). The unmodified copy (case `base`) is scanned beside them: a
case's findings are held against it, never against another scan.
"""

from __future__ import annotations

import re
import shutil
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kforensics.parsers.log_dir import SEGMENT_FILE_TYPES, parse_partition_dir_name

_SEGMENT = re.compile(r"^(\d{20})\.log$")


@dataclass(frozen=True)
class Removal:
    """One segment taken away: `mode` `log` (its `.log` only) or `segment` (every file named by its base offset)."""

    broker: str
    partition_dir: str
    base_offset: int
    mode: str

    @property
    def case(self) -> str:
        return f"{self.mode}-{self.broker}-{self.partition_dir}-{self.base_offset}"

    @property
    def topic_partition(self) -> tuple[str, int]:
        topic, partition, _ = parse_partition_dir_name(self.partition_dir)  # type: ignore[misc]
        return topic, partition


def removals(cluster: list[tuple[str, Path]], modes: tuple[str, ...] = ("log", "segment")) -> list[Removal]:
    """Every segment of the cluster's live partition dirs, in every mode."""
    found = []
    for broker, root in cluster:
        for part in sorted(p for p in root.iterdir() if p.is_dir()):
            parsed = parse_partition_dir_name(part.name)
            if parsed is None or parsed[2] != "live":
                continue
            for f in sorted(part.iterdir()):
                m = _SEGMENT.match(f.name)
                if m:
                    found += [Removal(broker, part.name, int(m.group(1)), mode) for mode in modes]
    return found


def copy_cluster(cluster: list[tuple[str, Path]], dest: Path, case: str,
                 removal: Removal | None = None) -> list[tuple[str, str]]:
    """The cluster copied under dest/case as a cluster of its own, without `removal`'s files; its inputs
    (label `<case>/<broker>`, path)."""
    inputs = []
    for broker, root in cluster:
        target = dest / case / broker
        shutil.copytree(root, target)
        meta = target / "meta.properties"
        if meta.exists():
            text = meta.read_text()
            meta.write_text(re.sub(r"(?m)^cluster\.id=(.*)$", lambda m: f"cluster.id={m.group(1)}-{case}", text)
                            if "cluster.id=" in text else text + f"cluster.id={case}\n")
        if removal is not None and removal.broker == broker:
            names = [f"{removal.base_offset:020d}.log"] if removal.mode == "log" else [
                f"{removal.base_offset:020d}.{t}" for t in SEGMENT_FILE_TYPES]
            for name in names:
                (target / removal.partition_dir / name).unlink(missing_ok=True)
        inputs.append((f"{case}/{broker}", str(target)))
    return inputs


def by_case(findings: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The findings of a scan of several copies, by case (the broker label's prefix), labels back to the broker's."""
    cases: dict[str, list[dict[str, Any]]] = {}
    for f in findings:
        case, _, broker = (f["broker"] or "").partition("/")
        cases.setdefault(case, []).append({**f, "broker": broker})
    return cases


#: Kinds reported on the metadata log's reference copy (its broker label): a copy that lacks part of that log passes
#: the reference to another broker's copy, which reports the same fact.
ON_THE_METADATA_COPY = ("unclean_leader_election", "offline_partition")


def problem_keys(findings: list[dict[str, Any]]) -> Counter:
    """The warnings and errors, as (kind, broker, topic, partition, offset) with their counts (no broker for a fact
    of the metadata log: `ON_THE_METADATA_COPY`)."""
    return Counter((f["kind"], None if f["kind"] in ON_THE_METADATA_COPY else f["broker"], f["topic"],
                    f["partition"], f["offset"]) for f in findings if f["severity"] in ("warning", "error"))


def new_problems(base: list[dict[str, Any]], case: list[dict[str, Any]]) -> list[tuple]:
    """The warnings and errors of `case` that its unmodified copy has not (segment_missing aside)."""
    extra = problem_keys(case) - problem_keys(base)
    return sorted((k for k in extra.elements() if k[0] != "segment_missing"), key=repr)
