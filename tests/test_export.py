"""`kforensics export`: records out as jsonl, Parquet and kcat input, checked against kafka-python's decoding (an
independent reader), a consumer's read_committed view, and the output-safety rules."""

from __future__ import annotations

import importlib.util
import json
import struct
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from conftest import SAMPLE_LOGS
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.memory_records import MemoryRecords

from kforensics.cli import main
from kforensics.export import CONSOLE_PRODUCER_PROPERTIES, RowBuffer, decode_jsonl_bytes

EXPECTED = json.loads((SAMPLE_LOGS / "EXPECTED.json").read_text())
_spec = importlib.util.spec_from_file_location("sample_generate", SAMPLE_LOGS / "generate.py")
generate = sys.modules.setdefault("sample_generate", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(generate)  # type: ignore[union-attr]


def _oracle(pdir: Path) -> list[tuple]:
    """(offset, timestamp, key, value, headers) of every data record kafka-python decodes from the partition's
    segments (batches whose CRC holds; control batches left out)."""
    out = []
    for seg in sorted(pdir.glob("*.log")):
        reader = MemoryRecords(seg.read_bytes())
        while reader.has_next():
            batch = reader.next_batch()
            if not batch.validate_crc() or (batch.magic == 2 and batch.is_control_batch):
                continue
            for r in batch:
                ts = -1 if r.timestamp is None else r.timestamp
                out.append((r.offset, ts, r.key, r.value, [(k, v) for k, v in (r.headers or [])]))
    return out


def _export(args: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["export", *args])
    return result.exit_code, result.output


def _jsonl_rows(path: Path) -> list[tuple]:
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        rows.append((r["offset"], r["timestamp"], decode_jsonl_bytes(r["key"], r["key_encoding"]),
                     decode_jsonl_bytes(r["value"], r["value_encoding"]),
                     [(h["key"], decode_jsonl_bytes(h["value"], h["encoding"])) for h in r["headers"]]))
    return rows


def _parquet_rows(path: Path) -> list[tuple]:
    return [(r["offset"], r["timestamp"], r["key"], r["value"], [(h["key"], h["value"]) for h in r["headers"]])
            for r in pq.read_table(path).to_pylist()]


@pytest.mark.parametrize("name", ["orders-0", "legacy-0", "payments-0", "damaged-0", "events-0"])
def test_jsonl_and_parquet_equal_kafka_python(tmp_path: Path, name: str) -> None:
    """Every codec (orders-0: none, gzip, snappy xerial and raw, lz4, zstd; legacy-0: magic 0/1 wrappers), headers,
    null keys; damaged-0's corrupt batch is left out and reported (exit code 1)."""
    pdir = SAMPLE_LOGS / "broker-1" / name
    topic = name.rsplit("-", 1)[0]
    expected = _oracle(pdir)
    assert expected
    for fmt, read in (("jsonl", _jsonl_rows), ("parquet", _parquet_rows)):
        out = tmp_path / f"out.{fmt}"
        code, output = _export([f"broker-1={SAMPLE_LOGS / 'broker-1'}", "--topic", topic, "--partition", "0",
                                "--format", fmt, "--out", str(out)])
        damaged = name == "damaged-0"
        assert code == (1 if damaged else 0), output
        assert read(out) == expected, fmt
        assert f"{len(expected)} records written" in output
        if damaged:
            (bad,) = [a for a in EXPECTED["brokers"]["broker-1"]["partitions"][name]["anomalies"]
                      if a["kind"] == "corrupt_crc"]
            assert f"{bad['file']}:{bad['position']}: corrupt_crc" in output
    if name == "orders-0":
        assert set(EXPECTED["brokers"]["broker-1"]["partitions"][name]["codecs"]) == {"none", "gzip", "snappy", "lz4",
                                                                                       "zstd"}
        assert any(h for *_, h in expected) and any(k is None for _, _, k, _, _ in expected)


def test_fields_of_a_record(tmp_path: Path) -> None:
    out = tmp_path / "p.parquet"
    assert _export([str(SAMPLE_LOGS / "broker-1"), "--topic", "payments", "--partition", "0", "--offsets", "8:8",
                    "--format", "parquet", "--out", str(out)])[0] == 0
    (row,) = pq.read_table(out).to_pylist()
    batch = next(b for b in EXPECTED["brokers"]["broker-1"]["partitions"]["payments-0"]["batches"]
                 if b["base_offset"] <= 8 <= b["last_offset"])
    assert (row["topic"], row["partition"], row["offset"], row["producer_id"], row["producer_epoch"],
            row["sequence"], row["leader_epoch"], row["transaction"], row["position"]) == (
        "payments", 0, 8, batch["producer_id"], batch["producer_epoch"], batch["base_sequence"] + 8 - batch["base_offset"],
        batch["partition_leader_epoch"], "ABORT", batch["position"])
    assert row["file"].endswith(f"payments-0/{batch['segment']}") and row["timestamp_type"] == "CreateTime"


def _visible(facts: dict, records: list[tuple], pids: dict[int, int]) -> list[int]:
    """The offsets a read_committed consumer returns, from the generator's own transaction bookkeeping."""
    aborted = [(t["producer_id"], t["first_offset"], t["marker_offset"]) for t in facts["transactions"]
               if t["outcome"] == "ABORT" and t["first_offset"] is not None]
    lso = min((t["first_offset"] for t in facts["transactions"] if t["outcome"] == "OPEN"), default=None)
    return [o for o, *_ in records if (lso is None or o < lso)
            and not any(pids.get(o) == pid and first <= o < marker for pid, first, marker in aborted)]


def test_read_committed_on_payments_equals_a_consumer(tmp_path: Path) -> None:
    facts = EXPECTED["brokers"]["broker-1"]["partitions"]["payments-0"]
    pids = {o: b["producer_id"] for b in facts["batches"] if b["is_transactional"] and not b["is_control"]
            for o in range(b["base_offset"], b["last_offset"] + 1)}
    out = tmp_path / "c.jsonl"
    assert _export([str(SAMPLE_LOGS / "broker-1"), "--topic", "payments", "--partition", "0", "--isolation",
                    "read_committed", "--out", str(out)])[0] == 0
    got = [r[0] for r in _jsonl_rows(out)]
    everything = _oracle(SAMPLE_LOGS / "broker-1" / "payments-0")
    assert got == _visible(facts, everything, pids)
    assert len(got) < len(everything)


def _txn_batch(pid: int, base: int, n: int, *, transactional: bool = True) -> bytes:
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=transactional,
                                        producer_id=pid if transactional else -1, producer_epoch=0 if transactional
                                        else -1, base_sequence=0 if transactional else -1, batch_size=1 << 30)
    for i in range(n):
        builder.append(i, timestamp=1_700_000_000_000 + base + i, key=b"k%d" % (base + i), value=b"v", headers=[])
    data = bytearray(builder.build())
    struct.pack_into(">q", data, 0, base)
    return bytes(data)


