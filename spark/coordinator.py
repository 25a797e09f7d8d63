"""The transaction coordinator (__transaction_state) against the data partitions in the input.

A transactional id's records are grouped into transactions: a transaction is every record up to and
including its CompleteCommit / CompleteAbort (the Empty record of an InitProducerId opens the next one).
The partitions come from the Ongoing / Prepare* records (Complete* records list none).

Markers are matched as the coordinator writes them (the two logs share no offsets): with the producer id and epoch
of the transaction's PrepareCommit / PrepareAbort record, which TransactionMarkerChannelManager sends to every
partition. Under Transactions V2 (KIP-890, ClientTransactionVersion >= 2) that epoch is one above the data's and
unique to the transaction, so the marker is the one of that producer id and epoch; under V1 the epoch stays the
data's across transactions, so the marker is the first of that producer written between the transaction's start
timestamp and the start of the producer's next transaction naming that partition. A transaction completed at a
rotation (epoch exhausted) is the old producer id's: its markers carry the old id at epoch 32767 while its
CompleteCommit already names the next one (see `coordinator_transactions`).
"""

from __future__ import annotations

from pyspark.sql import DataFrame

from kforensics.defaults import DEFAULT_CLOCK_SKEW_MS
from kforensics.spark.findings import finding_columns, findings_sql, fmt_sql, sql_literal
from kforensics.spark.views import run_sql

COMPLETE = ("CompleteCommit", "CompleteAbort")
#: Short.MAX_VALUE: under TV2 the end of a transaction at epoch 32766 (TransactionMetadata.isEpochExhausted) bumps it
#: to this epoch for its markers and rotates the transactional id to NextProducerId at epoch 0
#: (TransactionMetadata.prepareAbortOrCommit / prepareComplete, apache/kafka 38666db4, 2025).
EXHAUSTED_EPOCH = 32767


def coordinator_log(records: DataFrame, longest: DataFrame) -> DataFrame:
    """Needs coordinator_records and longest_replicas; the records of the longest replica of each
    __transaction_state partition (replicas hold the same records), tombstones dropped."""
    return run_sql("""
        SELECT * FROM {records}
        JOIN (SELECT cluster_id, topic, partition, longest_broker AS broker FROM {longest})
        USING (topic, partition, broker)
        WHERE NOT tombstone""", records=records, longest=longest)


_OUTCOME = """CASE WHEN array_contains(states, 'CompleteCommit') THEN 'COMMIT'
                   WHEN array_contains(states, 'CompleteAbort') THEN 'ABORT'
                   WHEN array_contains(states, 'PrepareCommit') THEN 'PREPARE_COMMIT'
                   WHEN array_contains(states, 'PrepareAbort') OR array_contains(states, 'PrepareEpochFence')
                        THEN 'PREPARE_ABORT'
                   WHEN array_contains(states, 'Ongoing') THEN 'ONGOING' ELSE 'NONE' END"""
_COMPLETE = ", ".join(sql_literal(s) for s in COMPLETE)


