"""Incidents on built tables: each link rule ties what it says and nothing else, the walk to root causes, the cost of
a lost range counted against hand-counted records, and the order of a plan's steps (a property test: no destructive
step before the save steps)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from unit_frames import BATCHES, batch, frame, marker, scan_of, txn_data

from kforensics.parsers.findings import FINDING_COLUMNS
from kforensics.spark import incidents, output_schemas, registry
from kforensics.spark import schemas as S

FINDINGS = ("kind string, severity string, broker string, topic string, partition int, file string, "
            "position bigint, offset bigint, producer_id bigint, producer_epoch int, message string, details string")
BROKERS = "broker string, cluster_id string, node_id int"


def finding(kind: str, broker: str = "b1", topic: str | None = "t", partition: int | None = 0,
            offset: int | None = None, producer_id: int | None = None, severity: str | None = None,
            file: str | None = None, position: int | None = None, **details) -> tuple:
    from kforensics.kinds import KINDS

    return (kind, severity or KINDS[kind].severity, broker, topic, partition, file, position, offset, producer_id,
            None, f"{kind} on {broker}", json.dumps(details))


@pytest.fixture(scope="module")
def brokers(spark):
    return spark.createDataFrame([("b1", "c", 1), ("b2", "c", 2), ("b3", "c", 3)], BROKERS)


def membership(spark, brokers, rows: list[tuple], **tables) -> dict[str, tuple[str, str | None]]:
    """kind@broker -> (its incident's root kind@broker, the rule it follows by): the walk over the links that apply."""
    scan = scan_of(checked_findings=spark.createDataFrame(rows, FINDINGS), brokers=brokers, **tables)
    found = {r["finding_id"]: f"{r['kind']}@{r['broker']}" for r in scan.table("finding_rows").collect()}
    return {found[m["finding_id"]]: (found[m["incident_id"]], m["rule"])
            for m in scan.table("incident_members").collect()}


def test_an_unclean_election_explains_the_divergence_and_what_followed(spark, small_input, brokers) -> None:
    rows = [finding("unclean_leader_election", "b2", offset=100, leader=2),
            finding("replica_divergence", "b1", offset=100, winner="b2"),
            finding("committed_offset_beyond_log_end", "b2", offset=170, group="g"),
            finding("sequence_gap", "b2", offset=120, producer_id=7),
            finding("marker_missing", "b2", offset=95, producer_id=5),
            finding("hanging_transaction", "b2", offset=95, producer_id=5, lso_stuck_at=95),
            # not part of it: another partition, and a sequence gap before the divergence
            finding("sequence_gap", "b1", topic="other", offset=120, producer_id=7),
            finding("sequence_gap", "b3", offset=40, producer_id=8)]
    members = membership(spark, brokers, rows)
    root = "unclean_leader_election@b2"
    assert members["unclean_leader_election@b2"] == (root, None)
    assert members["replica_divergence@b1"] == (root, "link_unclean_election")
    assert members["committed_offset_beyond_log_end@b2"] == (root, "link_lost_range")
    assert members["sequence_gap@b2"][0] == root and members["marker_missing@b2"][0] == root
    # the hanging transaction follows from the missing marker, whose root is the election (the lower rank wins)
    assert members["hanging_transaction@b2"] == (root, "link_lost_range")
    assert members["sequence_gap@b1"] == ("sequence_gap@b1", None)
    assert members["sequence_gap@b3"] == ("sequence_gap@b3", None)


def test_two_unrelated_findings_on_one_partition_stay_two_incidents(spark, small_input, brokers) -> None:
    rows = [finding("sequence_gap", offset=25, producer_id=4000), finding("duplicate_sequence", offset=40,
                                                                          producer_id=4000),
            finding("zombie_epoch", offset=60, producer_id=4001)]
    members = membership(spark, brokers, rows)
    assert {k: v[0] for k, v in members.items()} == {k: k for k in members} and len(members) == 3


def test_a_fenced_producer_explains_its_zombie_writes_not_another_producers(spark, small_input, brokers) -> None:
    rows = [finding("epoch_fenced_write", offset=14, producer_id=8003),
            finding("zombie_epoch", offset=14, producer_id=8003),
            finding("zombie_epoch", "b2", topic="u", offset=6, producer_id=8100)]
    members = membership(spark, brokers, rows)
    assert members["zombie_epoch@b1"] == ("epoch_fenced_write@b1", "link_fenced_epoch")
    assert members["zombie_epoch@b2"] == ("zombie_epoch@b2", None)


def test_a_fenced_write_left_open_explains_its_hanging_transaction_only(spark, small_input, brokers) -> None:
    # the zombie's write after the fence opened a transaction no marker follows (it hangs); a later transaction of
    # the same producer id hanging at another offset (seen on the partition's other replica) is not the fenced write's
    rows = [finding("epoch_fenced_write", offset=14, producer_id=8003),
            finding("hanging_transaction", offset=14, producer_id=8003, lso_stuck_at=14),
            finding("hanging_transaction", "b2", offset=30, producer_id=8003, lso_stuck_at=30)]
    members = membership(spark, brokers, rows)
    assert members["hanging_transaction@b1"] == ("epoch_fenced_write@b1", "link_fenced_epoch")
    assert members["hanging_transaction@b2"] == ("hanging_transaction@b2", None)


def test_an_open_transaction_holds_the_cleaner_and_is_one_fact_on_every_replica(spark, small_input,
                                                                                 brokers) -> None:
    rows = [finding("hanging_transaction", "b1", offset=43, producer_id=2001, lso_stuck_at=43),
            finding("hanging_transaction", "b2", offset=43, producer_id=2001, lso_stuck_at=43),
            finding("cleaner_blocked", "b1", offset=43, producer_id=2001),
            finding("cleaner_blocked", "b3", offset=43, producer_id=2001)]  # another broker's partition: its own
    members = membership(spark, brokers, rows)
    assert members["hanging_transaction@b2"] == ("hanging_transaction@b1", "link_open_transaction")
    assert members["cleaner_blocked@b1"] == ("hanging_transaction@b1", "link_open_transaction")
    assert members["cleaner_blocked@b3"] == ("cleaner_blocked@b3", None)


def test_damage_explains_its_restart_and_its_index_entries_on_the_same_segment(spark, small_input,
                                                                              brokers) -> None:
    seg = "t-0/00000000000000000080.log"
    rows = [finding("truncated_tail", file=seg, position=900),
            finding("restart_trims_tail", file=seg, offset=None, damage_kind="truncated_tail"),
            finding("index_bad_entry", file="t-0/00000000000000000080.index", offset=95),
            finding("index_bad_entry", "b1", file="t-0/00000000000000000000.index", offset=20),
            finding("corrupt_crc", offset=18, file="t-0/00000000000000000000.log", position=100),
            finding("damage_below_recovery_point", offset=18, damage_kind="corrupt_crc")]
    members = membership(spark, brokers, rows)
    assert members["restart_trims_tail@b1"] == ("truncated_tail@b1", "link_damage")
    assert members["damage_below_recovery_point@b1"] == ("corrupt_crc@b1", "link_damage")
    index = {k for k, v in members.items() if k == "index_bad_entry@b1"}
    assert index  # one of the two index findings: the segment 80's joins the torn tail, segment 0's stays alone
    roots = sorted(v[0] for k, v in members.items() if k.startswith("index_bad_entry"))
    assert roots in (["index_bad_entry@b1"], ["truncated_tail@b1"])


def test_a_cycle_of_links_is_broken_at_its_lowest_id_and_every_problem_has_one_incident() -> None:
    import pandas as pd

    found = pd.DataFrame({"finding_id": ["a", "b", "c", "n"], "severity": ["error", "warning", "error", "info"]})
    links = pd.DataFrame({"cause_id": ["a", "b"], "effect_id": ["b", "a"], "rule": ["x", "y"], "rank": [1, 1]})
    rows = incidents.members(found, links)
    assert sorted(rows["finding_id"]) == ["a", "b", "c"]  # the unlinked note belongs to none
    assert dict(zip(rows["finding_id"], rows["incident_id"], strict=True)) == {"a": "a", "b": "a", "c": "c"}


# --- cost -----------------------------------------------------------------------------------------------------------

def test_the_cost_of_a_lost_range_counts_data_records_only_and_the_acknowledged_ones(spark, small_input,
                                                                                       brokers) -> None:
    """b1 lost 100-139 to b2. Hand count: data batches 100-109 (10), an aborted transaction 110-114 (5, not counted)
    and its ABORT marker 115, a COMMIT marker 116 (control: not counted) of transaction 117? no: data 117-126 (10),
    a compacted batch 127-136 holding 4 records (its count), 137-139 (3). records_lost = 10 + 10 + 4 + 3 = 27.
    The checkpointed high watermark is 120: acknowledged below it 10 (100-109) + 3 of 117-126 (117, 118, 119) = 13;
    the metadata log says the ISR was b1 alone from t=5000 on: batches written after that count whole (137-139)."""
    rows = [batch(100, 10, broker="b1", max_timestamp=1000),
            txn_data(9, 110, 5, broker="b1", max_timestamp=1000), marker(9, 115, "ABORT", broker="b1"),
            marker(8, 116, "COMMIT", broker="b1"),
            batch(117, 10, broker="b1", max_timestamp=2000),
            {**batch(127, 10, broker="b1", max_timestamp=3000), "count": 4},
            batch(137, 3, broker="b1", max_timestamp=6000)]
    batches = frame(spark, BATCHES, rows)
    checkpoints = spark.createDataFrame([("b1", "t", 0, 120, None, None, None), ("b2", "t", 0, 100, None, None, None)],
                                        "broker string, topic string, partition int, high_watermark bigint, "
                                        "recovery_point bigint, log_start_offset bigint, cleaner_offset bigint")
    history = S.frame(spark, output_schemas.OUTPUT_TABLES["partition_history"], [
        dict(cluster_id="c", topic="t", topic_id="tid", partition=0, metadata_offset=m, timestamp=ts,
             record_type="PARTITION_CHANGE_RECORD", leader=leader, leader_epoch=epoch, isr=isr, election=election)
        for m, ts, leader, epoch, isr, election in ((10, 1000, 1, 0, [1, 2], "none"), (11, 5000, 1, 0, [1], "none"),
                                                      (12, 9000, 2, 1, [2], "unclean"))])
    div = finding("replica_divergence", "b1", offset=100, winner="b2")
    ends = spark.createDataFrame([("b1", "t", 0, "c", 0, 140, 120), ("b2", "t", 0, "c", 0, 130, 100)],
                                 "broker string, topic string, partition int, cluster_id string, "
                                 "log_start_offset bigint, log_end_offset bigint, high_watermark bigint")
    scan = scan_of(checked_findings=spark.createDataFrame([div], FINDINGS), brokers=brokers, batches=batches,
                   partition_checkpoints=checkpoints, replica_ends=ends, partition_history=history)
    (loss,) = scan.table("incident_losses").collect()
    assert (loss["broker"], loss["from_offset"], loss["to_offset"]) == ("b1", 100, 139)
    assert loss["records_lost"] == 27
    assert loss["acknowledged_records_lost"] == 13 + 3
    (incident,) = scan.table("incidents").collect()
    assert (incident["records_lost"], incident["acknowledged_records_lost"]) == (27, 16)
    assert [o.asDict() for o in incident["lost_offsets"]] == [
        {"broker": "b1", "topic": "t", "partition": 0, "from": 100, "to": 139}]


def test_a_range_the_input_cannot_size_is_null_and_says_why(spark, small_input, brokers) -> None:
    """An unclean election whose old leader's log dir is not in the input: no range to count, never a guess."""
    election = finding("unclean_leader_election", "b2", offset=100, previous_leader=1)
    scan = scan_of(checked_findings=spark.createDataFrame([election], FINDINGS), brokers=brokers)
    (incident,) = scan.table("incidents").collect()
    assert incident["records_lost"] is None and incident["acknowledged_records_lost"] is None
    assert incident["unknown"] and "previous leader (node 1)" in incident["unknown"][0]


# --- the plan -------------------------------------------------------------------------------------------------------

def _kinds_with_actions() -> list[str]:
    from kforensics.kinds import KINDS

    return sorted(k.name for k in KINDS.values() if k.actions)


KINDS_WITH_ACTIONS = _kinds_with_actions()


def _member(kind: str, i: int) -> dict:
    return {"finding_id": f"f{i}", "kind": kind, "severity": "error", "broker": f"b{i % 3}", "topic": "t",
            "partition": i % 2, "offset": 10 * i, "producer_id": 5, "producer_epoch": 1, "file": "f.log",
            "position": 0, "message": kind, "is_root": i == 0, "log_dir": f"/data/b{i % 3}",
            "partition_dir": f"/data/b{i % 3}/t-{i % 2}", "intact_on": "b9",
            "details": json.dumps({"winner": "b2", "group": "g", "log_end_offset": 40, "committed_offset": 50,
                                   "log_start_offset": 5, "transactional_id": "tx", "coordinator_outcome": "COMMIT",
                                   "coordinator_broker": "b1", "last_data_offset": 99, "offsets_discarded": [1, 2],
                                   "truncate_at_offset": 1, "dir_state": "live", "previous_isr": [1],
                                   "leader": 2, "leader_epoch": 3, "offset": 10 * i, "reason": "topic_deleted",
                                   "fencing_epoch": 2, "fenced_at": 1, "resent_offsets": [3, 4],
                                   "original_offsets": [1, 2], "producer_ids": [5, 6],
                                   "age_ms_at_log_end": 9})}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(KINDS_WITH_ACTIONS), min_size=1, max_size=8))
