"""Restart prediction (parsers/restart.py): each rule of Kafka's log loading, on segments written here."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder

from kforensics.parsers.restart import IndexedBatch, PartitionState, index_failure, predict, segment_state
from kforensics.parsers.txn_index import iter_txn_index

TS = 1763632800000


def _batch(base: int, n: int = 5, *, corrupt: bool = False) -> bytes:
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                        producer_epoch=-1, base_sequence=-1, batch_size=1 << 30)
    for i in range(n):
        builder.append(i, timestamp=TS + base + i, key=f"k{base + i}".encode(), value=b"v" * 40, headers=[])
    data = bytearray(builder.build())
    struct.pack_into(">q", data, 0, base)
    if corrupt:
        data[-3] ^= 0x40  # a flipped bit in the last record: the CRC no longer holds
    return bytes(data)


def _write(tmp: Path, segments: list[list[tuple[int, int, bool]]], *, torn: int = 0,
           no_index: tuple[int, ...] = ()) -> list[tuple[str, int, bool]]:
    """Segments of (base_offset, records, corrupt) batches; `torn` bytes cut off the last one."""
    out = []
    for i, batches in enumerate(segments):
        base = batches[0][0]
        data = b"".join(_batch(b, n, corrupt=c) for b, n, c in batches)
        if torn and i == len(segments) - 1:
            data = data[:-torn]
        path = tmp / f"{base:020d}.log"
        path.write_bytes(data)
        out.append((str(path), base, i not in no_index))
    return out


def _predict(files: list[tuple[str, int, bool]], *, clean: bool, recovery_point: int | None,
             log_start: int = 0, hw: int | None = None, interval: int = 4096):
    segs = tuple(segment_state(p, base, has_offset_index=idx, index_interval_bytes=interval) for p, base, idx in files)
    return predict(PartitionState("b1", "t", 0, segs, clean_shutdown=clean, recovery_point=recovery_point,
                                  log_start_offset=log_start, high_watermark=hw))


def _kinds(pred) -> list[str]:
    return [f.kind for f, _ in pred.findings]


# offsets 0-9 | 10-19 (20-24 corrupt) 25-34 | 35-44
THREE = [[(0, 5, False), (5, 5, False)], [(10, 10, False), (20, 5, True), (25, 10, False)], [(35, 10, False)]]


def test_unclean_damage_in_an_unflushed_segment_truncates_and_deletes_the_later_ones(tmp_path: Path) -> None:
    files = _write(tmp_path, THREE)
    pred = _predict(files, clean=False, recovery_point=12, hw=40)
    row = pred.row
    seg1 = Path(files[1][0])
    corrupt_at = len(_batch(10, 10))
    assert row["truncate_at_offset"] == 20 and row["truncate_at_file"] == str(seg1)
    assert row["truncate_at_position"] == corrupt_at
    assert row["bytes_discarded"] == seg1.stat().st_size - corrupt_at + Path(files[2][0]).stat().st_size
    assert row["segments_deleted"] == 1 and row["segments_recovered"] == 1
    assert row["offsets_discarded"] == [25, 44] and row["committed_offsets_discarded"] == [25, 39]
    (finding, offset), = pred.findings
    assert finding.kind == "restart_would_truncate" and finding.effective_severity == "error"
    assert (finding.file, finding.position, offset) == (str(seg1), corrupt_at, 20)
    assert finding.details["damage_kind"] == "corrupt_crc" and finding.details["recovery_point"] == 12
    assert finding.details["offsets_discarded"] == [25, 44]


def test_damage_in_the_first_of_several_unflushed_segments(tmp_path: Path) -> None:
    segments = [[(0, 5, False), (5, 5, True), (10, 5, False)], [(15, 5, False)], [(20, 5, False)]]
    pred = _predict(_write(tmp_path, segments), clean=False, recovery_point=0, hw=None)
    assert pred.row["truncate_at_offset"] == 5 and pred.row["segments_deleted"] == 2
    assert pred.row["offsets_discarded"] == [10, 24] and pred.row["committed_offsets_discarded"] is None
    assert _kinds(pred) == ["restart_would_truncate"]


def test_not_in_the_recovery_point_checkpoint_means_recovery_from_0(tmp_path: Path) -> None:
    pred = _predict(_write(tmp_path, THREE), clean=False, recovery_point=None)
    assert pred.row["recovery_point"] == 0 and pred.row["segments_recovered"] == 2
    assert pred.row["truncate_at_offset"] == 20 and "recovers from offset 0" in pred.row["reason"]


def test_clean_shutdown_marker_skips_recovery_and_the_damage_is_served(tmp_path: Path) -> None:
    files = _write(tmp_path, THREE)
    pred = _predict(files, clean=True, recovery_point=12)
    assert pred.row["clean_shutdown"] and pred.row["segments_recovered"] == 0
    assert pred.row["bytes_discarded"] == 0 and pred.row["truncate_at_offset"] is None
    (finding, offset), = pred.findings
    assert finding.kind == "damage_below_recovery_point" and finding.effective_severity == "warning"
    assert (finding.file, finding.position, offset) == (files[1][0], len(_batch(10, 10)), 20)
    assert finding.details["clean_shutdown"] is True


def test_damage_below_the_recovery_point_is_not_revalidated(tmp_path: Path) -> None:
    pred = _predict(_write(tmp_path, THREE), clean=False, recovery_point=40)
    assert pred.row["segments_recovered"] == 1 and pred.row["bytes_discarded"] == 0
    assert _kinds(pred) == ["damage_below_recovery_point"]
    assert pred.findings[0][0].details == {"damage_kind": "corrupt_crc", "recovery_point": 40, "clean_shutdown": False}


def test_a_torn_tail_alone_is_trimmed_quietly(tmp_path: Path) -> None:
    files = _write(tmp_path, THREE[:1] + [[(10, 10, False), (20, 5, False)]], torn=30)
    pred = _predict(files, clean=False, recovery_point=10, hw=20)
    assert pred.row["truncate_at_offset"] == 20 and pred.row["bytes_discarded"] == len(_batch(20, 5)) - 30
    assert pred.row["offsets_discarded"] is None and pred.row["segments_deleted"] == 0
    (finding, _), = pred.findings
    assert finding.kind == "restart_trims_tail" and finding.effective_severity == "info"
    assert finding.details["damage_kind"] == "truncated_tail"


def test_a_corrupt_last_batch_with_nothing_behind_it_is_only_trimmed(tmp_path: Path) -> None:
    pred = _predict(_write(tmp_path, [[(0, 5, False), (5, 5, True)]]), clean=False, recovery_point=0)
    assert _kinds(pred) == ["restart_trims_tail"] and pred.row["truncate_at_offset"] == 5


def test_log_end_below_log_start_deletes_everything(tmp_path: Path) -> None:
    files = _write(tmp_path, THREE)
    pred = _predict(files, clean=True, recovery_point=45, log_start=100, hw=45)
    total = sum(Path(p).stat().st_size for p, _, _ in files)
    assert pred.row["bytes_discarded"] == total and pred.row["segments_deleted"] == 3
    assert pred.row["offsets_discarded"] == [0, 44] and pred.row["committed_offsets_discarded"] == [0, 44]
    assert pred.row["truncate_at_offset"] == 100
    truncates = [f for f, _ in pred.findings if f.kind == "restart_would_truncate"]
    assert truncates and truncates[0].details["damage_kind"] == "log_end_below_log_start"


def test_unclean_truncation_can_drop_the_log_end_below_the_log_start(tmp_path: Path) -> None:
    pred = _predict(_write(tmp_path, THREE), clean=False, recovery_point=12, log_start=22)
    assert pred.row["segments_deleted"] == 3 and pred.row["offsets_discarded"] == [0, 44]
    assert "below the log start offset 22" in pred.row["reason"]


def test_a_segment_without_offset_index_is_recovered_even_after_a_clean_shutdown(tmp_path: Path) -> None:
    files = _write(tmp_path, THREE, no_index=(1,))
    pred = _predict(files, clean=True, recovery_point=45)
    corrupt_at = len(_batch(10, 10))
    assert pred.row["segments_recovered"] == 1 and pred.row["segments_deleted"] == 0
    assert pred.row["bytes_discarded"] == Path(files[1][0]).stat().st_size - corrupt_at
    assert pred.row["offsets_discarded"] == [25, 34] and pred.row["committed_offsets_discarded"] is None
    assert (pred.row["truncate_at_offset"], pred.row["truncate_at_file"], pred.row["truncate_at_position"]) == (
        20, files[1][0], corrupt_at)
    assert "no offset index" in pred.row["reason"] and not pred.row["restart_fails"]
    # valid offsets are lost even after a clean shutdown: an error, at the bad batch
    (finding, offset), = pred.findings
    assert finding.kind == "restart_would_truncate" and (finding.file, finding.position, offset) == (
        files[1][0], corrupt_at, 20)
    assert finding.details["damage_kind"] == "corrupt_crc" and finding.details["segments_deleted"] == 0


def test_offsets_going_backwards_empty_the_segment_when_the_index_rebuild_sees_them(tmp_path: Path) -> None:
    segments = [[(0, 5, False), (5, 5, False), (3, 5, False), (10, 5, False)], [(15, 5, False)]]
    files = _write(tmp_path, segments)
    pred = _predict(files, clean=False, recovery_point=0, interval=1)  # an index entry at every batch
    assert pred.row["truncate_at_offset"] == 0 and pred.row["truncate_at_position"] == 0
    assert pred.row["bytes_discarded"] == sum(Path(p).stat().st_size for p, _, _ in files)
    assert pred.findings[0][0].details["damage_kind"] == "offset_overlap"
    # with the default interval (4096 bytes) no entry lands on the regression: nothing is truncated
    assert _predict(files, clean=False, recovery_point=0).row["bytes_discarded"] == 0


def _segment(tmp: Path, *parts: bytes, base: int = 0) -> tuple[str, int, bool]:
    path = tmp / f"{base:020d}.log"
    path.write_bytes(b"".join(parts))
    return str(path), base, True


def test_a_zero_filled_hole_hides_valid_batches_that_recovery_discards(tmp_path: Path) -> None:
    """batch 0-9, 306 zero bytes, batches 10-14 and 15-19: Kafka's walk stops at the hole (a size below 14:
    CorruptRecordException) and truncates there; the two valid batches behind it are lost, committed ones too."""
    first, hole, second, third = _batch(0, 10), bytes(306), _batch(10, 5), _batch(15, 5)
    files = [_segment(tmp_path, first, hole, second, third)]
    pred = _predict(files, clean=False, recovery_point=0, hw=20)
    row = pred.row
    assert (row["truncate_at_offset"], row["truncate_at_position"]) == (10, len(first))
    assert row["bytes_discarded"] == 306 + len(second) + len(third) and row["segments_deleted"] == 0
    assert row["offsets_discarded"] == [10, 19] and row["committed_offsets_discarded"] == [10, 19]
    (finding, offset), = pred.findings
    assert finding.kind == "restart_would_truncate" and (finding.position, offset) == (len(first), 10)
    assert finding.details["damage_kind"] == "invalid_batch_length"


def test_data_behind_an_impossible_length_is_counted_and_later_segments_deleted(tmp_path: Path) -> None:
    first, second, third = _batch(0, 5), bytearray(_batch(5, 5)), _batch(10, 5)
    struct.pack_into(">i", second, 8, 7)  # a length no batch can have
    later = _batch(15, 5)
    files = [_segment(tmp_path, first, bytes(second), third), _segment(tmp_path, later, base=15)]
    pred = _predict(files, clean=False, recovery_point=0, hw=12)
    assert pred.row["truncate_at_offset"] == 5 and pred.row["segments_deleted"] == 1
    assert pred.row["offsets_discarded"] == [10, 19] and pred.row["committed_offsets_discarded"] == [10, 11]
    assert pred.row["bytes_discarded"] == len(second) + len(third) + len(later)
    assert _kinds(pred) == ["restart_would_truncate"]


def test_a_length_running_past_the_end_hides_the_batches_behind_it(tmp_path: Path) -> None:
    """A length field that points past the file end: nextBatch returns null (the walk ends, no exception), the
    reader calls it a truncated tail; the valid batch behind it is discarded all the same."""
    first, second, third = _batch(0, 5), bytearray(_batch(5, 5)), _batch(10, 5)
    struct.pack_into(">i", second, 8, 1 << 20)
    pred = _predict([_segment(tmp_path, first, bytes(second), third)], clean=False, recovery_point=0)
    assert pred.row["offsets_discarded"] == [10, 14] and pred.findings[0][0].details["damage_kind"] == "truncated_tail"
    assert _kinds(pred) == ["restart_would_truncate"]


def test_a_torn_tail_after_a_zero_hole_is_only_trimmed(tmp_path: Path) -> None:
    first = _batch(0, 5)
    pred = _predict([_segment(tmp_path, first, bytes(100), _batch(5, 5)[:40])], clean=False, recovery_point=0)
    assert pred.row["offsets_discarded"] is None and _kinds(pred) == ["restart_trims_tail"]
    assert pred.row["bytes_discarded"] == 140


def _flip_magic(batch: bytes, magic: int, *, fix_crc: bool = False) -> bytes:
    data = bytearray(batch)
    data[16] = magic
    if fix_crc:
        from kforensics.parsers.crc import crc32c

        struct.pack_into(">I", data, 17, crc32c(bytes(data[21:])))
    return bytes(data)


def test_a_flipped_magic_byte_of_a_v2_batch_passes_recovery(tmp_path: Path) -> None:
    """FileLogInputStream frames any magic >= 2 as a v2 batch, and DefaultRecordBatch.ensureValid's CRC starts at
    the attributes: a v2 batch whose magic byte became 3 keeps passing recovery; the reader still reports it."""
    from kforensics.parsers.record_batch import iter_batches

    first, middle, last = _batch(0, 5), _flip_magic(_batch(5, 5), 3), _batch(10, 5)
    files = [_segment(tmp_path, first, middle, last)]
    assert [f.kind for f in iter_batches(files[0][0]) if not hasattr(f, "crc_valid")] == ["unknown_magic"]
    pred = _predict(files, clean=False, recovery_point=0, hw=15)
    assert pred.row["bytes_discarded"] == 0 and pred.row["truncate_at_offset"] is None and pred.findings == []
    # ... and so does one whose magic is 127 and whose CRC was recomputed after the flip
    files = [_segment(tmp_path, first, _flip_magic(_batch(5, 5), 127, fix_crc=True), last)]
    assert _predict(files, clean=False, recovery_point=0).row["bytes_discarded"] == 0


@pytest.mark.parametrize("magic, fix_crc", [(0x83, False), (0xFF, True)])
def test_a_magic_byte_read_as_negative_takes_the_legacy_path_and_stops_recovery(tmp_path: Path, magic: int,
                                                                                fix_crc: bool) -> None:
    first, middle, last = _batch(0, 5), _flip_magic(_batch(5, 5), magic, fix_crc=fix_crc), _batch(10, 5)
    pred = _predict([_segment(tmp_path, first, middle, last)], clean=False, recovery_point=0, hw=15)
    assert (pred.row["truncate_at_offset"], pred.row["truncate_at_position"]) == (5, len(first))
    assert pred.row["offsets_discarded"] == [10, 14] and pred.row["bytes_discarded"] == len(middle) + len(last)
    assert pred.findings[0][0].details["damage_kind"] == "unknown_magic"


def test_a_flipped_magic_byte_with_a_bad_crc_stops_recovery(tmp_path: Path) -> None:
    first, middle, last = _batch(0, 5), _flip_magic(_batch(5, 5, corrupt=True), 4), _batch(10, 5)
    pred = _predict([_segment(tmp_path, first, middle, last)], clean=False, recovery_point=0)
    assert pred.row["truncate_at_offset"] == 5 and pred.row["offsets_discarded"] == [10, 14]
    assert pred.findings[0][0].details["damage_kind"] == "unknown_magic"


def _state(files: list[tuple[str, int, bool]], *, interval: int = 4096, **segment: object) -> tuple:
    return tuple(segment_state(p, base, has_offset_index=idx, index_interval_bytes=interval,
                               **(segment if i == len(files) - 1 else {}))  # type: ignore[arg-type]
                 for i, (p, base, idx) in enumerate(files))


def _fail(pred) -> dict:
    (finding, _), = [(f, o) for f, o in pred.findings if f.kind == "restart_would_fail"]
    assert finding.effective_severity == "error" and pred.row["restart_fails"] is True
    return {"file": finding.file, "position": finding.position, **finding.details}


def test_an_index_rebuild_that_throws_while_loading_fails_the_load(tmp_path: Path) -> None:
    """A segment without .index is recovered by LogLoader.loadSegmentFiles, which does not catch the
    InvalidOffsetException of the index rebuild: the log fails to load, clean shutdown or not."""
    files = _write(tmp_path, [[(0, 5, False), (5, 5, False), (3, 5, False), (10, 5, False)]], no_index=(0,))
    segs = _state(files, interval=1)
    pred = predict(PartitionState("b1", "t", 0, segs, clean_shutdown=True, recovery_point=15))
    regressing_at = len(_batch(0, 5)) + len(_batch(5, 5))
    assert _fail(pred) == {"file": files[0][0], "position": regressing_at, "exception": "InvalidOffsetException",
                           "thrown_by": "LogLoader.loadSegmentFiles", "damage_kind": "offset_overlap",
                           "dir_state": "live"}
    assert "the log fails to load" in pred.row["reason"] and pred.row["bytes_discarded"] == 0
    # with its .index, the same segment is recovered by recoverLog, which empties it instead (from byte 0; the
    # finding names the batch whose index entry fails)
    files = _write(tmp_path, [[(0, 5, False), (5, 5, False), (3, 5, False), (10, 5, False)]])
    pred = predict(PartitionState("b1", "t", 0, _state(files, interval=1), clean_shutdown=False, recovery_point=0))
    (finding, offset), = pred.findings
    assert finding.kind == "restart_would_truncate" and (finding.position, offset) == (regressing_at, 0)
    assert pred.row["truncate_at_position"] == 0 and not pred.row["restart_fails"]


def test_offsets_below_the_base_offset_fail_the_split(tmp_path: Path) -> None:
    """ensureOffsetInRange throws for a batch below the segment's base offset; LocalLog.splitOverflowedSegment then
    fails its require(segment.hasOverflow()), which holds only for an upward overflow of the last offset."""
    files = [_segment(tmp_path, _batch(100, 5), _batch(50, 5), _batch(105, 5), base=100)]
    pred = predict(PartitionState("b1", "t", 0, _state(files), clean_shutdown=False, recovery_point=0))
    failed = _fail(pred)
    assert (failed["exception"], failed["thrown_by"], failed["position"]) == (
        "IllegalArgumentException", "LocalLog.splitOverflowedSegment", len(_batch(100, 5)))
    # below the recovery point with a clean shutdown it is never recovered: no failure
    pred = predict(PartitionState("b1", "t", 0, _state(files), clean_shutdown=True, recovery_point=200))
    assert not pred.row["restart_fails"] and pred.findings == []


def test_offsets_above_the_index_range_split_the_segment(tmp_path: Path) -> None:
    high = 2**31 + 10
    files = [_segment(tmp_path, _batch(0, 5), _batch(high, 5))]
    pred = predict(PartitionState("b1", "t", 0, _state(files), clean_shutdown=False, recovery_point=0))
    assert not pred.row["restart_fails"] and pred.row["bytes_discarded"] == 0 and pred.findings == []
    assert "splits the segment" in pred.row["reason"]


def test_a_txnindex_entry_of_an_unknown_version_fails_the_load(tmp_path: Path) -> None:
    """TransactionIndex's iterator throws KafkaException for a version above 0 while LogLoader.loadSegmentFiles
    runs sanityCheck on every segment with an .index: the log fails to load, marker or not."""
    files = _write(tmp_path, THREE)
    segs = _state(files, txnindex_error="unknown_version", txnindex_error_position=34)
    pred = predict(PartitionState("b1", "t", 0, segs, clean_shutdown=True, recovery_point=45))
    assert _fail(pred) == {"file": files[2][0].replace(".log", ".txnindex"), "position": 34,
                           "exception": "KafkaException", "thrown_by": "TransactionIndex.sanityCheck",
                           "damage_kind": "txnindex_bad_entry", "dir_state": "live"}
    # the damage of segment 10 is still served (it is below the recovery point; the log never loads anyway)
    assert [f.kind for f, _ in pred.findings] == ["restart_would_fail", "damage_below_recovery_point"]


def test_a_txnindex_entry_below_the_base_offset_recovers_the_segment_while_loading(tmp_path: Path) -> None:
    files = _write(tmp_path, THREE)
    segs = tuple(segment_state(p, base, txnindex_error="corrupt" if base == 10 else None, txnindex_error_position=0)
                 for p, base, _ in files)
    pred = predict(PartitionState("b1", "t", 0, segs, clean_shutdown=True, recovery_point=45, high_watermark=45))
    assert pred.row["segments_recovered"] == 1 and pred.row["truncate_at_offset"] == 20
    assert pred.row["offsets_discarded"] == [25, 34] and pred.row["committed_offsets_discarded"] == [25, 34]
    assert _kinds(pred) == ["restart_would_truncate"]
    # a corrupt .txnindex of a segment without .index changes nothing: NoSuchFileException comes first
    segs = tuple(segment_state(p, base, has_offset_index=False, txnindex_error="unknown_version")
                 if base == 35 else segment_state(p, base) for p, base, _ in files)
    assert not predict(PartitionState("b1", "t", 0, segs, clean_shutdown=True, recovery_point=45)).row["restart_fails"]


def test_the_txnindex_reader_names_what_kafka_sanity_check_trips_on(tmp_path: Path) -> None:
    """Kafka 3.9 TransactionIndex.sanityCheck: CorruptIndexException for an entry whose last offset is below the
    segment's base offset (read from the file name); KafkaException for a version above 0; a partial trailing entry
    is never read (its iterator needs 34 bytes)."""
    entry = struct.Struct(">hqqqq")
    path = tmp_path / "00000000000000000100.txnindex"
    path.write_bytes(entry.pack(0, 7, 90, 95, 90) + entry.pack(1, 7, 101, 102, 101) + entry.pack(0, 7, 103, 104, 103)
                     + b"\0" * 20)
    findings = [x for x in iter_txn_index(path) if not hasattr(x, "producer_id")]
    assert [(f.kind, f.position) for f in findings] == [("txnindex_bad_entry", 0), ("txnindex_bad_entry", 34),
                                                        ("index_partial_entry", 102)]
    assert findings[0].details["last_offset"] == 95 and findings[0].details["segment_base_offset"] == 100
    assert "below the segment's base offset 100" in findings[0].message and findings[1].details["version"] == 1


def test_future_and_stray_dirs_are_recovered_like_live_ones_and_delete_dirs_only_loaded(tmp_path: Path) -> None:
    files = _write(tmp_path, THREE)
    segs = _state(files)
    future = predict(PartitionState("b1", "t", 0, segs, clean_shutdown=False, recovery_point=12, high_watermark=40,
                                    dir_state="future", dir="/d/t-0.ab-future"))
    assert future.row["dir_state"] == "future" and future.row["offsets_discarded"] == [25, 44]
    assert future.row["reason"].endswith("/d/t-0.ab-future: future replica of a move between log dirs (-future): "
                                         "recovered like a live log, the move's target")
    (finding, _), = future.findings
    assert finding.kind == "restart_would_truncate" and finding.details["dir_state"] == "future"
    # a stray dir loses the same, and its damage below the recovery point is never served (it is deleted)
    stray = predict(PartitionState("b1", "t", 0, segs, clean_shutdown=False, recovery_point=40, dir_state="stray"))
    assert stray.findings == [] and stray.row["segments_recovered"] == 1
    # -delete: LogLoader.load skips recoverLog; the row says so, with nothing counted
    delete = predict(PartitionState("b1", "t", 0, segs, clean_shutdown=False, recovery_point=12, dir_state="delete",
                                    dir="/d/t-0.ab-delete"))
    assert delete.findings == [] and delete.row["bytes_discarded"] is None and delete.row["recovery_point"] is None
    assert delete.row["reason"] == ("/d/t-0.ab-delete: directory marked for deletion (-delete): the broker loads it "
                                    "and deletes it")


def test_an_unreadable_recovery_checkpoint_means_recovery_from_0(tmp_path: Path) -> None:
    pred = predict(PartitionState("b1", "t", 0, _state(_write(tmp_path, THREE)), clean_shutdown=False,
                                  recovery_point=40, recovery_checkpoint_unreadable=True))
    assert pred.row["recovery_point"] == 0 and pred.row["segments_recovered"] == 2
    assert pred.row["truncate_at_offset"] == 20 and "unreadable" in pred.row["reason"]


@pytest.mark.parametrize("content, unreadable", [("0\n1\nt 0 40\n", False), ("0\n2\nt 0 40\n", True),
                                                 ("1\n1\nt 0 40\n", True), ("0\n1\nt 0 forty\n", True)])
def test_the_executor_flags_a_recovery_checkpoint_the_broker_cannot_read(tmp_path: Path, content: str,
                                                                         unreadable: bool) -> None:
    """The broker reads recovery-point-offset-checkpoint with CheckpointFile (version, count, entries) and resets
    every partition of the log dir to 0 when that fails; the executor's broker row says so (spark/read.py)."""
    from kforensics.spark.read import _broker_rows

    (tmp_path / "recovery-point-offset-checkpoint").write_text(content)
    rows = list(_broker_rows({"task_kind": "broker", "broker": "b", "topic": None, "partition": None,
                              "path": str(tmp_path)}))
    (broker,) = [r for r in rows if r["row_kind"] == "broker"]
    assert broker["recovery_checkpoint_unreadable"] is unreadable


