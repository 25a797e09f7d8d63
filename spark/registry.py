"""The scan's models: every facts table and every check is one `.sql` file under `spark/sql/` whose header block
declares what it is; the few tables Python builds (bytes parsed in `mapInArrow`, an ordered replay in
`applyInPandas`) are registered beside them with `python_model`. The runner (`spark/runner.py`) resolves every table
by name from here; docs/generate.py writes the findings and the tables' reference from here.

A model file starts with a block comment holding TOML, then one statement that runs as it is in spark-sql over
tables of the names it reads (its inputs, taken from sqlglot's parse of the statement, never typed again), values
as named parameters (`:txn_timeout_ms`):

    /*
    [table]                          # or [check]
    doc = "what a row is"
    output = true                    # written to OUT under the file's name
    keep = true                      # computed once, its lineage cut: several statements read it
    applies = "kraft"                # when the listing can tell there is nothing to build (see APPLIES)
    columns = [["broker", "string", "the input's label"], ...]   # its schema, in order (or a DDL string
                                                                  # "broker string, ..." for an inner table)
    */

    /*
    [check]
    family = "log"                   # the checks of a family run as one statement (default: the file's name)
    applies = "kraft"
    coverage = true                  # its rows also carry gap_broker, gap_partition and gap_range (first_offset,
                                     # last_offset): a row whose gap_range is set is a `not_judged` note (the copy
                                     # lacks those offsets, which its verdict needs), made by the runner

    [[finding]]                      # each kind its rows carry
    kind = "empty_transaction"
    severity = "error"
    meaning = "one sentence"
    rule = "when it is reported and what its fields hold (Markdown)"
    fields = ["expected_sequence", ...]
    compacted = "what the rule does on a compacted log"
    reports = ["gaps"]               # the reports that show it, besides the scan's own table
    */

A check's statement returns the findings columns (`FINDING_COLUMNS`) but `severity`: the runner adds it from the
header, unless a kind's severity depends on the case (`severity_rule`), where the statement computes it. A check
that declares no kind passes on rows whose kind another layer decided (the parsers', the restart prediction's).

No Spark here: the CLI reads the finding kinds from it without starting a JVM.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import resources
from typing import Any

from kforensics import __version__
from kforensics.parsers.findings import PARSER_KINDS, FindingKind
from kforensics.paths import cache_dir
from kforensics.spark import emptiness
from kforensics.spark.ddl import split_ddl

__all__ = ["APPLIES", "NOT_JUDGED", "Column", "Model", "check_models", "columns_ddl", "finding_kinds", "model", "models",
           "output_models", "python_model", "sql_models"]

_HEADER = re.compile(r"\A\s*/\*(.*?)\*/", re.S)

#: The conditions a model's `applies` may name (`runner.Scan.applies` decides them from the listing's facts and the
#: options): where one does not hold, the model's input has no rows and it is not planned.
APPLIES = ("replicas_possible", "has_transaction_state", "has_consumer_offsets", "has_group_records",
           "has_share_state_records", "has_remote_log_metadata", "has_future_replicas", "kraft", "records_read",
           "several_log_dirs")

#: The note any check returns where the copy lacks the offsets its verdict needs (declared in not_judged.sql; the
#: runner gives it its severity in every check, the summary counts it: issue 47).
NOT_JUDGED = "not_judged"

#: Which reports show a kind (a finding's `reports`): the commands that filter findings by it (`divergence`: the
#: HTML report's view of diverged replicas; `export`: `export --from-finding` reads its offsets).
REPORTS = ("gaps", "eos", "groups", "tiered", "leaders", "export", "divergence")


@dataclass(frozen=True)
class Column:
    """A table's column: its name, its Spark SQL type and what it holds."""

    name: str
    type: str
    doc: str = ""


