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

    `meaning` is one sentence (the HTML report's); `rule` says exactly when the kind is reported and what its
    fields hold (Markdown; docs/findings.md is generated from it). `severity_rule` is set for the few kinds whose
    severity depends on the case (then `severity` is the graver one, and the rule says when the milder one
    applies)."""

    name: str
    severity: Severity
    meaning: str
    fields: tuple[str, ...] = ()
    severity_rule: str | None = None
    rule: str | None = None


def _kinds(*kinds: FindingKind) -> dict[str, FindingKind]:
    return {k.name: k for k in kinds}


_COMMIT_FIELDS = ("group", "committed_offset", "coordinator_partition", "coordinator_offset", "commit_timestamp",
                  "log_start_offset", "log_end_offset", "reference_broker", "member_id", "member_client_id")
#: What the committed_offset_* rules say of the member (spark/groups.py adds it to their findings).
_COMMIT_OWNER = ("; `member_id` and `member_client_id` name the member that owned the partition at the commit, "
                 "where the group replay knows it (the assignment in force at the commit record's offset in the "
                 "same `__consumer_offsets` log)")
_SHARE_FIELDS = ("group", "topic_id", "share_partition_key", "start_offset", "coordinator_partition",
                 "coordinator_offset")
_MARKER_FIELDS = ("transactional_id", "coordinator_partition", "coordinator_offset", "coordinator_broker",
                  "coordinator_outcome", "txn_start_timestamp", "completed_at", "partitions_not_in_input",
                  "expected_coordinator_partition")
_TXNINDEX_FIELDS = ("first_offset", "last_offset", "last_stable_offset")

#: Every kind of finding, parsers' and analyses' alike: the one place a kind, its severity and its fields are
#: defined. docs/findings.md is generated from it (docs/generate.py; tests/test_docs.py checks it is current).
KINDS: dict[str, FindingKind] = _kinds(
    # record batches / message sets (*.log, *.checkpoint)
    FindingKind("truncated_tail", "warning", "the file ends inside a batch (a crash or a file still being written)",
                ("declared_size", "bytes_present"),
                rule="the file ends inside a batch: `declared_size`, `bytes_present`"),
    FindingKind("zero_filled_tail", "warning",
                "the file ends in zero bytes where a batch should be (preallocation or a crash)", ("bytes",),
                rule="zeros where the next batch should be (preallocation, or a crash): `bytes`"),
    FindingKind("corrupt_crc", "error", "a batch's stored CRC differs from the CRC computed over its bytes",
                ("stored_crc", "computed_crc", "base_offset", "magic"),
                rule=("stored CRC differs from the computed one; the batch is still printed with `crc_valid: false`"
                      " and reading goes on: `stored_crc`, `computed_crc`, `base_offset`, `magic`")),
    FindingKind("invalid_batch_length", "error", "a batch length field is impossible; the rest of the file is "
                "unreadable", ("batch_length", "magic", "base_offset"),
                rule=("a length field no batch can have; the rest of the file cannot be framed: `batch_length`, "
                      "`magic`, `base_offset`")),
    FindingKind("unknown_magic", "error", "a batch has a magic byte other than 0, 1 or 2", ("magic", "base_offset"),
                rule="magic byte not 0, 1 or 2; reading stops: `magic`, `base_offset`"),
    FindingKind("decompression_failed", "error", "a compressed batch could not be decompressed",
                ("codec", "error", "base_offset", "offset"),
                rule=("the codec rejected the payload (a zstd payload is walked frame by frame and block by block, "
                      "so a frame cut short is this, not an empty batch): `codec`, `error`, `base_offset` (v2) or "
                      "`offset` (a legacy wrapper)")),
    FindingKind("invalid_record", "error", "a record inside a batch could not be decoded (bad varint, bad length)",
                ("record_index", "reason", "base_offset", "offset", "inner_index"),
                rule=("a bad varint or a record overrunning its batch: `record_index`, `reason`, `base_offset` "
                      "(v2); `offset`, `inner_index` (legacy)")),
    FindingKind("record_count_mismatch", "error", "a batch holds a different number of records than its header says",
                ("declared", "decoded", "trailing_bytes", "base_offset"),
                rule=("the batch holds more or fewer records than its header says: `declared`, `decoded` or "
                      "`trailing_bytes`, `base_offset`")),
    FindingKind("unknown_codec", "error", "a batch's attributes name a compression codec that does not exist",
                ("codec", "base_offset"),
                rule="attributes name codec 5-7: `codec`, `base_offset`"),
    # index files
    FindingKind("index_non_monotonic", "error", "offset index entries do not strictly increase",
                ("entry_index", "offset", "position", "previous_offset", "previous_position"),
                rule=("offset-index entries that do not strictly increase: `entry_index`, `offset`, `position`, "
                      "`previous_offset`, `previous_position`")),
    FindingKind("index_bad_entry", "error", "an offset index entry points to no batch start, or to the wrong offset",
                ("entry_index", "offset", "index_position", "batch_base_offset"),
                rule=("an offset-index entry pointing at no batch start, or at a batch starting after its offset: "
                      "`entry_index`, `offset`, `index_position`, `batch_base_offset`")),
    FindingKind("index_offset_mismatch", "info", "an index entry's offset is not the last offset of the batch it "
                "points to (kafka-dump-log's mismatch; normal for a follower's multi-batch appends)",
                ("entry_index", "index_offset", "log_offset", "index_position"),
                rule=("kafka-dump-log's \"Index offset: X, log offset: Y\" (legal for a follower's multi-batch "
                      "appends): `entry_index`, `index_offset`, `log_offset`, `index_position`")),
    FindingKind("timeindex_non_monotonic", "error", "time index timestamps do not strictly increase",
                ("entry_index", "timestamp", "offset", "previous_timestamp", "previous_offset"),
                rule=("time-index entries that do not strictly increase: `entry_index`, `timestamp`, `offset`, "
                      "`previous_timestamp`, `previous_offset`")),
    FindingKind("timeindex_bad_entry", "error", "a time index entry names an offset or timestamp the log does not "
                "hold", ("entry_index", "offset", "timestamp", "log_timestamp", "batch_position"),
                rule=("a time-index entry whose offset no batch holds, or whose batch's max timestamp differs: "
                      "`entry_index`, `offset`, `timestamp`, `log_timestamp`, `batch_position`")),
    FindingKind("index_partial_entry", "warning", "an index file's size is not a multiple of its entry size",
                ("file_size", "entry_size", "trailing_bytes"),
                rule=("an index file whose size is not a multiple of its entry size: `file_size`, `entry_size`, "
                      "`trailing_bytes`")),
    # producer snapshots, txn index
    FindingKind("snapshot_corrupt_crc", "error", "a producer snapshot's CRC-32C does not match its contents",
                ("stored_crc", "computed_crc"),
                rule="a producer snapshot's CRC-32C does not match: `stored_crc`, `computed_crc`"),
    FindingKind("snapshot_unsupported_version", "error", "a producer snapshot has a version this tool cannot read",
                ("version",),
                rule="a producer snapshot version this tool cannot read: `version`"),
    FindingKind("snapshot_truncated", "error", "a producer snapshot is shorter than its header says",
                ("file_size", "declared_entries", "entries_present"),
                rule=("a producer snapshot shorter than its header says (or absurdly large): `file_size`, or "
                      "`declared_entries`, `entries_present`")),
    FindingKind("txnindex_bad_entry", "error", "a transaction index entry has an unknown version or impossible "
                "offsets", ("entry_index", "version", "producer_id", "first_offset", "last_offset",
                            "last_stable_offset", "segment_base_offset"),
                rule=("a `.txnindex` entry with an unknown version or impossible offsets (first after last, a last "
                      "stable offset beyond the marker, a last offset below the segment's base offset, which Kafka's "
                      "`TransactionIndex.sanityCheck` takes for a corrupt index): `entry_index`, `version`, "
                      "`producer_id`, `first_offset`, `last_offset`, `last_stable_offset`, `segment_base_offset` "
                      "(from the file name)")),
    # text files
    FindingKind("checkpoint_malformed", "error", "a checkpoint or properties file does not follow its format",
                ("line", "file_size"),
                rule="a text file not following its format: `line`, or `file_size` (far too large for such a file)"),
    # internal topics
    FindingKind("internal_record_undecodable", "warning", "an internal-topic key or value could not be decoded",
                ("offset", "error", "key", "value"),
                rule=("an internal-topic record whose bytes cannot be framed or read as the record type and version "
                      "they name (in dump: with any decoder option; in the scan: `__transaction_state`, "
                      "`__consumer_offsets`, `__remote_log_metadata`); `position` is its batch's; the records around "
                      "it are still read: `offset`, `error`, and `key`, `value` (base64) where they were read")),
    FindingKind("internal_record_newer_version", "info", "an internal-topic record is written at a version (or of "
                "a record type) newer than kforensics' message tables know, as a newer Kafka writes it; the fields the "
                "newest known version shares with it are decoded where the message is flexible",
                ("offset", "record_type", "api_key", "version", "known_versions", "fields_read"),
                rule=("an internal-topic record (`__cluster_metadata`, `__consumer_offsets`, `__transaction_state`, "
                      "`__share_group_state`, `__remote_log_metadata`) written at a version, or of a record type, "
                      "newer than the message tables know (a newer Kafka): not damage; reported once per topic, "
                      "record type and version (per dump run, per scan); the fields the newest known version shares "
                      "with it are decoded where the message is flexible; the topic is named in the message (the "
                      "scan: `topic` column): `offset` (the first such record), `record_type`, `api_key`, `version`, "
                      "`known_versions`, and `fields_read` false for a `__cluster_metadata` record none of whose "
                      "fields read as the newest known version: the scan's control-plane replay leaves such records "
                      "out (a newer Begin/End/AbortTransactionRecord still applies), and the message says what that "
                      "costs")),
    # compaction (spark/cleaner.py)
    FindingKind("cleaner_blocked", "warning", "a compacted partition's log cleaner is held at the last stable offset "
                "by a transaction open longer than the transaction timeout", ("cleaner_offset", "last_stable_offset",
                                                                             "held_by_producer_id", "txn_first_offset",
                                                                             "bytes_behind"),
                rule=("compaction held back by a transaction: the partition has a `cleaner-offset-checkpoint` entry"
                      " (it is compacted), and its LSO is held below the log end by a transaction open longer than "
                      "its timeout (its transactional id's `txnTimeoutMs` where a `__transaction_state` record in the "
                      "input names the producer id, else `--txn-timeout`; never a two-phase-commit one, see "
                      "`prepared_transaction`) (the earliest open one; the log cleaner never cleans past the LSO, so the "
                      "partition grows without bound, KIP-664): `cleaner_offset`, `last_stable_offset`, "
                      "`held_by_producer_id`, `txn_first_offset`, `bytes_behind` (bytes of the batches from the one"
                      " holding the LSO to the log end); `offset`/`position` are the transaction's first batch")),
    # kafka-dump-log text as scan input (parsers/dump_text.py)
    FindingKind("dump_line_unparseable", "warning", "a line of kafka-dump-log text that could not be read (line "
                "number and byte position in the text)", ("line", "text", "reason", "last_line", "lines"),
                rule=("(kafka-dump-log text input) a line that could not be read; `file` is the text file, "
                      "`position` the line's byte position: `line`, `text` (at most 200 characters), `reason`; past"
                      " 1,000 such lines in a file, one finding for the rest: `line`, `last_line`, `lines`, "
                      "`reason`")),
    FindingKind("marker_outcome_unknown", "warning", "a control batch in kafka-dump-log text without record lines: "
                "COMMIT or ABORT is not known", ("base_offset", "line", "dump"),
                rule=("(kafka-dump-log text input) a control batch without record lines: COMMIT or ABORT is not "
                      "known: `base_offset`, `line`, `dump`")),
    FindingKind("dump_section_skipped", "info", "a section of kafka-dump-log text about a file that is not a "
                "segment of a <topic>-<partition> directory", ("line", "dumped_file", "reason"),
                rule=("(kafka-dump-log text input) a `Dumping` section of a file that is not a segment of a live "
                      "`<topic>-<partition>` dir: `line`, `dumped_file`, `reason`")),
    FindingKind("dump_invalid_bytes", "warning", "kafka-dump-log found invalid bytes at the end of a segment (a "
                "batch cut short, or zeros)", ("bytes", "line"),
                rule=("(kafka-dump-log text input) `Found N invalid bytes at the end of ...`: a batch cut short or "
                      "zeros, the text does not say which; `position` is where the valid bytes end: `bytes`, `line`")),
    # tiered storage (spark/remote_storage.py: __remote_log_metadata against the local logs)
    FindingKind("remote_log_gap", "error", "offsets between the earliest copied remote segment and the local log "
                "start that neither a finished remote segment nor a local segment holds",
                ("missing_offsets", "remote_end_offset", "local_log_start_offset", "topic_id"),
                rule=("tiered storage: offsets between the earliest COPY_SEGMENT_FINISHED remote segment and the "
                      "local log start (the first batch of the local replica's first segment) that neither a "
                      "finished remote segment nor the local log holds, one finding per missing range on the local "
                      "replica's broker: `missing_offsets` [first, last], `remote_end_offset` (the highest remote "
                      "offset below the gap), `local_log_start_offset`, `topic_id`; `file`/`position` are the "
                      "latest metadata record of a segment ending at `remote_end_offset`")),
    FindingKind("remote_segment_stuck", "warning", "a remote segment left in COPY_SEGMENT_STARTED or "
                "DELETE_SEGMENT_STARTED longer than --remote-stuck-after before its partition's newest metadata "
                "event", ("remote_segment_id", "state", "start_offset", "end_offset", "stuck_since", "newest_event_at",
                          "stuck_ms", "stuck_after_ms"),
                rule=("a remote segment whose latest state is COPY_SEGMENT_STARTED or DELETE_SEGMENT_STARTED, "
                      "entered more than `--remote-stuck-after` (default 1h) before the newest "
                      "`__remote_log_metadata` event of its partition: `remote_segment_id`, `state`, "
                      "`start_offset`, `end_offset`, `stuck_since`, `newest_event_at`, `stuck_ms`, "
                      "`stuck_after_ms`; `file`/`position` the record that set the state")),
    FindingKind("remote_leader_epoch_mismatch", "error", "a remote segment's leader-epoch entries disagree with the "
                "local leader-epoch-checkpoint or with the other remote segments' epochs",
                ("remote_segment_id", "against", "remote_epoch", "expected_epoch", "segment_leader_epochs",
                 "checkpoint_file", "other_remote_segment_id"),
                rule=("a finished remote segment's leader-epoch entries disagree with the local "
                      "`leader-epoch-checkpoint` at an offset both cover (`against`: `leader-epoch-checkpoint`; the"
                      " checkpoint covers offsets from its first entry on), or hold, above another finished "
                      "segment's epoch E, an epoch lower than E (`against`: `remote segments`; a leader epoch never"
                      " decreases along the log): `remote_segment_id`, `against`, `remote_epoch`, `expected_epoch`,"
                      " `segment_leader_epochs`, `checkpoint_file`, `other_remote_segment_id`; `offset` is the "
                      "first offset in question")),
    FindingKind("remote_overlap", "warning", "two finished remote segments hold the same offsets with different "
                "leader epochs", ("remote_segment_id", "other_remote_segment_id", "overlap", "segment_leader_epochs",
                                  "other_segment_leader_epochs"),
                rule=("two COPY_SEGMENT_FINISHED segments of a partition hold the same offsets with different "
                      "leader-epoch chains (some common offset in different epochs: two histories of those offsets "
                      "in the remote tier), once per pair, on the one copied later: `remote_segment_id`, "
                      "`other_remote_segment_id`, `overlap` [first, last], `segment_leader_epochs`, "
                      "`other_segment_leader_epochs`")),
    # files and directories
    FindingKind("unreadable_file", "error", "a file could not be opened or read",
                rule="a file that cannot be read (also a directory, FIFO or device passed to `dump`)"),
    FindingKind("unknown_file", "info", "an entry of a log directory that is not one of the broker's files or "
                "partition dirs (a folder such as lost+found, a note, a FIFO, a socket, a device, a broken link): "
                "listed once, never opened, the scan goes on", ("entry", "broker_would_not_start", "name_hex"),
                rule=("an entry of a log or partition dir that is not a broker file or partition dir (see [What a "
                      "log dir may hold](cli.md#what-a-log-dir-may-hold)); a folder is one finding, never read: "
                      "`entry` (`file`, `dir`, `fifo`, `socket`, `device`, `dangling_symlink`, `symlink_loop`, "
                      "`unreadable`, `other`); `broker_would_not_start` (true) on a folder in a log dir that Kafka's "
                      "`LogManager.loadLogs` cannot parse as a topic-partition dir: Kafka 3.9 and 4.x do not start "
                      "with it there (`remote-log-index-cache`, Kafka's own, is skipped and not listed); `name_hex`: "
                      "the bytes of a name that is not UTF-8, in hex (its `file` shows those bytes as `\\xNN`; no "
                      "Kafka file or partition dir has such a name, so it is never read as one)")),
    # a broker restart, replayed (parsers/restart.py, spark/restart.py)
    FindingKind("restart_would_truncate", "error", "a restart of this broker would discard valid data behind "
                "damage (log recovery truncates at the first invalid batch and deletes the later unflushed segments)",
                ("truncate_at_offset", "bytes_discarded", "segments_deleted", "offsets_discarded",
                 "committed_offsets_discarded", "damage_kind", "recovery_point", "dir_state"),
                rule=("a restart of this broker would discard valid data behind damage: `LogSegment.recover` stops at "
                      "an invalid batch (bad CRC, a length or magic it cannot frame, a torn or zero-filled tail) with "
                      "valid batches behind it (behind bytes it cannot frame, found by resynchronising on the next "
                      "batch whose CRC holds), or at an end transaction marker it cannot read (the cut is right after "
                      "that batch), or later unflushed segments that recovery then deletes; in a segment at "
                      "or above the recovery point without a clean-shutdown marker, or, marker or not, in a segment "
                      "recovered while loading (no `.index`, or a `.txnindex` entry below its base offset); or offsets "
                      "going backwards where the index rebuild sees them (the whole segment is emptied); or the log "
                      "end below the log start (every segment deleted). For a `-future` or `-stray` dir too (`-delete` "
                      "dirs are deleted anyway). `truncate_at_offset`, `bytes_discarded`, `segments_deleted`, "
                      "`offsets_discarded`, `committed_offsets_discarded`, `damage_kind` (`corrupt_crc`, "
                      "`truncated_tail`, `zero_filled_tail`, `invalid_batch_length`, `unknown_magic`, "
                      "`invalid_end_txn_marker`, `offset_overlap`, `log_end_below_log_start`), `recovery_point`, "
                      "`dir_state`; `file`/`position` are the first "
                      "invalid batch (for `offset_overlap`, the batch whose index entry fails), `offset` is "
                      "`truncate_at_offset`. Save the records first: "
                      "`kforensics export --from-finding OUT:restart_would_truncate`")),
    FindingKind("restart_would_fail", "error", "a restart of this broker would fail: a log on it cannot be "
                "loaded, and the broker does not start", ("exception", "thrown_by", "damage_kind", "dir_state"),
                rule=("the broker's log loading would throw an exception it does not handle on damage in a log, so "
                      "the broker does not start (Kafka 3.9): a `.txnindex` entry of version > 0 (`TransactionIndex."
                      "sanityCheck`, KafkaException, `damage_kind` `txnindex_bad_entry`); offsets going backwards where "
                      "the index rebuild of a segment recovered while loading sees them (InvalidOffsetException, not "
                      "caught by `LogLoader.loadSegmentFiles`, `damage_kind` `offset_overlap`); a batch whose offsets "
                      "are below its segment's base offset in a recovered segment (the split of "
                      "`LocalLog.splitOverflowedSegment` fails its `require(segment.hasOverflow())`, "
                      "IllegalArgumentException, `damage_kind` `offset_overflow`); a control batch with a producer id "
                      "in a recovered segment whose record is not an ABORT or COMMIT marker or has a null key or value "
                      "(`EndTransactionMarker.deserialize`, `damage_kind` `not_an_end_txn_marker`). `exception`, "
                      "`thrown_by`, `damage_kind`, `dir_state` (of the partition dir); `file`/`position` are the "
                      "batch or index entry it throws at. Save the partition's records (`kforensics export`) before "
                      "deleting the file Kafka cannot load. A folder in the log dir that is not a topic-partition dir "
                      "(`lost+found`, `backup/`) stops the broker too (`LogManager.loadLogs` throws KafkaException): "
                      "that is said by its `unknown_file` (info, `broker_would_not_start`) and by `restart_prediction`"
                      " (`restart_fails`, `reason`), not here, since a copy often holds such folders that the broker "
                      "never had")),
    FindingKind("restart_trims_tail", "info", "a restart would trim only a damaged tail (a torn last write) with "
                "no valid batch behind it: what log recovery is for", ("truncate_at_offset", "bytes_discarded",
                                                                     "damage_kind", "recovery_point", "dir_state"),
                rule=("recovery would cut only a damaged tail with no valid batch behind it (a torn last write: what "
                      "recovery is for): `truncate_at_offset`, `bytes_discarded`, `damage_kind`, `recovery_point`, "
                      "`dir_state`")),
    FindingKind("damage_below_recovery_point", "warning", "damage in a segment a restart does not re-validate "
                "(below the recovery point, or any segment with a clean-shutdown marker): it is served to consumers "
                "as is", ("damage_kind", "recovery_point", "clean_shutdown"),
                rule=("damage (a bad CRC or an unframeable batch) in a segment a restart does not re-validate: below the "
                      "recovery point, or in any segment when the clean-shutdown marker is present. The broker keeps "
                      "serving it to consumers as it is: `damage_kind`, `recovery_point`, `clean_shutdown`; `offset` is the"
                      " first offset of the damaged batch")),
    # producers (spark/producers.py)
    FindingKind("sequence_gap", "error", "a producer's batch does not continue its sequence (records lost or "
                "never written)", ("expected_sequence", "found_sequence", "gap_size", "size_class",
                                   "leader_epoch_change", "previous_batch_offset"),
                rule=("same producer id and epoch, base sequence is not last sequence + 1 (2147483647 is followed "
                      "by 0): `expected_sequence`, `found_sequence`, `gap_size`, `previous_batch_offset`, "
                      "`size_class` (`small`: at most 5 batches of the previous batch's size, a lost in-flight "
                      "window; `large`: more), `leader_epoch_change` (the batch is the first of a new partition "
                      "leader epoch: the signature of an unclean election)")),
    FindingKind("cleaned_sequence_holes", "info", "a compacted partition's producer sequences have holes the log "
                "cleaner made below its checkpoint (batches whose records were all superseded are deleted): counted, "
                "not a gap", ("cleaner_offset", "holes", "sequence_numbers", "producer_epochs"),
                rule=("once per partition with a `cleaner-offset-checkpoint` entry, where a producer epoch's base "
                      "sequence jumps past the previous surviving batch's last sequence + 1 and the missing sequence "
                      "numbers can have stood at offsets below the checkpoint (the previous batch ends more than one "
                      "offset below it): what `sequence_gap` leaves to compaction (Kafka's `MemoryRecords.filterTo` "
                      "deletes a batch whose records are all superseded and keeps the survivors' baseSequence and "
                      "lastOffsetDelta): `cleaner_offset`, `holes`, `sequence_numbers` (missing in all), "
                      "`producer_epochs`; `offset`/`position` are the first such batch")),
    FindingKind("duplicate_sequence", "error", "the same producer id, epoch and sequence range at more than one "
                "offset (a duplicate the broker should have rejected)", ("sequence_range", "offsets"),
                rule=("the same producer id, epoch and sequence range at more than one offset (reported at the "
                      "second copy): `sequence_range`, `offsets`")),
    FindingKind("zombie_epoch", "error", "data written with a producer epoch lower than one already written "
                "(a fenced producer still writing)", ("newer_epoch", "newer_epoch_first_offset", "evidence"),
                rule=("data written with an epoch lower than one already written (data or marker) for that producer"
                      " id in the partition, by log order (no clock involved; under Transactions V2 the marker carries"
                      " the epoch above its data's and the next transaction writes with it, so a healthy producer "
                      "never goes back): `newer_epoch`, `newer_epoch_first_offset`, `evidence` (`log_order`)")),
    FindingKind("content_duplicate", "warning", "a new producer id re-sent records another producer id had "
                "written (a producer restarted without idempotence across the restart)",
                ("producer_ids", "matches", "original_offsets", "resent_offsets", "ms_between"),
                rule=("full mode: a re-send. A run of at least `--resend-min-records` (3) consecutive records at "
                      "the start of a producer id's history in a partition that equals, record for record (key and "
                      "value hashes), a consecutive run among an earlier producer id's last `--resend-tail` "
                      "(10,000) records there, the new producer id's first write within `--resend-window` (15 min; "
                      "0: no limit) of the earlier one's last write, and after its last record in the log. A run "
                      "whose first `--resend-min-records` records stand more than once in the earlier tail is the "
                      "stream's own repetition (heartbeats, status and changelog topics), never a re-send. "
                      "Records of aborted transactions are left out (`--resend-aborted` brings them back): when a "
                      "Streams task moves, its new producer re-writes what the fenced one wrote in a transaction the "
                      "coordinator aborted, which no read_committed consumer saw. "
                      "`producer_ids` ([earlier, new]), `matches` (re-sent records: never more than either producer"
                      " wrote), `original_offsets` and `resent_offsets` ([first, last] on each side), `ms_between` "
                      "(the new producer's first write after the earlier one's last)")),
    # transactions (spark/transactions.py)
    FindingKind("hanging_transaction", "error", "a transaction open at the log end for longer than the "
                "transaction timeout: the LSO is stuck", ("first_offset", "lso_stuck_at", "age_ms_at_log_end",
                                                         "last_data_offset", "transaction_timeout_ms"),
                rule=("a transaction open at the log end and older than its timeout, measured against the newest "
                      "timestamp in the log: its transactional id's `txnTimeoutMs` (the coordinator aborts a "
                      "transaction after it: TransactionStateManager.timedOutTransactions) where a "
                      "`__transaction_state` record in the input names the producer id, else `--txn-timeout` (15 "
                      "min); never a two-phase-commit transaction (timeout Integer.MAX_VALUE: `prepared_transaction`)"
                      ": `first_offset`, `lso_stuck_at`, `age_ms_at_log_end`, `last_data_offset`, "
                      "`transaction_timeout_ms` (the timeout it was judged by)")),
    FindingKind("prepared_transaction", "info", "a two-phase-commit transaction (KIP-939) open at the log end: it "
                "holds the last stable offset until its transaction manager commits or aborts it",
                ("transactional_id", "first_offset", "last_data_offset", "age_ms_at_log_end", "holds_lso_at"),
                rule=("a transaction open at the log end whose transactional id's timeout is Integer.MAX_VALUE (a "
                      "KIP-939 two-phase-commit transaction, which the coordinator never aborts: "
                      "TransactionMetadata.isDistributedTwoPhaseCommitTxn): not hanging, prepared; it holds the LSO "
                      "of its partition: `transactional_id`, `first_offset`, `last_data_offset`, `age_ms_at_log_end`, "
                      "`holds_lso_at`")),
    FindingKind("txnindex_missing", "error", "an aborted transaction the .txnindex does not list", _TXNINDEX_FIELDS,
                rule=("an aborted range (an ABORT marker in the log) that the `.txnindex` lacks: `first_offset`, "
                      "`last_offset`, `last_stable_offset`")),
    FindingKind("txnindex_orphan", "error", "a .txnindex entry with no ABORT marker in the log", _TXNINDEX_FIELDS,
                rule=("a `.txnindex` entry with no ABORT marker in the log: `first_offset`, `last_offset`, "
                      "`last_stable_offset`")),
    FindingKind("txnindex_mismatch", "error", "a .txnindex entry whose first offset or last stable offset differs "
                "from the log's", (*_TXNINDEX_FIELDS, "index_first_offset", "index_last_stable_offset"),
                rule=("a `.txnindex` entry with a different first offset or last stable offset than the log's "
                      "aborted range: `first_offset`, `last_offset`, `last_stable_offset`, and the index's "
                      "`index_first_offset`, `index_last_stable_offset`")),
    # cross-checks (spark/sql/)
    FindingKind("snapshot_mismatch", "error", "a producer snapshot entry that disagrees with the log",
                ("snapshot_offset", "snapshot_last_offset", "snapshot_last_sequence", "log_last_offset",
                 "log_last_sequence"),
                rule=("a producer snapshot entry whose last offset is not below the snapshot's offset, or that "
                      "disagrees with the producer's last batch below it while the log still holds that part: "
                      "`snapshot_offset`, `snapshot_last_offset`, `snapshot_last_sequence`, `log_last_offset`, "
                      "`log_last_sequence`")),
    FindingKind("leader_epoch_mismatch", "error", "batches whose partition leader epoch is not the one "
                "leader-epoch-checkpoint assigns to their offsets", ("batch_leader_epoch", "checkpoint_epoch",
                                                                     "batches"),
                rule=("batches whose partitionLeaderEpoch is not the epoch leader-epoch-checkpoint assigns to their"
                      " offsets: `batch_leader_epoch`, `checkpoint_epoch`, `batches`")),
    FindingKind("offset_overlap", "error", "offsets going backwards from one batch to the next in file order",
                ("previous_last_offset",),
                rule="offsets going backwards from one batch to the next in file order: `previous_last_offset`"),
    FindingKind("segment_name_mismatch", "error", "a segment named for an offset above its first batch, or "
                "overlapping the next segment", ("name_offset", "first_batch_base_offset", "last_offset",
                                                 "next_segment_base_offset"),
                rule=("a segment named for an offset above its first batch, or overlapping the next segment: "
                      "`name_offset`, `first_batch_base_offset`, `last_offset`, `next_segment_base_offset`")),
    # replicas (spark/replicas.py)
    FindingKind("replica_divergence", "error", "two replicas of a topic-partition hold different batches at the "
                "same offset", ("offset", "common_prefix_end_offset", "brokers", "lost_offsets", "lost_on", "winner",
                                "replicas", "elections"),
                severity_rule="warning when no committed offset (below the high watermark) was lost",
                rule=("two replicas of a topic-partition (same `cluster.id`) hold different batches at the same "
                      "offset (compared by base/last offset, CRC, producer id/epoch, base sequence and leader "
                      "epoch, headers only, from the later log start or cleaner checkpoint up to the shorter log "
                      "end). On the replica whose history was replaced (lower leader epoch at that offset): "
                      "`offset`, `common_prefix_end_offset`, `brokers`, `lost_offsets` ([first, last]: below that "
                      "replica's high watermark, i.e. committed and lost in an unclean election; null if only "
                      "uncommitted data differed, or when that replica's high watermark is not in the input), "
                      "`lost_on`, `winner`, `replicas` (per broker: `leader_epoch_at_offset`, `log_end_offset`, "
                      "`high_watermark`, `leader_epoch_checkpoint`), `elections` (where the cluster's KRaft "
                      "metadata log is in the input: the leader changes of the epochs involved, above the lower of "
                      "the two replicas' epochs at the divergence up to the higher, each `leader_epoch`, `leader`, "
                      "`election`, `elected_at`: the election that caused it)")),
    FindingKind("future_replica_divergence", "warning", "the -future copy of a partition (being moved between "
                "a broker's log dirs) holds a batch, within the live log's offsets, that the live replica does not "
                "hold identically", ("live_log_start_offset", "live_log_end_offset", "future_crc", "live_crc",
                                     "live_broker"),
                rule=("a `-future` dir (the copy a broker builds while moving a replica between its log dirs, "
                      "fetched from the live log) holds a batch, within the live log's offsets, that the live dir "
                      "of the same broker does not hold identically (same fingerprint as `replica_divergence`); the "
                      "same broker is the same cluster.id and node.id in meta.properties, so the live dir is found "
                      "in another log dir given as another input (as Kafka keeps them), or under the same label "
                      "where meta.properties is missing; one finding per future dir at its first such batch; a copy "
                      "that is only shorter is still catching up, no finding: `live_log_start_offset`, "
                      "`live_log_end_offset`, `future_crc`, `live_crc` (null when the live dir has no batch at that "
                      "offset), `live_broker` (the input holding the live dir)")),
    # the KRaft control plane (spark/control_plane.py: __cluster_metadata replayed, held against the data)
    FindingKind("unclean_leader_election", "error", "a partition leader elected from outside the previous ISR and "
                "ELR (the metadata log's record of it; with the first data offset of its leader epoch and the "
                "committed offsets it cost where the data is in the input)",
                ("leader", "leader_epoch", "previous_leader", "previous_isr", "previous_elr", "metadata_offset",
                 "elected_at", "metadata_broker", "offset", "lost_offsets"),
                rule=("KRaft: a partition leader elected from outside the previous ISR and ELR, as the replay of "
                      "the metadata log shows it (both signatures: the PartitionChangeRecord that sets "
                      "LeaderRecoveryState RECOVERING with Isr = [leader], and, when the partition is still "
                      "RECOVERING, a new leader outside the ISR with the tag absent). Once per election per "
                      "cluster, on the reference copy's record (`broker` = the broker whose `__cluster_metadata` "
                      "copy was read, `file`/`position` the record's batch): `leader`, `leader_epoch`, "
                      "`previous_leader`, `previous_isr`, `previous_elr`, `metadata_offset`, `elected_at` (the "
                      "record's timestamp), `metadata_broker`; where the partition's data is in the input `offset` "
                      "(the first data offset of that leader epoch: leader-epoch-checkpoint, else the first batch) "
                      "and `lost_offsets` ([first, last] committed offsets a `replica_divergence` at that epoch "
                      "shows lost)")),
    FindingKind("stray_partition", "warning", "a partition dir a broker holds but should not (deleted or re-created "
                "topic, not a replica, or renamed -stray by Kafka): it may hold the only copy of its data",
                ("reason", "topic_id", "metadata_topic_id", "replicas"),
                rule=("KRaft: a partition dir a broker of a cluster whose metadata log is in the input holds but "
                      "should not, with `reason`: `marked_stray` (Kafka 3.7+ renamed it "
                      "`<topic>-<partition>.<uuid>-stray`), `topic_deleted` (its `partition.metadata` topic id, or "
                      "without one its topic name, is no live topic), `topic_recreated` (the name is live under "
                      "another id), `not_a_replica` (the broker's `node.id` is not in the partition's replicas); "
                      "`topic_id` (of the dir), `metadata_topic_id` (the live topic's), `replicas`. `file` is the "
                      "dir. The dir may hold the only copy of a deleted topic's data: the message says so")),
    FindingKind("offline_partition", "error", "a partition without a leader at the end of the metadata log while "
                "some broker was up (registered, unfenced, not shutting down)",
                ("since_offset", "since", "last_leader", "isr", "elr", "replicas", "live_brokers"),
                rule=("KRaft: a live topic's partition with leader -1 at the end of the metadata log while some "
                      "broker is registered, unfenced and not in controlled shutdown there (a log that ends with "
                      "every broker fenced or shutting down is a stopped cluster: no finding): `since_offset`, "
                      "`since` (metadata offset and time it lost its leader), `last_leader`, `isr`, `elr`, "
                      "`replicas`, `live_brokers`")),
    FindingKind("leader_epoch_unknown", "error", "a data batch or leader-epoch-checkpoint entry carries a leader "
                "epoch the metadata log never gave its partition (data or metadata from another cluster)",
                ("leader_epoch", "source", "first_known_epoch", "last_known_epoch", "metadata_broker"),
                rule=("KRaft: a data batch or `leader-epoch-checkpoint` entry of a partition (same topic id) "
                      "carrying a leader epoch the metadata log never gave it, judged where the metadata covers "
                      "that time: below the partition's first epoch only when its PartitionRecord is in the log "
                      "(not the base snapshot), above its last epoch only on the broker whose metadata copy is the "
                      "reference (a broker's data is never ahead of its own metadata). Once per broker, partition "
                      "and epoch, at its first batch or entry: `leader_epoch`, `source` (`batch`, "
                      "`leader-epoch-checkpoint`), `first_known_epoch`, `last_known_epoch`, `metadata_broker`")),
    # the transaction coordinator (spark/coordinator.py)
    FindingKind("marker_missing", "error", "the coordinator completed a transaction, but a partition it names "
                "holds no marker for it", _MARKER_FIELDS,
                rule=("the coordinator completed a transaction (CompleteCommit/CompleteAbort) naming a partition in"
                      " the input, but that replica (whose log reaches the completion time) holds no marker of it. "
                      "The marker carries the producer id and epoch of the transaction's PrepareCommit/PrepareAbort "
                      "record (a transaction completed at a rotation is the old producer id's, at epoch 32767). Under "
                      "Transactions V2 (ClientTransactionVersion 2) that epoch is one above the data's and unique to "
                      "the transaction: the marker is the one of that producer id and epoch; under V1 it is the first "
                      "marker of the producer id between the transaction's start and the producer's next transaction "
                      "there. `producer_id`/`producer_epoch` are the marker's: "
                      "`transactional_id`, `coordinator_partition`, `coordinator_offset`, `coordinator_broker`, "
                      "`coordinator_outcome`, `txn_start_timestamp`, `completed_at`, `partitions_not_in_input`, "
                      "`expected_coordinator_partition`; `offset`/`position` are the transaction's first data batch")),
    FindingKind("outcome_mismatch", "error", "a partition's marker says the other outcome than the coordinator",
                (*_MARKER_FIELDS, "marker_outcome", "marker_offset"),
                rule=("the coordinator completed a transaction naming a partition in the input, and that replica's "
                      "marker says the other outcome (COMMIT vs ABORT); matched as for `marker_missing` (Transactions "
                      "V1 and V2, across a rotation): the same "
                      "fields (`transactional_id`, `coordinator_partition`, `coordinator_offset`, "
                      "`coordinator_broker`, `coordinator_outcome`, `txn_start_timestamp`, `completed_at`, "
                      "`partitions_not_in_input`, `expected_coordinator_partition`) plus `marker_outcome`, "
                      "`marker_offset`")),
    FindingKind("unknown_producer", "error", "a transaction open at the log end whose producer id no "
                "__transaction_state record names: no coordinator will ever end it",
                ("batches", "transaction_state_partitions_present", "transaction_state_partitions_missing"),
                severity_rule="warning unless every __transaction_state partition is in the input",
                rule=("a transaction open at the log end (no marker) whose producer id no `__transaction_state` "
                      "record in the input names as ProducerId, PreviousProducerId or NextProducerId: no coordinator "
                      "can abort it, so the LSO is stuck for good. Judged only where some `__transaction_state` "
                      "partition dir is in the input (with or without records). Marker-closed transactions of a "
                      "producer id no record names are what a compacted `__transaction_state` leaves (only the newest "
                      "record of a transactional id survives; rotations, `transactional.id.expiration.ms`, restarts "
                      "change producer ids): silent. `offset`/`file`/`position` are the transaction's first batch: "
                      "`batches` (of the open transaction), `transaction_state_partitions_present`, "
                      "`transaction_state_partitions_missing`")),
    FindingKind("epoch_fenced_write", "error", "a transactional batch written after the coordinator fenced its "
                "producer epoch", ("transactional_id", "fenced_at", "fencing_epoch", "written_at", "batches",
                                   "expected_coordinator_partition", "evidence", "clock_skew_ms"),
                rule=("a transactional batch created (base timestamp, the client's clock) more than `--clock-skew` "
                      "(200 ms) after the coordinator recorded a higher epoch for its producer id (the record's "
                      "timestamp, the coordinator's clock). Under Transactions V2 every end of a transaction bumps the "
                      "epoch, so a client whose clock runs a few ms ahead stamps its last batches after its own "
                      "PrepareCommit: the tolerance is for that. Within a partition, `zombie_epoch` judges by log "
                      "order and needs no clock. `transactional_id`, `fenced_at`, `fencing_epoch`, `written_at`, "
                      "`batches`, `expected_coordinator_partition`, `evidence` (`coordinator_clock`), "
                      "`clock_skew_ms`")),
    # consumer groups (spark/consumer_offsets.py)
    FindingKind("committed_offset_beyond_log_end", "error", "a group's committed offset is above the partition's "
                "log end", _COMMIT_FIELDS,
                rule=("a group's committed offset is above the partition's log end (longest replica): the "
                      "group resets or skips. `broker` is the one holding the commit, `topic`/`partition` the "
                      "committed partition, `file`/`position` the commit record: `group`, `committed_offset`, "
                      "`coordinator_partition`, `coordinator_offset`, `commit_timestamp`, `log_start_offset`, "
                      "`log_end_offset`, `reference_broker`") + _COMMIT_OWNER),
    FindingKind("committed_offset_below_log_start", "error", "a group's committed offset is below the partition's "
                "log start", _COMMIT_FIELDS,
                rule=("a group's committed offset is below the partition's log start (retention deleted records the "
                      "group never read); a tiered partition's log start is in the remote tier (its earliest finished "
                      "copy, not below `log-start-offset-checkpoint`), so a group reading from the remote tier is "
                      "sound; `broker`, `topic`/`partition` and `file`/`position` as for "
                      "`committed_offset_beyond_log_end`; the same fields: `group`, `committed_offset`, "
                      "`coordinator_partition`, `coordinator_offset`, `commit_timestamp`, `log_start_offset`, "
                      "`log_end_offset`, `reference_broker`") + _COMMIT_OWNER),
    FindingKind("committed_offset_in_aborted_range", "warning", "a group's committed offset lies inside an aborted "
                "transaction", (*_COMMIT_FIELDS, "aborted_first_offset", "aborted_last_offset",
                                "aborted_producer_id"),
                rule=("a group's committed offset lies strictly inside an aborted transaction (after its "
                      "first offset, up to its marker): the same fields as `committed_offset_beyond_log_end` "
                      "(`group`, `committed_offset`, `coordinator_partition`, `coordinator_offset`, "
                      "`commit_timestamp`, `log_start_offset`, `log_end_offset`, `reference_broker`) plus "
                      "`aborted_first_offset`, `aborted_last_offset`, `aborted_producer_id`. The committed offset "
                      "of all three is the one the group coordinator serves: commits apply in log order, a "
                      "transactional one (TxnOffsetCommit) once its COMMIT marker follows, never an aborted or pending"
                      " one (OffsetMetadataManager)") + _COMMIT_OWNER),
    FindingKind("offset_commit_pending", "warning", "a group's offset commits sit in a transaction still open longer "
                "than its timeout: the group's consumers get UNSTABLE_OFFSET_COMMIT until it ends",
                ("group", "transactional_id", "partitions", "committed_offsets", "txn_first_offset",
                 "age_ms_at_log_end", "transaction_timeout_ms"),
                rule=("a group's transactional offset commits (TxnOffsetCommit) in `__consumer_offsets` whose "
                      "transaction has no marker at the log end, open for longer than its timeout (its transactional "
                      "id's, else `--txn-timeout`; a younger one is a transaction in flight, a two-phase-commit one a "
                      "`prepared_transaction`): the group coordinator keeps them pending, and OffsetFetch answers "
                      "UNSTABLE_OFFSET_COMMIT for those partitions until a marker ends the transaction (the \"group "
                      "stuck after a crash\"). One finding per group and transaction, on the `__consumer_offsets` "
                      "partition (its longest replica) at its first pending commit: `group`, `transactional_id`, "
                      "`partitions` (the committed partitions), `committed_offsets`, `txn_first_offset`, "
                      "`age_ms_at_log_end`, `transaction_timeout_ms`")),
    # groups replayed from __consumer_offsets (spark/groups.py) and __share_group_state (spark/share_groups.py)
    FindingKind("partition_owned_twice", "warning", "one partition in the current assignment of two members of one "
                "group at once", ("group", "group_type", "topic_id", "members", "member_epochs", "generation",
                                  "coordinator_partition", "coordinator_offset", "overlap_from_timestamp",
                                  "overlap_to_offset"),
                rule=("two members of one classic, consumer (KIP-848) or streams (KIP-1071, active tasks) group hold "
                      "the same partition in their current assignment over overlapping spans of the group's "
                      "`__consumer_offsets` log: both consume it (a classic group's leader assigned it twice in one "
                      "generation; a consumer group's log that Kafka's coordinator refuses to load, `Cannot set the "
                      "epoch of ... because the partition is still owned`). Silent on a partition the previous owner "
                      "still holds pending revocation while the next one has it, on share groups (whose members "
                      "share partitions by design) and on target assignments. One finding per pair of members and "
                      "partition, at the record that began the overlap (`file`/`position`, on `broker`), `topic`/"
                      "`partition` the partition owned twice: `group`, `group_type`, `topic_id`, `members`, "
                      "`member_epochs` (or `generation` for a classic group), `coordinator_partition`, "
                      "`coordinator_offset`, `overlap_from_timestamp`, `overlap_to_offset` (null: still at the end of "
                      "the input)")),
    FindingKind("consumer_protocol_undecodable", "info", "a classic consumer group member's subscription or "
                "assignment bytes do not read as the consumer protocol: who owned what is unknown for that member",
                ("group", "member_id", "generation", "protocol", "field", "error"),
                rule=("in a GroupMetadataValue of protocol type `consumer`, a member's `subscription` or `assignment` "
                      "does not read as ConsumerProtocolSubscription / ConsumerProtocolAssignment (versions 0-3; a "
                      "newer version read as 3). The coordinator never reads these bytes (the consumers do), so the "
                      "group's record stands; the replay leaves that member's partitions out. `file`/`position` the "
                      "record: `group`, `member_id`, `generation`, `protocol`, `field` (`subscription`, "
                      "`assignment`), `error`")),
    FindingKind("share_records_deleted_undelivered", "warning", "a share partition's start offset is below the "
                "partition's log start: records were deleted before the share group acknowledged them",
                (*_SHARE_FIELDS, "log_start_offset", "deleted_offsets", "reference_broker"),
                rule=("the share partition's state at the end of the input (its latest ShareSnapshot and the "
                      "ShareUpdates after it) starts below the log start of the partition's longest replica: offsets "
                      "`deleted_offsets` ([start offset, log start - 1]) were removed by retention or DeleteRecords "
                      "while the share group had not acknowledged them. On the broker holding the share state, "
                      "`topic`/`partition` the data partition, `file`/`position` the state's latest record: "
                      "`group`, `topic_id`, `share_partition_key`, `start_offset`, `coordinator_partition`, "
                      "`coordinator_offset`, `log_start_offset`, `deleted_offsets`, `reference_broker`")),
    FindingKind("share_state_beyond_log_end", "error", "a share partition's start offset is above its log end (the "
                "log was truncated under it, e.g. by an unclean election)",
                (*_SHARE_FIELDS, "log_end_offset", "reference_broker"),
                rule=("the share partition's start offset at the end of the input is above the log end of the "
                      "partition's longest replica: the share group acknowledged offsets the log no longer holds "
                      "(truncated under it), and records written there again are skipped. As "
                      "`share_records_deleted_undelivered`: `group`, `topic_id`, `share_partition_key`, "
                      "`start_offset`, `coordinator_partition`, `coordinator_offset`, `log_end_offset`, "
                      "`reference_broker`")),
    FindingKind("share_state_stale_leader", "warning", "a ShareUpdate written with a leader epoch lower than one "
                "already recorded for that share partition",
                (*_SHARE_FIELDS, "leader_epoch", "recorded_leader_epoch", "recorded_at_offset"),
                rule=("a ShareUpdate whose LeaderEpoch (not -1) is below the highest leader epoch of the share "
                      "partition's earlier records (since its last tombstone): the share coordinator fences such a "
                      "write (FENCED_LEADER_EPOCH), so an old share partition leader's state was written anyway. "
                      "`file`/`position` the update: `group`, `topic_id`, `share_partition_key`, `start_offset`, "
                      "`coordinator_partition`, `coordinator_offset`, `leader_epoch`, `recorded_leader_epoch`, "
                      "`recorded_at_offset`")),
    FindingKind("share_records_archived", "info", "records a share group archived: delivered up to the delivery limit "
                "(poison records) or rejected", (*_SHARE_FIELDS, "first_offset", "last_offset", "record_count",
                                                 "delivery_count"),
                rule=("each run of ARCHIVED offsets in a share partition's state at the end of the input: records no "
                      "consumer of the group will be given again, after `delivery_count` deliveries (the delivery "
                      "limit, `group.share.delivery.count.limit`, 5 by default) or a REJECT acknowledgement. "
                      "`offset` is the first one; export them with `kforensics export --offsets FIRST:LAST`. "
                      "`file`/`position` the state's latest record: `group`, `topic_id`, `share_partition_key`, "
                      "`start_offset`, `coordinator_partition`, `coordinator_offset`, `first_offset`, `last_offset`, "
                      "`record_count`, `delivery_count`")),
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


_FRAMED = ("the same rule: the log cleaner writes whole batches with a valid CRC-32C into the cleaned segment (a "
           "rewritten batch is built anew, an empty one is a 61-byte header), which is framed like any other")
_REBUILT = ("the same rule: the cleaned segment's indexes are rebuilt from the batches it keeps (`LogSegment.append`), "
            "positions and offsets with holes between them, timestamps the batches' max timestamps (which the "
            "cleaner keeps; a delete horizon goes in baseTimestamp, which no index holds)")
_SNAPSHOT_FILE = ("unchanged: the log cleaner writes no producer snapshot; it deletes those named for the segments "
                  "it merges away (`UnifiedLog.deleteProducerSnapshots`)")
_DUMP_TEXT = ("kafka-dump-log text has no `cleaner-offset-checkpoint`: the cleaned prefix is unknown and the log "
              "rules read such a log as uncleaned; `deleteHorizonMs: OptionalLong[...]` is read into the batches "
              "table's `delete_horizon_ms`")
_REMOTE = "unchanged: tiered storage is not allowed on a compacted topic (KIP-405)"
_RECOVERY = ("`LogSegment.recover` takes a merged segment (named for its first segment's base offset, below its "
             "first batch), offset holes and empty batches (count 0) for the valid batches they are, and the "
             "prediction replays that: only damage counts")
_CONTROL_PLANE = ("unchanged: the log cleaner does not clean `__cluster_metadata` (KRaft snapshots replace its "
                  "prefix), and a compacted data log keeps its batches' partition leader epochs")
_COMMITS = ("unchanged: `__consumer_offsets` is compacted (a key's latest commit stays, a tombstone until its "
            "delete horizon), and the latest commit per group and partition is what is judged; a committed offset "
            "may fall in a hole the cleaner made in the data log: it is still inside the log")
_CREATE_TIME = ("a batch whose baseTimestamp holds its delete horizon (attributes bit 6) or -1 (an empty batch the "
                "cleaner kept) has no create time in its header: its max timestamp stands in")

#: How each rule reads a compacted log (the log cleaner's output: Kafka's `Cleaner`, `CleanedTransactionMetadata`,
#: `MemoryRecords.filterTo` in apache/kafka trunk: Cleaner.java at 08528988, CleanedTransactionMetadata.java and
#: MemoryRecords.java at c4342d76; the same rules in Kafka 4.0's LogCleaner.scala, 1eb76443). The cleaned prefix of a partition is the offsets below its
#: `cleaner-offset-checkpoint` entry; without one the log is read as uncleaned. docs/findings.md prints it per kind.
COMPACTED_LOG: dict[str, str] = {
    **dict.fromkeys(("truncated_tail", "zero_filled_tail", "corrupt_crc", "invalid_batch_length", "unknown_magic",
                     "unknown_codec"), _FRAMED),
    **dict.fromkeys(("decompression_failed", "invalid_record"),
                    "the same rule: a batch the cleaner rewrote keeps its codec, and its records keep their offset "
                    "deltas (with holes where records were removed), which decode like any other"),
    "record_count_mismatch": ("a batch the cleaner kept empty (count 0, no records section: `MemoryRecords.filterTo` "
                              "RETAIN_EMPTY, `DefaultRecordBatch.writeEmptyHeader`) declares the none it holds, and a "
                              "thinned batch the records it kept (its lastOffsetDelta keeps the original span): no "
                              "mismatch"),
    **dict.fromkeys(("index_non_monotonic", "index_bad_entry", "index_offset_mismatch", "timeindex_non_monotonic",
                     "timeindex_bad_entry", "index_partial_entry"), _REBUILT),
    **dict.fromkeys(("snapshot_corrupt_crc", "snapshot_unsupported_version", "snapshot_truncated"), _SNAPSHOT_FILE),
    "txnindex_bad_entry": ("the same rule: a cleaned segment's `.txnindex` keeps an entry as first written, its first "
                           "offset possibly below the segment's base offset (the transaction began in an earlier "
                           "segment), its last offset the ABORT marker's, inside the segment"),
    "checkpoint_malformed": "unchanged; a sound `cleaner-offset-checkpoint` gives the cleaned prefix the log rules read",
    **dict.fromkeys(("internal_record_undecodable", "internal_record_newer_version"),
                    "unchanged: a tombstone (null value) a compacted internal topic keeps until its delete horizon "
                    "is read as a deletion"),
    "cleaner_blocked": ("about compaction itself: a transaction whose data lies below the cleaner offset is complete "
                        "(see `hanging_transaction`), so only one open in the dirty tail, above the checkpoint, can "
                        "hold the cleaner"),
    **dict.fromkeys(("dump_line_unparseable", "marker_outcome_unknown", "dump_section_skipped", "dump_invalid_bytes"),
                    _DUMP_TEXT),
    **dict.fromkeys(("remote_log_gap", "remote_segment_stuck", "remote_leader_epoch_mismatch", "remote_overlap"),
                    _REMOTE),
    **dict.fromkeys(("unreadable_file", "unknown_file"),
                    "unchanged: the `.cleaned` and `.swap` files of an interrupted cleaning are broker files"),
    **dict.fromkeys(("restart_would_truncate", "restart_would_fail", "restart_trims_tail",
                     "damage_below_recovery_point"), _RECOVERY),
    "sequence_gap": ("below the cleaner offset a jump between surviving batches of one producer epoch is what "
                     "compaction does (a batch whose records are all superseded is deleted, `DELETE_EMPTY`; a thinned "
                     "batch keeps its baseSequence and lastOffsetDelta): silent wherever the missing sequence numbers "
                     "can have stood below the checkpoint (the previous batch ends more than one offset below it), "
                     "counted by `cleaned_sequence_holes`; in the dirty tail the rule as written. An empty batch keeps "
                     "its base sequence and lastOffsetDelta, so it continues its producer's sequence"),
    "cleaned_sequence_holes": "only on compacted partitions: what `sequence_gap` leaves to compaction",
    **dict.fromkeys(("duplicate_sequence", "zombie_epoch"),
                    "unchanged everywhere: the cleaner never rewrites a batch's producer id, epoch or base sequence, "
                    "nor reorders batches"),
    "content_duplicate": "unchanged; for the re-send window, " + _CREATE_TIME,
    "prepared_transaction": ("as `hanging_transaction`: a transaction whose data lies below the cleaner offset is "
                             "complete, never prepared"),
    "offset_commit_pending": ("a commit whose transactional batch lies below `__consumer_offsets`' cleaner offset is "
                              "complete (the cleaner cleans only below the last stable offset): never pending"),
    "hanging_transaction": ("a transaction without a marker whose data lies below the cleaner offset is complete: the "
                            "cleaner cleans only below the last stable offset (`LogCleanerManager`), so it was "
                            "complete when cleaned, and its marker was removed past its delete horizon; it is read "
                            "as committed (aborted data never survives a cleaning), never open, never hanging, never "
                            "holding the LSO. Ages are measured on max timestamps, never on a delete horizon"),
    "txnindex_missing": ("compared against ABORT markers: an aborted transaction whose data the cleaner removed keeps "
                         "its marker and its entry; a marker with no data left has no entry to miss (the cleaner drops "
                         "it once the marker may go, `CleanedTransactionMetadata`; an empty transaction never had "
                         "one, `ProducerAppendInfo.appendEndTxnMarker`)"),
    "txnindex_orphan": ("compared against ABORT markers, not surviving data: an entry whose marker is in the log is no "
                        "orphan, whether or not its data was cleaned; `aborted_ranges` takes such a range from its "
                        "entry"),
    "txnindex_mismatch": ("an entry's first offset, or LSO, below the cleaner offset and below what the log still "
                          "shows names batches the cleaner removed: it agrees"),
    "snapshot_mismatch": ("below the cleaner offset the batch an entry names may have been deleted (all its records "
                          "superseded): no mismatch when only an earlier batch of the producer, or none, is left below "
                          "it; a thinned batch keeps its last offset and sequence"),
    "leader_epoch_mismatch": "unchanged: a rewritten or empty batch keeps its partitionLeaderEpoch",
    "offset_overlap": "unchanged: offsets only go up in a cleaned segment (holes, never back)",
    "segment_name_mismatch": ("a merged segment is named for its first segment's base offset, at or below its first "
                              "batch: legal"),
    "replica_divergence": "compared from the later of the replicas' log starts and cleaner checkpoints: each cleans "
                          "on its own schedule",
    "future_replica_divergence": ("unchanged: Kafka pauses the cleaner on a partition while its replica moves between "
                                  "log dirs (`ReplicaManager.alterReplicaLogDirs`, `abortAndPauseCleaning`)"),
    **dict.fromkeys(("unclean_leader_election", "stray_partition", "offline_partition", "leader_epoch_unknown"),
                    _CONTROL_PLANE),
    "marker_missing": ("the cleaner removes a marker past its delete horizon once no batch of its transaction is left "
                       "(`CleanedTransactionMetadata`): on a replica with a cleaner-offset-checkpoint entry, a "
                       "completed transaction with neither data nor marker there is what cleaning leaves, silent; "
                       "its data left without its marker is still found"),
    "outcome_mismatch": ("unchanged: a marker that survives keeps its control type (an empty control batch, whose "
                         "record was cleaned, has no outcome to mismatch)"),
    "unknown_producer": "unchanged: a producer id whose data survives is judged the same",
    "epoch_fenced_write": "unchanged; " + _CREATE_TIME,
    **dict.fromkeys(("committed_offset_beyond_log_end", "committed_offset_below_log_start"), _COMMITS),
    "committed_offset_in_aborted_range": _COMMITS + "; an aborted range whose data the cleaner removed is taken from "
                                                    "its `.txnindex` entry",
    "partition_owned_twice": ("`__consumer_offsets` is itself compacted: the cleaner removes a member's record only "
                              "when a newer record of the same key follows, so the replay sees fewer intermediate "
                              "states, never an overlap that was not there"),
    "consumer_protocol_undecodable": "unchanged: judged on each GroupMetadataValue that survives",
    **dict.fromkeys(("share_records_deleted_undelivered", "share_state_beyond_log_end", "share_records_archived"),
                    "judged on the share partition's state at the end of the input, which the cleaner of "
                    "`__share_group_state` keeps (each key's newest record); against the data partition's log start "
                    "and end, which compaction of the data does not move"),
    "share_state_stale_leader": ("compares a ShareUpdate with the earlier records of its share partition that survive: "
                                 "one the cleaner removed is not compared"),
}