def test_folders_kafka_cannot_load_fail_every_partition_of_the_broker(tmp_path: Path) -> None:
    pred = predict(PartitionState("b1", "t", 0, _state(_write(tmp_path, THREE)), clean_shutdown=True,
                                  recovery_point=45, refused_dirs=("/d/lost+found",)))
    assert pred.row["restart_fails"] and pred.row["reason"].startswith(
        "the broker does not start: its log dir holds lost+found")


def _marker(base: int, key: bytes | None, value: bytes | None, *, producer_id: int = 7) -> bytes:
    """A transactional control batch of one record (key, value), with its CRC."""
    from kforensics.parsers.crc import crc32c

    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=True, producer_id=producer_id,
                                        producer_epoch=0, base_sequence=-1, batch_size=1 << 30)
    builder.append(0, timestamp=TS + base, key=key, value=value, headers=[])
    data = bytearray(builder.build())
    struct.pack_into(">q", data, 0, base)
    struct.pack_into(">h", data, 21, struct.unpack_from(">h", data, 21)[0] | 0x20)  # the control bit
    struct.pack_into(">I", data, 17, crc32c(bytes(data[21:])))
    return bytes(data)


COMMIT_KEY, ABORT_VALUE = struct.pack(">hh", 0, 1), struct.pack(">hi", 0, 3)


