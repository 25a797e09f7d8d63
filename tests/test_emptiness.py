"""When a statement provably returns no rows (`spark/emptiness.py`): the formula held to Spark itself.

Every statement below runs on Spark over tables a, b and c with one row each or none, in all eight combinations: where
the formula says "empty" Spark must return no rows (it is never wrong), and the formulas of the plain shapes are the
ones SQL semantics give (it is not uselessly cautious)."""

from __future__ import annotations

import itertools

import pytest

from kforensics.spark.emptiness import empty_when, is_empty

STATEMENTS = {
    "SELECT k FROM a": "a",
    "SELECT a.k FROM a JOIN b USING (k)": {"or": ["a", "b"]},
    "SELECT a.k FROM a, b": {"or": ["a", "b"]},
    "SELECT a.k FROM a CROSS JOIN b": {"or": ["a", "b"]},
    "SELECT a.k FROM a LEFT JOIN b USING (k)": "a",
    "SELECT k FROM a RIGHT JOIN b USING (k)": "b",
    "SELECT k FROM a FULL OUTER JOIN b USING (k)": {"and": ["a", "b"]},
    "SELECT k FROM a LEFT SEMI JOIN b USING (k)": {"or": ["a", "b"]},
    "SELECT k FROM a LEFT ANTI JOIN b USING (k)": "a",
    "SELECT k FROM a UNION ALL SELECT k FROM b": {"and": ["a", "b"]},
    "SELECT k FROM a UNION SELECT k FROM b": {"and": ["a", "b"]},
    "SELECT k FROM a INTERSECT SELECT k FROM b": {"or": ["a", "b"]},
    "SELECT k FROM a EXCEPT SELECT k FROM b": "a",
    "SELECT count(*) AS n FROM a": False,  # a global aggregate: one row
    "SELECT max_by(k, k) AS n FROM a": False,  # an aggregate sqlglot reads as an anonymous call
    "SELECT k, count(*) AS n FROM a GROUP BY k": "a",
    "SELECT k FROM a WHERE k > 5": "a",
    "SELECT k, count(*) OVER (PARTITION BY k) AS n FROM a": "a",
    "SELECT count(*) AS n FROM a HAVING count(*) >= 0": False,
    "SELECT 1 AS k": False,
    "SELECT k FROM (SELECT count(*) AS k FROM a)": False,
    "SELECT a.k FROM a JOIN (SELECT count(*) AS n FROM b) m ON m.n >= 0": "a",
    "SELECT k, (SELECT max(k) FROM b) AS m FROM a": "a",
    "WITH x AS (SELECT k FROM a UNION ALL SELECT k FROM b) SELECT x.k FROM x JOIN c USING (k)":
        {"or": [{"and": ["a", "b"]}, "c"]},
    "SELECT k FROM a LATERAL VIEW explode(array(k)) e AS v": "a",
    "SELECT k FROM a LATERAL VIEW OUTER explode(array()) e AS v": False,
    "SELECT k FROM range(3) AS r(k)": False,
    "SELECT k FROM VALUES (1) AS v(k)": False,
    "SELECT k FROM a WHERE k IN (SELECT k FROM b)": "a",
}


@pytest.mark.parametrize("text", list(STATEMENTS))
def test_the_formula_is_what_sql_semantics_give(text: str) -> None:
    assert empty_when(text) == STATEMENTS[text]


@pytest.fixture(scope="module")
def tables(spark):
    return {(name, has): spark.createDataFrame([(1,)] if has else [], "k int")
            for name in "abc" for has in (True, False)}


def test_the_formula_never_claims_rows_away_that_spark_returns(spark, tables) -> None:
    checked = 0
    for empties in itertools.product((False, True), repeat=3):
        empty = dict(zip("abc", empties, strict=True))
        for name in "abc":
            tables[(name, not empty[name])].createOrReplaceTempView(name)
        for text in STATEMENTS:
            claimed = is_empty(empty_when(text), empty.__getitem__)
            rows = spark.sql(text).count()
            assert not (claimed and rows), (text, empty, rows)
            checked += claimed
    for name in "abc":
        spark.catalog.dropTempView(name)
    assert checked > 50  # most shapes are claimed empty in some combination


