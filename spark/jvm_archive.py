"""The embedded driver JVM's class-data archive (AppCDS): faster start of local Spark sessions.

A freshly started local session spends seconds finding, reading and verifying the classes Spark needs in
its ~280 jars (each class looked up jar after jar). `kforensics warmup` records the classes a scan loads
into a dynamic CDS archive (`-XX:ArchiveClassesAtExit`); every later embedded session maps that archive
(`-XX:SharedArchiveFile`) instead. An archive is valid only for the Java, the Spark jars and the JVM options
it was recorded with, so its file name is a hash of them: after an upgrade a new one is recorded, the old
one is simply not used.

Java 17 dies with SIGBUS when it maps a truncated archive, so an archive is installed only after a
throw-away JVM has mapped it with `-Xshare:on`, and a session uses it only while its size is the recorded
one. Nothing here imports pyspark at module level.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kforensics.paths import CACHE_ENV, cache_dir  # noqa: F401 - CACHE_ENV is part of this module's interface


def _spark_home() -> Path | None:
    if os.environ.get("SPARK_HOME"):
        return Path(os.environ["SPARK_HOME"])
    spec = importlib.util.find_spec("pyspark")
    return Path(spec.origin).parent if spec and spec.origin else None


def _java() -> Path | None:
    """The java that spark-submit runs: $JAVA_HOME/bin/java, else the one on PATH."""
    if os.environ.get("JAVA_HOME"):
        candidate = Path(os.environ["JAVA_HOME"]) / "bin" / "java"
        return candidate.resolve() if candidate.exists() else None
    found = shutil.which("java")
    return Path(found).resolve() if found else None


def archive_path(java_options: str) -> Path | None:
    """Where the archive for this Java, these Spark jars and these JVM options lives (None: no Java or Spark)."""
    java, home = _java(), _spark_home()
    if java is None or home is None or not (home / "jars").is_dir():
        return None
    jars = sorted((e.name, e.stat().st_size) for e in os.scandir(home / "jars") if e.name.endswith(".jar"))
    stat = java.stat()
    key = json.dumps([str(java), stat.st_size, stat.st_mtime_ns, str(home), jars, java_options])
    return cache_dir() / f"spark-classes-{hashlib.sha256(key.encode()).hexdigest()[:16]}.jsa"


def _sidecar(archive: Path) -> Path:
    return archive.with_suffix(".json")


def usable_archive(java_options: str) -> Path | None:
    """The recorded archive for these options, if there is one and it is whole."""
    path = archive_path(java_options)
    if path is None:
        return None
    try:
        recorded = json.loads(_sidecar(path).read_text())
        return path if recorded.get("size") == path.stat().st_size else None
    except (OSError, ValueError, AttributeError):
        return None


def _option(flag: str, path: Path) -> str:
    # Spark splits extraJavaOptions like a shell: quote a path with blanks in it
    text = f"{flag}={path}"
    return f"'{text}'" if any(c.isspace() for c in text) else text


def with_archive(java_options: str) -> str:
    """`java_options`, plus the archive to map when one is recorded for them."""
    path = usable_archive(java_options)
    return f"{java_options} {_option('-XX:SharedArchiveFile', path)}" if path else java_options


def _maps(java: str, args: list[str], classpath: str, archive: Path) -> bool:
    """Does a throw-away JVM with the recording JVM's options map `archive`?"""
    with tempfile.TemporaryDirectory(prefix="kforensics-cds-") as scratch:  # a crash writes hs_err_pid*.log
        command = [java, *args, "-Xshare:on", f"-XX:SharedArchiveFile={archive}",
                   f"-XX:ErrorFile={scratch}/hs_err.log", "-cp", classpath, "-version"]
        try:
            return subprocess.run(command, cwd=scratch, capture_output=True, timeout=120).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            return False


def record(run: Callable[[Any], None], java_options: str, start_session: Callable[[str], Any], *,
           timeout_s: float = 900) -> dict[str, Any]:
    """Start a local session whose JVM records its classes (`start_session(java_options)` starts it with those
    JVM options), call `run(spark)`, stop the JVM, check the archive and install it. Returns what the sidecar
    file says (path, size, seconds). Raises RuntimeError when no archive could be recorded; the session's JVM
    must be the first of this process."""
    from pyspark import SparkContext

    if SparkContext._gateway is not None:
        raise RuntimeError("this process already started a JVM; record the class-data archive from a fresh one")
    final = archive_path(java_options)
    if final is None:
        raise RuntimeError("no java or no Spark jars found (JAVA_HOME, PATH, SPARK_HOME)")
    final.parent.mkdir(parents=True, exist_ok=True)
    partial = final.with_name(f"{final.name}.{os.getpid()}.partial")
    started = time.perf_counter()
    # -Xlog:cds: a line per class it cannot archive (generated, signed jar) otherwise
    spark = start_session(f"{java_options} {_option('-XX:ArchiveClassesAtExit', partial)} -Xlog:cds*=off:stderr")
    try:
        run(spark)
        jvm = spark.sparkContext._jvm
        args = [a for a in jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()
                if not a.startswith("-XX:ArchiveClassesAtExit")]
        classpath = jvm.System.getProperty("java.class.path")
        java = os.path.join(jvm.System.getProperty("java.home"), "bin", "java")
    finally:
        gateway = SparkContext._gateway
        spark.stop()
        # The JVM writes the archive as it exits, and it exits when its stdin closes.
        gateway.proc.stdin.close()
        try:
            gateway.proc.wait(timeout=timeout_s)
        finally:
            with contextlib.suppress(Exception):  # the JVM end of the gateway is gone already
                gateway.shutdown()
            SparkContext._gateway = SparkContext._jvm = None
    try:
        if not partial.exists() or not _maps(java, args, classpath, partial):
            raise RuntimeError(f"the JVM wrote no usable class-data archive ({partial})")
        info = {"path": str(final), "size": partial.stat().st_size, "seconds": round(time.perf_counter() - started, 1),
                "java": java, "java_options": java_options, "recorded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                                          time.gmtime())}
        os.replace(partial, final)
        sidecar = _sidecar(final)
        written = sidecar.with_name(f"{sidecar.name}.{os.getpid()}.partial")
        written.write_text(json.dumps(info, indent=1))
        os.replace(written, sidecar)
        return info
    finally:
        partial.unlink(missing_ok=True)
