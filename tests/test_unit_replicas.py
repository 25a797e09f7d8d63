"""The replica models on small inline tables (spark/sql/clustered_batches.sql, replica_ends.sql, longest_replicas.sql,
divergences.sql, divergence_facts.sql, replicas.sql, leader_epoch_lineage.sql): cluster ids, replica ends, the longest
replica, divergences (a lagging follower is none), the replica_divergence finding (lost committed offsets vs. an
uncommitted tail), the replicas table and the leader-epoch lineage."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F
from pyspark.testing import assertDataFrameEqual
from unit_frames import batch, batches, frame, run_check, run_model

from kforensics.spark.schemas import EPOCH_FIELDS, PARTITION_KEY

# a few inline rows each: the session as a small scan sets it (conftest.small_input)
pytestmark = pytest.mark.usefixtures("small_input")

BROKERS = "broker string, cluster_id string"


def _log(partition: int) -> str:
    return f"t-{partition}/00000000000000000000.log"


def rb(broker: str, partition: int, offset: int, epoch: int, *, count: int = 1, crc: int | None = None,
       cluster: str = "c", **kw) -> dict:
    """A replica's batch: equal (offset, epoch, crc) on two brokers means the same bytes."""
    return batch(offset, count, broker=broker, partition=partition, partition_leader_epoch=epoch,
                 crc=offset if crc is None else crc, cluster_id=cluster, file=_log(partition), **kw)


def test_with_cluster_id(spark):
    df = spark.createDataFrame([("b1", 1), ("b2", 2), ("b3", 3)], "broker string, n int")
    brokers = spark.createDataFrame([("b1", "c"), ("b2", None)], BROKERS)
    expected = spark.createDataFrame([("b1", 1, "c"), ("b2", 2, ""), ("b3", 3, "")], "broker string, n int, "
                                     "cluster_id string")
    assertDataFrameEqual(run_model("clustered_batches", log_batches=df, brokers=brokers).select(*expected.columns),
                         expected)


def test_replica_ends(spark):
    ends = spark.createDataFrame([
        ("b1", "t", 0, 10, 0, 100, 2, 10, 5, None),   # checkpointed log start above the first batch
        ("b2", "t", 0, 8, 3, 90, 2, 8, 0, 4),         # stale log start below the first batch
        ("b3", "t", 0, 10, 0, 100, 1, None, None, None),  # another cluster: not a replica of the others
    ], "broker string, topic string, partition int, log_end_offset bigint, log_first_offset bigint, "
       "log_end_timestamp bigint, latest_leader_epoch int, high_watermark bigint, log_start_offset bigint, "
       "cleaner_offset bigint")
    brokers = spark.createDataFrame([("b1", "c"), ("b2", "c"), ("b3", "d")], BROKERS)
    epochs = frame(spark, [*PARTITION_KEY, *EPOCH_FIELDS], [
        dict(broker="b1", epoch=2, start_offset=6), dict(broker="b1", epoch=0, start_offset=0),
        dict(broker="b2", epoch=10, start_offset=100), dict(broker="b2", epoch=9, start_offset=20),
    ], topic="t", partition=0, file="t-0/leader-epoch-checkpoint")
    expected = spark.createDataFrame([
        ("b1", "t", 0, "c", 5, 10, 10, None, 0, 2, "0@0, 2@6", 100, 2),
        ("b2", "t", 0, "c", 3, 8, 8, 4, 4, 2, "9@20, 10@100", 90, 2),   # in offset order, not text order
        ("b3", "t", 0, "d", 0, 10, None, None, 0, 1, None, 100, 1),
    ], "broker string, topic string, partition int, cluster_id string, log_start_offset bigint, "
       "log_end_offset bigint, high_watermark bigint, cleaned_up_to bigint, cleaner_offset bigint, "
       "latest_leader_epoch int, "
       "leader_epoch_checkpoint string, log_end_timestamp bigint, replica_count bigint")
    assertDataFrameEqual(run_model("replica_ends", partition_ends=ends, brokers=brokers, leader_epochs=epochs),
                         expected)


