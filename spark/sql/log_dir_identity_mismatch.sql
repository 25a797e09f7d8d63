/*
[check]
applies = "several_log_dirs"

[[finding]]
kind = "log_dir_identity_mismatch"
severity = "error"
meaning = '''
the log dirs given for one broker are not one identity (meta.properties): Kafka refuses to start the broker'''
fields = ["reason", "log_dir", "found", "expected", "other_log_dir", "log_dirs"]
rule = '''
A broker label given several log dirs (`kforensics scan b3=/mnt/d1/kafka b3=/mnt/d2/kafka`: one broker's
`log.dirs`, JBOD) whose dirs' `meta.properties` Kafka would not start with (MetaPropertiesEnsemble.verify and
KafkaRaftServer.initializeLogDirs, apache/kafka 1eb76443), one finding per dir and `reason`: `cluster_id` (its
cluster.id is not that of the broker's first dir, by path, with a meta.properties), `node_id` (its node.id, or a
ZooKeeper-era broker.id, is not), `directory_id_shared` (its directory.id is also that of `other_log_dir`: a copied
disk), `meta_properties_missing` (it has none where a sibling has one: Kafka asks for `kafka-storage.sh format`).
`found` and `expected` are the values compared, `log_dirs` every dir of the broker with its meta.properties
(`log_dir`, `meta_properties`, `cluster_id`, `node_id`, `directory_id`). `file` is the dir's meta.properties (the dir
where it has none). A value absent from a meta.properties (a version 0 file's cluster.id) is not compared, as Kafka
does not. A broker given one dir is not judged here'''
compacted = "unchanged: meta.properties is written by `kafka-storage.sh format` and at start, never by the log"
event = "log dir {log_dir} of {broker} does not match the broker's other log dirs ({reason})"

[[finding.action]]
phase = "save"
command = "# copy the meta.properties of every log dir of broker {broker} aside before editing or remounting any"
why = "each is the only record of which cluster, node and directory id its disk belongs to"
destructive = false

[[finding.action]]
phase = "verify"
command = "kafka-storage.sh info --config <BROKER_CONFIG>"
why = "prints what the broker reads from each log dir's meta.properties and what it would refuse"
destructive = false

[[finding.action]]
phase = "repair"
command = "# mount the disk that belongs at {log_dir} (or take {log_dir} out of log.dirs), rather than edit its meta.properties"
why = "a dir of another cluster or node, or a clone of a sibling, holds replicas the metadata log does not place there"
destructive = true
*/
-- The `log_dir_identity_mismatch` check: reads `log_dirs` (one row per log dir the input gave, several per broker
-- label under JBOD, with its meta.properties' cluster.id, node.id and directory.id). Per broker label with two or
-- more dirs: the identity is the first dir's, by path, with a meta.properties (as `brokers` takes it); a dir that
-- disagrees with it, shares a directory.id with an earlier dir, or lacks the file where a sibling has one.
WITH
    dirs AS (
        SELECT *,
               count(*) OVER (PARTITION BY broker) AS n_dirs,
               count(meta_properties) OVER (PARTITION BY broker) AS n_meta,
               first(CASE WHEN meta_properties IS NOT NULL THEN log_dir END, true) OVER broker_dirs AS identity_dir,
               first(CASE WHEN meta_properties IS NOT NULL THEN cluster_id END, true) OVER broker_dirs
                   AS identity_cluster_id,
               first(CASE WHEN meta_properties IS NOT NULL THEN node_id END, true) OVER broker_dirs AS identity_node_id,
               -- the first dir, by path, holding this directory.id
               first(log_dir) OVER (PARTITION BY broker, directory_id ORDER BY log_dir) AS first_with_id,
               array_sort(collect_list(named_struct('log_dir', log_dir, 'meta_properties', meta_properties,
                                                    'cluster_id', cluster_id, 'node_id', node_id,
                                                    'directory_id', directory_id)) OVER (PARTITION BY broker))
                   AS all_dirs
        FROM log_dirs
        WINDOW broker_dirs AS (PARTITION BY broker ORDER BY meta_properties IS NULL, log_dir
                               ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)),
    reasons AS (
        SELECT *, explode(array_compact(array(
                   CASE WHEN meta_properties IS NULL AND n_meta > 0 THEN 'meta_properties_missing' END,
                   CASE WHEN meta_properties IS NOT NULL AND cluster_id IS NOT NULL
                             AND identity_cluster_id IS NOT NULL AND cluster_id != identity_cluster_id
                        THEN 'cluster_id' END,
                   CASE WHEN meta_properties IS NOT NULL AND node_id IS NOT NULL AND identity_node_id IS NOT NULL
                             AND node_id != identity_node_id THEN 'node_id' END,
                   CASE WHEN directory_id IS NOT NULL AND log_dir != first_with_id THEN 'directory_id_shared' END)))
                   AS reason
        FROM dirs WHERE n_dirs > 1)
SELECT 'log_dir_identity_mismatch' AS kind, broker, CAST(NULL AS STRING) AS topic, CAST(NULL AS INT) AS partition,
       coalesce(meta_properties, log_dir) AS file, CAST(NULL AS BIGINT) AS position, CAST(NULL AS BIGINT) AS offset,
       CAST(NULL AS BIGINT) AS producer_id, CAST(NULL AS INT) AS producer_epoch,
       CASE reason
           WHEN 'meta_properties_missing' THEN format_string(
               'Log dir %s of broker %s has no meta.properties, while %s has one: Kafka does not start the broker ("No meta.properties found ... have you run kafka-storage.sh to format the directory?"). A disk restored without it, or a mount point whose disk is not mounted.',
               log_dir, broker, identity_dir)
           WHEN 'cluster_id' THEN format_string(
               'Log dir %s of broker %s belongs to cluster %s, but %s to cluster %s: Kafka does not start the broker (Invalid cluster.id). One of the disks is another cluster''s.',
               log_dir, broker, cluster_id, identity_dir, identity_cluster_id)
           WHEN 'node_id' THEN format_string(
               'Log dir %s of broker %s belongs to node %d, but %s to node %d: Kafka does not start the broker (Stored node id doesn''t match). One of the disks is another broker''s.',
               log_dir, broker, node_id, identity_dir, identity_node_id)
           ELSE format_string(
               'Log dirs %s and %s of broker %s share directory.id %s: Kafka does not start the broker (Duplicate directory ID). One disk was cloned from the other, and the metadata log''s assignments to that id cannot tell them apart.',
               first_with_id, log_dir, broker, directory_id) END AS message,
       to_json(named_struct(
           'reason', reason, 'log_dir', log_dir,
           'found', CASE reason WHEN 'cluster_id' THEN cluster_id WHEN 'node_id' THEN CAST(node_id AS STRING)
                                WHEN 'directory_id_shared' THEN directory_id END,
           'expected', CASE reason WHEN 'cluster_id' THEN identity_cluster_id
                                   WHEN 'node_id' THEN CAST(identity_node_id AS STRING) END,
           'other_log_dir', CASE WHEN reason = 'directory_id_shared' THEN first_with_id ELSE identity_dir END,
           'log_dirs', all_dirs)) AS details
FROM reasons
