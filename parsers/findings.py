"""Findings: what a parser or an analysis reports instead of raising.

A finding names its kind, a severity, the file and byte position it is about, one plain sentence,
and kind-specific details. Every kind, the parsers' and the Spark analyses' alike, is registered once in
:data:`KINDS` (severity, meaning, fields); parsers, Spark transforms, `dump`, `scan`, the reports and the
HTML report all read it. No Spark and no CLI here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
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
    applies). `compacted` says how the rule reads a compacted log (the log cleaner's output), `reports` which
    commands show the kind besides the scan (`kforensics.spark.registry.REPORTS`); `event`, `at`, `clock` and `actions` how
    it reads in an incident (docs/incidents.md), `model` the file that declares it, `records` and `exported` which
    records a finding names (`find` and `export --from-finding`)."""

    name: str
    severity: Severity
    meaning: str
    fields: tuple[str, ...] = ()
    severity_rule: str | None = None
    rule: str | None = None
    compacted: str | None = None
    reports: tuple[str, ...] = ()
    model: str | None = None
    #: How the finding reads in an incident's timeline (a template over its columns and detail fields: `{topic}`,
    #: `{group}`, ...), and the detail field holding its time (epoch ms), if one does.
    event: str | None = None
    at: str | None = None
    #: What an operator can do about it, in an incident's plan: each a mapping of `phase` (`save` comes first,
    #: then `verify`, then `repair`), `command` (a template as `event`), `why` and `destructive`.
    actions: tuple[Mapping[str, Any], ...] = ()
    #: The records a finding of this kind names (`find --from-finding`): the field of its details holding their
    #: [first, last] offsets, "" for every record of the partition dir its `file` is in, None for none.
    records: str | None = None
    #: Whether `export --from-finding` saves those records (what a repair would destroy, or a stray copy).
    exported: bool = False
    #: Whose clock `at` reads, as the timeline says it after the event: "producer's CreateTime" for a batch's
    #: timestamp the client stamped (it may precede an election the broker saw first), a broker's, coordinator's or
    #: controller's clock for the times they record. Set with `at`, and only then.
    clock: str | None = None


def _kinds(*kinds: FindingKind) -> dict[str, FindingKind]:
    return {k.name: k for k in kinds}


#: The kinds the parsers (and the readers of their output) report: the one place each, its severity and its fields
#: are defined. The scan's checks declare theirs in their model files (spark/sql/*.sql); `kforensics.kinds.KINDS` is
#: the union, and docs/findings.md is generated from it (docs/generate.py; tests/test_docs.py checks it is current).
PARSER_KINDS: dict[str, FindingKind] = _kinds(
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
                      "`kforensics export --from-finding OUT:restart_would_truncate`"),
                records="offsets_discarded", exported=True),
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
    # consumer groups replayed (spark/groups.py reads their records on the executors)
    FindingKind("consumer_protocol_undecodable", "info", "a classic consumer group member's subscription or "
                "assignment bytes do not read as the consumer protocol: who owned what is unknown for that member",
                ("group", "member_id", "generation", "protocol", "field", "error"),
                rule=("in a GroupMetadataValue of protocol type `consumer`, a member's `subscription` or `assignment` "
                      "does not read as ConsumerProtocolSubscription / ConsumerProtocolAssignment (versions 0-3; a "
                      "newer version read as 3). The coordinator never reads these bytes (the consumers do), so the "
                      "group's record stands; the replay leaves that member's partitions out. `file`/`position` the "
                      "record: `group`, `member_id`, `generation`, `protocol`, `field` (`subscription`, "
                      "`assignment`), `error`")),
)

#: Columns of the scan's `findings` table, in order; JSON lines carry the same names (but `details`, whose
#: fields are spread as top-level keys).
FINDING_COLUMNS = ("kind", "severity", "broker", "topic", "partition", "file", "position", "offset", "producer_id",
                   "producer_epoch", "message", "details")
FINDING_FIELDS = FINDING_COLUMNS[:-1]


def severity_of(kind: str) -> Severity:
    """A parser kind's severity (its graver one when it depends on the case). KeyError for an unknown kind."""
    return PARSER_KINDS[kind].severity


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
_RECOVERY = ("`LogSegment.recover` takes a merged segment (named for its first segment's base offset, below its "
             "first batch), offset holes and empty batches (count 0) for the valid batches they are, and the "
             "prediction replays that: only damage counts")

