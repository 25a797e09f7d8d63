/*
[table]
doc = """Per share partition (group, topic, partition) with state at the end of the input, replayed from
`__share_group_state` as the share coordinator replays its log (ShareCoordinatorShard.replay, handleShareSnapshot,
handleShareUpdate, merge: apache/kafka 35098fcf; PersisterStateBatchCombiner at 1eb76443): a ShareSnapshot is the
whole state, a ShareUpdate merges into it (its start offset and leader epoch replace the state's unless -1, its
batches are combined with the state's: batches ending below the start offset are dropped and one straddling it is cut
there; where batches overlap the one with the higher delivery count wins, at equal counts the higher delivery state;
adjacent batches of the same state and count are one); a tombstone removes the state. One row per batch of its
state (one row with null batch columns when it holds none), and its latest record."""
output = true
keep = true
applies = "has_share_state_records"
columns = [
    ["cluster_id", "string", "the cluster.id of the broker's meta.properties (empty when unknown)"],
    ["group", "string", "the share group"],
    ["topic", "string", "the topic"],
    ["topic_id", "string", "the topic's id (SharePartitionKey)"],
    ["partition", "int", "the partition"],
    ["snapshot_epoch", "int", "its ShareSnapshot's epoch"],
    ["state_epoch", "int", "the state epoch"],
    ["leader_epoch", "int", "the share partition leader's epoch"],
    ["start_offset", "bigint", "the share partition's start offset"],
    ["first_offset", "bigint", "a state batch's first offset"],
    ["last_offset", "bigint", "its last offset"],
    ["delivery_state", "string", "`AVAILABLE`, `ACQUIRED`, `ACKNOWLEDGED`, `ARCHIVING`, `ARCHIVED`"],
    ["delivery_count", "int", "its delivery count"],
    ["coordinator_broker", "string", "the input whose `__share_group_state` replica was replayed"],
    ["coordinator_partition", "string", "`__share_group_state-<n>`"],
    ["coordinator_offset", "bigint", "the state's latest record's offset"],
    ["timestamp", "bigint", "its timestamp"],
    ["file", "string", "the file it was read from"],
    ["position", "bigint", "the state's latest record"],
]
*/
WITH names AS (SELECT * FROM topic_names),
ev AS (SELECT * FROM share_events),
kept AS (
    -- the last life of each key, from its last snapshot on (a key whose last record is a tombstone has none)
    SELECT * FROM (
        SELECT *, max(life) OVER (PARTITION BY cluster_id, coordinator_partition, group_id, topic_id, share_partition) AS last_life,
               max(CASE WHEN record_type = 'share_snapshot' AND NOT tombstone THEN offset END)
                   OVER (PARTITION BY cluster_id, coordinator_partition, group_id, topic_id, share_partition, life) AS base_
        FROM ev)
    WHERE life = last_life AND NOT tombstone AND offset >= coalesce(base_, -1)),
carried AS (
    SELECT *,
           coalesce(last(CASE WHEN start_offset <> -1 THEN start_offset END, true) OVER upto, -1) AS start_now,
           coalesce(last(CASE WHEN leader_epoch <> -1 THEN leader_epoch END, true) OVER upto, -1)
               AS leader_now,
           last(state_epoch, true) OVER upto AS state_epoch_now,
           row_number() OVER (PARTITION BY cluster_id, coordinator_partition, group_id, topic_id, share_partition ORDER BY offset DESC) AS from_end
    FROM kept WINDOW upto AS (PARTITION BY cluster_id, coordinator_partition, group_id, topic_id, share_partition ORDER BY offset
                              ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)),
