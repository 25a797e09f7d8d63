"""The compiled reader against the pure-Python reference: identical batches, records, findings and dump output.

Both readers run on every sample segment, every segment under ../shared/realdata, kafka-python-built batches
of every codec, and hypothesis-mutated copies of them all (bit flips, truncations, length lies, zero fills,
bad varints, unknown codecs). Findings are compared whole (kind, file, position, message, details), and
`kforensics dump` output byte for byte, text and JSON, run in-process with each reader.
"""

from __future__ import annotations

import contextlib
import os
import struct
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import SAMPLE_LOGS, realdata_files
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.record import MemoryRecords
from kafka.record.default_records import DefaultRecordBatchBuilder
from mutations import fix_crc, mutate

from kforensics import dump_out
from kforensics.parsers import core, record_batch
from kforensics.parsers.findings import Finding
from kforensics.parsers.record_batch import Record, RecordBatch, open_log, open_log_bytes

compiled = pytest.mark.skipif(core.COMPILED is None, reason="the compiled core is not built")

SAMPLE_SEGMENTS = sorted(p for p in SAMPLE_LOGS.rglob("*") if p.suffix in (".log", ".checkpoint")
                         and p.name[0].isdigit() and p.stat().st_size)  # eos-2's empty active segments hold nothing
REAL_SEGMENTS = realdata_files("*.log") + realdata_files("*.checkpoint") + realdata_files("*.recordset.bin")


def read_all(log: record_batch.LogFile, **kwargs: object) -> list[object]:
    """Everything a reader says about a file: batches, each followed by its records and record findings."""
    out: list[object] = []
    for item in log.batches(**kwargs):
        out.append(item)
        if isinstance(item, RecordBatch):
            records = list(log.records(item))
            out.extend(records)
            # the full scan's check: the same findings, without the records
            assert log.record_findings(item) == [r for r in records if isinstance(r, Finding)]
            if item.is_control and item.magic == 2:
                out.append(("control_record", log.control_record(item)))
    return out


@contextlib.contextmanager
def read_chunk_bytes(size: int) -> Iterator[None]:
    """The compiled header walk of a file on disk reads it in chunks of `size` bytes (default 1 MiB)."""
    saved = record_batch.READ_CHUNK_BYTES
    record_batch.READ_CHUNK_BYTES = size
    try:
        yield
    finally:
        record_batch.READ_CHUNK_BYTES = saved


def _assert_identical(fast: list[object], pure: list[object]) -> None:
    assert len(fast) == len(pure)
    for a, b in zip(fast, pure, strict=True):
        assert type(a) is type(b), (a, b)
        assert a == b
        if isinstance(a, Finding):
            assert (a.kind, a.file, a.position, a.message, dict(a.details)) == (
                b.kind, b.file, b.position, b.message, dict(b.details))


