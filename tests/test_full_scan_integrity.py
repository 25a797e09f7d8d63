"""Full mode decodes every record of every batch and reports what `dump --deep-iteration` reports.

A corrupt segment is built here, batch by batch (kafka-python writes the batches, then each is damaged the way
disks and buggy clients damage them, most with their CRC recomputed so that only the record decoder can
tell): a gzip payload cut short, a truncated snappy payload, a zstd payload cut short under a stale CRC, a
record whose length is impossible, a batch declaring more records than it holds, one with bytes after its
records, and a codec id that does not exist. Producers of every kind: none, idempotent, transactional.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import crc32c
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from kforensics.cli import main
from kforensics.parsers.findings import Finding
from kforensics.parsers.record_batch import RecordBatch, open_log

DECODER_KINDS = {"decompression_failed", "unknown_codec", "invalid_record", "record_count_mismatch"}
NONE, GZIP, SNAPPY, LZ4, ZSTD = range(5)


def _batch(base_offset: int, n: int, *, codec: int = NONE, pid: int = -1, epoch: int = -1, seq: int = -1,
           transactional: bool = False) -> bytearray:
    from kafka.record.default_records import DefaultRecordBatchBuilder

    builder = DefaultRecordBatchBuilder(2, codec, transactional, pid, epoch, seq, 1 << 30)
    for i in range(n):
        builder.append(i, timestamp=1_763_632_800_000 + base_offset + i, key=f"key-{base_offset + i}".encode(),
                       value=f"value {base_offset + i} ".encode() * 8, headers=[])
    out = bytearray(builder.build())
    struct.pack_into(">q", out, 0, base_offset)
    return out


def _fix_crc(batch: bytearray) -> bytearray:
    struct.pack_into(">I", batch, 17, crc32c.crc32c(bytes(batch[21:])))
    return batch


def _cut(batch: bytearray, keep_payload: int) -> bytearray:
    """The batch with its records section cut to `keep_payload` bytes (the length field follows)."""
    out = bytearray(batch[:61 + keep_payload])
    struct.pack_into(">i", out, 8, len(out) - 12)
    return out


def corrupt_segment() -> tuple[bytes, dict[int, str]]:
    """The segment's bytes and, by byte position, the decoder finding planted there."""
    planted: list[tuple[bytearray, str | None]] = []
    planted.append((_batch(0, 5, pid=10, epoch=0, seq=0), None))
    gz = _batch(5, 5, codec=GZIP)  # no producer id
    planted.append((_fix_crc(_cut(gz, (len(gz) - 61) // 2)), "decompression_failed"))
    sn = _batch(10, 5, codec=SNAPPY, pid=10, epoch=0, seq=5)
    planted.append((_fix_crc(_cut(sn, len(sn) - 61 - 7)), "decompression_failed"))
    zs = _batch(15, 5, codec=ZSTD, pid=11, epoch=0, seq=0)
    planted.append((_cut(zs, (len(zs) - 61) // 2), "decompression_failed"))  # and corrupt_crc: its CRC is stale
    bad_length = _batch(20, 5, pid=20, epoch=0, seq=0, transactional=True)
    bad_length[61] = 0x01  # record 0's length: zigzag -1
    planted.append((_fix_crc(bad_length), "invalid_record"))
    short = _batch(25, 4, pid=10, epoch=0, seq=10)
    struct.pack_into(">i", short, 57, 5)  # declares 5 records, holds 4
    planted.append((_fix_crc(short), "record_count_mismatch"))
    planted.append((_batch(29, 3, codec=LZ4), None))  # intact
    extra = _batch(32, 3, pid=12, epoch=0, seq=0)
    extra += b"\x00\x00\x00"
    struct.pack_into(">i", extra, 8, len(extra) - 12)
    planted.append((_fix_crc(extra), "record_count_mismatch"))
    unknown = _batch(35, 2)
    struct.pack_into(">h", unknown, 21, struct.unpack_from(">h", unknown, 21)[0] | 6)
    planted.append((_fix_crc(unknown), "unknown_codec"))
    planted.append((_batch(37, 5, pid=10, epoch=0, seq=14), None))
    data = bytearray()
    kinds: dict[int, str] = {}
    for batch, kind in planted:
        if kind:
            kinds[len(data)] = kind
        data += batch
    return bytes(data), kinds


@pytest.fixture(scope="module")
def corrupt_dir(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[int, str]]:
    root = tmp_path_factory.mktemp("corrupt-broker")
    (root / "corrupt-0").mkdir()
    segment = root / "corrupt-0" / "00000000000000000000.log"
    data, kinds = corrupt_segment()
    segment.write_bytes(data)
    return root, segment, kinds


def _deep_findings(segment: Path) -> list[Finding]:
    """What `kforensics dump --deep-iteration` reports, through the same library calls."""
    out = []
    with open_log(segment) as log:
        for b in log.batches():
            if isinstance(b, Finding):
                out.append(b)
            else:
                out += [r for r in log.records(b) if isinstance(r, Finding)]
    return out


def test_the_segment_holds_what_was_planted(corrupt_dir) -> None:
    _root, segment, kinds = corrupt_dir
    found = {(f.position, f.kind) for f in _deep_findings(segment) if f.kind in DECODER_KINDS}
    assert found == set(kinds.items())
    crc = [f for f in _deep_findings(segment) if f.kind == "corrupt_crc"]
    assert [f.details["base_offset"] for f in crc] == [15]  # the zstd batch
    with open_log(segment) as log:  # every batch is framed: the damage is inside them
        assert [b.base_offset for b in log.batches() if isinstance(b, RecordBatch)] == [0, 5, 10, 15, 20, 25, 29,
                                                                                       32, 35, 37]


@pytest.mark.parametrize("check_records", [True, False])
def test_executor_reports_the_decoder_findings_in_full_mode_only(corrupt_dir, check_records: bool) -> None:
    from kforensics.spark import read
    from kforensics.spark import schemas as S

    _root, segment, kinds = corrupt_dir
    task = pa.RecordBatch.from_pylist([{"task_kind": "segment", "broker": "b", "topic": "corrupt", "partition": 0,
                                        "path": str(segment), "base_offset": 0}], schema=S.TASKS)
    rows = pa.Table.from_batches(list(read.segment_rows(iter([task]), check_records=check_records)),
                                 schema=S.SEGMENT_ROWS).to_pylist()
    findings = [r for r in rows if r["row_kind"] == "finding"]
    decoder = sorted((r["position"], r["kind"], r["message"], json.loads(r["details"])) for r in findings
                     if r["kind"] in DECODER_KINDS)
    if not check_records:
        assert decoder == [] and {r["kind"] for r in findings} == {"corrupt_crc"}
        return
    expected = sorted((f.position, f.kind, f.message, json.loads(json.dumps(f.details))) for f in
                      _deep_findings(segment) if f.kind in DECODER_KINDS)
    assert decoder == expected and [(p, k) for p, k, _, _ in decoder] == sorted(kinds.items())
    assert all(r["file"] == str(segment) for r in findings)
    # the batches around the damage are all there
    assert sorted(r["base_offset"] for r in rows if r["row_kind"] == "batch") == [0, 5, 10, 15, 20, 25, 29, 32, 35,
                                                                                  37]


def test_full_scan_reports_them_in_the_findings_table_and_json_lines(spark, corrupt_dir, tmp_path: Path) -> None:
    root, segment, kinds = corrupt_dir
    runner = CliRunner()
    full = runner.invoke(main, ["scan", f"b={root}", "--out", str(tmp_path / "full"), "--json"])
    assert full.exit_code == 1 and "failed" not in full.stderr, full.output
    lines = [json.loads(line) for line in full.stdout.splitlines()]
    decoder = sorted((line["position"], line["kind"]) for line in lines if line["kind"] in DECODER_KINDS)
    assert decoder == sorted(kinds.items())
    for line in lines:
        if line["kind"] in DECODER_KINDS:
            assert (line["broker"], line["topic"], line["partition"], line["severity"]) == ("b", "corrupt", 0, "error")
            assert Path(line["file"]).resolve() == segment.resolve()
    table = pq.read_table(tmp_path / "full" / "findings").to_pylist()
    assert sorted((r["position"], r["kind"]) for r in table if r["kind"] in DECODER_KINDS) == sorted(kinds.items())

    headers = runner.invoke(main, ["scan", f"b={root}", "--out", str(tmp_path / "headers"), "--json",
                                   "--headers-only"])
    assert headers.exit_code == 1 and "failed" not in headers.stderr, headers.output
    kinds_found = {json.loads(line)["kind"] for line in headers.stdout.splitlines()}
    assert "corrupt_crc" in kinds_found and not kinds_found & DECODER_KINDS
