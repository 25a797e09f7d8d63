"""SparkSession creation: embedded local Spark by default, any master URL on request.

Imported only by commands that run Spark (never by `dump` or `--help`).
"""

from __future__ import annotations

import contextlib
import os
import queue
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from typing import Any, TypeVar

from py4j.java_gateway import JavaClass, JavaMember, JVMView
from pyspark import SparkContext
from pyspark.sql import SparkSession

from kforensics import defaults
from kforensics.spark.jvm_archive import with_archive

T = TypeVar("T")
DEFAULT_MASTER = "local[*]"
#: JVM options of an embedded (local-mode) driver; `--conf spark.driver.extraJavaOptions=...` replaces them.
#: C1 only and the serial GC, with the tiered code cache (C1's own fills up), why: docs/benchmarks/spark-settings.md;
#: the JVM's own warnings go to stderr, never into the stdout that carries `--json` lines.
_CODE_CACHE_AND_OUTPUT = ("-XX:ReservedCodeCacheSize=240m -XX:+DisplayVMOutputToStderr -Xlog:disable "
                          "-Xlog:all=warning:stderr")
LOCAL_JAVA_OPTIONS = f"-XX:TieredStopAtLevel=1 -XX:+UseSerialGC {_CODE_CACHE_AND_OUTPUT}"
#: JVM options of an embedded driver that plans many scans (`kforensics serve`, the test suite's session): C2 as well,
#: whose compiled planner pays its warm-up back after a few scans, and the parallel GC (docs/benchmarks/spark-settings.md).
LONG_LIVED_JAVA_OPTIONS = f"-XX:+UseParallelGC {_CODE_CACHE_AND_OUTPUT}"


#: Settings of the Python side of any session kforensics starts (embedded, on a cluster, spark-submit).
PYTHON_CLIENT_SETTINGS = {
    # the Python call site of every Column costs py4j round trips (docs/benchmarks/spark-settings.md); a failing
    # check's error names the check instead
    "spark.python.sql.dataFrameDebugging.enabled": "false",
}

LOCAL_SHUFFLE_PARTITIONS = str(4 * (os.cpu_count() or 2))


def _local_defaults(long_lived: bool = False) -> dict[str, str]:
    """Spark properties of an embedded (local-mode) session (`long_lived`: one that runs many scans)."""
    return {
        # Spark's default of 200 shuffle partitions is tuned for clusters; on one machine each shuffle
        # stage would schedule 200 tiny tasks.
        "spark.sql.shuffle.partitions": LOCAL_SHUFFLE_PARTITIONS,
        # a one-shot JVM that mostly plans: C2's warm-up and G1's threads cost more than they win back; a long-lived
        # one pays C2 back (docs/benchmarks/spark-settings.md); plus the class-data archive `kforensics warmup`
        # recorded for those options, if any
        "spark.driver.extraJavaOptions": with_archive(
            LONG_LIVED_JAVA_OPTIONS if long_lived else LOCAL_JAVA_OPTIONS),
        # Local mode runs every task in the driver's JVM; Spark's 1 GiB default is too tight for the cached
        # tables of a scan (the Python parsers run outside the heap, in the worker processes).
        "spark.driver.memory": "3g",
        # a scan generates hundreds of classes: with Spark's 100, a long-lived session compiles them again at every
        # scan (docs/benchmarks/spark-settings.md)
        "spark.sql.codegen.cache.maxEntries": "2000",
    }


