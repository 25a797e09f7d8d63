"""The runner: builds any table of a scan by name, from the input tables of the parse pass and the models
(`spark/registry.py`: one `.sql` file per facts table and check, a few Python models).

A model is built on first demand, once per scan, from the tables its statement reads (each built the same way);
`keep` models are computed once and their lineage cut, so that the plans built on them stay small (Spark analyses a
DataFrame's whole plan at every transformation; with the lineage kept, planning the analysis took longer than
running it). A model whose `applies` condition does not hold (the listing shows its input has no rows) is an empty
table of its declared columns, and nothing is planned for it. The checks of one family run as one statement (the
UNION ALL of their files), each family planned in its own thread and kept: the findings table is their union.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Mapping
from functools import reduce

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from kforensics.parsers.findings import FINDING_COLUMNS, PROBLEM_SEVERITIES, is_problem
from kforensics.scan_options import ScanOptions
from kforensics.spark import emptiness, registry
from kforensics.spark import schemas as S
from kforensics.spark.read import DIR_STATE_TABLES, InputFacts
from kforensics.spark.scan_profile import ScanProfile
from kforensics.spark.session import apply_settings, job_threads
from kforensics.spark.views import SqlViews, run_named

#: Threads that plan the check families side by side (the driver mostly waits on the JVM meanwhile).
FINDINGS_THREADS = 4
#: The input tables of live partition dirs are given under their own names; all dirs' rows (`-delete`, `-future`,
#: `-stray` too) under this prefix.
EVERY_DIR = "every_dir_"


def scan_params(options: ScanOptions) -> dict[str, object]:
    """The values the models read as named parameters, from the scan's options."""
    return {"txn_timeout_ms": options.txn_timeout_ms,
            "transaction_state_partitions": options.transaction_state_partitions,
            "clock_skew_ms": options.clock_skew_ms, "remote_stuck_after_ms": options.remote_stuck_after_ms,
            "resend_window_ms": options.resend_window_ms, "resend_tail": options.resend_tail,
            "resend_min_records": options.resend_min_records, "resend_aborted": options.resend_aborted,
            "image_time_ms": options.image_time_ms}


class _Keeper:
    """Cuts a kept table's lineage (`localCheckpoint`, lazily: its last stage runs inside the first job that reads
    it). That job reports the stage's metrics to the plan the checkpoint was cut from, so the keeper holds on to
    that plan until the scan is done; once the JVM has collected it, Spark logs an ERROR with a stack trace per task
    ("Attempted to access non-existent accumulator") on the operator's terminal."""

    def __init__(self, single_partition: bool) -> None:
        self._sources: list[DataFrame] = []
        self._single_partition = single_partition

    def __call__(self, df: DataFrame) -> DataFrame:
        if self._single_partition:
            df = df.coalesce(1)
        self._sources.append(df)
        return df.localCheckpoint(eager=False)


class _Once:
    """A zero-argument function's value, computed by the first caller; callers in other threads wait for it."""

    def __init__(self, make: Callable[[], DataFrame]) -> None:
        self._make, self._lock, self._value = make, threading.Lock(), None

    def __call__(self) -> DataFrame:
        with self._lock:
            if self._value is None:
                self._value = self._make()
            return self._value


