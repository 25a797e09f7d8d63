/*
[check]
*/
-- The parsers' findings, as the executors reported them.
SELECT kind, severity, broker, topic, partition, file, position, offset, producer_id, producer_epoch, message, details FROM parser_findings
