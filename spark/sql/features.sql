/*
[table]
doc = """Each FeatureLevelRecord of each cluster's metadata log, in order (`metadata.version`, `transaction.version`,
`eligible.leader.replicas.version`, `group.version`, ...)."""
output = true
applies = "kraft"
columns = [
    ["cluster_id", "string", "the cluster.id of the broker's meta.properties (empty when unknown)"],
    ["metadata_broker", "string", "the input whose copy of the metadata log was replayed (the copy that reaches furthest)"],
    ["feature", "string", "the feature's name"],
    ["feature_level", "int", "the level set"],
    ["metadata_offset", "bigint", "the record's offset in the metadata log"],
    ["timestamp", "bigint", "its batch's timestamp"],
    ["file", "string", "the file it was read from"],
    ["position", "bigint", "the byte position in `file`"],
]
*/
SELECT cluster_id, metadata_broker, feature, feature_level, metadata_offset, timestamp, file, position
FROM applied_records WHERE record_type = 'FEATURE_LEVEL_RECORD'
