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
from kforensics.spark.schemas import EPOCH_FIELDS, PARTITION_KEY, SNAPSHOT_FIELDS

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
             "topic": r["topic"], "partition": r["partition"], "offset": r["offset"], "message": r["message"],
             "producer_id": r["producer_id"]}
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


# --- the log's own rules, the coordinator's and the groups': the finding on a complete copy, the note on one that
# --- lacks the offsets the verdict needs, the finding again where the copy lacks offsets that do not concern it

def _verdicts(df) -> list[tuple]:
    """(partition, kind, rule not judged, missing_offsets, severity) per row, sorted."""
    return sorted((n["partition"], n["kind"], n.get("rule"), n.get("missing_offsets"), n["severity"])
                  for n in _notes(df))


def test_a_sequence_gap_is_not_judged_where_the_copy_lacks_offsets_between_the_two_batches(spark):
    """orders-0 of the sample brokers without its segment 130 (issue 47's property test): the producer's batches
    either side of the absent segment jump in sequence. t-1's copy lacks offsets 2-9 between the batches: a note; t-2
    lacks offsets after the gap only, and t-0 nothing: the gap is a gap."""
    rows = [batch(o, 2, partition=p, producer_id=7, producer_epoch=0, base_sequence=s, last_sequence=s + 1)
            for p in (0, 1, 2) for o, s in ((0, 0), (10, 5))]
    coverage = _coverage(spark, [("b1", "t", 1, [(2, 9, True)]), ("b1", "t", 2, [(20, None, False)])])
    found = run_check("sequence_holes", batches=batches(spark, rows), partition_coverage=coverage)
    assert _verdicts(found) == [(0, "sequence_gap", None, None, "error"),
                                (1, "not_judged", "sequence_gap", [2, 9], "info"),
                                (2, "sequence_gap", None, None, "error")]
    note = next(n for n in _notes(found) if n["kind"] == "not_judged")
    assert (note["incomplete_broker"], note["incomplete_partition"], note["offset"]) == ("b1", "t-1", 10)
    assert note["would_be"].startswith("Producer 7 epoch 0 jumps from sequence 1 to 5 at offset 10")
    assert note["message"].startswith("Not judged, segment missing: the copy of t-1 on b1 lacks offsets 2-9, which "
                                      "sequence_gap needs. What the copy shows: Producer 7")


def test_a_producer_snapshot_is_not_judged_where_the_copy_lacks_the_batch_it_names(spark):
    """Snapshot 20 says producer 3 last wrote at offset 11; the log's batch ends at 12. Where the copy lacks offsets
    from 11 up to the snapshot (t-1) the producer's batch may stand there; an entry at or beyond its own snapshot
    (producer 4) contradicts the snapshot itself, whatever the copy lacks."""
    rows = [batch(10, 3, partition=p, producer_id=3, producer_epoch=0, base_sequence=0, last_sequence=2)
            for p in (0, 1, 2)]
    snap = "t-{}/00000000000000000020.snapshot"
    entries = frame(spark, [*PARTITION_KEY, *SNAPSHOT_FIELDS], [
        dict(partition=p, file=snap.format(p), producer_id=pid, last_offset=last, last_sequence=seq)
        for p in (0, 1, 2) for pid, last, seq in ((3, 11, 1), (4, 22, 0))], broker="b1", topic="t", snapshot_offset=20,
        producer_epoch=0)
    ends = spark.createDataFrame([("b1", "t", p, 0, None) for p in (0, 1, 2)],
                                 "broker string, topic string, partition int, log_first_offset bigint, "
                                 "cleaner_offset bigint")
    coverage = _coverage(spark, [("b1", "t", 1, [(13, 19, True)]), ("b1", "t", 2, [(25, None, False)])])
    found = run_check("snapshot_mismatch", data_batches=run_model("data_batches", batches=batches(spark, rows)),
                      snapshot_entries=entries, partition_ends=ends, partition_coverage=coverage)
    assert sorted((n["partition"], n["kind"], n.get("rule"), n.get("missing_offsets"), n["producer_id"])
                  for n in _notes(found)) == [
        (0, "snapshot_mismatch", None, None, 3), (0, "snapshot_mismatch", None, None, 4),
        (1, "not_judged", "snapshot_mismatch", [13, 19], 3), (1, "snapshot_mismatch", None, None, 4),
        (2, "snapshot_mismatch", None, None, 3), (2, "snapshot_mismatch", None, None, 4)]