@dataclass(frozen=True)
class Model:
    """A table or a check the runner can build by name: a SQL file (`text`) or a Python function (`build`, called
    with the runner's DataFrames of its `inputs` by name and its parameters)."""

    name: str
    kind: str  # "table", "check" or "link"
    path: str
    doc: str = ""
    output: bool = False
    keep: bool = False
    applies: str | None = None
    #: The columns it declares; with `like`, those of the table it names (an input table or a model) come first, but
    #: those declared again, which follow in their declared order.
    declared: tuple[Column, ...] = ()
    like: str | None = None
    family: str = ""
    #: A check judged only on what the copy covers: its rows carry gap_broker, gap_partition and gap_range, and one
    #: whose gap_range is set is reported as NOT_JUDGED (runner.judged_on_coverage).
    coverage: bool = False
    findings: tuple[FindingKind, ...] = ()
    #: A link's finding kinds: the cause and the effects it ties to it, the rule's rank among the links that claim
    #: the same effect (lower wins), and the Kafka behaviour it rests on.
    cause: tuple[str, ...] = ()
    effect: tuple[str, ...] = ()
    rank: int = 0
    kafka: str = ""
    #: The tables it reads (a SQL model's from sqlglot's parse of its statement) and its named parameters
    #: (`:name` in a SQL model).
    inputs: tuple[str, ...] = ()
    params: tuple[str, ...] = ()
    #: When its statement provably returns no rows, as a formula over the tables it reads (`spark/emptiness.py`;
    #: False: never known, as for a Python model).
    empty_when: Any = False
    build: Callable[..., Any] | None = field(default=None, compare=False)
    source: str | None = field(default=None, compare=False, repr=False)  # the text of a model not in spark/sql/

    @property
    def text(self) -> str | None:
        """A SQL model's file, as Spark runs it (None for a Python model)."""
        if self.build is not None:
            return None
        return self.source if self.source is not None else _read(self.path)

    @property
    def columns(self) -> tuple[Column, ...]:
        """Its columns, in order (a table's; a check returns the findings columns)."""
        if self.like is None:
            return self.declared
        names = {c.name for c in self.declared}
        return tuple(c for c in columns_of(self.like) if c.name not in names) + self.declared

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.findings)

    @property
    def computes_severity(self) -> bool:
        """Whether its statement returns `severity` itself: it passes on rows of other layers' kinds, or one of its
        kinds' severity depends on the case."""
        return not self.findings or any(f.severity_rule for f in self.findings)


# --- SQL models ----------------------------------------------------------------------------------------------------

def _sql_dir() -> resources.abc.Traversable:
    """The models' folder: a directory, or a folder inside the zip a spark-submit driver imports kforensics from."""
    return resources.files("kforensics.spark") / "sql"


@cache
def _read(path: str) -> str:
    """A model file's text (`path` relative to the repository: spark/sql/NAME.sql)."""
    return (_sql_dir() / os.path.basename(path)).read_text(encoding="utf-8")


def _listing(folder: resources.abc.Traversable) -> list[tuple[str, int, int]]:
    """Each SQL file's name, size and modification time (a zip's members: size and CRC-32 of their bytes)."""
    if isinstance(folder, os.PathLike):
        return sorted((e.name, e.stat().st_size, e.stat().st_mtime_ns) for e in os.scandir(folder)
                      if e.name.endswith(".sql"))
    read = [(e.name, e.read_bytes()) for e in folder.iterdir() if e.name.endswith(".sql")]
    return sorted((name, len(data), zlib.crc32(data)) for name, data in read)


_FINDING_KEYS = {"kind", "severity", "meaning", "rule", "fields", "severity_rule", "compacted", "reports", "event", "at",
                 "clock", "action", "records", "exported"}
_ACTION_KEYS = {"phase", "command", "why", "destructive"}
#: The phases of an incident's plan, in order: what saves data comes before anything that could destroy it.
PHASES = ("save", "verify", "repair")