def test_longest_replicas(spark):
    ends = spark.createDataFrame([
        ("b1", "t", 0, 10, 3), ("b2", "t", 0, 12, 2),        # the furthest log end wins
        ("b1", "t", 1, 10, 3), ("b2", "t", 1, 10, 4),        # tie: the higher leader epoch
        ("b1", "t", 2, 10, 3), ("b2", "t", 2, 10, 3),        # tie on both: the broker label
        ("b1", "t", 3, 10, None), ("b2", "t", 3, 10, 1),     # an epoch beats none
    ], "broker string, topic string, partition int, log_end_offset bigint, latest_leader_epoch int")
    ends = ends.select("*", F.lit("c").alias("cluster_id"), F.lit(0).cast("long").alias("log_start_offset"),
                       (F.col("partition") * 1000).cast("long").alias("log_end_timestamp"))
    expected = spark.createDataFrame([("c", "t", 0, "b2", 0, 12, 0), ("c", "t", 1, "b2", 0, 10, 1000),
                                      ("c", "t", 2, "b1", 0, 10, 2000), ("c", "t", 3, "b2", 0, 10, 3000)],
                                     "cluster_id string, topic string, partition int, longest_broker string, "
                                     "log_start_offset bigint, log_end_offset bigint, log_end_timestamp bigint")
    assertDataFrameEqual(run_model("longest_replicas", replica_ends=ends), expected)


DIV_ENDS = ("broker string, topic string, partition int, cluster_id string, log_start_offset bigint, "
            "log_end_offset bigint, cleaner_offset bigint, replica_count bigint")
DIV = ("cluster_id string, topic string, partition int, a_broker string, b_broker string, offset bigint, "
       "common_prefix_end_offset bigint")


def test_divergences(spark):
    rows = [
        # 0: a lagging follower holds a prefix of the leader: not a divergence.
        *[rb("b1", 0, o, 0) for o in range(5)], *[rb("b2", 0, o, 0) for o in range(3)],
        # 1: an unclean election: from offset 2 each replica holds its own leader epoch's batches.
        *[rb(b, 1, o, 0) for b in ("b1", "b2") for o in (0, 1)],
        *[rb("b1", 1, o, 1, crc=1000 + o) for o in (2, 3, 4)], *[rb("b2", 1, o, 2, crc=2000 + o) for o in (2, 3)],
        # 2: batch boundaries differ from the first offset: no common prefix.
        rb("b1", 2, 0, 0, count=2), rb("b1", 2, 2, 0), *[rb("b2", 2, o, 0) for o in range(3)],
        # 3: retention deleted b2's first segment: compared from the later log start.
        *[rb("b1", 3, o, 0, crc=500 + o) for o in range(3)], *[rb(b, 3, o, 0) for b in ("b1", "b2") for o in (3, 4, 5)],
        # 4: b1 compacted below its cleaner checkpoint 4: compared from there.
        rb("b1", 4, 0, 0), rb("b1", 4, 2, 0, count=2), *[rb("b2", 4, o, 0) for o in range(4)],
        *[rb(b, 4, o, 0) for b in ("b1", "b2") for o in (4, 5)],
        # 5: the same topic-partition on disks of two clusters: not replicas of each other.
        rb("b1", 5, 0, 0, crc=1), rb("b3", 5, 0, 0, crc=2, cluster="d"),
        # 6: a clean leader change: both replicas hold epoch 0 then epoch 1, byte for byte.
        *[rb(b, 6, o, 0 if o < 3 else 1) for b in ("b1", "b2") for o in range(6)],
    ]
    ends = spark.createDataFrame([
        ("b1", "t", 0, "c", 0, 5, 0, 2), ("b2", "t", 0, "c", 0, 3, 0, 2),
        ("b1", "t", 1, "c", 0, 5, 0, 2), ("b2", "t", 1, "c", 0, 4, 0, 2),
        ("b1", "t", 2, "c", 0, 3, 0, 2), ("b2", "t", 2, "c", 0, 3, 0, 2),
        ("b1", "t", 3, "c", 0, 6, 0, 2), ("b2", "t", 3, "c", 3, 6, 0, 2),
        ("b1", "t", 4, "c", 0, 6, 4, 2), ("b2", "t", 4, "c", 0, 6, 0, 2),
        ("b1", "t", 5, "c", 0, 1, 0, 1), ("b3", "t", 5, "d", 0, 1, 0, 1),
        ("b1", "t", 6, "c", 0, 6, 0, 2), ("b2", "t", 6, "c", 0, 6, 0, 2),
    ], DIV_ENDS)
    out = run_model("divergences", clustered_batches=batches(spark, rows, clustered=True), replica_ends=ends)
    expected = spark.createDataFrame([("c", "t", 1, "b1", "b2", 2, 2), ("c", "t", 2, "b1", "b2", 0, 0)], DIV)
    assertDataFrameEqual(out.select(*[c.split()[0] for c in DIV.split(", ")]), expected)


FINDING_ENDS = ("broker string, topic string, partition int, cluster_id string, log_end_offset bigint, "
                "high_watermark bigint, leader_epoch_checkpoint string")
RD = "replica_divergence"
DIVERGENCE_VIEW = ("kind string, severity string, broker string, partition int, file string, position bigint, "
                   "offset bigint, lost_offsets string, lost_on string, winner string, "
                   "common_prefix_end_offset string, a_epoch string, b_epoch string")


