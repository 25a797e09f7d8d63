"""`kforensics serve`: scans handed to a warm session over a Unix socket, and every way of not using it."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from kforensics import server
from kforensics.cli import main

REPO = Path(__file__).resolve().parent.parent
SAMPLE_LOGS = REPO / "sample_logs"
INPUTS = [f"{b}={SAMPLE_LOGS / b}" for b in ("broker-1", "broker-2", "broker-3")]  # as conftest's SAMPLE_INPUTS


@pytest.fixture
def sock_path() -> Iterator[str]:
    # short: a Unix socket path holds at most 107 bytes, pytest's tmp paths can be longer
    with tempfile.TemporaryDirectory(prefix="kf-", dir="/tmp") as folder:
        yield os.path.join(folder, "s.sock")


@pytest.fixture
def use_server(monkeypatch, sock_path: str) -> str:
    monkeypatch.setenv(server.SOCKET_ENV, sock_path)
    monkeypatch.delenv(server.USE_ENV, raising=False)
    return sock_path


class _FakeServer:
    """A listener that greets like a server with the given fingerprint, then records what it is sent."""

    def __init__(self, path: str, fingerprint: str) -> None:
        self.listener = server._listen(path)
        self.fingerprint, self.requests = fingerprint, []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        try:
            conn, _ = self.listener.accept()
        except OSError:  # closed by the test without a client (KFORENSICS_SERVER=off)
            return
        with conn:
            server._send(conn, {"server": "kforensics", "fingerprint": self.fingerprint, "pid": 4242})
            self.requests.extend(server._lines(conn))

    def close(self) -> None:
        self.listener.close()


@pytest.fixture
def live_server(spark, use_server: str) -> Iterator[tuple[server.Server, list[str]]]:
    """A server on the tests' shared session (no second JVM), in a thread of this process."""
    log: list[str] = []
    srv = server.Server(spark, server._listen(use_server), use_server, None, log.append)
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    yield srv, log
    srv.stopping.set()
    thread.join(timeout=60)
    srv.listener.close()


def test_no_socket_means_embedded(use_server: str) -> None:
    assert server.scan_on_server({"inputs": []}) is None


def test_a_stale_socket_is_ignored_and_replaced(use_server: str) -> None:
    dead = server._listen(use_server)
    dead.close()  # a server that died: the file stays, nobody listens
    assert os.path.exists(use_server)
    assert server.scan_on_server({"inputs": []}) is None
    fresh = server._listen(use_server)
    try:
        assert stat.S_IMODE(os.stat(use_server).st_mode) == 0o600
        with pytest.raises(server.ServerRunning):
            server._listen(use_server)
    finally:
        fresh.close()


def test_a_file_that_is_not_a_socket_is_left_alone(sock_path: str) -> None:
    Path(sock_path).write_text("not a socket")
    with pytest.raises(OSError, match="not a socket"):
        server._listen(sock_path)
    assert Path(sock_path).read_text() == "not a socket"


def test_a_server_running_other_code_is_not_used(use_server: str) -> None:
    fake = _FakeServer(use_server, fingerprint="0" * 16)
    notes: list[str] = []
    try:
        assert server.scan_on_server({"inputs": []}, note=notes.append) is None
        fake.thread.join(timeout=10)
        assert fake.requests == []  # the client hung up after the greeting
        assert notes and "runs other code" in notes[0]
    finally:
        fake.close()


def test_server_off_is_honoured(use_server: str, monkeypatch) -> None:
    fake = _FakeServer(use_server, fingerprint=server.fingerprint())
    monkeypatch.setenv(server.USE_ENV, "off")
    try:
        assert server.scan_on_server({"inputs": []}) is None
        assert fake.thread.is_alive()  # never even connected
    finally:
        fake.close()


def test_the_fingerprint_covers_the_code_and_the_interpreter(tmp_path: Path) -> None:
    """A copy of the package with the same sources has the same fingerprint; one changed line, or another
    interpreter path, gives another."""
    import shutil

    for package, folder in (("kforensics", "kforensics"), ("kforensics/parsers", "parsers"),
                            ("kforensics/spark", "spark")):
        (tmp_path / package).mkdir(parents=True)
        for source in (REPO / folder).glob("*.py"):
            shutil.copy(source, tmp_path / package / source.name)
    code = "from kforensics import server; print(server.__file__, server.fingerprint())"

    def fingerprint_of_copy(prelude: str = "") -> str:
        env = {**os.environ, "PYTHONPATH": str(tmp_path)}
        out = subprocess.run([sys.executable, "-c", prelude + code], capture_output=True, text=True, check=True,
                             env=env, cwd=tmp_path).stdout.split()
        assert out[0].startswith(str(tmp_path))  # the copy, not the installed package
        return out[1]

    assert fingerprint_of_copy() == server.fingerprint()
    # the same interpreter by another name (a venv's python3 next to python), as a console script runs it
    alias = tmp_path / "python-alias"
    alias.symlink_to(sys.executable)
    assert fingerprint_of_copy(f"import sys; sys.executable = {str(alias)!r}; ") == server.fingerprint()
    assert fingerprint_of_copy("import sys; sys.executable = '/other/python'; ") != server.fingerprint()
    with open(tmp_path / "kforensics" / "parsers" / "crc.py", "a") as fh:
        fh.write("# changed\n")
    assert fingerprint_of_copy() != server.fingerprint()


