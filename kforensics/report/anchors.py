"""The ids of the HTML report's sections that an incident links to (its findings, its partitions' timelines)."""

from __future__ import annotations

import hashlib


def finding_anchor(kind: str, topic: str | None, partition: int | None) -> str:
    """The id of a kind's findings on one partition in the findings section (what an incident links to)."""
    key = f"{kind}\x00{topic or ''}\x00{partition if partition is not None else -1}"
    return f"findings-{hashlib.sha256(key.encode()).hexdigest()[:12]}"


def timeline_anchor(broker: str, topic: str, partition: int) -> str:
    """The id of a partition replica's timeline figure (what an incident links to)."""
    key = f"{broker}\x00{topic}\x00{partition}"
    return f"timeline-{hashlib.sha256(key.encode()).hexdigest()[:12]}"
