"""Coordinator records (__consumer_offsets key types 0-23, __transaction_state, __share_group_state), remote log
metadata and KRaft control records through the one schema interpreter: round trips of every record type and
version, truncation at every byte, hand-built bytes, versions newer than the tables, the sample's
__share_group_state partition, `dump --share-group-state-decoder` and `locate --share-group`."""

from __future__ import annotations

import base64
import json
import struct
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import SAMPLE_LOGS
from log_dir_builder import record_batches
from test_message_schema import sample_struct

from kforensics.cli import main
from kforensics.parsers.cluster_metadata import decode_control_record, encode_control_record
from kforensics.parsers.internal_topics import (
    COORDINATOR_RECORDS,
    SHARE_GROUP_STATE,
    CoordinatorRecord,
    decode_consumer_offsets,
    decode_coordinator_record,
    decode_share_group_state,
    decode_transaction_state,
    encode_coordinator_record,
    format_consumer_offsets,
    format_share_group_state,
    format_transaction_state,
)
from kforensics.parsers.message_schema import MessageDecodeError, encode, write_frame
from kforensics.parsers.record_batch import Record, open_log
from kforensics.parsers.remote_log_metadata import decode_remote_log_metadata
from kforensics.parsers.schemas_raft import MESSAGES as CONTROL
from kforensics.parsers.schemas_remote_log import MESSAGES as REMOTE

EXPECTED = json.loads((SAMPLE_LOGS / "EXPECTED.json").read_text())
CASES = [(topic, t, v) for topic, records in COORDINATOR_RECORDS.items() for t, (_, value) in records.items()
         for v in value.versions]


def _s(text: str) -> bytes:
    return struct.pack(">h", len(text)) + text.encode()


def _cs(text: str) -> bytes:
    return bytes([len(text) + 1]) + text.encode()


@pytest.mark.parametrize("topic,record_type,version", CASES, ids=lambda x: str(x))
def test_every_coordinator_record_type_and_version_round_trips(topic: str, record_type: int, version: int) -> None:
    key_message, value_message = COORDINATOR_RECORDS[topic][record_type]
    key = sample_struct(key_message.fields, 0, record_type)
    value = sample_struct(value_message.fields, version, record_type + version)
    k, v = encode_coordinator_record(topic, record_type, key, value, version)
    assert struct.unpack(">h", k[:2])[0] == record_type and struct.unpack(">h", v[:2])[0] == version
    rec = decode_coordinator_record(topic, k, v)
    assert rec == CoordinatorRecord(topic, record_type, key_message.name, key, value_message.name, version, value,
                                    False, value_message.valid)
    tombstone = decode_coordinator_record(topic, k, None)
    assert tombstone.value is None and tombstone.key == key
    for cut in range(len(k)):
        with pytest.raises(MessageDecodeError):
            decode_coordinator_record(topic, k[:cut], v)
    for cut in range(len(v)):
        try:
            cut_rec = decode_coordinator_record(topic, k, v[:cut])
        except MessageDecodeError:
            continue
        # a cut value of a layout changed in place can be whole bytes of the older layout: it is read as that
        # one, and says so (Kafka 4.0's ShareGroupMetadataValue is the 4.1 value without its MetadataHash)
        assert cut_rec.layout and value_message.older, (cut, cut_rec)


OLDER = [(topic, t, layout) for topic, records in COORDINATOR_RECORDS.items() for t, (_, value) in records.items()
         for layout in value.older]


@pytest.mark.parametrize("topic,record_type,layout", OLDER, ids=lambda x: getattr(x, "written_by", str(x)))
def test_every_older_layout_round_trips_and_is_named(topic: str, record_type: int, layout) -> None:
    """A value written in an older layout of its version (Kafka 4.0's share records) reads as that layout, named."""
    key_message, value_message = COORDINATOR_RECORDS[topic][record_type]
    key = sample_struct(key_message.fields, 0, record_type)
    for version in layout.versions:
        value = sample_struct(layout.fields, version, record_type)
        k, _ = encode_coordinator_record(topic, record_type, key, None)
        v = struct.pack(">h", version) + encode(layout, version, value)
        rec = decode_coordinator_record(topic, k, v)
        assert rec == CoordinatorRecord(topic, record_type, key_message.name, key, value_message.name, version, value,
                                        False, value_message.valid, layout=layout.written_by)
        assert rec.layout == "Kafka 4.0"


@pytest.mark.parametrize("message,version", [(m, v) for m in REMOTE for v in m.versions], ids=str)
def test_every_remote_log_metadata_record_and_version_round_trips(message, version) -> None:
    data = sample_struct(message.fields, version, version)
    state = "remotePartitionDeleteState" if message.api_key == 2 else "remoteLogSegmentState"
    data[state] = 1
    raw = write_frame(message.api_key, version) + encode(message, version, data)
    decoded = decode_remote_log_metadata(None, raw)
    assert decoded == {"type": message.name, "apiKey": message.api_key, "version": version, "data": data}
    for cut in range(len(raw)):
        assert "error" in decode_remote_log_metadata(None, raw[:cut])


