/*
[table]
doc = """The v2 data batches of idempotent and transactional producers (log_batches). Batches with a bad CRC stay in:
the damage is nearly always in the records, and dropping the batch would report the sequence numbers it carries as a
gap (the CRC finding already names it)."""
like = "log_batches"
*/
SELECT * FROM log_batches WHERE magic = 2 AND producer_id >= 0 AND NOT is_control AND base_sequence >= 0
