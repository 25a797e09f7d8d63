"""The analysis: input tables -> facts tables and findings. Transforms are wired here, nothing else."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import reduce
from typing import Generic, TypeVar

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from kforensics.defaults import (
    DEFAULT_REMOTE_STUCK_AFTER_MS,
    DEFAULT_TRANSACTION_STATE_PARTITIONS,
    DEFAULT_TXN_TIMEOUT_MS,
)
from kforensics.spark import (
    cleaner,
    consumer_offsets,
    control_plane,
    coordinator,
    crosschecks,
    producers,
    remote_storage,
    replicas,
    transactions,
)
from kforensics.spark.coordinator_partition import with_expected_coordinator_partition
from kforensics.spark.dump_input import with_txnindex_unknown, without_file_checks
from kforensics.spark.findings import FINDING_COLUMNS
from kforensics.spark.read import InputFacts, batch_record_rows, live_only

T = TypeVar("T")

#: Threads that plan the finding checks side by side (the driver mostly waits on the JVM meanwhile).
FINDINGS_THREADS = 4


class _Keeper:
    """Makes intermediate tables that several outputs read: each is computed once, and its lineage cut, so that
    the plans built on it stay small (Spark analyses a DataFrame's whole plan at every transformation; with the
    lineage kept, planning the analysis took longer than running it).

    The checkpoint is lazy: its last stage runs inside the first job that reads it. That job reports the
    stage's metrics to the plan the checkpoint was cut from, so the keeper holds on to that plan until the
    scan is done; once the JVM has collected it, Spark logs an ERROR with a stack trace per task ("Attempted
    to access non-existent accumulator") on the operator's terminal."""

    def __init__(self) -> None:
        self._sources: list[DataFrame] = []

    def __call__(self, df: DataFrame) -> DataFrame:
        self._sources.append(df)
        return df.localCheckpoint(eager=False)

    def only_if(self, df: DataFrame, possible: bool) -> DataFrame:
        """Kept, or no rows when the listing already shows there is nothing to find (then Spark plans no job
        for it or anything joined to it)."""
        return self(df) if possible else df.limit(0)


class _Once(Generic[T]):
    """A zero-argument function's value, computed by the first caller; callers in other threads wait for it."""

    def __init__(self, make: Callable[[], T]) -> None:
        self._make, self._lock, self._value = make, threading.Lock(), None

    def __call__(self) -> T:
        with self._lock:
            if self._value is None:
                self._value = self._make()
            return self._value


def analyze(tables: dict[str, DataFrame], *, txn_timeout_ms: int = DEFAULT_TXN_TIMEOUT_MS,
            transaction_state_partitions: int = DEFAULT_TRANSACTION_STATE_PARTITIONS,
            facts: InputFacts | None = None, remote_stuck_after_ms: int = DEFAULT_REMOTE_STUCK_AFTER_MS,
            resend: dict[str, int] | None = None) -> dict[str, Callable[[], DataFrame]]:
    """Needs batches, segments, txnindex, snapshot_entries, leader_epochs, partition_checkpoints,
    coordinator_records, offset_commits, remote_log_events, partition_topic_ids, parser_findings and (KRaft)
    metadata_records and partition_dirs; returns producers, transactions, lso, lso_changes, aborted_ranges, replicas,
    leader_epoch_lineage, coordinator_transactions, consumer_offsets, remote_segments, remote_partition_deletes,
    partition_history, broker_history, topics, features and findings, each as a function that builds it. The outputs and the intermediate tables
    they share are built on first demand, once, so a caller can plan and write the outputs side by side from
    several threads (on a small input, planning on the driver costs as much as running the jobs).
    `facts` (from the listing) lets analyses with nothing to judge plan no job: no replica comparison without
    a partition under two brokers, no coordinator or group checks without their internal topics. `resend` holds
    content_duplicate's min_records, tail and window_ms; None (headers-only mode) skips that check, the only one
    that reads records."""
    keep = _Keeper()  # referenced by the returned functions: the kept tables' plans live as long as they do
    every_dir, tables = tables, live_only(tables)
    possible = facts or InputFacts(replicas_possible=True, has_transaction_state=True, has_consumer_offsets=True)
    batches = _Once(lambda: keep(tables["batches"].transform(producers.with_leader_epoch_change)))
    data = _Once(lambda: producers.data_batches(batches()))
    ends = _Once(lambda: transactions.partition_ends(batches(), tables["partition_checkpoints"]))
    txns = _Once(lambda: keep(transactions.transactions_table(transactions.with_transaction_index(batches()))))
    sweep = _Once(lambda: keep(transactions.lso_sweep(txns())))
    aborted = _Once(lambda: transactions.aborted_ranges(sweep(), tables["txnindex"], ends()))

    # Whole cluster: replicas against each other, the coordinator against the markers, group offsets.
    # A topic-partition is identified by cluster id too: disks of different clusters are not replicas.
    clustered = _Once(lambda: replicas.with_cluster_id(batches(), tables["brokers"]))
    ends_r = _Once(lambda: keep(replicas.replica_ends(ends(), tables["brokers"], tables["leader_epochs"])))
    longest = _Once(lambda: keep(replicas.longest_replicas(ends_r())))
    div = _Once(lambda: keep.only_if(replicas.divergences(clustered(), ends_r()), possible.replicas_possible))
    log = _Once(lambda: keep.only_if(coordinator.coordinator_log(tables["coordinator_records"], longest()),
                                 possible.has_transaction_state))
    txn_ids = _Once(lambda: keep(with_expected_coordinator_partition(coordinator.transactional_ids(log()),
                                                                     transaction_state_partitions)))
    ctx = _Once(lambda: keep(coordinator.with_partitions_not_in_input(
        with_expected_coordinator_partition(coordinator.coordinator_transactions(log()), transaction_state_partitions),
        ends_r().select("cluster_id", "topic", "partition"))))
    offsets = _Once(lambda: keep.only_if(consumer_offsets.consumer_offsets_table(tables["offset_commits"], longest(),
                                                                             aborted()[0]),
                                     possible.has_consumer_offsets))

    # Tiered storage: the remote segments (from __remote_log_metadata) against the local logs.
    remote = _Once(lambda: keep.only_if(remote_storage.remote_segments_table(tables["remote_log_events"]),
                                        possible.has_remote_log_metadata))
    finished = _Once(lambda: keep(remote_storage.finished_copies(remote(), tables["brokers"])))
    local = _Once(lambda: keep(remote_storage.local_logs(tables["segments"], tables["partition_topic_ids"],
                                                         tables["brokers"])))
    ranges = _Once(lambda: keep(remote_storage.epoch_ranges(finished())))
    pairs = _Once(lambda: keep(remote_storage.range_pairs(ranges())))

    # KRaft control plane (spark/control_plane.py): the metadata log replayed, held against the data.
    kraft = possible.has_cluster_metadata and "metadata_records" in tables
    applied = _Once(lambda: keep.only_if(control_plane.applied_records(tables["metadata_records"]), kraft))
    history = _Once(lambda: keep(control_plane.partition_history(applied())))
    broker_events = _Once(lambda: keep(control_plane.broker_history(applied())))
    topics = _Once(lambda: keep(control_plane.topics_table(applied())))
    state = _Once(lambda: keep(control_plane.partition_state(history(), topics())))
    reference = _Once(lambda: keep(control_plane.reference_copies(tables["metadata_records"])))

    # Re-sends by a new producer id (full mode): candidates from the batch headers, then only the records of
    # the heads and tails they compare.
    resend_data = _Once(lambda: data().filter("crc_valid"))
    resend_pairs = _Once(lambda: keep(producers.resend_candidates(producers.producer_spans(resend_data()),
                                                                  window_ms=(resend or {}).get("window_ms", 0))))

    def findings() -> DataFrame:
        checks: list[Callable[[], DataFrame]] = [
            lambda: tables["parser_findings"],
            lambda: producers.sequence_gaps(producers.with_previous_batch(data())),
            lambda: producers.duplicate_sequences(data()),
            lambda: producers.zombie_epochs(batches()),
            lambda: transactions.hanging_transactions(txns(), ends(), txn_timeout_ms),
            lambda: cleaner.cleaner_blocked(cleaner.cleaner_holds(txns(), ends(), batches(), txn_timeout_ms),
                                            txn_timeout_ms),
            lambda: without_file_checks(aborted()[1], possible.dump_brokers),  # no .txnindex in dump text
            lambda: crosschecks.snapshot_mismatches(data(), tables["snapshot_entries"], ends()),
            lambda: crosschecks.leader_epoch_mismatches(batches(), tables["leader_epochs"]),
            lambda: crosschecks.offset_overlaps(batches()),
            lambda: crosschecks.segment_name_mismatches(tables["segments"]),
        ]
        # The whole-cluster checks are built only where the listing shows something to judge: otherwise their
        # inputs are empty and building them costs only planning (about a third of the analyses of a scan).
        if possible.replicas_possible:
            checks.append(lambda: replicas.replica_divergence_findings(
                clustered(), ends_r(), div(), control_plane.elections_of(history()) if kraft else None))
        if kraft:
            checks += _control_plane_checks(tables, every_dir, history, state, topics, broker_events, reference,
                                            lambda: replicas.divergence_facts(clustered(), ends_r(), div())
                                            if possible.replicas_possible else None)
        if possible.has_transaction_state:
            checks += [lambda: coordinator.marker_findings(coordinator.marker_checks(ctx(), clustered(), ends_r())),
                       lambda: coordinator.unknown_producers(clustered(), log(), transaction_state_partitions),
                       lambda: coordinator.epoch_fenced_writes(clustered(), log(), txn_ids())]
        if possible.has_consumer_offsets:
            checks.append(lambda: consumer_offsets.committed_offset_findings(offsets()))
        if possible.has_future_replicas:
            checks.append(lambda: replicas.future_replica_divergences(every_dir["batches"]))
        if resend is not None:
            checks.append(lambda: producers.content_duplicates(producers.resends(
                batch_record_rows(producers.resend_batches(resend_data(), resend_pairs(), tail=resend["tail"])),
                resend_pairs(), min_records=resend["min_records"], tail=resend["tail"])))
        if possible.has_remote_log_metadata and "remote_log_events" in tables:
            checks += [lambda: remote_storage.remote_segment_stuck(remote(), remote_stuck_after_ms),
                       lambda: remote_storage.remote_log_gaps(finished(), local()),
                       lambda: remote_storage.remote_epoch_mismatches_with_checkpoint(ranges(), local(),
                                                                                      tables["leader_epochs"]),
                       lambda: remote_storage.remote_epoch_chain_mismatches(pairs()),
                       lambda: remote_storage.remote_overlaps(pairs())]
        # Each check is planned (and its shuffles run) in its own thread and kept: the union's plan is then
        # a few scans, not sixteen analyses' worth of windows and joins for the optimizer to walk at once.
        context = tables["batches"].sparkSession.sparkContext

        def run(check: Callable[[], DataFrame]) -> DataFrame:
            context.setJobDescription("kforensics scan: findings")  # this thread's jobs, in Spark's UI
            return keep(check().select(*FINDING_COLUMNS))

        with ThreadPoolExecutor(max_workers=FINDINGS_THREADS) as pool:
            found = list(pool.map(run, checks))
        return reduce(DataFrame.unionByName, found)

    return {
        "producers": lambda: producers.producers_table(data()),
        "transactions": lambda: replicas.with_cluster_id(txns().drop("txn_index"), tables["brokers"])
        .join(txn_ids(), ["cluster_id", "producer_id"], "left").drop("cluster_id"),
        "replicas": lambda: replicas.replicas_table(ends_r(), div()).withColumn("dir_state", F.lit("live"))
        .unionByName(replicas.special_dir_replicas(every_dir["segments"], tables["brokers"])),
        "leader_epoch_lineage": lambda: replicas.leader_epoch_lineage(batches(), tables["leader_epochs"]),
        "coordinator_transactions": lambda: ctx().drop("txn_seq"),
        "consumer_offsets": offsets,
        "lso": lambda: transactions.lso_table(txns(), ends()),
        "lso_changes": lambda: transactions.lso_changes(sweep()),
        "aborted_ranges": lambda: with_txnindex_unknown(aborted()[0], possible.dump_brokers),
        "remote_segments": remote,
        "remote_partition_deletes": lambda: remote_storage.remote_partition_deletes_table(tables["remote_log_events"]),
        "partition_history": history,
        "broker_history": broker_events,
        "topics": topics,
        "features": lambda: control_plane.features_table(applied()),
        "findings": findings,
    }


def _control_plane_checks(tables: dict[str, DataFrame], every_dir: dict[str, DataFrame],
                          history: Callable[[], DataFrame],
                          state: Callable[[], DataFrame], topics: Callable[[], DataFrame],
                          broker_events: Callable[[], DataFrame], reference: Callable[[], DataFrame],
                          divergence: Callable[[], DataFrame | None]) -> list[Callable[[], DataFrame]]:
    """The findings of the KRaft control plane: unclean elections (with the offsets they cost), offline and stray
    partitions, leader epochs the metadata never gave."""
    brokers = tables["brokers"]

    def unclean() -> DataFrame:
        facts = divergence()
        lost = (facts.select("cluster_id", "topic", "partition", "a_epoch", "b_epoch", "lost_offsets",
                             F.col("broker").alias("lost_on")) if facts is not None else
                tables["batches"].sparkSession.createDataFrame(
                    [], "cluster_id string, topic string, partition int, a_epoch int, b_epoch int, "
                        "lost_offsets array<bigint>, lost_on string"))
        return control_plane.unclean_leader_elections(
            history(), control_plane.epoch_starts(tables["batches"], tables["leader_epochs"], brokers), lost)

    def stray() -> DataFrame:
        # every_dir: the topic ids of -stray dirs too
        dirs = (tables["partition_dirs"].join(every_dir["partition_topic_ids"],
                                              ["broker", "topic", "partition", "dir_state"], "left")
                .join(F.broadcast(brokers.select("broker", F.coalesce("cluster_id", F.lit("")).alias("cluster_id"),
                                                 "node_id")), "broker"))
        return control_plane.stray_partitions(dirs, state(), topics(), reference())

    return [
        unclean,
        lambda: control_plane.offline_partitions(state(), control_plane.live_brokers(broker_events())),
        stray,
        lambda: control_plane.leader_epochs_unknown(history(), control_plane.data_leader_epochs(
            tables["batches"], tables["leader_epochs"], brokers, tables["partition_topic_ids"]), reference()),
    ]
