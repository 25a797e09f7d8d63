"""The transaction coordinator (__transaction_state) against the data partitions in the input.

A transactional id's records are grouped into transactions: a transaction is every record up to and
including its CompleteCommit / CompleteAbort (the Empty record of an InitProducerId opens the next one).
The partitions come from the Ongoing / Prepare* records (Complete* records list none).

Markers are matched by time, not by offset (the two logs share no offsets): for a producer id and a data
partition, a transaction's marker is the first marker of that producer written between the transaction's
start timestamp and the start of the producer's next transaction naming that partition.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from kforensics.spark.findings import KEY, fmt, to_findings

TP = ["cluster_id", "topic", "partition"]
COMPLETE = ("CompleteCommit", "CompleteAbort")


def coordinator_log(records: DataFrame, longest: DataFrame) -> DataFrame:
    """Needs coordinator_records and longest_replicas; the records of the longest replica of each
    __transaction_state partition (replicas hold the same records), tombstones dropped."""
    pick = longest.select(*TP, F.col("longest_broker").alias("broker"))
    return records.join(pick, ["topic", "partition", "broker"]).filter(~F.col("tombstone"))


def coordinator_transactions(log: DataFrame) -> DataFrame:
    """Needs coordinator_log; one row per transaction of a transactional id: transactional_id, producer_id,
    producer_epoch (last), first_producer_epoch, outcome (COMMIT|ABORT|PREPARE_COMMIT|PREPARE_ABORT|ONGOING|
    NONE), states (in order), partitions, transaction_timeout_ms, txn_start_timestamp, completed_at,
    coordinator broker / partition / first and last offset, file and position of the last record."""
    w = (Window.partitionBy(*TP, "transactional_id").orderBy("offset")
         .rowsBetween(Window.unboundedPreceding, -1))
    seq = F.coalesce(F.sum(F.col("state").isin(*COMPLETE).cast("int")).over(w), F.lit(0))
    grouped = (log.withColumn("txn_seq", seq).groupBy("broker", *TP, "transactional_id", "txn_seq").agg(
        F.max_by("producer_id", "offset").alias("producer_id"),
        F.max_by("producer_epoch", "offset").alias("producer_epoch"),
        F.min_by("producer_epoch", "offset").alias("first_producer_epoch"),
        F.expr("transform(array_sort(collect_list(struct(offset, state))), r -> r.state)").alias("states"),
        F.array_sort(F.array_distinct(F.flatten(F.collect_list(
            F.split(F.coalesce("txn_partitions", F.lit("")), ","))))).alias("partitions"),
        F.max_by("transaction_timeout_ms", "offset").alias("transaction_timeout_ms"),
        F.max("start_timestamp").alias("txn_start_timestamp"),
        F.max_by("last_update_timestamp", "offset").alias("last_update_timestamp"),
        F.min("offset").alias("coordinator_first_offset"), F.max("offset").alias("coordinator_last_offset"),
        F.max_by("file", "offset").alias("file"), F.max_by("position", "offset").alias("position")))
    states = F.col("states")
    outcome = (F.when(F.array_contains(states, "CompleteCommit"), "COMMIT")
               .when(F.array_contains(states, "CompleteAbort"), "ABORT")
               .when(F.array_contains(states, "PrepareCommit"), "PREPARE_COMMIT")
               .when(F.array_contains(states, "PrepareAbort") | F.array_contains(states, "PrepareEpochFence"),
                     "PREPARE_ABORT")
               .when(F.array_contains(states, "Ongoing"), "ONGOING").otherwise("NONE"))
    return grouped.select(
        "cluster_id", "transactional_id", "producer_id", "producer_epoch", "first_producer_epoch", outcome.alias("outcome"), "states",
        F.expr("filter(partitions, p -> p != '')").alias("partitions"), "transaction_timeout_ms",
        F.when(F.col("txn_start_timestamp") >= 0, F.col("txn_start_timestamp")).alias("txn_start_timestamp"),
        F.when(F.array_contains(states, "CompleteCommit") | F.array_contains(states, "CompleteAbort"),
               F.col("last_update_timestamp")).alias("completed_at"),
        F.col("broker").alias("coordinator_broker"),
        F.format_string("%s-%d", "topic", "partition").alias("coordinator_partition"),
        "coordinator_first_offset", "coordinator_last_offset", "file", "position", "txn_seq")


def transactional_ids(log: DataFrame) -> DataFrame:
    """Needs coordinator_log; producer_id -> transactional_id (the latest record naming the producer id)."""
    return log.groupBy("cluster_id", "producer_id").agg(
        F.max_by("transactional_id", "timestamp").alias("transactional_id"))


def _split_partition(col: str) -> list:
    return [F.regexp_extract(col, r"^(.*)-(\d+)$", 1).alias("topic"),
            F.regexp_extract(col, r"^(.*)-(\d+)$", 2).cast("int").alias("partition")]


def with_partitions_not_in_input(ctx: DataFrame, present: DataFrame) -> DataFrame:
    """Needs coordinator_transactions and a (topic, partition) table of the data partitions in the input; adds
    partitions_not_in_input (named by the transaction, absent from the input: not judged)."""
    named = ctx.select("cluster_id", "coordinator_partition", "transactional_id", "txn_seq",
                       F.explode("partitions").alias("named"))
    names = present.select("cluster_id", F.format_string("%s-%d", "topic", "partition").alias("named"),
                           F.lit(True).alias("here")).distinct()
    absent = (named.join(names, ["cluster_id", "named"], "left").filter(F.col("here").isNull())
              .groupBy("cluster_id", "coordinator_partition", "transactional_id", "txn_seq")
              .agg(F.array_sort(F.collect_list("named")).alias("partitions_not_in_input")))
    return (ctx.join(absent, ["cluster_id", "coordinator_partition", "transactional_id", "txn_seq"], "left")
            .withColumn("partitions_not_in_input", F.coalesce("partitions_not_in_input",
                                                              F.array().cast("array<string>"))))


def marker_checks(ctx: DataFrame, batches: DataFrame, ends: DataFrame) -> DataFrame:
    """Needs coordinator_transactions, the batches table and replica_ends; per completed transaction and
    replica of each data partition it names: the matching marker (marker_offset, marker_outcome,
    marker_epoch, marker file/position) and the first data batch of the transaction there (data_offset...)."""
    done = ctx.filter(F.col("outcome").isin("COMMIT", "ABORT") & F.col("txn_start_timestamp").isNotNull())
    per_partition = done.select("*", F.explode("partitions").alias("named")).select("*", *_split_partition("named"))
    w = Window.partitionBy("cluster_id", "producer_id", "named").orderBy("txn_start_timestamp")
    per_partition = per_partition.withColumn("next_start", F.lead("txn_start_timestamp").over(w))
    replicas = ends.select(*KEY, "cluster_id", "log_end_timestamp", "log_start_offset")
    judged = per_partition.join(replicas, TP)  # only partitions present in the input
    in_window = ((F.col("max_timestamp") >= F.col("txn_start_timestamp"))
                 & (F.col("next_start").isNull() | (F.col("max_timestamp") < F.col("next_start"))))
    mine = batches.filter((F.col("magic") == 2) & F.col("is_transactional")).select(
        *KEY, "producer_id", "base_offset", "is_control", "control_type", F.col("producer_epoch").alias("b_epoch"),
        "max_timestamp", F.col("file").alias("b_file"), F.col("position").alias("b_position"))
    row = [*KEY, "transactional_id", "txn_seq", "coordinator_partition"]
    matched = (judged.join(mine, [*KEY, "producer_id"], "left")
               .withColumn("hit", in_window))
    markers = (matched.filter(F.col("hit") & F.col("is_control")).groupBy(*row).agg(
        F.min("base_offset").alias("marker_offset"), F.min_by("control_type", "base_offset").alias("marker_outcome"),
        F.min_by("b_epoch", "base_offset").alias("marker_epoch"), F.min_by("b_file", "base_offset").alias("marker_file"),
        F.min_by("b_position", "base_offset").alias("marker_position")))
    data = (matched.filter(F.col("hit") & ~F.col("is_control")).groupBy(*row).agg(
        F.min("base_offset").alias("data_offset"), F.min_by("b_file", "base_offset").alias("data_file"),
        F.min_by("b_position", "base_offset").alias("data_position")))
    return (judged.join(markers, row, "left").join(data, row, "left"))


def marker_findings(checks: DataFrame) -> DataFrame:
    """Needs marker_checks; `marker_missing` (no marker in a replica whose log reaches the completion time)
    and `outcome_mismatch` (the marker says the other outcome)."""
    common = {"transactional_id": "transactional_id", "coordinator_partition": "coordinator_partition",
              "coordinator_offset": "coordinator_last_offset", "coordinator_broker": "coordinator_broker",
              "coordinator_outcome": "outcome", "txn_start_timestamp": "txn_start_timestamp",
              "completed_at": "completed_at", "partitions_not_in_input": "partitions_not_in_input",
              "expected_coordinator_partition": "expected_coordinator_partition"}
    missing = checks.filter(F.col("marker_offset").isNull() & (F.col("log_end_timestamp") >= F.col("completed_at")))
    mismatch = checks.filter(F.col("marker_outcome").isNotNull() & (F.col("marker_outcome") != F.col("outcome")))
    return to_findings(
        missing, "marker_missing", file="data_file", position="data_position", offset="data_offset",
        producer_epoch="producer_epoch",
        message=fmt("Transactional id %s (producer %d, epoch %d): the coordinator (%s offset %d) completed this "
                    "transaction with %s at %d, but %s-%d holds no marker of it%s.", "transactional_id", "producer_id",
                    "producer_epoch", "coordinator_partition", "coordinator_last_offset", "outcome", "completed_at",
                    "topic", "partition", F.when(F.col("data_offset").isNotNull(), F.format_string(
                        ": its data from offset %d stays open and holds the LSO", "data_offset")).otherwise("")),
        details=common,
    ).unionByName(to_findings(
        mismatch, "outcome_mismatch", file="marker_file", position="marker_position", offset="marker_offset",
        producer_epoch="marker_epoch",
        message=fmt("Transactional id %s (producer %d): the coordinator (%s offset %d) recorded %s, but the marker "
                    "at offset %d of %s-%d is a %s.", "transactional_id", "producer_id", "coordinator_partition",
                    "coordinator_last_offset", "outcome", "marker_offset", "topic", "partition", "marker_outcome"),
        details={**common, "marker_outcome": "marker_outcome", "marker_offset": "marker_offset"}))


def unknown_producers(batches: DataFrame, log: DataFrame, expected_partitions: int) -> DataFrame:
    """Needs the batches table and coordinator_log; `unknown_producer` findings: transactional data from a
    producer id no __transaction_state record in the input names, judged only when some __transaction_state
    partition is in the input (error when all `expected_partitions` are, warning otherwise: the producer's
    transactional id may hash to a missing one)."""
    known = log.select("cluster_id", "producer_id").distinct()
    present = log.groupBy("cluster_id").agg(F.array_sort(F.collect_set("partition")).alias("present"))
    data = batches.filter((F.col("magic") == 2) & F.col("is_transactional") & ~F.col("is_control")
                          & (F.col("producer_id") >= 0))
    unknown = (data.join(known, ["cluster_id", "producer_id"], "left_anti").groupBy(*KEY, "cluster_id", "producer_id").agg(
        F.min("base_offset").alias("base_offset"), F.min_by("file", "base_offset").alias("file"),
        F.min_by("position", "base_offset").alias("position"),
        F.min_by("producer_epoch", "base_offset").alias("producer_epoch"), F.count(F.lit(1)).alias("batches"))
        .join(present, "cluster_id").withColumn("missing", F.greatest(F.lit(0), expected_partitions - F.size("present"))))
    return to_findings(
        unknown, "unknown_producer", F.when(F.col("missing") == 0, "error").otherwise("warning"),
        message=fmt("Producer %d wrote %d transactional batches from offset %d, but no __transaction_state record in "
                    "the input names it (partitions present: %s; %d of %d not in the input): a coordinator that "
                    "never knew the producer never writes its markers.", "producer_id", "batches", "base_offset",
                    F.array_join("present", ", "), "missing", F.lit(expected_partitions)),
        details={"batches": "batches", "transaction_state_partitions_present": "present",
                 "transaction_state_partitions_missing": "missing"})


def epoch_fenced_writes(batches: DataFrame, log: DataFrame, txn_ids: DataFrame) -> DataFrame:
    """Needs the batches table, coordinator_log and transactional_ids; `epoch_fenced_write` findings: a
    transactional batch created after the coordinator recorded a higher epoch for its producer id (first
    batch per partition, producer and epoch)."""
    fences = log.groupBy("cluster_id", "producer_id", "producer_epoch").agg(F.min("last_update_timestamp").alias("since"))
    data = batches.filter((F.col("magic") == 2) & F.col("is_transactional") & ~F.col("is_control")
                          & (F.col("producer_id") >= 0))
    fenced = (data.join(fences.select("cluster_id", "producer_id", F.col("producer_epoch").alias("fencing_epoch"),
                                      "since"), ["cluster_id", "producer_id"])
              .filter((F.col("fencing_epoch") > F.col("producer_epoch")) & (F.col("base_timestamp") > F.col("since")))
              .groupBy(*KEY, "cluster_id", "producer_id", "producer_epoch", "base_offset", "file", "position",
                       "base_timestamp")
              .agg(F.min_by("fencing_epoch", "since").alias("fencing_epoch"), F.min("since").alias("fenced_at")))
    first = (fenced.groupBy(*KEY, "cluster_id", "producer_id", "producer_epoch").agg(
        F.min("base_offset").alias("base_offset"), F.min_by("file", "base_offset").alias("file"),
        F.min_by("position", "base_offset").alias("position"), F.min_by("fenced_at", "base_offset").alias("fenced_at"),
        F.min_by("fencing_epoch", "base_offset").alias("fencing_epoch"),
        F.min_by("base_timestamp", "base_offset").alias("written_at"), F.count(F.lit(1)).alias("batches"))
        .join(txn_ids, ["cluster_id", "producer_id"], "left"))
    return to_findings(
        first, "epoch_fenced_write",
        message=fmt("Transactional id %s (producer %d): %d batches from offset %d were written by epoch %d at %d, "
                    "after the coordinator fenced it with epoch %d at %d.", F.coalesce("transactional_id", F.lit("?")),
                    "producer_id", "batches", "base_offset", "producer_epoch", "written_at", "fencing_epoch",
                    "fenced_at"),
        details={"transactional_id": "transactional_id", "fenced_at": "fenced_at", "fencing_epoch": "fencing_epoch",
                 "written_at": "written_at", "batches": "batches",
                 "expected_coordinator_partition": "expected_coordinator_partition"})