@pytest.mark.parametrize("control_type", sorted(CONTROL))
def test_every_kraft_control_record_round_trips(control_type: str) -> None:
    message = CONTROL[control_type]
    for version in message.versions:
        data = {**sample_struct(message.fields, version, version), "version": version}
        raw = encode_control_record(control_type, data)
        rec = decode_control_record(control_type, raw)
        assert (rec.type_name, rec.version, rec.data, rec.newer) == (control_type, version, data, False)
        for cut in range(len(raw)):
            with pytest.raises(MessageDecodeError):
                decode_control_record(control_type, raw[:cut])


def test_hand_built_share_update_offset_commit_and_transaction_values() -> None:
    """Bytes written by hand after Kafka's schemas, independent of the encoder."""
    topic_id = bytes(range(16))
    key = struct.pack(">h", 1) + _s("sg") + topic_id + struct.pack(">i", 3)
    batch = struct.pack(">qqbh", 10, 19, 2, 1) + b"\x00"
    value = (struct.pack(">hiiq", 0, 4, 5, 10) + b"\x02" + batch
             + b"\x01" + b"\x00\x04" + struct.pack(">i", 7))  # tagged DeliveryCompleteCount (tag 0) = 7
    d = decode_share_group_state(key, value)
    assert d["key"] == {"type": "share_update", "version": 1, "groupId": "sg",
                        "topicId": base64.urlsafe_b64encode(topic_id).decode().rstrip("="), "partition": 3}
    assert d["value"] == {"version": 0, "snapshotEpoch": 4, "leaderEpoch": 5, "startOffset": 10,
                          "deliveryCompleteCount": 7, "stateBatches": [
                              {"firstOffset": 10, "lastOffset": 19, "deliveryState": 2, "deliveryCount": 1}]}
    k, v = encode_coordinator_record(SHARE_GROUP_STATE, 1, {"groupId": "sg", "topicId": d["key"]["topicId"],
                                                            "partition": 3}, {k: x for k, x in d["value"].items()
                                                                              if k != "version"})
    assert (k, v) == (key, value)
    # OffsetCommitValue v4 (flexible) and a ConsumerGroupMemberMetadata key (type 5): group id read as a classic
    # string, as every key is (the old decoder read a compact string from type 10 on)
    commit = struct.pack(">hqi", 4, 42, 7) + _cs("m") + struct.pack(">q", 1000) + b"\x00"
    d = decode_consumer_offsets(struct.pack(">h", 1) + _s("g") + _s("t") + struct.pack(">i", 0), commit)
    assert d["value"] == {"version": 4, "offset": 42, "leaderEpoch": 7, "metadata": "m", "commitTimestamp": 1000}
    d = decode_consumer_offsets(struct.pack(">h", 5) + _s("grp") + _s("member-1"), None)
    assert d["key"] == {"type": "consumer_group_member_metadata", "version": 5, "groupId": "grp",
                        "memberId": "member-1", "group": "grp"}
    d = decode_consumer_offsets(struct.pack(">h", 10) + _s("share-g") + _s("m"), None)
    assert d["key"]["group"] == "share-g" and d["key"]["type"] == "share_group_member_metadata"
    # TransactionLogValue v1 with NextProducerId (tag 1)
    v1 = (struct.pack(">hqhib", 1, 5000, 3, 60000, 0) + b"\x01" + struct.pack(">qq", 11, 10)
          + b"\x01" + b"\x01\x08" + struct.pack(">q", 5001))
    t = decode_transaction_state(struct.pack(">h", 0) + _s("tx"), v1)
    assert t["value"]["next_producer_id"] == 5001 and t["value"]["partitions"] == {}
    assert format_transaction_state(struct.pack(">h", 0) + _s("tx"), v1, 3) == (
        '{"type":"0","data":{"transactionalId":"tx"}}',
        '{"version":"1","data":{"producerId":5000,"nextProducerId":5001,"producerEpoch":3,"transactionTimeoutMs":60000,'
        '"transactionStatus":"Empty","transactionPartitions":[],"transactionLastUpdateTimestampMs":11,'
        '"transactionStartTimestampMs":10}}')


# --- bytes written by hand after Kafka 4.0 / 4.1 / 4.2's JSON schemas (an encoding of the test's own) ---------------

