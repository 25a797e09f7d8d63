"""The coordinator models on small inline tables (spark/sql/coordinator_log.sql, coordinator_txns.sql,
transactional_ids.sql, marker_checks.sql and the checks over them): the coordinator's log and transactions,
partitions not in the input, markers matched by time (missing, outcome mismatch, silence when they agree or the log ends before
the completion), unknown producers and epoch-fenced writes."""

from __future__ import annotations

import pyarrow as pa
import pytest
from pyspark.testing import assertDataFrameEqual
from unit_frames import batches, expected_findings, findings_view, frame, marker, run_check, run_model, txn_data

from kforensics.spark.schemas import INTERNAL_ROW_FIELDS

# a few inline rows each: the session as a small scan sets it (conftest.small_input)
pytestmark = pytest.mark.usefixtures("small_input")

LOG = "t-0/00000000000000000000.log"
TS_LOG = "__transaction_state-3/00000000000000000000.log"
RECORD_COLUMNS = ["broker", "topic", "partition", "file", "position", "offset", "timestamp", "transactional_id",
                  "producer_id", "producer_epoch", "state", "transaction_timeout_ms", "txn_partitions",
                  "last_update_timestamp", "start_timestamp", "tombstone", "previous_producer_id", "next_producer_id",
                  "next_producer_epoch", "client_transaction_version"]
RECORDS = [(n, t) for n, t in INTERNAL_ROW_FIELDS if n in RECORD_COLUMNS]


def _records(spark, rows: list[dict], **defaults):
    return frame(spark, RECORDS, rows, **{"topic": "__transaction_state", "tombstone": False, **defaults})


def test_coordinator_log_reads_the_longest_replica(spark):
    records = _records(spark, [
        dict(broker="b1", partition=0, offset=0, state="Ongoing"),         # a shorter replica: ignored
        dict(broker="b2", partition=0, offset=0, state="Ongoing"),
        dict(broker="b2", partition=0, offset=1, state=None, tombstone=True),
        dict(broker="b1", partition=1, offset=0, state="Empty"),
    ])
    longest = spark.createDataFrame([("c", "__transaction_state", 0, "b2"), ("c", "__transaction_state", 1, "b1")],
                                    "cluster_id string, topic string, partition int, longest_broker string")
    out = run_model("coordinator_log", coordinator_records=records, longest_replicas=longest).select(
        "broker", "cluster_id", "partition", "offset", "state")
    expected = spark.createDataFrame([("b2", "c", 0, 0, "Ongoing"), ("b1", "c", 1, 0, "Empty")],
                                     "broker string, cluster_id string, partition int, offset bigint, state string")
    assertDataFrameEqual(out, expected)


def _txn_record(offset: int, txn_id: str, pid: int, epoch: int, state: str, parts: str | None, start: int,
                update: int, timeout: int = 60_000, *, prev: int = -1, next_pid: int = -1, tv: int = 0) -> dict:
    """A __transaction_state record; `tv` its ClientTransactionVersion (2: Transactions V2), `prev`/`next_pid` its
    PreviousProducerId / NextProducerId (v1 tagged fields, -1 when absent)."""
    return dict(offset=offset, position=offset * 10, timestamp=update, transactional_id=txn_id, producer_id=pid,
                producer_epoch=epoch, state=state, txn_partitions=parts, start_timestamp=start,
                last_update_timestamp=update, transaction_timeout_ms=timeout, previous_producer_id=prev,
                next_producer_id=next_pid, next_producer_epoch=-1, client_transaction_version=tv)


