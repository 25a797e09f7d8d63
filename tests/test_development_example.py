"""docs/development.md's worked example of a new finding kind, run as written: its header is a valid check's, its
kind declares everything a kind needs, and its statement finds what the page says over inline tables, as the scan
runs a check."""

from __future__ import annotations

import json
import re

from conftest import REPO
from unit_frames import scan_of

from kforensics.spark import registry


def _example() -> str:
    page = (REPO / "docs" / "development.md").read_text(encoding="utf-8")
    section = page[page.index("## Adding a finding kind"):]
    block = re.search(r"```sql\n(.*?)```", section, re.S).group(1)
    return "\n".join(line[3:] if line.startswith("   ") else line for line in block.splitlines())


def test_the_worked_example_is_a_check_the_runner_runs(spark, small_input) -> None:
    text = _example()
    check = registry.model_of_text("empty_transaction", text, "spark/sql/empty_transaction.sql")
    (kind,) = check.findings
    assert check.kind == "check" and check.family == "transactions" and check.inputs == ("timed_transactions",)
    assert kind.name == "empty_transaction" and kind.severity == "info" and kind.compacted and kind.rule
    assert kind.name not in registry.finding_kinds(), "the example is not a kind the scan has"
    txns = spark.createDataFrame(
        [("b1", "t", 0, 7, 0, None, 12, "f.log", 700), ("b1", "t", 0, 8, 0, 3, 20, "f.log", 900)],
        "broker string, topic string, partition int, producer_id bigint, producer_epoch int, first_offset bigint, "
        "marker_offset bigint, file string, position bigint")
    rows = scan_of(timed_transactions=txns).checks([check]).collect()
    assert [(r["kind"], r["severity"], r["offset"], r["producer_id"], json.loads(r["details"])) for r in rows] == [
        ("empty_transaction", "info", 12, 7, {"marker_offset": 12})]
