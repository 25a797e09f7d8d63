"""kafka-dump-log text as scan input: the parser (no Spark) and the scan built on it."""

from __future__ import annotations

import functools
import io
import json
import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from conftest import SAMPLE_LOGS

from kforensics.cli import main
from kforensics.parsers.dump_text import DumpBatch, DumpSegment, iter_dump_text
from kforensics.parsers.findings import Finding
from kforensics.parsers.record_batch import RecordBatch, open_log

BROKERS = ("broker-1", "broker-2")
HEADER_FIELDS = ("position", "size", "magic", "last_offset", "partition_leader_epoch", "producer_id",
                 "producer_epoch", "base_sequence", "last_sequence", "is_transactional", "is_control", "codec",
                 "timestamp_type", "max_timestamp", "crc", "crc_valid")


def _segments(broker: str) -> list[Path]:
    return sorted((SAMPLE_LOGS / broker).glob("*/*.log"))


def our_dump(broker: str, *options: str) -> str:
    """`kforensics dump` of every segment of a sample broker: its standard output, as an operator sends it."""
    result = CliRunner().invoke(main, ["dump", *options, *map(str, _segments(broker))])
    assert result.exit_code in (0, 1), result.output
    return result.stdout


def _parse(text: str | bytes, name: str = "dump.txt") -> list:
    data = text.encode() if isinstance(text, str) else text
    return list(iter_dump_text(io.BytesIO(data), name))


@pytest.fixture(scope="module")
def dumps(tmp_path_factory) -> dict[str, Path]:
    """The text of `kforensics dump` (with and without --deep-iteration) of both sample brokers."""
    folder = tmp_path_factory.mktemp("dump-text")
    out = {}
    for broker in BROKERS:
        for mode, options in (("shallow", ()), ("deep", ("--deep-iteration",))):
            path = folder / f"{broker}-{mode}.txt"
            path.write_text(our_dump(broker, *options))
            out[f"{broker}-{mode}"] = path
    return out


# --- the parser --------------------------------------------------------------------------------------

def test_every_batch_header_matches_the_file(dumps: dict[str, Path]) -> None:
    """Parsed from our deep dump text, every batch of every sample segment has the header the file has, and a
    control batch its COMMIT/ABORT and coordinator epoch."""
    for broker in BROKERS:
        with open(dumps[f"{broker}-deep"], "rb") as lines:
            items = list(iter_dump_text(lines, "deep.txt"))
        parsed = {(b.file, b.position): b for b in items if isinstance(b, DumpBatch)}
        segments = {s.file: s for s in items if isinstance(s, DumpSegment)}
        count = 0
        for segment in _segments(broker):
            if segment.parent.name.endswith("-delete"):
                continue
            with open_log(segment) as log:
                for b in log.batches():
                    if not isinstance(b, RecordBatch):
                        continue
                    ours = parsed[(str(segment), b.position)]
                    assert (ours.topic, ours.partition, ours.segment_base_offset) == (
                        segment.parent.name.rsplit("-", 1)[0], int(segment.parent.name.rsplit("-", 1)[1]),
                        int(segment.name[:20]))
                    assert {f: getattr(ours, f) for f in HEADER_FIELDS} == {f: getattr(b, f) for f in HEADER_FIELDS}
                    assert (ours.base_offset, ours.count) == (b.base_offset, b.count), (segment, b.position)
                    if b.is_control and b.magic == 2:
                        rec = log.control_record(b)
                        assert (ours.control_type, ours.coordinator_epoch) == (rec.control_type, rec.coordinator_epoch)
                    count += 1
                seg = segments[str(segment)]
                assert (seg.size, seg.base_offset) == (log.size, int(segment.name[:20]))
        assert count == len(parsed) > 100


def test_without_record_lines_a_marker_is_unknown(dumps: dict[str, Path]) -> None:
    with open(dumps["broker-1-shallow"], "rb") as lines:
        items = list(iter_dump_text(lines, "shallow.txt"))
    controls = [b for b in items if isinstance(b, DumpBatch) and b.is_control]
    unknown = [f for f in items if isinstance(f, Finding) and f.kind == "marker_outcome_unknown"]
    assert controls and all(b.control_type is None and b.coordinator_epoch is None for b in controls)
    assert sorted((f.file, f.position) for f in unknown) == sorted((b.file, b.position) for b in controls)
    assert all(f.effective_severity == "warning" and f.details["line"] > 0 for f in unknown)


