"""Shared fixtures: paths to the committed sample logs and to ../shared/realdata."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# A `kforensics serve` the developer left running must not take the tests' scans (test_server.py opts in).
os.environ["KFORENSICS_SERVER"] = "off"

REPO = Path(__file__).resolve().parent.parent
SAMPLE_LOGS = REPO / "sample_logs"
REALDATA = (REPO.parent / "shared" / "realdata").resolve()


def realdata_files(pattern: str) -> list[Path]:
    """Files under ../shared/realdata matching a glob (empty when the folder is absent)."""
    if not REALDATA.is_dir():
        return []
    return sorted(p for p in REALDATA.rglob(pattern) if p.is_file())


@pytest.fixture(scope="session")
def realdata() -> Path:
    if not REALDATA.is_dir():
        pytest.skip(f"real broker files not present: {REALDATA} (they live in the project's shared/ folder)")
    return REALDATA


@pytest.fixture(scope="session")
def sample_logs() -> Path:
    return SAMPLE_LOGS


@pytest.fixture(scope="session")
def spark():
    """The one local SparkSession shared by every Spark test."""
    from kforensics.spark.session import build_session

    session = build_session("local[2]", "kforensics-tests", long_lived=True, **{"spark.sql.shuffle.partitions": "4"})
    yield session
    session.stop()


@pytest.fixture(scope="module")
def small_input(spark):
    """The session set as a scan sets it for a small input (`session.SMALL_INPUT_SETTINGS`: one shuffle partition,
    no adaptive execution, interpreted expressions) for one test module, then restored: a unit test's few rows run
    as a small scan's do (the defaults cost seconds per statement)."""
    from kforensics.spark.session import SMALL_INPUT_SETTINGS, apply_settings, scan_settings

    restore = apply_settings(spark, scan_settings(spark, SMALL_INPUT_SETTINGS))
    yield
    restore()


SAMPLE_INPUTS = [(b, str(SAMPLE_LOGS / b)) for b in ("broker-1", "broker-2", "broker-3")]


@pytest.fixture(scope="session")
def full_scan(spark, tmp_path_factory) -> Path:
    """One full scan of both sample brokers for the whole session (tests read its Parquet tables)."""
    from kforensics.spark.jobs import run_scan

    out = tmp_path_factory.mktemp("scan-full")
    run_scan(spark, SAMPLE_INPUTS, str(out), headers_only=False)
    return out


@pytest.fixture(scope="session")
def headers_scan(spark, tmp_path_factory) -> Path:
    from kforensics.spark.jobs import run_scan

    out = tmp_path_factory.mktemp("scan-headers")
    run_scan(spark, SAMPLE_INPUTS, str(out), headers_only=True)
    return out


KRAFT_INPUTS = [(f"kraft-{b}", str(SAMPLE_LOGS / f"kraft-{b}")) for b in (1, 2, 3)]


@pytest.fixture(scope="session")
def kraft_scan(spark, tmp_path_factory) -> Path:
    """One headers-only scan of the sample KRaft cluster (kraft-1..3: metadata log copies and data)."""
    from kforensics.spark.jobs import run_scan

    out = tmp_path_factory.mktemp("scan-kraft")
    run_scan(spark, KRAFT_INPUTS, str(out), headers_only=True)
    return out


@pytest.fixture(scope="session")
def incident_scan(spark, tmp_path_factory) -> Path:
    """One full scan of the three incident disks for the session."""
    from kforensics.spark.jobs import run_scan

    out = tmp_path_factory.mktemp("scan-incident")
    run_scan(spark, [(b, str(SAMPLE_LOGS / b)) for b in ("incident-1", "incident-2", "incident-3")], str(out),
             headers_only=False)
    return out
