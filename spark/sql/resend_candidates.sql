/*
[table]
doc = """Pairs (pid_a, pid_b) of producer ids of a partition where pid_b's history starts after pid_a's last record
in the log and its first write comes within :resend_window_ms of pid_a's last write (0: any time)."""
keep = true
columns = "broker string, topic string, partition int, pid_a bigint, pid_b bigint"
*/
SELECT broker, topic, partition, a.producer_id AS pid_a, b.producer_id AS pid_b
FROM producer_spans a JOIN producer_spans b USING (broker, topic, partition)
WHERE a.producer_id != b.producer_id AND a.last_offset < b.first_offset
  AND (:resend_window_ms <= 0 OR abs(b.first_ts - a.last_ts) <= :resend_window_ms)
