/*
[table]
doc = """The v2 data batches of idempotent and transactional producers (log_batches). Batches with a bad CRC stay in:
the damage is nearly always in the records, and dropping the batch would report the sequence numbers it carries as a
gap (the CRC finding already names it)."""
columns = """
broker string, topic string, partition int, file string, segment_base_offset bigint, position bigint, size int,
magic int, base_offset bigint, last_offset bigint, count int, partition_leader_epoch int, producer_id bigint,
producer_epoch int, base_sequence int, last_sequence int, is_transactional boolean, is_control boolean,
control_type string, coordinator_epoch int, codec string, timestamp_type string, base_timestamp bigint,
max_timestamp bigint, crc bigint, crc_valid boolean, delete_horizon_ms bigint, leader_epoch_change boolean,
cleaner_offset bigint"""
*/
SELECT * FROM log_batches WHERE magic = 2 AND producer_id >= 0 AND NOT is_control AND base_sequence >= 0