@pytest.mark.parametrize("key, value", [(COMMIT_KEY, b"\0\0\0"), (COMMIT_KEY, struct.pack(">hi", -1, 3)),
                                        (b"\0\1", ABORT_VALUE), (struct.pack(">hh", -2, 0), ABORT_VALUE)])
def test_a_marker_kafka_cannot_read_truncates_right_after_it(tmp_path: Path, key: bytes, value: bytes) -> None:
    """LogSegment.recover counts a batch's bytes as valid before updateProducerState reads its marker; an
    InvalidRecordException there (EndTransactionMarker: a value under 6 bytes or of a negative version; a key under
    4 bytes or of a negative version) is caught and the segment is truncated after the marker."""
    first, marker, behind = _batch(0, 5), _marker(5, key, value), _batch(6, 5)
    files = [_segment(tmp_path, first, marker, behind)]
    pred = _predict(files, clean=False, recovery_point=0, hw=11)
    assert (pred.row["truncate_at_offset"], pred.row["truncate_at_position"]) == (6, len(first) + len(marker))
    assert pred.row["offsets_discarded"] == [6, 10] and pred.row["bytes_discarded"] == len(behind)
    (finding, _), = pred.findings
    assert finding.kind == "restart_would_truncate" and finding.position == len(first)
    assert finding.details["damage_kind"] == "invalid_end_txn_marker"


