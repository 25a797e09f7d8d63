"""The SQL files of `spark/sql/`: one `SqlCheck` per finding check, the one place its kinds, input tables and parameters
are declared (severity, meaning and fields: the kind's entry in `parsers.findings.KINDS`), and one `SqlTable` per
facts table written as SQL.

A check's file is one statement that runs as it is in spark-sql over tables of the names it declares, its values
named parameters (`:txn_timeout_ms`), and returns the findings columns (FINDING_COLUMNS, `details` as JSON). The
checks of one `family` read the same tables and run as one statement, the UNION ALL of their files (one parse, one
plan; `analysis.py` gives each family its tables and says when it applies).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources

from pyspark.sql import DataFrame

from kforensics.spark.views import run_named

__all__ = ["CHECKS", "TABLES", "SqlCheck", "SqlTable", "check_of", "family", "run_checks", "run_table"]


@dataclass(frozen=True)
class SqlTable:
    """`spark/sql/<name>.sql`: one statement over the tables named `inputs`, with the named parameters `params`."""

    name: str
    inputs: tuple[str, ...]
    params: tuple[str, ...] = ()

    @property
    def path(self) -> str:
        """Its file, relative to the repository."""
        return f"spark/sql/{self.name}.sql"

    @property
    def text(self) -> str:
        return _text(self.name)


@dataclass(frozen=True)
class SqlCheck(SqlTable):
    """A finding check's file: the finding `kinds` its rows carry (none: it passes on rows whose kind parsers/
    decided); `family`: the statement it runs in."""

    family: str = ""
    kinds: tuple[str, ...] = ()


@cache
def _text(name: str) -> str:
    return (resources.files("kforensics.spark") / "sql" / f"{name}.sql").read_text(encoding="utf-8")


def _check(name: str, family: str, *inputs: str, kinds: tuple[str, ...] | None = None,
           params: tuple[str, ...] = ()) -> SqlCheck:
    return SqlCheck(name, inputs, params, family, (name,) if kinds is None else kinds)


_TIMEOUT = ("txn_timeout_ms",)

#: Every SQL check, by family in the order the families are planned.
CHECKS: tuple[SqlCheck, ...] = (
    # parser findings, as the executors reported them
    _check("parser", "parser", "parser_findings", kinds=()),
    # the log's own checks: producer histories, snapshots, leader-epoch-checkpoint, offsets, segment names
    _check("sequence_holes", "log", "data", kinds=("sequence_gap", "cleaned_sequence_holes")),
    _check("duplicate_sequence", "log", "data"),
    _check("zombie_epoch", "log", "batches"),
    _check("snapshot_mismatch", "log", "data", "snapshot_entries", "partition_ends"),
    _check("leader_epoch_mismatch", "log", "batches", "leader_epochs"),
    _check("offset_overlap", "log", "batches"),
    _check("segment_name_mismatch", "log", "segments"),
    # transactions against the log end: each judged by its transactional id's own timeout
    _check("hanging_transaction", "transactions", "timed_transactions", "partition_ends", params=_TIMEOUT),
    _check("cleaner_blocked", "transactions", "timed_transactions", "partition_ends", "batches", params=_TIMEOUT),
    _check("prepared_transaction", "transactions", "timed_transactions", "partition_ends"),
    # the .txnindex against the ABORT markers
    _check("txnindex", "txnindex", "aborted_transactions",
           kinds=("txnindex_missing", "txnindex_orphan", "txnindex_mismatch")),
    # replicas against each other (with the KRaft elections, where the metadata log is in the input)
    _check("replica_divergence", "replica_divergence", "divergence_facts", "elections"),
    # the KRaft control plane (control_plane.py: the metadata log replayed) against the data
    _check("unclean_leader_election", "unclean_leader_election", "partition_history", "epoch_starts",
           "election_losses"),
    _check("offline_partition", "offline_partition", "partition_state", "live_brokers"),
    _check("stray_partition", "stray_partition", "cluster_dirs", "partition_state", "metadata_topics",
           "reference_copies"),
    _check("leader_epoch_unknown", "leader_epoch_unknown", "partition_history", "data_leader_epochs",
           "reference_copies"),
    # the transaction coordinator against the markers and the data
    _check("marker", "coordinator", "marker_checks", kinds=("marker_missing", "outcome_mismatch")),
    _check("unknown_producer", "coordinator", "timed_transactions", "transactional_ids", "partition_dirs", "brokers",
           params=("transaction_state_partitions",)),
    _check("epoch_fenced_write", "coordinator", "clustered_batches", "coordinator_log", "transactional_ids",
           params=("clock_skew_ms",)),
    # committed offsets against the logs (then joined to the group replay's owners, analysis.py)
    _check("committed_offset_beyond_log_end", "committed_offset", "consumer_offsets"),
    _check("committed_offset_below_log_start", "committed_offset", "consumer_offsets"),
    _check("committed_offset_in_aborted_range", "committed_offset", "consumer_offsets"),
    _check("offset_commit_pending", "committed_offset", "live_commits", "longest_replicas", "transactional_ids",
           params=_TIMEOUT),
    # groups replayed
    _check("partition_owned_twice", "groups", "group_assignments"),
    # share partitions' state against their logs
    _check("share_records_deleted_undelivered", "share_groups", "share_partition_state", "longest_replicas"),
    _check("share_state_beyond_log_end", "share_groups", "share_partition_state", "longest_replicas"),
    _check("share_records_archived", "share_groups", "share_partition_state"),
    _check("share_state_stale_leader", "share_groups", "share_events", "topic_names"),
    _check("future_replica_divergence", "future_replica_divergence", "every_dir_batches", "brokers"),
    _check("content_duplicate", "content_duplicate", "resends"),
    # a broker restart's predicted findings (parsers/restart.py decides them)
    _check("restart", "restart", "restart_predictions", kinds=()),
    # tiered storage: the remote segments against the local logs
    _check("remote_segment_stuck", "remote", "remote_segments", params=("remote_stuck_after_ms",)),
    _check("remote_log_gap", "remote", "finished_copies", "local_logs"),
    _check("remote_leader_epoch_mismatch_checkpoint", "remote", "epoch_ranges", "local_logs", "leader_epochs",
           kinds=("remote_leader_epoch_mismatch",)),
    _check("remote_leader_epoch_mismatch_chain", "remote", "range_pairs", kinds=("remote_leader_epoch_mismatch",)),
    _check("remote_overlap", "remote", "range_pairs"),
)

#: The facts tables written as SQL files (built once per scan where several statements read them).
TABLES: dict[str, SqlTable] = {t.name: t for t in (
    SqlTable("aborted_transactions", ("lso_sweep", "txnindex", "partition_ends")),
    SqlTable("divergence_facts", ("divergences", "clustered_batches", "replica_ends")),
    SqlTable("marker_checks", ("coordinator_txns", "clustered_batches", "replica_ends")),
    SqlTable("live_commits", ("offset_commits", "longest_replicas", "transactions")),
    SqlTable("topic_names", ("partition_topic_ids", "metadata_records", "group_events")),
    SqlTable("share_events", ("share_state_records", "longest_replicas")),
)}


def family(name: str) -> tuple[SqlCheck, ...]:
    """The checks of one family, in order."""
    checks = tuple(c for c in CHECKS if c.family == name)
    if not checks:
        raise KeyError(name)
    return checks


def check_of(kind: str) -> SqlCheck:
    """The check that reports `kind` (the first, for a kind two checks report)."""
    return next(c for c in CHECKS if kind in c.kinds or c.name == kind)


def run_checks(checks: tuple[SqlCheck, ...], tables: Mapping[str, DataFrame],
               params: Mapping[str, object] | None = None) -> DataFrame:
    """`checks` as one statement (the UNION ALL of their files) over `tables` (name -> DataFrame, at least every
    input they declare), their parameters bound from `params`."""
    inputs = {name: tables[name] for c in checks for name in c.inputs}
    args = {name: (params or {})[name] for c in checks for name in c.params}
    return run_named([(c.text, c.inputs) for c in checks], inputs, args)


def run_table(name: str, **tables: DataFrame) -> DataFrame:
    """The facts table `name` (TABLES) over `tables` (name -> DataFrame: its inputs)."""
    table = TABLES[name]
    return run_named([(table.text, table.inputs)], {t: tables[t] for t in table.inputs}, {})
