"""Hypothesis-driven mutation of real broker files: no exception escapes, every run ends.

Mutations: bit flips, truncation at any byte, zero fills, and lying length fields, applied to real
segments (../shared/realdata when present, else sample_logs), producer snapshots and indexes.
Memory stays bounded by construction (mmap, one batch at a time); here we check that no mutation
makes a parser loop, raise or yield an unbounded number of items.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from conftest import SAMPLE_LOGS, realdata_files
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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
    data = bytearray(path.read_bytes())
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["flip", "truncate", "zero", "length"]))
        if not data:
            break
        pos = draw(st.integers(0, len(data) - 1))
        if op == "flip":
            data[pos] ^= 1 << draw(st.integers(0, 7))
        elif op == "truncate":
            del data[pos:]
        elif op == "zero":
            end = min(len(data), pos + draw(st.integers(1, 64)))
            data[pos:end] = bytes(end - pos)
        elif pos + 4 <= len(data):
            value = draw(st.sampled_from([-1, 0, 1, 11, 48, 60, 2**31 - 1, -(2**31), len(data)]))
            struct.pack_into(">i", data, pos, value)
    return path.name, bytes(data)


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
