"""`kforensics serve` (a warm Spark session for this user's scans) and `kforensics warmup` (a class-data archive
that makes later embedded sessions start faster)."""

from __future__ import annotations

import os
import time

import click

from kforensics.commands import options
from kforensics.defaults import WARM_FULL_SCANS


@click.command("warmup")
@click.argument("dirs", nargs=-1, required=True, metavar="[NAME=]DIR...")
@click.option("--topic", help="Only topics matching this glob (a few partitions are enough).")
@options.verbose("a log file in the cache dir")
def warmup(dirs: tuple[str, ...], topic: str | None, verbose: bool) -> None:
    """Record the embedded Spark JVM's classes once, so that later local Spark commands start faster.

    Scans DIR (headers-only, then in full; the tables go to a temporary folder that is deleted) in a JVM that
    writes the classes it loaded into a class-data archive under $KFORENSICS_CACHE_DIR (default
    ~/.cache/kforensics, about 200 MB). Later embedded sessions with the same Java, Spark and JVM options map
    it instead of reading the classes from Spark's jars. Which classes are loaded depends on the code paths,
    not on the amount of data: a small log dir, or --topic, keeps this short.

    \b
    Exit codes: 0 recorded, 2 usage error, unreadable input, or no usable archive could be recorded.
    """
    from kforensics import render
    from kforensics.scan_runner import spark_log_path, terminate_as_interrupt, verbose_spark
    from kforensics.spark.jobs import warm_up
    from kforensics.spark.jvm_archive import record
    from kforensics.spark.session import LOCAL_JAVA_OPTIONS, build_session

    inputs = options.inputs(dirs)
    log_file = None if verbose_spark(verbose) else spark_log_path(None)
    try:
        with terminate_as_interrupt():
            info = record(lambda spark: warm_up(spark, inputs, topic_glob=topic), LOCAL_JAVA_OPTIONS,
                          lambda java_options: build_session(None, log_file=log_file, **{
                              "spark.driver.extraJavaOptions": java_options}))
    except FileNotFoundError as exc:
        raise click.BadParameter(str(exc), param_hint="DIR") from exc
    except RuntimeError as exc:
        raise click.ClickException(str(exc) + (f"; Spark's log: {log_file}" if log_file else "")) from exc
    render.echo(f"recorded {info['size'] / 1e6:,.0f} MB of class data in {info['seconds']:.0f} s: {info['path']}")


@click.command("serve")
@click.option("--warm", "warm_dirs", multiple=True, metavar="[NAME=]DIR",
              help="Scan DIR at start (headers-only, then in full --warm-scans times, into a temporary folder that is "
                   "deleted), so that the first real scan already finds the JVM's code compiled; a small log dir is "
                   "enough (repeatable).")
@click.option("--warm-scans", type=click.IntRange(min=1), default=WARM_FULL_SCANS, show_default=True,
              help="Full scans of the --warm dirs: the first loads the JVM's classes, each further one compiles more "
                   "of the code the scans run.")
@click.option("--idle-timeout", type=click.IntRange(min=0), default=30, show_default=True,
              help="Minutes without a scan after which the server exits and frees its memory (0: never).")
@click.option("--socket", "socket_file", help="Unix socket to listen on [default: $KFORENSICS_SERVER_SOCKET, else "
                                              "server.sock in the cache dir].")
@options.spark_conf("A Spark property of the server's session (repeatable).")
@click.option("--stop", is_flag=True, help="Ask the running server to exit (after its current scan) and return.")
@options.verbose("a log file in the cache dir")
def serve(warm_dirs: tuple[str, ...], warm_scans: int, idle_timeout: int, socket_file: str | None,
          spark_conf: dict[str, str], stop: bool, verbose: bool) -> None:
    """Keep one embedded Spark session warm for this user's scans.

    While it runs, `kforensics scan` and the reports that scan a log dir hand their scan to it instead of
    starting Spark (unless --master or --conf is given, or KFORENSICS_SERVER=off): no session start, and the
    JVM's code is already compiled, so a scan of the same data takes about half as long. It holds the session's
    memory (spark.driver.memory, 3g by default) until it stops. Runs in the foreground; Ctrl-C or SIGTERM stop it.

    \b
    Exit codes: 0 stopped (idle, --stop, signal), 2 usage error, another server runs or the socket cannot be
    used (with --stop: no server runs).
    \b
    Examples:
      kforensics serve --warm sample_logs/broker-1 &
      kforensics scan /data/kafka --headers-only     # runs on the server
      kforensics serve --stop
    """
    from kforensics import render
    from kforensics.scan_runner import spark_log_path, verbose_spark
    from kforensics.server import ServerRunning, socket_path, stop_server
    from kforensics.server import serve as run_server

    path = socket_file or socket_path()
    if stop:
        pid = stop_server(path)
        if pid is None:
            raise click.ClickException(f"no kforensics server listens on {path}")
        click.echo(f"asked the kforensics server (pid {pid}) to stop")
        return
    warm = options.inputs(warm_dirs)
    err = render.console(stderr=True)

    def log(message: str) -> None:
        render.log_line(err, time.strftime('%H:%M:%S'), message)

    try:
        run_server(path, idle_timeout_s=idle_timeout * 60 or None, warm=warm, warm_full_scans=warm_scans,
                   conf=spark_conf, log=log, ready=lambda: log(f"listening on {path} (pid {os.getpid()})"),
                   spark_log=None if verbose_spark(verbose) else spark_log_path(None))
    except ServerRunning as exc:
        raise click.ClickException(str(exc)) from exc
    except OSError as exc:
        raise click.ClickException(f"cannot listen on {path}: {exc}") from exc
