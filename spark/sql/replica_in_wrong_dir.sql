/*
[check]
coverage = true
applies = "kraft"

[[finding]]
kind = "replica_in_wrong_dir"
severity = "error"
meaning = '''
a replica's partition dir is in a log dir other than the one the KRaft metadata log assigns it (KIP-858), or is live
in two log dirs of one broker'''
fields = ["reason", "log_dir", "directory_id", "assigned_directory_id", "assigned_log_dir", "future_log_dir",
          "other_log_dir", "topic_id", "replicas", "directories"]
exported = true
rule = '''
KRaft with JBOD (metadata version 3.7-IV2 on: PartitionRecord and PartitionChangeRecord carry `Directories`, one
directory id per replica): a live partition dir of a broker whose metadata log is in the input, in a log dir whose
meta.properties `directory.id` is not the one the partition's last state assigns the broker's replica, with
`reason`: `other_dir` (the assigned id is another log dir given for the broker: `assigned_log_dir`), `unknown_dir`
(no log dir given for the broker has it: a disk restored with a new directory.id, or a dir not in the input), `lost`
(the controller recorded the replica's dir as LOST: the broker reported it offline, and the replica is offline to the
cluster while this copy holds its log). Not wrong (silent): a replica being moved between dirs (the broker holds a
`-future` dir of the partition, and the assignment names the future's dir: the controller accepts the destination
before the broker promotes the future log, ReplicaAlterLogDirsThread), a new partition still UNASSIGNED or a
MIGRATING one (DirectoryId, apache/kafka 1eb76443), a dir the broker's registration lists as cordoned (KIP-1066:
partitions placed there before stay until moved), a dir without a directory.id (Kafka before 3.7 writes none), a
metadata log without `Directories`. Also, with or without assignments, `duplicate`: the partition is live in two
log dirs of the broker (`other_log_dir`): LogManager does not start the broker with both ("Duplicate log directories
... are found in both"). `file` is the partition dir. Left not judged where the input's copy of the metadata log
lacks records after what its replay saw (an AssignReplicasToDirs change may stand there)'''
compacted = '''
unchanged: the log cleaner does not clean `__cluster_metadata` (KRaft snapshots replace its prefix, and keep each
partition's directories)'''
reports = ["export"]
event = "{topic}-{partition} on {broker} is in log dir {log_dir}, not where the metadata log places it ({reason})"

[[finding.action]]
phase = "save"
command = "kforensics export {broker}={log_dir} --broker {broker} --topic {topic} --partition {partition} --out wrong-dir-{topic}-{partition}-{broker}.jsonl"
why = "the dir may hold the only copy of the replica's records, and a broker started on the wrong disk layout may delete or truncate it"
destructive = false

[[finding.action]]
phase = "verify"
command = "kafka-log-dirs.sh --bootstrap-server <BOOTSTRAP> --describe --topic-list {topic}"
why = "shows in which log dir each running broker holds each replica of the topic"
destructive = false

[[finding.action]]
phase = "repair"
command = "# mount each disk of broker {broker} at the log dir it belongs to (its meta.properties directory.id), or remove the copy of {topic}-{partition} the metadata log does not place there, then start the broker"
why = "the broker reports the dir each log really is in (AssignReplicasToDirs) once it starts with a layout it accepts"
destructive = true
*/
-- The `replica_in_wrong_dir` check: reads `cluster_dirs` (each partition dir with its log_dir, cluster_id and
-- node_id), `log_dirs` (each log dir's directory.id), `partition_state` (replicas and directories at the end of the
-- metadata log), `broker_history` (cordoned log dirs), `reference_copies` and `metadata_coverage`.
-- DirectoryId (apache/kafka 1eb76443): MIGRATING = Uuid(0, 0), UNASSIGNED = Uuid(0, 1), LOST = Uuid(0, 2), in
-- Kafka's base64: AAAAAAAAAAAAAAAAAAAAAA, AAAAAAAAAAAAAAAAAAAAAQ, AAAAAAAAAAAAAAAAAAAAAg.
WITH
    dirs AS (
        SELECT c.*, l.directory_id
        FROM cluster_dirs c JOIN log_dirs l ON c.broker = l.broker AND c.log_dir = l.log_dir
        WHERE c.dir_state IN ('live', 'future') AND c.topic != '__cluster_metadata'),
    broker_dirs AS (
        SELECT broker, collect_list(named_struct('log_dir', log_dir, 'directory_id', directory_id)) AS given_dirs
        FROM log_dirs GROUP BY broker),
    future AS (
        SELECT broker, topic, partition, min(directory_id) AS future_directory_id, min(log_dir) AS future_log_dir
        FROM dirs WHERE dir_state = 'future' GROUP BY broker, topic, partition),
    cordoned AS (
        SELECT cluster_id, broker_id, cordoned_log_dirs FROM (
            SELECT *, row_number() OVER (PARTITION BY cluster_id, broker_id ORDER BY metadata_offset DESC) AS rank
            FROM broker_history)
        WHERE rank = 1),
    live AS (
        SELECT *, first(log_dir) OVER (PARTITION BY broker, topic, partition ORDER BY log_dir
                                       ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS first_log_dir,
               count(*) OVER (PARTITION BY broker, topic, partition) AS live_copies
        FROM dirs WHERE dir_state = 'live'),
    judged AS (
        SELECT /*+ BROADCAST(r) */ d.*, s.topic_id AS metadata_topic_id, s.replicas, s.directories,
               CASE WHEN size(s.directories) = size(s.replicas) AND array_position(s.replicas, d.node_id) > 0
                    THEN element_at(s.directories, CAST(array_position(s.replicas, d.node_id) AS INT)) END
                   AS assigned_directory_id,
               f.future_directory_id, f.future_log_dir, k.cordoned_log_dirs, b.given_dirs
        FROM live d
        JOIN reference_copies r ON d.cluster_id = r.cluster_id
        JOIN partition_state s ON s.cluster_id = d.cluster_id AND s.topic = d.topic AND s.partition = d.partition
        LEFT JOIN future f ON f.broker = d.broker AND f.topic = d.topic AND f.partition = d.partition
        LEFT JOIN cordoned k ON k.cluster_id = d.cluster_id AND k.broker_id = d.node_id
        LEFT JOIN broker_dirs b ON b.broker = d.broker
        WHERE d.topic_id IS NULL OR d.topic_id = s.topic_id),
    wrong AS (
        SELECT *,
               CASE WHEN assigned_directory_id = 'AAAAAAAAAAAAAAAAAAAAAg' THEN 'lost'
                    WHEN array_contains(given_dirs.directory_id, assigned_directory_id) THEN 'other_dir'
                    ELSE 'unknown_dir' END AS reason,
               get(filter(given_dirs, g -> g.directory_id = assigned_directory_id), 0).log_dir AS assigned_log_dir,
               CAST(NULL AS STRING) AS other_log_dir
        FROM judged
        WHERE directory_id IS NOT NULL AND assigned_directory_id IS NOT NULL AND live_copies = 1
          AND assigned_directory_id NOT IN ('AAAAAAAAAAAAAAAAAAAAAA', 'AAAAAAAAAAAAAAAAAAAAAQ')
          AND assigned_directory_id != directory_id
          AND NOT assigned_directory_id <=> future_directory_id
          AND (assigned_directory_id = 'AAAAAAAAAAAAAAAAAAAAAg'
               OR NOT coalesce(array_contains(cordoned_log_dirs, directory_id), false))),
    duplicate AS (
        -- the copy after the first, by path (Kafka names no winner: it stops)
        SELECT *, 'duplicate' AS reason, CAST(NULL AS STRING) AS assigned_directory_id,
               CAST(NULL AS STRING) AS assigned_log_dir, first_log_dir AS other_log_dir
        FROM live WHERE live_copies > 1 AND log_dir != first_log_dir),
    found AS (
        SELECT broker, topic, partition, path, log_dir, directory_id, cluster_id, reason, assigned_directory_id,
               assigned_log_dir, future_log_dir, other_log_dir, topic_id, replicas, directories
        FROM wrong
        UNION ALL
        SELECT broker, topic, partition, path, log_dir, directory_id, cluster_id, reason, assigned_directory_id,
               assigned_log_dir, CAST(NULL AS STRING), other_log_dir, topic_id, CAST(NULL AS ARRAY<INT>),
               CAST(NULL AS ARRAY<STRING>)
        FROM duplicate)
SELECT 'replica_in_wrong_dir' AS kind, broker, topic, partition, CAST(path AS STRING) AS file,
       CAST(NULL AS BIGINT) AS position, CAST(NULL AS BIGINT) AS offset, CAST(NULL AS BIGINT) AS producer_id,
       CAST(NULL AS INT) AS producer_epoch,
       CASE reason
           WHEN 'duplicate' THEN format_string(
               '%s-%d is live in two log dirs of %s, %s and %s: Kafka does not start the broker (LogManager: Duplicate log directories found in both) and asks to delete the copy in the dir that failed most recently. Copy both aside first: either may hold records the other lacks.',
               topic, partition, broker, other_log_dir, log_dir)
           WHEN 'lost' THEN format_string(
               '%s-%d on %s is in log dir %s (directory.id %s), but the metadata log records its replica''s dir as LOST (the broker reported it offline): the cluster treats this replica as offline while this copy holds its log.',
               topic, partition, broker, log_dir, directory_id)
           WHEN 'other_dir' THEN format_string(
               '%s-%d on %s is in log dir %s (directory.id %s), but the metadata log assigns this replica to directory %s, which is %s: the disks are mounted at each other''s places, or the dir was copied onto the wrong disk.',
               topic, partition, broker, log_dir, directory_id, assigned_directory_id, assigned_log_dir)
           ELSE format_string(
               '%s-%d on %s is in log dir %s (directory.id %s), but the metadata log assigns this replica to directory %s, which none of the log dirs given for %s has: a disk restored with a new directory.id, or a log dir not in the input. Until the broker reports the dir it is in, the cluster treats the replica as offline.',
               topic, partition, broker, log_dir, directory_id, assigned_directory_id, broker) END AS message,
       to_json(named_struct('reason', reason, 'log_dir', log_dir, 'directory_id', directory_id,
                            'assigned_directory_id', assigned_directory_id, 'assigned_log_dir', assigned_log_dir,
                            'future_log_dir', future_log_dir, 'other_log_dir', other_log_dir, 'topic_id', topic_id,
                            'replicas', replicas, 'directories', directories)) AS details,
       mc.mc_broker AS gap_broker, '__cluster_metadata-0' AS gap_partition,
       CASE WHEN reason != 'duplicate' THEN mc.gap_range END AS gap_range
FROM found LEFT JOIN (SELECT cluster_id, metadata_broker AS mc_broker, gap_range FROM metadata_coverage) mc
     USING (cluster_id)
