"""KRaft control records, the values of the control batches in `__cluster_metadata` logs and snapshots.

Written from apache/kafka `clients/src/main/resources/common/message/{LeaderChangeMessage, SnapshotHeaderRecord,
SnapshotFooterRecord, KRaftVersionRecord, VotersRecord}.json` at trunk commit 1eb76443 (2024-10-25, the 4.0 line:
LeaderChangeMessage 0-1, the others 0). Each value is the message alone, no frame; its first field, `Version`,
is the version it was written at (ControlRecordUtils). The key is (int16 version 0, int16 ControlRecordType id).
"""

from __future__ import annotations

from kforensics.parsers.message_schema import Field as F
from kforensics.parsers.message_schema import Message

_VOTER = (F("VoterId", "int32"), F("VoterDirectoryId", "uuid", "1+"))

#: ControlRecordType name -> message description (ABORT and COMMIT are EndTransactionMarker, read elsewhere).
MESSAGES: dict[str, Message] = {
    # Version 1 adds VoterDirectoryId (KIP-853).
    "LEADER_CHANGE": Message("LeaderChangeMessage", None, "0-1", "0+", (
        F("Version", "int16"), F("LeaderId", "int32"),
        F("Voters", "[]Voter", fields=_VOTER), F("GrantingVoters", "[]Voter", fields=_VOTER),
    )),
    "SNAPSHOT_HEADER": Message("SnapshotHeaderRecord", None, "0", "0+", (
        F("Version", "int16"), F("LastContainedLogTimestamp", "int64"),
    )),
    "SNAPSHOT_FOOTER": Message("SnapshotFooterRecord", None, "0", "0+", (F("Version", "int16"),)),
    "KRAFT_VERSION": Message("KRaftVersionRecord", None, "0", "0+", (
        F("Version", "int16"), F("KRaftVersion", "int16"),
    )),
    "KRAFT_VOTERS": Message("VotersRecord", None, "0", "0+", (
        F("Version", "int16"),
        F("Voters", "[]Voter", fields=(
            F("VoterId", "int32"), F("VoterDirectoryId", "uuid"),
            F("Endpoints", "[]Endpoint", fields=(F("Name", "string"), F("Host", "string"), F("Port", "uint16"))),
            F("KRaftVersionFeature", "KRaftVersionFeature", fields=(
                F("MinSupportedVersion", "int16"), F("MaxSupportedVersion", "int16"))),
        )),
    )),
}