def build_session(master: str | None = None, app_name: str = "kforensics", *, log_file: str | None = None,
                  long_lived: bool = False, **conf: str) -> SparkSession:
    """Create (or return the running) SparkSession.

    Workers must run the same interpreter as the driver, so PYSPARK_PYTHON and PYSPARK_DRIVER_PYTHON
    default to this one; Arrow is switched on for the parse-at-the-edge path. With `log_file`, the JVM this
    call starts writes everything it prints (Spark's log, the JVM's warnings, the Python workers' stderr) to that
    file instead of the operator's terminal; a session that is already running keeps its own streams.
    `long_lived`: the session will run many scans (an embedded driver JVM with the C2 compiler too).
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    resolved_master = master or os.environ.get("KFORENSICS_SPARK_MASTER", DEFAULT_MASTER)
    settings = {
        "spark.master": resolved_master,
        "spark.app.name": app_name,
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.sql.session.timeZone": "UTC",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        **PYTHON_CLIENT_SETTINGS,
    }
    if resolved_master.startswith("local"):
        settings.update(_local_defaults(long_lived))
    settings.update(conf)  # a property the caller passes wins
    logging_to_file = log_file is not None and SparkContext._active_spark_context is None \
        and SparkContext._gateway is None
    if logging_to_file:
        _start_jvm_logging_to(log_file, settings)
    builder = SparkSession.builder
    for key, value in settings.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("WARN" if logging_to_file else "ERROR")
    return session


def _start_jvm_logging_to(log_file: str, settings: dict[str, str]) -> None:
    """Launch the driver JVM with its stdout and stderr on `log_file` (appended), and start the SparkContext on it.

    pyspark's launcher lets the JVM inherit the terminal; Spark's default log4j profile, the JVM's warnings and
    the launcher script all print there, before any log level can be set."""
    from pyspark import SparkConf
    from pyspark.java_gateway import launch_gateway

    spark_conf = SparkConf(loadDefaults=False).setAll(list(settings.items()))
    with open(log_file, "ab") as log:
        gateway = launch_gateway(spark_conf, popen_kwargs={"stdout": log, "stderr": log})
    SparkContext(conf=spark_conf, gateway=gateway)


#: Up to this many bytes of segments, a scan is small: Spark's per-job and per-query overheads, not the data,
#: make its time, and `SMALL_INPUT_SETTINGS` apply (defined in kforensics.defaults: `find` decides without Spark).
SMALL_INPUT_BYTES = defaults.SMALL_INPUT_BYTES
#: Up to this many bytes of input tables (Parquet, as the parse pass wrote them), the analysis is small, whatever the
#: segments weighed: it reads batch headers, not records (~0.5-2 M batches, which one task sorts or joins in seconds).
SMALL_TABLES_BYTES = 16 << 20

#: SQL properties of a small scan (each settable per query; a property the operator passes with --conf wins).
#: A small scan's driver spends its CPU on task binaries, analysis and plan strings, not rows
#: (docs/benchmarks/spark-settings.md).
SMALL_INPUT_SETTINGS = {
    # A few MB at most per shuffle: one task per stage (every task deserializes its stage's plan)
    "spark.sql.shuffle.partitions": "1",
    # Small Parquet tables are read as one task, not one per file (each file costs openCostInBytes otherwise).
    "spark.sql.files.maxPartitionNum": "1",
    # Adaptive execution runs every shuffle of a query as a job of its own and plans the rest of the query again
    # after each: on a small input that re-planning is the scan's biggest cost, and there is nothing to adapt
    "spark.sql.adaptive.enabled": "false",
    # Janino compiling whole-stage code costs more than the interpreted operators spend on a few thousand rows;
    # the projections and orderings outside whole-stage code are interpreted too (no Janino at all)
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
    # Runtime bloom filters add a subquery job per join and bloat every task binary
    "spark.sql.optimizer.runtime.bloomFilter.enabled": "false",
    # No broadcast joins: broadcasting a side that is not a local relation is a job of its own, started while the
    # query is planned; a sort-merge join's shuffles are stages of the query's one job
    "spark.sql.autoBroadcastJoinThreshold": "-1",
    # nor where a transform asks for one (F.broadcast of the brokers table): every input of a small scan is one
    # partition, which a sort-merge join reads without a shuffle
    "spark.sql.optimizer.disableHints": "true",
    # Inferring constraints walks every predicate of the checks' wide plans; on few rows its filters save nothing
    "spark.sql.constraintPropagation.enabled": "false",
    # Every query posts its physical plan as text for the SQL UI (off in an embedded session): the plain tree,
    # cut short, instead of the formatted explain of every operator
    "spark.sql.ui.explainMode": "simple",
    "spark.sql.maxPlanStringLength": "4096",
    # A join of one-partition sides stays unshuffled only while the planner's size estimate of each side is under
    # this (128 MB by default); without column statistics a join's estimate is the product of its inputs', so joins
    # over joins passed it and every such join shuffled its one partition (docs/benchmarks/spark-settings.md)
    "spark.sql.maxSinglePartitionBytes": str(2**63 - 1),
}

#: SQL properties of the small analysis of a large input (its tables weigh at most SMALL_TABLES_BYTES): those of a
#: small scan but for code generation, which pays off on that many rows (docs/benchmarks/spark-settings.md).
SMALL_TABLES_SETTINGS = {key: value for key, value in SMALL_INPUT_SETTINGS.items()
                         if not key.startswith("spark.sql.codegen.")}


class _KnownClass(JavaClass):
    """A JVM class whose static methods and nested classes, once looked up, are remembered."""

    def __getattr__(self, name: str) -> Any:
        member = JavaClass.__getattr__(self, name)
        if isinstance(member, JavaMember | JavaClass):  # never a static field: its value may change
            if isinstance(member, JavaClass):
                member.__class__ = _KnownClass
            self.__dict__[name] = member
        return member


class _KnownNames(JVMView):
    """The gateway's view of the JVM, remembering which names are classes."""

    def __getattr__(self, name: str) -> Any:
        found = JVMView.__getattr__(self, name)
        if isinstance(found, JavaClass):  # not a package: py4j takes any name it cannot find for one
            found.__class__ = _KnownClass
            self.__dict__[name] = found
        return found