def test_stop_ends_the_server(live_server) -> None:
    srv, log = live_server
    assert server.stop_server(srv.path) == os.getpid()
    deadline = time.monotonic() + 30
    while srv.active:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    assert srv.stopping.is_set() and "asked to stop" in log


def test_an_idle_server_exits(sock_path: str) -> None:
    log: list[str] = []
    srv = server.Server(None, server._listen(sock_path), sock_path, 1.0, log.append)
    started = time.monotonic()
    srv.run()
    srv.listener.close()
    assert 1.0 <= time.monotonic() - started < 10 and "no scan for" in log[-1]


def test_scan_on_the_server_equals_the_embedded_scan(live_server, full_scan: Path, tmp_path: Path,
                                                    monkeypatch) -> None:
    """The CLI hands the scan to the server (a relative --out is resolved by the client) and prints what an
    embedded scan of the same input prints."""
    srv, log = live_server
    out = tmp_path / "out"
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["scan", *INPUTS, "--out", "out", "--json"])
    assert result.exit_code == 1, result.output
    assert "scanning on the kforensics server" in result.stderr
    assert any(line.startswith("scan of broker-1=") and line.endswith(str(out)) for line in log)

    def findings(folder: Path) -> list[tuple]:
        rows = pq.read_table(folder / "findings").to_pylist()
        return sorted((r["kind"], r["broker"], r["topic"], r["partition"], r["offset"] or -1) for r in rows)

    assert findings(out) == findings(full_scan)
    printed = sorted((f["kind"], f["broker"], f["topic"], f["partition"], f["offset"] or -1)
                     for f in map(json.loads, result.stdout.splitlines()))
    assert printed == findings(full_scan)