#: How each parser rule reads a compacted log (the log cleaner's output: Kafka's `Cleaner`, `CleanedTransactionMetadata`,
#: `MemoryRecords.filterTo` in apache/kafka trunk: Cleaner.java at 08528988, CleanedTransactionMetadata.java and
#: MemoryRecords.java at c4342d76; the same rules in Kafka 4.0's LogCleaner.scala, 1eb76443). The cleaned prefix of a
#: partition is the offsets below its `cleaner-offset-checkpoint` entry; without one the log is read as uncleaned.
#: The scan's checks say it in their model files (`compacted`); docs/findings.md prints it per kind.
_COMPACTED_LOG: dict[str, str] = {
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
    **dict.fromkeys(("dump_line_unparseable", "marker_outcome_unknown", "dump_section_skipped", "dump_invalid_bytes"),
                    _DUMP_TEXT),
    **dict.fromkeys(("unreadable_file", "unknown_file"),
                    "unchanged: the `.cleaned` and `.swap` files of an interrupted cleaning are broker files"),
    **dict.fromkeys(("restart_would_truncate", "restart_would_fail", "restart_trims_tail",
                     "damage_below_recovery_point"), _RECOVERY),
    "consumer_protocol_undecodable": "unchanged: judged on each GroupMetadataValue that survives",
}

#: How each parser kind reads in an incident (docs/incidents.md): its timeline event, and the actions of its plan.
_STORY: dict[str, dict[str, Any]] = {
    'corrupt_crc': {
        "event": 'the batch at offset {offset} of {topic}-{partition} on {broker} fails its CRC ({file} at byte {position})',
        "actions": (
            {"phase": 'save', "destructive": False,
             "command": 'kforensics export {broker}={log_dir} --broker {broker} --topic {topic} --partition {partition} --out readable-{topic}-{partition}-{broker}.jsonl',
             "why": 'saves every record of {topic}-{partition} on {broker} that still reads (the damaged batch is left out and listed)'},
            {"phase": 'repair', "destructive": True,
             "command": '# restore {topic}-{partition} on {broker} from {intact_on}: stop broker {broker}, move its {topic}-{partition} dir out of the log dir, start it: it fetches the partition again from its leader',
             "why": '{intact_on} holds the batch at offset {offset} intact (the same CRC, and it holds); the damaged copy is discarded'},
        ),
    },
    'restart_would_truncate': {
        "event": 'a restart of {broker} would truncate {topic}-{partition} at offset {truncate_at_offset}, discarding offsets {offsets_discarded[0]}-{offsets_discarded[1]}',
        "actions": (
            {"phase": 'save', "destructive": False,
             "command": 'kforensics export {broker}={log_dir} --broker {broker} --topic {topic} --partition {partition} --dir-state {dir_state} --offsets {offsets_discarded[0]}:{offsets_discarded[1]} --out discarded-{topic}-{partition}-{broker}.jsonl',
             "why": "saves the valid records a restart's log recovery would discard behind the damage"},
            {"phase": 'verify', "destructive": False,
             "command": '# do not restart broker {broker} before that export',
             "why": 'its log recovery truncates {topic}-{partition} at offset {truncate_at_offset} and deletes what follows'},
        ),
    },
    'damage_below_recovery_point': {
        "event": 'a restart of {broker} would keep serving the damaged batch at offset {offset} of {topic}-{partition} (below its recovery point {recovery_point})',
    },
    'truncated_tail': {
        "event": '{file} on {broker} ends inside a batch: {bytes_present} of its {declared_size} bytes are there',
    },
    'index_bad_entry': {
        "event": 'an entry of {file} on {broker} points at offset {offset}, which no batch at its position holds',
    },
    'timeindex_bad_entry': {
        "event": 'an entry of {file} on {broker} names offset {offset}, which the log does not hold as it says',
    },
}

#: A finding whose offsets `kforensics export --from-finding` reads (`reports` "export").
_EXPORTED = ("restart_would_truncate",)

PARSER_KINDS = {name: replace(kind, compacted=_COMPACTED_LOG.get(name),
                              reports=("export",) if name in _EXPORTED else (), model="parsers/findings.py",
                              event=_STORY.get(name, {}).get("event"), actions=_STORY.get(name, {}).get("actions", ()))
                for name, kind in PARSER_KINDS.items()}
