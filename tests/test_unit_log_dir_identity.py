"""Issue 50 point 3: a broker's several log dirs checked as one identity (log_dir_identity_mismatch) and each
replica held against the log dir the metadata log assigns it (replica_in_wrong_dir), on built tables."""

from __future__ import annotations

import json

import pytest
from test_unit_control_plane import T1, Log, records
from unit_frames import run_check

pytestmark = pytest.mark.usefixtures("small_input")

LOG_DIRS = ("broker string, log_dir string, meta_properties string, cluster_id string, node_id int, "
            "directory_id string")
DIRS = ("broker string, topic string, partition int, dir_state string, path string, log_dir string, topic_id string, "
        "cluster_id string, node_id int")
D1, D2, D3 = "DirOneAAAAAAAAAAAAAAAA", "DirTwoAAAAAAAAAAAAAAAA", "DirThreeAAAAAAAAAAAAAA"
UNASSIGNED, LOST = "AAAAAAAAAAAAAAAAAAAAAQ", "AAAAAAAAAAAAAAAAAAAAAg"


def _findings(df) -> list[dict]:
    return [{**r.asDict(), **json.loads(r["details"])} for r in df.collect()]


def _log_dir(broker: str, path: str, *, cluster: str | None = "c1", node: int | None = 3,
             directory: str | None = None, meta: bool = True) -> tuple:
    return (broker, path, f"{path}/meta.properties" if meta else None, cluster if meta else None,
            node if meta else None, directory if meta else None)


def identity(spark, *dirs: tuple) -> list[tuple]:
    found = _findings(run_check("log_dir_identity_mismatch", log_dirs=spark.createDataFrame(list(dirs), LOG_DIRS)))
    return sorted((f["broker"], f["reason"], f["log_dir"], f.get("found"), f.get("expected"), f.get("other_log_dir"), f["file"],
                   f["severity"]) for f in found)


def test_one_identity_across_dirs_is_silent(spark):
    assert identity(spark, _log_dir("b3", "/d1", directory=D1), _log_dir("b3", "/d2", directory=D2),
                    # another broker: its own identity; a one-dir broker is not judged
                    _log_dir("b4", "/e1", node=4, directory=D1),
                    _log_dir("b5", "/f1", meta=False)) == []
    # pre-3.7 meta.properties carry no directory.id (and a v0 file no cluster.id): nothing to compare
    assert identity(spark, _log_dir("b3", "/d1"), _log_dir("b3", "/d2", cluster=None)) == []


def test_every_identity_mismatch(spark):
    found = identity(spark,
                     _log_dir("b3", "/d1", directory=D1),
                     _log_dir("b3", "/d2", cluster="other", directory=D2),   # another cluster's disk
                     _log_dir("b3", "/d3", node=4, directory=D3),            # another node's disk
                     _log_dir("b3", "/d4", directory=D1),                    # a clone of /d1
                     _log_dir("b3", "/d5", meta=False))                      # not formatted (or not mounted)
    assert found == [
        ("b3", "cluster_id", "/d2", "other", "c1", "/d1", "/d2/meta.properties", "error"),
        ("b3", "directory_id_shared", "/d4", D1, None, "/d1", "/d4/meta.properties", "error"),
        ("b3", "meta_properties_missing", "/d5", None, None, "/d1", "/d5", "error"),
        ("b3", "node_id", "/d3", "4", "3", "/d1", "/d3/meta.properties", "error")]
    # the identity is the first dir, by path, that has a meta.properties
    assert identity(spark, _log_dir("b3", "/a", meta=False), _log_dir("b3", "/b", node=7, directory=D1),
                    _log_dir("b3", "/c", node=8, directory=D2)) == [
        ("b3", "meta_properties_missing", "/a", None, None, "/b", "/a", "error"),
        ("b3", "node_id", "/c", "8", "7", "/b", "/c/meta.properties", "error")]


def _metadata(*, directories=(D1, "DirOfBrokerOneAAAAAAAA"), cordoned: list[str] | None = None) -> Log:
    log = Log()
    log.topic("orders", T1)
    log.partition(0, T1, replicas=(3, 1), isr=(3, 1), leader=3, directories=None if directories is None else list(directories))
    log.broker_event("REGISTER_BROKER_RECORD", 3, log_dirs=[D1, D2], cordoned_log_dirs=cordoned)
    return log


def wrong_dir(spark, log: Log, dirs: list[tuple], log_dirs: list[tuple], **tables) -> list[tuple]:
    found = _findings(run_check("replica_in_wrong_dir", metadata_records=records(spark, log),
                                cluster_dirs=spark.createDataFrame(dirs, DIRS),
                                log_dirs=spark.createDataFrame(log_dirs, LOG_DIRS), **tables))
    return sorted((f["kind"], f["broker"], f["file"], f.get("reason") or f.get("rule"), f.get("assigned_log_dir"),
                   f.get("other_log_dir")) for f in found)


def _dir(path: str, log_dir: str, state: str = "live", topic_id: str | None = T1) -> tuple:
    return ("b3", "orders", 0, state, path, log_dir, topic_id, "c1", 3)


