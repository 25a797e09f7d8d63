/*
[table]
doc = """How far the input covers each live partition dir: `covered_to` (one past the copy's last offset; null: no
batch), `complete` (the input lacks none of the offsets the partition is known to have held, from its first segment
on) and `missing`, the ranges it lacks (missing_ranges). The rules that need a range read it here and stay silent
where the copy lacks it (`not_judged`)."""
keep = true
columns = "broker string, topic string, partition int, covered_to bigint, complete boolean, missing array<struct<first_offset: bigint, last_offset: bigint, proven: boolean>>"
*/
-- How far the input covers each live partition dir, over partition_dirs, segments and missing_ranges: `covered_to`
-- (one past the copy's last offset; null: no batch), `complete` (the input lacks none of the offsets the partition is
-- known to have held, from its first segment on: offsets below it are retention's) and `missing`, the ranges it
-- lacks ([first_offset, last_offset], last_offset null where nothing says how far; `proven`: the coverage check
-- names it). The rules that need a range read it here and stay silent where the copy lacks it (not_judged).
WITH
dirs AS (SELECT DISTINCT broker, topic, partition FROM partition_dirs WHERE dir_state = 'live'),
ends AS (SELECT broker, topic, partition, max(last_offset) + 1 AS covered_to FROM segments
         GROUP BY broker, topic, partition),
lacks AS (
    SELECT broker, topic, partition,
           array_sort(collect_list(named_struct('first_offset', first_offset, 'last_offset', last_offset,
                                                'proven', proven))) AS missing
    FROM missing_ranges GROUP BY broker, topic, partition)
SELECT broker, topic, partition, covered_to, missing IS NULL AS complete,
       coalesce(missing, CAST(array() AS ARRAY<STRUCT<first_offset: BIGINT, last_offset: BIGINT, proven: BOOLEAN>>))
         AS missing
FROM dirs LEFT JOIN ends USING (broker, topic, partition) LEFT JOIN lacks USING (broker, topic, partition)