def test_coordinator_transactions(spark):
    rows = [
        _txn_record(0, "a", 10, 0, "Empty", None, -1, 500),
        _txn_record(1, "a", 10, 0, "Ongoing", "t-0,t-1", 1000, 1000),
        _txn_record(2, "a", 10, 0, "PrepareCommit", "t-0,t-1", 1000, 2000),
        _txn_record(3, "a", 10, 0, "CompleteCommit", "", 1000, 3000),
        _txn_record(4, "a", 10, 0, "Ongoing", "t-0", 4000, 4000),
        _txn_record(5, "a", 10, 0, "PrepareAbort", "t-0", 4000, 5000),
        _txn_record(6, "a", 10, 0, "CompleteAbort", "", 4000, 6000),
        _txn_record(7, "a", 10, 1, "Ongoing", "u-0", 7000, 7000, timeout=30_000),
        _txn_record(8, "b", 20, 0, "Empty", None, -1, 8000),
        _txn_record(9, "c", 30, 5, "Ongoing", "t-2", 9000, 9000),
        _txn_record(10, "c", 30, 6, "PrepareAbort", "t-2", 9000, 10000),  # fenced: epoch bumped to abort
    ]
    log = _records(spark, rows, broker="b1", partition=3, file=TS_LOG).selectExpr("*", "'c' AS cluster_id")
    tsp = "__transaction_state-3"
    expected = spark.createDataFrame([
        ("c", "a", 10, 0, 0, "COMMIT", ["Empty", "Ongoing", "PrepareCommit", "CompleteCommit"], ["t-0", "t-1"],
         60_000, 1000, 3000, "b1", tsp, 0, 3, TS_LOG, 30, 0, 0, 10, 0),
        ("c", "a", 10, 0, 0, "ABORT", ["Ongoing", "PrepareAbort", "CompleteAbort"], ["t-0"], 60_000, 4000, 6000,
         "b1", tsp, 4, 6, TS_LOG, 60, 1, 0, 10, 0),
        ("c", "a", 10, 1, 1, "ONGOING", ["Ongoing"], ["u-0"], 30_000, 7000, None, "b1", tsp, 7, 7, TS_LOG, 70, 2, 0,
         10, 1),
        ("c", "b", 20, 0, 0, "NONE", ["Empty"], [], 60_000, None, None, "b1", tsp, 8, 8, TS_LOG, 80, 0, 0, 20, 0),
        ("c", "c", 30, 6, 5, "PREPARE_ABORT", ["Ongoing", "PrepareAbort"], ["t-2"], 60_000, 9000, None, "b1", tsp, 9,
         10, TS_LOG, 100, 0, 0, 30, 6),
    ], "cluster_id string, transactional_id string, producer_id bigint, producer_epoch int, "
       "first_producer_epoch int, outcome string, states array<string>, partitions array<string>, "
       "transaction_timeout_ms int, txn_start_timestamp bigint, completed_at bigint, coordinator_broker string, "
       "coordinator_partition string, coordinator_first_offset bigint, coordinator_last_offset bigint, file string, "
       "position bigint, txn_seq bigint, transaction_version int, marker_producer_id bigint, "
       "marker_producer_epoch int")
    # coordinator_txns adds expected_coordinator_partition and partitions_not_in_input (tests below)
    out = run_model("coordinator_txns", coordinator_log=log)
    assertDataFrameEqual(out.select(*expected.columns), expected)


def test_transactional_ids_takes_the_latest_name(spark):
    # 30 is named only as the PreviousProducerId of 20's record (a rotation, the old id's records compacted away)
    log = spark.createDataFrame([("c", 10, -1, -1, "a", 100, 1000), ("c", 10, -1, -1, "z", 200, 2000),
                                 ("c", 20, 30, -1, "b", 50, 500), ("d", 10, 10, -1, "q", 10, 100)],
                                "cluster_id string, producer_id bigint, previous_producer_id bigint, "
                                "next_producer_id bigint, transactional_id string, timestamp bigint, "
                                "transaction_timeout_ms int")
    expected = spark.createDataFrame([("c", 10, "z", 2000), ("c", 20, "b", 500), ("c", 30, "b", 500),
                                      ("d", 10, "q", 100)],
                                     "cluster_id string, producer_id bigint, transactional_id string, "
                                     "transaction_timeout_ms int")
    # transactional_ids adds expected_coordinator_partition (tests/test_locate.py)
    assertDataFrameEqual(run_model("transactional_ids", coordinator_log=log).select(*expected.columns), expected)


def _naming(spark, named: dict[tuple[str, str], list[list[str]]]):
    """coordinator_log rows (__transaction_state-3) whose transactions (cluster, transactional id -> each one's
    partitions, in order; each but the last completed) name those partitions."""
    rows, offset = [], 0
    for (cluster, txn_id), txns in named.items():
        for i, parts in enumerate(txns):
            state = "Ongoing" if parts else "Empty"
            rows.append({**_txn_record(offset, txn_id, 10, 0, state, ",".join(parts) or None, 1000, 1000),
                         "broker": f"b-{cluster}", "cluster_id": cluster})
            offset += 1
            if i < len(txns) - 1:
                rows.append({**_txn_record(offset, txn_id, 10, 0, "CompleteCommit", "", 1000, 2000),
                             "broker": f"b-{cluster}", "cluster_id": cluster})
                offset += 1
    return frame(spark, [*RECORDS, ("cluster_id", pa.string())], rows, topic="__transaction_state", partition=3,
                 file=TS_LOG, tombstone=False)