V2 = ("baseOffset: {b} lastOffset: {l} count: {c} baseSequence: 0 lastSequence: {s} producerId: 7 producerEpoch: 0 "
      "partitionLeaderEpoch: 3 isTransactional: {t} isControl: {ctl} deleteHorizonMs: OptionalLong.empty "
      "position: {p} CreateTime: 1700000000000 size: {z} magic: 2 compresscodec: none crc: 12345 isvalid: true")


def test_unparseable_lines_are_findings_with_line_and_byte_position() -> None:
    lines = [
        "garbage before anything",                                                       # 1
        "Dumping /data/kafka/orders-3/00000000000000000100.log",                         # 2
        "Log starting offset: 100",                                                      # 3
        "| offset: 100 CreateTime: 1 keySize: 1 valueSize: 1 sequence: 0 headerKeys: []",  # 4: before any batch
        V2.format(b=100, l=101, c=2, s=1, t="false", ctl="false", p=0, z=90),            # 5
        "baseOffset: 102 lastOffset: oops count: 1",                                     # 6
        "this line is not kafka-dump-log",                                               # 7
        V2.format(b=102, l=102, c=1, s=0, t="false", ctl="false", p=90, z=80),           # 8
        "Found 17 invalid bytes at the end of 00000000000000000100.log",                 # 9
    ]
    text = "".join(line + "\n" for line in lines)
    items = _parse(text, "case.txt")
    bad = [f for f in items if isinstance(f, Finding) and f.kind == "dump_line_unparseable"]
    assert [f.details["line"] for f in bad] == [1, 4, 6, 7]
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    assert [f.position for f in bad] == [starts[0], starts[3], starts[5], starts[6]]
    assert all(f.file == "case.txt" and f.effective_severity == "warning" for f in bad)
    batches = [b for b in items if isinstance(b, DumpBatch)]
    assert [(b.topic, b.partition, b.base_offset, b.last_offset, b.line) for b in batches] == [
        ("orders", 3, 100, 101, 5), ("orders", 3, 102, 102, 8)]
    (invalid,) = [f for f in items if isinstance(f, Finding) and f.kind == "dump_invalid_bytes"]
    assert (invalid.position, invalid.details["bytes"]) == (170, 17)
    (segment,) = [s for s in items if isinstance(s, DumpSegment)]
    assert (segment.base_offset, segment.size, segment.valid_bytes, segment.batch_count, segment.record_count) == (
        100, 187, 170, 2, 3)


def test_older_formats_legacy_wrappers_iso_times_and_skipped_sections() -> None:
    text = "\n".join([
        "Dumping /k/idx-0/00000000000000000000.index",               # skipped: not a segment
        "offset: 5 position: 0",
        "Dumping /k/0000.log",                                        # skipped: no <topic>-<partition> dir
        "baseOffset: 0 lastOffset: 0 count: 1 position: 0",
        "Dumping /k/old-1/00000000000000000000.log",
        # Kafka 2.x: no deleteHorizonMs, codec in capitals; fields in another order still parse
        "baseOffset: 0 lastOffset: 1 count: 2 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 "
        "partitionLeaderEpoch: 0 isTransactional: false isControl: false position: 0 CreateTime: 1588000000000 "
        "isvalid: true size: 80 magic: 2 compresscodec: GZIP crc: 99",
        # a legacy compressed wrapper and its record lines (deep iteration)
        "offset: 4 position: 80 CreateTime: 1588000000001 size: 120 magic: 1 compresscodec: snappy crc: 7 "
        "isvalid: true",
        "| offset: 2 CreateTime: 1 keySize: -1 valueSize: 3 isValid: true crc: 1}",
        "| offset: 3 CreateTime: 1 keySize: -1 valueSize: 3 isValid: true crc: 2}",
        "| offset: 4 CreateTime: 1 keySize: -1 valueSize: 3 isValid: true crc: 3}",
        # an ISO timestamp (kforensics dump --iso-time), a control batch with its marker
        "baseOffset: 5 lastOffset: 5 count: 1 baseSequence: -1 lastSequence: -1 producerId: 9 producerEpoch: 2 "
        "partitionLeaderEpoch: 0 isTransactional: true isControl: true deleteHorizonMs: OptionalLong.empty "
        "position: 200 CreateTime: 2025-11-20T10:00:00.500Z size: 78 magic: 2 compresscodec: none crc: 5 "
        "isvalid: false",
        "| offset: 5 CreateTime: 1 keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] endTxnMarker: ABORT "
        "coordinatorEpoch: 11",
        "Mismatches in :/k/old-1/00000000000000000000.index",         # stderr epilogue pasted in: not data
        "  Index offset: 3, log offset: 4",
        "WARNING truncated_tail: x.log at byte 3: something",
    ]) + "\n"
    items = _parse(text)
    skipped = [f for f in items if isinstance(f, Finding) and f.kind == "dump_section_skipped"]
    assert [f.details["line"] for f in skipped] == [1, 3] and all(f.effective_severity == "info" for f in skipped)
    batches = [b for b in items if isinstance(b, DumpBatch)]
    assert [(b.base_offset, b.last_offset, b.count, b.codec, b.magic) for b in batches] == [
        (0, 1, 2, "gzip", 2), (2, 4, 3, "snappy", 1), (5, 5, 1, "none", 2)]
    marker = batches[-1]
    assert (marker.control_type, marker.coordinator_epoch, marker.max_timestamp, marker.crc_valid) == (
        "ABORT", 11, 1763632800500, False)
    (crc,) = [f for f in items if isinstance(f, Finding) and f.kind == "corrupt_crc"]
    assert (crc.position, crc.details["stored_crc"], crc.details["computed_crc"]) == (200, 5, None)
    assert not [f for f in items if isinstance(f, Finding) and f.kind == "dump_line_unparseable"]


