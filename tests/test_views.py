"""SQL text over DataFrames, with the tables a scan shares registered as temp views once (`spark/views.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pyspark")

from kforensics.spark.views import SqlViews, run_named  # noqa: E402

SAMPLE = Path(__file__).resolve().parent.parent / "sample_logs"


def _our_views(spark) -> set[str]:
    return {t.name for t in spark.catalog.listTables() if t.name.startswith("kforensics_") and t.isTemporary}


def test_run_named_reads_its_tables_by_name_and_leaves_no_view(spark):
    before = _our_views(spark)
    left = spark.createDataFrame([(1, "a"), (2, "b")], "k int, v string")
    right = spark.createDataFrame([(2, "x"), (3, "y")], "k int, w string")
    rows = run_named([("SELECT k, v, w, '{}' AS braces, :tag AS tag FROM left JOIN right USING (k)",
                       ["left", "right"])], {"left": left, "right": right}, {"tag": "t"}).collect()
    assert [tuple(r) for r in rows] == [(2, "b", "x", "{}", "t")]
    assert _our_views(spark) == before


def test_statements_are_one_union_and_a_name_inside_a_word_is_not_a_table(spark):
    t = spark.createDataFrame([(1,), (2,)], "n int")
    rows = run_named([("SELECT n AS from_t FROM t", ["t"]), ("SELECT n * 10 AS from_t FROM t", ["t"])],
                     {"t": t}, {}).collect()
    assert sorted(r["from_t"] for r in rows) == [1, 2, 10, 20]


def test_a_shared_table_is_registered_once_and_dropped(spark):
    before = _our_views(spark)
    views = SqlViews(spark)
    shared = views.share(spark.createDataFrame([(1,), (2,), (3,)], "n int"))
    first = run_named([("SELECT sum(n) AS s FROM t", ["t"])], {"t": shared}, {}).first()["s"]
    second = run_named([("SELECT count(*) AS c FROM t a JOIN t b USING (n)", ["t"])], {"t": shared}, {}).first()["c"]
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
    from kforensics.spark.read import read_tables
    from kforensics.spark.runner import analyze
    from kforensics.spark.session import SMALL_INPUT_SETTINGS, apply_settings, scan_settings

    before = _our_views(spark)
    tables, _ = read_tables(spark, [("broker-1", str(SAMPLE / "broker-1"))], headers_only=True)
    # Building the statements is what registers views; running them registers none, and would run the parse
    # pass again under each of them. As run_scan analyses a small input: with the session's defaults, adaptive
    # execution runs the shuffles of every kept table while the statements are built (20-27 s instead of 5-9 s).
    restore = apply_settings(spark, scan_settings(spark, SMALL_INPUT_SETTINGS))
    try:
        findings = analyze(tables)["findings"]()
    finally:
        restore()
    assert findings.columns[:2] == ["kind", "severity"]
    assert _our_views(spark) == before
