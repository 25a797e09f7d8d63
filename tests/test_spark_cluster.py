"""The same scan on a real standalone Spark cluster (master + worker from the installed pyspark, on
localhost), driven through the CLI's --master, with the package shipped to the executor as a zip."""

from __future__ import annotations

import contextlib
import importlib.metadata
import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import SAMPLE_LOGS

# a master and a worker JVM of their own: the process tests' run (docs/development.md)
pytestmark = pytest.mark.process


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for(path: Path, text: str, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists() and text in path.read_text(errors="replace"):
            return True
        time.sleep(0.5)
    return False


@pytest.fixture(scope="module")
def standalone_cluster(tmp_path_factory) -> Iterator[str]:
    import pyspark

    spark_home = Path(pyspark.__file__).parent
    spark_class = spark_home / "bin" / "spark-class"
    logs = tmp_path_factory.mktemp("cluster")
    env = {**os.environ, "SPARK_HOME": str(spark_home), "SPARK_LOCAL_IP": "127.0.0.1",
           "SPARK_WORKER_DIR": str(logs / "work"), "PYSPARK_PYTHON": sys.executable}
    port = _free_port()
    url = f"spark://127.0.0.1:{port}"
    procs = []
    master_log, worker_log = logs / "master.log", logs / "worker.log"
    try:
        procs.append(subprocess.Popen(
            [str(spark_class), "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
             "--webui-port", str(_free_port())], env=env, stdout=master_log.open("w"), stderr=subprocess.STDOUT))
        if not _wait_for(master_log, "I have been elected leader", 60):
            pytest.fail(f"the standalone master did not start:\n{master_log.read_text()[-3000:]}")
        procs.append(subprocess.Popen(
            [str(spark_class), "org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1", "--cores", "2",
             "--memory", "2g", "--webui-port", str(_free_port())], env=env, stdout=worker_log.open("w"),
            stderr=subprocess.STDOUT))
        if not _wait_for(worker_log, "Successfully registered with master", 60):
            pytest.fail(f"the standalone worker did not register:\n{worker_log.read_text()[-3000:]}")
        yield url
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()


def test_scan_on_a_standalone_cluster_matches_local(standalone_cluster: str, spark, tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    from kforensics.spark.jobs import run_scan

    scratch = tmp_path / "tmp"  # the client's temporary files: the package zip it ships must not stay behind
    scratch.mkdir()
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable,
           "PYSPARK_DRIVER_PYTHON": sys.executable, "TMPDIR": str(scratch)}
    cluster = subprocess.run(
        [sys.executable, "-m", "kforensics", "scan", f"broker-1={SAMPLE_LOGS / 'broker-1'}", "--topic", "[ep]*",
         "--json", "--master", standalone_cluster, "--out", str(tmp_path / "cluster")],
        env=env, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert cluster.returncode == 1, cluster.stderr[-3000:]
    assert [name for name in os.listdir(scratch) if name.startswith("kforensics")] == []
    run_scan(spark, [("broker-1", str(SAMPLE_LOGS / "broker-1"))], str(tmp_path / "local"), topic_glob="[ep]*")

    def key(f: dict) -> tuple:
        return (f["kind"], f["topic"], f["offset"], f["producer_id"], f["message"])

    on_cluster = sorted(key(json.loads(line)) for line in cluster.stdout.splitlines())
    local = sorted(key(f) for f in pq.read_table(tmp_path / "local" / "findings").to_pylist())
    assert on_cluster == local
    assert {f[0] for f in on_cluster} >= {"sequence_gap", "zombie_epoch", "hanging_transaction"}
    for table in ("batches", "transactions", "producers"):
        assert (pq.read_table(tmp_path / "cluster" / table).num_rows
                == pq.read_table(tmp_path / "local" / table).num_rows > 0)


def test_find_on_a_standalone_cluster_matches_one_process(standalone_cluster: str, tmp_path: Path) -> None:
    """`find --master` on the cluster, the package shipped as a zip (its find and export readers too), prints the
    copies and findings a search in one process prints, and leaves no zip behind."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable,
           "PYSPARK_DRIVER_PYTHON": sys.executable, "TMPDIR": str(scratch), "KFORENSICS_SERVER": "off"}
    args = [sys.executable, "-m", "kforensics", "find", f"broker-1={SAMPLE_LOGS / 'broker-1'}", "--value-contains",
            "a", "--json"]
    cluster = subprocess.run([*args, "--master", standalone_cluster], env=env, capture_output=True, text=True,
                             timeout=600, cwd=tmp_path)
    here = subprocess.run(args, env=env, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert cluster.returncode == here.returncode == 0, cluster.stderr[-3000:]
    assert cluster.stdout == here.stdout and len(here.stdout.splitlines()) > 500
    assert [name for name in os.listdir(scratch) if name.startswith("kforensics")] == []


_READER_CHECK = """
import sys
from pyspark.sql import SparkSession
from kforensics.spark.jobs import ship_package

spark = SparkSession.builder.master(sys.argv[1]).appName("kforensics-reader-check").getOrCreate()
ship_package(spark)  # the zip a scan ships: Python files only


def reader(_rows):
    from kforensics.parsers import core
    yield f"{core.READER} {'kforensics.zip' in core.__file__}"


print("READER", *spark.sparkContext.parallelize([0], 1).mapPartitions(reader).collect())
spark.stop()
"""


def test_cluster_executors_run_the_compiled_reader(standalone_cluster: str, tmp_path: Path) -> None:
    """Workers started from this environment import the package from the shipped zip and its compiled core
    from the environment (the zip carries no .so)."""
    from kforensics.parsers import core

    if core.COMPILED is None:
        pytest.skip("the compiled core is not built in this environment")
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable,
           "PYSPARK_DRIVER_PYTHON": sys.executable}
    env.pop("KFORENSICS_PURE_PYTHON", None)
    out = subprocess.run([sys.executable, "-c", _READER_CHECK, standalone_cluster], env=env, capture_output=True,
                         text=True, timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    (line,) = [line for line in out.stdout.splitlines() if line.startswith("READER")]
    assert line == "READER compiled True"


def _runtime_dependencies(name: str = "kforensics", seen: set[str] | None = None) -> set[str]:
    """The distributions `name` needs at run time, transitively (no extras), as this environment declares them."""
    seen = set() if seen is None else seen
    for requirement in importlib.metadata.requires(name) or []:
        if ";" in requirement and "extra" in requirement.split(";", 1)[1]:
            continue
        dependency = re.split(r"[ ;<>=!~\[(]", requirement, maxsplit=1)[0].strip()
        key = dependency.lower().replace("_", "-")
        if key not in seen:
            seen.add(key)
            with contextlib.suppress(importlib.metadata.PackageNotFoundError):
                _runtime_dependencies(dependency, seen)
    return seen


def _shipped_dependencies() -> list[str]:
    """What the packed environment needs besides kforensics: its declared run-time dependencies (pyproject's, read
    back from this environment, so that a new one is never forgotten here), installed without their own dependency
    resolution from the local index or pip's cache; pyspark and py4j are linked into its site-packages instead (a
    400 MB download otherwise, and `--ship-env` leaves them out of the archive anyway)."""
    return sorted(_runtime_dependencies() - {"pyspark", "py4j"})
#: What building kforensics from this checkout needs (pyproject.toml's build-system), without build isolation.
_BUILD_DEPS = ("setuptools>=68", "wheel", "Cython>=3.0", "packaging")


def _packable_venv(root: Path) -> Path:
    """A venv venv-pack accepts (no system site-packages, kforensics installed from this checkout, not editable);
    its Python."""
    import py4j
    import pyspark
    from conftest import REPO

    subprocess.run([sys.executable, "-m", "venv", str(root / "env")], check=True, timeout=300)
    python = root / "env" / "bin" / "python"
    pip = [str(python), "-m", "pip", "install", "-q", "--no-deps"]
    pinned = []  # the versions this environment runs (pip's cache has them)
    for name in _shipped_dependencies():
        try:
            pinned.append(f"{name}=={importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            pinned.append(name)
    subprocess.run([*pip, *pinned, *_BUILD_DEPS], check=True, timeout=900, capture_output=True)
    subprocess.run([*pip, "--no-build-isolation", str(REPO)], check=True, timeout=900, capture_output=True)
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    for module in (pyspark, py4j):  # linked in (a .pth to another folder would be an editable install to venv-pack)
        (Path(site) / module.__name__).symlink_to(Path(module.__file__).parent)
    return python


def test_ship_env_gives_executors_without_kforensics_the_compiled_reader(standalone_cluster: str,
                                                                          tmp_path: Path) -> None:
    """`scan --master URL --ship-env` from a venv: the executors' Python (PYSPARK_PYTHON, a bare venv without
    kforensics or pyarrow) is replaced by the shipped environment's, and every executor ran the compiled reader
    (the manifest's executor_readers)."""
    from kforensics.parsers import core

    if os.environ.get("KFORENSICS_SHIP_ENV_TEST") != "1":
        pytest.skip("builds and packs a venv of its own (10+ minutes on 2 cores): set KFORENSICS_SHIP_ENV_TEST=1")
    pytest.importorskip("venv_pack", reason="venv-pack (a dependency of --ship-env) is not installed")
    if core.COMPILED is None:
        pytest.skip("the compiled core is not built in this environment")
    python = _packable_venv(tmp_path)
    subprocess.run([sys.executable, "-m", "venv", str(tmp_path / "bare")], check=True, timeout=300)
    bare = tmp_path / "bare" / "bin" / "python"
    assert subprocess.run([str(bare), "-c", "import kforensics"], capture_output=True, cwd=tmp_path).returncode != 0
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": str(bare),
           "KFORENSICS_CACHE_DIR": str(tmp_path / "cache"), "KFORENSICS_SERVER": "off"}
    env.pop("PYSPARK_DRIVER_PYTHON", None)
    env.pop("KFORENSICS_PURE_PYTHON", None)
    out = tmp_path / "out"
    cmd = [str(python), "-m", "kforensics", "scan", f"broker-1={SAMPLE_LOGS / 'broker-1'}", "--topic", "[ep]*",
           "--json", "--master", standalone_cluster, "--ship-env", "--out", str(out)]
    scan = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert scan.returncode == 1, scan.stderr[-3000:]
    kinds = {json.loads(line)["kind"] for line in scan.stdout.splitlines()}
    assert kinds >= {"sequence_gap", "zombie_epoch", "hanging_transaction"}
    readers = json.loads((out / "_kforensics.json").read_text())["executor_readers"]
    assert readers and all(r["reader"] == "compiled" and "kforensics-env" in r["python"] for r in readers), readers
    assert len(list((tmp_path / "cache").glob("env-*.tar.gz"))) == 1  # cached for the next scan
