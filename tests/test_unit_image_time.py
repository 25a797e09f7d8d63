"""The image time (spark/sql/image_times.sql) and the rules that judge an age at it (issue 50): hanging_transaction,
cleaner_blocked, offset_commit_pending, remote_segment_stuck, marker_missing and transaction_stuck_preparing, on
small inline tables. A quiet partition (nothing written after the transaction) is judged at its broker's image time,
not at its own last write; a transaction a second old at the image time is silent."""

from __future__ import annotations

import json

import pytest
from test_unit_coordinator import _records, _txn_record
from unit_frames import batch, batches, findings_view, marker, run_check, run_model, txn_data, with_timeouts

# a few inline rows each: the session as a small scan sets it (conftest.small_input)
pytestmark = pytest.mark.usefixtures("small_input")

MIN, HOUR = 60_000, 3_600_000
T0 = 1_700_000_000_000  # a data batch's time
LOG = "t-0/00000000000000000000.log"
IMAGE = "broker string, image_time bigint"


def _details(df) -> list[dict]:
    return [json.loads(r["details"]) for r in df.orderBy("broker", "topic", "partition", "offset").collect()]


def _image(spark, rows=(("b1", T0 + 2 * HOUR),)):
    return spark.createDataFrame(list(rows), IMAGE)


# --- the image time --------------------------------------------------------------------------------------------

def test_image_time_is_the_newest_timestamp_and_a_producer_clock_far_ahead_is_set_aside(spark):
    rows = [
        # b1: a CreateTime half an hour past the broker's own newest time: the image time (a producer's clock)
        batch(0, broker="b1", topic="__consumer_offsets", max_timestamp=T0, file="__consumer_offsets-0/0.log"),
        batch(0, broker="b1", max_timestamp=T0 + 30 * MIN),
        # b2: a producer's clock five hours ahead (beyond log.message.timestamp.after.max.ms): set aside
        batch(0, broker="b2", topic="__transaction_state", partition=4, max_timestamp=T0),
        batch(0, broker="b2", partition=1, max_timestamp=T0 + 5 * HOUR),
        batch(1, broker="b2", partition=1, max_timestamp=T0 + 10 * MIN),
        # b2: a LogAppendTime batch is the broker's clock, a torn batch's timestamp is no time at all
        batch(0, broker="b2", topic="logs", timestamp_type="LogAppendTime", max_timestamp=T0 + 20 * MIN),
        batch(1, broker="b2", topic="logs", crc_valid=False, max_timestamp=T0 + 50 * HOUR),
        # b3: CreateTime only (no internal topic, no metadata): nothing challenges it
        batch(0, broker="b3", max_timestamp=T0 + 9 * HOUR),
        batch(1, broker="b3", timestamp_type="NoTimestampType", max_timestamp=-1),
    ]
    metadata = spark.createDataFrame([("b4", "__cluster_metadata-0/00000000000000000000.log", T0 + 1)],
                                     "metadata_broker string, file string, timestamp bigint")
    brokers = spark.createDataFrame([("b1", "c", 1), ("b2", "c", 2), ("b3", "c", 3), ("b4", "c", 4), ("b5", "c", 5)],
                                    "broker string, cluster_id string, node_id int")
    tables = dict(every_dir_batches=batches(spark, rows), metadata_records=metadata, brokers=brokers)
    got = {r["broker"]: r.asDict() for r in run_model("image_times", **tables).collect()}
    assert {b: (r["image_time"], r["source"], r["clock"], r["set_aside_time"], r["set_aside_source"])
            for b, r in got.items()} == {
        "b1": (T0 + 30 * MIN, "t-0", "producer", None, None),
        "b2": (T0 + 20 * MIN, "logs-0", "broker", T0 + 5 * HOUR, "t-1"),
        "b3": (T0 + 9 * HOUR, "t-0", "producer", None, None),
        "b4": (T0 + 1, "__cluster_metadata-0", "broker", None, None),
        "b5": (None, None, None, None, None),  # a broker whose files carry no timestamp
    }
    assert got["b2"]["newest_broker_time"] == T0 + 20 * MIN and got["b1"]["file"] == LOG
    # --image-time sets it for every broker, the estimate kept beside it
    over = {r["broker"]: r for r in run_model("image_times", {"image_time_ms": T0 + 99}, **tables).collect()}
    assert {b: (r["image_time"], r["source"], r["clock"]) for b, r in over.items()} == {
        b: (T0 + 99, "--image-time", "override") for b in ("b1", "b2", "b3", "b4", "b5")}
    assert over["b2"]["estimated_time"] == T0 + 20 * MIN


# --- ages judged at the image time -----------------------------------------------------------------------------

