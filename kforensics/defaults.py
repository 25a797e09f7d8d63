"""Defaults shared by the commands, the server and the Spark job, each defined once (light: no Spark)."""

from __future__ import annotations

#: Where a scan writes its tables unless told otherwise.
DEFAULT_OUT = "./kforensics-out"
#: How long a transaction may stay open before it is hanging: the broker's default transaction.max.timeout.ms
#: (15 min), the longest timeout a producer may ask for.
DEFAULT_TXN_TIMEOUT_MS = 15 * 60 * 1000
#: How far a client's clock may run ahead of the transaction coordinator's before a batch stamped after the
#: coordinator fenced its epoch is taken for a write after the fence (`--clock-skew`). Under Transactions V2 every
#: end of a transaction bumps the epoch, so a client whose clock runs a few ms ahead stamps its last batches "after"
#: its own PrepareCommit; hosts kept by NTP are within a few ms of each other, 200 ms leaves room for worse.
DEFAULT_CLOCK_SKEW_MS = 200
#: The broker's default transaction.state.log.num.partitions (how many __transaction_state partitions exist).
DEFAULT_TRANSACTION_STATE_PARTITIONS = 50
#: The broker's default offsets.topic.num.partitions (how many __consumer_offsets partitions exist).
DEFAULT_OFFSETS_TOPIC_PARTITIONS = 50
#: The broker's default share.coordinator.state.topic.num.partitions (how many __share_group_state partitions exist).
DEFAULT_SHARE_STATE_PARTITIONS = 50
#: How long a remote segment may stay in COPY_SEGMENT_STARTED or DELETE_SEGMENT_STARTED before its partition's
#: newest __remote_log_metadata event (`--remote-stuck-after`).
DEFAULT_REMOTE_STUCK_AFTER_MS = 60 * 60 * 1000
#: A re-send by a new producer id (`--resend-min-records`): at least this many records, among the earlier producer id's last
#: DEFAULT_RESEND_TAIL, the new one's first write within DEFAULT_RESEND_WINDOW_MS of the earlier one's last (a
#: producer restarted by Kubernetes or a supervisor with back-off comes back after minutes).
DEFAULT_RESEND_MIN_RECORDS = 3
DEFAULT_RESEND_TAIL = 10_000
DEFAULT_RESEND_WINDOW_MS = 15 * 60 * 1000
#: Per-partition timelines `report` draws at most (partitions with findings first).
DEFAULT_MAX_PLOTS = 40
#: Full scans of the `kforensics serve --warm` dirs at start: the JVM compiles a scan's methods over several scans
#: (measured: docs/benchmarks/cli-and-parsers.md).
WARM_FULL_SCANS = 4
#: Up to this many bytes of segments, an input is small: a scan's input is then parsed by the driver itself, a small
#: scan's Spark settings apply, and `find` searches it in its own process; Spark's per-job and per-query overheads,
#: not the data, would make its time.
SMALL_INPUT_BYTES = 64 << 20
