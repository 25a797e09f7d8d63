"""Hypothesis-driven mutation of real broker files: no exception escapes, every run ends.

Mutations (tests/mutations.py, shared with the differential tests): bit flips, truncation at any byte, zero
fills, lying length fields, varints, codec bits and record counts, applied to real segments
(../shared/realdata when present, else sample_logs), producer snapshots and indexes.
Memory stays bounded by construction (mmap, one batch at a time); here we check that no mutation
makes a parser loop, raise or yield an unbounded number of items.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import SAMPLE_LOGS, realdata_files
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mutations import mutate

from kforensics.parsers.findings import Finding

EXAMPLES = 150


def _pick(pattern: str, limit_bytes: int = 256 * 1024) -> list[Path]:
    files = [p for p in realdata_files(pattern) if 0 < p.stat().st_size <= limit_bytes]
    files += [p for p in sorted(SAMPLE_LOGS.rglob(pattern)) if 0 < p.stat().st_size <= limit_bytes]
    return files[:12]


LOGS = _pick("*.log")
SNAPSHOTS = _pick("*.snapshot")
INDEXES = _pick("*.index") + _pick("*.timeindex")


@st.composite
def mutated(draw: st.DrawFn, files: list[Path]) -> tuple[str, bytes]:
    path = draw(st.sampled_from(files))
    return path.name, mutate(draw, path.read_bytes())


def _drain(items, limit: int) -> int:
    count = 0
    for item in items:
        count += 1
        assert count <= limit, "parser yielded more items than the input could hold"
        if isinstance(item, Finding):
            assert item.kind and item.message
    return count


@pytest.mark.skipif(not LOGS, reason="no .log files to mutate")
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=mutated(LOGS))
def test_mutated_log_never_raises(case: tuple[str, bytes]) -> None:
    from kforensics.parsers.record_batch import open_log_bytes

    name, data = case
    limit = len(data) + 16
    with open_log_bytes(data, name) as log:
        for item in log.batches():
            if isinstance(item, Finding):
                continue
            _drain(log.records(item), 10 * limit + 10)
        _drain(log.batches(), limit)


@pytest.mark.skipif(not SNAPSHOTS, reason="no producer snapshots to mutate")
@settings(max_examples=EXAMPLES, deadline=None)
@given(case=mutated(SNAPSHOTS))
def test_mutated_snapshot_never_raises(case: tuple[str, bytes], tmp_path_factory) -> None:
    from kforensics.parsers.producer_snapshot import read_producer_snapshot

    name, data = case
    path = tmp_path_factory.mktemp("snap") / name
    path.write_bytes(data)
    snapshot, findings = read_producer_snapshot(path)
    assert snapshot is not None or findings


@pytest.mark.skipif(not INDEXES, reason="no index files to mutate")
@settings(max_examples=EXAMPLES, deadline=None)
@given(case=mutated(INDEXES))
def test_mutated_index_never_raises(case: tuple[str, bytes], tmp_path_factory) -> None:
    from kforensics.parsers.offset_index import iter_offset_index
    from kforensics.parsers.time_index import iter_time_index

    name, data = case
    path = tmp_path_factory.mktemp("idx") / name
    path.write_bytes(data)
    reader = iter_offset_index if name.endswith(".index") else iter_time_index
    _drain(reader(path), len(data) + 4)


@pytest.mark.skipif(not LOGS, reason="no .log files to mutate")
@settings(max_examples=40, deadline=None)
@given(case=mutated(LOGS))
def test_mutated_log_dump_exits_cleanly(case: tuple[str, bytes], tmp_path_factory) -> None:
    """The CLI on damaged input: no traceback, exit 0 or 1 (findings), never 2 for a readable file."""
    from click.testing import CliRunner

    from kforensics.cli import main

    name, data = case
    path = tmp_path_factory.mktemp("dump") / "00000000000000000000.log"
    path.write_bytes(data)
    result = CliRunner().invoke(main, ["dump", "--deep-iteration", "--json", str(path)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code in (0, 1), result.output[-500:]
