from pathlib import Path

from conftest import SAMPLE_INPUTS


def test_local_session_runs_a_job(spark) -> None:
    assert spark.range(10).selectExpr("sum(id) AS s").first()["s"] == 45


def test_a_session_compiles_the_code_of_a_scan_once(spark, tmp_path: Path) -> None:
    """A long-lived session (`kforensics serve`, these tests) keeps the classes a scan generated: with Spark's
    default cache of 100, each scan of the two sample brokers compiled its ~700 classes again (745 compilations
    in the second scan). Some ~50 classes of the ~870 a scan generates are still compiled again at each scan (seen
    since the tiered-storage, cleaner and coordinator-partition checks came in; the source is not found yet)."""
    from kforensics.spark.jobs import run_scan

    compilations = spark._jvm.org.apache.spark.metrics.source.CodegenMetrics.METRIC_COMPILATION_TIME()
    start = compilations.getCount()
    run_scan(spark, SAMPLE_INPUTS, str(tmp_path / "first"), headers_only=True)
    before = compilations.getCount()
    run_scan(spark, SAMPLE_INPUTS, str(tmp_path / "second"), headers_only=True)
    again = compilations.getCount() - before
    assert again < 100, (again, before - start)