def test_binary_junk_and_an_empty_text_do_not_crash() -> None:
    assert _parse(b"") == []
    items = _parse(b"Dumping /k/t-0/00000000000000000000.log\n\xff\xfe\x00junk\n" + os.urandom(2000).replace(b"\n", b""))
    assert [f.kind for f in items if isinstance(f, Finding)] == ["dump_line_unparseable"] * 2
    assert [type(i).__name__ for i in items][-1] == "DumpSegment"


# --- the scan ------------------------------------------------------------------------------------------

#: What a scan finds from batch headers alone, comparable between the files and their dump text.
HEADER_KINDS = {"sequence_gap", "duplicate_sequence", "zombie_epoch", "hanging_transaction", "offset_overlap",
                "segment_name_mismatch", "replica_divergence", "corrupt_crc"}
TXN_FIELDS = ("broker", "topic", "partition", "producer_id", "producer_epoch", "first_offset", "last_data_offset",
              "marker_offset", "outcome", "coordinator_epoch", "batch_count", "record_count", "duration_ms")


def _header_findings(out: Path) -> set[tuple]:
    """Of the brokers dumped to text (the session's scans read more sample brokers)."""
    return {(f["kind"], f["broker"], f["topic"], f["partition"], f["offset"], f["producer_id"], f["producer_epoch"],
             f["position"], os.path.basename(f["file"] or "")) for f in pq.read_table(out / "findings").to_pylist()
            if f["kind"] in HEADER_KINDS and f["broker"] in BROKERS}


def _transactions(out: Path) -> list[tuple]:
    return sorted(tuple(-1 if r[k] is None else r[k] for k in TXN_FIELDS)
                  for r in pq.read_table(out / "transactions").to_pylist() if r["broker"] in BROKERS)


def _scan_dumps(spark, dumps: dict[str, Path], mode: str, out: Path):
    from kforensics.spark.jobs import run_scan

    return run_scan(spark, [(b, str(dumps[f"{b}-{mode}"])) for b in BROKERS], str(out), headers_only=True)