def test_txnindex_entries_are_not_judged_where_the_copy_lacks_their_marker_or_transaction(spark):
    """An entry without its ABORT marker (producer 1, marker at 20) and one whose first offset and LSO the log
    contradicts (producer 2: 28 by the index, 30 by the log) are notes where the copy lacks those offsets (t-1);
    an aborted transaction without its entry (producer 3) is judged all the same: Kafka writes the entry to the
    .txnindex of the segment its marker is in, which the copy holds."""
    cols = ("broker string, topic string, partition int, producer_id bigint, last_offset bigint, first_offset bigint, "
            "last_stable_offset bigint, marked boolean, index_first_offset bigint, index_last_stable_offset bigint, "
            "index_file string, log_first_offset bigint, agrees boolean")
    idx = "t-{}/00000000000000000000.txnindex"
    aborted = spark.createDataFrame([r for p in (0, 1, 2) for r in (
        ("b1", "t", p, 1, 20, None, None, None, 10, 10, idx.format(p), 0, None),
        ("b1", "t", p, 2, 40, 30, 30, True, 28, 28, idx.format(p), 0, False),
        ("b1", "t", p, 3, 55, 50, 50, True, None, None, None, 0, None))], cols)
    coverage = _coverage(spark, [("b1", "t", 1, [(15, 29, True)]), ("b1", "t", 2, [(0, 5, True)])])
    found = _notes(run_check("txnindex_markers", aborted_transactions=aborted, partition_coverage=coverage))
    assert sorted((n["partition"], n["producer_id"], n["kind"], n.get("rule"), n["severity"]) for n in found) == [
        (p, pid, kind, rule, severity) for p in (0, 1, 2) for pid, kind, rule, severity in (
            (1, "not_judged" if p == 1 else "txnindex_orphan", "txnindex_orphan" if p == 1 else None,
             "info" if p == 1 else "error"),
            (2, "not_judged" if p == 1 else "txnindex_mismatch", "txnindex_mismatch" if p == 1 else None,
             "info" if p == 1 else "error"),
            (3, "txnindex_missing", None, "error"))]


def test_markers_are_not_judged_where_a_copy_lacks_what_settles_them(spark):
    """A missing marker where the data replica's copy lacks offsets (b2 t-1: the transaction is matched by time, its
    data and marker may stand anywhere there); a mismatched marker where that copy lacks offsets below it (b1 t-3:
    the transaction's own marker may stand there) or the coordinator's copy lacks offsets after its record (b1 t-4,
    coordinator __transaction_state-4: the producer's next transaction, which bounds the match). A range above the
    mismatched marker (b1 t-5) settles nothing: judged; so is every complete copy (b2 t-0, b1 t-2)."""
    checks = spark.createDataFrame([
        ("b2", 0, "COMMIT", None, None, None, 0, "__transaction_state-3"),   # missing
        ("b2", 1, "COMMIT", None, None, None, 0, "__transaction_state-3"),   # missing, the copy lacks 50-60
        ("b1", 2, "ABORT", 7, "COMMIT", 1, 5, "__transaction_state-3"),      # the other outcome
        ("b1", 3, "ABORT", 7, "COMMIT", 1, 5, "__transaction_state-3"),      # the copy lacks 2-4, below the marker
        ("b1", 4, "ABORT", 7, "COMMIT", 1, 5, "__transaction_state-4"),      # the coordinator's copy lacks 5-
        ("b1", 5, "ABORT", 7, "COMMIT", 1, 5, "__transaction_state-3"),      # the copy lacks 10-20, above the marker
    ], "broker string, partition int, outcome string, marker_offset bigint, marker_outcome string, marker_epoch int, "
       "data_offset bigint, coordinator_partition string").selectExpr(
        "*", "'t' AS topic", "'a' AS transactional_id", "CAST(10 AS BIGINT) AS producer_id",
        "CAST(0 AS INT) AS producer_epoch", "CAST(3 AS BIGINT) AS coordinator_last_offset", "'b9' AS coordinator_broker",
        "CAST(1000 AS BIGINT) AS txn_start_timestamp", "CAST(3000 AS BIGINT) AS completed_at",
        "CAST(9000 AS BIGINT) AS log_end_timestamp", f"'{LOG}' AS data_file", "CAST(0 AS BIGINT) AS data_position",
        f"'{LOG}' AS marker_file", "CAST(700 AS BIGINT) AS marker_position",
        "CAST(array() AS array<string>) AS partitions_not_in_input")
    coverage = _coverage(spark, [("b2", "t", 1, [(50, 60, True)]), ("b1", "t", 3, [(2, 4, True)]),
                                 ("b9", "__transaction_state", 4, [(5, None, False)]), ("b1", "t", 5, [(10, 20, True)]),
                                 ("b9", "__transaction_state", 3, [])])
    found = run_check("marker", marker_checks=checks, partition_coverage=coverage)
    assert _verdicts(found) == [(0, "marker_missing", None, None, "error"),
                                (1, "not_judged", "marker_missing", [50, 60], "info"),
                                (2, "outcome_mismatch", None, None, "error"),
                                (3, "not_judged", "outcome_mismatch", [2, 4], "info"),
                                (4, "not_judged", "outcome_mismatch", [5, None], "info"),
                                (5, "outcome_mismatch", None, None, "error")]
    assert {n["partition"]: n["incomplete_partition"] for n in _notes(found) if n["kind"] == "not_judged"} == {
        1: "t-1", 3: "t-3", 4: "__transaction_state-4"}