def test_every_model_has_a_formula_over_the_tables_it_reads() -> None:
    from kforensics.spark import registry

    def names(formula) -> set[str]:
        if isinstance(formula, str):
            return {formula}
        if isinstance(formula, dict):
            return set().union(*(names(f) for f in next(iter(formula.values()))))
        return set()

    claimed = 0
    for model in registry.sql_models().values():
        assert names(model.empty_when) <= set(model.inputs), model.name
        claimed += model.empty_when is not False
    assert claimed >= len(registry.sql_models()) * 0.9  # nearly every model reads tables that can be empty


def test_a_table_known_empty_is_written_with_the_schema_spark_gives_it(spark, tmp_path) -> None:
    """Issue 52: a small scan writes a table the runner knows has no rows from its columns, without a job; the file
    holds the Arrow schema Spark's own `toArrow` gives the same table (every output model's columns, and the
    findings')."""
    import pyarrow.parquet as pq

    from kforensics.spark import registry
    from kforensics.spark.jobs import write_table_by_driver
    from kforensics.spark.runner import Scan, known_empty

    scan = Scan({"batches": spark.createDataFrame([], "broker string")})
    outputs = [(m.name, registry.columns_ddl(m.columns)) for m in registry.output_models()]
    for name, ddl in [*outputs, ("checked_findings", registry.BUILT_IN_COLUMNS["checked_findings"])]:
        df = scan.empty(ddl)
        assert known_empty(df) and not known_empty(spark.createDataFrame([], ddl))
        write_table_by_driver(df, str(tmp_path / name))
        written = pq.read_table(tmp_path / name)
        assert written.num_rows == 0
        assert written.schema.equals(spark.createDataFrame([], ddl).toArrow().schema, check_metadata=True), name


#: A check over an input the scan below does not have (no tiered storage on its disk).
_REMOTE_PROBE = """/*
[check]
family = "{family}"
*/
SELECT 'remote_probe' AS kind, 'warning' AS severity, broker, topic, partition, file, position, offset,
       CAST(NULL AS BIGINT) AS producer_id, CAST(NULL AS INT) AS producer_epoch, 'probe' AS message, '{{}}' AS details
FROM remote_log_events"""


@pytest.mark.parametrize("family", ["log", "remote_probe"])
def test_a_check_without_input_rows_adds_nothing_to_plan(spark, small_input, monkeypatch, family: str) -> None:
    """Issue 52: a check that provably finds nothing on a disk (its input table has no rows there) costs that disk's
    scan nothing: the same families run as the same statements, with it in an existing family or in a family of its
    own."""
    from unit_frames import batch, batches, scan_of

    from kforensics.spark import registry, runner

    run_named = runner.run_named

    def planned() -> tuple[list[str], dict[str, list[str]]]:
        """The families the scan runs, and the statements each family's findings are planned as."""
        statements: list[str] = []

        def recording(pairs, tables, args):
            statements.extend(text for text, _inputs in pairs)
            return run_named(pairs, tables, args)

        monkeypatch.setattr(runner, "run_named", recording)
        scan = scan_of(batches=batches(spark, [batch(0, 3), batch(3, 2)]))
        families = scan.families()
        texts: dict[str, list[str]] = {}
        for name in families:
            statements.clear()
            scan.family(name)
            texts[name] = list(statements)
        return families, texts

    before = planned()
    probe = registry.model_of_text("remote_probe", _REMOTE_PROBE.format(family=family), "remote_probe.sql")
    assert probe.kind == "check" and probe.inputs == ("remote_log_events",) and probe.family == family
    sql_models, models = registry.sql_models(), registry.models()
    monkeypatch.setattr(registry, "sql_models", lambda: {**sql_models, probe.name: probe})
    monkeypatch.setattr(registry, "models", lambda: {**models, probe.name: probe})
    assert probe in registry.check_models()
    after = planned()
    assert after == before
    assert before[0] and all(before[1].values())  # the disk's families were planned, each as statements