def test_well_formed_markers_and_other_control_batches_pass_recovery(tmp_path: Path) -> None:
    leader_change = _marker(6, struct.pack(">hh", 0, 2), b"\0\0\0\0", producer_id=-1)  # no producer id: not read
    files = [_segment(tmp_path, _batch(0, 5), _marker(5, COMMIT_KEY, ABORT_VALUE), leader_change, _batch(7, 5))]
    pred = _predict(files, clean=False, recovery_point=0)
    assert pred.row["bytes_discarded"] == 0 and pred.findings == []


def test_a_marker_with_a_flipped_magic_byte_is_read_as_v2(tmp_path: Path) -> None:
    """FileLogInputStream frames a magic byte of 3..127 as a v2 batch, so updateProducerState reads its marker as
    v2 too: a well-formed COMMIT marker whose magic byte flipped to 3 passes recovery and keeps what follows."""
    first, behind = _batch(0, 5), _batch(6, 5)
    marker = _flip_magic(_marker(5, COMMIT_KEY, ABORT_VALUE), 3)
    pred = _predict([_segment(tmp_path, first, marker, behind)], clean=False, recovery_point=0, hw=11)
    assert pred.row["bytes_discarded"] == 0 and pred.row["truncate_at_offset"] is None and pred.findings == []


