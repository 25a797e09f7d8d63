"""The producer models and checks on small inline batch tables (spark/sql/data_batches.sql, producers.sql, the log
checks, producer_spans.sql, resend_candidates.sql, resend_batches.sql, resend_runs.sql and the python model resends):
one real sequence gap and silence on every legal case, zombie epochs, duplicates, the producers table and
re-sends."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F
from pyspark.testing import assertDataFrameEqual
from unit_frames import run_check, run_model, scan_of

from kforensics.spark import producers
from kforensics.spark.schemas import BATCH_FIELDS, PARTITION_KEY, RECORD_FIELDS, _schema, ddl

# a few inline rows each: the session as a small scan sets it (conftest.small_input)
pytestmark = pytest.mark.usefixtures("small_input")

BATCH_DDL = ddl(_schema([*PARTITION_KEY, *BATCH_FIELDS]))
COLUMNS = [name for name, _ in [*PARTITION_KEY, *BATCH_FIELDS]]


def _batch(base_offset: int, count: int, base_sequence: int, *, epoch: int = 0, pid: int = 7,
           leader_epoch: int = 0, control: bool = False) -> dict:
    last_sequence = -1 if control else (base_sequence + count - 1) % 2**31
    row = dict.fromkeys(COLUMNS)
    row.update(broker="b", topic="t", partition=0, file="t-0/0.log", segment_base_offset=0,
               position=base_offset * 100, size=100, magic=2, base_offset=base_offset,
               last_offset=base_offset + count - 1, count=count, partition_leader_epoch=leader_epoch,
               producer_id=pid, producer_epoch=epoch, base_sequence=-1 if control else base_sequence,
               last_sequence=last_sequence, is_transactional=control, is_control=control,
               control_type="COMMIT" if control else None, base_timestamp=0, max_timestamp=0, crc_valid=True)
    return row


def _gaps(spark, rows: list[dict]) -> list:
    batches = spark.createDataFrame([tuple(r[c] for c in COLUMNS) for r in rows], BATCH_DDL)
    found = run_check("sequence_gap", batches=batches)  # over data_batches, built from log_batches
    return found.select("kind", "offset", "details").collect()


def test_gap_is_reported_with_size_class(spark):
    rows = _gaps(spark, [_batch(0, 2, 0), _batch(2, 2, 2), _batch(4, 2, 40)])
    assert len(rows) == 1 and rows[0]["offset"] == 4
    assert '"expected_sequence":4' in rows[0]["details"] and '"size_class":"large"' in rows[0]["details"]


@pytest.mark.parametrize("case", [
    [_batch(0, 2, 2147483646), _batch(2, 2, 0)],                     # wraparound
    [_batch(0, 2, 0), _batch(2, 2, 0, epoch=1)],                      # new epoch starts at 0
    [_batch(0, 2, 500), _batch(2, 2, 502)],                           # history starts mid-sequence
    [_batch(0, 2, 0), _batch(2, 1, 0, control=True), _batch(3, 2, 2)],  # marker outside the chain
])
def test_legal_histories_are_silent(spark, case):
    assert _gaps(spark, case) == []


def _zombies(spark, rows: list[dict]) -> list:
    batches = spark.createDataFrame([tuple(r[c] for c in COLUMNS) for r in rows], BATCH_DDL)
    return run_check("zombie_epoch", batches=batches).select("offset", "details").collect()


def test_zombie_epoch_after_newer_epoch(spark):
    rows = _zombies(spark, [_batch(0, 2, 0, epoch=3), _batch(2, 2, 0, epoch=4), _batch(4, 2, 2, epoch=3)])
    assert [r["offset"] for r in rows] == [4]
    assert '"newer_epoch":4' in rows[0]["details"] and '"newer_epoch_first_offset":2' in rows[0]["details"]


def test_kip890_marker_at_next_epoch_is_silent(spark):
    marker = _batch(2, 1, 0, epoch=4, control=True)
    assert _zombies(spark, [_batch(0, 2, 0, epoch=3), marker, _batch(3, 2, 0, epoch=4)]) == []


def _frame(spark, rows: list[dict]):
    return spark.createDataFrame([tuple(r[c] for c in COLUMNS) for r in rows], BATCH_DDL)


def test_duplicate_sequences_reported_once_at_the_second_copy(spark):
    rows = [_batch(0, 2, 0), _batch(2, 2, 2), _batch(4, 2, 2), _batch(6, 2, 2),  # 2-3 written three times
            _batch(8, 2, 0, epoch=1),                                           # a new epoch starts at 0 again
            _batch(10, 2, 2, pid=8)]                                            # another producer's 2-3
    found = run_check("duplicate_sequence", data_batches=_frame(spark, rows)).select(
        "kind", "severity", "offset", "position", "producer_id", "producer_epoch",
        F.get_json_object("details", "$.sequence_range").alias("sequence_range"),
        F.get_json_object("details", "$.offsets").alias("offsets"))
    expected = spark.createDataFrame([("duplicate_sequence", "error", 4, 400, 7, 0, "[2,3]", "[2,4,6]")],
                                     "kind string, severity string, offset bigint, position bigint, "
                                     "producer_id bigint, producer_epoch int, sequence_range string, offsets string")
    assertDataFrameEqual(found, expected)


def test_producers_table(spark):
    def timed(row: dict, base: int, top: int) -> dict:
        return {**row, "base_timestamp": base, "max_timestamp": top}

    txn = {**_batch(5, 3, 0, pid=8), "is_transactional": True}
    rows = [timed(_batch(0, 2, 0), 10, 15), timed(_batch(2, 2, 2), 20, 25), timed(_batch(4, 1, 0, epoch=1), 30, 30),
            timed(txn, 40, 45)]
    expected = spark.createDataFrame([
        ("b", "t", 0, 7, 0, 0, 3, 0, 3, 2, 4, 10, 25, False),
        ("b", "t", 0, 7, 1, 4, 4, 0, 0, 1, 1, 30, 30, False),
        ("b", "t", 0, 8, 0, 5, 7, 0, 2, 1, 3, 40, 45, True),
    ], "broker string, topic string, partition int, producer_id bigint, producer_epoch int, first_offset bigint, "
       "last_offset bigint, first_sequence int, last_sequence int, batch_count bigint, record_count bigint, "
       "first_timestamp bigint, last_timestamp bigint, is_transactional boolean")
    assertDataFrameEqual(run_model("producers", data_batches=_frame(spark, rows)), expected)


RECORD_DDL = ddl(_schema([*PARTITION_KEY, *RECORD_FIELDS]))


def _rec(partition: int, offset: int, pid: int, ts: int, n: int) -> tuple:
    """A record whose content (key and value hashes) is number n."""
    return ("b", "t", partition, offset, ts, pid, 0, 100 + n, 200 + n, 1, 1)


RESEND_DETAILS = ("producer_ids", "matches", "original_offsets", "resent_offsets", "ms_between")


def _resends(spark, rows: list[tuple], *, min_records: int = 3, tail: int = 10_000,
             window_ms: int = 15 * 60_000) -> list[tuple]:
    """The content_duplicate findings of `rows`, each record its own batch: candidates from the batch headers,
    then the records of the batches resend_batches selects (as the scan's executors would decode them: here the
    inline records of those batches, given as resend_records)."""
    params = {"resend_window_ms": window_ms, "resend_tail": tail, "resend_min_records": min_records}
    records = spark.createDataFrame(rows, RECORD_DDL)
    batches = spark.createDataFrame([_one_record_batch(r) for r in rows], BATCH_DDL)
    selected = scan_of(params, resend_data=batches).table("resend_batches")
    read = records.join(selected.select("broker", "topic", "partition", (F.col("position") / 100).cast("long")
                                        .alias("offset")), ["broker", "topic", "partition", "offset"], "left_semi")
    found = run_check("content_duplicate", params, resend_data=batches, resend_records=read).select(
        "kind", "severity", "partition", "file", "offset", "producer_id",
        *[F.get_json_object("details", f"$.{k}").alias(k) for k in RESEND_DETAILS])
    return sorted(tuple(r) for r in found.collect())


def _one_record_batch(rec: tuple) -> tuple:
    broker, topic, partition, offset, ts, pid, epoch = rec[:7]
    row = _batch(offset, 1, offset, pid=pid, epoch=epoch)
    row.update(partition=partition, base_timestamp=ts, max_timestamp=ts, timestamp_type="CreateTime")
    return tuple(row[c] for c in COLUMNS)


def test_resend_batches_are_the_heads_and_tails_only(spark):
    """Producer 1 (100 records in batches of 10), then producer 2 (100 records): with a tail of 15, only the
    two batches holding producer 1's last 15 records and the two holding producer 2's first 15 are read;
    producer 3 wrote nothing afterwards and nobody before it, so none of its batches is."""
    rows = [_batch(b * 10, 10, b * 10, pid=1) for b in range(10)]
    rows += [_batch(100 + b * 10, 10, b * 10, pid=2) for b in range(10)]
    rows += [_batch(200 + b * 10, 10, b * 10, pid=3) for b in range(3)]
    for r in rows:
        r.update(timestamp_type="CreateTime", base_timestamp=r["base_offset"], max_timestamp=r["last_offset"])
    batches = spark.createDataFrame([tuple(r[c] for c in COLUMNS) for r in rows], BATCH_DDL)
    scan = scan_of({"resend_window_ms": 0}, resend_data=batches)
    spans, pairs = scan.table("producer_spans"), scan.table("resend_candidates")
    assert sorted((r.pid_a, r.pid_b) for r in pairs.collect()) == [(1, 2), (1, 3), (2, 3)]
    only_1_2 = pairs.filter("pid_a = 1 and pid_b = 2")
    selected = run_model("resend_batches", {"resend_tail": 15}, resend_data=batches, resend_candidates=only_1_2)
    assert sorted(r.position // 100 for r in selected.collect()) == [80, 90, 100, 110]
    assert {(r.producer_id, r.first_offset, r.last_offset, r.first_ts, r.last_ts, r.record_count)
            for r in spans.collect()} == {(1, 0, 99, 0, 99, 100), (2, 100, 199, 100, 199, 100),
                                          (3, 200, 229, 200, 229, 30)}


def test_content_duplicates(spark):
    minute = 60_000
    rows = [
        # 0: producer 2 re-sends three of producer 1's records (its first three of four) 10 s after its last write.
        *[_rec(0, o, 1, 1000 + o, o) for o in range(4)], *[_rec(0, 10 + n, 2, 11_000 + n, n) for n in range(3)],
        # 1: two equal records are ordinary.
        *[_rec(1, o, 1, 1000 + o, o) for o in range(4)], *[_rec(1, 10 + n, 2, 11_000 + n, n) for n in range(2)],
        # 2: a slow restart: the re-send of the last three comes 5 minutes later (within the 15-minute window).
        *[_rec(2, o, 1, 1000 + o, o) for o in range(4)],
        *[_rec(2, 10 + n, 2, 1003 + 5 * minute + n, n + 1) for n in range(3)],
        # 3: producer 2 started before producer 1 stopped: not a re-send after it.
        *[_rec(3, o, 1, 1000 + o, o) for o in (0, 1, 2, 20)], *[_rec(3, 10 + n, 2, 1010 + n, n) for n in range(3)],
        # 4: the replay comes 20 minutes after producer 1's last write: beyond the window.
        *[_rec(4, o, 1, 1000 + o, o) for o in range(4)],
        *[_rec(4, 10 + n, 2, 1003 + 20 * minute + n, n + 1) for n in range(3)],
        # 5: the re-sent run is followed by new records; only the run counts.
        *[_rec(5, o, 1, 1000 + o, o) for o in range(6)],
        *[_rec(5, 10 + n, 2, 9000 + n, (2, 3, 4, 5, 50, 51)[n]) for n in range(6)],
    ]
    assert _resends(spark, rows) == [
        ("content_duplicate", "warning", 0, None, 10, 2, "[1,2]", "3", "[0,2]", "[10,12]", "9997"),
        ("content_duplicate", "warning", 2, None, 10, 2, "[1,2]", "3", "[1,3]", "[10,12]", str(5 * minute)),
        ("content_duplicate", "warning", 5, None, 10, 2, "[1,2]", "4", "[2,5]", "[10,13]", "7995"),
    ]
    # --resend-window 0: no limit, the 20-minute replay is found too; a shorter tail misses what lies before it
    assert [r[2] for r in _resends(spark, rows, window_ms=0)] == [0, 2, 4, 5]
    assert [r[2] for r in _resends(spark, rows, tail=3)] == [2]
    assert [r[2] for r in _resends(spark, rows, min_records=4)] == [5]


def test_repetitive_streams_are_no_resend_and_matches_never_exceed_what_was_written(spark):
    """Two heartbeat producers one after the other, cycling over 50 keys x 2 values: every run of the second
    stands many times in the first's tail, which is the stream's nature. A genuine re-send of unique records at
    the end of such a stream is still found, counted once per re-sent record."""
    cycle = 100
    rows = [_rec(0, o, 1, o, o % cycle) for o in range(2000)]
    rows += [_rec(0, 2000 + o, 2, 2000 + o, o % cycle) for o in range(2000)]
    assert _resends(spark, rows) == []
    unique = [_rec(1, o, 1, o, 1000 + o) for o in range(50)]  # unique payloads: a real re-send of the last 20
    unique += [_rec(1, 50 + n, 2, 60 + n, 1030 + n) for n in range(20)]
    unique += [_rec(1, 70 + o, 2, 80 + o, o % cycle) for o in range(300)]
    (found,) = _resends(spark, unique)
    assert found[2] == 1 and found[7] == "20" and found[8] == "[30,49]" and found[9] == "[50,69]"


def test_longest_prefix_matches() -> None:
    z = producers.longest_prefix_matches([1, 2, 3], [0, 1, 2, 3, 1, 2, 4, 1])
    assert z == [0, 3, 0, 0, 2, 0, 0, 1]
    assert producers.longest_prefix_matches([], [1, 2]) == [0, 0]
    assert producers.longest_prefix_matches([7, 7], [7, 7, 7]) == [2, 2, 1]


def test_coordinator_written_batches_have_no_sequence_rules(spark):
    """TxnOffsetCommit batches in __consumer_offsets carry the producer's id and epoch but base sequence 0 every time
    (the coordinator's appends are never sequence-checked): two transactions of one TV1 epoch are no duplicate, and a
    later one no gap; the same batches in a data topic are both."""
    commits = [_batch(0, 1, 0), _batch(1, 1, 0, control=True), _batch(2, 1, 0), _batch(3, 1, 0, control=True),
               {**_batch(4, 2, 5)}]
    for row in commits:
        row["topic"] = "__consumer_offsets"
    data = run_model("data_batches", batches=_frame(spark, commits))
    assert run_check("duplicate_sequence", data_batches=data).count() == 0
    assert run_check("sequence_gap", data_batches=data).count() == 0
    as_data = run_model("data_batches", batches=_frame(spark, [{**r, "topic": "t"} for r in commits]))
    assert run_check("duplicate_sequence", data_batches=as_data).count() == 1
    assert run_check("sequence_gap", data_batches=as_data).count() == 1