class Scan:
    """One scan's tables: the inputs it was given and every model built from them, by name."""

    def __init__(self, tables: Mapping[str, DataFrame], options: ScanOptions | None = None,
                 facts: InputFacts | None = None, *, small: bool = True, views: SqlViews | None = None,
                 params: Mapping[str, object] | None = None, profile: ScanProfile | None = None,
                 empty_inputs: frozenset[str] = frozenset()) -> None:
        self.spark: SparkSession = next(iter(tables.values())).sparkSession
        self.options = options or ScanOptions()
        self.facts = facts or InputFacts(replicas_possible=True, has_transaction_state=True,
                                         has_consumer_offsets=True, has_future_replicas=True,
                                         has_cluster_metadata=True, several_log_dirs=True)
        self.params = {**scan_params(self.options), **(params or {})}
        self.views = views
        self.profile = profile
        self.keep = _Keeper(small)
        if small:  # one partition each: an aggregate, a window or a sort-merge join of them needs no shuffle
            tables = {name: df.coalesce(1) for name, df in tables.items()}
        self._given: dict[str, DataFrame] = {}
        for name, df in tables.items():
            if name in DIR_STATE_TABLES and "dir_state" in df.columns:
                self._given[f"{EVERY_DIR}{name}"] = self.share(df)
                df = df.filter("dir_state = 'live'").drop("dir_state")
            self._given[name] = self.share(df)
        if "dump_text_inputs" not in self._given:  # the inputs the listing found to be kafka-dump-log text
            schema = S.ddl(S.INPUT_TABLES["dump_text_inputs"])
            self._given["dump_text_inputs"] = self.share(self.spark.createDataFrame(
                [(b,) for b in self.facts.dump_brokers], schema)) if self.facts.dump_brokers else self.empty(schema)
        #: Input tables the parse pass found to have no rows (a small scan's driver counts them).
        self.empty_inputs = empty_inputs
        self._lock = threading.Lock()
        self._built: dict[str, _Once] = {}
        self._empty: dict[str, bool] = {}
        self._empty_before_findings: dict[str, bool] = {}
        self._found = _Once(self._found_kinds)

    # --- conditions -----------------------------------------------------------------------------------------------

    def applies(self, condition: str | None) -> bool:
        """Whether the listing (and the options) allow a model of that `applies` to have rows."""
        if condition is None:
            return True
        f = self.facts
        return {"replicas_possible": f.replicas_possible, "has_transaction_state": f.has_transaction_state,
                "has_consumer_offsets": f.has_consumer_offsets, "has_group_records": f.has_group_records,
                "has_share_state_records": f.has_share_state_records,
                "has_remote_log_metadata": f.has_remote_log_metadata and self.given("remote_log_events"),
                "has_future_replicas": f.has_future_replicas,
                "kraft": f.has_cluster_metadata and self.given("metadata_records"),
                "records_read": not self.options.headers_only,
                "several_log_dirs": f.several_log_dirs}[condition]

    def given(self, name: str) -> bool:
        return name in self._given

    def provably_empty(self, name: str, model: registry.Model | None = None) -> bool:
        """Whether table `name` can have no rows: an input the parse pass found empty (or not given), a model that
        does not apply, or one whose statement returns no rows when the tables it reads are empty (its
        `empty_when`, spark/emptiness.py; a Python model's is declared with it). Past the checks, what they found
        is known: none of the tables built on the findings is planned when there are none (nor the incidents when
        no finding is a problem and no link can tie two of them)."""
        return self._provably_empty(name, model, found=True)

    def _provably_empty(self, name: str, model: registry.Model | None, *, found: bool) -> bool:
        """`provably_empty`, or with `found` false what the inputs alone prove (the checks' findings unknown)."""
        cache = self._empty if found else self._empty_before_findings
        known = cache.get(name)
        if known is not None:
            return known
        source = name.removeprefix(EVERY_DIR)
        if name in self._given:
            empty = source in self.empty_inputs
        elif name in BUILT_IN:  # nothing without a family to run; past the checks, what they found says
            empty = not self.families() if not found else not {
                "checked_findings": lambda: bool(self.found()),
                "problem_findings": lambda: any(is_problem(severity) for _kind, severity in self.found()),
                "finding_links": lambda: bool(self.links())}[name]()
        elif source in S.INPUT_TABLES:
            empty = True
        else:
            m = model or registry.model(name)  # a model being written is not in the registry yet
            empty = not self.applies(m.applies) or emptiness.is_empty(
                m.empty_when, lambda table: self._provably_empty(table, None, found=found))
        cache[name] = empty
        return empty

    # --- tables ---------------------------------------------------------------------------------------------------

    def share(self, df: DataFrame) -> DataFrame:
        """A table several statements may read: registered as a temp view once, on first use (when the scan has
        views)."""
        return self.views.share(df) if self.views is not None else df

    def empty(self, schema: str | StructType) -> DataFrame:
        """A table of no rows with these columns (Spark DDL or schema): nothing is planned for it, nor for what joins it (a
        LIMIT 0 is an empty relation to the optimizer; a DataFrame of an empty list is an RDD it cannot see into),
        and a small scan writes it without a job (`known_empty`)."""
        df = self.spark.createDataFrame([], schema).limit(0)
        setattr(df, _KNOWN_EMPTY, True)
        return self.share(df)

    def table(self, name: str) -> DataFrame:
        """The table `name`: an input, or the model of that name built over the tables it reads."""
        with self._lock:
            once = self._built.setdefault(name, _Once(lambda: self._build(name)))
        return once()

    def _build(self, name: str) -> DataFrame:
        if name in self._given:
            return self._given[name]
        if name in BUILT_IN:
            return self.share(getattr(self, BUILT_IN[name])())
        source = name.removeprefix(EVERY_DIR)
        if source in S.INPUT_TABLES:  # an input the caller did not give: no rows
            live_only = source in DIR_STATE_TABLES and not name.startswith(EVERY_DIR)
            fields = [f for f in S.INPUT_TABLES[source] if not (live_only and f.name == "dir_state")]
            return self.empty(S.ddl(pa.schema(fields)))
        m = registry.model(name)
        if m.kind == "check":  # its findings, as the scan runs it
            return self.checks([m])
        if self.provably_empty(name):  # nothing to plan: no rows whatever the statement
            if m.output and m.text is not None and not self._provably_empty(name, m, found=False):
                # empty for what the checks found: written with the columns its statement gives (nullability too),
                # the same file as when it was computed; the statement is analysed, not planned nor run
                return self.empty(self._statement(m).schema)
            return self.empty(registry.columns_ddl(m.columns))
        df = self._statement(m)
        return self.share(self.keep(df) if m.keep else df)

    def _statement(self, m: registry.Model) -> DataFrame:
        """Model `m` over the tables it reads: its SQL statement (analysed, not yet run) or its function's DataFrame."""
        tables = {t: self.table(t) for t in m.inputs}
        args = {p: self.params[p] for p in m.params}
        return run_named([(m.text, m.inputs)], tables, args) if m.text is not None else m.build(**tables, **args)

    # --- findings -------------------------------------------------------------------------------------------------

    def family(self, name: str) -> DataFrame:
        """The checks of family `name` as one statement over the tables they read."""
        checks = [c for c in registry.check_models() if c.family == name]
        if not checks:
            raise KeyError(name)
        return self.checks(checks)

    def checks(self, checks: list[registry.Model]) -> DataFrame:
        """`checks` as one statement (the UNION ALL of their files, each given its kinds' severity); those that
        provably find nothing are left out."""
        checks = [c for c in checks if not self.provably_empty(c.name, c)]
        if not checks:
            return self.no_findings()
        tables = {t: self.table(t) for c in checks for t in c.inputs}
        args = {p: self.params[p] for c in checks for p in c.params}
        return run_named([(with_severity(c), c.inputs) for c in checks], tables, args)

    def families(self) -> list[str]:
        """The check families that apply to this scan and may find something, in order."""
        seen: dict[str, registry.Model] = {}
        for c in registry.check_models():
            seen.setdefault(c.family, c)
        return [f for f, c in seen.items() if self.applies(c.applies)
                and not all(self.provably_empty(m.name) for m in registry.check_models() if m.family == f)]

    def no_findings(self) -> DataFrame:
        return self.empty(S.ddl(S.FINDINGS))

    def _found_kinds(self) -> frozenset[tuple[str, str]]:
        rows = self.table("checked_findings").select("kind", "severity").distinct().collect()
        return frozenset((row["kind"], row["severity"]) for row in rows)

    def found(self) -> frozenset[tuple[str, str]]:
        """The kinds and severities the checks found (one small job over the kept findings, once per scan)."""
        return self._found() if self.given("checked_findings") or self.families() else frozenset()

    def links(self) -> list[registry.Model]:
        """The link rules that can tie two findings of this scan: their cause and effect kinds are among the
        findings'."""
        present = {kind for kind, _severity in self.found()}
        return [m for m in registry.link_models() if set(m.cause) & present and set(m.effect) & present]

    def problem_findings(self) -> DataFrame:
        """The findings that mean something is wrong (each belongs to an incident)."""
        if self.provably_empty("problem_findings"):
            return self.no_findings()
        return self.table("checked_findings").where(F.col("severity").isin(*sorted(PROBLEM_SEVERITIES)))

    def checked_findings(self) -> DataFrame:
        """Every family's findings: each family planned in its own thread and kept (the union's plan is then a few
        scans, not twenty analyses' worth of windows and joins at once: docs/benchmarks/spark-settings.md)."""
        context, profile = self.spark.sparkContext, self.profile

        def run(family: str) -> DataFrame:
            step = profile.step(f"check {family}", "kforensics scan: findings") if profile \
                else contextlib.nullcontext()
            with step:
                if not profile:
                    context.setJobDescription("kforensics scan: findings")  # this thread's jobs, in Spark's UI
                return self.keep(self.family(family))

        families = self.families()
        if not families:
            return self.no_findings()
        with job_threads(self.spark, FINDINGS_THREADS) as pool:
            found = pool.map(run, families)
        # Spark 4.3's Union.rewriteConstraints fails ("key not found: topic#N") on the constraints the kept families
        # carry from their plans; a union of kept tables has nothing to infer, so it is planned without them
        restore = apply_settings(self.spark, {"spark.sql.constraintPropagation.enabled": "false"})
        try:
            return self.keep(reduce(DataFrame.unionByName, found))
        finally:
            restore()

    def finding_links(self) -> DataFrame:
        """Which finding follows from which (`cause_id`, `effect_id`, the `rule` that says so and its `rank`): the
        links whose cause and effect kinds are among the findings (the findings' kinds are counted first: a link
        that cannot tie anything is not planned)."""
        links = self.links()
        schema = "cause_id string, effect_id string, rule string, rank int"
        if not links:
            return self.empty(schema)
        tables = {t: self.table(t) for m in links for t in m.inputs}
        args = {p: self.params[p] for m in links for p in m.params}
        statements = [(f"SELECT cause_id, effect_id, '{m.name}' AS rule, {m.rank} AS rank FROM (\n{m.text}\n)",
                       m.inputs) for m in links]
        return self.keep(run_named(statements, tables, args))

    def findings(self) -> DataFrame:
        """The findings table (the model `findings`: each finding with its incident)."""
        return self.table("findings")