def _marker(pid: int, offset: int, commit: bool) -> bytes:
    data = generate.control_batch(pid, 0, commit, 7, 1_700_000_000_000 + offset)
    struct.pack_into(">q", data, 0, offset)
    return bytes(data)


def test_read_committed_takes_aborted_ranges_from_the_markers_of_every_segment(tmp_path: Path) -> None:
    """Producer 10's transaction starts in segment 0 and is aborted by a marker in segment 15; producer 11's is
    committed there; producer 10 then opens a transaction that never ends (the last stable offset, 17)."""
    pdir = tmp_path / "logs" / "t-0"
    pdir.mkdir(parents=True)
    (pdir / f"{0:020d}.log").write_bytes(_txn_batch(10, 0, 5) + _txn_batch(0, 5, 5, transactional=False)
                                         + _txn_batch(11, 10, 5))
    (pdir / f"{15:020d}.log").write_bytes(_marker(10, 15, False) + _marker(11, 16, True) + _txn_batch(10, 17, 3)
                                          + _txn_batch(0, 20, 5, transactional=False))
    committed, uncommitted = tmp_path / "c.parquet", tmp_path / "u.parquet"
    for isolation, out in (("read_committed", committed), ("read_uncommitted", uncommitted)):
        assert _export([str(tmp_path / "logs"), "--topic", "t", "--partition", "0", "--isolation", isolation,
                        "--format", "parquet", "--out", str(out)])[0] == 0
    assert [r["offset"] for r in pq.read_table(committed).to_pylist()] == list(range(5, 15))
    rows = pq.read_table(uncommitted).to_pylist()
    assert [r["offset"] for r in rows] == [*range(0, 15), *range(17, 25)]
    outcome = {r["offset"]: r["transaction"] for r in rows}
    assert [outcome[o] for o in (0, 5, 10, 17, 20)] == ["ABORT", None, "COMMIT", "OPEN", None]


