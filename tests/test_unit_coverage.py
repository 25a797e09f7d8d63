"""What a copy lacks (issue 47) on small inline tables: the ranges each partition's copy lacks and why
(spark/sql/missing_ranges.sql), its coverage, `segment_missing`, and every rule that needs a range the copy lacks
reporting `not_judged` instead of its finding."""

from __future__ import annotations

import json

import pytest
from unit_frames import batch, batches, frame, run_check, run_model, with_timeouts

from kforensics.spark import output_schemas as O
from kforensics.spark import restart
from kforensics.spark import schemas as S

# a few inline rows each: the session as a small scan sets it (conftest.small_input)
pytestmark = pytest.mark.usefixtures("small_input")

LOG = "t-0/00000000000000000000.log"


MISSING_RANGE = "struct<first_offset: bigint, last_offset: bigint, proven: boolean>"
COVERAGE = (f"broker string, topic string, partition int, covered_to bigint, complete boolean, "
            f"missing array<{MISSING_RANGE}>")
REPLICA_COVERAGE = ("cluster_id string, topic string, partition int, missing array<struct<first_offset: bigint, "
                    "last_offset: bigint, proven: boolean, broker: string>>")
CO = "__consumer_offsets"
CO_LOG = "__consumer_offsets-0/00000000000000000000.log"


def _coverage(spark, rows: list[tuple]):
    """partition_coverage rows: (broker, topic, partition, [(first_offset, last_offset, proven), ...])."""
    return spark.createDataFrame([(b, t, p, None, not m, m) for b, t, p, m in rows], COVERAGE)


def _fields(schema, *drop: str) -> list[tuple]:
    """A declared schema's (name, type) pairs, without `drop` (the analysis reads live dirs' rows: no dir_state)."""
    return [(f.name, f.type) for f in schema if f.name not in drop]


def _notes(df) -> list[dict]:
    return [{**json.loads(r["details"]), "kind": r["kind"], "severity": r["severity"], "broker": r["broker"],
             "topic": r["topic"], "partition": r["partition"], "offset": r["offset"], "message": r["message"]}
            for r in df.collect()]


# --- what the copy lacks -----------------------------------------------------------------------------------------

def _name(base: int, ext: str) -> str:
    return f"{base:020d}.{ext}"