pruned AS (
    -- each record's batches cut at the start offset of every merge from it on
    SELECT *, max(start_now) OVER (PARTITION BY cluster_id, coordinator_partition, group_id, topic_id, share_partition ORDER BY offset
                                   ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS cut_
    FROM carried),
batches AS (
    SELECT cluster_id, coordinator_partition, group_id, topic_id, share_partition, greatest(b.first_offset, cut_) AS first_offset, b.last_offset, b.delivery_state,
           b.delivery_count
    FROM pruned LATERAL VIEW explode(state_batches) t_ AS b
    WHERE b.last_offset >= cut_ AND b.first_offset <= b.last_offset),
edges AS (
    SELECT cluster_id, coordinator_partition, group_id, topic_id, share_partition, lo, lead(lo) OVER (PARTITION BY cluster_id, coordinator_partition, group_id, topic_id, share_partition ORDER BY lo) - 1 AS hi
    FROM (SELECT DISTINCT cluster_id, coordinator_partition, group_id, topic_id, share_partition, first_offset AS lo FROM batches
          UNION SELECT DISTINCT cluster_id, coordinator_partition, group_id, topic_id, share_partition, last_offset + 1 AS lo FROM batches)),
pieces AS (
    -- the batch that wins each stretch between two batch edges: the higher delivery count, then state
    SELECT e.cluster_id, e.coordinator_partition, e.group_id, e.topic_id, e.share_partition, e.lo, e.hi,
           max(named_struct('count', b.delivery_count, 'state', b.delivery_state)) AS w
    FROM edges e JOIN batches b
      ON b.cluster_id = e.cluster_id AND b.coordinator_partition = e.coordinator_partition
     AND b.group_id = e.group_id AND b.topic_id = e.topic_id AND b.share_partition = e.share_partition
     AND b.first_offset <= e.lo AND e.hi <= b.last_offset
    WHERE e.hi IS NOT NULL
    GROUP BY e.cluster_id, e.coordinator_partition, e.group_id, e.topic_id, e.share_partition, e.lo, e.hi),
runs AS (
    SELECT cluster_id, coordinator_partition, group_id, topic_id, share_partition, min(lo) AS first_offset, max(hi) AS last_offset, w.state AS delivery_state,
           w.count AS delivery_count
    FROM (SELECT *, sum(new_run) OVER (PARTITION BY cluster_id, coordinator_partition, group_id, topic_id, share_partition ORDER BY lo
                                       ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS run
          FROM (SELECT *, CASE WHEN lag(hi) OVER k + 1 = lo AND lag(w.state) OVER k = w.state
                                    AND lag(w.count) OVER k = w.count THEN 0 ELSE 1 END AS new_run
                FROM pieces WINDOW k AS (PARTITION BY cluster_id, coordinator_partition, group_id, topic_id, share_partition ORDER BY lo)))
    GROUP BY cluster_id, coordinator_partition, group_id, topic_id, share_partition, run, w.state, w.count),
heads AS (
    SELECT cluster_id, coordinator_partition, group_id, topic_id, share_partition, coordinator_broker, snapshot_epoch, state_epoch_now AS state_epoch,
           leader_now AS leader_epoch, start_now AS start_offset, offset, timestamp, file, position
    FROM carried WHERE from_end = 1)
SELECT h.cluster_id, h.group_id AS `group`, n.topic, h.topic_id, h.share_partition AS partition,
       h.snapshot_epoch, h.state_epoch, h.leader_epoch, h.start_offset, r.first_offset, r.last_offset,
       CASE r.delivery_state WHEN 0 THEN 'AVAILABLE' WHEN 1 THEN 'ACQUIRED' WHEN 2 THEN 'ACKNOWLEDGED' WHEN 3 THEN 'ARCHIVING' WHEN 4 THEN 'ARCHIVED' ELSE CAST(r.delivery_state AS STRING) END AS delivery_state,
       r.delivery_count, h.coordinator_broker, h.coordinator_partition, h.offset AS coordinator_offset,
       h.timestamp, h.file, h.position
FROM heads h
LEFT JOIN runs r
  ON r.cluster_id = h.cluster_id AND r.coordinator_partition = h.coordinator_partition
 AND r.group_id = h.group_id AND r.topic_id = h.topic_id AND r.share_partition = h.share_partition
LEFT JOIN names n ON n.topic_id = h.topic_id