def test_deep_dump_text_scans_like_the_files(spark, headers_scan: Path, dumps: dict[str, Path],
                                             tmp_path: Path) -> None:
    summary = _scan_dumps(spark, dumps, "deep", tmp_path)
    expected = _header_findings(headers_scan)
    assert {k[0] for k in expected} == HEADER_KINDS  # every kind is there to compare
    assert _header_findings(tmp_path) == expected
    assert _transactions(tmp_path) == _transactions(headers_scan)
    assert summary.dump_inputs == list(BROKERS)
    findings = pq.read_table(tmp_path / "findings").to_pylist()
    # what needs the files is not judged: no .txnindex finding although every abort lacks an index entry here
    assert not [f for f in findings if f["kind"].startswith(("txnindex", "index_", "timeindex", "snapshot",
                                                             "leader_epoch", "cleaner"))]
    assert all(r["txnindex_agrees"] is None for r in pq.read_table(tmp_path / "aborted_ranges").to_pylist())
    # the damaged tail of damaged-0 is kafka-dump-log's "invalid bytes" at the same byte
    tails = {(f["topic"], f["position"]) for f in pq.read_table(headers_scan / "findings").to_pylist()
             if f["kind"] in ("truncated_tail", "zero_filled_tail") and f["broker"] == "broker-1"}
    assert tails and tails == {(f["topic"], f["position"]) for f in findings if f["kind"] == "dump_invalid_bytes"}
    # the unclean election on inventory-0: without a high watermark, whether the lost offsets were committed is
    # unknown: a warning with no lost range (the files say error, offsets 60-89)
    (divergence,) = [f for f in findings if f["kind"] == "replica_divergence"]
    assert (divergence["severity"], json.loads(divergence["details"]).get("lost_offsets")) == ("warning", None)
    assert "whether those offsets were committed is unknown" in divergence["message"]
    skipped = [f for f in findings if f["kind"] == "dump_section_skipped"]
    assert [(f["broker"], f["severity"]) for f in skipped] == [("broker-2", "info")]  # the -delete dir


def test_shallow_dump_text_scans_like_the_files_with_unknown_markers(spark, headers_scan: Path,
                                                                     dumps: dict[str, Path], tmp_path: Path) -> None:
    _scan_dumps(spark, dumps, "shallow", tmp_path)
    assert _header_findings(tmp_path) == _header_findings(headers_scan)
    files = _transactions(headers_scan)
    outcome, epoch, marker = TXN_FIELDS.index("outcome"), TXN_FIELDS.index("coordinator_epoch"), \
        TXN_FIELDS.index("marker_offset")
    # the same transactions, each closed by a marker whose outcome the text cannot tell
    assert _transactions(tmp_path) == sorted(
        tuple("UNKNOWN" if i == outcome and t[marker] != -1 else -1 if i == epoch else v for i, v in enumerate(t))
        for t in files)
    findings = pq.read_table(tmp_path / "findings").to_pylist()
    unknown = [f for f in findings if f["kind"] == "marker_outcome_unknown"]
    markers = [t for t in files if t[marker] != -1]
    assert len(unknown) == len(markers) and all(f["severity"] == "warning" for f in unknown)
    assert {(f["broker"], f["topic"], f["offset"]) for f in unknown} == {(t[0], t[1], t[marker]) for t in markers}
    assert not [f for f in findings if f["kind"] == "dump_line_unparseable"]


def test_scan_cli_reads_dump_text_and_says_what_it_skipped(spark, dumps: dict[str, Path], tmp_path: Path) -> None:
    bad = tmp_path / "pasted.txt"
    bad.write_text(dumps["broker-1-deep"].read_text().replace("baseOffset: 51 ", "baseOffset: 5x1 ", 1)
                   .replace("Dumping ", "some mail client quoting\nDumping ", 1))
    result = CliRunner().invoke(main, ["scan", f"support={bad}", "--out", str(tmp_path / "out"), "--headers-only",
                                       "--topic", "payments"])
    assert result.exit_code == 1, result.output
    assert "Read as kafka-dump-log text: support" in result.output and "were skipped" in result.output
    lines = [f | json.loads(f["details"]) for f in pq.read_table(tmp_path / "out" / "findings").to_pylist()]
    unparseable = sorted((f["line"], f["position"]) for f in lines if f["kind"] == "dump_line_unparseable")
    text = bad.read_bytes()
    broken = text.index(b"baseOffset: 5x1 ")
    broken = text.rindex(b"\n", 0, broken) + 1
    assert unparseable == [(1, 0), (text[:broken].count(b"\n") + 1, broken)]
    # the rest is read: without producer 3000's batch at 51 its next one (56) skips 5 sequence numbers
    assert [(f["offset"], f["producer_id"], f["gap_size"]) for f in lines if f["kind"] == "sequence_gap"] == [
        (56, 3000, 5)]
    assert [f["offset"] for f in lines if f["kind"] == "hanging_transaction"] == [43]


