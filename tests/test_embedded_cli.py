"""The `kforensics scan` command in a process of its own, with its own JVM, as an operator runs it: the terminal
holds no line from Spark or the JVM (their log goes to a file), and SIGTERM leaves an OUT marked incomplete."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO, SAMPLE_LOGS

from kforensics.scan_output import MANIFEST, SPARK_LOG

# What Spark, log4j and the JVM print on a terminal when nobody stops them.
JVM_CHATTER = ("WARNING: Using incubator modules", "log4j", "WARN Utils", "SPARK_LOCAL_IP", "Setting default log level",
               "setLogLevel", "NativeCodeLoader", "WARN ", "ERROR ", "Exception", "at org.apache")


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {**os.environ, "KFORENSICS_SERVER": "off", "KFORENSICS_CACHE_DIR": str(tmp_path / "cache"), **extra}
    env.pop("KFORENSICS_VERBOSE", None)
    env.update(extra)
    return env


def _scan_command(out: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "kforensics", "scan", str(SAMPLE_LOGS / "broker-1"), "--out", str(out), *args]


@pytest.mark.process
def test_an_embedded_scan_keeps_the_terminal_for_the_operator(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = subprocess.run(_scan_command(out, "--headers-only", "--json"), cwd=REPO, env=_env(tmp_path),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, done.stderr[-3000:]
    assert done.stderr == "", done.stderr[-3000:]  # not one line from Spark, log4j or the JVM
    assert {json.loads(line)["kind"] for line in done.stdout.splitlines()} >= {"sequence_gap"}
    log = (out / SPARK_LOG).read_text()
    assert "log4j" in log or "WARN" in log  # what would have been on the terminal is in the log file
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["completed"] is True and manifest["spark_log"] == SPARK_LOG
    # --verbose: Spark's log on stderr again, and no log file
    verbose_out = tmp_path / "verbose"
    loud = subprocess.run(_scan_command(verbose_out, "--headers-only", "--json", "--topic", "orders", "--verbose"),
                          cwd=REPO, env=_env(tmp_path), capture_output=True, text=True, timeout=600)
    assert loud.returncode in (0, 1), loud.stderr[-3000:]
    assert any(chatter in loud.stderr for chatter in JVM_CHATTER), loud.stderr[-3000:]
    assert not (verbose_out / SPARK_LOG).exists()


# SIGTERM while the parse pass writes its first table, and while the analysis writes its outputs side by side
# from several threads (an interrupted scan cancels their jobs rather than wait for them; clearing the cache
# beside a job still filling it deadlocked Spark)
@pytest.mark.process
@pytest.mark.parametrize("written_first", ["batches", "findings"])
def test_sigterm_leaves_an_incomplete_out_that_reports_refuse(tmp_path: Path, written_first: str) -> None:
    out = tmp_path / "out"
    command = [sys.executable, "-m", "kforensics", "scan", f"broker-1={SAMPLE_LOGS / 'broker-1'}",
               f"broker-2={SAMPLE_LOGS / 'broker-2'}", "--out", str(out), "--json"]
    proc = subprocess.Popen(command, cwd=REPO, env=_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        deadline = time.monotonic() + 300
        while not (out / written_first).is_dir() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130 and "interrupted" in stderr, stderr[-3000:]
    assert "Traceback" not in stderr, stderr[-3000:]  # py4j's report of the interrupt goes to the log file
    assert json.loads((out / MANIFEST).read_text())["completed"] is False
    refused = subprocess.run([sys.executable, "-m", "kforensics", "gaps", str(out)], cwd=REPO, env=_env(tmp_path),
                             capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2 and "did not complete" in refused.stderr


def test_a_failure_while_an_interrupt_unwinds_is_the_interrupt() -> None:
    from kforensics.scan_runner import _interrupted

    def cleanup_after(interrupt: BaseException) -> BaseException:
        try:
            try:
                raise interrupt
            finally:
                raise RuntimeError("Answer from Java side is empty")  # what py4j raises in a `finally`
        except RuntimeError as exc:
            return exc

    assert _interrupted(cleanup_after(KeyboardInterrupt("SIGTERM")))
    assert not _interrupted(cleanup_after(ValueError("a failed scan")))
    assert not _interrupted(RuntimeError("no cause"))


@pytest.mark.parametrize("what", ["fifo", "log_dir", "partition_dir"])
def test_dump_of_what_is_not_a_file(tmp_path: Path, what: str) -> None:
    from kforensics.dump_engine import partition_dir_files

    if what == "fifo":
        target = tmp_path / "00000000000000000000.log"
        os.mkfifo(target)  # opening it for reading would block: it must never be opened
        expected = "a named pipe (FIFO), not a regular file"
    elif what == "log_dir":
        target = SAMPLE_LOGS / "broker-1"
        expected = "is a broker log dir, not a partition directory"
    else:
        target = SAMPLE_LOGS / "broker-1" / "orders-0"
        expected = None
    done = subprocess.run([sys.executable, "-m", "kforensics", "dump", str(target)], cwd=REPO, capture_output=True,
                          text=True, timeout=120)
    if expected:
        assert done.returncode == 2 and expected in done.stderr
        return
    assert done.returncode == 0, done.stderr
    dumped = [line.split(" ", 1)[1] for line in done.stdout.splitlines() if line.startswith("Dumping ")]
    files, findings = partition_dir_files(target)
    assert dumped == [str(f) for f in files] and not findings
    names = [Path(f).name for f in dumped]
    # each segment's .log first, then its indexes, by base offset; snapshots and checkpoints after them
    assert names[:3] == ["00000000000000000000.log", "00000000000000000000.index", "00000000000000000000.timeindex"]
    assert names[3] == "00000000000000000130.log"
    assert names[-2:] == ["leader-epoch-checkpoint", "partition.metadata"]
    assert sorted(names) == sorted(os.listdir(target))
    # the same lines as dumping those files one by one
    one_by_one = subprocess.run([sys.executable, "-m", "kforensics", "dump", *dumped], cwd=REPO, capture_output=True,
                                text=True, timeout=120)
    assert one_by_one.stdout == done.stdout
