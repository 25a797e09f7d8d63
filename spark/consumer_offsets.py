"""Committed consumer offsets (__consumer_offsets) against the partitions they point into.

The latest commit per group, topic and partition counts (a tombstone deletes it). A committed offset is
the next offset the group will read: equal to the log end is caught up; above it, the group resets or
skips (offset out of range); below the log start, retention deleted records the group never read;
strictly inside an aborted transaction (after its first offset, up to its marker), a read_uncommitted
consumer processed aborted records. The reference replica of a partition is its longest one.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from kforensics.spark.findings import finding_columns, findings_sql, fmt_sql, sql_literal

TP = ["cluster_id", "topic", "partition"]


def consumer_offsets_table(commits: DataFrame, longest: DataFrame, aborted: DataFrame) -> DataFrame:
    """Needs offset_commits, longest_replicas and aborted_ranges; per group, topic, partition: the latest
    committed_offset (committed_leader_epoch, commit_timestamp), where it was read (coordinator_broker,
    coordinator_partition, coordinator_offset, file, position), in_input, log_start_offset and log_end_offset
    of the partition's longest replica, lag, the aborted range it falls in, and status (ok | not_in_input |
    beyond_log_end | below_log_start | in_aborted_range)."""
    pick = longest.select(*TP, F.col("longest_broker").alias("broker"))
    mine = commits.join(pick, ["topic", "partition", "broker"])  # one replica of each __consumer_offsets partition
    w = (Window.partitionBy("cluster_id", "group_id", "commit_topic", "commit_partition")
         .orderBy(F.desc("timestamp"), F.desc("offset")))
    latest = mine.withColumn("rank", F.row_number().over(w)).filter((F.col("rank") == 1) & ~F.col("tombstone"))
    latest = latest.select(
        "cluster_id", "group_id", F.col("commit_topic").alias("topic"), F.col("commit_partition").alias("partition"),
        "committed_offset", "committed_leader_epoch", "commit_timestamp", F.col("broker").alias("coordinator_broker"),
        F.format_string("%s-%d", "topic", "partition").alias("coordinator_partition"),
        F.col("offset").alias("coordinator_offset"), "file", "position")
    ends = longest.select(*TP, F.col("longest_broker").alias("data_broker"), "log_start_offset", "log_end_offset")
    ranges = aborted.withColumnRenamed("broker", "data_broker").join(
        pick.withColumnRenamed("broker", "data_broker"), ["topic", "partition", "data_broker"]).select(
        *TP, "data_broker", F.col("first_offset").alias("aborted_first_offset"),
        F.col("last_offset").alias("aborted_last_offset"), F.col("producer_id").alias("aborted_producer_id"))
    t = latest.join(ends, TP, "left")
    inside = (t.join(ranges, [*TP, "data_broker"])
              .filter((F.col("committed_offset") > F.col("aborted_first_offset"))
                      & (F.col("committed_offset") <= F.col("aborted_last_offset")))
              .groupBy("group_id", *TP).agg(F.min("aborted_first_offset").alias("aborted_first_offset"),
                                            F.min_by("aborted_last_offset", "aborted_first_offset")
                                            .alias("aborted_last_offset"),
                                            F.min_by("aborted_producer_id", "aborted_first_offset")
                                            .alias("aborted_producer_id")))
    t = t.join(inside, ["group_id", *TP], "left")
    status = (F.when(F.col("log_end_offset").isNull(), "not_in_input")
              .when(F.col("committed_offset") > F.col("log_end_offset"), "beyond_log_end")
              .when((F.col("committed_offset") >= 0) & (F.col("committed_offset") < F.col("log_start_offset")),
                    "below_log_start")
              .when(F.col("aborted_first_offset").isNotNull(), "in_aborted_range").otherwise("ok"))
    return t.select("group_id", *TP, "committed_offset", "committed_leader_epoch", "commit_timestamp",
                    "coordinator_broker", "coordinator_partition", "coordinator_offset", "file", "position",
                    F.col("log_end_offset").isNotNull().alias("in_input"), "data_broker", "log_start_offset",
                    "log_end_offset", (F.col("log_end_offset") - F.col("committed_offset")).alias("lag"),
                    "aborted_first_offset", "aborted_last_offset", "aborted_producer_id", status.alias("status"))


def committed_offset_fragments() -> list[str]:
    """Reads {offsets} (consumer_offsets_table); the fragments of committed_offset_beyond_log_end,
    committed_offset_below_log_start and committed_offset_in_aborted_range, each naming the group (on the broker
    holding the commit)."""
    common = {"group": "group_id", "committed_offset": "committed_offset", "coordinator_partition":
              "coordinator_partition", "coordinator_offset": "coordinator_offset",
              "commit_timestamp": "commit_timestamp", "log_start_offset": "log_start_offset",
              "log_end_offset": "log_end_offset", "reference_broker": "data_broker"}
    kw = {"offset": "committed_offset", "producer_id": None, "producer_epoch": None, "details": common}

    def fragment(status: str, columns: str) -> str:
        return (f"SELECT {columns} FROM (SELECT *, coordinator_broker AS broker FROM {{offsets}}) "
                f"WHERE status = {sql_literal(status)}")

    beyond = finding_columns(
        "committed_offset_beyond_log_end", **kw,
        message=fmt_sql("Group %s committed offset %d on %s-%d, beyond its log end %d (%s): the group will reset "
                        "(auto.offset.reset) or skip what is written up to there.", "group_id", "committed_offset",
                        "topic", "partition", "log_end_offset", "data_broker"))
    below = finding_columns(
        "committed_offset_below_log_start", **kw,
        message=fmt_sql("Group %s committed offset %d on %s-%d, below its log start %d: offsets %d-%d were deleted "
                        "before the group read them.", "group_id", "committed_offset", "topic", "partition",
                        "log_start_offset", "committed_offset", "log_start_offset - 1"))
    aborted = finding_columns(
        "committed_offset_in_aborted_range", **{**kw, "details": {
            **common, "aborted_first_offset": "aborted_first_offset", "aborted_last_offset": "aborted_last_offset",
            "aborted_producer_id": "aborted_producer_id"}},
        message=fmt_sql("Group %s committed offset %d on %s-%d, inside producer %d's aborted transaction (offsets "
                        "%d-%d): it consumed aborted records (read_uncommitted) or committed a position no "
                        "read_committed consumer reaches.", "group_id", "committed_offset", "topic", "partition",
                        "aborted_producer_id", "aborted_first_offset", "aborted_last_offset"))
    return [fragment("beyond_log_end", beyond), fragment("below_log_start", below),
            fragment("in_aborted_range", aborted)]


def committed_offset_findings(table: DataFrame) -> DataFrame:
    """Needs consumer_offsets_table; committed_offset_beyond_log_end, committed_offset_below_log_start and
    committed_offset_in_aborted_range findings, each naming the group (on the broker holding the commit)."""
    return findings_sql(committed_offset_fragments(), offsets=table)