def assert_same(data: bytes, name: str = "seg.log", **kwargs: object) -> list[object]:
    """Both readers over the bytes in memory, and the compiled one over them as a file on disk (its chunked
    header walk, with a chunk size that puts the chunk edges anywhere, batches larger than a chunk included)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, name)
        with open_log_bytes(data, path, compiled=False) as log:
            pure = read_all(log, **kwargs)
        with open_log_bytes(data, path, compiled=True) as log:
            _assert_identical(read_all(log, **kwargs), pure)
        if data:
            Path(path).write_bytes(data)
            with read_chunk_bytes(61 + len(data) % 997), open_log(path, compiled=True) as log:
                _assert_identical(read_all(log, **kwargs), pure)
    return pure


def test_suite_runs_on_the_compiled_reader() -> None:
    """CI builds the extension from a clean clone: the rest of the suite must exercise it, not the fallback."""
    if core.PURE_PYTHON_FORCED:
        pytest.skip("KFORENSICS_PURE_PYTHON is set: this run checks the pure-Python reader")
    assert core.READER == "compiled", core.reader_description()


#: chunk sizes of the compiled header walk: the default, one that cuts batches, one smaller than any batch
CHUNKS = [1 << 20, 1000, 61]


@compiled
@pytest.mark.parametrize("chunk", CHUNKS)
@pytest.mark.parametrize("path", SAMPLE_SEGMENTS, ids=lambda p: str(p.relative_to(SAMPLE_LOGS)))
def test_sample_segments_identical(path: Path, chunk: int) -> None:
    with open_log(path, compiled=False) as log:
        pure = read_all(log)
    with read_chunk_bytes(chunk), open_log(path, compiled=True) as log:
        fast = read_all(log)
    assert fast == pure and any(isinstance(x, Record) for x in pure)
    assert [f for f in fast if isinstance(f, Finding)] == [f for f in pure if isinstance(f, Finding)]


@compiled
@pytest.mark.skipif(not REAL_SEGMENTS, reason="../shared/realdata is absent (a plain clone): no real broker files")
@pytest.mark.parametrize("chunk", CHUNKS)
@pytest.mark.parametrize("path", REAL_SEGMENTS, ids=lambda p: str(p).split("realdata/")[-1])
def test_real_segments_identical(path: Path, chunk: int) -> None:
    with open_log(path, compiled=False) as log:
        pure = read_all(log)
    with read_chunk_bytes(chunk), open_log(path, compiled=True) as log:
        fast = read_all(log)
    assert fast == pure


# --- generated and mutated inputs ------------------------------------------------------------------------

@st.composite
def built_batches(draw: st.DrawFn) -> bytes:
    """A few v2 batches written by kafka-python, any codec, with random keys, values and headers."""
    out = bytearray()
    offset = draw(st.integers(0, 2**40))
    for _ in range(draw(st.integers(1, 3))):
        builder = DefaultRecordBatchBuilder(
            magic=2, compression_type=draw(st.sampled_from([0, 1, 2, 3, 4])),
            is_transactional=draw(st.booleans()), producer_id=draw(st.sampled_from([-1, 0, 7, 2**40])),
            producer_epoch=draw(st.integers(-1, 5)), base_sequence=draw(st.sampled_from([-1, 0, 2**31 - 3])),
            batch_size=1 << 30)
        for i in range(draw(st.integers(0, 12))):
            builder.append(i, timestamp=draw(st.integers(0, 2**45)),
                           key=draw(st.none() | st.binary(max_size=40)),
                           value=draw(st.none() | st.binary(max_size=300)),
                           headers=draw(st.lists(st.tuples(st.text(max_size=8),
                                                           st.none() | st.binary(max_size=12)), max_size=3)))
        batch = bytearray(builder.build())
        struct.pack_into(">q", batch, 0, offset)
        offset += 100
        out += batch
    return bytes(out)


def _seed_files() -> list[Path]:
    small = [p for p in REAL_SEGMENTS if 0 < p.stat().st_size <= 256 * 1024]
    return small[:10] + [p for p in SAMPLE_SEGMENTS if p.stat().st_size <= 256 * 1024]


SEEDS = _seed_files()


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    if SEEDS and draw(st.booleans()):
        return mutate(draw, draw(st.sampled_from(SEEDS)).read_bytes())
    return mutate(draw, draw(built_batches()))


@compiled
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=mutated(), verify_crc=st.booleans(), max_bytes=st.none() | st.integers(0, 5000))
def test_mutated_inputs_identical(data: bytes, verify_crc: bool, max_bytes: int | None) -> None:
    assert_same(data, verify_crc=verify_crc, max_bytes=max_bytes)


@compiled
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=built_batches())
def test_generated_batches_identical_and_as_kafka_python(data: bytes) -> None:
    """kafka-python's DefaultRecordBatch is an independent oracle for the records."""
    ours = [r for r in assert_same(data) if isinstance(r, Record)]
    theirs = []
    records = MemoryRecords(data)
    while records.has_next():
        theirs.extend(records.next_batch())
    assert [(r.offset, r.timestamp, r.key, r.value, list(r.headers)) for r in ours] == [
        (t.offset, t.timestamp, t.key, t.value, [tuple(h) for h in t.headers]) for t in theirs]


@compiled
@pytest.mark.parametrize("lie", [
    b"\xff\xff\xff\xff\xff\x01",  # a varint of 6 bytes: longer than Kafka's int32 varint
    b"\x80",  # runs past the end of the records
    b"\x02",  # length 1: impossible
])
def test_bad_varints_identical(lie: bytes) -> None:
    builder = DefaultRecordBatchBuilder(2, 0, False, 1, 0, 0, 1 << 30)
    builder.append(0, timestamp=1, key=b"k", value=b"v", headers=[])
    batch = bytearray(builder.build()[:61]) + lie
    struct.pack_into(">i", batch, 8, len(batch) - 12)
    fix_crc(batch, 0)
    items = assert_same(bytes(batch))
    (finding,) = [f for f in items if isinstance(f, Finding)]
    assert finding.kind == "invalid_record" and finding.position == 0