def remember_jvm_names(context: SparkContext) -> None:
    """Make the session's py4j view remember the classes and static methods it has looked up.

    PySpark looks up `functions`, `org.apache.spark.sql.functions` and `PythonUtils` afresh for every Column
    function and every select: two py4j round trips each before the call itself, and a name found through the
    view's imports is first searched for (and not found) in every jar of the classpath. A scan of the sample
    disks makes ~4,000 such lookups (1-2 ms each on 2 cores, the JVM mostly in `ClassLoader.loadClass`). A
    class found stays the class it is for the JVM's life, so the answers are kept (PySpark 4.x, py4j 0.10.9)."""
    jvm = context._jvm  # noqa: SLF001 - the gateway's view; PySpark keeps no other handle on it
    if jvm is not None and type(jvm) is JVMView:
        jvm.__class__ = _KnownNames


def is_small(input_bytes: int | None) -> bool:
    """Whether a scan of this many input bytes is small (None: unknown, a filesystem that gives no sizes: not small)."""
    return input_bytes is not None and input_bytes <= SMALL_INPUT_BYTES


def tables_are_small(table_bytes: int) -> bool:
    """Whether an analysis whose input tables weigh this many bytes is small (`SMALL_TABLES_BYTES`)."""
    return table_bytes <= SMALL_TABLES_BYTES


def scan_settings(spark: SparkSession, wanted: dict[str, str]) -> dict[str, str]:
    """Those of the `wanted` SQL properties a scan (or its analysis) runs with: a property set on the session's
    SparkConf (--conf) is left alone."""
    given = dict(spark.sparkContext.getConf().getAll())
    ours = {"spark.sql.shuffle.partitions": LOCAL_SHUFFLE_PARTITIONS}  # `_local_defaults`, not the operator's
    return {key: value for key, value in wanted.items() if key not in given or given[key] == ours.get(key)}


def apply_settings(spark: SparkSession, settings: dict[str, str]) -> Callable[[], None]:
    """Set `settings` on the session; returns the function that restores what was there (a long-lived session,
    `kforensics serve`, scans small and large inputs in turn)."""
    before = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)

    def restore() -> None:
        for key, value in before.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)

    return restore


