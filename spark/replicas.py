"""Replicas of one topic-partition on several brokers, compared batch by batch from headers only.

Two replicas agree on a batch when base offset, last offset, CRC, producer id/epoch, base sequence and
partition leader epoch are equal (a follower copies the leader's bytes). They are compared from the
later of their log starts and cleaner checkpoints (compaction runs on each broker on its own) up to the
shorter log end: a replica that is only shorter is lagging, not diverged. At the first differing batch,
the replica whose leader epoch there is higher holds the history that won the election; the other's
offsets from there up to its high watermark were committed and are lost.
"""

from __future__ import annotations

from pyspark.sql import DataFrame

from kforensics.spark.checks import run_table
from kforensics.spark.findings import KEY
from kforensics.spark.views import run_sql

#: A topic-partition of one cluster (a broker's meta.properties cluster.id; "" when unknown).
TP = ["cluster_id", "topic", "partition"]
FINGERPRINT = ["last_offset", "crc", "producer_id", "producer_epoch", "base_sequence", "partition_leader_epoch"]


#: SQL: a partition of one broker, as KEY, and a topic-partition of one cluster, as TP.
_KEY = ", ".join(KEY)
_TP = ", ".join(TP)
#: SQL: a pair of replicas of a topic-partition (a_broker < b_broker).
_PAIR = f"{_TP}, a_broker, b_broker"


def with_cluster_id_sql(rows: str, also: tuple[str, ...] = ()) -> str:
    """SQL over {brokers}: `rows` (a table name or a parenthesised query, with `broker`) as `with_cluster_id`
    returns it: broker, the other columns of `rows`, cluster_id, then the brokers table's columns named in `also`."""
    also_cols = "".join(f", `{c}`" for c in also)
    picked = "".join(f", brokers_.`{c}`" for c in also)
    return f"""
      SELECT /*+ BROADCAST(brokers_) */ broker, rows_.* EXCEPT (broker),
             coalesce(brokers_.cluster_id, '') AS cluster_id{picked}
      FROM {rows} rows_ LEFT JOIN (SELECT broker, cluster_id{also_cols} FROM {{brokers}}) brokers_ USING (broker)"""


def with_cluster_id(df: DataFrame, brokers: DataFrame, *also: str) -> DataFrame:
    """Needs `broker` and the brokers table; adds cluster_id ("" when the broker's meta.properties has none), and
    the brokers table's columns named in `also` (node_id)."""
    return run_sql(with_cluster_id_sql("{rows}", also), rows=df, brokers=brokers)


def replica_ends(ends: DataFrame, brokers: DataFrame, epochs: DataFrame) -> DataFrame:
    """Needs partition_ends, the brokers and leader_epochs tables; per partition and broker: cluster_id,
    log_start_offset, log_end_offset, high_watermark, cleaned_up_to (the cleaner-offset-checkpoint entry, null when
    none), cleaner_offset (0 when none), latest_leader_epoch, leader_epoch_checkpoint
    ("epoch@start_offset, ..."), log_end_timestamp and replica_count (brokers of the cluster holding it)."""
    return run_sql(f"""
    WITH lineage AS (
      SELECT {_KEY},
             concat_ws(', ', transform(array_sort(collect_list(struct(start_offset, epoch))),
                                       e -> format_string('%d@%d', e.epoch, e.start_offset)))
               AS leader_epoch_checkpoint
      FROM {{epochs}} GROUP BY {_KEY})
    SELECT {_KEY}, cluster_id,
           greatest(log_first_offset, coalesce(log_start_offset, log_first_offset)) AS log_start_offset,
           log_end_offset, high_watermark, cleaner_offset AS cleaned_up_to,
           coalesce(cleaner_offset, 0) AS cleaner_offset, latest_leader_epoch,
           leader_epoch_checkpoint, log_end_timestamp, count(1) OVER (PARTITION BY {_TP}) AS replica_count
    FROM ({with_cluster_id_sql("{ends}")}) LEFT JOIN lineage USING ({_KEY})""",
    ends=ends, brokers=brokers, epochs=epochs)


def _longest_sql() -> str:
    """SQL over {ends} (replica_ends): the query of `longest_replicas`."""
    return f"""
      SELECT {_TP}, broker AS longest_broker, log_start_offset, log_end_offset, log_end_timestamp
      FROM (SELECT *, row_number() OVER (PARTITION BY {_TP}
                                         ORDER BY log_end_offset DESC, latest_leader_epoch DESC NULLS LAST, broker)
                        AS rank_
            FROM {{ends}})
      WHERE rank_ = 1"""


def longest_replicas(ends: DataFrame) -> DataFrame:
    """Needs replica_ends; per topic-partition the broker with the furthest log end (ties: the higher leader
    epoch, then the broker label) as `longest_broker`, with its log_start_offset and log_end_offset."""
    return run_sql(_longest_sql(), ends=ends)