def test_missing_ranges_every_cause_and_what_explains_a_gap(spark):
    """One partition per case: the range each copy lacks, its cause, whether the input proves the copy lost it (a
    crash may lose what lies above the recovery point), and the shapes Kafka leaves that lack nothing."""
    files, segments, checkpoints, epochs = [], [], [], []

    def seg(p, base, first=None, last=None, *, ext=("log", "index", "timeindex"), index_last=None, damaged=False,
            topic="t"):
        for e in ext:
            files.append(dict(topic=topic, partition=p, file=f"{topic}-{p}/{_name(base, e)}", file_type=e,
                              base_offset=base, last_offset=index_last if e != "log" and "log" not in ext else None))
        if "log" in ext:
            segments.append(dict(topic=topic, partition=p, file=f"{topic}-{p}/{_name(base, 'log')}", base_offset=base,
                                 first_batch_base_offset=first, last_offset=last, size=1000,
                                 valid_bytes=900 if damaged else 1000))

    def snap(p, offset, topic="t", kind="snapshot"):
        files.append(dict(topic=topic, partition=p, file=f"{topic}-{p}/{offset}.{kind}", file_type=kind,
                          base_offset=offset))

    def cp(p, topic="t", **kw):
        checkpoints.append(dict(topic=topic, partition=p, **kw))

    def epoch(p, e, start, topic="t"):
        epochs.append(dict(topic=topic, partition=p, file=f"{topic}-{p}/leader-epoch-checkpoint", epoch=e,
                           start_offset=start))

    seg(0, 0, 0, 99), seg(0, 100, ext=("index", "timeindex"), index_last=150), seg(0, 200, 200, 299)  # middle
    cp(0, high_watermark=300, recovery_point=300)
    seg(1, 0, 0, 99), seg(1, 100, ext=("timeindex",), index_last=180)  # the last segment, the recovery point past it
    cp(1, high_watermark=250, recovery_point=250)
    seg(2, 0, 0, 99), seg(2, 200, 200, 299)                   # a gap, flushed
    cp(2, high_watermark=300, recovery_point=300)
    seg(3, 0, 0, 99), seg(3, 200, 200, 299)                   # a gap the cleaner made
    cp(3, high_watermark=300, recovery_point=300, cleaner_offset=200)
    seg(4, 0, 0, 95, damaged=True), seg(4, 100, 100, 199)    # a gap at a damaged tail: the damage holds it
    cp(4, high_watermark=200, recovery_point=200)
    seg(5, 0, 0, 99)                                          # beyond the end, above the recovery point: a crash?
    cp(5, high_watermark=150, recovery_point=90)
    seg(6, 0, 0, 99)                                          # beyond the end, below the recovery point
    cp(6, high_watermark=150, recovery_point=150)
    epoch(7, 5, 10)                                           # no segment; it held 10-39
    cp(7, high_watermark=40, recovery_point=40)
    epoch(8, 10, 5), snap(8, 5)                               # no segment, an empty log at 5 (the 0-byte .log)
    cp(8, high_watermark=5, recovery_point=5)
    seg(9, 100, 100, 199), epoch(9, 0, 0), epoch(9, 1, 150)   # the epoch cache still starts at 0: not retention
    cp(9, high_watermark=200, recovery_point=200)
    seg(10, 100, 100, 199), epoch(10, 0, 0)                   # tiered: the log starts in the remote tier
    cp(10, high_watermark=200, recovery_point=200, log_start_offset=0)
    seg(11, 300, 300, 399), epoch(11, 2, 300)                 # retention: nothing below
    cp(11, high_watermark=400, recovery_point=400)
    seg(12, 0, 0, 99), snap(12, 100), epoch(12, 0, 0)         # complete: its snapshot at the log end
    cp(12, high_watermark=100, recovery_point=100)
    seg(0, 0, 5, 9, topic="__consumer_offsets"), seg(0, 20, 20, 29, topic="__consumer_offsets")  # compacted
    snap(0, 500, topic="__cluster_metadata", kind="metadata_snapshot")  # a metadata log with no segment
    epoch(0, 1, 0, topic="__cluster_metadata"), epoch(0, 3, 450, topic="__cluster_metadata")
    parts = sorted({(r["topic"], r["partition"]) for r in files + checkpoints + epochs})
    tables = dict(
        partition_dirs=frame(spark, _fields(S.INPUT_TABLES["partition_dirs"]),
                             [dict(topic=t, partition=p, path=f"{t}-{p}", dir_state="live") for t, p in parts],
                             broker="b1"),
        segment_files=frame(spark, _fields(S.INPUT_TABLES["segment_files"], "dir_state"), files,
                            broker="b1"),
        segments=frame(spark, _fields(S.INPUT_TABLES["segments"], "dir_state"), segments,
                       broker="b1", batch_count=1, record_count=1, has_offset_index=True),
        partition_checkpoints=frame(spark, _fields(S.INPUT_TABLES["partition_checkpoints"]), checkpoints,
                                    broker="b1"),
        leader_epochs=frame(spark, _fields(S.INPUT_TABLES["leader_epochs"], "dir_state"), epochs, broker="b1"),
        log_dirs=frame(spark, _fields(S.INPUT_TABLES["log_dirs"]), [dict(broker="b1", clean_shutdown=False)]))
    missing = run_model("missing_ranges", **tables)
    got = sorted((r["topic"], r["partition"], r["cause"], r["first_offset"], r["last_offset"], r["absent_segment"],
                  r["proven"]) for r in missing.collect())
    assert got == [
        ("__cluster_metadata", 0, "beyond_log_end", 0, 499, None, True),
        ("t", 0, "segment_files_without_log", 100, 199, 100, True),
        ("t", 1, "segment_files_without_log", 100, 249, 100, True),
        ("t", 2, "segment_chain_gap", 100, 199, None, True),
        ("t", 5, "beyond_log_end", 100, 149, None, False),
        ("t", 6, "beyond_log_end", 100, 149, None, True),
        ("t", 7, "beyond_log_end", 10, 39, None, True),
        ("t", 9, "below_first_segment", 0, 99, None, True),
        ("t", 10, "below_first_segment", 0, 99, None, False),
    ]
    evidence = {(r["topic"], r["partition"]): r["evidence"] for r in missing.collect()}
    assert evidence[("t", 1)] == [f"{_name(100, 'timeindex')} without its .log", "its index reaches offset 180",
                                  "high watermark 250", "recovery point 250"]
    coverage = run_model("partition_coverage", partition_dirs=tables["partition_dirs"],
                                segments=tables["segments"], missing_ranges=missing)
    by = {(r["topic"], r["partition"]): r for r in coverage.collect()}
    assert len(by) == len(parts)
    assert (by[("t", 12)]["complete"], by[("t", 12)]["covered_to"], by[("t", 12)]["missing"]) == (True, 100, [])
    assert (by[("t", 5)]["complete"], by[("t", 5)]["covered_to"]) == (False, 100)
    assert by[("t", 8)]["complete"] and by[("t", 8)]["covered_to"] is None
    found = _notes(run_check("segment_missing", missing_ranges=missing))
    assert sorted((f["topic"], f["partition"], f["offset"], f["severity"]) for f in found) == sorted(
        (t, p, first, "warning") for t, p, _, first, _, _, proven in got if proven)
    (f1,) = [f for f in found if (f["topic"], f["partition"]) == ("t", 1)]
    assert (f1["absent_segment"], f1["missing_offsets"], f1["cause"]) == (100, [100, 249], "segment_files_without_log")
    assert f1["message"].startswith(f"The copy of t-1 on b1 lacks offsets 100-249 (segment {_name(100, 'log')[:20]}), "
                                    "which the partition held: ")


