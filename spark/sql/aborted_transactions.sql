/*
[table]
doc = """The aborted ranges of lso_sweep (`marked`: an ABORT marker is there) full-outer-joined with the .txnindex
entries on producer and marker offset, and whether both agree (`agrees`)."""
columns = """
broker string, topic string, partition int, producer_id bigint, last_offset bigint, first_offset bigint,
last_stable_offset bigint, marked boolean, index_first_offset bigint, index_last_stable_offset bigint,
index_file string, cleaner_offset bigint, log_first_offset bigint, agrees boolean"""
*/
-- The aborted ranges of lso_sweep (`marked`: an ABORT marker is there) full-outer-joined with the txnindex entries
-- (first offset, LSO and file as index_first_offset, index_last_stable_offset, index_file) on producer and marker
-- offset, with partition_ends' cleaner_offset and log_first_offset, and whether both agree (`agrees`).
--
-- On a compacted log the index is held to the markers (CleanedTransactionMetadata keeps an ABORT marker and the
-- cleaned segment's entry, first offset as written, while it removes the data; apache/kafka trunk c4342d76): an entry
-- whose first offset, or LSO, lies below the cleaner offset and below what the log still shows names batches the
-- cleaner removed, and agrees.
SELECT *, (first_offset IS NULL OR first_offset = index_first_offset
           OR coalesce(index_first_offset < first_offset AND index_first_offset < cleaner_offset, false))
          AND (last_stable_offset IS NULL OR last_stable_offset = index_last_stable_offset
               OR coalesce(index_last_stable_offset < last_stable_offset
                           AND index_last_stable_offset < cleaner_offset, false)) AS agrees
FROM (SELECT broker, topic, partition, producer_id, first_offset, last_offset, last_stable_offset,
             true AS marked
      FROM lso_sweep WHERE row_kind = 'aborted')
FULL OUTER JOIN (SELECT broker, topic, partition, producer_id, last_offset,
                        first_offset AS index_first_offset,
                        last_stable_offset AS index_last_stable_offset, file AS index_file
                 FROM txnindex)
USING (broker, topic, partition, producer_id, last_offset)
LEFT JOIN (SELECT broker, topic, partition, cleaner_offset, log_first_offset FROM partition_ends) USING (broker, topic, partition)