# --- zero-filled (preallocated) segments -------------------------------------------------------------------

@pytest.mark.parametrize("reader", ["pure-python", "compiled"])
def test_sparse_zero_filled_segment(tmp_path: Path, reader: str) -> None:
    """A segment whose tail is a 64 MiB hole (a preallocated file): one zero_filled_tail at the end of the
    last batch, after every batch; the scan goes through the zero run chunk by chunk."""
    if reader == "compiled" and core.COMPILED is None:
        pytest.skip("the compiled core is not built")
    source = SAMPLE_LOGS / "broker-1" / "payments-0" / "00000000000000000000.log"
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(source.read_bytes())
    data_end = source.stat().st_size
    os.truncate(path, 64 << 20)
    with open_log(source) as log:
        expected_batches = [b.base_offset for b in log.batches() if isinstance(b, RecordBatch)]
    with open_log(path, compiled=reader == "compiled") as log:
        items = list(log.batches())
    assert [b.base_offset for b in items if isinstance(b, RecordBatch)] == expected_batches
    (finding,) = [f for f in items if isinstance(f, Finding)]
    assert (finding.kind, finding.position, finding.details["bytes"]) == (
        "zero_filled_tail", data_end, (64 << 20) - data_end)
    assert items[-1] is finding


@pytest.mark.parametrize("reader", ["pure-python", "compiled"])
def test_zero_run_followed_by_data_is_not_a_tail(tmp_path: Path, reader: str) -> None:
    """Zeros and then a non-zero byte 20 MiB later (past the scan's chunk): not a zero-filled tail."""
    if reader == "compiled" and core.COMPILED is None:
        pytest.skip("the compiled core is not built")
    path = tmp_path / "00000000000000000000.log"
    with path.open("wb") as fh:
        fh.truncate(20 << 20)
        fh.seek(20 << 20)
        fh.write(b"\x01")
    with open_log(path, compiled=reader == "compiled") as log:
        items = list(log.batches())
    assert [f.kind for f in items] == ["invalid_batch_length"] and items[0].position == 0


# --- dump output, byte for byte ----------------------------------------------------------------------------

DUMP_OPTIONS = [[], ["--deep-iteration"], ["--deep-iteration", "--print-data-log"],
                ["--json", "--deep-iteration", "--print-data-log"], ["--json", "--iso-time"]]
DUMP_FILES = [p for p in SAMPLE_SEGMENTS if p.suffix == ".log"]


def _dump(monkeypatch: pytest.MonkeyPatch, reader: str, args: list[str]) -> tuple[int, str, str]:
    from kforensics.cli import main

    monkeypatch.setattr(core, "READER", reader)
    if reader == "pure-python":  # as with KFORENSICS_PURE_PYTHON: no compiled code at all
        monkeypatch.setattr(dump_out, "compiled_dump_lines", lambda: None)
    result = CliRunner().invoke(main, ["dump", *args])
    return result.exit_code, result.stdout, result.stderr


@compiled
@pytest.mark.parametrize("options", DUMP_OPTIONS, ids=lambda o: " ".join(o) or "headers")
def test_dump_output_identical(monkeypatch: pytest.MonkeyPatch, options: list[str]) -> None:
    args = [*options, *map(str, DUMP_FILES)]
    pure = _dump(monkeypatch, "pure-python", args)
    fast = _dump(monkeypatch, "compiled", args)
    assert fast == pure and len(pure[1]) > 1000