BROKER_3 = [_log_dir("b3", "/d1", directory=D1), _log_dir("b3", "/d2", directory=D2)]


def test_replica_in_its_assigned_dir_or_being_moved_is_silent(spark):
    assert wrong_dir(spark, _metadata(), [_dir("/d1/orders-0", "/d1")], BROKER_3) == []
    # a move to /d2 the controller accepted: the future log is there, the live one not yet promoted
    assert wrong_dir(spark, _metadata(directories=(D2, "x")),
                     [_dir("/d1/orders-0", "/d1"), _dir("/d2/orders-0.0123456789abcdef0123456789abcdef-future", "/d2",
                                                        "future")], BROKER_3) == []
    # a new partition not placed yet, a ZooKeeper migration's MIGRATING, a metadata log without Directories
    for directories in ((UNASSIGNED, "x"), ("AAAAAAAAAAAAAAAAAAAAAA", "x"), None):
        assert wrong_dir(spark, _metadata(directories=directories), [_dir("/d2/orders-0", "/d2")], BROKER_3) == []
    # an old partition left in a cordoned dir (KIP-1066)
    assert wrong_dir(spark, _metadata(cordoned=[D2]), [_dir("/d2/orders-0", "/d2")], BROKER_3) == []
    # a dir without a directory.id (written before Kafka 3.7)
    assert wrong_dir(spark, _metadata(), [_dir("/d2/orders-0", "/d2")],
                     [BROKER_3[0], _log_dir("b3", "/d2")]) == []


def test_replica_in_wrong_dir_every_reason(spark):
    assert wrong_dir(spark, _metadata(), [_dir("/d2/orders-0", "/d2")], BROKER_3) == [
        ("replica_in_wrong_dir", "b3", "/d2/orders-0", "other_dir", "/d1", None)]
    # the assigned id is none of the dirs given: a disk restored with a new directory.id
    assert wrong_dir(spark, _metadata(directories=(D3, "x")), [_dir("/d1/orders-0", "/d1")], BROKER_3) == [
        ("replica_in_wrong_dir", "b3", "/d1/orders-0", "unknown_dir", None, None)]
    assert wrong_dir(spark, _metadata(directories=(LOST, "x")), [_dir("/d1/orders-0", "/d1")], BROKER_3) == [
        ("replica_in_wrong_dir", "b3", "/d1/orders-0", "lost", None, None)]
    # a future dir that is not where the assignment points does not excuse the live one
    assert wrong_dir(spark, _metadata(directories=(D3, "x")),
                     [_dir("/d1/orders-0", "/d1"), _dir("/d2/orders-0.0123456789abcdef0123456789abcdef-future", "/d2",
                                                        "future")], BROKER_3) == [
        ("replica_in_wrong_dir", "b3", "/d1/orders-0", "unknown_dir", None, None)]
    # live in two dirs of the broker: Kafka does not start it, whatever the assignment
    assert wrong_dir(spark, _metadata(), [_dir("/d1/orders-0", "/d1"), _dir("/d2/orders-0", "/d2")], BROKER_3) == [
        ("replica_in_wrong_dir", "b3", "/d2/orders-0", "duplicate", None, "/d1")]


def test_replica_in_wrong_dir_not_judged_past_the_metadata_copy(spark):
    lacking = spark.createDataFrame(
        [("c1", "m1", 0, (5, 99, True))], "cluster_id string, metadata_broker string, replayed_from bigint, "
        "gap_range struct<first_offset: bigint, last_offset: bigint, proven: boolean>")
    assert wrong_dir(spark, _metadata(), [_dir("/d2/orders-0", "/d2")], BROKER_3, metadata_coverage=lacking) == [
        ("not_judged", "b3", "/d2/orders-0", "replica_in_wrong_dir", None, None)]


def test_broker_history_carries_cordoned_log_dirs(spark):
    """KIP-1066 (4.3-IV0): BrokerRegistrationChangeRecord v3 cordons a dir; a change of log dirs alone is an event
    of its own, and the cordoned dirs carry to the registration's later rows (a null CordonedLogDirs keeps them)."""
    from unit_frames import run_model

    log = Log()
    log.broker_event("REGISTER_BROKER_RECORD", 3, log_dirs=[D1, D2], fenced=0)
    log.broker_event("BROKER_REGISTRATION_CHANGE_RECORD", 3, cordoned_log_dirs=[D2], fenced=0)
    log.broker_event("FENCE_BROKER_RECORD", 3)
    log.broker_event("BROKER_REGISTRATION_CHANGE_RECORD", 3, cordoned_log_dirs=[], fenced=-1)
    log.broker_event("REGISTER_BROKER_RECORD", 3, log_dirs=[D1], fenced=0)  # a new registration: none cordoned
    rows = run_model("broker_history", metadata_records=records(spark, log)).orderBy("metadata_offset").collect()
    assert [(r["event"], r["cordoned_log_dirs"], r["fenced"]) for r in rows] == [
        ("registered", [], False), ("log_dirs_changed", [D2], False), ("fenced", [D2], True),
        ("unfenced", [], False), ("registered", [], False)]