JOB_THREAD_PREFIX = "kforensics-jobs"
#: How long an interrupted scan waits for its job threads once their jobs are cancelled.
CANCEL_GRACE_S = 15.0


class JobThreads:
    """A few daemon threads that run Spark jobs side by side (`submit`, `map` as concurrent.futures has them),
    each carrying `tags` as Spark job tags. Daemon, unlike ThreadPoolExecutor's: a thread still blocked in a
    JVM call after its scan was interrupted never keeps the process from exiting."""

    def __init__(self, context: SparkContext, workers: int, tags: set[str]) -> None:
        self._context, self.tags = context, tags
        self._work: queue.SimpleQueue[tuple[Future[Any], Callable[..., Any], tuple[Any, ...]] | None] = \
            queue.SimpleQueue()
        self.threads = [threading.Thread(target=self._run, name=f"{JOB_THREAD_PREFIX}-{i}", daemon=True)
                        for i in range(workers)]
        for thread in self.threads:
            thread.start()

    def _run(self) -> None:
        for tag in self.tags:
            self._context.addJobTag(tag)
        while (item := self._work.get()) is not None:
            future, fn, args = item
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(fn(*args))
                except BaseException as exc:  # noqa: BLE001  (handed to whoever waits on the future)
                    future.set_exception(exc)

    def submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        future: Future[T] = Future()
        self._work.put((future, fn, args))
        return future

    def map(self, fn: Callable[[Any], T], items: Iterable[Any]) -> list[T]:
        return [future.result() for future in [self.submit(fn, item) for item in items]]

    def shutdown(self, *, cancel: bool = False) -> None:
        """No more work; with `cancel`, work not started is cancelled."""
        if cancel:
            with contextlib.suppress(queue.Empty):
                while True:
                    item = self._work.get_nowait()
                    if item is not None:
                        item[0].cancel()
        for _ in self.threads:
            self._work.put(None)

    def alive(self) -> bool:
        return any(thread.is_alive() for thread in self.threads)


def cancel_jobs(context: SparkContext, tags: set[str]) -> None:
    """Cancels the jobs tagged `tags`, waiting ones included. Never SparkContext.cancelAllJobs beside jobs of
    other threads: it cancels only jobs with a running stage and forgets the others, whose callers then wait
    forever (DAGScheduler.doCancelAllJobs)."""
    for tag in tags:
        context.cancelJobsWithTag(tag)


def job_threads_running() -> bool:
    """Whether a job thread of an interrupted scan is still inside the JVM (then clearing the cache or stopping
    the session could wait on a lock it holds)."""
    return any(t.name.startswith(JOB_THREAD_PREFIX) and t.is_alive() for t in threading.enumerate())


@contextmanager
def job_threads(spark: SparkSession, workers: int) -> Iterator[JobThreads]:
    """Threads that run Spark jobs side by side, tagged as the calling thread's jobs are (or with a tag of their
    own). An exception in the caller (Ctrl-C, SIGTERM, a failed job) cancels the work not started and the
    tagged jobs, and waits for the workers at most CANCEL_GRACE_S: an interrupted scan ends in seconds, not
    when its last write would have finished."""
    context = spark.sparkContext
    pool = JobThreads(context, workers, set(context.getJobTags()) or {f"kforensics-{uuid.uuid4().hex[:12]}"})
    try:
        yield pool
    except BaseException:
        pool.shutdown(cancel=True)
        # The caller's cleanup (clearCache) must not run beside a job still building a cached relation: Spark
        # deadlocks on the CacheManager's lock. So cancel until every worker is done, including a job a worker
        # starts after the first cancel; a worker that still hangs in the JVM after that is left behind.
        deadline = time.monotonic() + CANCEL_GRACE_S
        while pool.alive() and time.monotonic() < deadline:
            cancel_jobs(context, pool.tags)
            for thread in pool.threads:
                thread.join(0.2)
        raise
    pool.shutdown()
    for thread in pool.threads:
        thread.join()