def _finding(entry: Mapping[str, Any], path: str) -> FindingKind:
    unknown = set(entry) - _FINDING_KEYS
    if unknown:
        raise ValueError(f"{path}: unknown keys {sorted(unknown)} in a [[finding]]")
    reports = tuple(entry.get("reports", ()))
    if set(reports) - set(REPORTS):
        raise ValueError(f"{path}: unknown reports {sorted(set(reports) - set(REPORTS))}")

    def text(key: str, within: Mapping[str, Any] = entry) -> str | None:  # wrapped strings: one paragraph each
        return " ".join(within[key].split()) if within.get(key) else None

    actions = []
    for action in entry.get("action", ()):
        if set(action) - _ACTION_KEYS or action.get("phase") not in PHASES or not action.get("command") \
                or not action.get("why") or not isinstance(action.get("destructive"), bool):
            raise ValueError(f"{path}: an action of {entry['kind']} declares its phase ({', '.join(PHASES)}), "
                             "command, why and destructive, and nothing else")
        if action["destructive"] and action["phase"] != "repair":
            raise ValueError(f"{path}: a destructive action of {entry['kind']} belongs to the repair phase")
        actions.append({"phase": action["phase"], "command": text("command", action), "why": text("why", action),
                        "destructive": action["destructive"]})
    if entry.get("at") and entry["at"] not in entry.get("fields", ()):
        raise ValueError(f"{path}: {entry['kind']}'s `at` names no field of it")
    if bool(entry.get("at")) != bool(entry.get("clock")):
        raise ValueError(f"{path}: {entry['kind']} declares `at` and `clock` together (whose clock its time reads)")
    records = entry.get("records")
    if records and records not in entry.get("fields", ()):
        raise ValueError(f"{path}: records = {records!r} is none of the kind's fields")
    return FindingKind(entry["kind"], entry["severity"], text("meaning") or "", tuple(entry.get("fields", ())),
                       text("severity_rule"), text("rule"), text("compacted"), reports, path, text("event"),
                       entry.get("at"), tuple(actions), records=records, exported=bool(entry.get("exported")),
                       clock=entry.get("clock"))


def parse_header(text: str, path: str) -> dict[str, Any]:
    """A model file's header block (TOML), checked: the keys a [table] or a [check] may have."""
    import tomllib

    match = _HEADER.match(text)
    if not match:
        raise ValueError(f"{path}: no header block (a /* ... */ comment of TOML) at the top")
    header = tomllib.loads(match.group(1))
    kinds = [k for k in ("table", "check", "link") if k in header]
    if len(kinds) != 1:
        raise ValueError(f"{path}: the header declares one of [table], [check] or [link]")
    spec = header[kinds[0]]
    allowed = {"table": {"doc", "output", "keep", "applies", "columns", "like"}, "check": {"doc", "family", "applies", "coverage"},
               "link": {"doc", "cause", "effect", "rank", "kafka"}}[kinds[0]]
    if set(spec) - allowed or set(header) - {kinds[0], "finding"} or (kinds[0] != "check" and "finding" in header):
        raise ValueError(f"{path}: unknown header keys")
    if kinds[0] == "link" and not (spec.get("cause") and spec.get("effect") and spec.get("doc") and spec.get("kafka")):
        raise ValueError(f"{path}: a link declares its cause and effect kinds, what it means and the Kafka behaviour it "
                         "rests on")
    if spec.get("applies") and spec["applies"] not in APPLIES:
        raise ValueError(f"{path}: applies names no known condition: {spec['applies']}")
    if kinds[0] == "table" and not spec.get("columns") and not spec.get("like"):
        raise ValueError(f"{path}: a table declares its columns")
    if spec.get("output") and spec.get("like"):
        raise ValueError(f"{path}: a table written to OUT declares each column (with what it holds), not `like`")
    for entry in header.get("finding", ()):
        _finding(entry, path)
    return header


def parse_model(name: str, text: str, path: str) -> dict[str, Any]:
    """What the registry keeps of one SQL file: its header and what its statement reads (sqlglot), as JSON."""
    header = parse_header(text, path)
    try:
        inputs, params = analyse_sql(text)
        empty = emptiness.empty_when(text)
    except Exception as exc:
        raise ValueError(f"{path}: {exc}") from exc
    return {"name": name, "path": path, "header": header, "inputs": list(inputs), "params": list(params),
            "empty_when": empty}


