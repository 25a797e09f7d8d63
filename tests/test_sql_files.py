"""The checks' SQL files (spark/sql/*.sql), read with sqlglot's Spark dialect: each parses, reads exactly the tables
its `SqlCheck` declares (besides its own CTEs) and uses exactly the parameters it is given. No Spark."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp

from kforensics.spark.checks import CHECKS, TABLES
from kforensics.spark.views import with_views

SQL_DIR = Path(__file__).resolve().parent.parent / "spark" / "sql"


FILES = [*CHECKS, *TABLES.values()]


def test_every_file_is_registered_once_and_every_entry_has_its_file() -> None:
    assert sorted(p.stem for p in SQL_DIR.glob("*.sql")) == sorted(f.name for f in FILES)
    assert len({f.name for f in FILES}) == len(FILES)


def test_the_scan_gives_every_table_a_file_reads() -> None:
    from kforensics.spark.analysis import NAMED_TABLES

    assert {name for c in CHECKS for name in c.inputs} == set(NAMED_TABLES)


@pytest.mark.parametrize("check", FILES, ids=lambda c: c.name)
def test_tables_and_parameters_are_those_declared(check) -> None:
    tree = sqlglot.parse_one(check.text, read="spark")
    ctes = {cte.alias_or_name for cte in tree.find_all(exp.CTE)}
    assert not ctes & set(check.inputs), "a CTE named like an input table"
    # a join hint names a table by its alias (/*+ BROADCAST(r) */): not a table the file reads
    read = [t.name for t in tree.find_all(exp.Table) if t.name not in ctes and not t.find_ancestor(exp.Hint)]
    assert set(read) == set(check.inputs)
    assert {p.name for p in tree.find_all(exp.Placeholder)} == set(check.params)
    # the scan reads each reference from the table's view: every one of them, and nothing else
    names = {name: f"view_{i}" for i, name in enumerate(check.inputs)}
    rewritten = with_views(check.text, check.inputs, names)
    assert sorted(re.findall(r"\bview_\d+\b", rewritten)) == sorted(names[t] for t in read)
    kinds = getattr(check, "kinds", ())
    assert kinds == () or set(re.findall(r"'([a-z_]+)' AS kind", check.text)) == set(kinds)


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.name)
def test_each_kind_and_its_details_are_those_the_registry_declares(check) -> None:
    from kforensics.parsers.findings import KINDS

    for select in sqlglot.parse_one(check.text, read="spark").find_all(exp.Select):
        columns = {e.alias_or_name: e.this for e in select.expressions if isinstance(e, exp.Alias)}
        if not isinstance(columns.get("kind"), exp.Literal):
            continue
        kind = columns["kind"].this
        assert kind in check.kinds and kind in KINDS
        details = columns["details"]
        struct = details.this if isinstance(details, exp.JSONFormat) else None
        keys = {e.this.name for e in struct.expressions} if isinstance(struct, exp.Struct) else set()
        assert keys <= set(KINDS[kind].fields), (kind, sorted(keys - set(KINDS[kind].fields)))