def _kcat_produces(data: bytes, delimiter: bytes = b"\x1e", key_delimiter: bytes = b"\x1f",
                   null: bool = True) -> list[tuple[bytes | None, bytes | None]]:
    """The (key, value) of each message `kcat -P -D <delimiter> -K <key_delimiter> [-Z]` produces from `data`,
    following kcat.c (1.7.1, its producer loop) rather than kforensics: the input is cut at every message
    delimiter (what follows the last one at the end of the input is a message too), an empty message is skipped,
    the first key delimiter (binary-safe search) splits key from value, and without one the whole message is the
    value and there is no key; with -Z an empty key or value found around the key delimiter is produced as null."""
    messages, start = [], 0
    while start < len(data):
        end = data.find(delimiter, start)
        end = len(data) if end < 0 else end
        messages.append(data[start:end])
        start = end + len(delimiter)
    out = []
    for message in messages:
        if not message:
            continue
        cut = message.find(key_delimiter)
        if cut < 0:
            out.append((None, message))
            continue
        key, value = message[:cut], message[cut + len(key_delimiter):]
        out.append((None if null and not key else key, None if null and not value else value))
    return out


def test_the_kcat_oracle_follows_kcat() -> None:
    assert _kcat_produces(b"k\x1fv\x1e\x1fv2\x1ek3\x1f\x1e\x1eno-key\x1etail") == [
        (b"k", b"v"), (None, b"v2"), (b"k3", None), (None, b"no-key"), (None, b"tail")]
    assert _kcat_produces(b"\x1f\x1e", null=False) == [(b"", b"")]


def test_kcat_file_gives_back_the_keys_and_values_and_says_what_kcat_cannot_carry(tmp_path: Path) -> None:
    out = tmp_path / "orders.kcat"
    code, output = _export([str(SAMPLE_LOGS / "broker-1"), "--topic", "orders", "--partition", "0", "--format",
                            "kcat", "--out", str(out)])
    expected = _oracle(SAMPLE_LOGS / "broker-1" / "orders-0")
    assert _kcat_produces(out.read_bytes()) == [(k or None, v or None) for _, _, k, v, _ in expected]
    with_headers = sum(1 for *_, h in expected if h)
    assert with_headers and code == 1
    assert f"{with_headers} records have headers" in output
    assert "kcat -P -b BROKER:9092 -t orders -p 0 -K '\\x1f' -D '\\x1e' -Z -l " + str(out) in output
    # a partition without headers re-produces whole: exit code 0
    code, output = _export([str(SAMPLE_LOGS / "broker-1"), "--topic", "legacy", "--partition", "0", "--format",
                            "kcat", "--out", str(tmp_path / "legacy.kcat")])
    assert code == 0, output


