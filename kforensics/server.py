"""`kforensics serve`: one warm embedded Spark session that the scans of one user share.

A scan in a freshly started JVM spends most of its time starting Spark and compiling the code that plans its
queries, not reading the data (docs/benchmarks/cli-and-parsers.md). The server keeps a session that has scanned. While it runs, `kforensics scan` (and the report commands that scan a log dir first) hand their scan to
it over a Unix socket instead of starting Spark themselves; `--master` and `--conf` always start their own.

The socket is `$KFORENSICS_SERVER_SOCKET`, else `server.sock` in the cache dir of `kforensics warmup`. It is
created with mode 0600 (connecting needs write permission on it), and the server serves only processes of its
own user (SO_PEERCRED). A client uses the server only if it runs the same kforensics code with the same Python and
pyspark (a fingerprint in its greeting); otherwise it says so on stderr and scans embedded.

Protocol: JSON lines, one request per connection.
    server -> client  {"server": "kforensics", "fingerprint": F, "pid": P}
    client -> server  {"op": "scan", "inputs": [[label, path]], "out": OUT, **OPTIONS}   or {"op": "stop"}
                      (OPTIONS: `ScanOptions.to_dict()`, every option the `scan` command has, by field name; one
                      missing keeps its default, a bad value is a usage error)
    server -> client  {"waiting": true} (another scan runs), {"progress": [done, total]}...,
                      then {"summary": {...}} or {"error": MESSAGE, "usage": B} (or {"stopping": true})

This module imports pyspark only inside `serve` (the client side runs in every `kforensics scan`).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.metadata
import json
import os
import signal
import socket
import stat
import struct
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from kforensics.defaults import WARM_FULL_SCANS

SOCKET_ENV = "KFORENSICS_SERVER_SOCKET"
#: `KFORENSICS_SERVER=off`: never hand a scan to a running server.
USE_ENV = "KFORENSICS_SERVER"
GREETING_TIMEOUT_S = 10.0
PROGRESS_INTERVAL_S = 0.5
_SUN_PATH_MAX = 107  # sockaddr_un.sun_path holds 108 bytes, NUL included


class ServerError(Exception):
    """The server could not do the scan it accepted (`usage`: the input was unusable, exit code 2)."""

    def __init__(self, message: str, usage: bool = False) -> None:
        super().__init__(message)
        self.usage = usage


def socket_path() -> str:
    from kforensics.paths import cache_dir

    return os.environ.get(SOCKET_ENV) or str(cache_dir() / "server.sock")


def fingerprint() -> str:
    """The code a scan would run: kforensics' sources, the Python environment and the pyspark version. The
    interpreter is resolved (a venv's bin/python and bin/python3 are one interpreter) and its environment named
    by sys.prefix (two venvs on one interpreter differ)."""
    digest = hashlib.sha256(f"{sys.prefix}\0{os.path.realpath(sys.executable)}".encode())
    with contextlib.suppress(importlib.metadata.PackageNotFoundError):
        digest.update(importlib.metadata.version("pyspark").encode())
    for name in ("kforensics", "kforensics.parsers", "kforensics.spark"):
        folder = Path(importlib.import_module(name).__file__ or "").parent
        for path in sorted(folder.glob("*.py")):
            digest.update(f"{name}/{path.name}\0".encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _send(conn: socket.socket, message: dict[str, Any]) -> None:
    conn.sendall((json.dumps(message, default=str) + "\n").encode())


def _lines(conn: socket.socket) -> Iterator[dict[str, Any]]:
    """The JSON messages the peer sends, until it closes the connection."""
    buffer = b""
    while True:
        chunk = conn.recv(65536)
        if not chunk:
            return
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            if line.strip():
                yield json.loads(line)


# --- client ------------------------------------------------------------------------------------------------------

def _open(path: str) -> tuple[socket.socket, dict[str, Any]] | None:
    """A connection to the kforensics server on `path` and its greeting; None when none answers there (no socket,
    a stale one of a server that died, or something else)."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.settimeout(GREETING_TIMEOUT_S)
        conn.connect(path)
        greeting = next(_lines(conn), None)
    except (OSError, ValueError):
        conn.close()
        return None
    if not greeting or greeting.get("server") != "kforensics":
        conn.close()
        return None
    conn.settimeout(None)
    return conn, greeting


def _connect(path: str, note: Callable[[str], None]) -> tuple[socket.socket, dict[str, Any]] | None:
    """`_open`, for a scan: None (after a note) also when the server runs other code, or when it is switched off."""
    if os.environ.get(USE_ENV, "").lower() in ("off", "0", "no", "false") or not os.path.exists(path):
        return None
    opened = _open(path)
    if opened is not None and opened[1].get("fingerprint") != fingerprint():
        note(f"the kforensics server at {path} (pid {opened[1].get('pid')}) runs other code or another Python; "
             "scanning in an embedded session (restart the server to use it)")
        opened[0].close()
        return None
    return opened


def scan_on_server(request: dict[str, Any], *, progress: Callable[[int, int], None] | None = None,
                   note: Callable[[str], None] = lambda _message: None) -> dict[str, Any] | None:
    """Run a scan on the server of this user: its summary, or None when no usable server runs (scan embedded).
    Local paths in `request` must be absolute (the server has its own working directory)."""
    connected = _connect(socket_path(), note)
    if connected is None:
        return None
    conn, greeting = connected
    with conn:
        note(f"scanning on the kforensics server (pid {greeting.get('pid')})")
        _send(conn, {"op": "scan", **request})
        for message in _lines(conn):
            if "progress" in message and progress is not None:
                progress(*message["progress"])
            elif message.get("waiting"):
                note("the server is busy with another scan; waiting for it")
            elif "summary" in message:
                return message["summary"]
            elif "error" in message:
                raise ServerError(message["error"], usage=bool(message.get("usage")))
    raise ServerError("the kforensics server closed the connection before the scan ended (did it stop or die?)")


def stop_server(path: str | None = None) -> int | None:
    """Ask the server to exit after its current scan; its pid, or None when none runs."""
    opened = _open(path or socket_path())
    if opened is None:
        return None
    conn, greeting = opened
    with conn:
        try:
            _send(conn, {"op": "stop"})
            for message in _lines(conn):  # the server closes once it has said so
                if message.get("stopping"):
                    return int(greeting.get("pid") or 0)
        except (OSError, ValueError):
            return None
    return None


# --- server ------------------------------------------------------------------------------------------------------

class ServerRunning(Exception):
    """Another server already listens on the socket."""


def _listen(path: str) -> socket.socket:
    """Bind the socket (mode 0600), replacing the file of a server that died."""
    if len(os.fsencode(path)) > _SUN_PATH_MAX:
        raise OSError(f"socket path too long for a Unix socket ({len(path)} bytes): set {SOCKET_ENV}")
    os.makedirs(os.path.dirname(os.path.abspath(path)), mode=0o700, exist_ok=True)
    if os.path.lexists(path):
        if not stat.S_ISSOCK(os.lstat(path).st_mode):
            raise OSError(f"{path} exists and is not a socket")
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.settimeout(GREETING_TIMEOUT_S)
            probe.connect(path)
            raise ServerRunning(f"a kforensics server already listens on {path}")
        except (ConnectionRefusedError, FileNotFoundError):
            os.unlink(path)  # left by a server that died
        finally:
            probe.close()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_umask = os.umask(0o177)  # the socket file is 0600: connecting needs write permission on it
    try:
        listener.bind(path)
    finally:
        os.umask(old_umask)
    listener.listen(8)
    return listener


def _peer_uid(conn: socket.socket) -> int | None:
    if not hasattr(socket, "SO_PEERCRED"):
        return os.getuid()  # not Linux: the socket file's mode 0600 is the guard
    _pid, uid, _gid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
    return uid


class Server:
    """The accept loop, one thread per connection, one scan at a time."""

    def __init__(self, spark: Any, listener: socket.socket, path: str, idle_timeout_s: float | None,
                 log: Callable[[str], None]) -> None:
        self.spark, self.listener, self.path, self.idle_timeout_s, self.log = spark, listener, path, idle_timeout_s, log
        self.scan_lock = threading.Lock()
        self.stopping = threading.Event()
        self.active = 0
        self.last_activity = time.monotonic()
        self.fingerprint = fingerprint()
        self._state = threading.Lock()

    def run(self) -> None:
        self.listener.settimeout(1.0)
        while not self.stopping.is_set():
            with self._state:
                idle = self.active == 0 and self.idle_timeout_s and \
                    time.monotonic() - self.last_activity > self.idle_timeout_s
            if idle:
                self.log(f"no scan for {self.idle_timeout_s / 60:g} minutes: exiting")
                return
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            if _peer_uid(conn) != os.getuid():
                conn.close()
                continue
            with self._state:
                self.active += 1
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()
        while True:  # let a running scan finish and answer its client
            with self._state:
                if self.active == 0:
                    return
            time.sleep(0.2)

    def _handle(self, conn: socket.socket) -> None:
        try:
            with conn:
                _send(conn, {"server": "kforensics", "fingerprint": self.fingerprint, "pid": os.getpid()})
                conn.settimeout(GREETING_TIMEOUT_S)  # a client that never asks must not hold the server forever
                request = next(_lines(conn), None)
                conn.settimeout(None)
                if request is None:
                    return
                if request.get("op") == "stop":
                    self.log("asked to stop")
                    self.stopping.set()
                    _send(conn, {"stopping": True})
                elif request.get("op") == "scan":
                    self._scan(conn, request)
                else:
                    _send(conn, {"error": f"unknown request {request.get('op')!r}", "usage": True})
        except (OSError, ValueError) as exc:
            self.log(f"connection dropped: {exc}")
        finally:
            with self._state:
                self.active -= 1
                self.last_activity = time.monotonic()

    def _session_alive(self) -> bool:
        try:
            return not self.spark.sparkContext._jsc.sc().isStopped()
        except Exception:  # noqa: BLE001 - a dead JVM or gateway shows as any py4j error
            return False

    def _scan(self, conn: socket.socket, request: dict[str, Any]) -> None:
        from kforensics.scan_options import ScanOptions
        from kforensics.scan_output import OutputError
        from kforensics.spark.jobs import run_scan

        if not self.scan_lock.acquire(blocking=False):
            _send(conn, {"waiting": True})
            self.scan_lock.acquire()
        try:
            gone = threading.Event()
            context = self.spark.sparkContext
            # the scan's jobs (its job threads take this thread's tags), cancelled by tag: cancelAllJobs would
            # forget a job waiting on another's stage, and the scan would wait for it forever
            tag = f"kforensics-serve-{uuid.uuid4().hex[:12]}"

            def progress(done: int, total: int) -> None:
                if gone.is_set():
                    context.cancelJobsWithTag(tag)  # the client went away (Ctrl-C): every job the scan still starts
                    return
                try:
                    _send(conn, {"progress": [done, total]})
                except OSError:
                    self.log("client went away: cancelling its scan")
                    gone.set()
                    context.cancelJobsWithTag(tag)

            inputs = [(label, path) for label, path in request["inputs"]]
            self.log(f"scan of {', '.join(f'{label}={path}' for label, path in inputs)} -> {request['out']}")
            started = time.monotonic()
            try:
                context.addJobTag(tag)  # in here: a dead session fails the scan with its message
                options = ScanOptions.from_dict(request)
                summary = run_scan(self.spark, inputs, request["out"], options, progress=progress)
            except (FileNotFoundError, OutputError, ValueError, TypeError) as exc:
                _send(conn, {"error": str(exc), "usage": True})
                return
            except Exception as exc:  # noqa: BLE001 - reported to the client; the server keeps serving
                self.log(f"scan failed: {exc!r}")
                healthy = self._session_alive()
                if not healthy:
                    self.log("the Spark session is gone: exiting")
                    self.stopping.set()
                if not gone.is_set():
                    first_line = str(exc).splitlines()[0] if str(exc) else repr(exc)
                    _send(conn, {"error": f"the scan failed on the server: {first_line}"
                                          + ("" if healthy else " (its Spark session is gone; the server exits)")})
                return
            self.log(f"scan done in {time.monotonic() - started:.1f} s")
            _send(conn, {"summary": summary.to_dict()})
        finally:
            with contextlib.suppress(Exception):  # a dead session has no tags left to clear
                self.spark.sparkContext.clearJobTags()
            self.scan_lock.release()


def serve(path: str, *, idle_timeout_s: float | None, warm: list[tuple[str, str]], conf: dict[str, str],
          log: Callable[[str], None], ready: Callable[[], None] = lambda: None, spark_log: str | None = None,
          warm_full_scans: int = WARM_FULL_SCANS) -> None:
    """Start the session, warm it on `warm` (a headers-only scan, then `warm_full_scans` full ones, into a
    temporary folder), serve until stopped, idle for `idle_timeout_s`, or signalled (SIGTERM, SIGINT). Raises
    ServerRunning or OSError when the socket cannot be bound."""
    listener = _listen(path)
    spark = None

    def on_signal(signum: int, _frame: Any) -> None:
        raise KeyboardInterrupt(signal.Signals(signum).name)

    previous = signal.signal(signal.SIGTERM, on_signal)
    try:
        from kforensics.spark.jobs import warm_up
        from kforensics.spark.session import build_session

        started = time.monotonic()
        spark = build_session(None, "kforensics-server", log_file=spark_log, long_lived=True, **conf)
        if spark_log:
            log(f"Spark's log: {spark_log}")
        spark.range(1).count()
        log(f"session started in {time.monotonic() - started:.1f} s")
        if warm:
            warm_up(spark, warm, full_scans=warm_full_scans)
            log(f"warmed on {', '.join(path for _, path in warm)} (1 headers-only and {warm_full_scans} full "
                f"scan{'s' * (warm_full_scans != 1)}); ready after {time.monotonic() - started:.1f} s")
        ready()
        Server(spark, listener, path, idle_timeout_s, log).run()
    except KeyboardInterrupt as exc:
        log(f"stopping ({exc or 'interrupted'})")
    finally:
        signal.signal(signal.SIGTERM, previous)
        listener.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        if spark is not None:
            with contextlib.suppress(Exception):  # the JVM may be gone already
                spark.stop()
