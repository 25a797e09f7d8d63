"""The consumer_offsets model (spark/sql/consumer_offsets.sql, over live_commits.sql) on small inline tables: the
latest commit per group and partition (superseded and tombstoned commits, the longest replica of each partition), its
status against the partition's log (caught up, beyond the log end, below the log start, strictly inside an aborted
transaction, not in the input) and the committed_offset_* findings."""

from __future__ import annotations

from functools import reduce

import pytest
from pyspark.sql import DataFrame
from pyspark.testing import assertDataFrameEqual
from unit_frames import expected_findings, findings_view, frame, run_check, run_model

from kforensics.spark.schemas import INTERNAL_ROW_FIELDS

# a few inline rows each: the session as a small scan sets it (conftest.small_input)
pytestmark = pytest.mark.usefixtures("small_input")

CO = "__consumer_offsets"
CO_LOG = "__consumer_offsets-0/00000000000000000000.log"
COMMIT_COLUMNS = ["broker", "topic", "partition", "file", "position", "offset", "timestamp", "group_id",
                  "commit_topic", "commit_partition", "committed_offset", "committed_leader_epoch", "commit_timestamp",
                  "tombstone", "producer_id", "producer_epoch", "transactional"]
COMMITS = [(n, t) for n, t in INTERNAL_ROW_FIELDS if n in COMMIT_COLUMNS]


def _commit(offset: int, group: str, partition: int, committed: int | None, *, broker: str = "b1",
            tombstone: bool = False, ts: int | None = None, pid: int = -1) -> dict:
    """An offset commit record; with `pid` a TxnOffsetCommit in a transactional batch of that producer."""
    ts = offset if ts is None else ts
    return dict(broker=broker, offset=offset, position=offset * 10, timestamp=ts, group_id=group,
                commit_topic="d", commit_partition=partition, committed_offset=committed,
                committed_leader_epoch=None if tombstone else 0, commit_timestamp=None if tombstone else ts,
                tombstone=tombstone, producer_id=pid, producer_epoch=0 if pid >= 0 else -1, transactional=pid >= 0)


def test_consumer_offsets_table(spark):
    commits = frame(spark, COMMITS, [
        _commit(0, "g", 0, 50), _commit(1, "g", 0, 100),          # superseded by a commit equal to the log end
        _commit(2, "g", 0, 7, broker="b2"),                       # a shorter replica of __consumer_offsets-0
        _commit(3, "g", 1, 150),
        _commit(4, "g", 2, 5),
        _commit(5, "g", 3, 10),                                   # exactly the log start
        _commit(6, "g", 4, 22), _commit(7, "g2", 4, 20), _commit(8, "g3", 4, 25), _commit(9, "g4", 4, 26),
        _commit(10, "g5", 4, 32),                                 # inside an aborted range of a shorter replica
        _commit(11, "g", 5, 3),
        _commit(12, "g", 6, 5), _commit(13, "g", 6, None, tombstone=True),
        _commit(14, "g6", 3, None, tombstone=True), _commit(15, "g6", 3, 40),  # deleted, then committed again
    ], topic=CO, partition=0, file=CO_LOG)
    longest = spark.createDataFrame([
        ("c", CO, 0, "b1", 0, 16),
        ("c", "d", 0, "b1", 10, 100), ("c", "d", 1, "b1", 10, 100), ("c", "d", 2, "b1", 10, 100),
        ("c", "d", 3, "b1", 10, 100), ("c", "d", 4, "b2", 0, 50), ("c", "d", 6, "b1", 0, 10),
    ], "cluster_id string, topic string, partition int, longest_broker string, log_start_offset bigint, "
       "log_end_offset bigint")
    aborted = spark.createDataFrame([("b2", "d", 4, 7, 20, 25), ("b1", "d", 4, 8, 30, 35), ("b2", "d", 0, 9, 90, 105)],
                                    "broker string, topic string, partition int, producer_id bigint, "
                                    "first_offset bigint, last_offset bigint")
    cols = ("group_id string, cluster_id string, topic string, partition int, committed_offset bigint, "
            "coordinator_broker string, coordinator_partition string, coordinator_offset bigint, position bigint, "
            "in_input boolean, data_broker string, log_start_offset bigint, log_end_offset bigint, lag bigint, "
            "aborted_first_offset bigint, aborted_last_offset bigint, aborted_producer_id bigint, status string")

    def row(group, partition, committed, offset, data_broker, start, end, status, aborted=(None, None, None)):
        lag = None if end is None else end - committed
        return (group, "c", "d", partition, committed, "b1", f"{CO}-0", offset, offset * 10, end is not None,
                data_broker, start, end, lag, *aborted, status)

    expected = spark.createDataFrame([
        row("g", 0, 100, 1, "b1", 10, 100, "ok"),
        row("g", 1, 150, 3, "b1", 10, 100, "beyond_log_end"),
        row("g", 2, 5, 4, "b1", 10, 100, "below_log_start"),
        row("g", 3, 10, 5, "b1", 10, 100, "ok"),
        row("g", 4, 22, 6, "b2", 0, 50, "in_aborted_range", (20, 25, 7)),
        row("g2", 4, 20, 7, "b2", 0, 50, "ok"),                       # at the first aborted offset: read none
        row("g3", 4, 25, 8, "b2", 0, 50, "in_aborted_range", (20, 25, 7)),  # up to the marker
        row("g4", 4, 26, 9, "b2", 0, 50, "ok"),
        row("g5", 4, 32, 10, "b2", 0, 50, "ok"),
        row("g", 5, 3, 11, None, None, None, "not_in_input"),
        row("g6", 3, 40, 15, "b1", 10, 100, "ok"),
    ], cols)
    # no remote tier in the input (finished_copies is empty): the local log start
    out = run_model("consumer_offsets", offset_commits=commits, longest_replicas=longest, aborted_ranges=aborted)
    assertDataFrameEqual(out.select(*[c.split()[0] for c in cols.split(", ")]), expected)


