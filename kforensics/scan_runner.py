"""Where a scan runs: on this user's `kforensics serve` when one runs, else in a Spark session started here.

Library code (no click, no rich): the `scan` command and the reports over log dirs call `run`. pyspark is
imported only when a session starts here.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from kforensics import scan_output
from kforensics.paths import log_dir
from kforensics.scan_options import ScanOptions

__all__ = ["ScanFailed", "ScanOptions", "run"]


class ScanFailed(Exception):
    """The scan could not be done. `usage`: the input or OUT is unusable (exit code 2), else it failed (1)."""

    def __init__(self, message: str, *, usage: bool = False, param: str | None = None) -> None:
        super().__init__(message)
        self.usage = usage
        self.param = param


def spark_log_path(out: str | None) -> str:
    """Where an embedded session's JVM log goes: OUT/_kforensics-spark.log for a local OUT, else a file in the
    cache dir."""
    if out is not None and "://" not in out:
        return os.path.join(out, scan_output.SPARK_LOG)
    return str(log_dir() / f"spark-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}.log")


def verbose_spark(verbose: bool) -> bool:
    """Spark's log on stderr (--verbose or KFORENSICS_VERBOSE=1) instead of in a log file."""
    return verbose or os.environ.get("KFORENSICS_VERBOSE", "").lower() in ("1", "true", "yes", "on")


@contextlib.contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM raises KeyboardInterrupt while the block runs, so that it unwinds as Ctrl-C does (cleanup runs;
    a scan's manifest stays `completed: false`)."""
    def on_sigterm(signum: int, _frame: Any) -> None:
        raise KeyboardInterrupt(signal.Signals(signum).name)

    previous = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run(inputs: list[tuple[str, str]], out: str, options: ScanOptions, *, master: str | None = None,
        spark_conf: dict[str, str] | None = None, verbose: bool = False,
        progress: Callable[[int, int], None] | None = None,
        note: Callable[[str], None] = lambda _message: None, ship_env: bool = False) -> scan_output.ScanSummary:
    """Scan `inputs` into OUT on the user's server (unless `master` or `spark_conf` asks for a session of its
    own), else in a session started here: embedded local Spark unless `master`. OUT is prepared before Spark
    starts; the session's JVM log goes to a file unless `verbose`. Raises ScanFailed."""
    with terminate_as_interrupt():
        if master is None and not spark_conf:
            summary = _on_server(inputs, out, options, progress, note)
            if summary is not None:
                return summary
        conf = dict(spark_conf or {})
        if ship_env:
            conf = {**_shipped_env(note), **conf}
        return _here(inputs, out, options, master, conf, verbose, progress)


def _shipped_env(note: Callable[[str], None]) -> dict[str, str]:
    """`--ship-env`: the Spark properties that ship this environment (packed once, cached), and PYSPARK_PYTHON
    pointed at its Python on the executors."""
    from kforensics.ship_env import ShipEnvError, packed_environment, spark_settings

    try:
        archive = packed_environment()
    except ShipEnvError as exc:
        raise ScanFailed(str(exc), usage=True, param="--ship-env") from exc
    note(f"shipping this environment to the executors: {archive}")
    conf, python = spark_settings(archive)
    os.environ["PYSPARK_PYTHON"] = python  # the executors' Python; the driver is this process
    return conf


def _on_server(inputs: list[tuple[str, str]], out: str, options: ScanOptions,
               progress: Callable[[int, int], None] | None,
               note: Callable[[str], None]) -> scan_output.ScanSummary | None:
    """The summary of the scan the running server did, or None when no usable server runs."""
    from kforensics.server import ServerError, scan_on_server

    def absolute(path: str) -> str:
        return path if "://" in path else os.path.abspath(path)

    request = {"inputs": [[label, absolute(path)] for label, path in inputs], "out": absolute(out),
               **options.to_dict()}
    try:
        summary = scan_on_server(request, progress=progress or (lambda _done, _total: None), note=note)
    except ServerError as exc:
        raise ScanFailed(str(exc), usage=exc.usage, param="DIR") from exc
    return None if summary is None else scan_output.ScanSummary.from_dict(summary)


def _stop(spark: Any) -> None:
    """Stops the session; after an interrupt that left a job thread inside the JVM, waits at most 30 s (the JVM
    ends with this process anyway)."""
    from kforensics.spark.session import job_threads_running

    if not job_threads_running():
        spark.stop()
        return
    stopping = threading.Thread(target=spark.stop, name="kforensics-stop", daemon=True)
    stopping.start()
    stopping.join(30)


def _interrupted(exc: BaseException) -> bool:
    """Whether `exc` was raised while a KeyboardInterrupt (Ctrl-C, or SIGTERM here) unwound."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False


def _here(inputs: list[tuple[str, str]], out: str, options: ScanOptions, master: str | None,
          spark_conf: dict[str, str], verbose: bool,
          progress: Callable[[int, int], None] | None) -> scan_output.ScanSummary:
    log_file = None if verbose_spark(verbose) else spark_log_path(out)
    try:
        manifest = scan_output.prepare(out, inputs=inputs, options=options.to_dict(),
                                       spark_log=log_file is not None and "://" not in out)
    except scan_output.OutputError as exc:
        raise ScanFailed(str(exc), usage=True, param="--out") from exc
    except OSError as exc:
        raise ScanFailed(f"cannot write {out}: {exc}", usage=True, param="--out") from exc
    from pyspark.sql import SparkSession

    from kforensics.spark.jobs import run_scan
    from kforensics.spark.scan_profile import ScanProfile
    from kforensics.spark.session import build_session

    already_running = SparkSession.getActiveSession() is not None
    root = logging.getLogger()
    # py4j logs through the root logger; unconfigured, that is a traceback on the operator's terminal
    py4j_log = logging.FileHandler(log_file, delay=True) if log_file is not None and not root.handlers else None
    if py4j_log is not None:
        root.addHandler(py4j_log)
    starting = time.perf_counter()
    spark = build_session(master, log_file=log_file, **spark_conf)
    profile = ScanProfile(spark.sparkContext, started=starting)
    if not already_running:
        profile.record("session start", time.perf_counter() - starting)
    try:
        return run_scan(spark, inputs, out, options, progress=progress, manifest=manifest, profile=profile)
    except FileNotFoundError as exc:
        raise ScanFailed(str(exc), usage=True, param="DIR") from exc
    except KeyboardInterrupt:
        raise
    except Exception as exc:
        if _interrupted(exc):  # py4j fails the cleanup calls of an interrupted scan; the interrupt is the story
            raise KeyboardInterrupt("the scan was interrupted") from exc
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)
        where = f"; Spark's log: {log_file}" if log_file else ""
        raise ScanFailed(f"the scan failed: {first_line}{where}") from exc
    finally:
        if not already_running:  # a session we did not start (tests, notebooks) is not ours to stop
            _stop(spark)
        if py4j_log is not None:
            root.removeHandler(py4j_log)
            py4j_log.close()