#: Tables the runner builds itself (name -> its method): the union of the check families, those of its findings that
#: are problems, and the links between findings (which links run depends on the findings' kinds).
BUILT_IN = {"checked_findings": "checked_findings", "problem_findings": "problem_findings",
            "finding_links": "finding_links"}
#: Attribute of a DataFrame the runner made as a table of no rows (`Scan.empty`).
_KNOWN_EMPTY = "_kforensics_known_empty"


def known_empty(df: DataFrame) -> bool:
    """Whether `df` is a table the runner made knowing it has no rows (its columns are all there is to write)."""
    return bool(df.__dict__.get(_KNOWN_EMPTY))


def judged_on_coverage(check: registry.Model) -> str:
    """A `coverage` check's statement with its not-judged rows made notes: a row whose gap_range is set (the copy of
    gap_partition on gap_broker lacks those offsets, which the verdict needs) becomes a NOT_JUDGED info note saying
    what the copy shows (issue 47: judge only what the input covers); the others pass unchanged."""
    assert check.text is not None
    gap = "gap_range IS NULL"
    projected = {
        "kind": f"CASE WHEN {gap} THEN kind ELSE '{registry.NOT_JUDGED}' END AS kind",
        "severity": f"CASE WHEN {gap} THEN severity ELSE 'info' END AS severity",
        "message": f"CASE WHEN {gap} THEN message ELSE format_string('Not judged, segment missing: the copy of %s on "
                   "%s lacks offsets %d-%s, which %s needs. What the copy shows: %s', gap_partition, gap_broker, "
                   "gap_range.first_offset, coalesce(CAST(gap_range.last_offset AS STRING), '?'), kind, message) END "
                   "AS message",
        "details": f"CASE WHEN {gap} THEN details ELSE to_json(named_struct('rule', kind, 'would_be', message, "
                   "'incomplete_broker', gap_broker, 'incomplete_partition', gap_partition, 'missing_offsets', "
                   "array(gap_range.first_offset, gap_range.last_offset))) END AS details"}
    columns = ", ".join(projected.get(c, f"`{c}`") for c in FINDING_COLUMNS
                        if c != "severity" or check.computes_severity)
    return f"SELECT {columns} FROM (\n{check.text}\n)"


