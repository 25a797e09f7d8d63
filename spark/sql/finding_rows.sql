/*
[table]
doc = """The findings of every check family (checked_findings) with a `finding_id` (a digest of what the finding says
and where, its file named by partition dir and file name: stable within one OUT and across scans of the same disks
wherever they are mounted) and the `cluster_id` of the broker they were
found on (its meta.properties' cluster.id; "" when unknown): what the incident links join on."""
keep = true
like = "checked_findings"
columns = "finding_id string, cluster_id string"
*/
SELECT f.*, substr(sha2(concat_ws('\u0001', f.kind, coalesce(f.broker, ''), coalesce(f.topic, ''),
                                  coalesce(CAST(f.partition AS STRING), ''),
                                  coalesce(regexp_extract(f.file, '[^/]*/?[^/]*$', 0), ''),
                                  coalesce(CAST(f.position AS STRING), ''), coalesce(CAST(f.offset AS STRING), ''),
                                  coalesce(CAST(f.producer_id AS STRING), ''), coalesce(f.message, ''),
                                  coalesce(f.details, '')), 256), 1, 16) AS finding_id,
       coalesce(b.cluster_id, '') AS cluster_id
FROM checked_findings f LEFT JOIN (SELECT broker, cluster_id FROM brokers) b ON f.broker = b.broker