def test_no_destructive_step_comes_before_a_save_step(kinds: list[str]) -> None:
    _timeline, actions = incidents.story([_member(k, i) for i, k in enumerate(kinds)], [])
    assert [a["step"] for a in actions] == list(range(1, len(actions) + 1))
    saves = [a["step"] for a in actions if a["command"].startswith("kforensics export")]
    destructive = [a["step"] for a in actions if a["destructive"]]
    assert not saves or not destructive or max(saves) < min(destructive)
    assert len({a["command"] for a in actions}) == len(actions)  # a command once
    assert all("{" not in a["command"] for a in actions)  # every template filled


def test_a_timed_event_says_whose_clock_gave_its_time() -> None:
    """A batch's time is the producer's CreateTime (it may precede an election the controller recorded first), an
    election's the controller's clock: the timeline says which; an event with no time says no clock."""
    fenced = {**_member("epoch_fenced_write", 0), "details": json.dumps({
        "transactional_id": "tx", "fenced_at": 1000, "fencing_epoch": 3, "written_at": 900})}
    elected = {**_member("unclean_leader_election", 1), "details": json.dumps({
        "leader": 2, "previous_isr": [1], "leader_epoch": 4, "elected_at": 950})}
    untimed = {**_member("epoch_fenced_write", 2), "details": json.dumps({
        "transactional_id": "tx", "fenced_at": 1000, "fencing_epoch": 3})}
    timeline, _actions = incidents.story([fenced, elected, untimed], [])
    assert [(e["at"], e["event"]) for e in timeline] == [
        (900, "producer 5 (tx) wrote to t-0 at epoch 1 after the coordinator fenced it (epoch 3) (producer's "
              "CreateTime)"),
        (950, "node 2 elected leader of t-1 from outside the ISR [1] (unclean election, leader epoch 4) (controller's "
              "clock)"),
        (None, "producer 5 (tx) wrote to t-0 at epoch 1 after the coordinator fenced it (epoch 3)")]