def _side_sql(side: str) -> str:
    """SQL over {batches} and divergences' CTEs `multi` and `pairs`: the `side` ("a" or "b") replica's sound batches
    within the offsets compared of each of its pairs (lo to hi), its facts as `side`_last_offset, ...; the pair's
    other broker beside them."""
    facts = ", ".join(f"{c} AS {side}_{c}" for c in [*FINGERPRINT, "file", "position"])
    return f"""
      SELECT /*+ BROADCAST(pairs_) */ * EXCEPT (lo, hi)
      FROM (SELECT {_TP}, broker AS {side}_broker, base_offset, {facts}
            FROM (SELECT * FROM {{batches}} WHERE crc_valid) JOIN (SELECT {_KEY} FROM multi) USING ({_KEY}))
           JOIN pairs pairs_ USING ({_TP}, {side}_broker)
      WHERE base_offset >= lo AND base_offset < hi"""


def divergences(batches: DataFrame, ends: DataFrame) -> DataFrame:
    """Needs the batches table and replica_ends; one row per pair of replicas (a_broker < b_broker) that hold
    different batches: offset (first differing batch), common_prefix_end_offset, and both replicas' facts."""
    same = " AND ".join(f"a_{c} <=> b_{c}" for c in FINGERPRINT)
    # One pass per pair in offset order: the first differing batch, and the end of the matching prefix before it.
    return run_sql(f"""
    WITH multi AS (SELECT * FROM {{ends}} WHERE replica_count > 1),
    pairs AS (
      SELECT {_TP}, a_broker, b_broker,
             greatest(a_log_start_offset, b_log_start_offset, a_cleaner_offset, b_cleaner_offset) AS lo,
             least(a_log_end_offset, b_log_end_offset) AS hi
      FROM (SELECT {_TP}, broker AS a_broker, log_start_offset AS a_log_start_offset,
                   log_end_offset AS a_log_end_offset, cleaner_offset AS a_cleaner_offset FROM multi)
           JOIN (SELECT {_TP}, broker AS b_broker, log_start_offset AS b_log_start_offset,
                        log_end_offset AS b_log_end_offset, cleaner_offset AS b_cleaner_offset FROM multi)
           USING ({_TP})
      WHERE a_broker < b_broker),
    marked AS (
      SELECT *, sum(differs) OVER (PARTITION BY {_PAIR} ORDER BY base_offset
                                   ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS seen
      FROM (SELECT *, CAST(NOT ({same}) AS INT) AS differs
            FROM ({_side_sql("a")}) FULL OUTER JOIN ({_side_sql("b")}) USING ({_PAIR}, base_offset)))
    SELECT /*+ BROADCAST(pairs_) */ {_PAIR}, `offset`,
           coalesce(common_prefix_end_offset, lo) AS common_prefix_end_offset
    FROM (SELECT {_PAIR}, min(CASE WHEN differs = 1 THEN base_offset END) AS `offset`,
                 max(CASE WHEN seen = 0 THEN a_last_offset + 1 END) AS common_prefix_end_offset
          FROM marked GROUP BY {_PAIR})
         JOIN (SELECT {_PAIR}, lo FROM pairs) pairs_ USING ({_PAIR})
    WHERE `offset` IS NOT NULL""", batches=batches, ends=ends)


def divergence_facts(batches: DataFrame, ends: DataFrame, div: DataFrame) -> DataFrame:
    """Needs the batches table, replica_ends and divergences; per pair: both replicas' leader epochs at the
    divergence (a_epoch, b_epoch), file, position and ends, `broker` (the replica whose history was replaced, or
    a_broker), `winner`, `loser_hw`, `lost_last` and `lost_offsets` ([first, last] committed offsets lost, null
    when none or unknown)."""
    return run_table("divergence_facts", clustered_batches=batches, replica_ends=ends, divergences=div)


#: SQL over {applied} (control_plane.applied_records): per cluster_id and topic, its cleanup.policy as the
#: metadata log leaves it: the latest ConfigRecord since the topic's latest TopicRecord (ConfigurationControlManager
#: drops a deleted topic's configs; a null value is a deleted config, the broker's default then).
_POLICY_SQL = """
      SELECT cluster_id, topic, max_by(config_value, struct(metadata_offset, record_index)) AS cleanup_policy
      FROM (SELECT *, max(CASE WHEN record_type = 'TOPIC_RECORD' THEN metadata_offset END)
                        OVER (PARTITION BY cluster_id, topic) AS created_offset
            FROM {applied} WHERE record_type IN ('TOPIC_RECORD', 'CONFIG_RECORD'))
      WHERE record_type = 'CONFIG_RECORD' AND metadata_offset >= coalesce(created_offset, metadata_offset)
      GROUP BY cluster_id, topic"""


