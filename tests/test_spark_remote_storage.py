"""The tiered-storage models (spark/sql/remote_segments.sql, remote_partition_deletes.sql, finished_copies.sql,
local_logs.sql, epoch_ranges.sql, range_pairs.sql and the remote checks) on small inline DataFrames of
`__remote_log_metadata` events (the sample scan is in test_scan.py)."""

from __future__ import annotations

import json

import pytest
from pyspark.testing import assertDataFrameEqual
from unit_frames import run_check, run_model

# a few inline rows each: the session as a small scan sets it (conftest.small_input)
pytestmark = pytest.mark.usefixtures("small_input")

EVENTS = ("broker string, topic string, partition int, metadata_partition int, file string, position bigint, "
          "offset bigint, timestamp bigint, record_type string, topic_id string, remote_segment_id string, "
          "start_offset bigint, end_offset bigint, max_timestamp bigint, segment_leader_epochs string, size bigint, "
          "state string, broker_id int, event_timestamp bigint, broker_leader_epoch int, kind string, severity string, "
          "message string, details string")
F = "m.log"


def _event(offset: int, record_type: str, seg: str, state: str, at: int, start=None, end=None, epochs=None,
           topic="t", topic_id="T1", broker="b1", broker_leader_epoch=None) -> tuple:
    return (broker, topic, 0, 3, F, offset * 100, offset, at, record_type, topic_id, seg, start, end,
            None if start is None else at - 1, epochs, None if start is None else 1000, state,
            1, at, broker_leader_epoch, None, None, None, None)


def _events(spark, *specs) -> object:
    """(segment id, start, end, epochs, [(state, at), ...]) -> the remote_log_events of those segments."""
    rows, offset = [], 0
    for seg, start, end, epochs, events in specs:
        for i, (state, at) in enumerate(events):
            rows.append(_event(offset, "segment" if i == 0 else "segment_update", seg, state, at,
                               *((start, end, epochs) if i == 0 else ())))
            offset += 1
    return spark.createDataFrame(rows, EVENTS)


def _segments(spark, *specs) -> object:
    """(segment id, start, end, epochs, [(state, at), ...]) -> the remote_segments table, via the events."""
    return run_model("remote_segments", remote_log_events=_events(spark, *specs))


def _brokers(spark):
    return spark.createDataFrame([("b1", "c")], "broker string, cluster_id string")


def _tiered(spark, events, local_start: int, topic_id: str = "T1", epochs=None) -> dict:
    """The input tables of a scan of these metadata events and a local log of t-0 on b1 from `local_start` (two
    segments; its partition.metadata names `topic_id`), with its leader-epoch-checkpoint `epochs`."""
    segments = spark.createDataFrame([("b1", "t", 0, local_start, local_start),
                                      ("b1", "t", 0, local_start + 50, local_start + 50)],
                                     "broker string, topic string, partition int, base_offset bigint, "
                                     "first_batch_base_offset bigint")
    ids = spark.createDataFrame([("b1", "t", 0, topic_id)], "broker string, topic string, partition int, topic_id string")
    tables = {"remote_log_events": events, "brokers": _brokers(spark), "segments": segments,
              "partition_topic_ids": ids}
    return {**tables, "leader_epochs": epochs} if epochs is not None else tables


def _mismatches(found, against: str):
    """remote_leader_epoch_mismatch findings judged `against` the leader-epoch-checkpoint or the remote segments."""
    return found.where(f"get_json_object(details, '$.against') = '{against}'")


def _details(df) -> list[dict]:
    return sorted((json.loads(r["details"]) for r in df.collect()), key=lambda d: json.dumps(d, sort_keys=True))


def test_events_fold_into_one_row_per_segment_with_its_final_state(spark) -> None:
    table = _segments(spark, ("s1", 0, 99, "0@0, 1@60", [("COPY_SEGMENT_STARTED", 10), ("COPY_SEGMENT_FINISHED", 20),
                                                          ("DELETE_SEGMENT_STARTED", 90)]))
    expected = spark.createDataFrame(
        [("b1", "t", 0, "T1", "s1", 0, 99, 9, "0@0, 1@60", 1000, "DELETE_SEGMENT_STARTED", 1, 1, 10, 90, 3, F, 200)],
        "broker string, topic string, partition int, topic_id string, remote_segment_id string, start_offset bigint, "
        "end_offset bigint, max_timestamp bigint, segment_leader_epochs string, size bigint, state string, "
        "broker_id int, broker_leader_epoch int, first_event_at bigint, last_event_at bigint, event_count bigint, "
        "file string, position bigint")
    assertDataFrameEqual(table, expected)
    deletes = spark.createDataFrame([_event(0, "partition_delete", None, "DELETE_PARTITION_MARKED", 5)], EVENTS)
    assert [r["state"] for r in run_model("remote_partition_deletes", remote_log_events=deletes).collect()] == [
        "DELETE_PARTITION_MARKED"]
    # a RemoteLogSegmentMetadataRecord v1 names the leader epoch it was copied under: that, not the entries' highest
    v1 = spark.createDataFrame([_event(0, "segment", "s1", "COPY_SEGMENT_STARTED", 10, 0, 99, "0@0, 1@60",
                                       broker_leader_epoch=7),
                                _event(1, "segment_update", "s1", "COPY_SEGMENT_FINISHED", 20, broker_leader_epoch=8)],
                               EVENTS)
    assert [r["broker_leader_epoch"] for r in run_model("remote_segments", remote_log_events=v1).collect()] == [7]