def test_a_step_whose_value_the_input_lacks_is_left_out() -> None:
    member = _member("replica_divergence", 0)
    member["log_dir"] = None  # the broker's log dir is not known: no export command with a hole in it
    _timeline, actions = incidents.story([member], [])
    assert not [a for a in actions if a["command"].startswith("kforensics export")]
    assert actions and all("None" not in a["command"] for a in actions)


def test_every_declared_action_and_event_fills_from_its_kinds_fields() -> None:
    """A template may only name the finding's columns, its kind's fields and the facts incident_findings gives."""
    import string

    from kforensics.kinds import KINDS

    facts = set(FINDING_COLUMNS) | {"finding_id", "cluster_id", "log_dir", "partition_dir", "intact_on", "out"}
    for kind in KINDS.values():
        templates = [kind.event or ""] + [a["command"] for a in kind.actions] + [a["why"] for a in kind.actions]
        for template in templates:
            names = {f[1].split("[")[0] for f in string.Formatter().parse(template) if f[1]}
            assert names <= set(kind.fields) | facts, (kind.name, sorted(names - set(kind.fields) - facts))
        assert kind.at is None or kind.at in kind.fields
        assert (kind.at is None) == (kind.clock is None), kind.name  # a time says whose clock gave it
        assert all(a["phase"] in registry.PHASES for a in kind.actions)
        assert all(not a["destructive"] or a["phase"] == "repair" for a in kind.actions)