def _line_message_reader(data: bytes) -> list[tuple[bytes | None, bytes | None, list[tuple[str, bytes | None]]]]:
    """The records kafka-console-producer makes of a file with CONSOLE_PRODUCER_PROPERTIES, following its
    LineMessageReader (Kafka 3.2 to 4.1) step by step: Java's readLine (a line ends at \\n, \\r or \\r\\n), the
    first headers delimiter, then the first key separator after it (missing: an error, as without ignore.error),
    the null marker for a whole field, headers split by a regex (Pattern.split drops trailing empty strings)."""
    import re

    p = CONSOLE_PRODUCER_PROPERTIES
    null = p["null.marker"]
    records = []
    for number, line in enumerate(re.split(r"\r\n|\r|\n", data.decode("utf-8"))[:-1], 1):
        end_of_headers = line.index(p["headers.delimiter"])  # ValueError: "No headers delimiter found"
        headers_text = line[:end_of_headers]
        start = end_of_headers + len(p["headers.delimiter"])
        end_of_key = line.index(p["key.separator"], start)
        key, value = line[start:end_of_key], line[end_of_key + len(p["key.separator"]):]
        headers = []
        if headers_text != null:
            pairs = re.split(p["headers.separator"], headers_text)
            while pairs and pairs[-1] == "":
                pairs.pop()
            for pair in pairs:
                i = pair.index(p["headers.key.separator"])  # "No header key separator found", line `number`
                name, header_value = pair[:i], pair[i + len(p["headers.key.separator"]):]
                assert name != null, f"line {number}: a header key equal to the null marker is refused"
                headers.append((name, None if header_value == null else header_value.encode("utf-8")))
        records.append((None if key == null else key.encode("utf-8"),
                        None if value == null else value.encode("utf-8"), headers))
    return records


def _produce(records: list[tuple[bytes | None, bytes | None, list]], path: Path) -> None:
    """A producer's batch of `records` (kafka-python's writer) as the segment at `path`."""
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                        producer_epoch=-1, base_sequence=-1, batch_size=1 << 30)
    for i, (key, value, headers) in enumerate(records):
        builder.append(i, timestamp=1_700_000_000_000 + i, key=key, value=value, headers=headers)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(bytes(builder.build()))


def test_console_producer_file_re_produces_keys_values_and_headers(tmp_path: Path) -> None:
    """orders-0 exported for kafka-console-producer, read back as its LineMessageReader does and produced into a
    fresh segment: the fresh segment's records have the original keys, values and headers."""
    out = tmp_path / "orders.txt"
    code, output = _export([str(SAMPLE_LOGS / "broker-1"), "--topic", "orders", "--partition", "0", "--format",
                            "console-producer", "--out", str(out)])
    assert code == 0, output
    assert "--property parse.headers=true" in output and "--property null.marker=$'\\x1a'" in output
    expected = [(k, v, h) for _, _, k, v, h in _oracle(SAMPLE_LOGS / "broker-1" / "orders-0")]
    read_back = _line_message_reader(out.read_bytes())
    assert read_back == expected and any(h for *_, h in expected) and any(k is None for k, *_ in expected)
    _produce(read_back, tmp_path / "fresh" / "orders-0" / f"{0:020d}.log")
    again = tmp_path / "again.jsonl"
    assert _export([str(tmp_path / "fresh"), "--topic", "orders", "--partition", "0", "--out", str(again)])[0] == 0
    assert [(k, v, h) for _, _, k, v, h in _jsonl_rows(again)] == expected


def test_console_producer_file_keeps_null_apart_from_empty_and_leaves_out_what_it_cannot_frame(
        tmp_path: Path) -> None:
    framable = [
        (None, b"tombstone-key-null", []), (b"", b"", []), (b"k", None, []),
        (b"k", b"v", [("h", None), ("empty", b""), ("", b"nameless"), ("h", b"twice")]),
        ("caf\u00e9".encode(), "\u2603 with: colons, commas\tand tabs".encode(), [("k:v", b"a,b")]),
    ]
    unframable = [(b"k", b"\xff\xfe not utf-8", []), (b"k", b"two\nlines", []), (b"k\r", b"v", []),
                  (b"k", b"v", [("h", b"\x1f")]), (b"\x1a", b"the null marker itself", [])]
    _produce(framable + unframable, tmp_path / "logs" / "t-0" / f"{0:020d}.log")
    out = tmp_path / "t.txt"
    code, output = _export([str(tmp_path / "logs"), "--topic", "t", "--partition", "0", "--format",
                            "console-producer", "--out", str(out)])
    assert code == 1
    assert _line_message_reader(out.read_bytes()) == framable
    left_out = [line for line in output.splitlines() if line.startswith("left out: offset ")]
    assert [int(line.split()[3].rstrip(":")) for line in left_out] == [5, 6, 7, 8, 9]
    assert "not UTF-8" in left_out[0] and "line end" in left_out[1]


