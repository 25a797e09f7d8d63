"""SQL text over DataFrames (`spark/views.py`) and the parser warm-up of a new session (`session.warm_sql_parser`)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("pyspark")

from kforensics.spark.analysis import CHECKS, statement_texts  # noqa: E402
from kforensics.spark.session import warm_sql_parser  # noqa: E402
from kforensics.spark.views import SqlViews, run_sql  # noqa: E402

SAMPLE = Path(__file__).resolve().parent.parent / "sample_logs"


def _our_views(spark) -> set[str]:
    return {t.name for t in spark.catalog.listTables() if t.name.startswith("kforensics_") and t.isTemporary}


def test_run_sql_names_its_tables_and_leaves_no_view(spark):
    before = _our_views(spark)
    left = spark.createDataFrame([(1, "a"), (2, "b")], "k int, v string")
    right = spark.createDataFrame([(2, "x"), (3, "y")], "k int, w string")
    rows = run_sql("SELECT k, v, w, '{{}}' AS braces FROM {left} JOIN {right} USING (k)", left=left,
                   right=right).collect()
    assert [tuple(r) for r in rows] == [(2, "b", "x", "{}")]
    assert _our_views(spark) == before


def test_a_shared_table_is_registered_once_and_dropped(spark):
    before = _our_views(spark)
    views = SqlViews(spark)
    shared = views.share(spark.createDataFrame([(1,), (2,), (3,)], "n int"))
    first = run_sql("SELECT sum(n) AS s FROM {t}", t=shared).first()["s"]
    second = run_sql("SELECT count(*) AS c FROM {t} a JOIN {t} b USING (n)", t=shared).first()["c"]
    assert (first, second) == (6, 3)
    assert len(_our_views(spark) - before) == 1  # both statements read the one view
    views.drop()
    assert _our_views(spark) == before


def test_a_scan_drops_the_views_it_registered(spark, tmp_path, monkeypatch):
    from kforensics.spark import views
    from kforensics.spark.jobs import run_scan

    before = _our_views(spark)
    registered = []
    drop = views.SqlViews.drop

    def counting_drop(self) -> None:
        registered.extend(self._names)
        drop(self)

    monkeypatch.setattr(views.SqlViews, "drop", counting_drop)
    summary = run_scan(spark, [("broker-1", str(SAMPLE / "broker-1"))], str(tmp_path / "out"))
    assert summary.findings  # the scan ran its checks, through the shared views
    assert len(registered) >= 10  # the input tables and the shared ones, once each
    assert _our_views(spark) == before


def test_analyze_without_views_leaves_none(spark):
    from kforensics.spark.analysis import analyze
    from kforensics.spark.read import read_tables

    before = _our_views(spark)
    tables, _ = read_tables(spark, [("broker-1", str(SAMPLE / "broker-1"))], headers_only=True)
    analyze(tables)["findings"]().count()
    assert _our_views(spark) == before


def test_the_warm_up_parses_every_sql_check(spark, tmp_path, monkeypatch):
    from kforensics.paths import CACHE_ENV

    monkeypatch.setenv(CACHE_ENV, str(tmp_path))  # no statements saved by earlier scans
    texts = statement_texts()
    assert len(texts) == sum(1 for check in CHECKS if check.sql)
    parser = spark._jsparkSession.sessionState().sqlParser()
    for text in texts:
        assert "{" not in text.replace("'{}'", "")  # every placeholder named
        parser.parsePlan(text)  # raises ParseException on bad text


def test_the_warm_up_never_fails_a_session():
    def broken(*_args):
        raise RuntimeError("the JVM went away")

    gateway = SimpleNamespace(jvm=SimpleNamespace(org=SimpleNamespace(apache=SimpleNamespace(spark=SimpleNamespace(
        sql=SimpleNamespace(execution=SimpleNamespace(SparkSqlParser=broken)))))))
    assert warm_sql_parser(gateway, statement_texts) is None


def test_a_scan_saves_its_statements_for_the_next_sessions_warm_up(spark, tmp_path, monkeypatch):
    from kforensics.paths import CACHE_ENV
    from kforensics.spark import sql_warmup
    from kforensics.spark.jobs import run_scan

    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    checks_only = statement_texts()
    run_scan(spark, [("broker-1", str(SAMPLE / "broker-1"))], str(tmp_path / "out"))
    saved = sql_warmup.saved()
    assert any("PARTITION BY broker, topic, partition, producer_id" in text for text in saved)  # a table's statement
    texts = statement_texts()
    assert texts[:len(checks_only)] == checks_only and len(texts) > len(checks_only)
    parser = spark._jsparkSession.sessionState().sqlParser()
    for text in texts:
        parser.parsePlan(text)


def test_the_saved_statements_are_a_cache(tmp_path, monkeypatch):
    from kforensics.paths import CACHE_ENV
    from kforensics.spark import sql_warmup

    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    assert sql_warmup.saved() == []  # none yet
    sql_warmup.save(["SELECT 1 FROM {a}", "SELECT 2 FROM {b}"])
    sql_warmup.save(["SELECT 2 FROM {b}", "SELECT 3"])
    assert sql_warmup.saved() == ["SELECT 1 FROM {a}", "SELECT 2 FROM {b}", "SELECT 3"]
    monkeypatch.setattr(sql_warmup, "LIMIT", 2)
    sql_warmup.save(["SELECT 4"])
    assert sql_warmup.saved() == ["SELECT 3", "SELECT 4"]  # the newest kept
    (tmp_path / sql_warmup.FILE).write_bytes(b'["SELECT 5", ')  # cut short
    assert sql_warmup.saved() == []
    (tmp_path / sql_warmup.FILE).write_text('{"not": "a list"}')
    assert sql_warmup.saved() == []
    assert [p.name for p in tmp_path.iterdir()] == [sql_warmup.FILE]  # no temporary file left behind
