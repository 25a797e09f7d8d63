/*
[table]
doc = """What the copies of each topic-partition of a cluster lack: per cluster_id, topic and partition, `missing`,
every range a replica's copy lacks with its `broker` (none: no row). A rule judged against a partition's longest
replica reads it: a replica whose copy lacks its tail is not the longest in the input, though its log may be on the
broker, so every replica's gaps count."""
columns = "cluster_id string, topic string, partition int, missing array<struct<first_offset: bigint, last_offset: bigint, proven: boolean, broker: string>>"
*/
-- What the copies of each topic-partition of a cluster lack, over partition_coverage and brokers: per cluster_id,
-- topic and partition, `missing`, every range a replica's copy lacks with its `broker` (none: the table has no row).
-- A rule judged against a partition's longest replica reads it: a replica whose copy lacks its tail is not the longest
-- in the input, though its log may be on the broker, so every replica's gaps count.
SELECT coalesce(b.cluster_id, '') AS cluster_id, c.topic, c.partition,
       array_sort(flatten(collect_list(transform(c.missing, m -> named_struct(
           'first_offset', m.first_offset, 'last_offset', m.last_offset, 'proven', m.proven, 'broker', c.broker)))))
         AS missing
FROM partition_coverage c LEFT JOIN (SELECT broker, cluster_id FROM brokers) b USING (broker)
WHERE NOT c.complete
GROUP BY coalesce(b.cluster_id, ''), c.topic, c.partition