def coordinator_transactions(log: DataFrame) -> DataFrame:
    """Needs coordinator_log; one row per transaction of a transactional id: transactional_id, producer_id,
    producer_epoch (last), first_producer_epoch, outcome (COMMIT|ABORT|PREPARE_COMMIT|PREPARE_ABORT|ONGOING|
    NONE), states (in order), partitions, transaction_timeout_ms, txn_start_timestamp, completed_at,
    coordinator broker / partition / first and last offset, file and position of the last record,
    transaction_version (the highest ClientTransactionVersion of its records) and marker_producer_id /
    marker_producer_epoch: what its markers carry (the Prepare* record's id and epoch; without one, a TV2
    CompleteCommit at epoch 0 naming another PreviousProducerId was a rotation: that id at epoch 32767; a TV2
    transaction still Ongoing will have its markers at its epoch + 1)."""
    # TransactionMetadata.prepareComplete (apache/kafka 38666db4): under TV2 with a NextProducerId the Complete*
    # record names the new id at epoch 0 and PreviousProducerId the one whose markers were sent
    rotated = (f"coalesce(transaction_version, 0) >= 2 AND last_state IN ({_COMPLETE}) AND producer_epoch = 0 "
               "AND last_previous_producer_id >= 0 AND last_previous_producer_id != producer_id")
    return run_sql(f"""
        SELECT cluster_id, transactional_id, producer_id, producer_epoch, first_producer_epoch,
               {_OUTCOME} AS outcome, states,
               filter(partitions, p -> p != '') AS partitions, transaction_timeout_ms,
               CASE WHEN txn_start_timestamp >= 0 THEN txn_start_timestamp END AS txn_start_timestamp,
               CASE WHEN array_contains(states, 'CompleteCommit') OR array_contains(states, 'CompleteAbort')
                    THEN last_update_timestamp END AS completed_at,
               broker AS coordinator_broker, format_string('%s-%d', topic, partition) AS coordinator_partition,
               coordinator_first_offset, coordinator_last_offset, file, position, txn_seq, transaction_version,
               coalesce(prepare_producer_id, CASE WHEN {rotated} THEN last_previous_producer_id ELSE producer_id END)
                   AS marker_producer_id,
               coalesce(prepare_producer_epoch, CASE WHEN {rotated} THEN {EXHAUSTED_EPOCH}
                                                     WHEN coalesce(transaction_version, 0) >= 2
                                                          AND last_state = 'Ongoing' THEN producer_epoch + 1
                                                     ELSE producer_epoch END) AS marker_producer_epoch
        FROM (
            SELECT broker, cluster_id, topic, partition, transactional_id, txn_seq,
                   max(client_transaction_version) AS transaction_version, max_by(state, offset) AS last_state,
                   max_by(previous_producer_id, offset) AS last_previous_producer_id,
                   max_by(producer_id, CASE WHEN state IN ('PrepareCommit', 'PrepareAbort') THEN offset END)
                       AS prepare_producer_id,
                   max_by(producer_epoch, CASE WHEN state IN ('PrepareCommit', 'PrepareAbort') THEN offset END)
                       AS prepare_producer_epoch,
                   max_by(producer_id, offset) AS producer_id, max_by(producer_epoch, offset) AS producer_epoch,
                   min_by(producer_epoch, offset) AS first_producer_epoch,
                   transform(array_sort(collect_list(struct(offset, state))), r -> r.state) AS states,
                   array_sort(array_distinct(flatten(collect_list(split(coalesce(txn_partitions, ''), ',')))))
                       AS partitions,
                   max_by(transaction_timeout_ms, offset) AS transaction_timeout_ms,
                   max(start_timestamp) AS txn_start_timestamp,
                   max_by(last_update_timestamp, offset) AS last_update_timestamp,
                   min(offset) AS coordinator_first_offset, max(offset) AS coordinator_last_offset,
                   max_by(file, offset) AS file, max_by(position, offset) AS position
            FROM (
                SELECT *, coalesce(sum(CAST(state IN ({_COMPLETE}) AS INT)) OVER (
                           PARTITION BY cluster_id, topic, partition, transactional_id ORDER BY offset
                           ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS txn_seq
                FROM {{log}})
            GROUP BY broker, cluster_id, topic, partition, transactional_id, txn_seq)""", log=log)


def transactional_ids(log: DataFrame) -> DataFrame:
    """Needs coordinator_log; producer_id -> transactional_id and transaction_timeout_ms (the latest record naming
    the producer id as ProducerId, PreviousProducerId or NextProducerId: after a rotation or a compaction the old
    id may be named only there)."""
    return run_sql("""
        SELECT cluster_id, producer_id, max_by(transactional_id, timestamp) AS transactional_id,
               max_by(transaction_timeout_ms, timestamp) AS transaction_timeout_ms
        FROM (SELECT cluster_id, transactional_id, timestamp, transaction_timeout_ms,
                     explode(array_distinct(filter(array(producer_id, previous_producer_id, next_producer_id),
                                                   p -> p >= 0))) AS producer_id
              FROM {log})
        GROUP BY cluster_id, producer_id""", log=log)