def model_of_text(name: str, text: str, path: str) -> Model:
    """The model a SQL text declares, as if it were the file `path` (a model being written, not yet in spark/sql/)."""
    return replace(_model(parse_model(name, text, path)), source=text)


def _model(entry: Mapping[str, Any]) -> Model:
    header, path = entry["header"], entry["path"]
    kind = next(k for k in ("table", "check", "link") if k in header)
    spec = header[kind]
    declared = spec.get("columns", ())
    # a list of [name, type, doc], or (a table only other models read) a Spark DDL string "name type, ..."
    columns = tuple(Column(n, t) for n, t in split_ddl(declared)) if isinstance(declared, str) \
        else tuple(Column(*c) for c in declared)
    return Model(entry["name"], kind, path, doc=" ".join(spec.get("doc", "").split()), output=bool(spec.get("output")),
                 keep=bool(spec.get("keep")), applies=spec.get("applies"), declared=columns, like=spec.get("like"),
                 family=spec.get("family", entry["name"]) if kind == "check" else "",
                 coverage=bool(spec.get("coverage")) if kind == "check" else False,
                 findings=tuple(_finding(f, path) for f in header.get("finding", ())),
                 cause=tuple(spec.get("cause", ())), effect=tuple(spec.get("effect", ())), rank=int(spec.get("rank", 0)),
                 kafka=" ".join(spec.get("kafka", "").split()),
                 inputs=tuple(entry["inputs"]), params=tuple(entry["params"]),
                 empty_when=entry["empty_when"])


