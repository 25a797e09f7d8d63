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
from pyspark.sql import functions as F

from kforensics.spark.findings import KEY, finding_columns, findings_sql, fmt_sql, sql_literal
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


def _pick(name: str) -> str:
    """SQL: the `name` fact of the replica whose history was replaced (b when its leader epoch at the divergence is
    the lower, else a)."""
    return f"CASE WHEN b_epoch < a_epoch THEN b_{name} ELSE a_{name} END"


def _at_offset_sql(side: str) -> str:
    """SQL over {batches} and {div}: each replica's first batch reaching the divergence offset: its leader epoch,
    file and position."""
    return f"""
      SELECT cluster_id, topic, partition, a_broker, b_broker,
             min_by(partition_leader_epoch, base_offset) AS {side}_epoch, min_by(file, base_offset) AS {side}_file,
             min_by(position, base_offset) AS {side}_position
      FROM (SELECT * FROM {{batches}} WHERE crc_valid)
           JOIN (SELECT cluster_id, topic, partition, a_broker, b_broker, `offset`, {side}_broker AS broker FROM {{div}})
           USING (cluster_id, topic, partition, broker)
      WHERE last_offset >= `offset`
      GROUP BY cluster_id, topic, partition, a_broker, b_broker"""


def _replica_facts_sql(side: str) -> str:
    return f"""
      SELECT cluster_id, topic, partition, broker AS {side}_broker, log_end_offset AS {side}_log_end_offset,
             high_watermark AS {side}_high_watermark, leader_epoch_checkpoint AS {side}_leader_epoch_checkpoint
      FROM {{ends}}"""


def divergence_facts_sql() -> str:
    """Reads {batches}, {ends} (replica_ends) and {div} (divergences); the query of `divergence_facts` (one SELECT,
    no WITH clause: it can stand as a subquery or a CTE of a fragment)."""
    pair = "cluster_id, topic, partition, a_broker, b_broker"
    a_lost, b_lost = "a_epoch < b_epoch", "b_epoch < a_epoch"
    # lost_last: an unknown high watermark (no replication-offset-checkpoint, kafka-dump-log text, or no loser within
    # one epoch) commits nothing: least() would skip the null and claim the whole tail committed
    return f"""
    SELECT *, CASE WHEN lost_last >= `offset` THEN array(`offset`, lost_last) END AS lost_offsets
    FROM (
      SELECT *, CASE WHEN loser_hw IS NOT NULL THEN least(loser_hw, loser_leo) - 1 END AS lost_last
      FROM (
        SELECT *, {_pick("broker")} AS broker,
               CASE WHEN {a_lost} THEN b_broker WHEN {b_lost} THEN a_broker END AS winner,
               CASE WHEN {a_lost} OR {b_lost} THEN {_pick("high_watermark")} END AS loser_hw,
               {_pick("log_end_offset")} AS loser_leo
        FROM {{div}}
             LEFT JOIN ({_at_offset_sql("a")}) USING ({pair})
             LEFT JOIN ({_at_offset_sql("b")}) USING ({pair})
             LEFT JOIN ({_replica_facts_sql("a")}) USING (cluster_id, topic, partition, a_broker)
             LEFT JOIN ({_replica_facts_sql("b")}) USING (cluster_id, topic, partition, b_broker)))"""


def divergence_facts(batches: DataFrame, ends: DataFrame, div: DataFrame) -> DataFrame:
    """Needs the batches table, replica_ends and divergences; per pair: both replicas' leader epochs at the
    divergence (a_epoch, b_epoch), file, position and ends, `broker` (the replica whose history was replaced, or
    a_broker), `winner`, `loser_hw`, `lost_last` and `lost_offsets` ([first, last] committed offsets lost, null
    when none or unknown)."""
    return run_sql(divergence_facts_sql(), batches=batches, ends=ends, div=div)


ELECTIONS_TYPE = "ARRAY<STRUCT<leader_epoch: INT, leader: INT, election: STRING, elected_at: BIGINT>>"