def test_never_overwrites_what_it_did_not_write_nor_writes_into_its_inputs(tmp_path: Path) -> None:
    args = [str(SAMPLE_LOGS / "broker-1"), "--topic", "orders", "--partition", "0", "--offsets", "0:9"]
    foreign = tmp_path / "notes.jsonl"
    foreign.write_text("mine\n")
    code, output = _export([*args, "--out", str(foreign)])
    assert code == 2 and "never overwrites" in output and foreign.read_text() == "mine\n"
    ours = tmp_path / "ours.jsonl"
    assert _export([*args, "--out", str(ours)])[0] == 0
    assert _export([*args[:-1], "10:19", "--out", str(ours)])[0] == 0  # an earlier export of ours: replaced
    assert [r[0] for r in _jsonl_rows(ours)] == list(range(10, 20))
    inverted = _export([*args[:-1], "19:10", "--out", str(ours)])  # one rule with dump's (test_dump_cli.py)
    assert inverted[0] == 2 and "start is after end" in inverted[1]
    ours.write_text(ours.read_text() + "edited\n")  # changed since: no longer what we wrote
    assert _export([*args, "--out", str(ours)])[0] == 2
    code, output = _export([*args, "--out", str(SAMPLE_LOGS / "broker-1" / "x.jsonl")])
    assert code == 2 and "never writes into the directories it reads" in output
    assert not (SAMPLE_LOGS / "broker-1" / "x.jsonl").exists()
    assert [p.name for p in tmp_path.iterdir() if "tmp" in p.name] == []


def _from_finding(full_scan: Path, tmp_path: Path, monkeypatch, kind: str, broker: str, partition: str,
                  span: str) -> tuple[Path, int, int]:
    """`export --from-finding OUT:kind` of the session's scan: the file written and the planted [first, last]."""
    from conftest import REPO

    monkeypatch.chdir(REPO)  # the scan's manifest names its inputs as given
    out = tmp_path / f"{kind}.jsonl"
    code, output = _export(["--from-finding", f"{full_scan}:{kind}", "--out", str(out)])
    assert code == 0, output
    planted = next(a for a in EXPECTED["brokers"][broker]["partitions"][partition]["anomalies"] if a["kind"] == kind)
    first, last = planted[span]
    return out, first, last


def test_from_finding_exports_what_a_restart_would_discard(full_scan: Path, tmp_path: Path, monkeypatch) -> None:
    out, first, last = _from_finding(full_scan, tmp_path, monkeypatch, "restart_would_truncate", "broker-3",
                                     "unflushed-0", "offsets_discarded")
    assert [r[0] for r in _jsonl_rows(out)] == list(range(first, last + 1))


def test_from_finding_exports_what_a_diverged_replica_would_lose(full_scan: Path, tmp_path: Path,
                                                                  monkeypatch) -> None:
    """replica_divergence names the offsets its replica (`lost_on`) holds and will truncate when it follows the
    winner: exported from that replica, they are its records, not the winner's."""
    out, first, last = _from_finding(full_scan, tmp_path, monkeypatch, "replica_divergence", "broker-1",
                                     "inventory-0", "lost_offsets")
    rows = _jsonl_rows(out)
    mine = [r for r in _oracle(SAMPLE_LOGS / "broker-1" / "inventory-0") if first <= r[0] <= last]
    theirs = [r for r in _oracle(SAMPLE_LOGS / "broker-2" / "inventory-0") if first <= r[0] <= last]
    assert rows == mine and [r[0] for r in rows] == list(range(first, last + 1)) and rows != theirs
    assert json.loads(out.with_name(out.name + ".kforensics-export.json").read_text())["broker"] == "broker-1"


