"""`kforensics warmup` and the embedded JVM's class-data archive: recorded by a real JVM, checked before it is
installed, mapped by later sessions, and never used when it is not whole (Java 17 dies on a truncated one)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SAMPLE_LOGS

from kforensics.spark import jvm_archive
from kforensics.spark.session import LOCAL_JAVA_OPTIONS

# Runs in its own process: builds the embedded session as `kforensics scan` does, scans one sample topic,
# and prints which class-data archives the driver JVM has mapped (from /proc/<pid>/maps).
_SESSION_PROBE = """
import json, sys
from kforensics.spark.session import build_session
from kforensics.spark.jobs import run_scan
spark = build_session(None)
summary = run_scan(spark, [("broker-1", sys.argv[1])], sys.argv[2], headers_only=True, topic_glob="orders")
pid = spark.sparkContext._gateway.proc.pid
mapped = sorted({line.split()[-1] for line in open(f"/proc/{pid}/maps") if line.rstrip().endswith(".jsa")})
print(json.dumps({"mapped": mapped, "batches": summary.batches, "options":
                  spark.sparkContext.getConf().get("spark.driver.extraJavaOptions")}))
spark.stop()
"""


def _env(cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYSPARK_SUBMIT_ARGS"}
    env[jvm_archive.CACHE_ENV] = str(cache)
    return env


def test_archive_name_follows_the_jvm_options(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(jvm_archive.CACHE_ENV, str(tmp_path))
    a, b = jvm_archive.archive_path(LOCAL_JAVA_OPTIONS), jvm_archive.archive_path(LOCAL_JAVA_OPTIONS + " -Xss4m")
    if a is None:
        pytest.skip("no java found")
    assert a.parent == tmp_path and b is not None and a != b
    assert jvm_archive.archive_path(LOCAL_JAVA_OPTIONS) == a


def test_an_archive_is_used_only_while_it_is_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(jvm_archive.CACHE_ENV, str(tmp_path / "cache dir"))
    path = jvm_archive.archive_path(LOCAL_JAVA_OPTIONS)
    if path is None:
        pytest.skip("no java found")
    assert jvm_archive.with_archive(LOCAL_JAVA_OPTIONS) == LOCAL_JAVA_OPTIONS  # nothing recorded yet
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\x01" * 4096)
    assert jvm_archive.usable_archive(LOCAL_JAVA_OPTIONS) is None  # no sidecar: not installed by `record`
    path.with_suffix(".json").write_text(json.dumps({"size": 4096}))
    assert jvm_archive.usable_archive(LOCAL_JAVA_OPTIONS) == path
    # a path with a blank in it is quoted, as Spark splits extraJavaOptions like a shell
    assert jvm_archive.with_archive(LOCAL_JAVA_OPTIONS).endswith(f" '-XX:SharedArchiveFile={path}'")
    with path.open("r+b") as f:
        f.truncate(1000)
    assert jvm_archive.usable_archive(LOCAL_JAVA_OPTIONS) is None
    path.with_suffix(".json").write_text("{not json")
    assert jvm_archive.usable_archive(LOCAL_JAVA_OPTIONS) is None


@pytest.mark.process
@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads the JVM's memory map from /proc")
def test_warmup_records_an_archive_that_later_sessions_map(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    broker = str(SAMPLE_LOGS / "broker-1")
    warm = subprocess.run([sys.executable, "-m", "kforensics", "warmup", broker, "--topic", "orders"],
                          capture_output=True, text=True, env=_env(cache), timeout=900)
    assert warm.returncode == 0, warm.stderr[-3000:]
    archives = list(cache.glob("*.jsa"))
    assert len(archives) == 1 and str(archives[0]) in warm.stdout
    recorded = json.loads(archives[0].with_suffix(".json").read_text())
    assert recorded["size"] == archives[0].stat().st_size > 10_000_000
    assert not list(cache.glob("*.partial"))
    assert "[warning][cds]" not in warm.stderr  # the recording JVM's per-class notes are switched off

    probe = subprocess.run([sys.executable, "-c", _SESSION_PROBE, broker, str(tmp_path / "out")],
                           capture_output=True, text=True, env=_env(cache), timeout=600)
    assert probe.returncode == 0, probe.stderr[-3000:]
    seen = json.loads(probe.stdout.splitlines()[-1])
    assert str(archives[0]) in seen["mapped"] and seen["batches"] > 0

    # A damaged archive (here: cut short, as a full disk would leave it) is not used; the session still runs.
    with archives[0].open("r+b") as f:
        f.truncate(archives[0].stat().st_size // 2)
    probe = subprocess.run([sys.executable, "-c", _SESSION_PROBE, broker, str(tmp_path / "out2")],
                           capture_output=True, text=True, env=_env(cache), timeout=600)
    assert probe.returncode == 0, probe.stderr[-3000:]
    seen = json.loads(probe.stdout.splitlines()[-1])
    assert str(archives[0]) not in seen["mapped"] and "SharedArchiveFile" not in seen["options"]
    assert seen["batches"] > 0


def test_warmup_usage_errors(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from kforensics.cli import main

    result = CliRunner().invoke(main, ["warmup", str(tmp_path / "missing")], env={jvm_archive.CACHE_ENV: str(tmp_path)})
    assert result.exit_code == 2 and "not a readable directory" in result.output
    assert not list(tmp_path.glob("*.jsa"))