def test_with_partitions_not_in_input(spark):
    tsp = "__transaction_state-3"
    # the coordinator's transactions (a, 0) naming my-topic-0, t-1, u-0; (a, 1) my-topic-0; (b, 0) none
    log = _naming(spark, {("c", "a"): [["my-topic-0", "t-1", "u-0"], ["my-topic-0"]], ("c", "b"): [[]]})
    # t-1 is in the input, but on a disk of another cluster.
    present = spark.createDataFrame([("c", "my-topic", 0), ("d", "t", 1)],
                                    "cluster_id string, topic string, partition int")
    expected = spark.createDataFrame([
        ("c", tsp, "a", 0, ["my-topic-0", "t-1", "u-0"], ["t-1", "u-0"]), ("c", tsp, "a", 1, ["my-topic-0"], []),
        ("c", tsp, "b", 0, [], []),
    ], "cluster_id string, coordinator_partition string, transactional_id string, txn_seq bigint, "
       "partitions array<string>, partitions_not_in_input array<string>")
    out = run_model("coordinator_txns", coordinator_log=log, replica_ends=present)
    assertDataFrameEqual(out.select(*expected.columns), expected)


CTX = ("cluster_id string, transactional_id string, producer_id bigint, producer_epoch int, outcome string, "
       "partitions array<string>, txn_start_timestamp bigint, completed_at bigint, coordinator_broker string, "
       "coordinator_partition string, coordinator_last_offset bigint, txn_seq bigint, "
       "partitions_not_in_input array<string>")
#: A coordinator_transactions row of Transactions V1 as CTX's tuple, with what the marker check also reads.
V1 = ("CAST(0 AS INT) AS first_producer_epoch", "CAST(0 AS INT) AS transaction_version",
      "producer_id AS marker_producer_id", "producer_epoch AS marker_producer_epoch")


def test_marker_checks_match_markers_by_time(spark):
    tsp = "__transaction_state-3"
    ctx = spark.createDataFrame([
        ("c", "a", 10, 0, "COMMIT", ["t-0"], 1000, 3000, "b9", tsp, 3, 0, []),
        ("c", "a", 10, 0, "ABORT", ["t-0"], 5000, 6500, "b9", tsp, 6, 1, []),
        ("c", "a", 10, 0, "COMMIT", ["t-9"], 8000, 8500, "b9", tsp, 9, 2, ["t-9"]),   # not in the input: not judged
        ("c", "a", 10, 0, "PREPARE_COMMIT", ["t-0"], 9000, None, "b9", tsp, 11, 3, []),  # not completed
    ], CTX).selectExpr("*", *V1)
    rows = [
        txn_data(10, 0, max_timestamp=1100), marker(10, 1, "COMMIT", max_timestamp=2000),
        txn_data(10, 2, max_timestamp=5100), marker(10, 3, "ABORT", max_timestamp=6000),
        txn_data(10, 4, max_timestamp=9100),
        # b2 never got the first transaction's COMMIT; another producer's marker in the window does not count.
        txn_data(10, 0, broker="b2", max_timestamp=1100), marker(11, 1, "COMMIT", broker="b2", max_timestamp=1500),
        txn_data(10, 2, broker="b2", max_timestamp=5100), marker(10, 3, "ABORT", broker="b2", max_timestamp=6000),
    ]
    ends = spark.createDataFrame([("b1", "t", 0, "c", 9100, 0, None), ("b2", "t", 0, "c", 6000, 0, None)],
                                 "broker string, topic string, partition int, cluster_id string, "
                                 "log_end_timestamp bigint, log_start_offset bigint, cleaned_up_to bigint")
    out = run_model("marker_checks", coordinator_txns=ctx, clustered_batches=batches(spark, rows), replica_ends=ends)
    expected = spark.createDataFrame([
        ("b1", 0, "a", 0, 1, "COMMIT", 0, 0), ("b1", 0, "a", 1, 3, "ABORT", 0, 2),
        ("b2", 0, "a", 0, None, None, None, 0), ("b2", 0, "a", 1, 3, "ABORT", 0, 2),
        # the prepared one has its rows too (the stuck-preparing rule says which replicas hold its marker)
        ("b1", 0, "a", 3, None, None, None, 4), ("b2", 0, "a", 3, None, None, None, None),
    ], "broker string, partition int, transactional_id string, txn_seq bigint, marker_offset bigint, "
       "marker_outcome string, marker_epoch int, data_offset bigint")
    assertDataFrameEqual(out.select("broker", "partition", "transactional_id", "txn_seq", "marker_offset",
                                    "marker_outcome", "marker_epoch", "data_offset"), expected)