_TXN_KEY = "cluster_id, coordinator_partition, transactional_id, txn_seq"


def with_partitions_not_in_input(ctx: DataFrame, present: DataFrame) -> DataFrame:
    """Needs coordinator_transactions and a (topic, partition) table of the data partitions in the input; adds
    partitions_not_in_input (named by the transaction, absent from the input: not judged)."""
    return run_sql(f"""
        WITH names AS (
            SELECT DISTINCT cluster_id, format_string('%s-%d', topic, partition) AS named, true AS here
            FROM {{present}}),
        absent AS (
            SELECT {_TXN_KEY}, array_sort(collect_list(named)) AS partitions_not_in_input
            FROM (SELECT {_TXN_KEY}, explode(partitions) AS named FROM {{ctx}})
            LEFT JOIN names USING (cluster_id, named)
            WHERE here IS NULL
            GROUP BY {_TXN_KEY})
        SELECT * EXCEPT (partitions_not_in_input),
               coalesce(partitions_not_in_input, CAST(array() AS ARRAY<STRING>)) AS partitions_not_in_input
        FROM {{ctx}} LEFT JOIN absent USING ({_TXN_KEY})""", ctx=ctx, present=present)


_NAMED = sql_literal(r"^(.*)-(\d+)$")
_ROW = "broker, topic, partition, transactional_id, txn_seq, coordinator_partition"
# The marker checks as SQL: CTEs over {ctx}, {batches} and {ends}, the last one (`checks`) the marker_checks rows.
_MARKER_CHECKS = f"""
    done AS (
        SELECT * EXCEPT (producer_id, producer_epoch), marker_producer_id AS producer_id,
               marker_producer_epoch AS producer_epoch, coalesce(transaction_version, 0) >= 2 AS tv2,
               explode(partitions) AS named FROM {{ctx}}
        WHERE outcome IN ('COMMIT', 'ABORT') AND txn_start_timestamp IS NOT NULL),
    per_partition AS (
        SELECT *, lead(txn_start_timestamp) OVER (PARTITION BY cluster_id, producer_id, named
                                                  ORDER BY txn_start_timestamp) AS next_start
        FROM (SELECT *, regexp_extract(named, {_NAMED}, 1) AS topic,
                     CAST(regexp_extract(named, {_NAMED}, 2) AS INT) AS partition FROM done)),
    judged AS (
        SELECT * FROM per_partition JOIN (
            SELECT broker, topic, partition, cluster_id, log_end_timestamp, log_start_offset, cleaned_up_to
            FROM {{ends}})
        USING (cluster_id, topic, partition)),
    matched AS (
        -- TV2: the marker at the Prepare record's epoch, the data below it (ProducerAppendInfo: marker epoch > data
        -- epoch); TV1: by time, the epoch staying the data's across transactions
        SELECT *, CASE WHEN tv2 THEN CASE WHEN is_control THEN b_epoch = producer_epoch
                                          ELSE b_epoch < producer_epoch
                                               AND b_epoch >= least(first_producer_epoch, producer_epoch - 1) END
                       ELSE max_timestamp >= txn_start_timestamp AND (next_start IS NULL OR max_timestamp < next_start)
                  END AS hit
        FROM judged LEFT JOIN (
            SELECT broker, topic, partition, producer_id, base_offset, is_control, control_type,
                   producer_epoch AS b_epoch, max_timestamp, file AS b_file, position AS b_position
            FROM {{batches}} WHERE magic = 2 AND is_transactional)
        USING (broker, topic, partition, producer_id)),
    markers AS (
        SELECT {_ROW}, min(base_offset) AS marker_offset, min_by(control_type, base_offset) AS marker_outcome,
               min_by(b_epoch, base_offset) AS marker_epoch, min_by(b_file, base_offset) AS marker_file,
               min_by(b_position, base_offset) AS marker_position
        FROM matched WHERE hit AND is_control GROUP BY {_ROW}),
    data AS (
        SELECT {_ROW}, min(base_offset) AS data_offset, min_by(b_file, base_offset) AS data_file,
               min_by(b_position, base_offset) AS data_position
        FROM matched WHERE hit AND NOT is_control GROUP BY {_ROW}),
    checks AS (
        SELECT * FROM judged LEFT JOIN markers USING ({_ROW}) LEFT JOIN data USING ({_ROW}))"""