def test_replica_coverage_and_metadata_coverage(spark):
    coverage = _coverage(spark, [("b1", "t", 0, [(100, 199, True)]), ("b2", "t", 0, [(150, None, False)]),
                                 ("b1", "t", 1, []), ("m1", "__cluster_metadata", 0, [(0, 99, True),
                                                                                      (200, 299, True)])])
    brokers = spark.createDataFrame([("b1", "c", 1), ("b2", "c", 2), ("m1", "c", 3)],
                                    "broker string, cluster_id string, node_id int")
    rows = run_model("replica_coverage", partition_coverage=coverage, brokers=brokers).collect()
    by = {(r["topic"], r["partition"]): [tuple(m) for m in r["missing"]] for r in rows}
    assert by == {("t", 0): [(100, 199, True, "b1"), (150, None, False, "b2")],
                  ("__cluster_metadata", 0): [(0, 99, True, "m1"), (200, 299, True, "m1")]}
    refs = spark.createDataFrame([("c", "m1", 250), ("d", "m9", 50)],
                                 "cluster_id string, metadata_broker string, end_offset bigint")
    history = frame(spark, _fields(O.OUTPUT_TABLES["partition_history"]), [
        dict(cluster_id="c", metadata_offset=149, file="m1/00000000000000000150-0000000001.checkpoint"),
        dict(cluster_id="c", metadata_offset=220, file="m1/00000000000000000150.log"),
        dict(cluster_id="d", metadata_offset=3, file="m9/00000000000000000000.log")])
    meta = {r["cluster_id"]: r for r in run_model(
        "metadata_coverage", reference_copies=refs, partition_history=history, partition_coverage=coverage).collect()}
    # c replays from its snapshot at 150: 0-99 below it is what the snapshot holds; 200-299 after it is not seen
    assert (meta["c"]["replayed_from"], tuple(meta["c"]["gap_range"])) == (150, (200, 299, True))
    assert (meta["d"]["replayed_from"], meta["d"]["gap_range"]) == (0, None)