MARKER_DETAILS = ("transactional_id", "coordinator_offset", "coordinator_outcome", "marker_outcome",
                  "expected_coordinator_partition")


def test_marker_findings(spark):
    tsp = "__transaction_state-3"
    checks = spark.createDataFrame([
        # (broker, partition, outcome, log_end_timestamp, marker offset/outcome/epoch/file/position, data o/f/p)
        ("b1", 0, "COMMIT", 9000, 1, "COMMIT", 0, LOG, 100, 0, LOG, 0, None),           # agree: silent
        ("b2", 0, "COMMIT", 9000, None, None, None, None, None, 0, LOG, 0, None),       # missing, data holds the LSO
        ("b3", 0, "COMMIT", 2000, None, None, None, None, None, 0, LOG, 0, None),       # copied before the completion
        ("b1", 1, "ABORT", 9000, 7, "COMMIT", 1, LOG, 700, 5, LOG, 500, None),          # the other outcome
        ("b1", 2, "COMMIT", 9000, None, None, None, None, None, None, None, None, None),  # missing, no data either
        # compacted: neither data nor marker left is what the cleaner leaves past the delete horizon (silent); data
        # left without its marker is not (the cleaner keeps a marker while its transaction has a batch)
        ("b4", 3, "COMMIT", 9000, None, None, None, None, None, None, None, None, 50),
        ("b4", 4, "COMMIT", 9000, None, None, None, None, None, 60, LOG, 6000, 50),
    ], "broker string, partition int, outcome string, log_end_timestamp bigint, marker_offset bigint, "
       "marker_outcome string, marker_epoch int, marker_file string, marker_position bigint, data_offset bigint, "
       "data_file string, data_position bigint, cleaned_up_to bigint").selectExpr(
        "*", "'t' AS topic", "'a' AS transactional_id", "CAST(10 AS BIGINT) AS producer_id",
        "CAST(0 AS INT) AS producer_epoch", f"'{tsp}' AS coordinator_partition",
        "CAST(3 AS BIGINT) AS coordinator_last_offset", "'b9' AS coordinator_broker",
        "CAST(1000 AS BIGINT) AS txn_start_timestamp", "CAST(3000 AS BIGINT) AS completed_at",
        "CAST(array() AS array<string>) AS partitions_not_in_input",
        "'__transaction_state-7' AS expected_coordinator_partition")
    expected = expected_findings(spark, [
        ("marker_missing", "error", "b2", "t", 0, LOG, 0, 0, 10, 0, "a", "3", "COMMIT", None, "__transaction_state-7"),
        ("marker_missing", "error", "b1", "t", 2, None, None, None, 10, 0, "a", "3", "COMMIT", None,
         "__transaction_state-7"),
        ("outcome_mismatch", "error", "b1", "t", 1, LOG, 700, 7, 10, 1, "a", "3", "ABORT", "COMMIT",
         "__transaction_state-7"),
        ("marker_missing", "error", "b4", "t", 4, LOG, 6000, 60, 10, 0, "a", "3", "COMMIT", None,
         "__transaction_state-7"),
    ], *MARKER_DETAILS)
    assertDataFrameEqual(findings_view(run_check("marker", marker_checks=checks), *MARKER_DETAILS), expected)


UNKNOWN_DETAILS = ("batches", "transaction_state_partitions_present", "transaction_state_partitions_missing")


TXNS = ("broker string, topic string, partition int, cluster_id string, producer_id bigint, producer_epoch int, "
        "first_offset bigint, outcome string, batch_count bigint, file string, position bigint")


