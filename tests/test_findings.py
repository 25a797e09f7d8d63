"""The finding kinds: each declared in one place (a parser kind in parsers/findings.py, a check's kind in its model
file's header), its severity and its fields, and docs/findings.md agrees."""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import REPO

from kforensics.kinds import KINDS, shown_in
from kforensics.parsers.findings import FINDING_COLUMNS, PARSER_KINDS, Finding, is_problem, severity_of


def test_finding_json_has_contract_fields_and_details() -> None:
    f = Finding("corrupt_crc", "/x/00000000000000000000.log", 120, "bad crc", {"stored_crc": 1, "computed_crc": 2})
    out = f.to_json()
    assert list(out)[:6] == ["type", "kind", "severity", "file", "position", "message"]
    assert out["severity"] == severity_of("corrupt_crc") == "error"
    assert out["stored_crc"] == 1 and out["computed_crc"] == 2
    assert Finding("unknown_file", "x", None, "m", severity="error").effective_severity == "error"


def test_severities_and_problems() -> None:
    assert {k.severity for k in KINDS.values()} == {"error", "warning", "info"}
    assert is_problem("error") and is_problem("warning") and not is_problem("info") and not is_problem(None)
    assert set(shown_in("gaps")) == {"sequence_gap", "duplicate_sequence", "zombie_epoch", "content_duplicate"}
    assert set(PARSER_KINDS) < set(KINDS)
    assert FINDING_COLUMNS[:2] == ("kind", "severity") and FINDING_COLUMNS[-1] == "details"
    for kind in KINDS.values():
        assert kind.meaning and not kind.meaning.endswith(".") and len(set(kind.fields)) == len(kind.fields)
        assert not set(kind.fields) & {"kind", "severity", "broker", "topic", "partition", "file", "message"}


def documented_kinds() -> dict[str, tuple[str, str]]:
    """kind -> (severity line, whole section) of each kind's section in docs/findings.md (generated from the
    registry by docs/generate.py; tests/test_docs.py holds it current)."""
    page = (REPO / "docs" / "findings.md").read_text(encoding="utf-8")
    sections: dict[str, tuple[str, str]] = {}
    for match in re.finditer(r"^### `([a-z_]+)`\n(.*?)(?=^#|\Z)", page, flags=re.M | re.S):
        kind, text = match.groups()
        assert kind not in sections, f"{kind} has two sections in docs/findings.md"
        severity = re.search(r"^\*\*Severity\*\*: (.*)$", text, flags=re.M)
        assert severity, f"docs/findings.md gives no severity for {kind}"
        sections[kind] = (severity.group(1), text)
    return sections


def test_the_findings_page_agrees_with_the_registry() -> None:
    sections = documented_kinds()
    assert set(sections) == set(KINDS), (sorted(set(KINDS) - set(sections)), sorted(set(sections) - set(KINDS)))
    for name, kind in KINDS.items():
        severity, text = sections[name]
        assert severity.rstrip(".").split(";")[0] == kind.severity, name
        assert (";" in severity) == (kind.severity_rule is not None), name
        documented = set(re.findall(r"`([a-z_]+)`", text))
        missing = [f for f in kind.fields if f not in documented]
        assert not missing, f"docs/findings.md section of {name} does not name its fields {missing}"
        if kind.rule:
            assert " ".join(kind.rule.split()) in " ".join(text.split()), name


def test_every_field_a_scan_reports_is_registered(full_scan: Path) -> None:
    """The findings of a full scan of the sample brokers (planted anomalies of nearly every kind) carry only
    registered kinds, their registered severities, and registered fields."""
    from kforensics.scan_output import read_table

    seen = set()
    for f in read_table(str(full_scan), "findings"):
        kind = KINDS[f["kind"]]
        seen.add(kind.name)
        assert f["severity"] == kind.severity or kind.severity_rule, f
        extra = set(json.loads(f["details"] or "{}")) - set(kind.fields)
        assert not extra, f"{kind.name} reports unregistered fields {extra}"
    assert len(seen) >= 20


def test_every_kind_says_how_it_reads_a_compacted_log() -> None:
    """Issue 43: docs/findings.md says, per kind, how its rule reads the log cleaner's output (a parser kind's note in
    parsers/findings.py, a check's in its model file's `compacted`)."""
    for kind in KINDS.values():
        assert kind.compacted and not kind.compacted.endswith("."), kind.name
    sections = documented_kinds()
    for name in KINDS:
        assert "**On a compacted log**" in sections[name][1], name