def test_a_command_quotes_every_string_it_is_filled_with() -> None:
    """A topic, group or log dir read from a disk is data: the pasted line runs Kafka's tool on exactly that name,
    never a second command (shlex splits it back into the exact strings)."""
    import shlex

    hostile = "a;b $(x) 'q'\x1b[31m"
    member = _member("committed_offset_beyond_log_end", 0)
    member["topic"] = hostile
    member["details"] = json.dumps({**json.loads(member["details"]), "group": hostile})
    _timeline, actions = incidents.story([member], [])
    resets = [a["command"] for a in actions if a["command"].startswith("kafka-consumer-groups.sh")]
    assert resets
    for command in resets:
        words = shlex.split(command)
        assert words[words.index("--group") + 1] == hostile
        assert words[words.index("--topic") + 1] == f"{hostile}:0"
    plain = _member("committed_offset_beyond_log_end", 0)
    assert any("--group g --reset-offsets --topic t:0" in a["command"] for a in incidents.story([plain], [])[1])


def test_a_missing_segment_gathers_the_notes_of_what_it_left_not_judged(spark, small_input, brokers) -> None:
    """Issue 47: a finding that results from the missing segment belongs with it. The notes naming the range the
    segment_missing reports (a commit on another broker's partition among them) follow from it; a note naming another
    range of the copy (one a crash may have lost: no segment_missing), or the same range of another broker's copy,
    stands alone."""
    rows = [finding("segment_missing", "b1", topic="__consumer_offsets", offset=258527,
                    missing_offsets=[258527, 330478]),
            finding("not_judged", "b2", topic="d", offset=10, rule="committed_offset_below_log_start",
                    incomplete_broker="b1", incomplete_partition="__consumer_offsets-0",
                    missing_offsets=[258527, 330478]),
            finding("not_judged", "b1", topic="__consumer_offsets", offset=300000, rule="restart_would_truncate",
                    incomplete_broker="b1", incomplete_partition="__consumer_offsets-0",
                    missing_offsets=[258527, 330478]),
            finding("not_judged", "b3", topic="d", offset=20, rule="hanging_transaction", incomplete_broker="b1",
                    incomplete_partition="__consumer_offsets-0", missing_offsets=[400000, None]),
            finding("not_judged", "b3", topic="d", partition=1, offset=30, rule="sequence_gap",
                    incomplete_broker="b3", incomplete_partition="__consumer_offsets-0",
                    missing_offsets=[258527, 330478])]
    members = membership(spark, brokers, rows)
    root = "segment_missing@b1"
    assert members[root] == (root, None)
    assert members["not_judged@b2"] == (root, "link_segment_missing")
    assert members["not_judged@b1"] == (root, "link_segment_missing")
    # info notes no link ties belong to no incident
    assert "not_judged@b3" not in members