@pytest.mark.parametrize("expected_partitions, severity, missing", [(2, "error", "0"), (50, "warning", "48")])
def test_unknown_producers_only_open_transactions_matter(spark, expected_partitions, severity, missing):
    """A compacted __transaction_state keeps only each id's newest record: the marker-closed transactions of a
    producer id no record names are silent; an open one is stuck for good. __transaction_state-1's dir is in the
    input with no record yet: it counts as present."""
    known = spark.createDataFrame([("c", 10)], "cluster_id string, producer_id bigint")
    txns = spark.createDataFrame([
        ("b1", "t", 0, "c", 10, 0, 0, "OPEN", 1, LOG, 0),       # known: an open transaction in flight
        ("b1", "t", 0, "c", 20, 2, 5, "COMMIT", 2, LOG, 500),   # forgotten after compaction, closed: silent
        ("b1", "t", 0, "c", 20, 2, 9, "ABORT", 1, LOG, 900),
        ("b1", "t", 0, "c", 21, 3, 12, "OPEN", 3, LOG, 1200),   # open, no coordinator knows it: found
        ("b1", "t", 0, "c", 22, 0, None, "OPEN", 0, LOG, 1300),  # nothing open (no first offset)
        ("b3", "t", 0, "d", 40, 0, 0, "OPEN", 1, LOG, 0),       # a cluster with no __transaction_state dir
    ], TXNS)
    dirs = spark.createDataFrame([("b1", "__transaction_state", 0, "p0", "live"),
                                  ("b2", "__transaction_state", 1, "p1", "live"), ("b1", "t", 0, "t0", "live")],
                                 "broker string, topic string, partition int, path string, dir_state string")
    brokers = spark.createDataFrame([("b1", "c", 1), ("b2", "c", 2), ("b3", "d", 3)],
                                    "broker string, cluster_id string, node_id int")
    out = run_check("unknown_producer", {"transaction_state_partitions": expected_partitions}, timed_transactions=txns,
                    transactional_ids=known, partition_dirs=dirs, brokers=brokers)
    assertDataFrameEqual(findings_view(out, *UNKNOWN_DETAILS), expected_findings(spark, [
        ("unknown_producer", severity, "b1", "t", 0, LOG, 1200, 12, 21, 3, "3", "[0,1]", missing)], *UNKNOWN_DETAILS))


FENCE_DETAILS = ("transactional_id", "fenced_at", "fencing_epoch", "written_at", "batches",
                 "expected_coordinator_partition")


def test_epoch_fenced_writes(spark):
    log = spark.createDataFrame([("c", 10, 0, 1000), ("c", 10, 1, 5000), ("c", 30, 0, 0), ("c", 30, 1, 100),
                                 ("c", 30, 2, 200)],
                                "cluster_id string, producer_id bigint, producer_epoch int, "
                                "last_update_timestamp bigint")
    txn_ids = spark.createDataFrame([("c", 10, "a", "__transaction_state-7")], "cluster_id string, "
                                    "producer_id bigint, transactional_id string, expected_coordinator_partition string")
    rows = [txn_data(10, 0, base_timestamp=2000),                    # before the fence
            txn_data(10, 2, base_timestamp=5000),                    # at the fence's own millisecond: not after it
            txn_data(10, 3, base_timestamp=6000), txn_data(10, 4, base_timestamp=7000),  # the zombie's writes
            marker(10, 5, "ABORT", base_timestamp=7500),             # a marker is the coordinator's, not a write
            txn_data(10, 6, epoch=1, base_timestamp=8000),           # the new epoch
            txn_data(20, 0, partition=1, base_timestamp=9999),       # no record names it: not judged here
            txn_data(30, 0, partition=2, base_timestamp=150), txn_data(30, 1, partition=2, base_timestamp=300)]
    data = batches(spark, [{"cluster_id": "c", **r} for r in rows], clustered=True)
    out = run_check("epoch_fenced_write", {"clock_skew_ms": 0}, clustered_batches=data, coordinator_log=log,
                    transactional_ids=txn_ids)
    assertDataFrameEqual(findings_view(out, *FENCE_DETAILS), expected_findings(spark, [
        ("epoch_fenced_write", "error", "b1", "t", 0, LOG, 300, 3, 10, 0, "a", "5000", "1", "6000", "2",
         "__transaction_state-7"),
        ("epoch_fenced_write", "error", "b1", "t", 2, LOG, 0, 0, 30, 0, None, "100", "1", "150", "2", None),
    ], *FENCE_DETAILS))


# Two clusters scanned together, the same transactional id in the same __transaction_state partition: each keeps
# its own absent partitions (they were once grouped without cluster_id, and each got the union of both).
def test_partitions_not_in_input_stay_within_their_cluster(spark):
    tsp = "__transaction_state-3"
    log = _naming(spark, {("c", "a"): [["t-0", "t-1"]], ("d", "a"): [["t-0", "t-2"]]})
    present = spark.createDataFrame([("c", "t", 0), ("d", "t", 0)], "cluster_id string, topic string, partition int")
    out = run_model("coordinator_txns", coordinator_log=log, replica_ends=present).select(
        "cluster_id", "coordinator_partition", "transactional_id", "txn_seq", "partitions", "partitions_not_in_input")
    expected = spark.createDataFrame([("c", tsp, "a", 0, ["t-0", "t-1"], ["t-1"]),
                                      ("d", tsp, "a", 0, ["t-0", "t-2"], ["t-2"])],
                                     "cluster_id string, coordinator_partition string, transactional_id string, "
                                     "txn_seq bigint, partitions array<string>, partitions_not_in_input array<string>")
    assertDataFrameEqual(out, expected)
