/*
[table]
doc = """Each transactional id the coordinator's records name, with `expected_coordinator_partition`: the
`__transaction_state-<n>` partition it hashes to among :transaction_state_partitions, as the coordinator picks it
(Utils.abs(transactionalId.hashCode()) % partitions: TransactionStateManager.partitionFor; Utils.abs maps
Integer.MIN_VALUE to 0), the same rule as `kforensics locate` (parsers/coordinator_partition.py)."""
columns = "transactional_id string, expected_coordinator_partition string"
*/
-- Java's String.hashCode: the id's UTF-16 code units (four hex digits each) folded with h = 31 * h + unit modulo
-- 2^32, then read as a signed 32-bit value (an empty string folds over sequence(0, -1): its hash is 0)
WITH units AS (
    SELECT DISTINCT transactional_id, hex(encode(transactional_id, 'UTF-16BE')) AS units
    FROM coordinator_log WHERE transactional_id IS NOT NULL),
folded AS (
    SELECT transactional_id,
           CASE WHEN length(transactional_id) = 0 THEN CAST(0 AS BIGINT)
                ELSE aggregate(sequence(0, CAST(length(units) / 4 - 1 AS INT)), CAST(0 AS BIGINT),
                               (h, i) -> pmod(h * 31 + CAST(conv(substring(units, i * 4 + 1, 4), 16, 10) AS BIGINT),
                                              4294967296)) END AS unsigned_hash
    FROM units),
hashed AS (
    SELECT transactional_id,
           CASE WHEN unsigned_hash >= 2147483648 THEN unsigned_hash - 4294967296 ELSE unsigned_hash END AS hash
    FROM folded)
SELECT transactional_id,
       format_string('__transaction_state-%d',
                     CAST(CASE WHEN hash = -2147483648 THEN 0 ELSE abs(hash) END % :transaction_state_partitions
                          AS INT)) AS expected_coordinator_partition
FROM hashed
