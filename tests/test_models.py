"""Every model, built by the runner over empty input tables (every `applies` holding, so that each statement is
planned), gives exactly the columns its header declares: names, order and types. A model's declaration is what
docs/output.md shows and what a scan writes for a table whose input has no rows, so the two cannot drift."""

from __future__ import annotations

import pytest

from kforensics.spark import registry
from kforensics.spark import schemas as S

MODELS = sorted(name for name, m in registry.models().items() if m.kind == "table")


@pytest.fixture(scope="module")
def empty_scan(spark, small_input):
    from kforensics.spark.read import InputFacts
    from kforensics.spark.runner import Scan

    tables = {name: spark.createDataFrame([], S.ddl(schema)) for name, schema in S.INPUT_TABLES.items()}
    facts = InputFacts(replicas_possible=True, has_transaction_state=True, has_consumer_offsets=True,
                       has_future_replicas=True, has_cluster_metadata=True)
    return Scan(tables, facts=facts, small=True)


@pytest.mark.parametrize("name", MODELS)
def test_each_model_builds_the_columns_it_declares(spark, empty_scan, name: str) -> None:
    model = registry.model(name)
    built = empty_scan.table(name).schema
    declared = spark.createDataFrame([], registry.columns_ddl(model.columns)).schema
    assert [(f.name, f.dataType.simpleString()) for f in built] == \
        [(f.name, f.dataType.simpleString()) for f in declared], model.path


def test_each_check_family_builds_the_findings_columns(empty_scan) -> None:
    from kforensics.parsers.findings import FINDING_COLUMNS

    for family in {c.family for c in registry.check_models()}:
        assert empty_scan.family(family).columns == list(FINDING_COLUMNS), family