def replica_divergence_sql(with_elections: bool) -> str:
    """Reads {batches}, {ends} (replica_ends), {div} (divergences) and, `with_elections`, {elections}
    (control_plane.elections_of); the `replica_divergence` fragment: one finding per pair (divergence_facts_sql)."""
    pair = "cluster_id, topic, partition, a_broker, b_broker"
    if with_elections:
        replaced = f"""
    involved AS (
      SELECT {pair}, array_sort(collect_list(named_struct('leader_epoch', leader_epoch, 'leader', leader,
                                                          'election', election, 'elected_at', elected_at)))
               AS elections
      FROM (SELECT {pair}, a_epoch, b_epoch FROM facts) JOIN {{elections}} USING (cluster_id, topic, partition)
      WHERE leader_epoch > least(a_epoch, b_epoch) AND leader_epoch <= greatest(a_epoch, b_epoch)
      GROUP BY {pair}),
    replaced AS (SELECT * FROM facts LEFT JOIN involved USING ({pair}))"""
    else:
        replaced = f"""
    replaced AS (SELECT *, CAST(NULL AS {ELECTIONS_TYPE}) AS elections FROM facts)"""
    epochs = "greatest(a_epoch, b_epoch)", "least(a_epoch, b_epoch)"
    story = f"""CASE
        WHEN lost_offsets IS NOT NULL THEN {fmt_sql(
            " %s's leader epoch %d history replaced %s's epoch %d: offsets %d-%d were committed on %s (high watermark "
            "%d) and are lost.", "winner", epochs[0], "broker", epochs[1], "`offset`", "lost_last", "broker",
            "loser_hw")}
        WHEN winner IS NOT NULL AND loser_hw IS NULL THEN {fmt_sql(
            " %s's leader epoch %d history replaced %s's from there; whether those offsets were committed is unknown "
            "(no high watermark for %s in the input).", "winner", epochs[0], "broker", "broker")}
        WHEN winner IS NOT NULL THEN {fmt_sql(
            " %s's leader epoch %d history replaced %s's uncommitted tail (high watermark %s).", "winner", epochs[0],
            "broker", "coalesce(CAST(loser_hw AS STRING), 'unknown')")}
        ELSE {sql_literal(" Both carry the same leader epoch there: not an election, the bytes differ.")} END"""
    message = "concat({}, {})".format(
        fmt_sql("%s and %s hold different batches of %s-%d from offset %d (common prefix ends at %d).", "a_broker",
                "b_broker", "topic", "partition", "`offset`", "common_prefix_end_offset"), story)

    def replica(side: str) -> str:
        return (f"named_struct('broker', {side}_broker, 'leader_epoch_at_offset', {side}_epoch, "
                f"'log_end_offset', {side}_log_end_offset, 'high_watermark', {side}_high_watermark, "
                f"'leader_epoch_checkpoint', {side}_leader_epoch_checkpoint)")

    return f"""
    WITH facts AS ({divergence_facts_sql()}),{replaced}
    SELECT {finding_columns(
        "replica_divergence", severity="CASE WHEN lost_offsets IS NOT NULL THEN 'error' ELSE 'warning' END",
        file=_pick("file"), position=_pick("position"), offset="`offset`", producer_id=None, producer_epoch=None,
        message=message,
        details={"offset": "`offset`", "common_prefix_end_offset": "common_prefix_end_offset",
                 "brokers": "array(a_broker, b_broker)", "lost_offsets": "lost_offsets",
                 "lost_on": "CASE WHEN lost_offsets IS NOT NULL THEN broker END", "winner": "winner",
                 "replicas": f"array({replica('a')}, {replica('b')})", "elections": "elections"})}
    FROM replaced"""


def replica_divergence_findings(batches: DataFrame, ends: DataFrame, div: DataFrame,
                                elections: DataFrame | None = None) -> DataFrame:
    """Needs the batches table, replica_ends and divergences; `replica_divergence` findings, one per pair,
    on the replica whose history was replaced (error when it had committed the lost offsets). With `elections`
    (control_plane.elections_of: cluster_id, topic, partition, leader_epoch, leader, election, elected_at, from
    the KRaft metadata log) each carries `elections`: the leader changes of the epochs involved (above the lower of
    the two replicas' epochs at the divergence, up to the higher)."""
    tables = {"batches": batches, "ends": ends, "div": div}
    if elections is not None:
        tables["elections"] = elections
    return findings_sql([replica_divergence_sql(elections is not None)], **tables)


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