def _election(partition: int, a_epoch: int, b_epoch: int, at: int, a_end: int, b_end: int) -> list[dict]:
    """b1 and b2 share offsets below `at`; from there each holds its own leader epoch's batches."""
    shared = [rb(b, partition, o, 0) for b in ("b1", "b2") for o in range(at)]
    return [*shared, *[rb("b1", partition, o, a_epoch, crc=1000 + o) for o in range(at, a_end)],
            *[rb("b2", partition, o, b_epoch, crc=2000 + o) for o in range(at, b_end)]]


def _divergence_view(out):
    d = lambda key: F.get_json_object("details", f"$.{key}")  # noqa: E731
    return out.select("kind", "severity", "broker", "partition", "file", "position", "offset",
                      *[d(k).alias(k) for k in ("lost_offsets", "lost_on", "winner", "common_prefix_end_offset")],
                      d("replicas[0].leader_epoch_at_offset").alias("a_epoch"),
                      d("replicas[1].leader_epoch_at_offset").alias("b_epoch"))


def _replica_divergence(spark, rows, ends, div):
    """replica_divergence findings as a scan without a metadata log finds them (no elections): over divergence_facts
    built from the divergences `div`."""
    return run_check("replica_divergence", clustered_batches=batches(spark, rows, clustered=True), replica_ends=ends,
                     divergences=div)


def test_replica_divergence_findings(spark):
    rows = [*_election(1, 1, 2, 2, 5, 4),   # b1 (epoch 1, HW 4) lost committed offsets 2-3 to b2's epoch 2
            *_election(2, 1, 2, 2, 5, 4),   # the same, but b1's HW is 2: only its uncommitted tail differed
            *_election(4, 3, 2, 4, 6, 6)]   # b2 (epoch 2, HW 6) lost offsets 4-5 to b1's epoch 3
    ends = spark.createDataFrame([
        ("b1", "t", 1, "c", 5, 4, "0@0, 1@2"), ("b2", "t", 1, "c", 4, 4, "0@0, 2@2"),
        ("b1", "t", 2, "c", 5, 2, "0@0, 1@2"), ("b2", "t", 2, "c", 4, 4, "0@0, 2@2"),
        ("b1", "t", 4, "c", 6, 6, "0@0, 3@4"), ("b2", "t", 4, "c", 6, 6, "0@0, 2@4"),
    ], FINDING_ENDS)
    div = spark.createDataFrame([("c", "t", p, "b1", "b2", at, at) for p, at in ((1, 2), (2, 2), (4, 4))],
                                DIV)
    out = _replica_divergence(spark, rows, ends, div)
    expected = spark.createDataFrame([
        (RD, "error", "b1", 1, _log(1), 200, 2, "[2,3]", "b1", "b2", "2", "1", "2"),
        (RD, "warning", "b1", 2, _log(2), 200, 2, None, None, "b2", "2", "1", "2"),
        (RD, "error", "b2", 4, _log(4), 400, 4, "[4,5]", "b2", "b1", "4", "3", "2"),
    ], DIVERGENCE_VIEW)
    assertDataFrameEqual(_divergence_view(out), expected)


# An unknown high watermark commits nothing (Spark's least() skips nulls: it once claimed the whole tail
# committed and lost, as an error): a replica without replication-offset-checkpoint, and two replicas with the same
# leader epoch at the differing offset (no loser by epoch).
def test_replica_divergence_with_unknown_high_watermark_claims_no_lost_commits(spark):
    rows = _election(1, 1, 2, 2, 5, 4)
    ends = spark.createDataFrame([("b1", "t", 1, "c", 5, None, "0@0, 1@2"), ("b2", "t", 1, "c", 4, 4, "0@0, 2@2")],
                                 FINDING_ENDS)
    div = spark.createDataFrame([("c", "t", 1, "b1", "b2", 2, 2)], DIV)
    out = _replica_divergence(spark, rows, ends, div)
    expected = spark.createDataFrame([(RD, "warning", "b1", 1, _log(1), 200, 2, None, None, "b2", "2", "1", "2")],
                                     DIVERGENCE_VIEW)
    assertDataFrameEqual(_divergence_view(out), expected)


def test_replica_divergence_within_one_leader_epoch_claims_no_lost_commits(spark):
    rows = _election(3, 1, 1, 2, 4, 4)
    ends = spark.createDataFrame([("b1", "t", 3, "c", 4, 4, "0@0, 1@2"), ("b2", "t", 3, "c", 4, 4, "0@0, 1@2")],
                                 FINDING_ENDS)
    div = spark.createDataFrame([("c", "t", 3, "b1", "b2", 2, 2)], DIV)
    out = _replica_divergence(spark, rows, ends, div)
    expected = spark.createDataFrame([(RD, "warning", "b1", 3, _log(3), 200, 2, None, None, None, "2", "1", "1")],
                                     DIVERGENCE_VIEW)
    assertDataFrameEqual(_divergence_view(out), expected)


