"""spark-submit as docs/deployment.md writes it: the block of commands there, run as written (HOST, the inputs and OUT
replaced), on `local[2]` and in client mode on a standalone master and worker, finds what `kforensics scan` finds."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from conftest import REPO, SAMPLE_LOGS
from test_spark_cluster import standalone_cluster  # noqa: F401 - the module's master and worker

# spark-submit's JVMs, a standalone master and worker: the process tests' run (docs/development.md)
pytestmark = pytest.mark.process

INPUTS = f"broker-1={SAMPLE_LOGS / 'broker-1'} --topic '[ep]*'"  # the topics of the sample's sequence and EOS cases


def documented_commands() -> str:
    """docs/deployment.md's spark-submit block."""
    text = (REPO / "docs" / "deployment.md").read_text(encoding="utf-8")
    (block,) = [b for b in re.findall(r"```sh\n(.*?)```", text, re.S) if "spark-submit --master" in b]
    return "\n".join(line.strip() for line in block.splitlines())


def _findings(out: Path) -> list[tuple]:
    import pyarrow.parquet as pq

    table = pq.read_table(out / "findings")
    return sorted(tuple(json.dumps(v, sort_keys=True) for v in row.values()) for row in table.to_pylist())


@pytest.fixture(scope="module")
def scanned(tmp_path_factory) -> list[tuple]:
    """The findings table of `kforensics scan` on the input (embedded local Spark)."""
    out = tmp_path_factory.mktemp("scan") / "out"
    env = {**os.environ, "KFORENSICS_SERVER": "off", "PYSPARK_PYTHON": sys.executable,
           "PYSPARK_DRIVER_PYTHON": sys.executable}
    done = subprocess.run(f"{sys.executable} -m kforensics scan {INPUTS} --out {out}", shell=True, env=env,
                          capture_output=True, text=True, timeout=1200, cwd=out.parent)
    assert done.returncode == 1, done.stderr[-3000:]
    return _findings(out)


@pytest.fixture(scope="module")
def python_without_kforensics(tmp_path_factory) -> Path:
    """A Python as a cluster's workers have it: kforensics' dependencies installed, kforensics not. A venv whose
    site-packages links every entry of this environment's but kforensics' own (its files, its editable finder)."""
    root = tmp_path_factory.mktemp("executors")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / "env")], check=True, timeout=300)
    python = root / "env" / "bin" / "python"
    theirs = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                 check=True, capture_output=True, text=True).stdout.strip())
    ours = Path(sysconfig.get_paths()["purelib"])
    for entry in ours.iterdir():
        if "kforensics" not in entry.name.lower() and not (theirs / entry.name).exists():
            (theirs / entry.name).symlink_to(entry)
    probe = subprocess.run([str(python), "-c", "import pyarrow, pandas, zstandard, cramjam, lz4, isal, crc32c\n"
                            "try:\n    import kforensics\nexcept ImportError:\n    print('no kforensics')"],
                           capture_output=True, text=True, cwd=root, timeout=120)
    assert probe.stdout.strip() == "no kforensics", probe.stderr
    return python


def _submit(master: str, tmp_path: Path, executor_python: Path) -> tuple[Path, subprocess.CompletedProcess]:
    """The documented commands, run as written in a shell of this environment, the executors on `executor_python`."""
    out = tmp_path / "out"
    commands = (documented_commands().replace("spark://HOST:7077", master)
                .replace("broker-1=/data/kafka-1 broker-2=/data/kafka-2", INPUTS)
                .replace("/data/kforensics-out", str(out)))
    assert "spark-submit" in commands and INPUTS in commands and str(out) in commands
    venv_bin = str(Path(sys.executable).parent)  # `python` and `spark-submit` as this environment has them
    env = {**os.environ, "PATH": f"{venv_bin}{os.pathsep}{os.environ['PATH']}", "SPARK_LOCAL_IP": "127.0.0.1",
           "PYSPARK_PYTHON": str(executor_python), "PYSPARK_DRIVER_PYTHON": sys.executable}
    env.pop("KFORENSICS_PURE_PYTHON", None)
    done = subprocess.run(["bash", "-e", "-c", commands], env=env, capture_output=True, text=True, timeout=1800,
                          cwd=tmp_path)
    return out, done


def _assert_same_scan(out: Path, done: subprocess.CompletedProcess, scanned: list[tuple]) -> dict:
    assert done.returncode == 1, (done.stdout[-2000:], done.stderr[-4000:])  # 1: a finding is a problem
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["findings"] and (out / "_kforensics.json").exists()
    found = _findings(out)
    assert found == scanned
    kinds = {json.loads(row[0]) for row in found}
    assert kinds >= {"sequence_gap", "zombie_epoch", "hanging_transaction"}
    return json.loads((out / "_kforensics.json").read_text())


def test_spark_submit_local(tmp_path: Path, scanned: list[tuple], python_without_kforensics: Path) -> None:
    """`--master local[2]`: the driver imports kforensics from the zip (it precedes site-packages) and reads the SQL
    files from it; the findings are `kforensics scan`'s."""
    out, done = _submit("local[2]", tmp_path, python_without_kforensics)
    _assert_same_scan(out, done, scanned)


def test_spark_submit_client_mode_on_a_standalone_cluster(standalone_cluster: str, tmp_path: Path,  # noqa: F811
                                                          scanned: list[tuple],
                                                          python_without_kforensics: Path) -> None:
    """Client mode on a standalone master and worker: executors whose Python lacks kforensics parse the segments
    with the package from the zip (so with the pure-Python reader: the zip carries no compiled core), and the
    findings are `kforensics scan`'s."""
    out, done = _submit(standalone_cluster, tmp_path, python_without_kforensics)
    manifest = _assert_same_scan(out, done, scanned)
    readers = manifest["executor_readers"]
    assert readers and all(r["python"] == str(python_without_kforensics) and r["reader"] == "pure-python"
                           for r in readers), readers