def test_a_quiet_partitions_stranded_transaction_hangs_at_the_image_time(spark):
    """End to end from batches: t-0 got nothing after its transaction's data (its own last write is the transaction),
    __consumer_offsets on the same broker was written two hours later: the image time judges it."""
    quiet = [txn_data(7, 0, 2, max_timestamp=T0, base_timestamp=T0),
             batch(0, topic="__consumer_offsets", max_timestamp=T0 + 2 * HOUR, file="__consumer_offsets-0/0.log")]
    found = run_check("hanging_transaction", batches=batches(spark, quiet), every_dir_batches=batches(spark, quiet))
    assert [(r["kind"], r["topic"], r["offset"], r["producer_id"]) for r in found.collect()] == [
        ("hanging_transaction", "t", 0, 7)]
    [d] = _details(found)
    assert (d["age_ms"], d["image_time"], d["partition_last_write"], d["age_ms_at_log_end"]) == (
        2 * HOUR, T0 + 2 * HOUR, T0, 0)
    # the same disk imaged a second after the transaction opened: in flight, silent
    young = [txn_data(7, 0, 2, max_timestamp=T0, base_timestamp=T0),
             batch(0, topic="__consumer_offsets", max_timestamp=T0 + 1000, file="__consumer_offsets-0/0.log")]
    assert run_check("hanging_transaction", batches=batches(spark, young),
                     every_dir_batches=batches(spark, young)).count() == 0


TXNS = ("broker string, topic string, partition int, producer_id bigint, producer_epoch int, outcome string, "
        "first_offset bigint, last_data_offset bigint, first_timestamp bigint, file string, position bigint")
ENDS = ("broker string, topic string, partition int, log_end_offset bigint, log_end_timestamp bigint, "
        "high_watermark bigint, cleaner_offset bigint")


@pytest.mark.parametrize("image_time, found", [(T0 + 2 * HOUR, True), (T0 + 1000, False)])
def test_hanging_and_cleaner_blocked_judge_the_image_time(spark, image_time, found):
    # one open transaction at offset 10 of a compacted, quiet partition: its last write is the transaction's
    txns = with_timeouts(spark.createDataFrame([("b1", "t", 0, 7, 0, "OPEN", 10, 11, T0, LOG, 1000)], TXNS))
    ends = spark.createDataFrame([("b1", "t", 0, 12, T0, None, 4)], ENDS)
    rows = [txn_data(7, 10, 2, max_timestamp=T0)]
    tables = dict(timed_transactions=txns, partition_ends=ends, image_times=_image(spark, [("b1", image_time)]))
    hanging = run_check("hanging_transaction", **tables)
    blocked = run_check("cleaner_blocked", log_batches=batches(spark, rows), **tables)
    assert (hanging.count(), blocked.count()) == ((1, 1) if found else (0, 0))
    if found:
        assert _details(blocked)[0]["age_ms"] == 2 * HOUR
        assert _details(blocked)[0]["partition_last_write"] == T0
        assert _details(hanging)[0]["image_time"] == image_time


def test_offset_commit_pending_judges_the_serving_brokers_image_time(spark):
    commits = spark.createDataFrame(
        [("c", "b1", "__consumer_offsets", 0, "g", 9, 40, 40, "__consumer_offsets-0/0.log", 400, 0, T0, "d", 1, 50,
          "OPEN")],
        "cluster_id string, broker string, topic string, partition int, group_id string, producer_id bigint, "
        "txn_first_offset bigint, offset bigint, file string, position bigint, producer_epoch int, "
        "txn_first_timestamp bigint, commit_topic string, commit_partition int, committed_offset bigint, "
        "transaction_outcome string")
    serving = spark.createDataFrame([("c", "__consumer_offsets", 0, "b1", 0, 41, T0, "longest")],
                                    "cluster_id string, topic string, partition int, serving_broker string, "
                                    "log_start_offset bigint, log_end_offset bigint, log_end_timestamp bigint, "
                                    "source string")
    for image_time, expected in ((T0 + HOUR, 1), (T0 + 1000, 0)):
        found = run_check("offset_commit_pending", live_commits=commits, serving_replicas=serving,
                          image_times=_image(spark, [("b1", image_time)]))
        assert found.count() == expected
    d = _details(run_check("offset_commit_pending", live_commits=commits, serving_replicas=serving,
                           image_times=_image(spark, [("b1", T0 + HOUR)])))[0]
    assert (d["age_ms"], d["age_ms_at_log_end"], d["partition_last_write"]) == (HOUR, 0, T0)


