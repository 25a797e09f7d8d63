"""Every finding kind: the parsers' (`parsers/findings.py`) and those the scan's checks declare in their model files
(`spark/sql/*.sql`, read by `kforensics.spark.registry` without starting Spark). The reports ask here which kinds
they show."""

from __future__ import annotations

from kforensics.parsers.findings import PARSER_KINDS, FindingKind, Severity
from kforensics.spark.registry import finding_kinds

__all__ = ["KINDS", "severity_of", "shown_in"]

#: Every kind, by name: the parsers' first, then the checks' (by family and file).
KINDS: dict[str, FindingKind] = {**PARSER_KINDS, **finding_kinds()}


def severity_of(kind: str) -> Severity:
    """A kind's severity (its graver one when it depends on the case). KeyError for an unknown kind."""
    return KINDS[kind].severity


def shown_in(report: str) -> tuple[str, ...]:
    """The kinds a report shows (`gaps`, `eos`, `groups`, `tiered`, `export`: a kind's `reports`)."""
    return tuple(k.name for k in KINDS.values() if report in k.reports)
