"""The finding-kind registry: one place for every kind, its severity and its fields, and the README agrees."""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import REPO

from kforensics.parsers.findings import FINDING_COLUMNS, KINDS, SEQUENCE_KINDS, Finding, is_problem, severity_of


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
    assert set(SEQUENCE_KINDS) <= set(KINDS)
    assert FINDING_COLUMNS[:2] == ("kind", "severity") and FINDING_COLUMNS[-1] == "details"
    for kind in KINDS.values():
        assert kind.meaning and not kind.meaning.endswith(".") and len(set(kind.fields)) == len(kind.fields)
        assert not set(kind.fields) & {"kind", "severity", "broker", "topic", "partition", "file", "message"}


def readme_finding_rows() -> dict[str, tuple[str, str]]:
    """kind -> (severity cell, rest of the row) of every finding table in the README (a row may name several
    kinds: `a` / `b`, with severities `x / y` in that order or one for all)."""
    rows: dict[str, tuple[str, str]] = {}
    for line in (REPO / "README.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not cells[0].startswith("`") or cells[1].split(" ")[0] not in ("error", "warning",
                                                                                           "info"):
            continue
        kinds = re.findall(r"`([a-z_]+)`", cells[0])
        severities = [s.strip() for s in cells[1].split(" / ")]
        for i, kind in enumerate(kinds):
            assert kind not in rows, f"{kind} has two rows in the README"
            rows[kind] = (severities[i] if len(severities) == len(kinds) else cells[1], " | ".join(cells[2:]))
    return rows


def test_the_readme_finding_tables_agree_with_the_registry() -> None:
    rows = readme_finding_rows()
    assert set(rows) == set(KINDS), (sorted(set(KINDS) - set(rows)), sorted(set(rows) - set(KINDS)))
    for name, kind in KINDS.items():
        severity, text = rows[name]
        assert severity.split(" ")[0] == kind.severity, name
        assert (severity != kind.severity) == (kind.severity_rule is not None), name
        documented = set(re.findall(r"`([a-z_]+)`", text))
        missing = [f for f in kind.fields if f not in documented]
        assert not missing, f"README row of {name} does not name its fields {missing}"


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
