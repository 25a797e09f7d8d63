"""The analysis: input tables -> facts tables and findings. Transforms are wired here, nothing else."""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import reduce
from typing import Generic, TypeVar

from pyspark.sql import DataFrame

from kforensics.spark import consumer_offsets, coordinator, crosschecks, producers, replicas, transactions
from kforensics.spark.findings import FINDING_COLUMNS
from kforensics.spark.read import InputFacts

T = TypeVar("T")


def _keep(df: DataFrame) -> DataFrame:
    """An intermediate table several outputs read: computed once (locally checkpointed on first use), and
    its lineage cut, so that the plans built on it stay small. Spark analyses a DataFrame's whole plan at
    every transformation; with the lineage kept, planning the analysis took longer than running it."""
    return df.localCheckpoint(eager=False)


def _only_if(df: DataFrame, possible: bool) -> DataFrame:
    """`_keep(df)`, or no rows when the listing already shows there is nothing to find (then Spark plans no
    job for it or anything joined to it)."""
    return _keep(df) if possible else df.limit(0)


class _Once(Generic[T]):
    """A zero-argument function's value, computed by the first caller; callers in other threads wait for it."""

    def __init__(self, make: Callable[[], T]) -> None:
        self._make, self._lock, self._value = make, threading.Lock(), None

    def __call__(self) -> T:
        with self._lock:
            if self._value is None:
                self._value = self._make()
            return self._value


def analyze(tables: dict[str, DataFrame], *, txn_timeout_ms: int = transactions.DEFAULT_TXN_TIMEOUT_MS,
            transaction_state_partitions: int = coordinator.DEFAULT_TRANSACTION_STATE_PARTITIONS,
            facts: InputFacts | None = None) -> dict[str, Callable[[], DataFrame]]:
    """Needs batches, segments, txnindex, snapshot_entries, leader_epochs, partition_checkpoints,
    coordinator_records, offset_commits and parser_findings (records in full mode); returns producers,
    transactions, lso, lso_changes, aborted_ranges, replicas, leader_epoch_lineage, coordinator_transactions,
    consumer_offsets and findings, each as a function that builds it. The outputs and the intermediate tables
    they share are built on first demand, once, so a caller can plan and write the outputs side by side from
    several threads (on a small input, planning on the driver costs as much as running the jobs).
    `facts` (from the listing) lets analyses with nothing to judge plan no job: no replica comparison without
    a partition under two brokers, no coordinator or group checks without their internal topics."""
    possible = facts or InputFacts(replicas_possible=True, has_transaction_state=True, has_consumer_offsets=True)
    batches = _Once(lambda: _keep(tables["batches"].transform(producers.with_leader_epoch_change)))
    data = _Once(lambda: producers.data_batches(batches()))
    ends = _Once(lambda: transactions.partition_ends(batches(), tables["partition_checkpoints"]))
    txns = _Once(lambda: _keep(transactions.transactions_table(transactions.with_transaction_index(batches()))))
    sweep = _Once(lambda: _keep(transactions.lso_sweep(txns())))
    aborted = _Once(lambda: transactions.aborted_ranges(sweep(), tables["txnindex"]))

    # Whole cluster: replicas against each other, the coordinator against the markers, group offsets.
    # A topic-partition is identified by cluster id too: disks of different clusters are not replicas.
    clustered = _Once(lambda: replicas.with_cluster_id(batches(), tables["brokers"]))
    ends_r = _Once(lambda: _keep(replicas.replica_ends(ends(), tables["brokers"], tables["leader_epochs"])))
    longest = _Once(lambda: _keep(replicas.longest_replicas(ends_r())))
    div = _Once(lambda: _only_if(replicas.divergences(clustered(), ends_r()), possible.replicas_possible))
    log = _Once(lambda: _only_if(coordinator.coordinator_log(tables["coordinator_records"], longest()),
                                 possible.has_transaction_state))
    txn_ids = _Once(lambda: _keep(coordinator.transactional_ids(log())))
    ctx = _Once(lambda: _keep(coordinator.with_partitions_not_in_input(
        coordinator.coordinator_transactions(log()), ends_r().select("cluster_id", "topic", "partition"))))
    offsets = _Once(lambda: _only_if(consumer_offsets.consumer_offsets_table(tables["offset_commits"], longest(),
                                                                             aborted()[0]),
                                     possible.has_consumer_offsets))

    def findings() -> DataFrame:
        found = [
            tables["parser_findings"],
            replicas.replica_divergence_findings(clustered(), ends_r(), div()),
            coordinator.marker_findings(coordinator.marker_checks(ctx(), clustered(), ends_r())),
            coordinator.unknown_producers(clustered(), log(), transaction_state_partitions),
            coordinator.epoch_fenced_writes(clustered(), log(), txn_ids()),
            consumer_offsets.committed_offset_findings(offsets()),
            producers.sequence_gaps(producers.with_previous_batch(data())),
            producers.duplicate_sequences(data()),
            producers.zombie_epochs(batches()),
            transactions.hanging_transactions(txns(), ends(), txn_timeout_ms),
            aborted()[1],
            crosschecks.snapshot_mismatches(data(), tables["snapshot_entries"], ends()),
            crosschecks.leader_epoch_mismatches(batches(), tables["leader_epochs"]),
            crosschecks.offset_overlaps(batches()),
            crosschecks.segment_name_mismatches(tables["segments"]),
        ]
        if "records" in tables:
            found.append(producers.content_duplicates(tables["records"]))
        return reduce(DataFrame.unionByName, [f.select(*FINDING_COLUMNS) for f in found])

    return {
        "producers": lambda: producers.producers_table(data()),
        "transactions": lambda: replicas.with_cluster_id(txns().drop("txn_index"), tables["brokers"])
        .join(txn_ids(), ["cluster_id", "producer_id"], "left").drop("cluster_id"),
        "replicas": lambda: replicas.replicas_table(ends_r(), div()),
        "leader_epoch_lineage": lambda: replicas.leader_epoch_lineage(batches(), tables["leader_epochs"]),
        "coordinator_transactions": lambda: ctx().drop("txn_seq"),
        "consumer_offsets": offsets,
        "lso": lambda: transactions.lso_table(txns(), ends()),
        "lso_changes": lambda: transactions.lso_changes(sweep()),
        "aborted_ranges": lambda: aborted()[0],
        "findings": findings,
    }