def test_no_incident_table_is_planned_without_a_problem_or_a_link(spark, small_input, brokers) -> None:
    """Issue 52: past the checks, what they found is known. With only notes that no link ties, the walk and every
    table built on it are empty tables (nothing planned, no job to write them; an output table with the columns its
    statement gives, as when it was computed); one problem finding brings them back."""
    from kforensics.spark.runner import known_empty

    notes = [finding("not_judged", "b3", topic="d", offset=20, rule="hanging_transaction", incomplete_broker="b1",
                     incomplete_partition="__consumer_offsets-0", missing_offsets=[400000, None]),
             finding("unknown_file", "b1", topic=None, partition=None)]
    scan = scan_of(checked_findings=spark.createDataFrame(notes, FINDINGS), brokers=brokers)
    for name in ("problem_findings", "finding_links", "incident_members", "incident_findings", "incident_losses",
                 "incident_events", "incident_story", "incidents"):
        assert scan.provably_empty(name), name
        assert known_empty(scan.table(name)) and scan.table(name).count() == 0, name
    no_incidents = scan.table("incidents").schema
    findings = scan.table("findings").collect()
    assert not known_empty(scan.table("findings"))
    assert sorted(f["kind"] for f in findings) == ["not_judged", "unknown_file"]
    assert {f["incident_id"] for f in findings} == {None}

    problem = finding("sequence_gap", "b2", offset=120, producer_id=7)
    scan = scan_of(checked_findings=spark.createDataFrame([*notes, problem], FINDINGS), brokers=brokers)
    assert not scan.provably_empty("problem_findings") and not scan.provably_empty("incident_members")
    assert scan.provably_empty("finding_links")  # no link rule ties these kinds
    incidents = scan.table("incidents").collect()
    assert [(i["cause"]["kind"], i["severity"]) for i in incidents] == [("sequence_gap", "error")]
    # an output table empty for what the checks found has the columns its statement gives, not-null flags too
    assert scan.table("incidents").schema == no_incidents
    assert not no_incidents["severity"].nullable and not no_incidents["transactions_stuck"].nullable