def test_gap_and_stuck_copy_found_and_a_sound_tiered_partition_is_silent(spark) -> None:
    done = [("COPY_SEGMENT_STARTED", 0), ("COPY_SEGMENT_FINISHED", 1)]
    broken = _events(spark, ("s1", 0, 99, "0@0", done), ("s2", 100, 149, "0@100", [("COPY_SEGMENT_STARTED", 10)]),
                     ("s3", 150, 199, "0@150", done), ("s4", 260, 299, "0@260", [("COPY_SEGMENT_STARTED", 5_000),
                                                                                 ("COPY_SEGMENT_FINISHED", 7_200_000)]))
    gaps = run_check("remote_log_gap", **_tiered(spark, broken, 320))
    assert _details(gaps) == [
        {"local_log_start_offset": 320, "missing_offsets": [100, 149], "remote_end_offset": 99, "topic_id": "T1"},
        {"local_log_start_offset": 320, "missing_offsets": [200, 259], "remote_end_offset": 199, "topic_id": "T1"},
        {"local_log_start_offset": 320, "missing_offsets": [300, 319], "remote_end_offset": 299, "topic_id": "T1"}]
    assert sorted((r["broker"], r["offset"], r["kind"]) for r in gaps.collect()) == [
        ("b1", 100, "remote_log_gap"), ("b1", 200, "remote_log_gap"), ("b1", 300, "remote_log_gap")]
    # another topic with the same name (recreated: another topic id) is not this partition's history
    assert run_check("remote_log_gap", **_tiered(spark, broken, 320, topic_id="T2")).count() == 0
    stuck = run_check("remote_segment_stuck", {"remote_stuck_after_ms": 3_600_000}, remote_log_events=broken)
    assert [(d["remote_segment_id"], d["stuck_ms"]) for d in _details(stuck)] == [("s2", 7_200_000 - 10)]
    assert run_check("remote_segment_stuck", {"remote_stuck_after_ms": 8_000_000},
                     remote_log_events=broken).count() == 0

    # Sound: contiguous finished copies up to a local log that overlaps them, a segment being deleted just now.
    sound = _events(spark, ("s1", 0, 99, "0@0", [*done, ("DELETE_SEGMENT_STARTED", 7_200_000)]),
                    ("s2", 100, 199, "0@100", done), ("s3", 200, 299, "0@200, 1@250", done))
    epochs = spark.createDataFrame([("b1", "t", 0, "lec", 1, 250)],
                                   "broker string, topic string, partition int, file string, epoch int, start_offset bigint")
    tables = _tiered(spark, sound, 250, epochs=epochs)
    assert run_check("remote_log_gap", **tables).count() == 0
    assert run_check("remote_segment_stuck", {"remote_stuck_after_ms": 3_600_000}, **tables).count() == 0
    # against the leader-epoch-checkpoint and along the remote segments
    assert run_check("remote_leader_epoch_mismatch", **tables).count() == 0
    assert run_check("remote_overlap", **tables).count() == 0


def test_leader_epoch_mismatches_and_overlaps(spark) -> None:
    done = [("COPY_SEGMENT_STARTED", 0), ("COPY_SEGMENT_FINISHED", 1)]
    later = [("COPY_SEGMENT_STARTED", 50), ("COPY_SEGMENT_FINISHED", 51)]
    events = _events(spark, ("a", 0, 99, "0@0, 2@50", done), ("b", 100, 199, "1@100", done),
                     ("c", 150, 199, "1@150, 3@180", later), ("d", 200, 299, "3@200", done))
    # the local checkpoint starts at 250 (truncated at the local log start) and says epoch 4 from 280
    epochs = spark.createDataFrame([("b1", "t", 0, "lec", 3, 250), ("b1", "t", 0, "lec", 4, 280)],
                                   "broker string, topic string, partition int, file string, epoch int, start_offset bigint")
    tables = _tiered(spark, events, 250, epochs=epochs)
    mismatches = run_check("remote_leader_epoch_mismatch", **tables)
    # b says epoch 1 at 100 though a already holds epoch 2 at 50-99; c (inside b's offsets) says the same
    chain = _mismatches(mismatches, "remote segments")
    assert [(d["remote_segment_id"], d["remote_epoch"], d["expected_epoch"], d["other_remote_segment_id"],
             d["against"]) for d in _details(chain)] == [("b", 1, 2, "a", "remote segments"),
                                                        ("c", 1, 2, "a", "remote segments")]
    assert sorted(r["offset"] for r in chain.collect()) == [100, 150]
    # b and c both hold 150-199; c says 180-199 are epoch 3, b says epoch 1: reported once, on c (copied later)
    overlaps = run_check("remote_overlap", **tables)
    assert [(d["remote_segment_id"], d["other_remote_segment_id"], d["overlap"]) for d in _details(overlaps)] == [
        ("c", "b", [150, 199])]
    assert overlaps.first()["offset"] == 150 and overlaps.first()["severity"] == "warning"
    vs_checkpoint = _mismatches(mismatches, "leader-epoch-checkpoint")
    assert mismatches.count() == 3  # the two along the remote segments and the one against the checkpoint
    assert [(r["offset"], json.loads(r["details"])["remote_epoch"], json.loads(r["details"])["expected_epoch"])
            for r in vs_checkpoint.collect()] == [(280, 3, 4)]