def test_replicas_table(spark):
    def end(broker, partition, leo, count, epoch=1):
        return (broker, "t", partition, "c", 0, leo, leo, epoch, f"0@0, {epoch}@1", count, 0, None)

    ends = spark.createDataFrame([
        end("b1", 0, 10, 2), end("b2", 0, 7, 2),                      # b2 lags by 3
        end("b1", 1, 10, 2), end("b2", 1, 8, 2),                      # b2 diverged from the longest at 5
        end("b1", 2, 10, 1),                                          # a single replica
        end("b1", 3, 10, 3), end("b2", 3, 9, 3), end("b3", 3, 9, 3),  # b2 and b3 differ, both prefixes of b1
        end("b1", 4, 10, 2, epoch=1), end("b2", 4, 10, 2, epoch=2),   # as long as the longest: in sync
    ], "broker string, topic string, partition int, cluster_id string, log_start_offset bigint, "
       "log_end_offset bigint, high_watermark bigint, latest_leader_epoch int, leader_epoch_checkpoint string, "
       "replica_count bigint, log_end_timestamp bigint, cleaned_up_to bigint")
    div = spark.createDataFrame([("c", "t", 1, "b1", "b2", 5, 5), ("c", "t", 3, "b2", "b3", 4, 4)], DIV)

    def row(broker, partition, leo, count, longest, lag, diverged_at, in_sync, epoch=1):
        return (broker, "t", partition, "c", 0, leo, leo, epoch, f"0@0, {epoch}@1", count, longest, lag, diverged_at,
                in_sync, False, None, None, None, "live", None)  # complete, covered_to: no partition_coverage rows
        # here; log_dir: no partition_dirs rows

    expected = spark.createDataFrame([
        row("b1", 0, 10, 2, "b1", 0, None, True), row("b2", 0, 7, 2, "b1", 3, None, False),
        row("b1", 1, 10, 2, "b1", 0, None, True), row("b2", 1, 8, 2, "b1", None, 5, False),
        row("b1", 2, 10, 1, "b1", 0, None, True),
        row("b1", 3, 10, 3, "b1", 0, None, True), row("b2", 3, 9, 3, "b1", 1, None, False),
        row("b3", 3, 9, 3, "b1", 1, None, False),
        row("b1", 4, 10, 2, "b2", 0, None, True), row("b2", 4, 10, 2, "b2", 0, None, True, epoch=2),
    ], "broker string, topic string, partition int, cluster_id string, log_start_offset bigint, "
       "log_end_offset bigint, high_watermark bigint, latest_leader_epoch int, leader_epoch_checkpoint string, "
       "replica_count bigint, longest_broker string, lag bigint, diverged_at bigint, in_sync boolean, "
       "compacted boolean, cleaned_up_to bigint, complete boolean, covered_to bigint, dir_state string, "
       "log_dir string")
    assertDataFrameEqual(run_model("replicas", replica_ends=ends, divergences=div), expected)


def test_leader_epoch_lineage(spark):
    rows = [*[batch(o, partition_leader_epoch=0) for o in range(5)],
            batch(10, partition_leader_epoch=2, crc_valid=False),   # a torn batch does not count
            batch(12, 2, partition_leader_epoch=2), batch(14, partition_leader_epoch=3),
            batch(15, magic=1, partition_leader_epoch=-1)]          # v1 batches carry no leader epoch
    epochs = frame(spark, [*PARTITION_KEY, *EPOCH_FIELDS], [
        dict(epoch=0, start_offset=0), dict(epoch=1, start_offset=5), dict(epoch=2, start_offset=10)],
        broker="b1", topic="t", partition=0, file="t-0/leader-epoch-checkpoint")
    expected = spark.createDataFrame([
        ("b1", "t", 0, 0, 0, 0, True),
        ("b1", "t", 0, 1, 5, None, None),      # an election with no writes
        ("b1", "t", 0, 2, 10, 12, False),
        ("b1", "t", 0, 3, None, 14, False),    # batches of an epoch the checkpoint lacks
    ], "broker string, topic string, partition int, epoch int, checkpoint_start_offset bigint, "
       "batch_start_offset bigint, agrees boolean")
    assertDataFrameEqual(run_model("leader_epoch_lineage", batches=batches(spark, rows), leader_epochs=epochs),
                         expected)