def _uv(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    return bytes(out + bytes([n]))


def _cstr(text: str) -> bytes:
    """A compact string: uvarint length + 1, then UTF-8."""
    raw = text.encode()
    return _uv(len(raw) + 1) + raw


def _carr(*items: bytes) -> bytes:
    """A compact array: uvarint count + 1, then the elements."""
    return _uv(len(items) + 1) + b"".join(items)


def _i32s(*values: int) -> bytes:
    return _carr(*(struct.pack(">i", v) for v in values))


def _tags(*fields: tuple[int, bytes]) -> bytes:
    """A tagged-field section: uvarint count, then per field uvarint tag, uvarint size, the bytes."""
    return _uv(len(fields)) + b"".join(_uv(tag) + _uv(len(raw)) + raw for tag, raw in fields)


NO_TAGS = _tags()
UUID_A, UUID_B, UUID_C = bytes(range(16)), bytes(range(16, 32)), bytes(range(32, 48))


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _value(key: bytes, value: bytes, topic: str = "__consumer_offsets") -> CoordinatorRecord:
    return decode_coordinator_record(topic, key, value)


def test_share_group_metadata_value_of_kafka_4_1_and_of_kafka_4_0() -> None:
    """ShareGroupMetadataValue (type 11) v0: Epoch, MetadataHash in 4.1+; Epoch alone in 4.0 (changed in place)."""
    key = struct.pack(">h", 11) + _s("sg")
    v41 = struct.pack(">hiq", 0, 5, 0x0102030405060708) + NO_TAGS
    rec = _value(key, v41)
    assert (rec.value, rec.layout) == ({"epoch": 5, "metadataHash": 0x0102030405060708}, "")
    assert format_consumer_offsets(key, v41, 0)[1] == (
        '{"version":"0","data":{"epoch":5,"metadataHash":72623859790382856}}')
    v40 = struct.pack(">hi", 0, 5) + NO_TAGS
    rec = _value(key, v40)
    assert (rec.value, rec.layout, rec.newer) == ({"epoch": 5}, "Kafka 4.0", False)
    assert decode_consumer_offsets(key, v40)["layout"] == "Kafka 4.0"
    assert format_consumer_offsets(key, v40, 0)[1] == '{"version":"0","data":{"epoch":5}}'
    # bytes that read as neither layout give the current layout's error
    with pytest.raises(MessageDecodeError, match="int64"):
        _value(key, struct.pack(">hih", 0, 5, 1))


def test_share_group_state_partition_metadata_value_of_kafka_4_1_and_of_kafka_4_0() -> None:
    """ShareGroupStatePartitionMetadataValue (type 15) v0: 4.1+ puts InitializingTopics before InitializedTopics and
    DeletingTopics; 4.0 has the last two only."""
    key = struct.pack(">h", 15) + _s("sg")

    def partitions_info(topic_id: bytes, name: str, *partitions: int) -> bytes:  # TopicPartitionsInfo
        return topic_id + _cstr(name) + _i32s(*partitions) + NO_TAGS

    def topic_info(topic_id: bytes, name: str) -> bytes:  # TopicInfo
        return topic_id + _cstr(name) + NO_TAGS

    initializing = {"topicId": _b64url(UUID_A), "topicName": "orders", "partitions": [0, 1]}
    initialized = {"topicId": _b64url(UUID_B), "topicName": "audit", "partitions": [2]}
    deleting = {"topicId": _b64url(UUID_C), "topicName": "old"}
    v41 = (struct.pack(">h", 0) + _carr(partitions_info(UUID_A, "orders", 0, 1))
           + _carr(partitions_info(UUID_B, "audit", 2)) + _carr(topic_info(UUID_C, "old")) + NO_TAGS)
    rec = _value(key, v41)
    assert rec.layout == "" and rec.value == {"initializingTopics": [initializing], "initializedTopics": [initialized],
                                              "deletingTopics": [deleting]}
    v40 = struct.pack(">h", 0) + _carr(partitions_info(UUID_B, "audit", 2)) + _carr(topic_info(UUID_C, "old")) + NO_TAGS
    rec = _value(key, v40)
    assert rec.layout == "Kafka 4.0" and rec.value == {"initializedTopics": [initialized], "deletingTopics": [deleting]}
    empty40 = struct.pack(">h", 0) + _carr() + _carr() + NO_TAGS
    assert _value(key, empty40).value == {"initializedTopics": [], "deletingTopics": []}
    assert _value(key, empty40).layout == "Kafka 4.0"


def test_streams_group_metadata_value_of_kafka_4_1_and_4_2() -> None:
    """StreamsGroupMetadataValue (type 17) v0: Epoch, MetadataHash (4.1), and 4.2's tagged ValidatedTopologyEpoch
    (tag 0, default -1) and nullable LastAssignmentConfigs (tag 1, default null)."""
    key = struct.pack(">h", 17) + _s("streams")
    v41 = struct.pack(">hiq", 0, 3, 99) + NO_TAGS
    rec = _value(key, v41)
    assert (rec.value, rec.layout, rec.unknown_tags) == ({"epoch": 3, "metadataHash": 99}, "", ())
    configs = _carr(_cstr("num.standby.replicas") + _cstr("1") + NO_TAGS)
    v42 = struct.pack(">hiq", 0, 3, 99) + _tags((0, struct.pack(">i", 2)), (1, configs))
    rec = _value(key, v42)
    assert rec.value == {"epoch": 3, "metadataHash": 99, "validatedTopologyEpoch": 2,
                         "lastAssignmentConfigs": [{"key": "num.standby.replicas", "value": "1"}]}
    assert format_consumer_offsets(key, v42, 0)[1] == (
        '{"version":"0","data":{"epoch":3,"metadataHash":99,"validatedTopologyEpoch":2,'
        '"lastAssignmentConfigs":[{"key":"num.standby.replicas","value":"1"}]}}')
    # LastAssignmentConfigs written as null is its default: not printed
    assert _value(key, struct.pack(">hiq", 0, 3, 99) + _tags((1, b"\x00"))).value == {"epoch": 3, "metadataHash": 99}


def test_streams_group_current_member_assignment_value_has_assignment_epochs() -> None:
    """StreamsGroupCurrentMemberAssignmentValue (type 22) of Kafka 4.2: each TaskIds carries the tagged
    AssignmentEpochs (tag 0, nullable, default null)."""
    key = struct.pack(">h", 22) + _s("streams") + _s("member-1")
    active = _cstr("0") + _i32s(0, 1) + _tags((0, _i32s(7, 8)))
    standby = _cstr("1") + _i32s(2) + NO_TAGS
    value = (struct.pack(">hiib", 0, 10, 9, 0) + _carr(active) + _carr(standby) + _carr() + _carr() + _carr()
             + _carr() + NO_TAGS)
    rec = _value(key, value)
    assert rec.unknown_tags == ()
    assert rec.value == {"memberEpoch": 10, "previousMemberEpoch": 9, "state": 0,
                         "activeTasks": [{"subtopologyId": "0", "partitions": [0, 1], "assignmentEpochs": [7, 8]}],
                         "standbyTasks": [{"subtopologyId": "1", "partitions": [2]}], "warmupTasks": [],
                         "activeTasksPendingRevocation": [], "standbyTasksPendingRevocation": [],
                         "warmupTasksPendingRevocation": []}


COMMIT_KEY = struct.pack(">h", 1) + _s("g") + _s("orders") + struct.pack(">i", 0)
COMMIT_V4_WITH_TOPIC_ID = struct.pack(">hqi", 4, 42, 7) + _cstr("m") + struct.pack(">q", 1000) + _tags((0, UUID_A))
COMMIT_V4_PAYLOAD = ('{"version":"4","data":{"offset":42,"leaderEpoch":7,"metadata":"m","commitTimestamp":1000,'
                     '"topicId":"AAECAwQFBgcICQoLDA0ODw"}}')


def test_offset_commit_value_v4_topic_id() -> None:
    """OffsetCommitValue v4's tagged topicId (Kafka 4.1+, tag 0): printed as Uuid.toString (base64url), and, as
    JsonConverter does, only when it is not the zero uuid."""
    rec = _value(COMMIT_KEY, COMMIT_V4_WITH_TOPIC_ID)
    assert rec.value["topicId"] == _b64url(UUID_A) == "AAECAwQFBgcICQoLDA0ODw" and rec.unknown_tags == ()
    assert format_consumer_offsets(COMMIT_KEY, COMMIT_V4_WITH_TOPIC_ID, 0) == (
        '{"type":"1","data":{"group":"g","topic":"orders","partition":0}}', COMMIT_V4_PAYLOAD)
    zero = struct.pack(">hqi", 4, 42, 7) + _cstr("m") + struct.pack(">q", 1000) + _tags((0, bytes(16)))
    assert "topicId" not in _value(COMMIT_KEY, zero).value


def test_dump_offsets_decoder_prints_the_topic_id_as_kafka_dump_log(tmp_path: Path) -> None:
    path = _log(tmp_path, [(COMMIT_KEY, COMMIT_V4_WITH_TOPIC_ID)], "__consumer_offsets-0")
    result = CliRunner().invoke(main, ["dump", "--offsets-decoder", str(path)])
    assert result.exit_code == 0, result.output
    assert ('key: {"type":"1","data":{"group":"g","topic":"orders","partition":0}} payload: ' + COMMIT_V4_PAYLOAD
            in result.stdout)
    result = CliRunner().invoke(main, ["dump", "--offsets-decoder", "--json", str(path)])
    record = next(json.loads(line) for line in result.stdout.splitlines() if json.loads(line)["type"] == "record")
    assert record["decoded"]["value"] == json.loads(COMMIT_V4_PAYLOAD)


def test_transaction_log_value_next_producer_epoch_in_kafka_order() -> None:
    """TransactionLogValue v1 with NextProducerId (tag 1) and NextProducerEpoch (tag 3, Kafka 4.1+): printed in
    Kafka's declaration order, NextProducerEpoch right after ProducerEpoch, and the status by its state's name in
    its place, as kafka-dump-log 4.4 prints it."""
    key = struct.pack(">h", 0) + _s("tx")
    value = (struct.pack(">hqhib", 1, 5000, 3, 60000, 4) + _carr(_cstr("orders") + _i32s(0, 2) + NO_TAGS)
             + struct.pack(">qq", 11, 10) + _tags((1, struct.pack(">q", 5001)), (3, struct.pack(">h", 0))))
    assert format_transaction_state(key, value, 0) == (
        '{"type":"0","data":{"transactionalId":"tx"}}',
        '{"version":"1","data":{"producerId":5000,"nextProducerId":5001,"producerEpoch":3,"nextProducerEpoch":0,'
        '"transactionTimeoutMs":60000,"transactionStatus":"CompleteCommit","transactionPartitions":[{"topic":"orders",'
        '"partitionIds":[0,2]}],"transactionLastUpdateTimestampMs":11,"transactionStartTimestampMs":10}}')
    v = decode_transaction_state(key, value)["value"]
    assert (v["state"], v["next_producer_id"], v["next_producer_epoch"], v["partitions"]) == (
        "CompleteCommit", 5001, 0, {"orders": [0, 2]})


def test_share_group_state_values_of_kafka_4_0(tmp_path: Path) -> None:
    """__share_group_state as Kafka 4.0 wrote it: SnapshotEpoch a uint16, no Create/WriteTimestamp (the values were
    changed in place at version 0 in 4.1)."""
    key = struct.pack(">h", 0) + _s("sg") + UUID_A + struct.pack(">i", 3)
    batch = struct.pack(">qqbh", 40, 49, 2, 1) + NO_TAGS
    batch_json = {"firstOffset": 40, "lastOffset": 49, "deliveryState": 2, "deliveryCount": 1}
    snapshot40 = struct.pack(">hHiiq", 0, 65535, 1, 2, 40) + _carr(batch) + NO_TAGS
    rec = _value(key, snapshot40, SHARE_GROUP_STATE)
    assert (rec.key_name, rec.layout) == ("ShareSnapshotKey", "Kafka 4.0")
    assert rec.value == {"snapshotEpoch": 65535, "stateEpoch": 1, "leaderEpoch": 2, "startOffset": 40,
                         "stateBatches": [batch_json]}
    assert format_share_group_state(key, snapshot40, 0)[1] == (
        '{"version":"0","data":{"snapshotEpoch":65535,"stateEpoch":1,"leaderEpoch":2,"startOffset":40,'
        '"stateBatches":[{"firstOffset":40,"lastOffset":49,"deliveryState":2,"deliveryCount":1}]}}')
    update_key = struct.pack(">h", 1) + key[2:]
    update40 = struct.pack(">hHiq", 0, 4, 2, 40) + _carr(batch) + NO_TAGS
    d = decode_share_group_state(update_key, update40)
    assert d["layout"] == "Kafka 4.0" and d["value"] == {"version": 0, "snapshotEpoch": 4, "leaderEpoch": 2,
                                                         "startOffset": 40, "stateBatches": [batch_json]}
    # dump: the text is kafka-dump-log's; --json names the layout
    path = _log(tmp_path, [(key, snapshot40)], "__share_group_state-0")
    text = CliRunner().invoke(main, ["dump", "--share-group-state-decoder", str(path)]).stdout
    assert "payload: " + format_share_group_state(key, snapshot40, 0)[1] in text
    lines = CliRunner().invoke(main, ["dump", "--share-group-state-decoder", "--json", str(path)]).stdout.splitlines()
    record = next(json.loads(line) for line in lines if json.loads(line)["type"] == "record")
    assert record["decoded"]["layout"] == "Kafka 4.0" and record["decoded"]["value"]["data"]["snapshotEpoch"] == 65535
    # the same snapshot as Kafka 4.1+ writes it reads as the current layout
    snapshot41 = (struct.pack(">hiiiq", 0, 65535, 1, 2, 40) + struct.pack(">qq", 7, 8) + _carr(batch) + NO_TAGS)
    rec = _value(key, snapshot41, SHARE_GROUP_STATE)
    assert rec.layout == "" and rec.value == {"snapshotEpoch": 65535, "stateEpoch": 1, "leaderEpoch": 2,
                                              "startOffset": 40, "createTimestamp": 7, "writeTimestamp": 8,
                                              "stateBatches": [batch_json]}


def test_consumer_protocol_of_a_classic_group_is_decoded_as_kafka_dump_log_does() -> None:
    from kforensics.parsers.schemas_group import CONSUMER_PROTOCOL_ASSIGNMENT, CONSUMER_PROTOCOL_SUBSCRIPTION

    sub = struct.pack(">h", 1) + encode(CONSUMER_PROTOCOL_SUBSCRIPTION, 1, {"topics": ["orders"], "userData": None,
                                                                             "ownedPartitions": []})
    assign = struct.pack(">h", 0) + encode(CONSUMER_PROTOCOL_ASSIGNMENT, 0, {"assignedPartitions": [
        {"topic": "orders", "partitions": [0, 1]}], "userData": None})
    member = {"memberId": "m", "clientId": "c", "clientHost": "/h", "rebalanceTimeout": 1, "sessionTimeout": 2,
              "subscription": base64.b64encode(sub).decode(), "assignment": base64.b64encode(assign).decode()}
    k, v = encode_coordinator_record("__consumer_offsets", 2, {"group": "g"}, {
        "protocolType": "consumer", "generation": 1, "protocol": "range", "leader": "m",
        "currentStateTimestamp": 5, "members": [member]}, 3)
    _, payload = format_consumer_offsets(k, v, 0)
    printed = json.loads(payload)["data"]["members"][0]
    assert printed["subscription"] == {"topics": ["orders"], "userData": None, "ownedPartitions": []}
    assert printed["assignment"] == {"assignedPartitions": [{"topic": "orders", "partitions": [0, 1]}],
                                     "userData": None}


def test_newer_record_types_and_versions_are_newer_not_damage() -> None:
    key = struct.pack(">h", 1) + _s("g") + _s("t") + struct.pack(">i", 0)
    # OffsetCommitValue v7: flexible, read as v4 (a tag the table does not know is kept aside)
    value = struct.pack(">hqi", 7, 42, 7) + _cs("m") + struct.pack(">q", 1000) + b"\x01\x05\x01\x09"
    d = decode_consumer_offsets(key, value)
    assert d["newer"] and d["known_versions"] == "0-4" and d["value"]["offset"] == 42
    rec = decode_coordinator_record("__consumer_offsets", key, value)
    assert rec.unknown_tags == ({"path": ".", "tag": 5, "data": "CQ=="},)
    # a record type past the known ones (a newer Kafka's): newer, with nothing decoded
    unknown = struct.pack(">h", 40) + _s("g")
    d = decode_consumer_offsets(unknown, b"\x00\x00")
    assert d["newer"] and d["key"]["type"] == "unknown" and d["key"]["version"] == 40
    assert format_consumer_offsets(unknown, b"\x00\x00", 9) == ("Unknown record type 40 at offset 9, skipping.", None)
    # a TransactionLogValue v2 whose non-tagged fields changed: newer, fields not guessed
    t = decode_transaction_state(struct.pack(">h", 0) + _s("tx"), struct.pack(">h", 2) + b"\x01\x02")
    assert t["newer"] and t["value"] == {"version": 2}
    # ...but a classic (non-flexible) version below the known ones is damage
    assert "error" in decode_transaction_state(struct.pack(">h", 0) + _s("tx"), struct.pack(">h", -1) + b"\x00")


def _log(tmp_path: Path, kvs: list[tuple[bytes, bytes | None]], name: str) -> Path:
    part = tmp_path / name
    part.mkdir()
    path = part / "00000000000000000000.log"
    path.write_bytes(record_batches(kvs))
    return path


def test_dump_reports_a_newer_version_once_and_decodes_what_it_can(tmp_path: Path) -> None:
    key = struct.pack(">h", 1) + _s("g") + _s("t") + struct.pack(">i", 0)
    value = struct.pack(">hqi", 7, 42, 7) + _cs("m") + struct.pack(">q", 1000) + b"\x00"
    path = _log(tmp_path, [(key, value), (key, value), (struct.pack(">h", 1) + b"\x00", value)], "__consumer_offsets-0")
    result = CliRunner().invoke(main, ["dump", "--offsets-decoder", "--json", str(path)])
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    findings = [line for line in lines if line["type"] == "finding"]
    assert [(f["kind"], f.get("version")) for f in findings] == [
        ("internal_record_newer_version", 7), ("internal_record_undecodable", None)]
    assert findings[0]["record_type"] == "OffsetCommitValue" and findings[0]["known_versions"] == "0-4"
    records = [line for line in lines if line["type"] == "record"]
    assert records[0]["decoded"] == {"record_type": "offset_commit", "key": {"type": "1", "data": {"group": "g", "topic": "t", "partition": 0}},
                                     "value": {"version": "7", "data": {"offset": 42, "leaderEpoch": 7,
                                                                        "metadata": "m", "commitTimestamp": 1000}}}
    assert "error" in records[2]["decoded"]
    assert result.exit_code == 1  # the undecodable record is a warning; the newer version alone would be info


def _sample_share_partition() -> tuple[str, dict]:
    parts = EXPECTED["brokers"]["broker-1"]["partitions"]
    name = next(n for n in parts if n.startswith("__share_group_state-"))
    return name, parts[name]


def test_sample_share_group_state_decodes_to_the_expected_records() -> None:
    name, facts = _sample_share_partition()
    expected = facts["share_group_state"]
    with open_log(SAMPLE_LOGS / "broker-1" / name / "00000000000000000000.log") as log:
        got = [decode_coordinator_record(SHARE_GROUP_STATE, r.key, r.value)
               for b in log.batches() for r in log.records(b) if isinstance(r, Record)]
    assert [(r.record_type, r.key, r.value_version, r.value) for r in got] == [
        (e["record_type"], e["key"], e["value_version"], e["value"]) for e in expected]
    assert [r.key_name for r in got] == ["ShareSnapshotKey", "ShareUpdateKey", "ShareUpdateKey", "ShareSnapshotKey"]
    # the tagged DeliveryCompleteCount: printed where written (10, and 0 which differs from the default -1)
    assert [r.value.get("deliveryCompleteCount") for r in got] == [None, 10, None, 0]
    result = CliRunner().invoke(main, ["dump", "--share-group-state-decoder", str(SAMPLE_LOGS / "broker-1" / name)])
    assert result.exit_code == 0, result.output
    assert ('key: {"type":"1","data":{"groupId":"orders-share","topicId":"' + expected[0]["key"]["topicId"]
            + '","partition":0}} payload: {"version":"0","data":{"snapshotEpoch":0,"leaderEpoch":0,"startOffset":40,'
            '"deliveryCompleteCount":10,"stateBatches":[{"firstOffset":40,"lastOffset":49,"deliveryState":2,'
            '"deliveryCount":1},{"firstOffset":50,"lastOffset":59,"deliveryState":0,"deliveryCount":2}]}}') \
        in result.output
    key, value = format_share_group_state(None, None, 5)
    assert key.startswith("Error at offset 5, skipping.") and value is None


def test_locate_share_group_finds_the_sample_partition() -> None:
    name, facts = _sample_share_partition()
    key = facts["share_group_state"][0]["key"]
    result = CliRunner().invoke(main, ["locate", "--share-group", key["groupId"], "--topic-id", key["topicId"],
                                       "--partition", str(key["partition"]), "--json", f"b1={SAMPLE_LOGS / 'broker-1'}"])
    assert result.exit_code == 0, result.output
    row = json.loads(result.stdout)
    assert row["id"] == f"{key['groupId']}:{key['topicId']}:0" and row["topic"] == "__share_group_state"
    assert f"__share_group_state-{row['partition']}" == name
    assert row["found"] == [{"broker": "b1", "path": str(SAMPLE_LOGS / "broker-1" / name)}]
    # the topic id in its hex UUID form is the same key
    hex_id = str(__import__("uuid").UUID(bytes=base64.urlsafe_b64decode(key["topicId"] + "==")))
    again = CliRunner().invoke(main, ["locate", "--share-group", key["groupId"], "--topic-id", hex_id,
                                      "--partition", "0", "--json"])
    assert json.loads(again.stdout)["partition"] == row["partition"]
    bad = CliRunner().invoke(main, ["locate", "--share-group", "g", "--partition", "0"])
    assert bad.exit_code == 2 and "--topic-id" in bad.output


def test_garbage_never_raises_anything_but_a_decode_error() -> None:
    import random

    rng = random.Random(11)
    for _ in range(3000):
        key = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 24)))
        value = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 48)))
        for topic in COORDINATOR_RECORDS:
            try:
                decode_coordinator_record(topic, key, value)
            except MessageDecodeError:
                pass
        assert isinstance(decode_share_group_state(key, value), dict)
        assert isinstance(decode_remote_log_metadata(None, b"\x01" + value), dict)
        for control_type in CONTROL:
            try:
                decode_control_record(control_type, value)
            except MessageDecodeError:
                pass