def test_an_unknown_producer_is_not_judged_where_a_copy_lacks_its_marker_or_its_coordinator_record(spark):
    """Producer 21's transaction open since offset 12, named by no __transaction_state record: t-1's copy lacks the
    offsets after it (its marker may stand there), cluster d's copy of __transaction_state-0 lacks offsets (a record
    naming the producer may stand there): notes, of severity info although the rule's severity is the statement's;
    t-2's copy lacks offsets before the transaction only: judged."""
    txns = spark.createDataFrame([("b1", "t", p, "c", 21, 3, 12, "OPEN", 3, LOG, 1200) for p in (0, 1, 2)] + [
        ("b5", "t", 0, "d", 40, 0, 0, "OPEN", 1, LOG, 0)],
        "broker string, topic string, partition int, cluster_id string, producer_id bigint, producer_epoch int, "
        "first_offset bigint, outcome string, batch_count bigint, file string, position bigint")
    known = spark.createDataFrame([], "cluster_id string, producer_id bigint")
    dirs = spark.createDataFrame([("b1", "__transaction_state", 0, "p0", "live"),
                                  ("b5", "__transaction_state", 0, "p0", "live")],
                                 "broker string, topic string, partition int, path string, dir_state string")
    brokers = spark.createDataFrame([("b1", "c", 1), ("b5", "d", 5)], "broker string, cluster_id string, node_id int")
    coverage = _coverage(spark, [("b1", "t", 1, [(20, None, False)]), ("b1", "t", 2, [(0, 5, True)])])
    replicas = spark.createDataFrame([("d", "__transaction_state", 0, [(0, 9, True, "b5")])], REPLICA_COVERAGE)
    found = run_check("unknown_producer", {"transaction_state_partitions": 1}, timed_transactions=txns,
                      transactional_ids=known, partition_dirs=dirs, brokers=brokers, partition_coverage=coverage,
                      replica_coverage=replicas)
    assert sorted((n["broker"], n["partition"], n["kind"], n.get("rule"), n.get("missing_offsets"), n["severity"])
                  for n in _notes(found)) == [
        ("b1", 0, "unknown_producer", None, None, "error"),
        ("b1", 1, "not_judged", "unknown_producer", [20, None], "info"),
        ("b1", 2, "unknown_producer", None, None, "error"),
        ("b5", 0, "not_judged", "unknown_producer", [0, 9], "info")]


