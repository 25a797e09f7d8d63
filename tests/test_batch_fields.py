"""A batch's fields are declared once (parsers/record_batch.py BATCH_FIELDS) and every surface takes them by name: the
reader's RecordBatch, the scan's `batches` schema and executor rows, dump's JSON (the Python and the compiled writer),
the kafka-dump-log text reader and the scan of dump text."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import NamedTuple

import pytest
from conftest import SAMPLE_LOGS

from kforensics.parsers import _pure, core
from kforensics.parsers.record_batch import BATCH_FIELDS, RecordBatch, open_log_bytes

SEGMENT = SAMPLE_LOGS / "broker-1" / "payments-0" / "00000000000000000000.log"
#: The declaration of a field the readers decode but no table or dump shows, and the same made a column and a JSON
#: field: the one edit this test makes.
HIDDEN = 'BatchField("attributes", "int32", "the attributes field as stored", column=False, json=False),'
SHOWN = 'BatchField("attributes", "int32", "the attributes field as stored"),'

#: Every surface of a batch, in a copy of the package: what each says of `attributes` ("absent" when it has no such
#: field), printed as JSON.
_SURFACES = """
import io, json, sys
sys.path.insert(0, sys.argv[1])
import pyarrow as pa
from kforensics import dump_out
from kforensics.parsers import core, record_batch
from kforensics.parsers.dump_text import DumpBatch, iter_dump_text
from kforensics.parsers.record_batch import RecordBatch, open_log
from kforensics.spark import dump_input, read
from kforensics.spark import schemas as S

segment = sys.argv[2]
assert record_batch.__file__.startswith(sys.argv[1]) and read.__file__.startswith(sys.argv[1])
out = {"reader": core.READER, "columns": [name for name, _ in S.BATCH_FIELDS],
       "table": [str(f.type) for f in S.INPUT_TABLES["batches"] if f.name == "attributes"]}
with open_log(segment) as log:
    batches = [b for b in log.batches() if isinstance(b, RecordBatch)]
out["batches"] = [b.attributes for b in batches]
task = pa.RecordBatch.from_pylist([{"task_kind": "segment", "broker": "b1", "topic": "payments", "partition": 0,
                                    "path": segment, "base_offset": 0}], schema=S.TASKS)
out["rows"] = [row.get("attributes", "absent") for chunk in read.segment_rows(iter([task]))
               for row in chunk.to_pylist() if row["row_kind"] == "batch"]
python = io.StringIO()
for b in batches:
    dump_out.JsonOut(python).batch(b, segment)
out["json"] = [json.loads(line).get("attributes", "absent") for line in python.getvalue().splitlines()]
module = dump_out.compiled_dump_lines()
if module is not None:
    lines = module.DumpLines(True, False, dump_out.batch_layout(True, segment))
    for b in batches:
        lines.batch(b)
    out["compiled_json_identical"] = lines.take() == python.getvalue().encode()
text = io.StringIO()
text.write(f"Dumping {segment}\\n")
for b in batches:
    dump_out.TextOut(text, io.StringIO()).batch(b, segment)