def marker_checks(ctx: DataFrame, batches: DataFrame, ends: DataFrame) -> DataFrame:
    """Needs coordinator_transactions, the batches table and replica_ends; per completed transaction and
    replica of each data partition it names: the matching marker (marker_offset, marker_outcome,
    marker_epoch, marker file/position) and the first data batch of the transaction there (data_offset...)."""
    return run_sql(f"WITH {_MARKER_CHECKS} SELECT * FROM checks", ctx=ctx, batches=batches, ends=ends)


def _marker_findings(checks: str) -> str:
    """The marker findings query over the marker_checks rows of the table `checks` (SQL text)."""
    common = {"transactional_id": "transactional_id", "coordinator_partition": "coordinator_partition",
              "coordinator_offset": "coordinator_last_offset", "coordinator_broker": "coordinator_broker",
              "coordinator_outcome": "outcome", "txn_start_timestamp": "txn_start_timestamp",
              "completed_at": "completed_at", "partitions_not_in_input": "partitions_not_in_input",
              "expected_coordinator_partition": "expected_coordinator_partition"}
    missing = finding_columns(
        "marker_missing", file="data_file", position="data_position", offset="data_offset",
        producer_epoch="producer_epoch",
        message=fmt_sql("Transactional id %s (producer %d, epoch %d): the coordinator (%s offset %d) completed this "
                        "transaction with %s at %d, but %s-%d holds no marker of it%s.", "transactional_id",
                        "producer_id", "producer_epoch", "coordinator_partition", "coordinator_last_offset",
                        "outcome", "completed_at", "topic", "partition",
                        "CASE WHEN data_offset IS NOT NULL THEN "
                        + fmt_sql(": its data from offset %d stays open and holds the LSO", "data_offset")
                        + " ELSE '' END"),
        details=common)
    mismatch = finding_columns(
        "outcome_mismatch", file="marker_file", position="marker_position", offset="marker_offset",
        producer_epoch="marker_epoch",
        message=fmt_sql("Transactional id %s (producer %d): the coordinator (%s offset %d) recorded %s, but the "
                        "marker at offset %d of %s-%d is a %s.", "transactional_id", "producer_id",
                        "coordinator_partition", "coordinator_last_offset", "outcome", "marker_offset", "topic",
                        "partition", "marker_outcome"),
        details={**common, "marker_outcome": "marker_outcome", "marker_offset": "marker_offset"})
    return f"""
        SELECT {missing} FROM {checks} WHERE marker_offset IS NULL AND log_end_timestamp >= completed_at
            -- the log cleaner removes a marker past its delete horizon once no batch of its transaction is left
            -- (Cleaner.shouldDiscardBatch with CleanedTransactionMetadata, apache/kafka 08528988): on a compacted
            -- replica a transaction with neither data nor marker there is what cleaning leaves; data left open is not
            AND (data_offset IS NOT NULL OR cleaned_up_to IS NULL)
        UNION ALL
        SELECT {mismatch} FROM {checks} WHERE marker_outcome IS NOT NULL AND marker_outcome != outcome"""


def marker_sql() -> str:
    """The `marker` fragment: reads `{ctx}` (coordinator_transactions with partitions_not_in_input and
    expected_coordinator_partition), `{batches}` (the clustered batches table) and `{ends}` (replica_ends);
    marker_checks, then `marker_missing` and `outcome_mismatch` (as marker_findings)."""
    return f"WITH {_MARKER_CHECKS} {_marker_findings('checks')}"