@compiled
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(data=mutated(), options=st.sampled_from(DUMP_OPTIONS))
def test_dump_of_mutated_input_identical(data: bytes, options: list[str], tmp_path_factory: pytest.TempPathFactory,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path_factory.mktemp("diff") / "00000000000000000000.log"
    path.write_bytes(data)
    assert _dump(monkeypatch, "compiled", [*options, str(path)]) == _dump(monkeypatch, "pure-python",
                                                                           [*options, str(path)])


@compiled
def test_dump_writes_segment_lines_through_the_compiled_sink_where_it_can() -> None:
    """The compiled lines stand in for the Python renderer exactly where they write the same bytes (the tests
    above compare the two; they would compare Python with Python if the compiled sink were never chosen)."""
    import io

    def sink(out: dump_out.Output, python_per_record: bool = False) -> dump_out.Renderer:
        return dump_out.log_sink(out, "f.log", print_data=True, python_per_record=python_per_record)

    def utf8() -> io.TextIOWrapper:
        return io.TextIOWrapper(io.BytesIO(), encoding="utf-8")

    assert isinstance(sink(dump_out.TextOut(utf8(), io.StringIO())), dump_out.CompiledLines)
    assert isinstance(sink(dump_out.JsonOut(utf8())), dump_out.CompiledLines)
    for out in (dump_out.TextOut(utf8(), io.StringIO(), iso_time=True), dump_out.JsonOut(utf8(), iso_time=True),
                dump_out.TextOut(utf8(), io.StringIO(), skip_record_metadata=True), dump_out.JsonOut(io.StringIO()),
                dump_out.TextOut(io.TextIOWrapper(io.BytesIO(), encoding="latin-1"), io.StringIO())):
        assert sink(out) is out
    out = dump_out.TextOut(utf8(), io.StringIO())
    assert sink(out, python_per_record=True) is out


def test_version_names_the_reader() -> None:
    env = {**os.environ, "KFORENSICS_PURE_PYTHON": "1"}
    out = subprocess.run([sys.executable, "-m", "kforensics", "--version"], capture_output=True, text=True, env=env)
    assert out.returncode == 0 and "pure-Python reader (KFORENSICS_PURE_PYTHON is set)" in out.stdout
    env.pop("KFORENSICS_PURE_PYTHON")
    out = subprocess.run([sys.executable, "-m", "kforensics", "--version"], capture_output=True, text=True, env=env)
    expected = "compiled reader" if core.COMPILED is not None else "pure-Python reader"
    assert out.returncode == 0 and expected in out.stdout


# --- record rows in bulk (the scan's executors) -------------------------------------------------------------

def _columns(data: bytes, compiled_reader: bool) -> tuple[dict[str, list[object]], list[Finding]]:
    from kforensics.parsers.record_rows import RecordColumns

    columns = RecordColumns(compiled=compiled_reader)
    findings: list[Finding] = []
    with open_log_bytes(data, "seg.log", compiled=compiled_reader) as log:
        for b in log.batches():
            if isinstance(b, RecordBatch):
                findings += columns.add(log, b)
    return {name: array.to_pylist() for name, array in columns.take().items()}, findings


@compiled
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=mutated())
def test_record_columns_identical(data: bytes) -> None:
    """The bulk record rows: the same columns and findings from C buffers as from the reference's records."""
    from kforensics.parsers.record_rows import content_hash

    fast, fast_findings = _columns(data, True)
    pure, pure_findings = _columns(data, False)
    assert fast == pure and fast_findings == pure_findings
    # and each row is what LogFile.records() says about that record
    with open_log_bytes(data, "seg.log", compiled=False) as log:
        rows = [(r.offset, r.timestamp, content_hash(r.key), content_hash(r.value), b.position)
                for b in log.batches() if isinstance(b, RecordBatch)
                for r in log.records(b) if isinstance(r, Record)]
    assert rows == list(zip(pure["offset"], pure["timestamp"], pure["key_hash"], pure["value_hash"],
                            pure["batch_position"], strict=True))


@compiled
def test_scan_record_rows_identical(monkeypatch: pytest.MonkeyPatch) -> None:
    """spark/read.py's record_rows (the executor function, called directly) with each reader, asked for every
    batch of every file."""
    import pyarrow as pa

    from kforensics.spark import read
    from kforensics.spark import schemas as S

    paths = [p for p in DUMP_FILES if "broker-1" in str(p)]
    wanted = []
    for p in paths:
        with open_log(p, compiled=False) as log:
            wanted += [{"broker": "b1", "topic": p.parent.name[:-2], "partition": 0, "file": str(p),
                        "position": b.position, "size": b.size} for b in log.batches() if isinstance(b, RecordBatch)]
    tasks = pa.RecordBatch.from_pylist(wanted)
    out = {}
    for reader in ("compiled", "pure-python"):
        monkeypatch.setattr(core, "READER", reader)
        out[reader] = pa.Table.from_batches(list(read.record_rows(iter([tasks]))), schema=S.RECORD_ROWS).to_pylist()
    assert out["compiled"] == out["pure-python"] and len(out["compiled"]) > 100