@pytest.mark.parametrize("key, value", [(struct.pack(">hh", 0, 2), ABORT_VALUE), (None, ABORT_VALUE),
                                        (COMMIT_KEY, None)])
def test_a_control_batch_of_a_producer_that_is_no_marker_fails_the_load(tmp_path: Path, key, value) -> None:
    """EndTransactionMarker.deserialize throws IllegalArgumentException for a control type other than ABORT or
    COMMIT, and a null key or value throws NullPointerException: recover does not catch them, nor does recoverLog."""
    first, marker = _batch(0, 5), _marker(5, key, value)
    pred = _predict([_segment(tmp_path, first, marker, _batch(6, 5))], clean=False, recovery_point=0)
    failed = _fail(pred)
    assert (failed["position"], failed["thrown_by"], failed["damage_kind"]) == (
        len(first), "EndTransactionMarker.deserialize", "not_an_end_txn_marker")


@pytest.mark.parametrize("batches, failed", [
    ([IndexedBatch(0, 100, 4, 1), IndexedBatch(100, 100, 9, 2), IndexedBatch(200, 100, 7, 3)], 200),
    ([IndexedBatch(0, 100, 4, 1), IndexedBatch(100, 100, 9, 2), IndexedBatch(200, 100, 12, 3)], None),
])
def test_index_rebuild_replay(batches: list[IndexedBatch], failed: int | None) -> None:
    assert index_failure(tuple(batches), 50) == failed