def test_a_delete_dir_is_exported_only_when_asked(tmp_path: Path) -> None:
    """Kafka's -delete (and -stray) copies may hold the only copy of their data: --dir-state reads them."""
    args = [str(SAMPLE_LOGS / "broker-2"), "--topic", "scratch", "--partition", "0"]
    code, output = _export([*args, "--out", str(tmp_path / "live.jsonl")])
    assert code == 2 and "no scratch-0 partition dir" in output
    out = tmp_path / "deleted.jsonl"
    code, output = _export([*args, "--dir-state", "delete", "--out", str(out)])
    assert code == 0, output
    (deleted,) = SAMPLE_LOGS.glob("broker-2/scratch-0.*-delete")
    assert _jsonl_rows(out) == _oracle(deleted) and len(_jsonl_rows(out)) == 12
    assert json.loads((tmp_path / "deleted.jsonl.kforensics-export.json").read_text())["dir"] == str(deleted)


def test_export_buffers_are_bounded_in_bytes_as_well_as_rows(tmp_path: Path, monkeypatch) -> None:
    """Large records flush a Parquet row group before ROW_GROUP_ROWS of them are held."""
    from kforensics.export import writers

    buffer = RowBuffer(max_rows=1000, max_bytes=100)
    row = {"key": b"k" * 10, "value": b"v" * 30, "headers": [{"key": "h", "value": b"x" * 9}]}
    assert [buffer.add(row) for _ in range(2)] == [False, True] and buffer.bytes == 100
    assert len(buffer.take()) == 2 and buffer.bytes == 0 and buffer.rows == []
    big = [(f"k{i}".encode(), bytes([i]) * 50_000, []) for i in range(9)]
    _produce(big, tmp_path / "logs" / "big-0" / f"{0:020d}.log")
    monkeypatch.setattr(writers, "ROW_GROUP_BYTES", 120_000)  # two 50 KB records and a part of a third
    out = tmp_path / "big.parquet"
    assert _export([str(tmp_path / "logs"), "--topic", "big", "--partition", "0", "--format", "parquet", "--out",
                    str(out)])[0] == 0
    groups = pq.ParquetFile(out).metadata
    assert [groups.row_group(i).num_rows for i in range(groups.num_row_groups)] == [3, 3, 3]
    assert [(k, v) for _, _, k, v, _ in _parquet_rows(out)] == [(k, v) for k, v, _ in big]


def test_a_single_partition_export_does_not_import_pyspark(tmp_path: Path) -> None:
    code = ("import sys\nfrom kforensics.cli import main\n"
            f"try:\n    main(['export', {str(SAMPLE_LOGS / 'broker-1')!r}, '--topic', 'orders', '--partition', '0', "
            f"'--out', {str(tmp_path / 'o.jsonl')!r}])\nexcept SystemExit as e:\n    assert e.code == 0, e.code\n"
            "assert 'pyspark' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


def test_a_whole_topic_runs_on_spark_across_brokers(spark, tmp_path: Path) -> None:
    out = tmp_path / "orders-all"
    code, output = _export([f"broker-1={SAMPLE_LOGS / 'broker-1'}", f"broker-2={SAMPLE_LOGS / 'broker-2'}",
                            "--topic", "orders", "--format", "parquet", "--out", str(out)])
    assert code == 0, output
    rows = pq.read_table(out).to_pylist()
    for broker in ("broker-1", "broker-2"):
        ours = sorted((r["offset"], r["timestamp"], r["key"], r["value"], [(h["key"], h["value"]) for h in r["headers"]])
                      for r in rows if r["broker"] == broker)
        assert ours == _oracle(SAMPLE_LOGS / broker / "orders-0"), broker
    assert (out / "_kforensics-export.json").exists()
    assert _export(["x", "--topic", "orders", "--out", str(tmp_path / "a.jsonl")])[0] == 2  # jsonl: --partition