def replicas_table(ends: DataFrame, div: DataFrame, applied: DataFrame | None = None) -> DataFrame:
    """Needs replica_ends and divergences, and the KRaft metadata log's applied_records where there is one; per
    partition and broker: log_start_offset, log_end_offset, high_watermark, latest_leader_epoch,
    leader_epoch_checkpoint, replica_count, longest_broker, lag (offsets behind the longest replica, null when
    diverged), diverged_at (first offset differing from the longest replica), in_sync (a prefix of the longest
    replica and as long), compacted (the topic's cleanup.policy in the metadata log names `compact`; without one,
    the partition has a cleaner-offset-checkpoint entry) and cleaned_up_to (that entry: the log cleaner has
    compacted the offsets below it)."""
    policy = (f"LEFT JOIN ({_POLICY_SQL}) USING (cluster_id, topic)" if applied is not None
              else "LEFT JOIN (SELECT CAST(NULL AS STRING) AS cleanup_policy) ON true")
    # each divergence seen from both replicas: `broker` diverged from `longest_broker` at `diverged_at`
    return run_sql(f"""
    WITH vs AS (
      SELECT {_TP}, a_broker AS broker, b_broker AS longest_broker, `offset` AS diverged_at FROM {{div}}
      UNION ALL
      SELECT {_TP}, b_broker AS broker, a_broker AS longest_broker, `offset` AS diverged_at FROM {{div}})
    SELECT {_KEY}, cluster_id, log_start_offset, log_end_offset, high_watermark,
           latest_leader_epoch, leader_epoch_checkpoint, replica_count, longest_broker,
           CASE WHEN diverged_at IS NULL THEN longest_log_end_offset - log_end_offset END AS lag, diverged_at,
           diverged_at IS NULL AND log_end_offset = longest_log_end_offset AS in_sync,
           CASE WHEN cleanup_policy IS NOT NULL THEN exists(split(cleanup_policy, ','), p -> trim(p) = 'compact')
                ELSE cleaned_up_to IS NOT NULL END AS compacted,
           cleaned_up_to
    FROM {{ends}}
         JOIN (SELECT {_TP}, longest_broker, log_end_offset AS longest_log_end_offset FROM ({_longest_sql()}))
         USING ({_TP})
         LEFT JOIN vs USING ({_TP}, broker, longest_broker)
         {policy}""", ends=ends, div=div, **({"applied": applied} if applied is not None else {}))


def leader_epoch_lineage(batches: DataFrame, epochs: DataFrame) -> DataFrame:
    """Needs the batches and leader_epochs tables; per partition, broker and leader epoch:
    checkpoint_start_offset (leader-epoch-checkpoint), batch_start_offset (first batch carrying the epoch) and
    agrees (both present and equal; an epoch with no batches, as after an election with no writes, is null)."""
    return run_sql(f"""
    SELECT {_KEY}, epoch, checkpoint_start_offset, batch_start_offset,
           CASE WHEN batch_start_offset IS NULL THEN CAST(NULL AS BOOLEAN)
                ELSE checkpoint_start_offset <=> batch_start_offset END AS agrees
    FROM (SELECT {_KEY}, epoch, start_offset AS checkpoint_start_offset FROM {{epochs}})
         FULL OUTER JOIN (SELECT {_KEY}, partition_leader_epoch AS epoch,
                                 min(base_offset) AS batch_start_offset
                          FROM {{batches}} WHERE magic = 2 AND crc_valid
                          GROUP BY {_KEY}, partition_leader_epoch)
         USING ({_KEY}, epoch)""", batches=batches, epochs=epochs)


def special_dir_replicas(segments: DataFrame, brokers: DataFrame) -> DataFrame:
    """Needs the segments table with dir_state and the brokers table; one row per -delete, -future or -stray
    partition dir, with the replicas table's columns: its log_start_offset and log_end_offset from its segments,
    nothing compared (they are not replicas of the live dir)."""
    special = f"""(
      SELECT {_KEY}, dir_state, min(first_batch_base_offset) AS log_start_offset,
             max(last_offset) + 1 AS log_end_offset
      FROM {{segments}} WHERE dir_state != 'live' GROUP BY {_KEY}, dir_state)"""
    return run_sql(f"""
    SELECT {_KEY}, cluster_id, log_start_offset, log_end_offset,
           CAST(NULL AS BIGINT) AS high_watermark, CAST(NULL AS INT) AS latest_leader_epoch,
           CAST(NULL AS STRING) AS leader_epoch_checkpoint, CAST(NULL AS BIGINT) AS replica_count,
           CAST(NULL AS STRING) AS longest_broker, CAST(NULL AS BIGINT) AS lag, CAST(NULL AS BIGINT) AS diverged_at,
           CAST(NULL AS BOOLEAN) AS in_sync, CAST(NULL AS BOOLEAN) AS compacted, CAST(NULL AS BIGINT) AS cleaned_up_to,
           dir_state
    FROM ({with_cluster_id_sql(special)})""", segments=segments, brokers=brokers)