@compiled
def test_scan_segment_rows_identical(monkeypatch: pytest.MonkeyPatch) -> None:
    """spark/read.py's segment_rows with each reader; its bulk batch rows hold each batch's header fields."""
    import pyarrow as pa

    from kforensics.spark import read
    from kforensics.spark import schemas as S

    paths = [p for p in DUMP_FILES if "broker-1" in str(p)]
    tasks = pa.RecordBatch.from_pylist([{"task_kind": "segment", "broker": "b1", "topic": p.parent.name[:-2],
                                         "partition": 0, "path": str(p), "base_offset": int(p.name[:20]),
                                         "headers_only": True} for p in paths], schema=S.TASKS)
    out = {}
    for reader in ("compiled", "pure-python"):
        monkeypatch.setattr(core, "READER", reader)
        rows = pa.Table.from_batches(list(read.segment_rows(iter([tasks]))), schema=S.SEGMENT_ROWS).to_pylist()
        out[reader] = sorted(rows, key=lambda r: (r["row_kind"], r["file"], r["position"] or -1, r["kind"] or ""))
    assert out["compiled"] == out["pure-python"]
    batch_rows = [r for r in out["compiled"] if r["row_kind"] == "batch"]
    expected = []
    for p in paths:
        with open_log(p, compiled=False) as log:
            for b in log.batches():
                if isinstance(b, RecordBatch):
                    rec = log.control_record(b) if b.is_control and b.magic == 2 else None
                    expected.append({**{name: getattr(b, name) for name, _ in S.BATCH_FIELDS
                                        if name not in ("file", "segment_base_offset", "control_type",
                                                        "coordinator_epoch")},
                                     "file": str(p), "segment_base_offset": int(p.name[:20]),
                                     "control_type": rec.control_type if rec else None,
                                     "coordinator_epoch": rec.coordinator_epoch if rec else None})
    names = [name for name, _ in S.BATCH_FIELDS]
    assert sorted(({n: r[n] for n in names} for r in batch_rows), key=lambda r: (r["file"], r["position"])) == sorted(
        expected, key=lambda r: (r["file"], r["position"]))


# --- the zipped package (Spark's addPyFile) ------------------------------------------------------------------

_ZIP_CHECK = """
import sys
if sys.argv[2] == "no-core":
    import importlib.abc

    class NoCore(importlib.abc.MetaPathFinder):  # as on an executor whose environment lacks kforensics
        def find_spec(self, name, path=None, target=None):
            if name.rpartition(".")[2] in ("_crc", "_reader", "_columns", "_dump_lines"):
                raise ImportError("no compiled core here")
            return None

    sys.meta_path.insert(0, NoCore())
sys.path.insert(0, sys.argv[1])
from kforensics.parsers import core, record_batch
from kforensics.parsers.record_batch import RecordBatch, open_log
n = 0
with open_log(sys.argv[3]) as log:
    for b in log.batches():
        if isinstance(b, RecordBatch):
            n += sum(1 for _ in log.records(b))
print(core.READER, record_batch.__file__.startswith(sys.argv[1]), n)
"""


