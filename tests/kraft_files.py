"""KRaft files written byte by byte after Kafka's JSON schemas, independently of kforensics' tables and writers:
metadata records (RegisterBrokerRecord v4, BrokerRegistrationChangeRecord v3, UnregisterControllerRecord, ...),
KRaft control records (SnapshotHeader, KRaftVersion, Voters, SnapshotFooter) and the zero checkpoint
`00000000000000000000-0000000000.checkpoint` that `kafka-storage format` writes (KIP-853, KIP-1170). Batches are
kafka-python's (data) or packed here (control batches, which kafka-python cannot write), CRC-32C by the `crc32c`
package."""

from __future__ import annotations

import struct

from crc32c import crc32c

ZERO_CHECKPOINT = "00000000000000000000-0000000000.checkpoint"
#: ControlRecordType ids (clients/.../ControlRecordType.java).
SNAPSHOT_HEADER, SNAPSHOT_FOOTER, KRAFT_VERSION, KRAFT_VOTERS = 3, 4, 5, 6


def uvarint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | 0x80 if n else b)
        if not n:
            return bytes(out)


def varint(n: int) -> bytes:
    return uvarint((n << 1) ^ (n >> 63))


def cstr(text: str | None) -> bytes:
    """A compact (nullable) string: uvarint length + 1, 0 for null."""
    if text is None:
        return b"\x00"
    raw = text.encode()
    return uvarint(len(raw) + 1) + raw


def carr(items: list[bytes] | None) -> bytes:
    """A compact array of already encoded elements (null: 0)."""
    return b"\x00" if items is None else uvarint(len(items) + 1) + b"".join(items)


def tags(*fields: tuple[int, bytes]) -> bytes:
    return uvarint(len(fields)) + b"".join(uvarint(t) + uvarint(len(raw)) + raw for t, raw in fields)


NO_TAGS = tags()


def frame(api_key: int, version: int) -> bytes:
    """AbstractApiMessageSerde's frame: frame version 1, apiKey, version (unsigned varints)."""
    return uvarint(1) + uvarint(api_key) + uvarint(version)


# --- metadata records (metadata/src/main/resources/common/metadata/*.json) ----------------------------------------

def endpoint(name: str, host: str, port: int, security_protocol: int) -> bytes:
    return cstr(name) + cstr(host) + struct.pack(">Hh", port, security_protocol) + NO_TAGS


def register_broker_v4(broker_id: int, incarnation: bytes, epoch: int, endpoints: list[bytes], log_dirs: list[bytes],
                       cordoned: list[bytes] | None, *, rack: str | None = None, fenced: bool = True) -> bytes:
    """RegisterBrokerRecord v4: BrokerId, IsMigratingZkBroker (2+), IncarnationId, BrokerEpoch, EndPoints, Features
    (one: metadata.version 7-30), Rack, Fenced, InControlledShutdown (1+); tagged LogDirs (tag 0, 3+) and
    CordonedLogDirs (tag 1, 4+), the latter left out when None."""
    feature = cstr("metadata.version") + struct.pack(">hh", 7, 30) + NO_TAGS
    tagged = [(0, carr(log_dirs))] + ([] if cordoned is None else [(1, carr(cordoned))])
    return (frame(0, 4) + struct.pack(">i?", broker_id, False) + incarnation + struct.pack(">q", epoch)
            + carr(endpoints) + carr([feature]) + cstr(rack) + struct.pack(">??", fenced, False) + tags(*tagged))


def broker_registration_change_v3(broker_id: int, epoch: int, *, fenced: int | None = None,
                                  cordoned: list[bytes] | None = None) -> bytes:
    """BrokerRegistrationChangeRecord v3: BrokerId, BrokerEpoch; tagged Fenced (tag 0, int8) and CordonedLogDirs
    (tag 3) when given."""
    tagged = ([] if fenced is None else [(0, struct.pack(">b", fenced))]) + (
        [] if cordoned is None else [(3, carr(cordoned))])
    return frame(17, 3) + struct.pack(">iq", broker_id, epoch) + tags(*tagged)