def test_scan_executor_reports_a_newer_version_once_and_keeps_the_commit(tmp_path: Path, spark) -> None:
    """spark/read.py internal_rows on a __consumer_offsets segment holding OffsetCommitValue v7 (newer): one
    internal_record_newer_version per task, the commits still rows; first_newer_version keeps one per topic,
    record type and version across tasks."""
    import pyarrow as pa

    from kforensics.spark import schemas as S
    from kforensics.spark.read import first_newer_version, internal_rows

    key = struct.pack(">h", 1) + _s("g") + _s("orders") + struct.pack(">i", 0)
    value = struct.pack(">hqi", 7, 42, 7) + _cs("m") + struct.pack(">q", 1000) + b"\x00"
    path = _log(tmp_path, [(key, value), (key, value)], "__consumer_offsets-0")
    task = {"task_kind": "segment", "broker": "b1", "topic": "__consumer_offsets", "partition": 0, "path": str(path),
            "base_offset": 0}
    tasks = [pa.RecordBatch.from_pylist([task], schema=S.TASKS), pa.RecordBatch.from_pylist([task], schema=S.TASKS)]
    rows = [r for batch in internal_rows(iter(tasks)) for r in batch.to_pylist()]
    findings = [r for r in rows if r["row_kind"] == "finding"]
    commits = [r for r in rows if r["row_kind"] == "commit"]
    assert [(f["kind"], f["severity"]) for f in findings] == [("internal_record_newer_version", "info")] * 2
    assert json.loads(findings[0]["details"]) == {"offset": 0, "record_type": "OffsetCommitValue", "api_key": 1,
                                                  "version": 7, "known_versions": "0-4"}
    assert [(c["group_id"], c["committed_offset"], c["committed_leader_epoch"]) for c in commits] == [
        ("g", 42, 7)] * 4
    frame = spark.createDataFrame([tuple(f[n] for n in S.FINDINGS.names) for f in findings], S.ddl(S.FINDINGS))
    assert first_newer_version(frame).count() == 1