def test_metadata_log_is_not_predicted(tmp_path: Path) -> None:
    segs = tuple(segment_state(p, b) for p, b, _ in _write(tmp_path, THREE))
    pred = predict(PartitionState("b1", "__cluster_metadata", 0, segs, clean_shutdown=False, recovery_point=0))
    assert pred.findings == [] and "KRaft metadata log" in pred.row["reason"]


# --- the scan's restart_prediction table, on the sample brokers ------------------------------------------------

def _expected() -> dict:
    import json

    from conftest import SAMPLE_LOGS

    return json.loads((SAMPLE_LOGS / "EXPECTED.json").read_text())


def test_the_scan_predicts_the_planted_cases_exactly(full_scan: Path) -> None:
    import pyarrow.parquet as pq

    rows = {(r["broker"], f"{r['topic']}-{r['partition']}"): r for r in pq.read_table(full_scan / "restart_prediction")
            .to_pylist()}
    planted = 0
    for broker, info in _expected()["brokers"].items():
        for name, facts in info["partitions"].items():
            row = rows.pop((broker, name))
            expected = facts.get("restart_prediction")
            if expected is None:  # nothing damaged: nothing discarded
                assert (row["bytes_discarded"], row["segments_deleted"], row["truncate_at_offset"]) == (0, 0, None)
                assert row["clean_shutdown"] is info["clean_shutdown"]
                continue
            planted += 1
            ours = {k: row[k] for k in expected}
            if ours["truncate_at_file"]:
                ours["truncate_at_file"] = Path(ours["truncate_at_file"]).name
            assert ours == expected, (broker, name)
        for name in info.get("deleted_partitions", {}):
            row = rows.pop((broker, name.split(".")[0]))
            assert row["reason"].endswith("directory marked for deletion (-delete): the broker loads it and deletes it")
    assert planted == 3 and rows == {}