def test_remote_segment_stuck_judges_the_image_time(spark):
    from test_spark_remote_storage import EVENTS, _event

    # the partition's only event: a copy started, nothing since (a quiet partition's metadata)
    events = spark.createDataFrame([_event(0, "segment", "s1", "COPY_SEGMENT_STARTED", 10, 0, 99, "0@0")], EVENTS)
    broker = "b1"
    stuck = run_check("remote_segment_stuck", remote_log_events=events,
                      image_times=_image(spark, [(broker, 10 + 2 * HOUR)]))
    assert [(d["remote_segment_id"], d["stuck_ms"], d["newest_event_at"], d["image_time"])
            for d in _details(stuck)] == [("s1", 2 * HOUR, 10, 10 + 2 * HOUR)]
    assert run_check("remote_segment_stuck", remote_log_events=events,
                     image_times=_image(spark, [(broker, 10 + 1000)])).count() == 0


# --- the coordinator's transactions at the image time --------------------------------------------------------------

TSP_LOG = "__transaction_state-3/00000000000000000000.log"


def _coordinator(spark, records: list[dict], data: list[dict], image_time: int) -> dict:
    """The tables the coordinator family reads: `records` of __transaction_state-3 on b1 (cluster c), the data
    partitions t-0 and t-1 on b1 with `data`, b1 imaged at `image_time`."""
    longest = spark.createDataFrame(
        [("c", "__transaction_state", 3, "b1", 0, 10, T0), ("c", "t", 0, "b1", 0, 10, T0),
         ("c", "t", 1, "b1", 0, 10, T0)],
        "cluster_id string, topic string, partition int, longest_broker string, log_start_offset bigint, "
        "log_end_offset bigint, log_end_timestamp bigint")
    ends = spark.createDataFrame([("b1", "t", p, "c", 0, 10, T0, None) for p in (0, 1)],
                                 "broker string, topic string, partition int, cluster_id string, "
                                 "log_start_offset bigint, log_end_offset bigint, log_end_timestamp bigint, "
                                 "cleaned_up_to bigint")
    brokers = spark.createDataFrame([("b1", "c", 1)], "broker string, cluster_id string, node_id int")
    return dict(coordinator_records=_records(spark, records, broker="b1", partition=3, file=TSP_LOG),
                longest_replicas=longest, replica_ends=ends, brokers=brokers,
                clustered_batches=batches(spark, [{**r, "cluster_id": "c"} for r in data], clustered=True),
                image_times=_image(spark, [("b1", image_time)]))


def test_a_quiet_partition_missing_its_marker_is_found_at_the_image_time(spark):
    """The coordinator completed the transaction at T0 + 1 s; t-1 got its data, never its marker, and nothing after:
    its own last write (T0) is before the completion, the broker's image time hours after."""
    records = [_txn_record(0, "app", 10, 0, "Ongoing", "t-0,t-1", T0, T0),
               _txn_record(1, "app", 10, 0, "PrepareCommit", "t-0,t-1", T0, T0 + 500),
               _txn_record(2, "app", 10, 0, "CompleteCommit", None, T0, T0 + 1000)]
    data = [txn_data(10, 0, max_timestamp=T0), marker(10, 1, "COMMIT", max_timestamp=T0 + 800),
            txn_data(10, 0, partition=1, max_timestamp=T0)]
    found = run_check("marker_missing", **_coordinator(spark, records, data, T0 + 3 * HOUR))
    assert [(r["kind"], r["topic"], r["partition"], r["offset"]) for r in found.collect()] == [
        ("marker_missing", "t", 1, 0)]
    assert _details(found)[0]["partition_last_write"] == T0
    # imaged before the completion: the marker was not due yet
    assert run_check("marker_missing", **_coordinator(spark, records, data, T0 + 900)).count() == 0


def _prepared(prepared_at: int) -> list[dict]:
    """A Transactions V2 transaction of `app` on t-0 and t-1 (data epoch 5), PrepareCommit at `prepared_at` (epoch
    6, its markers'), never completed."""
    return [_txn_record(0, "app", 10, 5, "Ongoing", "t-0,t-1", T0, T0, tv=2),
            _txn_record(1, "app", 10, 6, "PrepareCommit", "t-0,t-1", T0, prepared_at, tv=2)]


DATA = [txn_data(10, 0, epoch=5, max_timestamp=T0), marker(10, 1, "COMMIT", epoch=6, max_timestamp=T0 + 900),
        txn_data(10, 0, epoch=5, partition=1, max_timestamp=T0)]


