/*
[table]
doc = """One row per finding (see [Findings](findings.md)): what a parser or a check reports instead of raising, with
the file and byte position it is about, and the incident it belongs to."""
output = true
columns = [
    ["kind", "string", "the finding's kind (docs/findings.md)"],
    ["severity", "string", "`error`, `warning` or `info` (a note)"],
    ["broker", "string", "the input's label: the log dir it was found in"],
    ["topic", "string", "the topic (null for a finding about no partition)"],
    ["partition", "int", "the partition"],
    ["file", "string", "the file it is about"],
    ["position", "bigint", "the byte position in `file` (null where there is none)"],
    ["offset", "bigint", "the first offset it is about (a batch's base offset)"],
    ["producer_id", "bigint", "the producer it is about"],
    ["producer_epoch", "int", "that producer's epoch"],
    ["message", "string", "one sentence"],
    ["details", "string", "a JSON object of the kind's fields"],
    ["incident_id", "string", "the incident it belongs to (the `incidents` table; null for a note no link ties to one)"],
]
*/
SELECT kind, severity, broker, topic, partition, file, position, offset, producer_id, producer_epoch, message, details,
       incident_id
FROM finding_rows LEFT JOIN (SELECT finding_id, incident_id FROM incident_members) USING (finding_id)