out["text"] = text.getvalue()
parsed = [b for b in iter_dump_text(io.BytesIO(text.getvalue().encode()), "dump.txt") if isinstance(b, DumpBatch)]
out["dump_rows"] = [dump_input._batch_row("b1", b).get("attributes", "absent") for b in parsed]
print(json.dumps(out))
"""


def _surfaces(tmp_path: Path, edit: tuple[str, str] | None) -> dict:
    """The package's sources copied (the zip spark-submit ships) with `edit` made to record_batch.py, and what every
    surface of a batch says there."""
    from kforensics.spark.jobs import package_zip

    folder = tmp_path / ("edited" if edit else "as-is")
    with zipfile.ZipFile(package_zip(str(tmp_path / f"{folder.name}.zip"))) as zf:
        zf.extractall(folder)
    if edit:
        declaration = folder / "kforensics" / "parsers" / "record_batch.py"
        source = declaration.read_text()
        assert source.count(edit[0]) == 1
        declaration.write_text(source.replace(*edit))
    done = subprocess.run([sys.executable, "-c", _SURFACES, str(folder), str(SEGMENT)], capture_output=True,
                          text=True, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def test_a_decoded_field_becomes_a_column_and_a_json_field_by_its_declaration_alone(tmp_path: Path) -> None:
    """One line of BATCH_FIELDS changed (`attributes`, which both readers decode, declared a column and a JSON field):
    the scan's batches schema and its executor rows, dump --json (the compiled writer byte for byte as the Python one)
    and the rows of a dump-text input all carry it; kafka-dump-log's text stays Kafka's, and its reader leaves the
    column null (the text does not hold it)."""
    assert HIDDEN in Path(sys.modules[RecordBatch.__module__].__file__).read_text()
    before, after = _surfaces(tmp_path, None), _surfaces(tmp_path, (HIDDEN, SHOWN))
    n = len(before["batches"])
    assert n > 3 and before["batches"] == after["batches"] and len(set(after["batches"])) > 1
    assert "attributes" not in before["columns"] and before["table"] == []
    assert after["columns"] == [*before["columns"], "attributes"] and after["table"] == ["int32"]
    assert before["rows"] == before["json"] == before["dump_rows"] == ["absent"] * n
    assert after["rows"] == after["json"] == after["batches"]
    assert after["dump_rows"] == [None] * n
    assert after["text"] == before["text"] and "attributes" not in after["text"]
    if core.COMPILED is not None:
        assert after["reader"] == "compiled"
        assert before["compiled_json_identical"] and after["compiled_json_identical"]


def test_a_declared_field_without_its_decoding_is_refused_by_both_readers() -> None:
    """A field declared but not decoded never gives a batch with an empty slot: the pure walk_v2 builds batches by
    keyword (a missing one is a TypeError), the compiled one refuses a batch type with a field it does not fill."""
    extended = NamedTuple("RecordBatch", [*((name, object) for name in RecordBatch._fields), ("records_size", int)])
    data = SEGMENT.read_bytes()
    codecs = tuple(["none"] * 8)
    with pytest.raises(TypeError, match="records_size"):
        _pure.walk_v2(data, 0, len(data), len(data), True, extended, codecs)
    assert _pure.walk_v2(data, 0, len(data), len(data), True, RecordBatch, codecs)[0]
    if core.COMPILED is None:
        pytest.skip("the compiled core is not built")
    with pytest.raises(ValueError, match="records_size"):
        core.COMPILED.walk_v2(data, 0, len(data), len(data), True, extended, codecs)
    with open_log_bytes(data, compiled=True) as log:  # and the reader's own type still binds after the refusal
        assert [b for b in log.batches() if isinstance(b, RecordBatch)]


def test_the_compiled_walk_puts_every_field_by_name_whatever_the_declared_order() -> None:
    """The compiled walk_v2 fills each field at its name's index: a batch type with the fields in reverse order gets
    the same values as the pure reference's RecordBatch."""
    if core.COMPILED is None:
        pytest.skip("the compiled core is not built")
    reverse = NamedTuple("Reversed", [(name, object) for name in reversed(RecordBatch._fields)])
    data = SEGMENT.read_bytes()
    codecs = tuple(["none", "gzip", "snappy", "lz4", "zstd", "5", "6", "7"])
    fast, _ = core.COMPILED.walk_v2(data, 0, len(data), len(data), True, reverse, codecs)
    pure, _ = _pure.walk_v2(data, 0, len(data), len(data), True, RecordBatch, codecs)
    assert len(fast) == len(pure) > 3
    assert [b._asdict() for b in fast] == [b._asdict() for b in pure]
    assert {f.name for f in BATCH_FIELDS if f.source == "header"} == set(RecordBatch._fields)