def test_a_binary_file_given_by_mistake_stays_bounded() -> None:
    """A segment passed as FILE, or one endless line: memory bounded, every line accounted for."""
    from kforensics.parsers import dump_text

    long_line = b"Dumping /k/t-0/00000000000000000000.log\n" + b"x" * (3 * dump_text.MAX_LINE) + b"\nbad\n"
    items = _parse(long_line)
    bad = [f for f in items if isinstance(f, Finding)]
    assert [(f.details["line"], f.position) for f in bad] == [(2, 40), (3, 40 + 3 * dump_text.MAX_LINE + 1)]
    assert "longer than any kafka-dump-log line" in bad[0].message and len(bad[0].details["text"]) == 200
    many = b"Dumping /k/t-0/00000000000000000000.log\n" + b"junk\n" * (dump_text.MAX_REPORTED + 500)
    found = [f for f in _parse(many) if isinstance(f, Finding)]
    assert len(found) == dump_text.MAX_REPORTED + 1
    assert (found[-1].details["lines"], found[-1].details["line"], found[-1].details["last_line"]) == (
        500, dump_text.MAX_REPORTED + 2, dump_text.MAX_REPORTED + 501)


@functools.cache
def _deep_dump_bytes() -> bytes:
    return our_dump("broker-1", "--deep-iteration").encode()[:20_000]


def _mutations():
    from hypothesis import strategies as st

    @st.composite
    def mutated(draw) -> bytes:
        text = bytearray(_deep_dump_bytes())
        for _ in range(draw(st.integers(1, 5))):
            pos = draw(st.integers(0, len(text) - 1))
            op = draw(st.sampled_from(["digits", "flip", "cut", "insert", "newline"]))
            if op == "digits":  # a number far beyond int64 / int32, or signs and junk where digits were
                text[pos:pos] = draw(st.sampled_from([b"99999999999999999999999", b"2147483648", b"-", b"1_0",
                                                      b"\xd9\xa3", b"null"]))
            elif op == "flip":
                text[pos] ^= 1 << draw(st.integers(0, 7))
            elif op == "cut":
                del text[pos:pos + draw(st.integers(1, 200))]
            elif op == "insert":
                text[pos:pos] = draw(st.binary(max_size=64))
            else:
                text[pos:pos] = b"\n"
        return bytes(text)

    return mutated()


def test_a_position_past_two_gib_still_fits_the_segment_row_and_a_delete_horizon_is_read() -> None:
    """A segment's size in the segments table is an int (as Kafka's FileRecords sizes are): a text whose batch sits
    at a position no segment can hold (found by the mutation test below) gives a clamped row, not a failed scan. A
    `deleteHorizonMs: OptionalLong[...]` (KIP-534) is the batch's delete horizon."""
    import pyarrow as pa

    from kforensics.spark import schemas as S
    from kforensics.spark.dump_input import _batch_row, _segment_row

    horizon = V2.format(b=0, l=0, c=1, s=0, t="false", ctl="false", p=0, z=90).replace(
        "OptionalLong.empty", "OptionalLong[1763649000000]")
    far = V2.format(b=1, l=1, c=1, s=1, t="false", ctl="false", p=21474836481503, z=125)
    items = _parse(f"Dumping /d/t-0/{0:020d}.log\n{horizon}\n{far}\n", "m.txt")
    (segment,) = [i for i in items if isinstance(i, DumpSegment)]
    batches = [i for i in items if isinstance(i, DumpBatch)]
    assert segment.size == 2**31 - 1 and [b.delete_horizon_ms for b in batches] == [1763649000000, None]
    pa.RecordBatch.from_pylist([_segment_row("b", segment), *[_batch_row("b", b) for b in batches]],
                               schema=S.SEGMENT_ROWS)


def test_mutated_dump_text_never_raises_and_always_fits_the_tables() -> None:
    """Whatever the text holds, the parser never raises, and every row it gives converts to the Arrow schema the
    executors emit (a value that did not would fail the whole scan)."""
    import pyarrow as pa
    from hypothesis import HealthCheck, given, settings

    from kforensics.spark import schemas as S
    from kforensics.spark.dump_input import _batch_row, _segment_row
    from kforensics.spark.executor_files import finding_row as _finding_row

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(data=_mutations())
    def check(data: bytes) -> None:
        rows = []
        for item in iter_dump_text(io.BytesIO(data), "m.txt"):
            if isinstance(item, DumpBatch):
                rows.append(_batch_row("b", item))
            elif isinstance(item, DumpSegment):
                rows.append(_segment_row("b", item))
            else:
                assert item.kind and item.message
                rows.append(_finding_row({"broker": "b", "topic": None, "partition": None}, item))
        pa.RecordBatch.from_pylist(rows, schema=S.SEGMENT_ROWS)

    check()