def marker_findings(checks: DataFrame) -> DataFrame:
    """Needs marker_checks; `marker_missing` (no marker in a replica whose log reaches the completion time)
    and `outcome_mismatch` (the marker says the other outcome)."""
    return findings_sql([_marker_findings("{checks}")], checks=checks)


_TXN_DATA = "magic = 2 AND is_transactional AND NOT is_control AND producer_id >= 0"


def unknown_producer_sql(expected_partitions: int) -> str:
    """The `unknown_producer` fragment: reads `{txns}` (transactions_table with cluster_id: producer_id,
    producer_epoch, outcome, first_offset, batch_count, file, position), `{txn_ids}` (transactional_ids: the producer
    ids the coordinator's records name), `{dirs}` (partition_dirs) and `{brokers}` (the __transaction_state partitions
    in the input, per cluster: a dir is in the input whether its segments hold records or not).

    Only an open transaction matters: __transaction_state is compacted (LogCleaner keeps the newest record of each
    transactional id), so an id's older producer ids (a rotation, transactional.id.expiration.ms, a restart) are
    named by no record, and their marker-closed transactions are what a healthy log holds. A transaction still open
    is named by its id's newest record (Ongoing) as long as the coordinator knows it
    (TransactionStateManager never expires an id with a pending transaction): if none does, no coordinator will
    ever write its marker."""
    expected = int(expected_partitions)
    columns = finding_columns(
        "unknown_producer", severity="CASE WHEN missing = 0 THEN 'error' ELSE 'warning' END", offset="first_offset",
        message=fmt_sql("Producer %d holds a transaction open since offset %d (%d batches), but no __transaction_state "
                        "record in the input names it (%d of its %d partitions in the input): no coordinator will ever "
                        "write its marker, so the last stable offset stays at %d for good.",
                        "producer_id", "first_offset", "batch_count", "size(present)", str(expected), "first_offset"),
        details={"batches": "batch_count", "transaction_state_partitions_present": "present",
                 "transaction_state_partitions_missing": "missing"})
    return f"""
        WITH unknown AS (
            SELECT * FROM (SELECT * FROM {{txns}} WHERE outcome = 'OPEN' AND first_offset IS NOT NULL)
            LEFT ANTI JOIN (SELECT cluster_id, producer_id FROM {{txn_ids}}) USING (cluster_id, producer_id)),
        coverage AS (
            SELECT cluster_id, array_sort(collect_set(partition)) AS present
            FROM (SELECT coalesce(b.cluster_id, '') AS cluster_id, d.partition FROM {{dirs}} d
                  LEFT JOIN (SELECT broker, cluster_id FROM {{brokers}}) b USING (broker)
                  WHERE d.topic = '__transaction_state')
            GROUP BY cluster_id)
        SELECT {columns} FROM (
            SELECT *, greatest(0, {expected} - size(present)) AS missing FROM unknown JOIN coverage USING (cluster_id))"""


def unknown_producers(txns: DataFrame, txn_ids: DataFrame, dirs: DataFrame, brokers: DataFrame,
                      expected_partitions: int) -> DataFrame:
    """Needs transactions_table with cluster_id, transactional_ids, partition_dirs and brokers; `unknown_producer`
    findings: a transaction open at the log end whose producer id no __transaction_state record in the input names,
    judged only where some __transaction_state partition dir is in the input (error when all `expected_partitions`
    are, warning otherwise: the producer's transactional id may hash to a missing one)."""
    return findings_sql([unknown_producer_sql(expected_partitions)], txns=txns, txn_ids=txn_ids, dirs=dirs,
                        brokers=brokers)


