"""Replicas of one topic-partition on several brokers, compared batch by batch from headers only.

Two replicas agree on a batch when base offset, last offset, CRC, producer id/epoch, base sequence and
partition leader epoch are equal (a follower copies the leader's bytes). They are compared from the
later of their log starts and cleaner checkpoints (compaction runs on each broker on its own) up to the
shorter log end: a replica that is only shorter is lagging, not diverged. At the first differing batch,
the replica whose leader epoch there is higher holds the history that won the election; the other's
offsets from there up to its high watermark were committed and are lost.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from kforensics.spark.findings import KEY, fmt, to_findings

#: A topic-partition of one cluster (a broker's meta.properties cluster.id; "" when unknown).
TP = ["cluster_id", "topic", "partition"]
FINGERPRINT = ["last_offset", "crc", "producer_id", "producer_epoch", "base_sequence", "partition_leader_epoch"]


def with_cluster_id(df: DataFrame, brokers: DataFrame, *also: str) -> DataFrame:
    """Needs `broker` and the brokers table; adds cluster_id ("" when the broker's meta.properties has none), and
    the brokers table's columns named in `also` (node_id)."""
    return (df.join(F.broadcast(brokers.select("broker", "cluster_id", *also)), "broker", "left")
            .withColumn("cluster_id", F.coalesce("cluster_id", F.lit(""))))


def replica_ends(ends: DataFrame, brokers: DataFrame, epochs: DataFrame) -> DataFrame:
    """Needs partition_ends, the brokers and leader_epochs tables; per partition and broker: cluster_id,
    log_start_offset, log_end_offset, high_watermark, cleaner_offset, latest_leader_epoch, leader_epoch_checkpoint
    ("epoch@start_offset, ..."), log_end_timestamp and replica_count (brokers of the cluster holding it)."""
    # SQL text, not a Python lambda (PySpark names its variables afresh at every build: the code is compiled again)
    lineage = epochs.groupBy(*KEY).agg(F.expr(
        "concat_ws(', ', transform(array_sort(collect_list(struct(start_offset, epoch))), "
        "e -> format_string('%d@%d', e.epoch, e.start_offset)))").alias("leader_epoch_checkpoint"))
    out = with_cluster_id(ends, brokers).join(lineage, KEY, "left")
    return out.select(
        *KEY, "cluster_id",
        F.greatest("log_first_offset", F.coalesce("log_start_offset", "log_first_offset")).alias("log_start_offset"),
        "log_end_offset", "high_watermark", F.coalesce("cleaner_offset", F.lit(0)).alias("cleaner_offset"),
        "latest_leader_epoch", "leader_epoch_checkpoint", "log_end_timestamp",
        F.count(F.lit(1)).over(Window.partitionBy(*TP)).alias("replica_count"))


def longest_replicas(ends: DataFrame) -> DataFrame:
    """Needs replica_ends; per topic-partition the broker with the furthest log end (ties: the higher leader
    epoch, then the broker label) as `longest_broker`, with its log_start_offset and log_end_offset."""
    w = Window.partitionBy(*TP).orderBy(F.desc("log_end_offset"), F.desc_nulls_last("latest_leader_epoch"),
                                        "broker")
    return (ends.withColumn("rank", F.row_number().over(w)).filter(F.col("rank") == 1)
            .select(*TP, F.col("broker").alias("longest_broker"), "log_start_offset", "log_end_offset",
                    "log_end_timestamp"))


def _side(batches: DataFrame, ends: DataFrame, side: str) -> DataFrame:
    cols = [F.col(c).alias(f"{side}_{c}") for c in [*FINGERPRINT, "file", "position"]]
    return batches.filter(F.col("crc_valid")).join(ends.select(*KEY), KEY).select(
        *TP, F.col("broker").alias(f"{side}_broker"), "base_offset", *cols)


def divergences(batches: DataFrame, ends: DataFrame) -> DataFrame:
    """Needs the batches table and replica_ends; one row per pair of replicas (a_broker < b_broker) that hold
    different batches: offset (first differing batch), common_prefix_end_offset, and both replicas' facts."""
    multi = ends.filter(F.col("replica_count") > 1)
    a_end = multi.select(*TP, *[F.col(c).alias(f"a_{c}") for c in ("broker", "log_start_offset", "log_end_offset",
                                                                    "cleaner_offset")])
    b_end = multi.select(*TP, *[F.col(c).alias(f"b_{c}") for c in ("broker", "log_start_offset", "log_end_offset",
                                                                    "cleaner_offset")])
    pairs = F.broadcast(a_end.join(b_end, TP).filter(F.col("a_broker") < F.col("b_broker")).select(
        *TP, "a_broker", "b_broker",
        F.greatest("a_log_start_offset", "b_log_start_offset", "a_cleaner_offset", "b_cleaner_offset").alias("lo"),
        F.least("a_log_end_offset", "b_log_end_offset").alias("hi")))
    pair = [*TP, "a_broker", "b_broker"]
    in_range = (F.col("base_offset") >= F.col("lo")) & (F.col("base_offset") < F.col("hi"))
    a = _side(batches, multi, "a").join(pairs, [*TP, "a_broker"]).filter(in_range).drop("lo", "hi")
    b = _side(batches, multi, "b").join(pairs, [*TP, "b_broker"]).filter(in_range).drop("lo", "hi")
    joined = a.join(b, [*pair, "base_offset"], "full_outer")
    same = F.lit(True)
    for c in FINGERPRINT:
        same = same & F.col(f"a_{c}").eqNullSafe(F.col(f"b_{c}"))
    # One pass per pair in offset order: the first differing batch, and the end of the matching prefix before it.
    w = Window.partitionBy(*pair).orderBy("base_offset").rowsBetween(Window.unboundedPreceding, 0)
    marked = joined.withColumn("differs", (~same).cast("int")).withColumn("seen", F.sum("differs").over(w))
    return (marked.groupBy(*pair).agg(
        F.min(F.when(F.col("differs") == 1, F.col("base_offset"))).alias("offset"),
        F.max(F.when(F.col("seen") == 0, F.col("a_last_offset") + 1)).alias("common_prefix_end_offset"))
        .filter(F.col("offset").isNotNull()).join(pairs.select(*pair, "lo"), pair)
        .withColumn("common_prefix_end_offset", F.coalesce("common_prefix_end_offset", "lo")).drop("lo"))


def _at_offset(batches: DataFrame, div: DataFrame, side: str) -> DataFrame:
    """Each replica's first batch reaching the divergence offset: its leader epoch, file and position."""
    keyed = div.select(*TP, "a_broker", "b_broker", "offset", F.col(f"{side}_broker").alias("broker"))
    return (batches.filter(F.col("crc_valid")).join(keyed, [*TP, "broker"])
            .filter(F.col("last_offset") >= F.col("offset")).groupBy(*TP, "a_broker", "b_broker")
            .agg(F.min_by("partition_leader_epoch", "base_offset").alias(f"{side}_epoch"),
                 F.min_by("file", "base_offset").alias(f"{side}_file"),
                 F.min_by("position", "base_offset").alias(f"{side}_position")))


def divergence_facts(batches: DataFrame, ends: DataFrame, div: DataFrame) -> DataFrame:
    """Needs the batches table, replica_ends and divergences; per pair: both replicas' leader epochs at the
    divergence (a_epoch, b_epoch), file, position and ends, `broker` (the replica whose history was replaced, or
    a_broker), `winner`, `loser_hw`, `lost_last` and `lost_offsets` ([first, last] committed offsets lost, null
    when none or unknown)."""
    cols = ["log_end_offset", "high_watermark", "leader_epoch_checkpoint"]
    a_f = ends.select(*TP, F.col("broker").alias("a_broker"), *[F.col(c).alias(f"a_{c}") for c in cols])
    b_f = ends.select(*TP, F.col("broker").alias("b_broker"), *[F.col(c).alias(f"b_{c}") for c in cols])
    pair = [*TP, "a_broker", "b_broker"]
    d = (div.join(_at_offset(batches, div, "a"), pair, "left").join(_at_offset(batches, div, "b"), pair, "left")
         .join(a_f, [*TP, "a_broker"], "left").join(b_f, [*TP, "b_broker"], "left"))
    a_lost = F.col("a_epoch") < F.col("b_epoch")
    b_lost = F.col("b_epoch") < F.col("a_epoch")

    def pick(name: str):
        return F.when(b_lost, F.col(f"b_{name}")).otherwise(F.col(f"a_{name}"))

    d = (d.withColumn("broker", pick("broker")).withColumn("winner", F.when(a_lost, F.col("b_broker"))
                                                            .when(b_lost, F.col("a_broker")))
         .withColumn("loser_hw", F.when(a_lost | b_lost, pick("high_watermark")))
         .withColumn("loser_leo", pick("log_end_offset"))
         # an unknown high watermark (no replication-offset-checkpoint, kafka-dump-log text, or no loser within one
         # epoch) commits nothing: least() would skip the null and claim the whole tail committed
         .withColumn("lost_last", F.when(F.col("loser_hw").isNotNull(), F.least("loser_hw", "loser_leo") - 1))
         .withColumn("lost_offsets", F.when(F.col("lost_last") >= F.col("offset"),
                                            F.array("offset", "lost_last"))))
    return d


def replica_divergence_findings(batches: DataFrame, ends: DataFrame, div: DataFrame,
                                elections: DataFrame | None = None) -> DataFrame:
    """Needs the batches table, replica_ends and divergences; `replica_divergence` findings, one per pair,
    on the replica whose history was replaced (error when it had committed the lost offsets). With `elections`
    (control_plane.elections_of: cluster_id, topic, partition, leader_epoch, leader, election, elected_at, from
    the KRaft metadata log) each carries `elections`: the leader changes of the epochs involved (above the lower of
    the two replicas' epochs at the divergence, up to the higher)."""
    d = divergence_facts(batches, ends, div)
    pair = [*TP, "a_broker", "b_broker"]
    if elections is not None:
        involved = (d.select(*pair, "a_epoch", "b_epoch").join(elections, TP)
                    .filter((F.col("leader_epoch") > F.least("a_epoch", "b_epoch"))
                            & (F.col("leader_epoch") <= F.greatest("a_epoch", "b_epoch")))
                    .groupBy(*pair).agg(F.array_sort(F.collect_list(F.struct(
                        "leader_epoch", "leader", "election", "elected_at"))).alias("elections")))
        d = d.join(involved, pair, "left")
    else:
        d = d.withColumn("elections", F.lit(None).cast("array<struct<leader_epoch:int,leader:int,election:string,"
                                                        "elected_at:bigint>>"))
    b_lost = F.col("b_epoch") < F.col("a_epoch")

    def pick(name: str):
        return F.when(b_lost, F.col(f"b_{name}")).otherwise(F.col(f"a_{name}"))

    def replica(side: str):
        return F.struct(F.col(f"{side}_broker").alias("broker"), F.col(f"{side}_epoch").alias("leader_epoch_at_offset"),
                        F.col(f"{side}_log_end_offset").alias("log_end_offset"),
                        F.col(f"{side}_high_watermark").alias("high_watermark"),
                        F.col(f"{side}_leader_epoch_checkpoint").alias("leader_epoch_checkpoint"))

    story = (F.when(F.col("lost_offsets").isNotNull(), F.format_string(
        " %s's leader epoch %d history replaced %s's epoch %d: offsets %d-%d were committed on %s (high watermark "
        "%d) and are lost.", "winner", F.greatest("a_epoch", "b_epoch"), "broker", F.least("a_epoch", "b_epoch"),
        "offset", "lost_last", "broker", "loser_hw"))
        .when(F.col("winner").isNotNull() & F.col("loser_hw").isNull(), F.format_string(
            " %s's leader epoch %d history replaced %s's from there; whether those offsets were committed is unknown "
            "(no high watermark for %s in the input).", "winner", F.greatest("a_epoch", "b_epoch"), "broker",
            "broker"))
        .when(F.col("winner").isNotNull(), F.format_string(
            " %s's leader epoch %d history replaced %s's uncommitted tail (high watermark %s).", "winner",
            F.greatest("a_epoch", "b_epoch"), "broker", F.coalesce(F.col("loser_hw").cast("string"), F.lit("unknown"))))
        .otherwise(F.lit(" Both carry the same leader epoch there: not an election, the bytes differ.")))
    return to_findings(
        d, "replica_divergence", F.when(F.col("lost_offsets").isNotNull(), "error").otherwise("warning"),
        file=pick("file"), position=pick("position"), offset="offset",
        producer_id=None, producer_epoch=None,
        message=F.concat(fmt("%s and %s hold different batches of %s-%d from offset %d (common prefix ends at %d).",
                             "a_broker", "b_broker", "topic", "partition", "offset", "common_prefix_end_offset"),
                         story),
        details={"offset": "offset", "common_prefix_end_offset": "common_prefix_end_offset",
                 "brokers": F.array("a_broker", "b_broker"), "lost_offsets": "lost_offsets", "lost_on": F.when(
                     F.col("lost_offsets").isNotNull(), F.col("broker")), "winner": "winner",
                 "replicas": F.array(replica("a"), replica("b")), "elections": "elections"})


def replicas_table(ends: DataFrame, div: DataFrame) -> DataFrame:
    """Needs replica_ends and divergences; per partition and broker: log_start_offset, log_end_offset,
    high_watermark, latest_leader_epoch, leader_epoch_checkpoint, replica_count, longest_broker, lag (offsets
    behind the longest replica, null when diverged), diverged_at (first offset differing from the longest
    replica) and in_sync (a prefix of the longest replica and as long)."""
    longest = longest_replicas(ends).select(*TP, "longest_broker",
                                            F.col("log_end_offset").alias("longest_log_end_offset"))
    both = div.select(*TP, "a_broker", "b_broker", "offset")
    vs = (both.select(*TP, F.col("a_broker").alias("broker"), F.col("b_broker").alias("other"), "offset")
          .unionByName(both.select(*TP, F.col("b_broker").alias("broker"), F.col("a_broker").alias("other"), "offset")))
    t = (ends.join(longest, TP).join(vs.withColumnRenamed("other", "longest_broker"), [*TP, "broker", "longest_broker"],
                                     "left").withColumnRenamed("offset", "diverged_at"))
    return t.select(
        *KEY, "cluster_id", "log_start_offset", "log_end_offset", "high_watermark", "latest_leader_epoch",
        "leader_epoch_checkpoint",
        "replica_count", "longest_broker",
        F.when(F.col("diverged_at").isNull(), F.col("longest_log_end_offset") - F.col("log_end_offset")).alias("lag"),
        "diverged_at",
        (F.col("diverged_at").isNull() & (F.col("log_end_offset") == F.col("longest_log_end_offset"))).alias("in_sync"))


def leader_epoch_lineage(batches: DataFrame, epochs: DataFrame) -> DataFrame:
    """Needs the batches and leader_epochs tables; per partition, broker and leader epoch:
    checkpoint_start_offset (leader-epoch-checkpoint), batch_start_offset (first batch carrying the epoch) and
    agrees (both present and equal; an epoch with no batches, as after an election with no writes, is null)."""
    from_batches = (batches.filter((F.col("magic") == 2) & F.col("crc_valid")).groupBy(
        *KEY, F.col("partition_leader_epoch").alias("epoch")).agg(F.min("base_offset").alias("batch_start_offset")))
    from_cp = epochs.select(*KEY, "epoch", F.col("start_offset").alias("checkpoint_start_offset"))
    out = from_cp.join(from_batches, [*KEY, "epoch"], "full_outer")
    return out.select(*KEY, "epoch", "checkpoint_start_offset", "batch_start_offset",
                      F.when(F.col("batch_start_offset").isNull(), F.lit(None).cast("boolean"))
                      .otherwise(F.col("checkpoint_start_offset").eqNullSafe(F.col("batch_start_offset")))
                      .alias("agrees"))


def special_dir_replicas(segments: DataFrame, brokers: DataFrame) -> DataFrame:
    """Needs the segments table with dir_state and the brokers table; one row per -delete, -future or -stray
    partition dir, with the replicas table's columns: its log_start_offset and log_end_offset from its segments,
    nothing compared (they are not replicas of the live dir)."""
    special = segments.filter(F.col("dir_state") != "live").groupBy(*KEY, "dir_state").agg(
        F.min("first_batch_base_offset").alias("log_start_offset"), (F.max("last_offset") + 1).alias("log_end_offset"))
    return with_cluster_id(special, brokers).select(
        *KEY, "cluster_id", "log_start_offset", "log_end_offset", F.lit(None).cast("long").alias("high_watermark"),
        F.lit(None).cast("int").alias("latest_leader_epoch"), F.lit(None).cast("string").alias("leader_epoch_checkpoint"),
        F.lit(None).cast("long").alias("replica_count"), F.lit(None).cast("string").alias("longest_broker"),
        F.lit(None).cast("long").alias("lag"), F.lit(None).cast("long").alias("diverged_at"),
        F.lit(None).cast("boolean").alias("in_sync"), "dir_state")


def with_node(df: DataFrame, brokers: DataFrame) -> DataFrame:
    """Needs `broker` and the brokers table; adds `node`: the broker a log dir belongs to (cluster.id and node.id of
    its meta.properties), or its input label where those are unknown. A broker with several log dirs (given as
    several inputs) is one node."""
    ids = brokers.select("broker", F.when(F.col("node_id").isNotNull(), F.concat_ws(
        "/", F.coalesce("cluster_id", F.lit("")), F.col("node_id").cast("string"))).alias("node"))
    return (df.join(ids, "broker", "left")
            .withColumn("node", F.coalesce("node", F.concat(F.lit("label/"), F.col("broker")))))


def future_replica_divergences(batches: DataFrame, brokers: DataFrame) -> DataFrame:
    """Needs the batches table with dir_state and the brokers table; `future_replica_divergence` findings: a -future
    dir (the copy a broker builds while it moves a replica to another of its log dirs, fetched from the live log)
    holding a batch, within the live log's offsets, that the live dir does not hold identically. The live dir is the
    same broker's (`with_node`): Kafka keeps the two in different log dirs, which are different inputs. One finding
    per future dir, at its first such batch. A future copy that is only shorter is still catching up: no
    finding."""
    node_key = ["node", "topic", "partition"]
    valid = with_node(batches.filter(F.col("crc_valid")), brokers)
    live = valid.filter(F.col("dir_state") == "live")
    bounds = live.groupBy(*node_key).agg(F.min("base_offset").alias("live_log_start_offset"),
                                         (F.max("last_offset") + 1).alias("live_log_end_offset"),
                                         F.min("broker").alias("live_broker"))
    live_fp = live.select(*node_key, "base_offset", *[F.col(c).alias(f"live_{c}") for c in FINGERPRINT])
    future = valid.filter(F.col("dir_state") == "future").join(bounds, node_key).filter(
        (F.col("base_offset") >= F.col("live_log_start_offset")) & (F.col("base_offset") < F.col("live_log_end_offset")))
    joined = future.join(live_fp, [*node_key, "base_offset"], "left")
    same = F.lit(True)
    for c in FINGERPRINT:
        same = same & F.col(c).eqNullSafe(F.col(f"live_{c}"))
    first = (joined.filter(~same).withColumn("n", F.row_number().over(
        Window.partitionBy(*KEY, F.regexp_extract("file", r"^(.*)/[^/]*$", 1)).orderBy("base_offset")))
        .filter(F.col("n") == 1))
    return to_findings(
        first, "future_replica_divergence", file="file", position="position", offset="base_offset",
        message=fmt("the -future copy of %s-%d on %s holds a batch at offset %d that the live replica (%s) does not "
                    "hold identically (live CRC %s, future CRC %d): the copy being moved between log dirs differs "
                    "from the log it is copied from", "topic", "partition", "broker", "base_offset", "live_broker",
                    F.coalesce(F.col("live_crc").cast("string"), F.lit("none")), "crc"),
        details={"live_log_start_offset": "live_log_start_offset", "live_log_end_offset": "live_log_end_offset",
                 "future_crc": "crc", "live_crc": "live_crc", "live_broker": "live_broker"})
