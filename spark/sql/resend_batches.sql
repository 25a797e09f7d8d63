/*
[table]
doc = """The batches whose records a re-send check compares, decided from the headers: those holding the first
:resend_tail records of each newer producer id (pid_b) and the last :resend_tail records of each earlier one (pid_a).
Only these records are ever decoded and hashed, however long the histories are."""
columns = "broker string, topic string, partition int, file string, position bigint, size int"
*/
WITH newer AS (SELECT DISTINCT broker, topic, partition, pid_b AS producer_id, true AS newer FROM resend_candidates),
earlier AS (SELECT DISTINCT broker, topic, partition, pid_a AS producer_id, true AS earlier FROM resend_candidates),
ranked AS (
  SELECT *, coalesce(sum(count) OVER (PARTITION BY broker, topic, partition, producer_id
                                      ORDER BY base_offset, segment_base_offset, position
                                      ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS records_before,
            coalesce(sum(count) OVER (PARTITION BY broker, topic, partition, producer_id
                                      ORDER BY base_offset, segment_base_offset, position
                                      ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING), 0) AS records_after
  FROM resend_data LEFT JOIN newer USING (broker, topic, partition, producer_id)
       LEFT JOIN earlier USING (broker, topic, partition, producer_id)
  WHERE newer OR earlier)
SELECT broker, topic, partition, file, position, size FROM ranked
WHERE (newer AND records_before < :resend_tail) OR (earlier AND records_after < :resend_tail)