def test_a_transaction_stuck_in_prepare_commit_for_hours_is_found(spark):
    found = run_check("transaction_stuck_preparing", **_coordinator(spark, _prepared(T0 + 500), DATA, T0 + 3 * HOUR))
    rows = found.collect()
    assert [(r["kind"], r["severity"], r["broker"], r["topic"], r["partition"], r["offset"], r["producer_id"],
             r["producer_epoch"]) for r in rows] == [
        ("transaction_stuck_preparing", "error", "b1", "__transaction_state", 3, 1, 10, 6)]
    [d] = _details(found)
    assert d["state"] == "PrepareCommit" and d["transaction_version"] == 2
    assert (d["prepared_at"], d["age_ms"], d["transaction_timeout_ms"]) == (T0 + 500, 3 * HOUR - 500, 60_000)
    assert d["partitions"] == ["t-0", "t-1"]
    assert d["partitions_with_marker"] == ["t-0 on b1"] and d["partitions_without_marker"] == ["t-1 on b1"]
    # the prepared transaction is no missing marker nor a mismatch: that rule waits for its completion
    assert run_check("marker", **_coordinator(spark, _prepared(T0 + 500), DATA, T0 + 3 * HOUR)).count() == 0


def test_a_transaction_prepared_a_second_before_the_image_is_silent(spark):
    assert run_check("transaction_stuck_preparing",
                     **_coordinator(spark, _prepared(T0 + 500), DATA, T0 + 1500)).count() == 0
    # completed after all: silent however old
    done = [*_prepared(T0 + 500), _txn_record(2, "app", 10, 6, "CompleteCommit", None, T0, T0 + 1000, tv=2)]
    data = [*DATA, marker(10, 1, "COMMIT", epoch=6, partition=1, max_timestamp=T0 + 900)]
    assert run_check("transaction_stuck_preparing", **_coordinator(spark, done, data, T0 + 3 * HOUR)).count() == 0


def test_findings_view_reads_the_new_kind(spark):
    """transaction_stuck_preparing's rows carry the findings columns in their order (the family's union)."""
    found = run_check("coordinator", **_coordinator(spark, _prepared(T0 + 500), DATA, T0 + 3 * HOUR))
    assert [r["kind"] for r in findings_view(found).collect()] == ["transaction_stuck_preparing"]


# --- --image-time on the command line ------------------------------------------------------------------------------

def test_image_time_on_the_command_line_changes_the_verdict(spark, tmp_path) -> None:
    """A broker disk whose only partition holds a transaction opened at T0 and nothing after it: imaged, by its own
    files, at T0 (in flight, silent); told `--image-time` an hour later (epoch ms or ISO-8601 UTC), it hangs. The
    manifest and the image_times table say which moment was used."""
    import struct
    from datetime import UTC, datetime

    import pyarrow.parquet as pq
    from click.testing import CliRunner
    from kafka.record.default_records import DefaultRecordBatchBuilder

    from kforensics.cli import main
    from kforensics.scan_output import read_manifest

    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=True, producer_id=42,
                                        producer_epoch=0, base_sequence=0, batch_size=1 << 30)
    for i in range(3):
        builder.append(i, timestamp=T0 + i, key=b"k%d" % i, value=b"v", headers=[])
    data = bytearray(builder.build())
    struct.pack_into(">q", data, 0, 0)  # base offset 0
    partition = tmp_path / "disk" / "orders-0"
    partition.mkdir(parents=True)
    (partition / "00000000000000000000.log").write_bytes(bytes(data))

    def scan(out: str, *more: str) -> list[dict]:
        result = CliRunner().invoke(main, ["scan", f"b1={tmp_path / 'disk'}", "--out", str(tmp_path / out), "--json",
                                           *more])
        assert result.exit_code in (0, 1), result.output
        return [json.loads(line) for line in result.stdout.splitlines()]

    assert not [f for f in scan("own") if f["kind"] == "hanging_transaction"]
    [own] = read_manifest(str(tmp_path / "own")).image_times
    assert (own["broker"], own["image_time"], own["source"], own["clock"]) == ("b1", T0 + 2, "orders-0", "producer")

    later = datetime.fromtimestamp((T0 + HOUR) / 1000, UTC).isoformat().replace("+00:00", "Z")
    for given in (later, str(T0 + HOUR)):
        hanging = [f for f in scan(f"told-{given[:4]}", "--image-time", given) if f["kind"] == "hanging_transaction"]
        assert [(f["broker"], f["topic"], f["offset"], f["producer_id"]) for f in hanging] == [("b1", "orders", 0, 42)]
        # details inline; a transaction's time is its first batch's max timestamp (T0 + 2)
        assert (hanging[0]["age_ms"], hanging[0]["partition_last_write"]) == (HOUR - 2, T0 + 2)
    [told] = pq.read_table(tmp_path / f"told-{str(T0 + HOUR)[:4]}" / "image_times").to_pylist()
    assert (told["image_time"], told["clock"], told["estimated_time"]) == (T0 + HOUR, "override", T0 + 2)
    bad = CliRunner().invoke(main, ["scan", f"b1={tmp_path / 'disk'}", "--out", str(tmp_path / "bad"),
                                    "--image-time", "yesterday"])
    assert bad.exit_code == 2 and "yesterday" in bad.output