def test_unreadable_input_on_the_server_is_a_usage_error(live_server, tmp_path: Path) -> None:
    out = tmp_path / "never-written"
    result = CliRunner().invoke(main, ["scan", "file:///nonexistent/kafka-logs", "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert "not a readable directory" in result.output
    assert not out.exists()


def test_a_client_that_goes_away_gets_its_scan_cancelled(live_server, tmp_path: Path) -> None:
    srv, log = live_server
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(srv.path)
    messages = server._lines(conn)
    assert next(messages)["server"] == "kforensics"
    server._send(conn, {"op": "scan", "inputs": [["broker-1", str(SAMPLE_LOGS / "broker-1")]],
                        "out": str(tmp_path / "gone"), "headers_only": False, "topic_glob": None,
                        "txn_timeout_ms": 900_000, "transaction_state_partitions": 50})
    assert "progress" in next(messages)
    conn.close()
    deadline = time.monotonic() + 120
    while not any(line.startswith("scan failed") or line.startswith("scan done") for line in log):
        assert time.monotonic() < deadline, log
        time.sleep(0.2)
    assert "client went away: cancelling its scan" in log
    assert any(line.startswith("scan failed") for line in log), log  # cancelled, not run to its end
    # the server serves the next scan
    summary = server.scan_on_server({"inputs": [["broker-1", str(SAMPLE_LOGS / "broker-1")]],
                                     "out": str(tmp_path / "next"), "headers_only": True, "topic_glob": "orders",
                                     "txn_timeout_ms": 900_000, "transaction_state_partitions": 50})
    assert summary is not None and summary["partitions"] > 0


@pytest.mark.process
def test_serve_command_end_to_end(tmp_path: Path, sock_path: str) -> None:
    """The real commands in their own processes: `serve` starts (a second one is refused), a `scan` runs on it
    without importing pyspark; when the server's JVM dies, the next scan says so and the server exits."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_SUBMIT_ARGS", server.USE_ENV)}
    env[server.SOCKET_ENV] = sock_path
    srv = subprocess.Popen([sys.executable, "-m", "kforensics", "serve", "--idle-timeout", "0"], env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        lines: list[str] = []
        for line in srv.stderr:  # type: ignore[union-attr]
            lines.append(line)
            if "listening on" in line:
                break
        assert os.path.exists(sock_path), "".join(lines)[-3000:]
        again = subprocess.run([sys.executable, "-m", "kforensics", "serve"], env=env, capture_output=True,
                               text=True, timeout=60)
        assert again.returncode == 2 and "already listens" in again.stderr
        scan = subprocess.run([sys.executable, "-X", "importtime", "-m", "kforensics", "scan", *INPUTS,
                               "--headers-only", "--json", "--out", str(tmp_path / "out")],
                              env=env, capture_output=True, text=True, timeout=600)
        assert scan.returncode == 1, scan.stderr[-3000:]
        assert "scanning on the kforensics server" in scan.stderr
        imported = [line.split("|")[-1].strip() for line in scan.stderr.splitlines() if line.startswith("import time:")]
        assert "kforensics.server" in imported and not any(m.startswith("pyspark") for m in imported)
        assert {"replica_divergence", "sequence_gap"} <= {json.loads(line)["kind"] for line in scan.stdout.splitlines()}
        # the server's JVM dies: the next scan fails with a message (exit 2), and the server exits by itself
        java = [int(p) for p in subprocess.run(["pgrep", "-P", str(srv.pid), "java"], capture_output=True,
                                               text=True).stdout.split()]
        assert java, "no JVM under the server"
        for pid in java:
            os.kill(pid, 9)
        dead = subprocess.run([sys.executable, "-m", "kforensics", "scan", *INPUTS, "--headers-only", "--json",
                               "--out", str(tmp_path / "out2")], env=env, capture_output=True, text=True, timeout=600)
        assert dead.returncode == 2 and "Spark session is gone" in dead.stderr, dead.stderr[-3000:]
        srv.wait(timeout=120)
        assert not os.path.exists(sock_path)
        stop = subprocess.run([sys.executable, "-m", "kforensics", "serve", "--stop"], env=env, capture_output=True,
                              text=True, timeout=60)
        assert stop.returncode == 2 and "no kforensics server listens" in stop.stderr
    finally:
        if srv.poll() is None:
            srv.kill()
            srv.wait()


def test_serve_warms_headers_only_once_then_in_full_warm_scans_times(sock_path: str, monkeypatch) -> None:
    """The warm-up's scans (the session stands in for the JVM: `serve` only starts it, warms it and stops it)."""
    import kforensics.spark.jobs as jobs
    import kforensics.spark.session as session

    scans: list[tuple[list[tuple[str, str]], str, bool]] = []

    def scan(_spark, inputs, out, options) -> None:  # noqa: ANN001
        os.makedirs(out)  # as run_scan: the warm-up's folder must take it and lose it
        scans.append((inputs, out, options.headers_only))

    class Session:
        stopped = False

        def range(self, _n: int) -> Session:
            return self

        def count(self) -> int:
            return 1

        def stop(self) -> None:
            Session.stopped = True

    monkeypatch.setattr(jobs, "run_scan", scan)
    monkeypatch.setattr(session, "build_session", lambda *_args, **_kwargs: Session())
    log: list[str] = []

    def ready() -> None:
        raise KeyboardInterrupt("the test is done")

    warm = [("broker-1", str(SAMPLE_LOGS / "broker-1"))]
    server.serve(sock_path, idle_timeout_s=None, warm=warm, conf={}, log=log.append, ready=ready, warm_full_scans=3)
    assert [headers_only for _, _, headers_only in scans] == [True, False, False, False]
    assert all(inputs == warm for inputs, _, _ in scans)
    assert len({out for _, out, _ in scans}) == 4 and not any(os.path.exists(out) for _, out, _ in scans)
    assert any("(1 headers-only and 3 full scans)" in line for line in log), log
    assert Session.stopped and not os.path.exists(sock_path)


@pytest.mark.parametrize(("args", "expected"), [([], 4), (["--warm-scans", "2"], 2)])
def test_serve_command_passes_warm_scans(monkeypatch, sock_path: str, args: list[str], expected: int) -> None:
    seen: dict = {}
    monkeypatch.setattr(server, "serve", lambda path, **kwargs: seen.update(kwargs, path=path))
    result = CliRunner().invoke(main, ["serve", "--socket", sock_path, "--warm", str(SAMPLE_LOGS / "broker-1"), *args])
    assert result.exit_code == 0, result.output
    assert seen["path"] == sock_path and seen["warm_full_scans"] == expected
    assert [path for _, path in seen["warm"]] == [str(SAMPLE_LOGS / "broker-1")]


def test_serve_command_refuses_no_full_warm_scan(sock_path: str) -> None:
    result = CliRunner().invoke(main, ["serve", "--socket", sock_path, "--warm-scans", "0"])
    assert result.exit_code == 2 and "--warm-scans" in result.output
