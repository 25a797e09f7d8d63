/*
[check]
*/
-- Reads restart_predictions (predictions' rows); the restart findings (FINDING_COLUMNS).
SELECT kind, severity, broker, topic, partition, file, position, offset, producer_id, producer_epoch, message, details FROM restart_predictions WHERE row_kind = 'finding'