def test_pending_offset_commits_are_not_judged_where_the_coordinator_copy_lacks_the_offsets_after_them(spark):
    """Group g's commits in producer 9's transaction, open since offset 4 of __consumer_offsets-0/1/2 for 60 s
    (timeout 10 s): the copy of -1 lacks offsets after it (the marker may stand there): a note; -2 lacks offsets
    before it only: judged."""
    live = spark.createDataFrame([("c", "b1", CO, p, "g", 9, 4, 4, CO_LOG, 40, 0, 0, "d", 1, 50, "OPEN")
                                  for p in (0, 1, 2)],
                                 "cluster_id string, broker string, topic string, partition int, group_id string, "
                                 "producer_id bigint, txn_first_offset bigint, offset bigint, file string, "
                                 "position bigint, producer_epoch int, txn_first_timestamp bigint, "
                                 "commit_topic string, commit_partition int, committed_offset bigint, "
                                 "transaction_outcome string")
    serving = spark.createDataFrame([("c", CO, p, "b1", 60_000) for p in (0, 1, 2)],
                                    "cluster_id string, topic string, partition int, serving_broker string, "
                                    "log_end_timestamp bigint")
    ids = spark.createDataFrame([("c", 9, "app", 10_000)], "cluster_id string, producer_id bigint, "
                                                           "transactional_id string, transaction_timeout_ms int")
    coverage = _coverage(spark, [("b1", CO, 1, [(6, None, False)]), ("b1", CO, 2, [(0, 2, True)])])
    found = run_check("offset_commit_pending", live_commits=live, serving_replicas=serving, transactional_ids=ids,
                      partition_coverage=coverage)
    assert _verdicts(found) == [(0, "offset_commit_pending", None, None, "warning"),
                                (1, "not_judged", "offset_commit_pending", [6, None], "info"),
                                (2, "offset_commit_pending", None, None, "warning")]


def test_a_partition_owned_twice_is_not_judged_where_the_coordinator_copy_lacks_offsets_within_the_overlap(spark):
    """Members A and B both hold t-<p> from offset 10 of the group's __consumer_offsets partition until 20: where the
    copy of that partition lacks offsets within the overlap (-1: 12-15), the record revoking one of them may stand
    there; a range after it (-2: 30-) does not concern it."""
    rows = [("c", "g", "consumer", m, "t", p, "b1", f"{CO}-{p}", 1, 1, start, end, start, CO_LOG, start * 10, False)
            for p in (0, 1, 2) for m, start, end in (("A", 0, 20), ("B", 10, None))]
    assignments = spark.createDataFrame(rows, "cluster_id string, `group` string, group_type string, member_id string, "
                                              "topic string, partition int, coordinator_broker string, "
                                              "coordinator_partition string, member_epoch int, generation int, "
                                              "assigned_from_offset bigint, assigned_to_offset bigint, "
                                              "assigned_from_timestamp bigint, file string, position bigint, "
                                              "pending_revocation boolean")
    coverage = _coverage(spark, [("b1", CO, 1, [(12, 15, True)]), ("b1", CO, 2, [(30, None, False)])])
    found = run_check("partition_owned_twice", group_assignments=assignments, partition_coverage=coverage)
    assert _verdicts(found) == [(0, "partition_owned_twice", None, None, "warning"),
                                (1, "not_judged", "partition_owned_twice", [12, 15], "info"),
                                (2, "partition_owned_twice", None, None, "warning")]


