"""The analysis: input tables -> facts tables and findings. Transforms are wired here, nothing else.

Adding an analysis: a finding check is one `Check` appended to CHECKS (its name, a function of the `Analysis` that
returns finding rows, and, if the listing can tell when it has nothing to judge, when it applies); a facts table is
one entry of TABLES (and its name in `scan_output.OUTPUT_TABLES`). A table several of them share becomes a
`_shared` method of `Analysis`: built once, on first use, kept (its lineage cut) when `keep`s. Each check is
planned in its own thread and profiled as its own step; a check costs a small scan no planning when it does not
apply.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import reduce
from typing import Any, Generic, TypeVar

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from kforensics.scan_options import ScanOptions
from kforensics.spark import (
    checks,
    consumer_offsets,
    control_plane,
    coordinator,
    exactly_once,
    groups,
    producers,
    remote_storage,
    replicas,
    restart,
    share_groups,
    transactions,
)
from kforensics.spark import schemas as S
from kforensics.spark.coordinator_partition import with_expected_coordinator_partition
from kforensics.spark.dump_input import with_txnindex_unknown, without_file_checks
from kforensics.spark.findings import FINDING_COLUMNS
from kforensics.spark.read import InputFacts, batch_record_rows, live_only
from kforensics.spark.scan_profile import ScanProfile
from kforensics.spark.session import is_small, job_threads
from kforensics.spark.views import SqlViews

T = TypeVar("T")

#: Threads that plan the finding checks side by side (the driver mostly waits on the JVM meanwhile).
FINDINGS_THREADS = 4


def check_params(options: ScanOptions) -> dict[str, object]:
    """The values the checks' files read as named parameters, from the scan's options."""
    return {"txn_timeout_ms": options.txn_timeout_ms, "transaction_state_partitions":
            options.transaction_state_partitions, "clock_skew_ms": options.clock_skew_ms,
            "remote_stuck_after_ms": options.remote_stuck_after_ms}


class _Keeper:
    """Makes intermediate tables that several outputs read: each is computed once, and its lineage cut, so that
    the plans built on it stay small (Spark analyses a DataFrame's whole plan at every transformation; with the
    lineage kept, planning the analysis took longer than running it).

    The checkpoint is lazy: its last stage runs inside the first job that reads it. That job reports the
    stage's metrics to the plan the checkpoint was cut from, so the keeper holds on to that plan until the
    scan is done; once the JVM has collected it, Spark logs an ERROR with a stack trace per task ("Attempted
    to access non-existent accumulator") on the operator's terminal."""

    def __init__(self, single_partition: bool) -> None:
        self._sources: list[DataFrame] = []
        self._single_partition = single_partition

    def __call__(self, df: DataFrame) -> DataFrame:
        if self._single_partition:
            df = df.coalesce(1)
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


class _shared(Generic[T]):  # noqa: N801 - used as a decorator, like functools.cached_property
    """A method of Analysis computed once per Analysis, by its first caller; callers in other threads wait."""

    def __init__(self, make: Callable[[Any], T]) -> None:
        self._make, self._name, self._lock = make, make.__name__, threading.Lock()
        self.__doc__ = make.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    def __get__(self, analysis: Any, owner: type | None = None) -> T:
        if analysis is None:
            return self  # type: ignore[return-value]
        with self._lock:
            once = analysis.__dict__.setdefault(f"_shared_{self._name}",
                                                _Once(lambda: analysis.share(self._make(analysis))))
        return once()


class Analysis:
    """One scan's input tables, options and listing facts, and the intermediate tables its outputs share."""

    def __init__(self, tables: dict[str, DataFrame], options: ScanOptions, facts: InputFacts, small: bool,
                 views: SqlViews | None) -> None:
        if small:  # one partition each: an aggregate, a window or a sort-merge join of them needs no shuffle
            tables = {name: df.coalesce(1) for name, df in tables.items()}
        self.views = views
        #: `tables`: the live dirs' rows only; `every_dir`: also those of -delete, -future and -stray dirs
        self.every_dir = {name: self.share(df) for name, df in tables.items()}
        self.tables = {name: self.share(df) for name, df in live_only(tables).items()}
        self.options, self.facts = options, facts
        self.keep = _Keeper(small)  # the kept tables' plans live as long as this Analysis

    def share(self, value: T) -> T:
        """An input or `_shared` table (or tuple of tables), marked as read by several statements (one temp view
        each, when the caller gave the views)."""
        if self.views is not None:
            for df in value if isinstance(value, tuple) else (value,):
                if isinstance(df, DataFrame):
                    self.views.share(df)
        return value

    def named(self, name: str) -> DataFrame:
        """The table a check's SQL file reads by `name` (`checks.SqlCheck.inputs`)."""
        return NAMED_TABLES[name](self)

    @property
    def params(self) -> dict[str, object]:
        return check_params(self.options)

    def run_family(self, name: str) -> DataFrame:
        """The checks of family `name` (`checks.family`) as one statement over their named tables."""
        found = checks.family(name)
        inputs = {t: self.named(t) for c in found for t in c.inputs}
        return checks.run_checks(found, inputs, self.params)

    @_shared
    def batches(self) -> DataFrame:
        return self.keep(producers.with_leader_epoch_change(self.tables["batches"],
                                                            self.tables["partition_checkpoints"]))

    @_shared
    def data(self) -> DataFrame:
        return producers.data_batches(self.batches)

    @_shared
    def ends(self) -> DataFrame:
        return transactions.partition_ends(self.batches, self.tables["partition_checkpoints"])

    @_shared
    def txns(self) -> DataFrame:
        return self.keep(transactions.transactions_table(transactions.with_transaction_index(self.batches)))

    @_shared
    def sweep(self) -> DataFrame:
        return self.keep(transactions.lso_sweep(self.txns))

    @_shared
    def lso(self) -> DataFrame:
        """The lso table (kept: consumer_lag reads it too)."""
        return self.keep(transactions.lso_table(self.txns, self.ends))

    @_shared
    def aborted(self) -> DataFrame:
        """aborted_transactions: the aborted ranges against the .txnindex (the aborted_ranges table, txnindex)."""
        return checks.run_table("aborted_transactions", lso_sweep=self.sweep, txnindex=self.tables["txnindex"],
                                partition_ends=self.ends)

    @_shared
    def aborted_ranges(self) -> DataFrame:
        return transactions.aborted_ranges(self.aborted)

    # Whole cluster: replicas against each other, the coordinator against the markers, group offsets.
    # A topic-partition is identified by cluster id too: disks of different clusters are not replicas.
    @_shared
    def clustered(self) -> DataFrame:
        return replicas.with_cluster_id(self.batches, self.tables["brokers"])

    @_shared
    def ends_r(self) -> DataFrame:
        return self.keep(replicas.replica_ends(self.ends, self.tables["brokers"], self.tables["leader_epochs"]))

    @_shared
    def longest(self) -> DataFrame:
        return self.keep(replicas.longest_replicas(self.ends_r))

    @_shared
    def div(self) -> DataFrame:
        return self.keep.only_if(replicas.divergences(self.clustered, self.ends_r), self.facts.replicas_possible)

    @_shared
    def live_commits(self) -> DataFrame:
        return checks.run_table("live_commits", offset_commits=self.tables["offset_commits"],
                                longest_replicas=self.longest, transactions=self.txns)

    @_shared
    def divergence_facts(self) -> DataFrame:
        return replicas.divergence_facts(self.clustered, self.ends_r, self.div)

    @_shared
    def log(self) -> DataFrame:
        return self.keep.only_if(coordinator.coordinator_log(self.tables["coordinator_records"], self.longest),
                                 self.facts.has_transaction_state)

    @_shared
    def txn_ids(self) -> DataFrame:
        return self.keep(with_expected_coordinator_partition(coordinator.transactional_ids(self.log),
                                                             self.options.transaction_state_partitions))

    @_shared
    def timed_txns(self) -> DataFrame:
        """The transactions with cluster_id, transactional_id, expected_coordinator_partition and their id's own
        transaction_timeout_ms (the `transactions` table, the timeout checks, unknown_producer)."""
        return self.keep(exactly_once.with_coordinator_timeouts(
            replicas.with_cluster_id(self.txns, self.tables["brokers"]), self.txn_ids))

    @_shared
    def lineage(self) -> DataFrame:
        return exactly_once.producer_lineage(self.log, self.clustered)

    @_shared
    def ctx(self) -> DataFrame:
        return self.keep(coordinator.with_partitions_not_in_input(
            with_expected_coordinator_partition(coordinator.coordinator_transactions(self.log),
                                                self.options.transaction_state_partitions),
            self.ends_r.select("cluster_id", "topic", "partition")))

    @_shared
    def offsets(self) -> DataFrame:
        remote = self.finished if self.facts.has_remote_log_metadata and "remote_log_events" in self.tables else None
        return self.keep.only_if(consumer_offsets.consumer_offsets_table(
            self.tables["offset_commits"], self.longest, self.aborted_ranges, self.txns, remote,
            self.tables["partition_checkpoints"]), self.facts.has_consumer_offsets)

    # Groups (issue 41): __consumer_offsets' group records and __share_group_state replayed (spark/groups.py,
    # spark/share_groups.py); nothing is planned where the parse kept no group record.
    def input_table(self, name: str) -> DataFrame:
        """An input table, or an empty one of its declared schema when the caller gave none."""
        if name in self.tables:
            return self.tables[name]
        return self.share(S.frame(self.tables["batches"].sparkSession, S.INPUT_TABLES[name], []))

    def empty(self, name: str) -> DataFrame:
        """An output table with no rows (its declared schema): what a replay with nothing to replay gives, unplanned."""
        return self.share(S.frame(self.tables["batches"].sparkSession, S.OUTPUT_TABLES[name], []))

    @_shared
    def group_events(self) -> DataFrame:
        """The group records of the replayed replicas, or (nothing to replay) the empty group_records table: the share
        replay reads its topic names either way."""
        if not self.facts.has_group_records:
            return self.input_table("group_records")
        return self.keep(groups.group_events(self.input_table("group_records"), self.longest))

    @_shared
    def group_members(self) -> DataFrame:
        if not self.facts.has_group_records:
            return self.empty("group_members")
        return self.keep(groups.group_members_table(self.group_events))

    @_shared
    def group_assignments(self) -> DataFrame:
        if not self.facts.has_group_records:
            return self.empty("group_assignments")
        return self.keep(groups.group_assignments_table(
            self.group_events, self.tables["partition_topic_ids"], self.input_table("metadata_records")))

    @_shared
    def share_state(self) -> DataFrame:
        if not self.facts.has_share_state_records:
            return self.empty("share_partition_state")
        return self.keep(share_groups.share_state_table(
            self.input_table("share_state_records"), self.longest, self.tables["partition_topic_ids"],
            self.input_table("metadata_records"), self.group_events))

    # Tiered storage: the remote segments (from __remote_log_metadata) against the local logs.
    @_shared
    def remote(self) -> DataFrame:
        return self.keep.only_if(remote_storage.remote_segments_table(self.tables["remote_log_events"]),
                                 self.facts.has_remote_log_metadata)

    @_shared
    def finished(self) -> DataFrame:
        return self.keep(remote_storage.finished_copies(self.remote, self.tables["brokers"]))

    @_shared
    def local(self) -> DataFrame:
        return self.keep(remote_storage.local_logs(self.tables["segments"], self.tables["partition_topic_ids"],
                                                   self.tables["brokers"]))

    @_shared
    def ranges(self) -> DataFrame:
        return self.keep(remote_storage.epoch_ranges(self.finished))

    @_shared
    def pairs(self) -> DataFrame:
        return self.keep(remote_storage.range_pairs(self.ranges))

    # KRaft control plane (spark/control_plane.py): the metadata log replayed, held against the data.
    @property
    def kraft(self) -> bool:
        return self.facts.has_cluster_metadata and "metadata_records" in self.tables

    @_shared
    def applied(self) -> DataFrame:
        return self.keep.only_if(control_plane.applied_records(self.tables["metadata_records"]), self.kraft)

    @_shared
    def history(self) -> DataFrame:
        return self.keep(control_plane.partition_history(self.applied))

    @_shared
    def broker_events(self) -> DataFrame:
        return self.keep(control_plane.broker_history(self.applied))

    @_shared
    def topics(self) -> DataFrame:
        return self.keep(control_plane.topics_table(self.applied))

    @_shared
    def state(self) -> DataFrame:
        return self.keep(control_plane.partition_state(self.history, self.topics))

    @_shared
    def reference(self) -> DataFrame:
        return self.keep(control_plane.reference_copies(self.tables["metadata_records"]))

    # Re-sends by a new producer id (full mode): candidates from the batch headers, then only the records of
    # the heads and tails they compare.
    @_shared
    def resend_data(self) -> DataFrame:
        data = self.data.filter("crc_valid")
        return data if self.options.resend_aborted else exactly_once.without_aborted(data, self.txns)

    @_shared
    def resend_pairs(self) -> DataFrame:
        return self.keep(producers.resend_candidates(producers.producer_spans(self.resend_data),
                                                     window_ms=self.options.resend_window_ms))

    # A broker restart replayed on each partition (dump text has no log dir: not predicted).
    @_shared
    def predicted(self) -> DataFrame:
        # every partition dir: LogLoader recovers -future and -stray dirs like live ones, and loads -delete ones
        return self.keep(restart.predictions(restart.partition_states(
            restart.segment_states(self.every_dir["segment_recovery"], self.tables["parser_findings"],
                                   skip_brokers=self.facts.dump_brokers),
            self.tables["partition_checkpoints"], self.tables["log_dirs"])))


#: The tables the checks' SQL files read, by the names they give them (spark/sql/*.sql).
NAMED_TABLES: dict[str, Callable[[Analysis], DataFrame]] = {
    "parser_findings": lambda a: a.tables["parser_findings"],
    "aborted_transactions": lambda a: a.aborted,
    "batches": lambda a: a.batches,  # with leader_epoch_change, cleaner_offset and base_timestamp as a create time
    "data": lambda a: a.data,
    "segments": lambda a: a.tables["segments"],
    "snapshot_entries": lambda a: a.tables["snapshot_entries"],
    "partition_ends": lambda a: a.ends,
    "leader_epochs": lambda a: a.tables["leader_epochs"],
    "timed_transactions": lambda a: a.timed_txns,
    "clustered_batches": lambda a: a.clustered,
    "every_dir_batches": lambda a: a.every_dir["batches"],
    "divergence_facts": lambda a: a.divergence_facts,
    # no metadata log: no rows, and (limit 0: an empty relation to the optimizer) no join with them planned
    "elections": lambda a: control_plane.elections_of(a.history) if a.kraft else
    a.tables["batches"].sparkSession.createDataFrame([], control_plane.ELECTIONS).limit(0),
    "longest_replicas": lambda a: a.longest,
    # the KRaft control plane (control_plane.py)
    "partition_history": lambda a: a.history,
    "partition_state": lambda a: a.state,
    "metadata_topics": lambda a: a.topics,
    "reference_copies": lambda a: a.reference,
    "live_brokers": lambda a: control_plane.live_brokers(a.broker_events),
    "epoch_starts": lambda a: control_plane.epoch_starts(a.tables["batches"], a.tables["leader_epochs"],
                                                         a.tables["brokers"]),
    "election_losses": lambda a: _election_losses(a),
    "cluster_dirs": lambda a: _cluster_dirs(a),
    "data_leader_epochs": lambda a: control_plane.data_leader_epochs(
        a.tables["batches"], a.tables["leader_epochs"], a.tables["brokers"], a.tables["partition_topic_ids"]),
    "marker_checks": lambda a: checks.run_table("marker_checks", coordinator_txns=a.ctx,
                                                clustered_batches=a.clustered, replica_ends=a.ends_r),
    "coordinator_log": lambda a: a.log,
    "transactional_ids": lambda a: a.txn_ids,
    "partition_dirs": lambda a: a.tables["partition_dirs"],
    "brokers": lambda a: a.tables["brokers"],
    "consumer_offsets": lambda a: a.offsets,
    "group_assignments": lambda a: a.group_assignments,
    "share_partition_state": lambda a: a.share_state,
    "live_commits": lambda a: a.live_commits,
    "share_events": lambda a: checks.run_table("share_events", share_state_records=a.input_table("share_state_records"),
                                               longest_replicas=a.longest),
    "topic_names": lambda a: checks.run_table(
        "topic_names", partition_topic_ids=a.tables["partition_topic_ids"],
        metadata_records=a.input_table("metadata_records"), group_events=a.group_events),
    "restart_predictions": lambda a: a.predicted,
    "resends": lambda a: _resends(a),
    "remote_segments": lambda a: a.remote,
    "finished_copies": lambda a: a.finished,
    "local_logs": lambda a: a.local,
    "epoch_ranges": lambda a: a.ranges,
    "range_pairs": lambda a: a.pairs,
}


@dataclass(frozen=True)
class Check:
    """A finding check: `build` returns its finding rows (FINDING_COLUMNS at least), or `family` names the SQL checks
    (`checks.family`) run as one statement over their named tables; `applies` says from the listing and the options
    whether there can be anything to find (if not, the check is not even planned)."""

    name: str
    build: Callable[[Analysis], DataFrame] | None = None
    applies: Callable[[Analysis], bool] = lambda _a: True
    family: str | None = None

    def run(self, a: Analysis) -> DataFrame:
        return a.run_family(self.family) if self.family else self.build(a).select(*FINDING_COLUMNS)


def _resends(a: Analysis) -> DataFrame:
    tail = a.options.resend_tail
    return producers.resends(batch_record_rows(producers.resend_batches(a.resend_data, a.resend_pairs, tail=tail)),
                             a.resend_pairs, min_records=a.options.resend_min_records, tail=tail)


def _election_losses(a: Analysis) -> DataFrame:
    if a.facts.replicas_possible:
        return a.divergence_facts.select(
            "cluster_id", "topic", "partition", "a_epoch", "b_epoch", "lost_offsets", F.col("broker").alias("lost_on"))
    return a.tables["batches"].sparkSession.createDataFrame(
        [], "cluster_id string, topic string, partition int, a_epoch int, b_epoch int, lost_offsets array<bigint>, "
            "lost_on string")


def _cluster_dirs(a: Analysis) -> DataFrame:
    # a stray dir's own partition.metadata, not the live dir's of the same partition
    return replicas.with_cluster_id(a.tables["partition_dirs"].join(
        a.every_dir["partition_topic_ids"], ["broker", "topic", "partition", "dir_state"], "left"),
        a.tables["brokers"], "node_id")


def _has_transaction_state(a: Analysis) -> bool:
    return a.facts.has_transaction_state


def _has_consumer_offsets(a: Analysis) -> bool:
    return a.facts.has_consumer_offsets


def _has_group_records(a: Analysis) -> bool:
    return a.facts.has_group_records


def _has_share_state_records(a: Analysis) -> bool:
    return a.facts.has_share_state_records


def _committed_offsets(a: Analysis) -> DataFrame:
    found = a.run_family("committed_offset")
    # issue 41: each names the member that owned the partition at the commit (a join of its own, after the check)
    return groups.with_commit_owners(found, a.group_assignments, a.group_members) if a.facts.has_group_records \
        else found


def _kraft(a: Analysis) -> bool:
    return a.kraft


def _has_remote(a: Analysis) -> bool:
    return a.facts.has_remote_log_metadata and "remote_log_events" in a.tables


#: Every finding check of a scan, in the order they are planned. The whole-cluster checks are built only where the
#: listing shows something to judge: otherwise their inputs are empty and building them costs only planning.
CHECKS: list[Check] = [
    Check("parser", family="parser"),
    Check("log", family="log"),
    Check("transactions", family="transactions"),
    Check("txnindex", lambda a: without_file_checks(a.run_family("txnindex"), a.facts.dump_brokers)),  # dumps: none
    Check("replica_divergence", applies=lambda a: a.facts.replicas_possible, family="replica_divergence"),
    # KRaft control plane: unclean elections (with the offsets they cost), offline and stray partitions, leader
    # epochs the metadata never gave
    Check("unclean_leader_election", applies=_kraft, family="unclean_leader_election"),
    Check("offline_partition", applies=_kraft, family="offline_partition"),
    Check("stray_partition", applies=_kraft, family="stray_partition"),
    Check("leader_epoch_unknown", applies=_kraft, family="leader_epoch_unknown"),
    Check("coordinator", applies=_has_transaction_state, family="coordinator"),
    Check("committed_offset", _committed_offsets, applies=_has_consumer_offsets),
    Check("groups", applies=_has_group_records, family="groups"),
    Check("share_groups", applies=_has_share_state_records, family="share_groups"),
    Check("future_replica_divergence", applies=lambda a: a.facts.has_future_replicas,
          family="future_replica_divergence"),
    Check("content_duplicate", applies=lambda a: not a.options.headers_only, family="content_duplicate"),
    Check("restart", family="restart"),
    Check("remote", applies=_has_remote, family="remote"),
]

@dataclass(frozen=True)
class Table:
    """A facts table: `build` returns its rows, with the columns `schemas.OUTPUT_TABLES` declares for it; `applies`
    says from the listing whether its input can have any row (if not, the table is an empty frame of its declared
    schema and its transform is not even planned)."""

    build: Callable[[Analysis], DataFrame]
    applies: Callable[[Analysis], bool] = lambda _a: True


#: Every facts table of a scan (the findings table is the union of CHECKS): name in OUT -> how it is built.
TABLES: dict[str, Table] = {
    "producers": Table(lambda a: producers.producers_table(a.data)),
    "transactions": Table(lambda a: a.timed_txns.select(*S.OUTPUT_TABLES["transactions"].names)),
    "replicas": Table(lambda a: replicas.replicas_table(a.ends_r, a.div, a.applied if a.kraft else None)
                      .withColumn("dir_state", F.lit("live"))
                      .unionByName(replicas.special_dir_replicas(a.every_dir["segments"], a.tables["brokers"]))),
    "leader_epoch_lineage": Table(lambda a: replicas.leader_epoch_lineage(a.batches, a.tables["leader_epochs"])),
    "coordinator_transactions": Table(lambda a: a.ctx.drop("txn_seq"), _has_transaction_state),
    "producer_lineage": Table(lambda a: a.lineage, _has_transaction_state),
    "consumer_offsets": Table(lambda a: a.offsets, _has_consumer_offsets),
    "lso": Table(lambda a: a.lso),
    "lso_changes": Table(lambda a: transactions.lso_changes(a.sweep)),
    "aborted_ranges": Table(lambda a: with_txnindex_unknown(a.aborted_ranges, a.facts.dump_brokers)),
    "group_members": Table(lambda a: a.group_members, _has_group_records),
    "group_assignments": Table(lambda a: a.group_assignments, _has_group_records),
    "consumer_lag": Table(lambda a: groups.consumer_lag_table(a.offsets, a.lso, a.group_assignments,
                                                              a.group_members), _has_consumer_offsets),
    "share_partition_state": Table(lambda a: a.share_state, _has_share_state_records),
    "remote_segments": Table(lambda a: a.remote, _has_remote),
    "remote_partition_deletes": Table(
        lambda a: remote_storage.remote_partition_deletes_table(a.tables["remote_log_events"]), _has_remote),
    "partition_history": Table(lambda a: a.history, _kraft),
    "broker_history": Table(lambda a: a.broker_events, _kraft),
    "topics": Table(lambda a: a.topics, _kraft),
    "features": Table(lambda a: control_plane.features_table(a.applied), _kraft),
    "restart_prediction": Table(lambda a: restart.restart_prediction_table(a.predicted)),
}


def analyze(tables: dict[str, DataFrame], options: ScanOptions | None = None, *, facts: InputFacts | None = None,
            profile: ScanProfile | None = None, small: bool | None = None,
            views: SqlViews | None = None) -> dict[str, Callable[[], DataFrame]]:
    """Needs batches, segments, txnindex, snapshot_entries, leader_epochs, partition_checkpoints,
    coordinator_records, offset_commits, remote_log_events, partition_topic_ids and parser_findings; returns
    the TABLES and findings, each as a function that builds it. The outputs and the intermediate tables
    they share are built on first demand, once, so a caller can plan and write the outputs side by side from
    several threads (on a small input, planning on the driver costs as much as running the jobs).
    `facts` (from the listing) lets analyses with nothing to judge plan no job: no replica comparison without
    a partition under two brokers, no coordinator or group checks without their internal topics. `profile`
    times each check as a step of its own. `small`: whether the tables are small (one partition each; by default,
    whether the listing's input is). `views`: where the tables the statements share are registered as temp views
    once (the caller drops them once the outputs are written); without, each statement registers its own."""
    facts = facts or InputFacts(replicas_possible=True, has_transaction_state=True, has_consumer_offsets=True)
    a = Analysis(tables, options or ScanOptions(), facts, is_small(facts.input_bytes) if small is None else small,
                 views)
    spark = tables["batches"].sparkSession
    context = spark.sparkContext

    def findings() -> DataFrame:
        def run(check: Check) -> DataFrame:
            step = profile.step(f"check {check.name}", "kforensics scan: findings") if profile \
                else contextlib.nullcontext()
            with step:
                if not profile:
                    context.setJobDescription("kforensics scan: findings")  # this thread's jobs, in Spark's UI
                return a.keep(check.run(a))

        # Each check is planned in its own thread and kept: the union's plan is then a few scans, not twenty analyses'
        # worth of windows and joins at once (one statement of them all: docs/benchmarks/spark-settings.md)
        with job_threads(spark, FINDINGS_THREADS) as pool:
            found = pool.map(run, [check for check in CHECKS if check.applies(a)])
        return reduce(DataFrame.unionByName, found)

    def table(name: str) -> DataFrame:
        built = TABLES[name]
        if built.applies(a):
            return built.build(a)
        return S.frame(spark, S.OUTPUT_TABLES[name], [])

    return {**{name: (lambda name=name: table(name)) for name in TABLES}, "findings": findings}
