/*
[table]
doc = """Per segment (`file`: its `.log`) what Kafka's TransactionIndex.sanityCheck throws at the first entry that
trips it, in file order: `txnindex_error` (`unknown_version`: an entry of version > 0, KafkaException; `corrupt`: an
entry whose last offset is below the segment's base offset, CorruptIndexException) and `txnindex_error_position`, from
the parser's txnindex_bad_entry findings. A partial trailing entry is not read by Kafka (its iterator needs 34 bytes):
no error."""
columns = """
broker string, topic string, partition int, file string, txnindex_error string, txnindex_error_position bigint"""
*/
SELECT broker, topic, partition, regexp_replace(file, '\\.txnindex$', '.log') AS file,
       first.error AS txnindex_error, first.position AS txnindex_error_position
FROM (SELECT broker, topic, partition, file, min(struct(position, error)) AS first
      FROM (SELECT *, CASE WHEN CAST(get_json_object(details, '$.version') AS INT) > 0 THEN 'unknown_version'
                           WHEN CAST(get_json_object(details, '$.last_offset') AS BIGINT)
                                < CAST(regexp_extract(file, '(\\d{20})\\.txnindex$', 1) AS BIGINT) THEN 'corrupt'
                      END AS error
            FROM parser_findings WHERE kind = 'txnindex_bad_entry' AND endswith(file, '.txnindex'))
      WHERE error IS NOT NULL
      GROUP BY broker, topic, partition, file)