def test_offline_and_stray_partitions_are_not_judged_past_what_the_metadata_copy_covers(spark):
    """Cluster c's metadata copy (m1) lacks records after its replay (200-299): a leader may have been elected, a
    topic created or a replica added there: notes; a dir Kafka itself renamed stray is judged all the same, and
    cluster d, whose copy lacks nothing, is judged."""
    state = spark.createDataFrame([(c, mb, "t", 0, "tid", -1, 5, [1], [1], [], 100) for c, mb in (("c", "m1"),
                                                                                                  ("d", "m9"))],
                                  "cluster_id string, metadata_broker string, topic string, partition int, "
                                  "topic_id string, leader int, last_leader int, replicas array<int>, "
                                  "isr array<int>, elr array<int>, since_offset bigint")
    live = spark.createDataFrame([("c", [1, 2]), ("d", [1, 2])], "cluster_id string, live_brokers array<int>")
    meta = spark.createDataFrame([("c", "m1", 150, (200, 299, True)), ("d", "m9", 0, None)],
                                 f"cluster_id string, metadata_broker string, replayed_from bigint, "
                                 f"gap_range {MISSING_RANGE}")
    # a KRaft check runs where the input holds a metadata log (its records are not read here: the tables are given)
    kraft = S.frame(spark, S.INPUT_TABLES["metadata_records"], [])
    offline = _notes(run_check("offline_partition", partition_state=state, live_brokers=live,
                               metadata_coverage=meta, metadata_records=kraft))
    assert sorted((n["broker"], n["kind"], n.get("rule"), n.get("missing_offsets"), n["severity"])
                  for n in offline) == [("m1", "not_judged", "offline_partition", [200, 299], "info"),
                                        ("m9", "offline_partition", None, None, "error")]
    assert {n.get("incomplete_partition") for n in offline} == {"__cluster_metadata-0", None}
    dirs = spark.createDataFrame([(c, b, "t", 0, 2, "tid", state_) for c in ("c", "d")
                                  for b, state_ in ((f"{c}2", "live"), (f"{c}3", "stray"))],
                                 "cluster_id string, broker string, topic string, partition int, node_id int, "
                                 "topic_id string, dir_state string").selectExpr("*", "broker AS path")
    refs = spark.createDataFrame([("c", "m1", 250), ("d", "m9", 50)],
                                 "cluster_id string, metadata_broker string, end_offset bigint")
    topics = spark.createDataFrame([("c", "t", "tid"), ("d", "t", "tid")], "cluster_id string, topic string, "
                                                                             "topic_id string")
    stray = _notes(run_check("stray_partition", cluster_dirs=dirs, reference_copies=refs, topics=topics,
                             partition_state=state, metadata_coverage=meta, metadata_records=kraft))
    # broker 2 is no replica of t-0 (replicas [1]); c3 and d3 are dirs Kafka renamed stray
    assert sorted((n["broker"], n["kind"], n.get("rule"), n.get("missing_offsets")) for n in stray) == [
        ("c2", "not_judged", "stray_partition", [200, 299]), ("c3", "stray_partition", None, None),
        ("d2", "stray_partition", None, None), ("d3", "stray_partition", None, None)]


def test_share_state_is_not_judged_where_a_copy_lacks_the_offsets_it_is_held_against(spark):
    """Share group s's state of t-<p> starts at 5, below the log start 10 (deleted undelivered), and of u-<p> at 90,
    beyond the log end 80 (truncated under it). A copy of the data partition lacking the offsets between (t-1:
    5-9 on b2; u-1: 80- on b2) or the share coordinator's copy lacking offsets after the state record
    (__share_group_state-2 from 8) leaves it not judged; -0 is judged."""
    state = spark.createDataFrame([("c", "s", topic, p, start, "b1", f"__share_group_state-{p}", 7, "x.log", 0)
                                   for topic, start in (("t", 5), ("u", 90)) for p in (0, 1, 2)],
                                  "cluster_id string, `group` string, topic string, partition int, start_offset bigint, "
                                  "coordinator_broker string, coordinator_partition string, coordinator_offset bigint, "
                                  "file string, position bigint")
    serving = spark.createDataFrame([("c", topic, p, "b1", 10, 80) for topic in ("t", "u") for p in (0, 1, 2)],
                                    "cluster_id string, topic string, partition int, serving_broker string, "
                                    "log_start_offset bigint, log_end_offset bigint")
    coverage = _coverage(spark, [("b1", "__share_group_state", 2, [(8, None, False)])])
    replicas = spark.createDataFrame([("c", "t", 1, [(5, 9, True, "b2")]), ("c", "u", 1, [(80, None, False, "b2")])],
                                     REPLICA_COVERAGE)
    found = []
    for check in ("share_records_deleted_undelivered", "share_state_beyond_log_end"):
        found += _notes(run_check(check, share_partition_state=state, serving_replicas=serving,
                                  partition_coverage=coverage, replica_coverage=replicas))
    assert sorted((n["topic"], n["partition"], n["kind"], n.get("rule"), n.get("incomplete_partition"),
                   n.get("incomplete_broker")) for n in found) == [
        ("t", 0, "share_records_deleted_undelivered", None, None, None),
        ("t", 1, "not_judged", "share_records_deleted_undelivered", "t-1", "b2"),
        ("t", 2, "not_judged", "share_records_deleted_undelivered", "__share_group_state-2", "b1"),
        ("u", 0, "share_state_beyond_log_end", None, None, None),
        ("u", 1, "not_judged", "share_state_beyond_log_end", "u-1", "b2"),
        ("u", 2, "not_judged", "share_state_beyond_log_end", "__share_group_state-2", "b1")]