@pytest.mark.parametrize("where", ["same-environment", "no-core"])
def test_zipped_package_finds_the_installed_core_or_falls_back(tmp_path: Path, where: str) -> None:
    """The zip ships no .so: its reader loads the installed package's core when there is one (executors started
    from the same environment) and falls back to pure Python cleanly when there is none."""
    from kforensics.spark.jobs import package_zip

    archive = package_zip(str(tmp_path / "kforensics.zip"))
    segment = SAMPLE_LOGS / "broker-1" / "payments-0" / "00000000000000000000.log"
    env = {k: v for k, v in os.environ.items() if k != "KFORENSICS_PURE_PYTHON"}
    out = subprocess.run([sys.executable, "-c", _ZIP_CHECK, archive, where, str(segment)], capture_output=True,
                         text=True, env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    reader, from_zip, records = out.stdout.split()
    with open_log(segment) as log:
        expected = sum(1 for b in log.batches() if isinstance(b, RecordBatch) for _ in log.records(b))
    assert from_zip == "True" and int(records) == expected > 0
    if where == "no-core" or core.COMPILED is None:
        assert reader == "pure-python"
    else:
        assert reader == "compiled"


#: Every character kforensics.render.json_line writes as a \u escape, and its neighbours that it must not.
HIDDEN_AND_NEIGHBOURS = ("\x7f\x80\x9b\x9f\xa0\xad\xae\u061b\u061c\u180e\u180f\u200a\u200b\u200c\u200d\u200e\u200f"
                         "\u2027\u2028\u202e\u202f\u205f\u2060\u206f\u2070\ufeff\ufff8\ufff9\ufffb\ufffc\x1b\x00\n")


@compiled
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
# A header key is a Java String written as UTF-8: a lone surrogate cannot be one (the key and value bytes still carry it).
@given(text=st.text(st.sampled_from(HIDDEN_AND_NEIGHBOURS) | st.characters(exclude_categories=("Cs",)), max_size=12))
def test_dump_json_escapes_what_a_terminal_obeys_identically(text: str, tmp_path_factory: pytest.TempPathFactory,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The compiled JSON lines escape exactly the characters json_line escapes (issue 42), in keys, values, header
    keys and the file name, and the decoded strings are the exact ones."""
    import json

    from kforensics.render import json_line

    encoded = text.encode("utf-8")
    key = encoded + b"\xed\xa0\x80"  # a lone surrogate's bytes: not UTF-8
    builder = DefaultRecordBatchBuilder(2, 0, False, 1, 0, 0, 1 << 30)
    builder.append(0, timestamp=1, key=key, value=encoded + b"!", headers=[(text, encoded)])
    folder = tmp_path_factory.mktemp("json") / ("d" + "".join(c for c in text if c not in "/\x00"))[:200]
    folder.mkdir()
    path = folder / "00000000000000000000.log"
    path.write_bytes(bytes(builder.build()))
    args = ["--json", "--deep-iteration", "--print-data-log", str(path)]
    fast, pure = _dump(monkeypatch, "compiled", args), _dump(monkeypatch, "pure-python", args)
    assert fast == pure
    batch, record = (json.loads(line) for line in fast[1].splitlines())
    assert batch["file"] == str(path) and record["header_keys"] == [text]
    assert record["key"] == key.decode("utf-8", "replace") or record["key"].startswith("base64:")
    for line in fast[1].splitlines():
        assert line == json_line(json.loads(line), separators=(",", ":"))


# --- find's search inside records (RecordMatcher) ------------------------------------------------------------

KEYS = [b"a", b"b", b"", b"\xff\x00", b"order-1"]
HEADER_NAMES = ["h", "H", "trace-id", "\ufffd", "h\ufffd"]
NEEDLES = [b"", b"a", b"ab", b"\x00", b"zz-not-there"]


@st.composite
def searchable_batches(draw: st.DrawFn) -> bytes:
    """v2 batches of kafka-python, any codec, whose keys, header names and values come from small sets, so that
    queries over the same sets match some records and miss others."""
    out = bytearray()
    offset = 0
    for _ in range(draw(st.integers(1, 3))):
        builder = DefaultRecordBatchBuilder(magic=2, compression_type=draw(st.sampled_from([0, 1, 2, 3, 4])),
                                            is_transactional=False, producer_id=1, producer_epoch=0,
                                            base_sequence=offset, batch_size=1 << 30)
        for i in range(draw(st.integers(0, 10))):
            builder.append(i, timestamp=draw(st.integers(0, 50)), key=draw(st.none() | st.sampled_from(KEYS)),
                           value=draw(st.none() | st.binary(max_size=6).map(lambda v: v.replace(b"\x01", b"a"))),
                           headers=draw(st.lists(st.tuples(st.sampled_from(HEADER_NAMES),
                                                           st.none() | st.sampled_from([b"", b"v", b"a"])),
                                                 max_size=3)))
        batch = bytearray(builder.build())
        struct.pack_into(">q", batch, 0, offset)
        offset += 100
        out += batch
    return bytes(out)


queries = st.fixed_dictionaries({
    "keys": st.none() | st.lists(st.sampled_from(KEYS), min_size=1, max_size=3),
    "header_name": st.none() | st.sampled_from(HEADER_NAMES),
    "header_value": st.none() | st.sampled_from([b"", b"v", b"a"]),
    "value_contains": st.none() | st.sampled_from(NEEDLES),
    "from_time": st.none() | st.integers(-1, 50),
    "to_time": st.none() | st.integers(-1, 50),
})


def _expected_flags(q: dict, watched: set[bytes], r: Record) -> int:
    """The query as the docs say it, on a record the reference decoded: every condition given holds (MATCHED, 1);
    the key is watched (WATCHED, 2)."""
    matched = ((q["keys"] is None or r.key in q["keys"])
               and (q["value_contains"] is None or (r.value is not None and q["value_contains"] in r.value))
               and (q["from_time"] is None or r.timestamp >= q["from_time"])
               and (q["to_time"] is None or r.timestamp <= q["to_time"])
               and (q["header_name"] is None or any(
                   name == q["header_name"] and (q["header_value"] is None or v == q["header_value"])
                   for name, v in r.headers)))
    return matched | (2 if r.key is not None and r.key in watched else 0)


def _matches(data: bytes, q: dict, watched: list[bytes], compiled_reader: bool) -> list[object]:
    """Every v2 data batch's (hits, problem), and every legacy record's flags, of one reader's RecordMatcher."""
    matcher = core.implementation(compiled_reader).RecordMatcher(**q)
    for key in watched:
        matcher.watch(key)
    out: list[object] = []
    with open_log_bytes(data, "seg.log", compiled=compiled_reader) as log:
        for n, b in enumerate(log.batches()):
            if not isinstance(b, RecordBatch) or (b.magic == 2 and b.is_control):
                continue
            if b.magic != 2:
                out += [matcher.flags(r.key, r.value, r.headers, r.timestamp) for r in log.records(b)
                        if isinstance(r, Record)]
                continue
            section = log.records_section(b)
            if isinstance(section, Finding):
                continue
            if n % 3 == 2 and watched:  # the watched set changes between batches
                matcher.unwatch(watched[0])
            out.append(matcher.match_v2(*section, b, Record, n % 4 != 3))
            out.append(matcher.watched())
    return out


@compiled
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=searchable_batches() | mutated(), q=queries, watched=st.lists(st.sampled_from(KEYS), max_size=3))
def test_record_matcher_identical(data: bytes, q: dict, watched: list[bytes]) -> None:
    """The compiled RecordMatcher against the reference, on kafka-python's batches and mutated segments: the same
    hits (flags and records) and problems; and the reference against the query as documented, record by record."""
    pure = _matches(data, q, watched, False)
    assert _matches(data, q, watched, True) == pure
    with open_log_bytes(data, "seg.log", compiled=False) as log:
        for b in log.batches():
            if not isinstance(b, RecordBatch) or b.magic != 2 or b.is_control:
                continue
            section = log.records_section(b)
            if isinstance(section, Finding):
                continue
            records = [r for r in log.records(b) if isinstance(r, Record)]
            hits, _problem = core.PURE.RecordMatcher(**q).match_v2(*section, b, Record)
            assert hits == [(f, r) for r in records if (f := _expected_flags(q, set(), r))]


@compiled
def test_record_matcher_header_name_as_decoded() -> None:
    """A header name that is not UTF-8 is matched as the decoder shows it (each undecodable byte as U+FFFD), by
    both readers; a key set grown past its table's first size, and keys removed, hold in both."""
    builder = DefaultRecordBatchBuilder(2, 0, False, 1, 0, 0, 1 << 30)
    builder.append(0, timestamp=1, key=b"k", value=b"v", headers=[("h\u00e9", b"x")])
    batch = bytearray(builder.build())
    at = batch.index("h\u00e9".encode())
    batch[at + 2] = 0xFF  # h, 0xc3, 0xff: not UTF-8
    data = bytes(batch)
    for reader in (True, False):
        with open_log_bytes(data, "seg.log", compiled=reader) as log:
            (b,) = list(log.batches(verify_crc=False))
            section = log.records_section(b)
            impl = core.implementation(reader)
            hits, problem = impl.RecordMatcher(header_name="h\ufffd\ufffd").match_v2(*section, b, Record)
            assert problem is None and [r.headers for _, r in hits] == [(("h\ufffd\ufffd", b"x"),)]
            assert impl.RecordMatcher(header_name="h\u00e9").match_v2(*section, b, Record)[0] == []
            many = impl.RecordMatcher(keys=[b"%d" % i for i in range(1000)] + [b"k"])
            for i in range(1000):
                many.watch(b"w%d" % i)
            for i in range(0, 1000, 2):
                many.unwatch(b"w%d" % i)
            assert many.watched() == 500 and many.match_v2(*section, b, Record)[0][0][0] == 1
            many.watch(b"k")
            assert many.match_v2(*section, b, Record)[0][0][0] == 3
            many.unwatch(b"k")
            assert many.match_v2(*section, b, Record, False)[0] == []