DETAILS = ("group", "committed_offset", "log_start_offset", "log_end_offset", "reference_broker",
           "aborted_first_offset", "aborted_last_offset", "aborted_producer_id")


def test_committed_offset_findings(spark):
    table = spark.createDataFrame([
        ("g", 0, 100, 1, 10, 100, None, None, None, "ok"),
        ("g", 1, 150, 3, 10, 100, None, None, None, "beyond_log_end"),
        ("g", 2, 5, 4, 10, 100, None, None, None, "below_log_start"),
        ("g", 4, 22, 6, 0, 50, 20, 25, 7, "in_aborted_range"),
        ("g", 5, 3, 11, None, None, None, None, None, "not_in_input"),
    ], "group_id string, partition int, committed_offset bigint, coordinator_offset bigint, "
       "log_start_offset bigint, log_end_offset bigint, aborted_first_offset bigint, aborted_last_offset bigint, "
       "aborted_producer_id bigint, status string").selectExpr(
        "*", "'c' AS cluster_id", "'d' AS topic", "'b1' AS coordinator_broker", f"'{CO}-0' AS coordinator_partition",
        f"'{CO_LOG}' AS file", "coordinator_offset * 10 AS position", "CAST(coordinator_offset AS BIGINT) "
        "AS commit_timestamp", "'b2' AS data_broker", "CAST(NULL AS STRING) AS transaction_outcome")
    expected = expected_findings(spark, [
        ("committed_offset_beyond_log_end", "error", "b1", "d", 1, CO_LOG, 30, 150, None, None,
         "g", "150", "10", "100", "b2", None, None, None),
        ("committed_offset_below_log_start", "error", "b1", "d", 2, CO_LOG, 40, 5, None, None,
         "g", "5", "10", "100", "b2", None, None, None),
        ("committed_offset_in_aborted_range", "warning", "b1", "d", 4, CO_LOG, 60, 22, None, None,
         "g", "22", "0", "50", "b2", "20", "25", "7"),
    ], *DETAILS)
    found = reduce(DataFrame.unionByName, [run_check(kind, consumer_offsets=table) for kind in (
        "committed_offset_beyond_log_end", "committed_offset_below_log_start", "committed_offset_in_aborted_range")])
    assertDataFrameEqual(findings_view(found, *DETAILS), expected)