def test_scan_and_file_walk_agree_on_every_sample_partition(full_scan: Path) -> None:
    """The scan's aggregation (spark/restart.py) and segment_state's own walk of the files feed predict() alike."""
    import pyarrow.parquet as pq
    from conftest import SAMPLE_LOGS

    from kforensics.parsers.checkpoints import read_offset_checkpoint

    table = {(r["broker"], r["topic"], r["partition"]): r for r in pq.read_table(full_scan / "restart_prediction")
             .to_pylist()}
    for broker, info in _expected()["brokers"].items():
        root = SAMPLE_LOGS / broker
        cps = {name: {(e.topic, e.partition): e.offset for e in read_offset_checkpoint(str(root / name))[0]}
               for name in ("recovery-point-offset-checkpoint", "log-start-offset-checkpoint",
                            "replication-offset-checkpoint")}
        for name in info["partitions"]:
            topic, partition = name.rsplit("-", 1)
            tp = (topic, int(partition))
            segs = tuple(segment_state(str(p), int(p.stem), has_offset_index=p.with_suffix(".index").exists())
                         for p in sorted((root / name).glob("*.log")))
            pred = predict(PartitionState(broker, topic, int(partition), segs, clean_shutdown=info["clean_shutdown"],
                                          recovery_point=cps["recovery-point-offset-checkpoint"].get(tp),
                                          log_start_offset=cps["log-start-offset-checkpoint"].get(tp),
                                          high_watermark=cps["replication-offset-checkpoint"].get(tp)))
            row = dict(table[(broker, topic, int(partition))])
            # what the copy lacks is the scan's coverage (issue 47), not the walk's: the samples lack nothing
            assert row.pop("offsets_not_seen") is None, (broker, name)
            assert row.pop("log_dir") == str(root), (broker, name)  # the one log dir of each sample broker
            assert pred.row == row, (broker, name)


def test_the_report_names_what_a_restart_would_discard_per_broker_first(full_scan: Path, tmp_path: Path) -> None:
    from rich.console import Console

    from kforensics.report import load_report, render_html, render_terminal

    report = load_report(str(full_scan))
    first = report.restart_brokers[0]
    assert (first["broker"], first["offsets_discarded"], first["committed_offsets_discarded"],
            first["segments_deleted"]) == ("broker-3", 45, 35, 1)
    assert {b["broker"]: b["partitions_losing_data"] for b in report.restart_brokers} == {
        "broker-1": 1, "broker-2": 0, "broker-3": 1}  # broker-1: damaged-0's torn tail (37 bytes)
    assert [(r["broker"], r["topic"], r["offsets_discarded"]) for r in report.restart_partitions] == [
        ("broker-1", "damaged", None), ("broker-3", "unflushed", "45-89")]
    console = Console(record=True, width=200)
    render_terminal(report, console)
    text = console.export_text()
    assert text.index("if each broker restarted now") < text.index("findings by kind")
    render_html(report, str(tmp_path / "r.html"))
    page = (tmp_path / "r.html").read_text()
    assert page.index("id='restart-brokers'") < page.index("id='findings-by-kind'") and "45-89" in page


# --- the scan on a built log dir: each gap of the audit, end to end ------------------------------------------

def _checkpoint(path: Path, entries: dict[tuple[str, int], int]) -> None:
    path.write_text("0\n" + f"{len(entries)}\n" + "".join(f"{t} {p} {o}\n" for (t, p), o in entries.items()))


def _partition(root: Path, name: str, segments: dict[int, bytes], *, index: bool = True,
               txnindex: bytes | None = None) -> Path:
    """A partition dir of `segments` (by base offset); `txnindex` is the first segment's."""
    d = root / name
    d.mkdir(parents=True)
    for base, data in segments.items():
        (d / f"{base:020d}.log").write_bytes(data)
        if index:
            (d / f"{base:020d}.index").write_bytes(b"")
            (d / f"{base:020d}.timeindex").write_bytes(b"")
    if txnindex is not None:
        (d / f"{min(segments):020d}.txnindex").write_bytes(txnindex)
    return d


