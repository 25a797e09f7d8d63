/*
[table]
doc = """Each newer producer id's first :resend_tail records (role `head`) and, per candidate predecessor (`pid_a`), its
last :resend_tail records (role `tail`), with their key and value hashes (a null hash is -2^63: pandas would make it
NaN, which equals nothing), grouped by the newer producer id."""
columns = """
broker string, topic string, partition int, producer_id bigint, pid_a bigint, role string, offset bigint,
timestamp bigint, producer_epoch int, key_hash bigint, value_hash bigint"""
*/
WITH ranked AS (
  SELECT *, row_number() OVER (PARTITION BY broker, topic, partition, producer_id ORDER BY `offset`) AS from_start,
         row_number() OVER (PARTITION BY broker, topic, partition, producer_id ORDER BY `offset` DESC) AS from_end
  FROM (SELECT broker, topic, partition, producer_id, `offset`, `timestamp`, producer_epoch,
               coalesce(key_hash, CAST(-9223372036854775808 AS BIGINT)) AS key_hash,
               coalesce(value_hash, CAST(-9223372036854775808 AS BIGINT)) AS value_hash
        FROM resend_records))
SELECT broker, topic, partition, producer_id, CAST(NULL AS BIGINT) AS pid_a, 'head' AS role, `offset`,
       `timestamp`, producer_epoch, key_hash, value_hash
FROM ranked LEFT SEMI JOIN (SELECT DISTINCT broker, topic, partition, pid_b AS producer_id FROM resend_candidates)
     USING (broker, topic, partition, producer_id)
WHERE from_start <= :resend_tail
UNION ALL
SELECT r.broker, r.topic, r.partition, p.pid_b AS producer_id, r.producer_id AS pid_a, 'tail' AS role, `offset`,
       `timestamp`, producer_epoch, key_hash, value_hash
FROM ranked r JOIN resend_candidates p ON r.broker = p.broker AND r.topic = p.topic AND r.partition = p.partition
                                       AND r.producer_id = p.pid_a
WHERE from_end <= :resend_tail
