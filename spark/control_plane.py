"""The control plane: the KRaft metadata log (`__cluster_metadata-0`), read on the executors (metadata_records.py) into rows of
`metadata_records`, which the models replay as the controller applies it (spark/sql: reference_copies,
base_snapshots, applied_records, elr_clears, partition_history, broker_history, topics, features, partition_state,
live_brokers) and hold against the data on the same disks (the KRaft checks: spark/sql files whose header names
`applies = "kraft"`). Each model's header says the rule it follows.

A record of a version newer than the tables (`parsers/schemas_metadata.py`) is an `internal_record_newer_version`
finding, once per record type and version. Where it reads as the newest known version (the newer one added only
tagged fields), the replay applies what it read, without what the newer version added. Where its fields do not read,
the replay leaves it out: it cannot know what the record changes, and the finding says so (`fields_read` false).
After such a PartitionChangeRecord one partition's leader and partition epochs fall behind the controller's, which
bumps them for every change record (`PartitionRegistration.merge`). A newer Begin/End/AbortTransactionRecord still
applies: the replay reads only its type.

Stray logs (`LogManager`, `LocalLog.logStrayDirName`, Kafka 3.7+): a broker's log whose topic id is not the live
topic's, or whose broker is not a replica, is renamed `<topic>-<partition>.<uuid>-stray` and deleted later.
"""

from __future__ import annotations

METADATA_TOPIC = "__cluster_metadata"
#: A copy of one cluster's metadata log.
COPY = ["cluster_id", "metadata_broker"]
#: A partition's registration: topic ids, not names, identify a topic across deletion and re-creation.
PARTITION = ["cluster_id", "topic_id", "partition"]
ORDER = ["metadata_offset", "record_index"]

PARTITION_RECORD = "PARTITION_RECORD"
PARTITION_CHANGE_RECORD = "PARTITION_CHANGE_RECORD"
CLEAR_ELR_RECORD = "CLEAR_ELR_RECORD"
CONFIG_RECORD = "CONFIG_RECORD"
#: ConfigResource.Type TOPIC, and the one topic config the analysis reads (the `replicas` table's `compacted`)
TOPIC_RESOURCE, CLEANUP_POLICY = 2, "cleanup.policy"
NO_LEADER_CHANGE = -2
NO_LEADER = -1
RECOVERY_STATES = {0: "RECOVERED", 1: "RECOVERING"}
BROKER_EVENTS = ("registered", "unregistered", "fenced", "unfenced", "controlled_shutdown")