def with_severity(check: registry.Model) -> str:
    """A check's statement as the findings columns: its kinds' severity added from its header, where the statement
    does not compute it (a `coverage` check's not-judged rows made notes first)."""
    assert check.text is not None
    text = judged_on_coverage(check) if check.coverage else check.text
    if check.computes_severity:
        return text
    # registry.NOT_JUDGED (an info note) is what any rule returns where the copy lacks the offsets its verdict needs
    cases = " ".join(f"WHEN '{f.name}' THEN '{f.severity}'" for f in check.findings) + (
        f" WHEN '{registry.NOT_JUDGED}' THEN 'info'")
    columns = ", ".join(f"CASE kind {cases} END AS severity" if c == "severity" else f"`{c}`"
                        for c in FINDING_COLUMNS)
    return f"SELECT {columns} FROM (\n{text}\n)"


def analyze(tables: Mapping[str, DataFrame], options: ScanOptions | None = None, *, facts: InputFacts | None = None,
            profile: ScanProfile | None = None, small: bool = True,
            views: SqlViews | None = None,
            empty_inputs: frozenset[str] = frozenset()) -> dict[str, Callable[[], DataFrame]]:
    """The output tables (models declared `output`) and the findings of a scan over the input tables, each as a
    function that builds it: the caller plans and writes them side by side from several threads. `empty_inputs`:
    the input tables known to have no rows (nothing is planned for what provably reads none)."""
    scan = Scan(tables, options, facts, small=small, views=views, profile=profile, empty_inputs=empty_inputs)
    return {m.name: (lambda name=m.name: scan.table(name)) for m in registry.output_models()}