def test_restart_prediction_says_what_it_could_not_see_and_its_findings_are_not_judged(spark):
    """The prediction is for the disk as given: `offsets_not_seen` on a live dir whose copy lacks offsets, and its
    `not_judged` note; a restart finding at or before a missing range is a note, one past it (a log that starts later)
    is judged, and a -future dir (a copy of its own) is always judged."""
    cols = "row_kind string, broker string, topic string, partition int, dir_state string, kind string, " \
           "severity string, file string, position bigint, offset bigint, producer_id bigint, producer_epoch int, " \
           "message string, details string"
    prediction = [("prediction", "b1", "t", p, state, None, None, None, None, None, None, None, None, None)
                  for p, state in ((0, "live"), (0, "future"), (1, "live"))]
    found_rows = [("finding", "b1", "t", p, None, "restart_would_truncate", "error", LOG, 10, 5, None, None, "cut",
                   json.dumps({"dir_state": state})) for p, state in ((0, "live"), (0, "future"), (1, "live"),
                                                                      (2, "live"))]
    full = frame(spark, [(f.name, f.type) for f in restart._ROWS], [])
    given = spark.createDataFrame(prediction + found_rows, cols)
    predictions = given.unionByName(full.limit(0), allowMissingColumns=True).select(*full.columns)
    coverage = _coverage(spark, [("b1", "t", 0, [(100, 199, True), (300, None, False)]), ("b1", "t", 1, []),
                                 ("b1", "t", 2, [(0, 4, False)])])
    table = run_model("restart_prediction", restart_predictions=predictions, partition_coverage=coverage).collect()
    assert sorted((r["partition"], r["dir_state"], r["offsets_not_seen"]) for r in table) == [
        (0, "future", None), (0, "live", [100, 199]), (1, "live", None)]
    found = sorted((f["partition"], f["kind"], f.get("rule"), f.get("dir_state"), f["severity"]) for f in _notes(
        run_check("restart", restart_predictions=predictions, partition_coverage=coverage)))
    # t-0's unproven range (300-: a crash may have lost it) is on no disk: not seen by a restart either; t-2's copy
    # lacks offsets a crash may have lost only: the cut is judged
    assert found == [(0, "not_judged", "restart_would_truncate", None, "info"),
                     (0, "restart_would_truncate", None, "future", "error"),
                     (1, "restart_would_truncate", None, "live", "error"),
                     (2, "restart_would_truncate", None, "live", "error")]
    notes = _notes(run_check("not_judged", restart_prediction=run_model(
        "restart_prediction", restart_predictions=predictions, partition_coverage=coverage)))
    assert [(n["partition"], n["rule"], n["missing_offsets"], n["severity"]) for n in notes] == [
        (0, "restart_prediction", [100, 199], "info")]


def test_open_transactions_of_a_partition_whose_tail_is_missing_are_not_judged(spark):
    """A transaction open at the end of a copy that lacks the offsets after it: its marker may be there (hanging,
    cleaner_blocked); a missing range before it does not matter."""
    txns = spark.createDataFrame([("b1", "t", p, 1, 0, "OPEN", 10, 12, 0, LOG, 1000, "") for p in (0, 1, 2)],
                                 "broker string, topic string, partition int, producer_id bigint, producer_epoch int, "
                                 "outcome string, first_offset bigint, last_data_offset bigint, "
                                 "first_timestamp bigint, file string, position bigint, cluster_id string")
    ends = spark.createDataFrame([("b1", "t", p, 1_200_000, 20, 20, 0, 5) for p in (0, 1, 2)],
                                 "broker string, topic string, partition int, log_end_timestamp bigint, "
                                 "log_end_offset bigint, high_watermark bigint, log_first_offset bigint, "
                                 "cleaner_offset bigint")
    coverage = _coverage(spark, [("b1", "t", 0, [(20, None, True)]), ("b1", "t", 2, [(0, 4, False)])])
    hanging = _notes(run_check("hanging_transaction", timed_transactions=with_timeouts(txns), partition_ends=ends,
                               partition_coverage=coverage))
    assert sorted((f["partition"], f["kind"], f.get("missing_offsets"), f["severity"]) for f in hanging) == [
        (0, "not_judged", [20, None], "info"), (1, "hanging_transaction", None, "error"),
        (2, "hanging_transaction", None, "error")]
    blocked = _notes(run_check("cleaner_blocked", {"txn_timeout_ms": 60_000}, timed_transactions=with_timeouts(txns),
                               partition_ends=ends, log_batches=batches(spark, [batch(o, partition=p)
                                                                                for p in (0, 1, 2) for o in (10, 19)]),
                               partition_coverage=coverage))
    assert sorted((f["partition"], f["kind"], f.get("rule")) for f in blocked) == [
        (0, "not_judged", "cleaner_blocked"), (1, "cleaner_blocked", None), (2, "cleaner_blocked", None)]