def test_a_leader_epoch_mismatch_is_not_judged_where_the_run_may_begin_in_offsets_the_copy_lacks(spark):
    """mangled-0 of the sample brokers without its first segment: the checkpoint gives epoch 0 from offset 0, the
    batches carry epoch 1 from 60; the copy starting at 80 would report a run from 80. Where the copy lacks offsets
    between the checkpoint's entry and the run (t-1: 0-79), where the run starts is not known: a note; a range after
    the run's start (t-2: 100-) does not move it."""
    rows = [batch(o, 10, partition=p, partition_leader_epoch=1, file=f"t-{p}/{_name(80, 'log')}",
                  segment_base_offset=80) for p in (0, 1, 2) for o in (80, 90)]
    epochs = frame(spark, [*PARTITION_KEY, *EPOCH_FIELDS], [
        dict(partition=p, file=f"t-{p}/leader-epoch-checkpoint", epoch=0, start_offset=0) for p in (0, 1, 2)],
        broker="b1", topic="t")
    coverage = _coverage(spark, [("b1", "t", 1, [(0, 79, True)]), ("b1", "t", 2, [(100, None, False)])])
    found = run_check("leader_epoch_mismatch", batches=batches(spark, rows), leader_epochs=epochs,
                      partition_coverage=coverage)
    assert _verdicts(found) == [(0, "leader_epoch_mismatch", None, None, "error"),
                                (1, "not_judged", "leader_epoch_mismatch", [0, 79], "info"),
                                (2, "leader_epoch_mismatch", None, None, "error")]


def test_a_restart_cut_is_not_judged_where_the_segment_recovery_starts_from_may_be_what_the_copy_lacks(spark):
    """damaged-0 of the sample brokers without its segment 48 (whole): the recovery point is 48, the high watermark
    90, the copy ends at 47. Kafka recovers from the segment holding the recovery point: on the copy that is segment
    0, whose corrupt batch at 18 it would cut; the real disk may hold segment 48 (a roll moves the recovery point to
    the new segment), which a crash cannot have lost whole. Even an unproven range from the recovery point on
    leaves the cut not judged (t-0); with the recovery point at 40 (t-1) recovery starts in segment 0 either way: the
    cut is judged."""
    cols = "row_kind string, broker string, topic string, partition int, dir_state string, recovery_point bigint, " \
           "kind string, severity string, file string, position bigint, offset bigint, message string, details string"
    given = spark.createDataFrame(
        [("prediction", "b1", "t", p, "live", rp, None, None, None, None, None, None, None) for p, rp in ((0, 48),
                                                                                                         (1, 40))]
        + [("finding", "b1", "t", p, None, None, "restart_would_truncate", "error", LOG, 1681, 18, "cut",
            json.dumps({"dir_state": "live"})) for p in (0, 1)], cols)
    full = frame(spark, [(f.name, f.type) for f in restart._ROWS], [])
    predictions = given.unionByName(full.limit(0), allowMissingColumns=True).select(*full.columns)
    coverage = _coverage(spark, [("b1", "t", p, [(48, 89, False)]) for p in (0, 1)])
    found = run_check("restart", restart_predictions=predictions, partition_coverage=coverage)
    assert _verdicts(found) == [(0, "not_judged", "restart_would_truncate", [48, 89], "info"),
                                (1, "restart_would_truncate", None, None, "error")]
