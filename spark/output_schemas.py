"""The facts tables of the analysis (the models declared `output`, spark/sql/) as Arrow schemas, column for column
as their headers declare them (a test holds each model to its declaration): a table whose input cannot have rows is
written from here without planning its statement. Apart from spark/schemas.py, which the registry reads."""

from __future__ import annotations

import pyarrow as pa

from kforensics.spark.registry import output_models, sql_models
from kforensics.spark.schemas import _schema, arrow_type


def _model_schema(name: str) -> pa.Schema:
    return _schema([(c.name, arrow_type(c.type)) for c in sql_models()[name].columns])


OUTPUT_TABLES: dict[str, pa.Schema] = {m.name: _model_schema(m.name) for m in output_models()}