def test_real_kraft_control_records_print_as_kafka_dump_log_4_prints_them(realdata: Path) -> None:
    snapshot = (realdata / "ronem123-rupia-kraft" / "kafka-logs" / "__cluster_metadata-0"
                / "00000000000000852953-0000000001.checkpoint")
    log = realdata / "christseng89-realtime-kraft" / "kafka-logs" / "__cluster_metadata-0" / "00000000000000000000.log"
    if not snapshot.is_file() or not log.is_file():
        pytest.skip("the real KRaft files are not in ../shared/realdata")
    out = CliRunner().invoke(main, ["dump", "--deep-iteration", str(snapshot), str(log)]).stdout
    assert "headerKeys: [] SnapshotHeader {\"version\":0,\"lastContainedLogTimestamp\":1766484200285}" in out
    assert "headerKeys: [] KRaftVersion {\"version\":0,\"kRaftVersion\":1}" in out
    assert ('KRaftVoters {"version":0,"voters":[{"voterId":1,"voterDirectoryId":"yYuMrFRVQVSX0VVQPcMSrA",'
            '"endpoints":[{"name":"CONTROLLER","host":"localhost","port":9093}],'
            '"kRaftVersionFeature":{"minSupportedVersion":0,"maxSupportedVersion":1}}]}') in out
    assert ('LeaderChange: {"version":0,"leaderId":1,"voters":[{"voterId":1}],"grantingVoters":[{"voterId":1}]}'
            in out)
    assert "SnapshotFooter {\"version\":0}" in out and "controlType:" not in out