def test_committed_offsets_are_not_judged_where_a_copy_lacks_the_offsets(spark):
    """The group's latest commit may stand in offsets its __consumer_offsets partition's copy lacks after the commits
    seen (`arthur-kraft-raw-snappy`'s absent segment 258527), and a committed offset may point into offsets a copy of
    the committed partition lacks: each finding is then a `not_judged` note naming the rule and the copy that lacks
    them; a commit the gaps do not concern is judged."""
    table = spark.createDataFrame([
        ("g", 1, 150, 3, 10, 100, "beyond_log_end", f"{CO}-0"),
        ("g", 2, 5, 4, 10, 100, "below_log_start", f"{CO}-0"),
        ("g", 3, 5, 4, 10, 100, "below_log_start", f"{CO}-1"),   # another coordinator partition, complete
        ("g", 4, 160, 6, 10, 100, "beyond_log_end", f"{CO}-1"),  # d-4's other replica lacks offsets from 100
    ], "group_id string, partition int, committed_offset bigint, coordinator_offset bigint, "
       "log_start_offset bigint, log_end_offset bigint, status string, coordinator_partition string").selectExpr(
        "*", "'c' AS cluster_id", "'d' AS topic", "'b1' AS coordinator_broker", f"'{CO_LOG}' AS file",
        "coordinator_offset * 10 AS position", "CAST(coordinator_offset AS BIGINT) AS commit_timestamp",
        "'b2' AS data_broker", "CAST(NULL AS STRING) AS transaction_outcome", "CAST(NULL AS BIGINT) AS aborted_first_offset",
        "CAST(NULL AS BIGINT) AS aborted_last_offset", "CAST(NULL AS BIGINT) AS aborted_producer_id")
    owners = spark.createDataFrame([], "cluster_id string, group_id string, topic string, partition int, "
                                       "owner_member_id string, owner_client_id string")
    coverage = spark.createDataFrame([("b1", CO, 0, 20, False, [(20, 49, True)]), ("b1", CO, 1, 9, True, [])],
                                     COVERAGE)
    replicas = spark.createDataFrame([("c", "d", 4, [(100, None, False, "b3")])], REPLICA_COVERAGE)
    found = []
    for check in ("committed_offset_beyond_log_end", "committed_offset_below_log_start"):
        found += run_check(check, consumer_offsets=table, commit_owners=owners, partition_coverage=coverage,
                           replica_coverage=replicas).collect()
    assert sorted((r["kind"], r["partition"], r["severity"]) for r in found if r["kind"] != "not_judged") == [
        ("committed_offset_below_log_start", 3, "error")]
    notes = sorted((r["partition"], r["severity"], json.loads(r["details"]), r["message"]) for r in found
                   if r["kind"] == "not_judged")
    assert [(p, s, d["rule"], d["incomplete_partition"], d["missing_offsets"], d["incomplete_broker"])
            for p, s, d, _ in notes] == [
        (1, "info", "committed_offset_beyond_log_end", f"{CO}-0", [20, 49], "b1"),
        (2, "info", "committed_offset_below_log_start", f"{CO}-0", [20, 49], "b1"),
        (4, "info", "committed_offset_beyond_log_end", "d-4", [100, None], "b3")]
    assert notes[1][3].startswith("Not judged, segment missing: the copy of __consumer_offsets-0 on b1 lacks offsets "
                                  "20-49, which committed_offset_below_log_start needs. What the copy shows: Group g")
    assert notes[1][2]["would_be"].startswith("Group g committed offset 5 on d-2, below its log start 10")
