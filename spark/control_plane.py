"""The control plane: the KRaft metadata log (`__cluster_metadata-0`) replayed as the controller applies it, and
held against the data on the same disks.

Rules, as Apache Kafka 4.0 (trunk of Oct 2024, confirmed unchanged in 4.1) implements them:

- Records apply in offset order. A snapshot `<end offset>-<epoch>.checkpoint` holds the state of every record below
  its end offset (`raft/.../OffsetAndEpoch`, `SnapshotPath`): it is the base state, and the log applies from its end
  offset on. The base is the OLDEST snapshot the copy's log continues from (log start <= end offset <= log end): the
  end state is the same from any of them, and the older one keeps more history. A log that starts at offset 0 needs
  none; a copy whose log starts after every snapshot (a gap) is based on the newest snapshot.
- `PartitionRecord` sets a partition's whole registration (`PartitionRegistration(PartitionRecord)`); an absent ELR or
  last-known ELR is empty (`Replicas.toArray(null)`).
- `PartitionChangeRecord` is merged as `PartitionRegistration.merge` does: a null (absent) Isr, Replicas,
  AddingReplicas, RemovingReplicas, Directories, EligibleLeaderReplicas, LastKnownElr keeps the field; Leader -2
  (`NO_LEADER_CHANGE`, the default) keeps leader and leader epoch, any other Leader (-1 = `NO_LEADER` included, and
  the same leader again) sets it and bumps the leader epoch by one; every record bumps the partition epoch by one;
  LeaderRecoveryState -1 (`NO_CHANGE`) keeps the state (`LeaderRecoveryState.changeTo`), 0 RECOVERED,
  1 RECOVERING.
- An election is judged against the registration before the record (`PartitionChangeBuilder.electLeader`): a leader
  from the ISR is `clean`, from the ELR (KIP-966, `eligible.leader.replicas.version`) `elr`, from neither `unclean`
  (the builder then writes Isr = [leader] and, on metadata versions that know it, LeaderRecoveryState RECOVERING;
  when the partition is still RECOVERING from an earlier unclean election the tag is absent: only the replay shows
  it); Leader -1 is `offline`.
- `BeginTransactionRecord` .. `EndTransactionRecord` apply; records after a Begin that an `AbortTransactionRecord`
  closes, or that nothing closes at the end of the log, do not (`MetadataLoader`, KIP-868).
- `ClearElrRecord` (KIP-966, written when ELR is turned off) empties the ELR and last-known ELR of every partition of
  its topic (of every topic when TopicName is empty) that has one, bumping its partition epoch
  (`ReplicationControlManager.removeTopicElrs`: a merge of an empty-ELR change record).
- Brokers (`ClusterControlManager.replay`): `RegisterBrokerRecord` starts a registration (fenced unless its Fenced is
  false, not in controlled shutdown unless InControlledShutdown), `FenceBrokerRecord` / `UnfenceBrokerRecord` and
  `BrokerRegistrationChangeRecord` (Fenced 1 fenced, -1 unfenced, 0 no change; InControlledShutdown 1) change it,
  `UnregisterBrokerRecord` ends it.
- A record of a version newer than the tables (`parsers/schemas_metadata.py`) is an `internal_record_newer_version`
  finding, once per record type and version. Where it reads as the newest known version (the newer one added only
  tagged fields), the replay applies what it read, without what the newer version added. Where its fields do not
  read, the replay leaves it out: it cannot know what the record changes, and the finding says so (`fields_read`
  false). After such a PartitionChangeRecord one partition's leader and partition epochs fall behind the
  controller's, which bumps them for every change record (`PartitionRegistration.merge`). A newer
  Begin/End/AbortTransactionRecord still applies: the replay reads only its type.
- Stray logs (`LogManager`, `LocalLog.logStrayDirName`, Kafka 3.7+): a broker's log whose topic id is not the live
  topic's, or whose broker is not a replica, is renamed `<topic>-<partition>.<uuid>-stray` and deleted later.

Each copy of a cluster's metadata log (one per broker in the input) is read; the copy that reaches the highest offset
is the reference and the only one replayed, so a fact is reported once per cluster. That the other copies are
prefixes of it is the replica comparison's job (`__cluster_metadata-0` is compared like any partition: a copy that
differs is a `replica_divergence`; one that is only shorter is lagging, and silent).
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from kforensics.spark.replicas import with_cluster_id

METADATA_TOPIC = "__cluster_metadata"
#: A copy of one cluster's metadata log.
COPY = ["cluster_id", "metadata_broker"]
#: A partition's registration: topic ids, not names, identify a topic across deletion and re-creation.
PARTITION = ["cluster_id", "topic_id", "partition"]
ORDER = ["metadata_offset", "record_index"]

PARTITION_RECORD = "PARTITION_RECORD"
PARTITION_CHANGE_RECORD = "PARTITION_CHANGE_RECORD"
CLEAR_ELR_RECORD = "CLEAR_ELR_RECORD"
CONFIG_RECORD = "CONFIG_RECORD"
#: ConfigResource.Type TOPIC, and the one topic config the analysis reads (the `replicas` table's `compacted`)
TOPIC_RESOURCE, CLEANUP_POLICY = 2, "cleanup.policy"
NO_LEADER_CHANGE = -2
NO_LEADER = -1
RECOVERY_STATES = {0: "RECOVERED", 1: "RECOVERING"}
BROKER_EVENTS = ("registered", "unregistered", "fenced", "unfenced", "controlled_shutdown")


def _running(*partition: str) -> Window:
    return Window.partitionBy(*partition).orderBy(*ORDER).rowsBetween(Window.unboundedPreceding, 0)


# --- which records apply --------------------------------------------------------------------------------------

def reference_copies(records: DataFrame) -> DataFrame:
    """Needs METADATA_RECORDS; per cluster_id the `metadata_broker` whose copy reaches the highest metadata offset
    (ties: the broker label), with its `end_offset` (one past its last record)."""
    reach = records.groupBy(*COPY).agg(
        F.max(F.coalesce("snapshot_offset", F.col("metadata_offset") + 1)).alias("end_offset"))
    w = Window.partitionBy("cluster_id").orderBy(F.desc("end_offset"), "metadata_broker")
    return (reach.withColumn("rank", F.row_number().over(w)).filter("rank = 1").drop("rank"))


def base_snapshots(records: DataFrame) -> DataFrame:
    """Needs METADATA_RECORDS; per copy the snapshot it is replayed from: `base_snapshot` (its end offset; null when
    the log starts at offset 0, or when the copy has no snapshot), the copy's `log_start_offset` and
    `log_end_offset` (null without log segments)."""
    log = records.filter(F.col("snapshot_offset").isNull()).groupBy(*COPY).agg(
        F.min("file_first_offset").alias("log_start_offset"), (F.max("metadata_offset") + 1).alias("log_end_offset"))
    snaps = records.filter(F.col("snapshot_offset").isNotNull()).select(*COPY, "snapshot_offset").distinct()
    copies = records.select(*COPY).distinct().join(log, COPY, "left")
    both = copies.join(snaps, COPY, "left")
    continued = (F.col("snapshot_offset") >= F.col("log_start_offset")) & (
        F.col("snapshot_offset") <= F.col("log_end_offset"))
    picked = both.groupBy(*COPY, "log_start_offset", "log_end_offset").agg(
        F.min(F.when(continued, F.col("snapshot_offset"))).alias("oldest_continued"),
        F.max("snapshot_offset").alias("newest"))
    return picked.select(*COPY, "log_start_offset", "log_end_offset", F.when(
        F.col("log_start_offset") == 0, F.lit(None).cast("long")).otherwise(
        F.coalesce("oldest_continued", "newest")).alias("base_snapshot"))


def applied_records(records: DataFrame) -> DataFrame:
    """Needs METADATA_RECORDS; the records the controller applies, of each cluster's reference copy only: its base
    snapshot's records, then its log records from the snapshot's end offset on, less those of aborted or unfinished
    metadata transactions (and the transaction records themselves). Same columns."""
    ref = reference_copies(records).select(*COPY)
    base = base_snapshots(records).select(*COPY, "base_snapshot")
    mine = records.join(F.broadcast(ref), COPY).join(F.broadcast(base), COPY, "left")
    from_snapshot = F.col("snapshot_offset").isNotNull() & F.col("snapshot_offset").eqNullSafe(F.col("base_snapshot"))
    from_log = F.col("snapshot_offset").isNull() & (
        F.col("base_snapshot").isNull() | (F.col("metadata_offset") >= F.col("base_snapshot")))
    kept = mine.filter(from_snapshot | from_log).drop("base_snapshot")
    # Metadata transactions (KIP-868): a Begin opens, an End or Abort closes; the next Begin cannot come earlier.
    is_begin = (F.col("record_type") == "BEGIN_TRANSACTION_RECORD").cast("int")
    is_close = F.col("record_type").isin("END_TRANSACTION_RECORD", "ABORT_TRANSACTION_RECORD").cast("int")
    every = Window.partitionBy(*COPY).orderBy(*ORDER)
    marked = (kept.withColumn("txn", F.sum(is_begin).over(every.rowsBetween(Window.unboundedPreceding, 0)))
              .withColumn("closed_before", F.coalesce(F.sum(is_close).over(
                  every.rowsBetween(Window.unboundedPreceding, -1)), F.lit(0))))
    group = Window.partitionBy(*COPY, "txn").orderBy(*ORDER).rowsBetween(Window.unboundedPreceding,
                                                                      Window.unboundedFollowing)
    marked = marked.withColumn("outcome", F.first(F.when(is_close == 1, F.col("record_type")), ignorenulls=True)
                               .over(group))
    inside = F.col("txn") > F.col("closed_before")
    applied = ~inside | (F.col("outcome") == "END_TRANSACTION_RECORD")
    not_marker = ~F.col("record_type").isin("BEGIN_TRANSACTION_RECORD", "END_TRANSACTION_RECORD",
                                             "ABORT_TRANSACTION_RECORD")
    return marked.filter(applied & not_marker).drop("txn", "closed_before", "outcome")


# --- tables ---------------------------------------------------------------------------------------------------

def _elr_clears(applied: DataFrame) -> DataFrame:
    """A ClearElrRecord (KIP-966, Kafka 4.0: `ReplicationControlManager.replay(ClearElrRecord)`) as one row per
    partition it may clear: those of its topic (every live topic when TopicName is empty) registered before it,
    each with ELR and last-known ELR set empty and nothing else; `partition_history` keeps the rows that change a
    partition. Same columns as applied_records."""
    clears = applied.filter(F.col("record_type") == CLEAR_ELR_RECORD)
    registered = applied.filter(F.col("record_type") == PARTITION_RECORD).select(
        *COPY, "topic_id", F.col("partition").alias("p"), F.col("metadata_offset").alias("registered_at"))
    names = _topic_names(applied).withColumnRenamed("topic", "name")
    removed = applied.filter(F.col("record_type") == "REMOVE_TOPIC_RECORD").groupBy("cluster_id", "topic_id").agg(
        F.min("metadata_offset").alias("removed_at"))
    c = clears.drop("topic_id", "partition")
    hit = (c.join(registered, COPY).join(names, ["cluster_id", "topic_id"], "left")
           .join(removed, ["cluster_id", "topic_id"], "left")
           .filter((F.col("registered_at") < F.col("metadata_offset"))
                   & (F.col("removed_at").isNull() | (F.col("removed_at") > F.col("metadata_offset")))
                   & (F.coalesce("topic", F.lit("")).isin("") | (F.col("topic") == F.col("name"))))
           .dropDuplicates(["cluster_id", "topic_id", "p", "metadata_offset"]))
    empty = F.array().cast("array<int>")
    return (hit.withColumn("partition", F.col("p")).withColumn("leader", F.lit(NO_LEADER_CHANGE))
            .withColumn("leader_recovery_state", F.lit(-1)).withColumn("elr", empty)
            .withColumn("last_known_elr", empty).select(*applied.columns))


def _topic_names(applied: DataFrame) -> DataFrame:
    return applied.filter(F.col("record_type") == "TOPIC_RECORD").groupBy("cluster_id", "topic_id").agg(
        F.first("topic").alias("topic"))


def partition_history(applied: DataFrame) -> DataFrame:
    """Needs applied_records; one row per PartitionRecord and applied PartitionChangeRecord with the registration
    after it: cluster_id, metadata_broker, topic, topic_id, partition, metadata_offset, timestamp, record_type, leader,
    leader_epoch, partition_epoch, isr, elr, last_known_elr, replicas, adding_replicas, removing_replicas,
    leader_recovery_state, directories, previous_leader, previous_isr, previous_elr, election, file, position.

    A change record of a partition no PartitionRecord registered (before the base snapshot) keeps what it sets,
    with null epochs and election."""
    rows = applied.filter(F.col("record_type").isin(PARTITION_RECORD, PARTITION_CHANGE_RECORD)).unionByName(
        _elr_clears(applied))
    is_record = F.col("record_type") == PARTITION_RECORD
    is_change = F.col("record_type") == PARTITION_CHANGE_RECORD
    is_clear = F.col("record_type") == CLEAR_ELR_RECORD
    # A PartitionRecord starts a registration; change records merge into the one before them.
    rows = rows.withColumn("registration", F.sum(is_record.cast("int")).over(_running(*PARTITION)))
    reg = _running(*PARTITION, "registration")
    ordered = Window.partitionBy(*PARTITION, "registration").orderBy(*ORDER)
    known = F.col("registration") > 0
    leader_set = is_record | (F.col("leader") != NO_LEADER_CHANGE)

    def kept(column: str, *, empty_default: bool = False) -> Column:
        value = F.col(column)
        if empty_default:  # a PartitionRecord without the tagged list has it empty
            value = F.when(is_record, F.coalesce(value, F.array().cast("array<int>"))).otherwise(value)
        return F.last(value, ignorenulls=True).over(reg)

    state = rows.select(
        "*",
        F.last(F.when(leader_set, F.col("leader")), ignorenulls=True).over(reg).alias("leader_now"),
        F.when(known, F.first("leader_epoch").over(reg) + F.sum(
            (is_change & (F.col("leader") != NO_LEADER_CHANGE)).cast("int")).over(reg)).alias("leader_epoch_now"),
        kept("isr").alias("isr_now"), kept("elr", empty_default=True).alias("elr_now"),
        kept("last_known_elr", empty_default=True).alias("last_known_elr_now"), kept("replicas").alias("replicas_now"),
        kept("adding_replicas").alias("adding_now"), kept("removing_replicas").alias("removing_now"),
        F.last(F.when(F.col("leader_recovery_state") != -1, F.col("leader_recovery_state")), ignorenulls=True)
        .over(reg).alias("lrs_now"),
        kept("directories").alias("directories_now"))
    state = (state.withColumn("previous_leader", F.lag("leader_now").over(ordered))
             .withColumn("previous_isr", F.lag("isr_now").over(ordered))
             .withColumn("previous_elr", F.lag("elr_now").over(ordered))
             .withColumn("previous_last_known_elr", F.lag("last_known_elr_now").over(ordered)))
    # a ClearElrRecord changes (and bumps the partition epoch of) only the partitions with an ELR or last-known ELR
    cleared = is_clear & ((F.size(F.coalesce("previous_elr", F.array())) > 0)
                          | (F.size(F.coalesce("previous_last_known_elr", F.array())) > 0))
    state = (state.withColumn("partition_epoch_now", F.when(known, F.first("partition_epoch").over(reg) + F.sum(
        (is_change | cleared).cast("int")).over(reg))).filter(~is_clear | cleared))
    new_leader = F.col("leader_now")
    election = (F.when(is_record, F.lit("initial"))
                .when(F.col("leader") == NO_LEADER_CHANGE, F.lit("none"))
                .when(~known, F.lit(None).cast("string"))
                .when(new_leader == NO_LEADER, F.lit("offline"))
                .when(F.array_contains(F.col("previous_isr"), new_leader), F.lit("clean"))
                .when(F.array_contains(F.col("previous_elr"), new_leader), F.lit("elr"))
                .otherwise(F.lit("unclean")))
    lrs = F.col("lrs_now")
    return (state.drop("topic").join(_topic_names(applied), ["cluster_id", "topic_id"], "left")
            .select("cluster_id", "metadata_broker", "topic", "topic_id", "partition", "metadata_offset",
                    "timestamp", "record_type", F.col("leader_now").alias("leader"),
                    F.col("leader_epoch_now").alias("leader_epoch"),
                    F.col("partition_epoch_now").alias("partition_epoch"), F.col("isr_now").alias("isr"),
                    F.col("elr_now").alias("elr"), F.col("last_known_elr_now").alias("last_known_elr"),
                    F.col("replicas_now").alias("replicas"), F.col("adding_now").alias("adding_replicas"),
                    F.col("removing_now").alias("removing_replicas"),
                    F.when(lrs == 0, "RECOVERED").when(lrs == 1, "RECOVERING").alias("leader_recovery_state"),
                    F.col("directories_now").alias("directories"), "previous_leader", "previous_isr",
                    "previous_elr", election.alias("election"), "file", "position"))


def broker_history(applied: DataFrame) -> DataFrame:
    """Needs applied_records; one row per broker event: cluster_id, metadata_broker, broker_id, metadata_offset,
    timestamp, event (registered, unregistered, fenced, unfenced, controlled_shutdown), broker_epoch,
    incarnation_id, rack, log_dirs, then the registration after it: fenced and in_controlled_shutdown (null once
    unregistered); file, position. A BrokerRegistrationChangeRecord that fences and starts a controlled shutdown
    gives two rows."""
    t = F.col("record_type")
    change = t == "BROKER_REGISTRATION_CHANGE_RECORD"
    events = F.array_compact(F.array(
        F.when(t == "REGISTER_BROKER_RECORD", F.lit("registered")),
        F.when(t == "UNREGISTER_BROKER_RECORD", F.lit("unregistered")),
        F.when((t == "FENCE_BROKER_RECORD") | (change & (F.col("fenced") == 1)), F.lit("fenced")),
        F.when((t == "UNFENCE_BROKER_RECORD") | (change & (F.col("fenced") == -1)), F.lit("unfenced")),
        F.when(change & (F.col("in_controlled_shutdown") == 1), F.lit("controlled_shutdown"))))
    rows = (applied.filter(F.col("broker_id").isNotNull() & t.isin(
        "REGISTER_BROKER_RECORD", "UNREGISTER_BROKER_RECORD", "FENCE_BROKER_RECORD", "UNFENCE_BROKER_RECORD",
        "BROKER_REGISTRATION_CHANGE_RECORD"))
        .select("*", F.posexplode(events).alias("event_index", "event")))
    key = ["cluster_id", "broker_id"]
    order = [*ORDER, "event_index"]
    running = Window.partitionBy(*key).orderBy(*order).rowsBetween(Window.unboundedPreceding, 0)
    rows = rows.withColumn("registration", F.sum((F.col("event") == "registered").cast("int")).over(running))
    reg = Window.partitionBy(*key, "registration").orderBy(*order).rowsBetween(Window.unboundedPreceding, 0)
    ev = F.col("event")
    registered = F.col("event") == "registered"
    fenced = F.last(F.when(registered, F.coalesce(F.col("fenced") != 0, F.lit(True)))
                    .when(ev == "fenced", F.lit(True)).when(ev == "unfenced", F.lit(False)), ignorenulls=True).over(reg)
    shutdown = F.last(F.when(registered, F.coalesce(F.col("in_controlled_shutdown") != 0, F.lit(False)))
                      .when(ev == "controlled_shutdown", F.lit(True)), ignorenulls=True).over(reg)
    gone = F.max((ev == "unregistered").cast("int")).over(reg) == 1
    return rows.select("cluster_id", "metadata_broker", "broker_id", "metadata_offset", "timestamp", "event",
                       "broker_epoch", "incarnation_id", "rack", "log_dirs",
                       F.when(~gone, fenced).alias("fenced"),
                       F.when(~gone, F.coalesce(shutdown, F.lit(False))).alias("in_controlled_shutdown"),
                       "file", "position")


def topics_table(applied: DataFrame) -> DataFrame:
    """Needs applied_records; one row per topic (by id): cluster_id, metadata_broker, topic, topic_id, partitions,
    created_offset and created_at (null when the topic came from the base snapshot: created before the log the
    input holds), deleted_offset, deleted_at, file (where its TopicRecord was read)."""
    created = applied.filter(F.col("record_type") == "TOPIC_RECORD").select(
        "cluster_id", "metadata_broker", "topic", "topic_id",
        F.when(F.col("snapshot_offset").isNull(), F.col("metadata_offset")).alias("created_offset"),
        F.when(F.col("snapshot_offset").isNull(), F.col("timestamp")).alias("created_at"), "file")
    deleted = applied.filter(F.col("record_type") == "REMOVE_TOPIC_RECORD").groupBy("cluster_id", "topic_id").agg(
        F.min("metadata_offset").alias("deleted_offset"), F.min_by("timestamp", "metadata_offset").alias("deleted_at"))
    counts = applied.filter(F.col("record_type") == PARTITION_RECORD).groupBy("cluster_id", "topic_id").agg(
        F.countDistinct("partition").cast("int").alias("partitions"))
    return (created.join(counts, ["cluster_id", "topic_id"], "left").join(deleted, ["cluster_id", "topic_id"], "left")
            .select("cluster_id", "metadata_broker", "topic", "topic_id",
                    F.coalesce("partitions", F.lit(0)).alias("partitions"), "created_offset", "created_at",
                    "deleted_offset", "deleted_at", "file"))


def features_table(applied: DataFrame) -> DataFrame:
    """Needs applied_records; each FeatureLevelRecord in order: cluster_id, metadata_broker, feature,
    feature_level, metadata_offset, timestamp, file, position."""
    return applied.filter(F.col("record_type") == "FEATURE_LEVEL_RECORD").select(
        "cluster_id", "metadata_broker", "feature", "feature_level", "metadata_offset", "timestamp", "file",
        "position")


# --- end state ------------------------------------------------------------------------------------------------

def live_topics(topics: DataFrame) -> DataFrame:
    """Needs topics_table; the topics not deleted at the end of the log: cluster_id, topic, topic_id, partitions."""
    return topics.filter(F.col("deleted_offset").isNull()).select("cluster_id", "topic", "topic_id", "partitions")


def partition_state(history: DataFrame, topics: DataFrame) -> DataFrame:
    """Needs partition_history and topics_table; each live topic's partitions at the end of the log (their last
    history row), with `since_offset` / `since` (where the leader last changed) and `last_leader` (the leader
    before that change)."""
    # one row per metadata offset and partition (a snapshot holds one PartitionRecord per partition)
    w = Window.partitionBy(*PARTITION).orderBy(F.desc("metadata_offset"))
    changed = history.filter(F.col("election") != "none")
    since = (changed.withColumn("rank", F.row_number().over(w)).filter("rank = 1")
             .select(*PARTITION, F.col("metadata_offset").alias("since_offset"), F.col("timestamp").alias("since"),
                     F.col("previous_leader").alias("last_leader")))
    last = history.withColumn("rank", F.row_number().over(w)).filter("rank = 1").drop("rank")
    return (last.join(live_topics(topics).select("cluster_id", "topic_id"), ["cluster_id", "topic_id"])
            .join(since, PARTITION, "left"))


def live_brokers(brokers: DataFrame) -> DataFrame:
    """Needs broker_history; per cluster the brokers registered, unfenced and not in controlled shutdown at the end
    of the log: cluster_id, live_brokers (sorted ids; clusters with none are absent)."""
    # the rows of one record (fenced and controlled_shutdown) carry the same registration after it
    w = Window.partitionBy("cluster_id", "broker_id").orderBy(F.desc("metadata_offset"))
    last = brokers.withColumn("rank", F.row_number().over(w)).filter("rank = 1")
    return (last.filter((F.col("fenced") == F.lit(False)) & ~F.col("in_controlled_shutdown"))
            .groupBy("cluster_id").agg(F.array_sort(F.collect_list("broker_id")).alias("live_brokers")))


# --- the KRaft checks' inputs (spark/sql/unclean_leader_election.sql, leader_epoch_unknown.sql) ---------------

def epoch_starts(batches: DataFrame, epochs: DataFrame, brokers: DataFrame) -> DataFrame:
    """Needs the batches, leader_epochs and brokers tables; per cluster_id, topic, partition and leader epoch the
    first data offset of that epoch on any broker (`epoch_start_offset`): leader-epoch-checkpoint's start offset,
    else the first batch carrying it."""
    cp = with_cluster_id(epochs, brokers).groupBy("cluster_id", "topic", "partition",
                                                  F.col("epoch").alias("leader_epoch")) \
        .agg(F.min("start_offset").alias("cp_start"))
    bt = (with_cluster_id(batches.filter((F.col("magic") == 2) & F.col("crc_valid")), brokers)
          .groupBy("cluster_id", "topic", "partition", F.col("partition_leader_epoch").alias("leader_epoch"))
          .agg(F.min("base_offset").alias("batch_start")))
    return cp.join(bt, ["cluster_id", "topic", "partition", "leader_epoch"], "full_outer").select(
        "cluster_id", "topic", "partition", "leader_epoch",
        F.coalesce("cp_start", "batch_start").alias("epoch_start_offset"))


def data_leader_epochs(batches: DataFrame, epochs: DataFrame, brokers: DataFrame, topic_ids: DataFrame) -> DataFrame:
    """Needs the batches, leader_epochs, brokers and partition_topic_ids tables; every leader epoch the data of a
    partition carries, where it first appears per file: broker, cluster_id, topic, partition, topic_id, leader_epoch,
    offset, file, position, source (`batch` or `leader-epoch-checkpoint`)."""
    key = ["broker", "topic", "partition"]
    from_batches = (batches.filter((F.col("magic") == 2) & F.col("crc_valid"))
                    .groupBy(*key, "file", F.col("partition_leader_epoch").alias("leader_epoch"))
                    .agg(F.min("base_offset").alias("offset"), F.min_by("position", "base_offset").alias("position"))
                    .withColumn("source", F.lit("batch")))
    from_cp = epochs.select(*key, "file", F.col("epoch").alias("leader_epoch"), F.col("start_offset").alias("offset"),
                            F.lit(None).cast("long").alias("position"), F.lit("leader-epoch-checkpoint").alias("source"))
    return with_cluster_id(from_batches.unionByName(from_cp), brokers).join(topic_ids, key, "left")


#: elections_of's columns.
ELECTIONS = ("cluster_id string, topic string, partition int, leader_epoch bigint, leader int, election string, "
             "elected_at bigint")


def elections_of(history: DataFrame) -> DataFrame:
    """Needs partition_history; the leader changes (election other than `none` and `initial`) by cluster_id, topic,
    partition: leader_epoch, leader, election, elected_at (replica_divergence's `elections`)."""
    return history.filter(~F.col("election").isin("none", "initial")).select(
        "cluster_id", "topic", "partition", "leader_epoch", "leader", "election",
        F.col("timestamp").alias("elected_at"))


# --- executors: the metadata log's records as rows ------------------------------------------------------------

#: The record types the replay reads (and a topic's cleanup.policy ConfigRecord, `_replayed`); the others
#: (NoOpRecord, other ConfigRecords, ...) are not emitted, but a file's last record is, whatever its type, so that a
#: copy's end offset is known.
REPLAYED_TYPES = frozenset({
    PARTITION_RECORD, PARTITION_CHANGE_RECORD, "TOPIC_RECORD", "REMOVE_TOPIC_RECORD", "REGISTER_BROKER_RECORD",
    "UNREGISTER_BROKER_RECORD", "FENCE_BROKER_RECORD", "UNFENCE_BROKER_RECORD", "BROKER_REGISTRATION_CHANGE_RECORD",
    "FEATURE_LEVEL_RECORD", "BEGIN_TRANSACTION_RECORD", "END_TRANSACTION_RECORD", "ABORT_TRANSACTION_RECORD",
    CLEAR_ELR_RECORD})
_LISTS = {"isr": "isr", "eligibleLeaderReplicas": "elr", "lastKnownElr": "last_known_elr", "replicas": "replicas",
          "addingReplicas": "adding_replicas", "removingReplicas": "removing_replicas", "directories": "directories",
          "logDirs": "log_dirs"}
#: The replayed types of which the replay reads only the type: a newer one whose fields do not read still applies.
_TYPE_ONLY = frozenset({"BEGIN_TRANSACTION_RECORD", "END_TRANSACTION_RECORD", "ABORT_TRANSACTION_RECORD"})
_BROKER_TYPES = ("REGISTER_BROKER_RECORD", "UNREGISTER_BROKER_RECORD", "FENCE_BROKER_RECORD", "UNFENCE_BROKER_RECORD",
                 "BROKER_REGISTRATION_CHANGE_RECORD")


def metadata_row(type_name: str, version: int, data: dict) -> dict:
    """The typed columns of METADATA_RECORDS for one decoded record (`parsers.cluster_metadata.SchemaRecord`'s
    type_name, version and data, whose absent tagged fields take their schema defaults here)."""
    row: dict = {"record_type": type_name, "version": version}
    if type_name in (PARTITION_RECORD, PARTITION_CHANGE_RECORD):
        row.update(topic_id=data.get("topicId"), partition=data.get("partitionId"),
                   **{column: data.get(name) for name, column in _LISTS.items() if name != "logDirs"})
        if type_name == PARTITION_RECORD:
            row.update(leader=data.get("leader"), leader_epoch=data.get("leaderEpoch"),
                       partition_epoch=data.get("partitionEpoch"),
                       leader_recovery_state=data.get("leaderRecoveryState", 0))
        else:
            row.update(leader=data.get("leader", NO_LEADER_CHANGE),
                       leader_recovery_state=data.get("leaderRecoveryState", -1))
    elif type_name in ("TOPIC_RECORD", "REMOVE_TOPIC_RECORD"):
        row.update(topic=data.get("name"), topic_id=data.get("topicId"))
    elif type_name == CLEAR_ELR_RECORD:
        row.update(topic=data.get("topicName"))
    elif type_name == "FEATURE_LEVEL_RECORD":
        row.update(feature=data.get("name"), feature_level=data.get("featureLevel"))
    elif type_name == CONFIG_RECORD:
        row.update(topic=data.get("resourceName"), config_name=data.get("name"), config_value=data.get("value"))
    elif type_name in _BROKER_TYPES:
        row.update(broker_id=data.get("brokerId", data.get("id")), broker_epoch=data.get("brokerEpoch",
                                                                                        data.get("epoch")),
                   incarnation_id=data.get("incarnationId"), rack=data.get("rack"), log_dirs=data.get("logDirs"))
        if type_name == "REGISTER_BROKER_RECORD":
            row.update(fenced=int(bool(data.get("fenced", True))),
                       in_controlled_shutdown=int(bool(data.get("inControlledShutdown", False))))
        elif type_name == "BROKER_REGISTRATION_CHANGE_RECORD":
            row.update(fenced=data.get("fenced", 0), in_controlled_shutdown=data.get("inControlledShutdown", 0))
    return row


def _replayed(type_name: str, data: dict) -> bool:
    """Whether the replay reads a record of `type_name`: a ConfigRecord only for a topic's cleanup.policy."""
    if type_name == CONFIG_RECORD:
        return data.get("resourceType") == TOPIC_RESOURCE and data.get("name") == CLEANUP_POLICY
    return type_name in REPLAYED_TYPES


def _unread_consequence(type_name: str) -> str:
    """What the replay does with a newer record of `type_name` whose fields do not read (the finding's words)."""
    if type_name in _TYPE_ONLY:
        return "the control-plane replay still applies it as a metadata transaction marker (it reads only the type)"
    if type_name not in REPLAYED_TYPES:
        return ""
    what = ("the partition it changes keeps its state from before it, and its leader and partition epochs after it "
            "fall behind the controller's" if type_name == PARTITION_CHANGE_RECORD
            else "what it changes is missing from the control-plane tables after it")
    return f"the control-plane replay leaves every such record out, as it cannot know what it changes: {what}"


def metadata_record_rows(tasks: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """mapInArrow: segment tasks of `__cluster_metadata` (log segments and `<end offset>-<epoch>.checkpoint`
    snapshots) -> one METADATA_RECORDS row per record the replay reads (cluster_id left null: the Spark side adds
    it), or a finding row (`row_kind`): `internal_record_undecodable`, and `internal_record_newer_version` for the
    first record of each newer record type and version in the task. A newer record whose fields do not read is not
    replayed (see the module docstring): its row, kept only as a file's last record for the copy's end offset, has
    a null record_type. Control batches are skipped; so are the records of a batch whose CRC is wrong (the segment
    pass reports the batch)."""
    from kforensics.spark.executor_files import FLUSH_ROWS
    from kforensics.spark.schemas import METADATA_ROWS as schema

    rows: list[dict] = []
    for chunk in tasks:
        for task in chunk.to_pylist():
            try:
                for row in _metadata_file_rows(task):
                    rows.append(row)
                    if len(rows) >= FLUSH_ROWS:
                        yield pa.RecordBatch.from_pylist(rows, schema=schema)
                        rows = []
            except OSError:
                pass  # the segment pass reports the file as unreadable_file; the records read before stay
    if rows:
        yield pa.RecordBatch.from_pylist(rows, schema=schema)


def _metadata_file_rows(task: dict) -> Iterator[dict]:
    """The rows `metadata_record_rows` makes of one `__cluster_metadata` segment or snapshot."""
    import json

    from kforensics.parsers.cluster_metadata import decode_metadata_record
    from kforensics.parsers.internal_topics import NewerVersions
    from kforensics.parsers.log_dir import FILE_TYPE
    from kforensics.parsers.record_batch import Record, RecordBatch, open_log
    from kforensics.spark.executor_files import local_file

    uri = task["path"]
    name = uri.rsplit("/", 1)[-1]
    snap = FILE_TYPE["metadata_snapshot"].names.match(name)  # bootstrap.checkpoint: no offset
    snapshot_offset = int(snap.group(1)) if snap and snap.group(1) else None
    where = {"metadata_broker": task["broker"], "file": uri, "snapshot_offset": snapshot_offset}
    newer = NewerVersions()
    with local_file(uri) as path:
        if path is None:
            return
        first = None
        last_skipped: dict | None = None
        with open_log(path) as log:
            for b in log.batches():
                if not isinstance(b, RecordBatch):
                    continue
                first = b.base_offset if first is None else first
                if b.is_control or not b.crc_valid:
                    last_skipped = None
                    continue
                for r in log.records(b):
                    if not isinstance(r, Record):
                        continue
                    at = {**where, "position": b.position, "timestamp": r.timestamp, "record_index": r.offset,
                          "metadata_offset": r.offset if snapshot_offset is None else snapshot_offset - 1,
                          "file_first_offset": first}
                    try:
                        decoded = decode_metadata_record(r.value)
                    except ValueError as exc:
                        yield {"row_kind": "finding", **at, "kind": "internal_record_undecodable",
                               "severity": "warning", "details": json.dumps({"offset": r.offset, "error": str(exc)}),
                               "message": f"metadata record at offset {r.offset} of {uri} could not be decoded: {exc}"}
                        continue
                    replayed = _replayed(decoded.type_name, decoded.data)
                    if decoded.newer:
                        f = newer.finding(METADATA_TOPIC, uri, b.position, r.offset, decoded.type_name,
                                          decoded.api_key, decoded.version, decoded.known_versions,
                                          fields_read=decoded.fields_read,
                                          consequence="" if decoded.fields_read else _unread_consequence(
                                              decoded.type_name))
                        if f is not None:
                            yield {"row_kind": "finding", **at, "kind": f.kind, "severity": f.effective_severity,
                                   "message": f.message, "details": json.dumps(dict(f.details))}
                    if not decoded.fields_read and decoded.type_name not in _TYPE_ONLY:
                        # what it changes is unknown: not replayed; a null type no replay step reads
                        row = {"row_kind": "record", **at, "record_type": None, "version": decoded.version}
                        replayed = False
                    else:
                        row = {"row_kind": "record", **at, **metadata_row(decoded.type_name, decoded.version,
                                                                          decoded.data)}
                    if replayed:
                        yield row
                        last_skipped = None
                    else:
                        last_skipped = row
    if last_skipped is not None and snapshot_offset is None:
        yield last_skipped


def read_metadata_records(segment_tasks: DataFrame, brokers: DataFrame, present: bool) -> DataFrame:
    """Needs the segment task rows and the brokers table; METADATA_RECORDS (with `row_kind` record|finding and the
    finding columns) of every `__cluster_metadata` segment and snapshot, cluster_id from the broker's
    meta.properties ("" when unknown). No job when no copy is `present`."""
    from kforensics.spark.schemas import METADATA_ROWS, ddl

    rows = (segment_tasks.filter((F.col("topic") == METADATA_TOPIC) & (F.col("partition") == 0))
            .mapInArrow(metadata_record_rows, ddl(METADATA_ROWS)))
    if not present:
        rows = rows.limit(0)
    ids = F.broadcast(brokers.select(F.col("broker").alias("metadata_broker"),
                                     F.coalesce("cluster_id", F.lit("")).alias("cid")))
    return rows.join(ids, "metadata_broker", "left").withColumn("cluster_id", F.coalesce("cid", F.lit(""))).drop("cid")