def test_scan_metadata_rows_report_newer_versions_and_keep_unreadable_ones_out_of_the_replay(tmp_path: Path) -> None:
    """spark/metadata_records.py metadata_record_rows (the scan's __cluster_metadata executor, called here on a hand-built
    Arrow task batch, no Spark): one internal_record_newer_version per record type and version; a newer
    PartitionChangeRecord that reads as version 2 is replayed as read; one whose fields do not read is left out of
    the replay and its finding says so; a newer EndTransactionRecord still applies (the replay reads only its type);
    an unreadable last record keeps the file's end offset with a null record_type."""
    import pyarrow as pa

    from kforensics.spark import schemas as S
    from kforensics.spark.metadata_records import metadata_record_rows

    change_v9 = bytes([1, 5, 9]) + struct.pack(">i", 0) + UUID_A + _tags((1, struct.pack(">i", 2)))  # Leader 2
    change_v10 = bytes([1, 5, 10]) + struct.pack(">i", 0) + UUID_A + struct.pack(">i", 99) + NO_TAGS
    end_txn_v1 = bytes([1, 24, 1]) + b"\x05" + NO_TAGS  # a non-tagged field before the tag section
    partition_v7 = bytes([1, 3, 7]) + b"\x00"
    values = [change_v9, change_v9, change_v10, end_txn_v1, partition_v7]
    path = _log(tmp_path, [(None, v) for v in values], "__cluster_metadata-0")
    task = {"task_kind": "segment", "broker": "b1", "topic": "__cluster_metadata", "partition": 0, "path": str(path),
            "base_offset": 0}
    rows = [r for batch in metadata_record_rows(iter([pa.RecordBatch.from_pylist([task], schema=S.TASKS)]))
            for r in batch.to_pylist()]
    findings = [r for r in rows if r["row_kind"] == "finding"]
    records = [r for r in rows if r["row_kind"] == "record"]
    assert [(f["kind"], f["severity"], f["record_index"]) for f in findings] == [
        ("internal_record_newer_version", "info", offset) for offset in (0, 2, 3, 4)]
    details = [json.loads(f["details"]) for f in findings]
    assert details[0] == {"offset": 0, "record_type": "PARTITION_CHANGE_RECORD", "api_key": 5, "version": 9,
                          "known_versions": "0-2"}
    assert details[1] == {"offset": 2, "record_type": "PARTITION_CHANGE_RECORD", "api_key": 5, "version": 10,
                          "known_versions": "0-2", "fields_read": False}
    assert "none are decoded" in findings[1]["message"] and "leaves every such record out" in findings[1]["message"]
    assert "leader and partition epochs" in findings[1]["message"]
    assert (details[2]["record_type"], details[2]["fields_read"]) == ("END_TRANSACTION_RECORD", False)
    assert "still applies it" in findings[2]["message"]
    assert (details[3]["record_type"], details[3]["fields_read"]) == ("PARTITION_RECORD", False)
    assert [(r["record_index"], r["record_type"], r["version"]) for r in records] == [
        (0, "PARTITION_CHANGE_RECORD", 9), (1, "PARTITION_CHANGE_RECORD", 9), (3, "END_TRANSACTION_RECORD", 1),
        (4, None, 7)]
    assert [(r["topic_id"], r["partition"], r["leader"]) for r in records[:2]] == [(_b64url(UUID_A), 0, 2)] * 2
    # dump --cluster-metadata-decoder reports the same findings
    lines = [json.loads(line) for line in CliRunner().invoke(
        main, ["dump", "--cluster-metadata-decoder", "--json", str(path)]).stdout.splitlines()]
    assert [(f["record_type"], f["version"], f.get("fields_read")) for f in lines if f["type"] == "finding"] == [
        ("PARTITION_CHANGE_RECORD", 9, None), ("PARTITION_CHANGE_RECORD", 10, False),
        ("END_TRANSACTION_RECORD", 1, False), ("PARTITION_RECORD", 7, False)]
