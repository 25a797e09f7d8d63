"""Internal-topic decoders on every real internal record, synthetic bytes for each version, and garbage."""

from __future__ import annotations

import random
import struct
from collections import Counter

from conftest import realdata_files

from kforensics.parsers.internal_topics import (
    decode_cluster_metadata,
    decode_consumer_offsets,
    decode_transaction_state,
)
from kforensics.parsers.record_batch import Record, open_log


def _s(text: str) -> bytes:
    raw = text.encode()
    return struct.pack(">h", len(raw)) + raw


def _cs(text: str) -> bytes:
    raw = text.encode()
    return bytes([len(raw) + 1]) + raw


def _records(*patterns: str):
    for path in [p for pattern in patterns for p in realdata_files(pattern)]:
        with open_log(path) as log:
            for batch in log.batches():
                if batch.is_control:
                    continue
                for rec in log.records(batch):
                    if isinstance(rec, Record):
                        yield path, rec


def test_real_consumer_offsets_and_transaction_state_decode_without_error() -> None:
    types: Counter[str] = Counter()
    for path, rec in _records("__consumer_offsets-*/*.log"):
        d = decode_consumer_offsets(rec.key, rec.value)
        assert "error" not in d, (path, rec.offset, d)
        types[d["key"]["type"]] += 1
    for path, rec in _records("__transaction_state-*/*.log"):
        d = decode_transaction_state(rec.key, rec.value)
        assert "error" not in d, (path, rec.offset, d)
        types["txn:" + (d["value"]["state"] if d["value"] else "tombstone")] += 1
    print(dict(types))
    if realdata_files("__consumer_offsets-*/*.log"):
        assert types["offset_commit"] > 0


def test_real_cluster_metadata_decodes_and_topic_records_name_topics_on_disk() -> None:
    types: Counter[str] = Counter()
    named: dict = {}
    for path, rec in _records("__cluster_metadata-0/*.log", "__cluster_metadata-0/*.checkpoint"):
        d = decode_cluster_metadata(rec.key, rec.value)
        assert "error" not in d and not d["type"].startswith("UNKNOWN"), (path, rec.offset, d)
        types[d["type"]] += 1
        if d["type"] == "TOPIC_RECORD":
            named.setdefault(path.parent.parent, set()).add(d["data"]["name"])
    # The collected disks hold only some partitions, but on each disk at least one partition directory
    # belongs to a topic its own metadata log created.
    # (A controller-only node's log dir holds the metadata log alone: it has no partition to compare.)
    for disk, names in named.items():
        dirs = {p.name.rsplit("-", 1)[0] for p in disk.iterdir() if p.is_dir()} - {"__cluster_metadata"}
        assert names & dirs or not dirs, (disk, sorted(names)[:5])
    print(dict(types))
    if realdata_files("__cluster_metadata-0/*.log"):
        assert types["FEATURE_LEVEL_RECORD"] > 0 and types["TOPIC_RECORD"] > 0


def test_synthetic_offset_commit_values_every_version_and_tombstone() -> None:
    key = struct.pack(">h", 1) + _s("g") + _s("t") + struct.pack(">i", 3)
    bodies = {
        0: struct.pack(">q", 42) + _s("m") + struct.pack(">q", 1000),
        1: struct.pack(">q", 42) + _s("m") + struct.pack(">qq", 1000, 2000),
        2: struct.pack(">q", 42) + _s("m") + struct.pack(">q", 1000),
        3: struct.pack(">qi", 42, 7) + _s("m") + struct.pack(">q", 1000),
        4: struct.pack(">qi", 42, 7) + _cs("m") + struct.pack(">q", 1000) + b"\x01\x05\x02ab",
    }
    for version, body in bodies.items():
        d = decode_consumer_offsets(key, struct.pack(">h", version) + body)
        assert d["key"] == {"type": "offset_commit", "version": 1, "group": "g", "topic": "t", "partition": 3}
        v = d["value"]
        assert (v["offset"], v["metadata"], v["commitTimestamp"]) == (42, "m", 1000), version
        assert v.get("leaderEpoch") == (7 if version >= 3 else None)
        assert v.get("expireTimestamp") == (2000 if version == 1 else None)
    assert decode_consumer_offsets(key, None)["value"] is None


def test_synthetic_transaction_state_v0_and_flexible_v1_with_tags() -> None:
    key = struct.pack(">h", 0) + _s("tx-1")
    common = struct.pack(">qhib", 5000, 3, 60000, 1)
    v0 = struct.pack(">h", 0) + common + struct.pack(">i", 1) + _s("t") + struct.pack(">iii", 2, 0, 1) \
        + struct.pack(">qq", 11, 10)
    d = decode_transaction_state(key, v0)
    assert d["key"]["transactional_id"] == "tx-1"
    assert d["value"]["state"] == "Ongoing" and d["value"]["partitions"] == {"t": [0, 1]}
    assert (d["value"]["producer_id"], d["value"]["producer_epoch"]) == (5000, 3)
    tags = b"\x02" + b"\x00\x08" + struct.pack(">q", 4999) + b"\x02\x02" + struct.pack(">h", 2)
    v1 = struct.pack(">h", 1) + common + b"\x02" + _cs("t") + b"\x02" + struct.pack(">i", 4) + b"\x00" \
        + struct.pack(">qq", 11, 10) + tags
    d = decode_transaction_state(key, v1)
    assert d["value"]["partitions"] == {"t": [4]}
    assert d["value"]["previous_producer_id"] == 4999 and d["value"]["client_transaction_version"] == 2
    assert decode_transaction_state(key, None)["value"] is None


def test_synthetic_cluster_metadata_feature_level() -> None:
    value = bytes([1, 12, 0]) + _cs("metadata.version") + struct.pack(">h", 21) + b"\x00"
    d = decode_cluster_metadata(None, value)
    assert d["type"] == "FEATURE_LEVEL_RECORD" and d["data"]["name"] == "metadata.version"


def test_garbage_gives_error_dicts_never_raises() -> None:
    rng = random.Random(7)
    for _ in range(2000):
        key = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 20)))
        value = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 40)))
        for fn in (decode_consumer_offsets, decode_transaction_state, decode_cluster_metadata):
            assert isinstance(fn(key, value), dict)
    assert "error" in decode_transaction_state(b"\x00", b"")
    assert "error" in decode_cluster_metadata(None, b"\x09")
