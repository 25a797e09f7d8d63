"""Committed consumer offsets (__consumer_offsets) against the partitions they point into.

The commit the group coordinator applies per group, topic and partition counts: the latest in log order among the
plain commits and the transactional ones whose transaction committed (a tombstone deletes it). A committed offset is
the next offset the group will read: equal to the log end is caught up; above it, the group resets or
skips (offset out of range); below the log start, retention deleted records the group never read;
strictly inside an aborted transaction (after its first offset, up to its marker), a read_uncommitted
consumer processed aborted records. The reference replica of a partition is its longest one.
"""

from __future__ import annotations

from pyspark.sql import DataFrame

from kforensics.spark.checks import run_table
from kforensics.spark.views import run_sql


def consumer_offsets_table(commits: DataFrame, longest: DataFrame, aborted: DataFrame, txns: DataFrame | None = None,
                           remote: DataFrame | None = None, checkpoints: DataFrame | None = None) -> DataFrame:
    """Needs offset_commits, longest_replicas and aborted_ranges, and (optionally) transactions_table, the finished
    remote segments (cluster_id, topic, partition, start_offset) and partition_checkpoints; per group, topic,
    partition: the committed_offset the group coordinator serves (committed_leader_epoch, commit_timestamp), where
    it was read (coordinator_broker, coordinator_partition, coordinator_offset, file, position), producer_id,
    transactional and transaction_outcome of its batch, in_input, log_start_offset (a tiered partition's: in the
    remote tier) and log_end_offset of the partition's longest replica, lag, the aborted range it falls in, and
    status (ok | not_in_input | beyond_log_end | below_log_start | in_aborted_range).

    Commits apply in log order (OffsetMetadataManager.replay, group-coordinator 2d7df031): the applied offset is
    the one of the highest record offset among the non-transactional commits and those whose transaction
    committed, after the partition's last tombstone. A partition without one keeps a row for its newest commit,
    with transaction_outcome OPEN (pending) or ABORT (dropped): never served, not judged."""
    spark = commits.sparkSession
    if txns is None:
        txns = spark.createDataFrame([], "broker string, topic string, partition int, producer_id bigint, "
                                         "first_offset bigint, last_data_offset bigint, outcome string, "
                                         "first_timestamp bigint")
    tables = {"live": run_table("live_commits", offset_commits=commits, longest_replicas=longest, transactions=txns),
              "longest": longest, "aborted": aborted}
    if remote is None:  # no remote tier in the input: the local log start (no join planned for it)
        tiered_ctes, log_start = "", "local_log_start_offset AS log_start_offset"
        tiered_joins = ""
    else:
        if checkpoints is None:
            checkpoints = spark.createDataFrame([], "broker string, topic string, partition int, "
                                                    "log_start_offset bigint")
        tables.update(remote=remote, checkpoints=checkpoints)
        # a tiered partition starts in the remote tier (its finished copies), not at its first local segment; the
        # log-start-offset-checkpoint (the broker's logStartOffset) bounds it from below
        tiered_ctes = """
        tiered AS (
            SELECT cluster_id, topic, partition, min(start_offset) AS remote_log_start_offset FROM {remote}
            GROUP BY cluster_id, topic, partition),"""
        log_start = """CASE WHEN remote_log_start_offset IS NULL THEN local_log_start_offset
                        ELSE least(local_log_start_offset, greatest(remote_log_start_offset,
                                   coalesce(checkpoint_log_start_offset, remote_log_start_offset))) END
                       AS log_start_offset"""
        tiered_joins = """
            LEFT JOIN tiered USING (cluster_id, topic, partition)
            LEFT JOIN (SELECT broker AS data_broker, topic, partition,
                              log_start_offset AS checkpoint_log_start_offset FROM {checkpoints})
                USING (data_broker, topic, partition)"""
    return run_sql(f"""
        WITH latest AS (
            SELECT cluster_id, group_id, commit_topic AS topic, commit_partition AS partition, committed_offset,
                   committed_leader_epoch, commit_timestamp, broker AS coordinator_broker,
                   format_string('%s-%d', topic, partition) AS coordinator_partition, offset AS coordinator_offset,
                   file, position, CASE WHEN transactional THEN producer_id END AS producer_id,
                   coalesce(transactional, false) AS transactional, transaction_outcome
            FROM (
                SELECT *, row_number() OVER (PARTITION BY cluster_id, group_id, commit_topic, commit_partition
                                             ORDER BY coalesce(transaction_outcome, 'COMMIT') = 'COMMIT' DESC,
                                                      offset DESC) AS rank
                FROM {{live}})
            WHERE rank = 1),
        ranges AS (
            SELECT cluster_id, topic, partition, data_broker, first_offset AS aborted_first_offset,
                   last_offset AS aborted_last_offset, producer_id AS aborted_producer_id
            FROM (SELECT * EXCEPT (broker), broker AS data_broker FROM {{aborted}})
            JOIN (SELECT cluster_id, topic, partition, longest_broker AS data_broker FROM {{longest}})
            USING (topic, partition, data_broker)),{tiered_ctes}
        t AS (
            SELECT * EXCEPT (local_log_start_offset{", remote_log_start_offset, checkpoint_log_start_offset"
                                                    if tiered_ctes else ""}),
                   {log_start}
            FROM latest LEFT JOIN (
                SELECT cluster_id, topic, partition, longest_broker AS data_broker,
                       log_start_offset AS local_log_start_offset, log_end_offset FROM {{longest}})
                USING (cluster_id, topic, partition){tiered_joins}),
        inside AS (
            SELECT group_id, cluster_id, topic, partition, min(aborted_first_offset) AS aborted_first_offset,
                   min_by(aborted_last_offset, aborted_first_offset) AS aborted_last_offset,
                   min_by(aborted_producer_id, aborted_first_offset) AS aborted_producer_id
            FROM t JOIN ranges USING (cluster_id, topic, partition, data_broker)
            WHERE committed_offset > aborted_first_offset AND committed_offset <= aborted_last_offset
            GROUP BY group_id, cluster_id, topic, partition)
        SELECT group_id, cluster_id, topic, partition, committed_offset, committed_leader_epoch, commit_timestamp,
               coordinator_broker, coordinator_partition, coordinator_offset, file, position,
               log_end_offset IS NOT NULL AS in_input, data_broker, log_start_offset, log_end_offset,
               log_end_offset - committed_offset AS lag, aborted_first_offset, aborted_last_offset,
               aborted_producer_id,
               CASE WHEN log_end_offset IS NULL THEN 'not_in_input'
                    WHEN committed_offset > log_end_offset THEN 'beyond_log_end'
                    WHEN committed_offset >= 0 AND committed_offset < log_start_offset THEN 'below_log_start'
                    WHEN aborted_first_offset IS NOT NULL THEN 'in_aborted_range' ELSE 'ok' END AS status,
               producer_id, transactional, transaction_outcome
        FROM t LEFT JOIN inside USING (group_id, cluster_id, topic, partition)""", **tables)