def epoch_fenced_write_sql(clock_skew_ms: int = DEFAULT_CLOCK_SKEW_MS) -> str:
    """The `epoch_fenced_write` fragment: reads `{batches}` (the clustered batches table: cluster_id, producer_id,
    producer_epoch, base_offset, base_timestamp, file, position, magic, is_transactional, is_control), `{log}`
    (coordinator_log: cluster_id, producer_id, producer_epoch, last_update_timestamp) and `{txn_ids}`
    (transactional_ids with expected_coordinator_partition).

    The batch's timestamp is the client's clock, the record's the coordinator's: under TV2 every EndTxn bumps the
    epoch (TransactionMetadata.prepareAbortOrCommit), so the last batches of every transaction of a client whose
    clock runs ahead would look written after their own PrepareCommit. A batch counts only when it is more than
    `clock_skew_ms` after the fence; within a partition, log order (`zombie_epoch`) needs no clock."""
    skew = int(clock_skew_ms)
    columns = finding_columns(
        "epoch_fenced_write",
        message=fmt_sql("Transactional id %s (producer %d): %d batches from offset %d were written by epoch %d at %d, "
                        "%d ms after the coordinator fenced it with epoch %d at %d (clock tolerance %d ms).",
                        "coalesce(transactional_id, '?')", "producer_id", "batches", "base_offset", "producer_epoch",
                        "written_at", "written_at - fenced_at", "fencing_epoch", "fenced_at", str(skew)),
        details={"transactional_id": "transactional_id", "fenced_at": "fenced_at", "fencing_epoch": "fencing_epoch",
                 "written_at": "written_at", "batches": "batches",
                 "expected_coordinator_partition": "expected_coordinator_partition",
                 "evidence": "'coordinator_clock'", "clock_skew_ms": str(skew)})
    return f"""
        WITH fenced AS (
            SELECT broker, topic, partition, cluster_id, producer_id, producer_epoch, base_offset, file, position,
                   base_timestamp, min_by(fencing_epoch, since) AS fencing_epoch, min(since) AS fenced_at
            FROM (SELECT * FROM {{batches}} WHERE {_TXN_DATA}) JOIN (
                SELECT cluster_id, producer_id, producer_epoch AS fencing_epoch,
                       min(last_update_timestamp) AS since
                FROM {{log}} GROUP BY cluster_id, producer_id, producer_epoch) USING (cluster_id, producer_id)
            WHERE fencing_epoch > producer_epoch AND base_timestamp > since + {skew}
            GROUP BY broker, topic, partition, cluster_id, producer_id, producer_epoch, base_offset, file, position,
                     base_timestamp),
        firsts AS (
            SELECT broker, topic, partition, cluster_id, producer_id, producer_epoch,
                   min(base_offset) AS base_offset, min_by(file, base_offset) AS file,
                   min_by(position, base_offset) AS position, min_by(fenced_at, base_offset) AS fenced_at,
                   min_by(fencing_epoch, base_offset) AS fencing_epoch,
                   min_by(base_timestamp, base_offset) AS written_at, count(1) AS batches
            FROM fenced GROUP BY broker, topic, partition, cluster_id, producer_id, producer_epoch)
        SELECT {columns} FROM firsts LEFT JOIN {{txn_ids}} USING (cluster_id, producer_id)"""


def epoch_fenced_writes(batches: DataFrame, log: DataFrame, txn_ids: DataFrame,
                        clock_skew_ms: int = DEFAULT_CLOCK_SKEW_MS) -> DataFrame:
    """Needs the batches table, coordinator_log and transactional_ids; `epoch_fenced_write` findings: a
    transactional batch created more than `clock_skew_ms` after the coordinator recorded a higher epoch for its
    producer id (first batch per partition, producer and epoch)."""
    return findings_sql([epoch_fenced_write_sql(clock_skew_ms)], batches=batches, log=log, txn_ids=txn_ids)


def coordinator_fragments(expected_partitions: int, clock_skew_ms: int = DEFAULT_CLOCK_SKEW_MS) -> list[str]:
    """The fragments of the marker, unknown_producer and epoch_fenced_write checks, over {ctx}
    (coordinator_transactions, as marker_sql reads it), {batches} (with cluster_id), {ends} (replica_ends), {log}
    (coordinator_log), {txn_ids} (transactional_ids), {txns} (transactions_table with cluster_id), {dirs}
    (partition_dirs) and {brokers}."""
    return [marker_sql(), unknown_producer_sql(expected_partitions), epoch_fenced_write_sql(clock_skew_ms)]
