def test_local_session_runs_a_job(spark) -> None:
    assert spark.range(10).selectExpr("sum(id) AS s").first()["s"] == 45