def analyse_sql(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The tables `text` reads (besides its own CTEs, and a join hint's alias) and its named parameters, from
    sqlglot's Spark dialect, in order of first mention."""
    import sqlglot
    from sqlglot import exp

    tree = sqlglot.parse_one(text, read="spark")
    ctes = {cte.alias_or_name for cte in tree.find_all(exp.CTE)}
    tables = [t.name for t in tree.find_all(exp.Table) if t.name not in ctes and not t.find_ancestor(exp.Hint)]
    if ctes & set(tables):
        raise ValueError("a CTE named like a table the statement reads")
    params = [p.name for p in tree.find_all(exp.Placeholder)]
    return tuple(dict.fromkeys(tables)), tuple(dict.fromkeys(params))


_CACHE_LOCK = threading.Lock()
#: The cached entries' shape: a new field (empty_when) makes older caches unreadable by name, not by accident.
CACHE_FORMAT = 2


def _entries() -> list[dict[str, Any]]:
    """Every SQL file's entry (`parse_model`), from the cache folder when the files are those it was made of (their
    names, sizes and modification times): parsing the headers and the statements (sqlglot) of every file costs a
    command about a second; reading the cache, milliseconds."""
    folder = _sql_dir()
    files = _listing(folder)
    key = hashlib.sha256(json.dumps([str(folder), __version__, CACHE_FORMAT, files]).encode()).hexdigest()[:24]
    path = os.path.join(cache_dir(), "models", f"{key}.json")
    with _CACHE_LOCK:
        try:
            with open(path, encoding="utf-8") as f:
                return json.load(f)
        except (OSError, ValueError):
            pass
        entries = [parse_model(name[:-4], _read(f"spark/sql/{name}"), f"spark/sql/{name}") for name, _, _ in files]
        try:  # written whole under a temporary name; a cache folder we cannot write costs the next run a parse
            os.makedirs(os.path.dirname(path), exist_ok=True)
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(entries, f)
            os.replace(tmp, path)
        except OSError:
            pass
        return entries


@cache
def sql_models() -> dict[str, Model]:
    """Every SQL model, by name (the file's stem), in name order."""
    return {entry["name"]: _model(entry) for entry in _entries()}


# --- Python models -------------------------------------------------------------------------------------------------

_PYTHON: dict[str, Model] = {}

#: The modules that register Python models (imported by `models()`).
PYTHON_MODEL_MODULES = ("kforensics.spark.transactions", "kforensics.spark.producers", "kforensics.spark.restart",
                        "kforensics.spark.incidents")


def python_model(name: str, *, inputs: tuple[str, ...], columns: str, doc: str, params: tuple[str, ...] = (),
                 keep: bool = False, applies: str | None = None, empty_when: Any = False) -> Callable:
    """Registers the decorated function as the model `name`: called with the DataFrames of `inputs` (keyword
    arguments by name) and the values of `params`, it returns rows of `columns` (a Spark DDL string). `empty_when`:
    when it provably returns no rows, a formula over the tables it reads (spark/emptiness.py; a SQL model's is read
    from its statement, a function's is declared with it)."""
    import inspect

    frame = inspect.stack()[1]
    path = os.path.relpath(frame.filename, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

    def register(build: Callable[..., Any]) -> Callable[..., Any]:
        _PYTHON[name] = Model(name, "table", path.replace(os.sep, "/"), doc=doc, keep=keep,
                              applies=applies, declared=tuple(Column(n, t) for n, t in split_ddl(columns)),
                              inputs=inputs, params=params, empty_when=empty_when, build=build)
        return build

    return register


@cache
def models() -> dict[str, Model]:
    """Every model, SQL and Python, by name."""
    import importlib

    for module in PYTHON_MODEL_MODULES:
        importlib.import_module(module)
    found = dict(sql_models())
    clash = set(found) & set(_PYTHON)
    if clash:
        raise ValueError(f"models defined twice: {sorted(clash)}")
    return {**found, **_PYTHON}


def model(name: str) -> Model:
    return models()[name]


def check_models() -> list[Model]:
    """The SQL checks, by family then name."""
    return sorted((m for m in sql_models().values() if m.kind == "check"), key=lambda m: (m.family, m.name))


def link_models() -> list[Model]:
    """The links between findings (spark/sql/link_*.sql: which finding follows from which), by rank then name."""
    return sorted((m for m in sql_models().values() if m.kind == "link"), key=lambda m: (m.rank, m.name))


def output_models() -> list[Model]:
    """The facts tables written to OUT (SQL models only: no pyspark needed), in name order."""
    return [m for m in sql_models().values() if m.kind == "table" and m.output]


@cache
def finding_kinds() -> dict[str, FindingKind]:
    """Every finding kind a check declares, by name (each declared once, in one file)."""
    kinds: dict[str, FindingKind] = {}
    for m in check_models():
        for f in m.findings:
            if f.name in kinds or f.name in PARSER_KINDS:
                raise ValueError(f"finding kind {f.name} declared twice ({m.path})")
            kinds[f.name] = f
    return kinds


_FINDINGS_COLUMNS = ("kind string, severity string, broker string, topic string, partition int, file string, "
                     "position bigint, offset bigint, producer_id bigint, producer_epoch int, message string, "
                     "details string")
#: The tables the runner builds itself (`runner.BUILT_IN`) and their columns: the union of the check families' findings,
#: those of them that are problems (warning, error), and the links between findings.
BUILT_IN_COLUMNS = {
    "checked_findings": _FINDINGS_COLUMNS,
    "problem_findings": _FINDINGS_COLUMNS,
    "finding_links": "cause_id string, effect_id string, rule string, rank int"}


def columns_of(table: str) -> tuple[Column, ...]:
    """The columns of a table the runner gives: a model's, one the runner builds itself, or an input table's
    (`every_dir_<name>`: with dir_state; else a live dir's, without it)."""
    from kforensics.spark.schemas import DIR_STATE_TABLES, INPUT_TABLES, ddl

    if table in models():
        return models()[table].columns
    if table in BUILT_IN_COLUMNS:
        return tuple(Column(n, t) for n, t in split_ddl(BUILT_IN_COLUMNS[table]))
    source = table.removeprefix("every_dir_")
    live_only = source in DIR_STATE_TABLES and not table.startswith("every_dir_")
    return tuple(Column(n, t) for n, t in split_ddl(ddl(INPUT_TABLES[source]))
                 if not (live_only and n == "dir_state"))


def columns_ddl(columns: tuple[Column, ...]) -> str:
    """A table's columns as a Spark DDL string."""
    return ", ".join(f"`{c.name}` {c.type}" for c in columns)
