"""The models (spark/sql/*.sql), read as the registry reads them, without Spark: each file's header is valid and
declares what the file is, each statement parses with sqlglot's Spark dialect and reads only tables the runner can
give it, each check's kinds and their details are those its header declares, and the runner rewrites exactly the
table references sqlglot sees."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp

from kforensics.spark import registry
from kforensics.spark import schemas as S
from kforensics.spark.runner import BUILT_IN, EVERY_DIR
from kforensics.spark.views import with_views

SQL_DIR = Path(__file__).resolve().parent.parent / "spark" / "sql"
MODELS = registry.models()
SQL = [m for m in MODELS.values() if m.build is None]


def _tables(text: str) -> list[str]:
    tree = sqlglot.parse_one(text, read="spark")
    ctes = {cte.alias_or_name for cte in tree.find_all(exp.CTE)}
    return [t.name for t in tree.find_all(exp.Table) if t.name not in ctes and not t.find_ancestor(exp.Hint)]


def test_every_file_is_a_model_and_names_are_unique() -> None:
    assert sorted(p.stem for p in SQL_DIR.glob("*.sql")) == sorted(m.name for m in SQL)
    assert all(m.path == f"spark/sql/{m.name}.sql" for m in SQL)
    python = [m for m in MODELS.values() if m.build is not None]
    # Python only where an ordered replay or a graph walk is clearer (incidents: connected components, the plan)
    assert {m.name for m in python} == {"lso_sweep", "resend_records", "resends", "restart_predictions",
                                        "incident_members", "incident_story"}
    assert not {m.name for m in MODELS.values()} & set(S.INPUT_TABLES), "a model named like an input table"


def test_a_header_that_is_not_valid_fails_with_its_file(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="x.sql: no header"):
        registry.parse_header("SELECT 1", "x.sql")
    with pytest.raises(ValueError, match="one of"):
        registry.parse_header("/*\n[table]\ncolumns = 'a int'\n[check]\n*/ SELECT 1", "x.sql")
    with pytest.raises(ValueError, match="unknown header keys"):
        registry.parse_header("/*\n[table]\ncolumns = 'a int'\ncolour = 1\n*/ SELECT 1", "x.sql")
    with pytest.raises(ValueError, match="declares its columns"):
        registry.parse_header("/*\n[table]\ndoc = 'x'\n*/ SELECT 1", "x.sql")
    with pytest.raises(ValueError, match="applies names no known condition"):
        registry.parse_header("/*\n[check]\napplies = 'sunny'\n*/ SELECT 1", "x.sql")
    with pytest.raises(ValueError, match="unknown keys"):
        registry.parse_header("/*\n[check]\n[[finding]]\nkind = 'k'\nseverity = 'error'\nmeaning = 'm'\nhue = 1\n*/",
                              "x.sql")


@pytest.mark.parametrize("model", SQL, ids=lambda m: m.name)
def test_inputs_and_parameters_are_sqlglots_and_the_runner_gives_them(model: registry.Model) -> None:
    """A model's inputs are what its statement reads, every one a table the runner can give: an input table of the
    parse pass (live dirs, or every dir's with the `every_dir_` prefix) or another model; its parameters are the
    scan's."""
    from kforensics.scan_options import ScanOptions
    from kforensics.spark.runner import scan_params

    assert tuple(dict.fromkeys(_tables(model.text))) == model.inputs
    # ... or a table the runner builds itself (the check families' union, the links between findings)
    known = set(MODELS) | set(S.INPUT_TABLES) | {EVERY_DIR + name for name in S.INPUT_TABLES} | set(BUILT_IN)
    assert set(model.inputs) <= known, sorted(set(model.inputs) - known)
    assert set(model.params) <= set(scan_params(ScanOptions()))
    # the runner reads each reference from the table's view: every one of them, and nothing else
    names = {name: f"view_{i}" for i, name in enumerate(model.inputs)}
    rewritten = with_views(model.text, model.inputs, names)
    assert sorted(re.findall(r"\bview_\d+\b", rewritten)) == sorted(names[t] for t in _tables(model.text))


def test_no_model_reads_itself_or_a_cycle() -> None:
    def reach(name: str, seen: tuple[str, ...]) -> None:
        assert name not in seen, " -> ".join((*seen, name))
        if name in MODELS:
            for i in MODELS[name].inputs:
                reach(i, (*seen, name))

    for name in MODELS:
        reach(name, ())


@pytest.mark.parametrize("check", registry.check_models(), ids=lambda c: c.name)
def test_each_kind_and_its_details_are_those_the_header_declares(check: registry.Model) -> None:
    """Every literal kind a check's statement returns is declared in its header (and only there), its details are
    among the kind's fields, and severity is in the statement only where a kind's severity depends on the case."""
    from kforensics.kinds import KINDS

    returned = set()
    for select in sqlglot.parse_one(check.text, read="spark").find_all(exp.Select):
        columns = {e.alias_or_name: e.this for e in select.expressions if isinstance(e, exp.Alias)}
        if not isinstance(columns.get("kind"), exp.Literal):
            continue
        kind = columns["kind"].this
        returned.add(kind)
        assert kind in check.kinds and KINDS[kind].model == check.path
        assert ("severity" in columns) == check.computes_severity, kind
        details = columns["details"]
        struct = details.this if isinstance(details, exp.JSONFormat) else None
        keys = {e.this.name for e in struct.expressions} if isinstance(struct, exp.Struct) else set()
        assert keys <= set(KINDS[kind].fields), (kind, sorted(keys - set(KINDS[kind].fields)))
    assert returned == set(check.kinds)
    families = {c.applies for c in registry.check_models() if c.family == check.family}
    assert len(families) == 1, f"the checks of family {check.family} disagree on when it applies"


def test_a_kind_is_declared_once_and_named_in_at_most_one_other_source_file() -> None:
    """Issue 48: a scan kind's name appears in its model file and at most one other source file (parsers/, spark/,
    kforensics/; tests, docs and the sample generators aside)."""
    repo = SQL_DIR.parent.parent
    sources = [p for folder in ("parsers", "spark", "kforensics") for p in (repo / folder).rglob("*")
               if p.suffix in (".py", ".pyx", ".sql")]
    texts = {p: p.read_text(encoding="utf-8") for p in sources}
    # the same word as a value of another field: a restart's `damage_kind` names the damage it stops at
    same_word = {"offset_overlap": {"parsers/restart.py"}}
    links = {m.path for m in MODELS.values() if m.kind == "link"}
    for kind in registry.finding_kinds().values():
        pattern = re.compile(rf"\b{re.escape(kind.name)}\b")
        where = sorted(str(p.relative_to(repo)) for p, text in texts.items() if pattern.search(text))
        others = [p for p in where if p != kind.model and p not in same_word.get(kind.name, ())]
        # a link rule (issue 49) names the kinds it links, in its header (cause, effect) and its statement
        others = [p for p in others if p not in links]
        if kind.name == "not_judged":  # the note every rule returns where the copy lacks what it needs (issue 47)
            others = [p for p in others if not p.endswith(".sql")]
        assert kind.model in where and len(others) <= 1, (kind.name, others)


def test_every_output_table_declares_each_column_with_what_it_holds() -> None:
    for m in registry.output_models():
        assert m.doc, m.name
        undocumented = [c.name for c in m.columns if not c.doc]
        assert not undocumented, f"{m.path}: columns without a doc: {undocumented}"
    for table, (source, doc, docs) in S.WRITTEN_INPUTS.items():
        assert doc and set(docs) == set(S.INPUT_TABLES[source].names) - {"broker", "topic", "partition"}, table
