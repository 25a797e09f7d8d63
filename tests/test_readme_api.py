"""The "Python API" page's examples (docs/python-api.md) run as written, against the sample logs and a real scan of
them. The README's command examples are run by tests/test_docs.py."""

from __future__ import annotations

import contextlib
import io
import os
import re
from collections import Counter
from pathlib import Path

import pytest
from conftest import REPO

pytest.importorskip("duckdb", reason="duckdb (a test extra) runs the Python API page's DuckDB example")


def _api_examples() -> list[str]:
    page = (REPO / "docs" / "python-api.md").read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", page, flags=re.S)


def test_the_api_page_has_examples_for_segments_indexes_and_scan_tables() -> None:
    code = "\n".join(_api_examples())
    for needle in ("open_log(", "log.records(", "iter_offset_index(", "iter_time_index(", "pd.read_parquet(",
                   "duckdb.sql(", "require_complete(", "decode_coordinator_record(", "decode_metadata_record("):
        assert needle in code


@pytest.mark.parametrize("index", range(5))
def test_api_example_runs(index: int, full_scan: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    examples = _api_examples()
    assert len(examples) == 5
    # the examples' relative paths: the sample logs, and a completed scan's OUT as ./kforensics-out
    (tmp_path / "sample_logs").symlink_to(REPO / "sample_logs")
    (tmp_path / "kforensics-out").symlink_to(full_scan)
    monkeypatch.chdir(tmp_path)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(examples[index], f"docs/python-api.md example {index + 1}", "exec"), {})  # noqa: S102
    text = printed.getvalue()
    if index == 0:  # batches of the first orders segment, then records
        assert re.search(r"^0 4 1000 none True$", text, flags=re.M)
        assert "   0 " in text
    elif index == 1:
        assert "IndexEntry(offset=" in text and "TimeIndexEntry(" in text
    elif index == 2:  # the sample's share group state, then a metadata record read back
        assert text.splitlines()[:2] == ["ShareSnapshotKey orders-share 0 0", "ShareUpdateKey orders-share 40 2"]
        assert ("{'type': 'PARTITION_CHANGE_RECORD', 'version': 2, 'data': {'partitionId': 0, 'topicId': "
                "'HBaK2wDSCOQvkzFFKfH6nA', 'isr': [2, 3], 'leader': 2}}") in text
    elif index == 3:
        assert "sequence_gap" in text and "ABORT" not in text.splitlines()[0]
    else:  # sequence gaps per producer, as counted independently from the findings table
        from kforensics.scan_output import read_table

        gaps = Counter((f["topic"], f["partition"], f["producer_id"]) for f in read_table(str(full_scan), "findings")
                       if f["kind"] == "sequence_gap")
        assert gaps
        for (topic, partition, producer_id), count in gaps.items():
            assert re.search(rf"│ {re.escape(topic)} +│ +{partition} │ +{producer_id} │ +{count} │", text), text
    assert os.listdir(REPO / "sample_logs")  # nothing of the examples wrote there
