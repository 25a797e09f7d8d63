/*
[table]
doc = """The data batches a re-send check compares (data_batches with a sound CRC), without those of aborted
transactions unless :resend_aborted: a Streams task that moves has its new producer re-write what the fenced one wrote
in a transaction its coordinator aborted; no read_committed consumer ever saw that copy, so it is no re-send."""
like = "data_batches"
*/
SELECT d.* FROM (SELECT * FROM data_batches WHERE crc_valid) d LEFT ANTI JOIN (
    SELECT broker, topic, partition, producer_id, first_offset, last_data_offset FROM log_transactions
    WHERE outcome = 'ABORT' AND first_offset IS NOT NULL AND NOT :resend_aborted) a
ON d.broker = a.broker AND d.topic = a.topic AND d.partition = a.partition AND d.producer_id = a.producer_id
   AND d.base_offset BETWEEN a.first_offset AND a.last_data_offset
