"""Findings: what a parser or an analysis reports instead of raising.

A finding names its kind, a severity, the file and byte position it is about, one plain sentence,
and kind-specific details. Every kind, the parsers' and the Spark analyses' alike, is registered once in
:data:`KINDS` (severity, meaning, fields); parsers, Spark transforms, `dump`, `scan`, the reports and the
HTML report all read it. No Spark and no CLI here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Severity = Literal["error", "warning", "info"]

#: Severities that mean something is wrong: a finding of these makes a command exit with code 1.
PROBLEM_SEVERITIES: frozenset[str] = frozenset({"error", "warning"})


def is_problem(severity: str | None) -> bool:
    """Does a finding of this severity mean something is wrong (exit code 1), rather than a note?"""
    return severity in PROBLEM_SEVERITIES


@dataclass(frozen=True, slots=True)
class FindingKind:
    """A kind of finding: its severity, what it means, and the fields its findings carry beyond the common ones.

    `severity_rule` is set for the few kinds whose severity depends on the case (then `severity` is the
    graver one, and the rule says when the milder one applies)."""

    name: str
    severity: Severity
    meaning: str
    fields: tuple[str, ...] = ()
    severity_rule: str | None = None


def _kinds(*kinds: FindingKind) -> dict[str, FindingKind]:
    return {k.name: k for k in kinds}


_COMMIT_FIELDS = ("group", "committed_offset", "coordinator_partition", "coordinator_offset", "commit_timestamp",
                  "log_start_offset", "log_end_offset", "reference_broker")
_MARKER_FIELDS = ("transactional_id", "coordinator_partition", "coordinator_offset", "coordinator_broker",
                  "coordinator_outcome", "txn_start_timestamp", "completed_at", "partitions_not_in_input",
                  "expected_coordinator_partition")
_TXNINDEX_FIELDS = ("first_offset", "last_offset", "last_stable_offset")

#: Every kind of finding, parsers' and analyses' alike: the one place a kind, its severity and its fields are
#: defined. The README's finding tables are checked against it (tests/test_findings.py).
KINDS: dict[str, FindingKind] = _kinds(
    # record batches / message sets (*.log, *.checkpoint)
    FindingKind("truncated_tail", "warning", "the file ends inside a batch (a crash or a file still being written)",
                ("declared_size", "bytes_present")),
    FindingKind("zero_filled_tail", "warning",
                "the file ends in zero bytes where a batch should be (preallocation or a crash)", ("bytes",)),
    FindingKind("corrupt_crc", "error", "a batch's stored CRC differs from the CRC computed over its bytes",
                ("stored_crc", "computed_crc", "base_offset", "magic")),
    FindingKind("invalid_batch_length", "error", "a batch length field is impossible; the rest of the file is "
                "unreadable", ("batch_length", "magic", "base_offset")),
    FindingKind("unknown_magic", "error", "a batch has a magic byte other than 0, 1 or 2", ("magic", "base_offset")),
    FindingKind("decompression_failed", "error", "a compressed batch could not be decompressed",
                ("codec", "error", "base_offset", "offset")),
    FindingKind("invalid_record", "error", "a record inside a batch could not be decoded (bad varint, bad length)",
                ("record_index", "reason", "base_offset", "offset", "inner_index")),
    FindingKind("record_count_mismatch", "error", "a batch holds a different number of records than its header says",
                ("declared", "decoded", "trailing_bytes", "base_offset")),
    FindingKind("unknown_codec", "error", "a batch's attributes name a compression codec that does not exist",
                ("codec", "base_offset")),
    # index files
    FindingKind("index_non_monotonic", "error", "offset index entries do not strictly increase",
                ("entry_index", "offset", "position", "previous_offset", "previous_position")),
    FindingKind("index_bad_entry", "error", "an offset index entry points to no batch start, or to the wrong offset",
                ("entry_index", "offset", "index_position", "batch_base_offset")),
    FindingKind("index_offset_mismatch", "info", "an index entry's offset is not the last offset of the batch it "
                "points to (kafka-dump-log's mismatch; normal for a follower's multi-batch appends)",
                ("entry_index", "index_offset", "log_offset", "index_position")),
    FindingKind("timeindex_non_monotonic", "error", "time index timestamps do not strictly increase",
                ("entry_index", "timestamp", "offset", "previous_timestamp", "previous_offset")),
    FindingKind("timeindex_bad_entry", "error", "a time index entry names an offset or timestamp the log does not "
                "hold", ("entry_index", "offset", "timestamp", "log_timestamp", "batch_position")),
    FindingKind("index_partial_entry", "warning", "an index file's size is not a multiple of its entry size",
                ("file_size", "entry_size", "trailing_bytes")),
    # producer snapshots, txn index
    FindingKind("snapshot_corrupt_crc", "error", "a producer snapshot's CRC-32C does not match its contents",
                ("stored_crc", "computed_crc")),
    FindingKind("snapshot_unsupported_version", "error", "a producer snapshot has a version this tool cannot read",
                ("version",)),
    FindingKind("snapshot_truncated", "error", "a producer snapshot is shorter than its header says",
                ("file_size", "declared_entries", "entries_present")),
    FindingKind("txnindex_bad_entry", "error", "a transaction index entry has an unknown version or impossible "
                "offsets", ("entry_index", "version", "producer_id", "first_offset", "last_offset",
                            "last_stable_offset")),
    # text files
    FindingKind("checkpoint_malformed", "error", "a checkpoint or properties file does not follow its format",
                ("line", "file_size")),
    # internal topics
    FindingKind("internal_record_undecodable", "warning", "an internal-topic key or value could not be decoded",
                ("offset", "error", "key", "value")),
    FindingKind("internal_record_newer_version", "info", "an internal-topic record is written at a version (or of "
                "a record type) newer than kforensics' message tables know, as a newer Kafka writes it; the fields the "
                "newest known version shares with it are decoded where the message is flexible",
                ("offset", "record_type", "api_key", "version", "known_versions")),
    # compaction (spark/cleaner.py)
    FindingKind("cleaner_blocked", "warning", "a compacted partition's log cleaner is held at the last stable offset "
                "by a transaction open longer than the transaction timeout", ("cleaner_offset", "last_stable_offset",
                                                                             "held_by_producer_id", "txn_first_offset",
                                                                             "bytes_behind")),
    # kafka-dump-log text as scan input (parsers/dump_text.py)
    FindingKind("dump_line_unparseable", "warning", "a line of kafka-dump-log text that could not be read (line "
                "number and byte position in the text)", ("line", "text", "reason", "last_line", "lines")),
    FindingKind("marker_outcome_unknown", "warning", "a control batch in kafka-dump-log text without record lines: "
                "COMMIT or ABORT is not known", ("base_offset", "line", "dump")),
    FindingKind("dump_section_skipped", "info", "a section of kafka-dump-log text about a file that is not a "
                "segment of a <topic>-<partition> directory", ("line", "dumped_file", "reason")),
    FindingKind("dump_invalid_bytes", "warning", "kafka-dump-log found invalid bytes at the end of a segment (a "
                "batch cut short, or zeros)", ("bytes", "line")),
    # tiered storage (spark/remote_storage.py: __remote_log_metadata against the local logs)
    FindingKind("remote_log_gap", "error", "offsets between the earliest copied remote segment and the local log "
                "start that neither a finished remote segment nor a local segment holds",
                ("missing_offsets", "remote_end_offset", "local_log_start_offset", "topic_id")),
    FindingKind("remote_segment_stuck", "warning", "a remote segment left in COPY_SEGMENT_STARTED or "
                "DELETE_SEGMENT_STARTED longer than --remote-stuck-after before its partition's newest metadata "
                "event", ("remote_segment_id", "state", "start_offset", "end_offset", "stuck_since", "newest_event_at",
                          "stuck_ms", "stuck_after_ms")),
    FindingKind("remote_leader_epoch_mismatch", "error", "a remote segment's leader-epoch entries disagree with the "
                "local leader-epoch-checkpoint or with the other remote segments' epochs",
                ("remote_segment_id", "against", "remote_epoch", "expected_epoch", "segment_leader_epochs",
                 "checkpoint_file", "other_remote_segment_id")),
    FindingKind("remote_overlap", "warning", "two finished remote segments hold the same offsets with different "
                "leader epochs", ("remote_segment_id", "other_remote_segment_id", "overlap", "segment_leader_epochs",
                                  "other_segment_leader_epochs")),
    # files and directories
    FindingKind("unreadable_file", "error", "a file could not be opened or read"),
    FindingKind("unknown_file", "info", "an entry of a log directory that is not one of the broker's files or "
                "partition dirs (a folder such as lost+found, a note, a FIFO, a socket, a device, a broken link): "
                "listed once, never opened, the scan goes on", ("entry",)),
    # producers (spark/producers.py)
    FindingKind("sequence_gap", "error", "a producer's batch does not continue its sequence (records lost or "
                "never written)", ("expected_sequence", "found_sequence", "gap_size", "size_class",
                                   "leader_epoch_change", "previous_batch_offset")),
    FindingKind("duplicate_sequence", "error", "the same producer id, epoch and sequence range at more than one "
                "offset (a duplicate the broker should have rejected)", ("sequence_range", "offsets")),
    FindingKind("zombie_epoch", "error", "data written with a producer epoch lower than one already written "
                "(a fenced producer still writing)", ("newer_epoch", "newer_epoch_first_offset")),
    FindingKind("content_duplicate", "warning", "a new producer id re-sent records another producer id had "
                "written (a producer restarted without idempotence across the restart)",
                ("producer_ids", "matches", "original_offsets", "resent_offsets", "ms_between")),
    # transactions (spark/transactions.py)
    FindingKind("hanging_transaction", "error", "a transaction open at the log end for longer than the "
                "transaction timeout: the LSO is stuck", ("first_offset", "lso_stuck_at", "age_ms_at_log_end",
                                                         "last_data_offset")),
    FindingKind("txnindex_missing", "error", "an aborted transaction the .txnindex does not list", _TXNINDEX_FIELDS),
    FindingKind("txnindex_orphan", "error", "a .txnindex entry with no ABORT marker in the log", _TXNINDEX_FIELDS),
    FindingKind("txnindex_mismatch", "error", "a .txnindex entry whose first offset or last stable offset differs "
                "from the log's", (*_TXNINDEX_FIELDS, "index_first_offset", "index_last_stable_offset")),
    # cross-checks (spark/crosschecks.py)
    FindingKind("snapshot_mismatch", "error", "a producer snapshot entry that disagrees with the log",
                ("snapshot_offset", "snapshot_last_offset", "snapshot_last_sequence", "log_last_offset",
                 "log_last_sequence")),
    FindingKind("leader_epoch_mismatch", "error", "batches whose partition leader epoch is not the one "
                "leader-epoch-checkpoint assigns to their offsets", ("batch_leader_epoch", "checkpoint_epoch",
                                                                     "batches")),
    FindingKind("offset_overlap", "error", "offsets going backwards from one batch to the next in file order",
                ("previous_last_offset",)),
    FindingKind("segment_name_mismatch", "error", "a segment named for an offset above its first batch, or "
                "overlapping the next segment", ("name_offset", "first_batch_base_offset", "last_offset",
                                                 "next_segment_base_offset")),
    # replicas (spark/replicas.py)
    FindingKind("replica_divergence", "error", "two replicas of a topic-partition hold different batches at the "
                "same offset", ("offset", "common_prefix_end_offset", "brokers", "lost_offsets", "lost_on", "winner",
                                "replicas", "elections"),
                severity_rule="warning when no committed offset (below the high watermark) was lost"),
    FindingKind("future_replica_divergence", "warning", "the -future copy of a partition (being moved between "
                "a broker's log dirs) holds a batch, within the live log's offsets, that the live replica does not "
                "hold identically", ("live_log_start_offset", "live_log_end_offset", "future_crc", "live_crc")),
    # the KRaft control plane (spark/control_plane.py: __cluster_metadata replayed, held against the data)
    FindingKind("unclean_leader_election", "error", "a partition leader elected from outside the previous ISR and "
                "ELR (the metadata log's record of it; with the first data offset of its leader epoch and the "
                "committed offsets it cost where the data is in the input)",
                ("leader", "leader_epoch", "previous_leader", "previous_isr", "previous_elr", "metadata_offset",
                 "elected_at", "metadata_broker", "offset", "lost_offsets")),
    FindingKind("stray_partition", "warning", "a partition dir a broker holds but should not (deleted or re-created "
                "topic, not a replica, or renamed -stray by Kafka): it may hold the only copy of its data",
                ("reason", "topic_id", "metadata_topic_id", "replicas")),
    FindingKind("offline_partition", "error", "a partition without a leader at the end of the metadata log while "
                "some broker was up (registered, unfenced, not shutting down)",
                ("since_offset", "since", "last_leader", "isr", "elr", "replicas", "live_brokers")),
    FindingKind("leader_epoch_unknown", "error", "a data batch or leader-epoch-checkpoint entry carries a leader "
                "epoch the metadata log never gave its partition (data or metadata from another cluster)",
                ("leader_epoch", "source", "first_known_epoch", "last_known_epoch", "metadata_broker")),
    # the transaction coordinator (spark/coordinator.py)
    FindingKind("marker_missing", "error", "the coordinator completed a transaction, but a partition it names "
                "holds no marker for it", _MARKER_FIELDS),
    FindingKind("outcome_mismatch", "error", "a partition's marker says the other outcome than the coordinator",
                (*_MARKER_FIELDS, "marker_outcome", "marker_offset")),
    FindingKind("unknown_producer", "error", "transactional data from a producer id no __transaction_state record "
                "names", ("batches", "transaction_state_partitions_present", "transaction_state_partitions_missing"),
                severity_rule="warning unless every __transaction_state partition is in the input"),
    FindingKind("epoch_fenced_write", "error", "a transactional batch written after the coordinator fenced its "
                "producer epoch", ("transactional_id", "fenced_at", "fencing_epoch", "written_at", "batches",
                                   "expected_coordinator_partition")),
    # consumer groups (spark/consumer_offsets.py)
    FindingKind("committed_offset_beyond_log_end", "error", "a group's committed offset is above the partition's "
                "log end", _COMMIT_FIELDS),
    FindingKind("committed_offset_below_log_start", "error", "a group's committed offset is below the partition's "
                "log start", _COMMIT_FIELDS),
    FindingKind("committed_offset_in_aborted_range", "warning", "a group's committed offset lies inside an aborted "
                "transaction", (*_COMMIT_FIELDS, "aborted_first_offset", "aborted_last_offset",
                                "aborted_producer_id")),
)

#: The findings about producers' sequences and epochs (`kforensics gaps`).
SEQUENCE_KINDS = ("sequence_gap", "duplicate_sequence", "zombie_epoch", "content_duplicate")

#: Columns of the scan's `findings` table, in order; JSON lines carry the same names (but `details`, whose
#: fields are spread as top-level keys).
FINDING_COLUMNS = ("kind", "severity", "broker", "topic", "partition", "file", "position", "offset", "producer_id",
                   "producer_epoch", "message", "details")
FINDING_FIELDS = FINDING_COLUMNS[:-1]


def severity_of(kind: str) -> Severity:
    """A registered kind's severity (its graver one when it depends on the case). KeyError for an unknown kind."""
    return KINDS[kind].severity


@dataclass(frozen=True, slots=True)
class Finding:
    """A problem found at a byte position of a file; parsers yield these and keep going."""

    kind: str
    file: str
    position: int | None
    message: str
    details: Mapping[str, Any] = field(default_factory=dict)
    severity: Severity | None = None

    @property
    def effective_severity(self) -> Severity:
        if self.severity is not None:
            return self.severity
        return severity_of(self.kind)

    def to_json(self) -> dict[str, Any]:
        """The JSON-lines form: `type`, `kind`, `severity`, `file`, `position`, `message`, then details."""
        out: dict[str, Any] = {
            "type": "finding",
            "kind": self.kind,
            "severity": self.effective_severity,
            "file": self.file,
            "position": self.position,
            "message": self.message,
        }
        for key, value in self.details.items():
            out.setdefault(key, value)
        return out