#: SQL over the brokers table: a log dir's node (cluster.id and node.id of its meta.properties), null when unknown.
_NODE_OF_BROKER = ("CASE WHEN node_id IS NOT NULL THEN concat_ws('/', coalesce(cluster_id, ''), CAST(node_id AS STRING)) "
                   "END")
#: SQL: `node` (of _NODE_OF_BROKER), or the input label where it is unknown.
_NODE_OR_LABEL = "coalesce(node, concat('label/', broker))"


def with_node(df: DataFrame, brokers: DataFrame) -> DataFrame:
    """Needs `broker` and the brokers table; adds `node`: the broker a log dir belongs to (cluster.id and node.id of
    its meta.properties), or its input label where those are unknown. A broker with several log dirs (given as
    several inputs) is one node."""
    ids = brokers.select("broker", F.expr(_NODE_OF_BROKER).alias("node"))
    return df.join(ids, "broker", "left").withColumn("node", F.expr(_NODE_OR_LABEL))


def future_replica_divergence_sql() -> str:
    """Reads {batches} (with dir_state) and {brokers}; the `future_replica_divergence` fragment: per -future dir, its
    first batch within the live log's offsets that the same node's live dir (`with_node`) does not hold
    identically."""
    node_key = "node, topic, partition"
    same = " AND ".join(f"{c} <=> live_{c}" for c in FINGERPRINT)
    message = fmt_sql(
        "the -future copy of %s-%d on %s holds a batch at offset %d that the live replica (%s) does not hold "
        "identically (live CRC %s, future CRC %d): the copy being moved between log dirs differs from the log it is "
        "copied from", "topic", "partition", "broker", "base_offset", "live_broker",
        "coalesce(CAST(live_crc AS STRING), 'none')", "crc")
    return f"""
    WITH valid AS (
      SELECT * EXCEPT (node), {_NODE_OR_LABEL} AS node
      FROM (SELECT * FROM {{batches}} WHERE crc_valid)
           LEFT JOIN (SELECT broker, {_NODE_OF_BROKER} AS node FROM {{brokers}}) USING (broker)),
    live AS (SELECT * FROM valid WHERE dir_state = 'live'),
    bounds AS (
      SELECT {node_key}, min(base_offset) AS live_log_start_offset, max(last_offset) + 1 AS live_log_end_offset,
             min(broker) AS live_broker
      FROM live GROUP BY {node_key}),
    future AS (
      SELECT * FROM (SELECT * FROM valid WHERE dir_state = 'future') JOIN bounds USING ({node_key})
      WHERE base_offset >= live_log_start_offset AND base_offset < live_log_end_offset),
    joined AS (
      SELECT * FROM future
           LEFT JOIN (SELECT {node_key}, base_offset, {", ".join(f"{c} AS live_{c}" for c in FINGERPRINT)} FROM live)
           USING ({node_key}, base_offset)),
    first_differing AS (
      SELECT * FROM (
        SELECT *, row_number() OVER (PARTITION BY broker, topic, partition,
                                                  regexp_extract(file, {sql_literal(r"^(.*)/[^/]*$")}, 1)
                                     ORDER BY base_offset) AS n
        FROM joined WHERE NOT ({same}))
      WHERE n = 1)
    SELECT {finding_columns("future_replica_divergence", message=message, offset="base_offset", details={
        "live_log_start_offset": "live_log_start_offset", "live_log_end_offset": "live_log_end_offset",
        "future_crc": "crc", "live_crc": "live_crc", "live_broker": "live_broker"})}
    FROM first_differing"""


def future_replica_divergences(batches: DataFrame, brokers: DataFrame) -> DataFrame:
    """Needs the batches table with dir_state and the brokers table; `future_replica_divergence` findings: a -future
    dir (the copy a broker builds while it moves a replica to another of its log dirs, fetched from the live log)
    holding a batch, within the live log's offsets, that the live dir does not hold identically. The live dir is the
    same broker's (`with_node`): Kafka keeps the two in different log dirs, which are different inputs. One finding
    per future dir, at its first such batch. A future copy that is only shorter is still catching up: no
    finding."""
    return findings_sql([future_replica_divergence_sql()], batches=batches, brokers=brokers)