def register_controller(controller_id: int, incarnation: bytes, endpoints: list[bytes]) -> bytes:
    """RegisterControllerRecord v0: ControllerId, IncarnationId, ZkMigrationReady, EndPoints, Features (none)."""
    return (frame(27, 0) + struct.pack(">i", controller_id) + incarnation + b"\x00" + carr(endpoints) + carr([])
            + NO_TAGS)


def unregister_controller(controller_id: int) -> bytes:
    """UnregisterControllerRecord v0 (apiKey 29, KIP-1312): ControllerId."""
    return frame(29, 0) + struct.pack(">i", controller_id) + NO_TAGS


def feature_level(name: str, level: int) -> bytes:
    """FeatureLevelRecord v0: Name, FeatureLevel."""
    return frame(12, 0) + cstr(name) + struct.pack(">h", level) + NO_TAGS


# --- KRaft control records (clients/src/main/resources/common/message/*.json) -------------------------------------

def snapshot_header(ts: int) -> bytes:
    return struct.pack(">hq", 0, ts) + NO_TAGS


def snapshot_footer() -> bytes:
    return struct.pack(">h", 0) + NO_TAGS


def kraft_version(level: int) -> bytes:
    return struct.pack(">hh", 0, level) + NO_TAGS


def voter(voter_id: int, directory_id: bytes, endpoints: list[tuple[str, str, int]], lo: int = 0, hi: int = 1) -> bytes:
    """A VotersRecord voter: VoterId, VoterDirectoryId, Endpoints (Name, Host, Port), KRaftVersionFeature."""
    eps = [cstr(name) + cstr(host) + struct.pack(">H", port) + NO_TAGS for name, host, port in endpoints]
    return struct.pack(">i", voter_id) + directory_id + carr(eps) + struct.pack(">hh", lo, hi) + NO_TAGS + NO_TAGS


def voters(*entries: bytes) -> bytes:
    return struct.pack(">h", 0) + carr(list(entries)) + NO_TAGS


# --- batches ------------------------------------------------------------------------------------------------------

def _record(delta: int, key: bytes | None, value: bytes | None) -> bytes:
    def blob(data: bytes | None) -> bytes:
        return varint(-1) if data is None else varint(len(data)) + data

    body = b"\x00" + varint(0) + varint(delta) + blob(key) + blob(value) + varint(0)
    return varint(len(body)) + body


def batch(base_offset: int, records: list[tuple[bytes | None, bytes | None]], *, ts: int, epoch: int = 0,
          control: bool = False) -> bytes:
    """A v2 batch of `records` (key, value) at base_offset.. (attributes 0x20 for a control batch)."""
    body = b"".join(_record(i, k, v) for i, (k, v) in enumerate(records))
    header = struct.pack(">qiibIhiqqqhii", base_offset, 61 - 12 + len(body), epoch, 2, 0, 0x20 if control else 0,
                         len(records) - 1, ts, ts, -1, -1, -1, len(records))
    out = bytearray(header + body)
    struct.pack_into(">I", out, 17, crc32c(bytes(out[21:])))
    return bytes(out)


def control(base_offset: int, records: list[tuple[int, bytes]], *, ts: int, epoch: int = 0) -> bytes:
    """A KRaft control batch: each record's key is (version 0, ControlRecordType id)."""
    return batch(base_offset, [(struct.pack(">hh", 0, t), v) for t, v in records], ts=ts, epoch=epoch, control=True)


def zero_checkpoint(bootstrap: list[bytes], voter_set: bytes | None, *, ts: int, level: int = 1) -> bytes:
    """The zero checkpoint as `kafka-storage format` writes it (RecordsSnapshotWriter): a control batch with the
    SnapshotHeader and, for a dynamic quorum, the KRaftVersion and Voters records; the bootstrap metadata records
    (KIP-1170) in one batch; the SnapshotFooter."""
    head = [(SNAPSHOT_HEADER, snapshot_header(ts))]
    if voter_set is not None:
        head += [(KRAFT_VERSION, kraft_version(level)), (KRAFT_VOTERS, voter_set)]
    out = control(0, head, ts=ts)
    offset = len(head)
    if bootstrap:
        out += batch(offset, [(None, v) for v in bootstrap], ts=ts)
        offset += len(bootstrap)
    return out + control(offset, [(SNAPSHOT_FOOTER, snapshot_footer())], ts=ts)