def test_the_scan_predicts_each_rule_on_a_built_log_dir(spark, tmp_path: Path) -> None:
    import json

    import pyarrow.parquet as pq

    from kforensics.spark.jobs import run_scan

    entry = struct.Struct(">hqqqq")
    ok, bad, hole = _batch(0, 10), _batch(10, 5, corrupt=True), bytes(306)
    b = tmp_path / "b"  # no clean-shutdown marker
    _partition(b, "hole-0", {0: ok + hole + _batch(10, 5) + _batch(15, 5)})
    _partition(b, "magic-0", {0: ok + _flip_magic(_batch(10, 5), 3) + _batch(15, 5)})
    _partition(b, "noindex-0", {0: ok + bad + _batch(15, 5)}, index=False)
    _partition(b, "txnversion-0", {0: ok}, txnindex=entry.pack(1, 7, 0, 9, 0))
    # segment 10 holds a bad CRC below the recovery point (35, in segment 25: segments follow on, else the copy lacks
    # what lay between them and the scan judges the restart as not_judged, issue 47)
    damaged = {10: _batch(10, 5) + _batch(15, 5, corrupt=True) + _batch(20, 5), 25: _batch(25, 15)}
    _partition(b, "txnbelow-0", damaged, txnindex=entry.pack(0, 7, 0, 5, 0))
    _partition(b, "txnpartial-0", damaged, txnindex=entry.pack(0, 7, 12, 13, 12)[:30])
    _partition(b, "orders-0", {0: ok})
    future = _partition(b, "orders-0.0123456789abcdef0123456789abcdef-future", {0: ok + bad + _batch(15, 5)})
    _checkpoint(b / "recovery-point-offset-checkpoint", {
        ("hole", 0): 0, ("magic", 0): 0, ("noindex", 0): 20, ("txnversion", 0): 10, ("txnbelow", 0): 35,
        ("txnpartial", 0): 35, ("orders", 0): 0})
    _checkpoint(b / "replication-offset-checkpoint", {("hole", 0): 20, ("noindex", 0): 20})
    c = tmp_path / "c"  # a clean shutdown, and folders the broker cannot load
    _partition(c, "orders-0", {0: ok})
    (c / ".kafka_cleanshutdown").write_text("")
    (c / "lost+found").mkdir()
    (c / "remote-log-index-cache").mkdir()
    out = tmp_path / "out"
    run_scan(spark, [("b", str(b)), ("c", str(c))], str(out), headers_only=True)
    rows = {(r["broker"], r["topic"], r["dir_state"]): r for r in pq.read_table(out / "restart_prediction").to_pylist()}
    found = pq.read_table(out / "findings").to_pylist()

    def restart(broker: str, topic: str) -> list[tuple[str, int | None]]:
        return sorted((f["kind"], f["position"]) for f in found if f["kind"].startswith(("restart", "damage_below"))
                      and f["broker"] == broker and f["topic"] == topic)

    # 1. what lies behind a zero-filled hole is discarded, committed offsets too
    hole_row = rows[("b", "hole", "live")]
    assert (hole_row["offsets_discarded"], hole_row["committed_offsets_discarded"]) == ([10, 19], [10, 19])
    assert hole_row["bytes_discarded"] == 306 + 2 * len(_batch(10, 5))
    assert restart("b", "hole") == [("restart_would_truncate", len(ok))]
    # 2. a flipped magic byte passes recovery (the reader's unknown_magic stays)
    assert rows[("b", "magic", "live")]["bytes_discarded"] == 0 and restart("b", "magic") == []
    assert any(f["kind"] == "unknown_magic" and f["topic"] == "magic" for f in found)
    # 3. no .index: recovered while loading, cut, below the recovery point
    assert rows[("b", "noindex", "live")]["truncate_at_position"] == len(ok)
    assert restart("b", "noindex") == [("restart_would_truncate", len(ok))]
    # 5. .txnindex: version > 0 fails the load; an entry below the base offset recovers the segment (cut at its bad
    # CRC, though below the recovery point); a partial entry is not read: the damage is served
    (failed,) = [f for f in found if f["kind"] == "restart_would_fail" and f["topic"] == "txnversion"]
    assert failed["file"].endswith("00000000000000000000.txnindex") and failed["position"] == 0
    assert rows[("b", "txnversion", "live")]["restart_fails"] is True
    assert restart("b", "txnbelow") == [("restart_would_truncate", len(_batch(10, 5)))]
    assert rows[("b", "txnbelow", "live")]["offsets_discarded"] == [20, 24]
    assert restart("b", "txnpartial") == [("damage_below_recovery_point", len(_batch(10, 5)))]
    # 6. a -future dir is recovered with its own segments and orders-0's recovery point
    future_row = rows[("b", "orders", "future")]
    assert future_row["offsets_discarded"] == [15, 19] and future_row["reason"].startswith("no clean-shutdown marker")
    (cut,) = [f for f in found if f["kind"] == "restart_would_truncate" and f["file"].startswith(str(future))]
    assert json.loads(cut["details"])["dir_state"] == "future"
    assert rows[("b", "orders", "live")]["bytes_discarded"] == 0 and not rows[("b", "orders", "live")]["restart_fails"]
    # 4. broker c would not start: lost+found (its unknown_file says so, info: a copy often has one its broker never
    # had); Kafka's remote-log-index-cache is left alone
    assert not [f for f in found if f["kind"] == "restart_would_fail" and f["broker"] == "c"]
    (refused,) = [f for f in found if f["kind"] == "unknown_file" and f["broker"] == "c"]
    assert refused["topic"] is None and refused["file"] == str(c / "lost+found") and refused["severity"] == "info"
    assert json.loads(refused["details"]) == {"entry": "dir", "broker_would_not_start": True}
    assert rows[("c", "orders", "live")]["restart_fails"] is True
    assert "lost+found" in rows[("c", "orders", "live")]["reason"]
    assert not any(f["kind"] == "unknown_file" and "remote-log-index-cache" in (f["file"] or "") for f in found)
