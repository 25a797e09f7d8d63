"""The incident sample (sample_logs/incident-1..3, generate_incident.py, EXPECTED_INCIDENT.json; issue 49): an unclean
election of payments-0 that cost acknowledged records, T1's COMMIT marker and two groups' positions.

One full scan of the three disks: its warning and error findings are exactly EXPECTED_INCIDENT.json's `findings` and
`findings_full_only` (a headers-only scan raises `findings` alone: content_duplicate needs the records), nothing else
is reported. `not_raised_today` lists what Kafka would show that today's scan does not (a committed offset judged
against the longest replica, a follower's truncation at restart): when the scan learns them, they move to `findings`.

The `incident` ground truth is held to the bytes by an independent reader (kafka-python) and to the metadata log as the
scan replays it: the lost range, the records and acknowledged records lost, the marker, the groups, the sequences."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from conftest import SAMPLE_LOGS
from kafka.record.memory_records import MemoryRecords

from kforensics.scan_output import read_table

EXPECTED = json.loads((SAMPLE_LOGS / "EXPECTED_INCIDENT.json").read_text())
TRUTH = EXPECTED["incident"]
BROKERS = ("incident-1", "incident-2", "incident-3")


@pytest.fixture(scope="session")
def incident_scan(spark, tmp_path_factory) -> Path:
    """One full scan of the three incident disks for the session."""
    from kforensics.spark.jobs import run_scan

    out = tmp_path_factory.mktemp("scan-incident")
    run_scan(spark, [(b, str(SAMPLE_LOGS / b)) for b in BROKERS], str(out), headers_only=False)
    return out


def _findings(out: Path) -> list[dict]:
    return [{**f, **json.loads(f["details"] or "{}")} for f in read_table(str(out), "findings")]


def _key(f: dict) -> tuple:
    return f["kind"], f["broker"], f["topic"], f["partition"], f["offset"], f["producer_id"]


def test_the_scan_reports_exactly_the_planted_findings(incident_scan: Path) -> None:
    found = _findings(incident_scan)
    planted = EXPECTED["findings"] + EXPECTED["findings_full_only"]
    assert sorted(_key(f) for f in found) == sorted(_key(p) for p in planted)  # no info finding either
    for p in planted:
        (f,) = [f for f in found if _key(f) == _key(p)]
        for key, value in p.items():
            assert f.get(key) == value, (p["kind"], key, f.get(key), value)
    assert {p["kind"] for p in EXPECTED["findings_full_only"]} == {"content_duplicate"}


def test_what_today_s_scan_does_not_say(incident_scan: Path) -> None:
    """The groups' committed offsets are judged against incident-1 (the longest replica, the diverged old leader):
    in range there, beyond the log end of the current leader (incident-2). The restart prediction of incident-1
    truncates nothing. EXPECTED's `not_raised_today` says so; this holds it to the scan's tables."""
    offsets = {r["group_id"]: r for r in read_table(str(incident_scan), "consumer_offsets")}
    for miss in (m for m in EXPECTED["not_raised_today"] if m["kind"] == "committed_offset_beyond_log_end"):
        row = offsets[miss["group"]]
        assert (row["committed_offset"], row["data_broker"], row["log_end_offset"], row["status"]) == (
            miss["committed_offset"], "incident-1", miss["longest_replica_log_end_offset"], "ok")
        assert row["committed_offset"] > miss["new_leader_log_end_offset"]
    (restart,) = [r for r in read_table(str(incident_scan), "restart_prediction")
                  if (r["broker"], r["topic"]) == ("incident-1", "payments")]
    assert restart["truncate_at_offset"] is None and restart["offsets_discarded"] is None


# --- the ground truth, from the bytes ----------------------------------------------------------------------------

def _batches(broker: str, name: str) -> list[dict]:
    """Every batch of a one-segment partition as kafka-python reads it, with its raw bytes."""
    data = (SAMPLE_LOGS / broker / name / "00000000000000000000.log").read_bytes()
    reader, out, position = MemoryRecords(data), [], 0
    while reader.has_next():
        b = reader.next_batch()
        records = list(b)
        control = None
        if b.is_control_batch:
            control = {0: "ABORT", 1: "COMMIT"}[records[0].type]
        out.append({"base_offset": b.base_offset, "last_offset": b.last_offset, "count": b.records_count,
                    "producer_id": b.producer_id, "producer_epoch": b.producer_epoch,
                    "base_sequence": b.base_sequence, "last_sequence": b.last_sequence,
                    "transactional": b.is_transactional, "control": control, "leader_epoch": b.leader_epoch,
                    "first_timestamp": min(r.timestamp for r in records), "raw": data[position:position + b.size_in_bytes],
                    "records": [(r.key, r.value) for r in records]})
        position += b.size_in_bytes
    return out


def _checkpoint(broker: str, name: str) -> dict[str, int]:
    lines = (SAMPLE_LOGS / broker / name).read_text().splitlines()[2:]
    return {f"{t}-{p}": int(o) for t, p, o in (line.split() for line in lines)}


def test_the_lost_range_and_what_it_cost(incident_scan: Path) -> None:
    old, new = _batches("incident-1", "payments-0"), _batches("incident-2", "payments-0")
    common = next(i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a["raw"] != b["raw"])
    cut = old[common]["base_offset"]
    assert cut == new[common]["base_offset"] == 100 and new[common]["leader_epoch"] == 2
    lost = old[common:]
    (lost_range,) = [r for r in TRUTH["lost_offsets"] if r["from"] is not None]
    assert (lost_range["broker"], lost_range["from"], lost_range["to"]) == ("incident-1", cut, lost[-1]["last_offset"])
    data = [b for b in lost if b["control"] is None]
    assert sum(b["count"] for b in data) == TRUTH["records_lost"] == 80
    assert TRUTH["lost_batches"] == len(lost)
    assert [(b["base_offset"], b["control"], b["producer_id"], b["producer_epoch"]) for b in lost if b["control"]] == [
        (m["offset"], m["control_type"], m["producer_id"], m["producer_epoch"]) for m in TRUTH["control_records_lost"]]
    # acknowledged: below the checkpointed high watermark, or written once the metadata log shows the ISR [1]
    hw = _checkpoint("incident-1", "replication-offset-checkpoint")["payments-0"]
    assert hw == TRUTH["acknowledged_how"]["checkpointed_high_watermark"]
    assert sum(b["count"] for b in data if b["last_offset"] < hw) == TRUTH["acknowledged_records_lost_by_checkpoint"]
    history = sorted((r for r in read_table(str(incident_scan), "partition_history") if r["topic"] == "payments"),
                     key=lambda r: r["metadata_offset"])
    alone = next(r for r in history if r["isr"] == [1])
    offline = next(r for r in history if r["leader"] == -1)
    assert (alone["metadata_offset"], alone["timestamp"]) == (
        TRUTH["acknowledged_how"]["isr_leader_alone_from"]["metadata_offset"],
        TRUTH["acknowledged_how"]["isr_leader_alone_from"]["timestamp"])
    assert all(alone["timestamp"] < b["first_timestamp"] < offline["timestamp"] for b in lost)
    assert [r["isr"] for r in history if alone["metadata_offset"] <= r["metadata_offset"] < offline["metadata_offset"]
            ] == [[1]]  # nothing widened the ISR while broker 1 was writing
    assert sum(b["count"] for b in data) == TRUTH["acknowledged_records_lost"]
    assert TRUTH["acknowledged_records_lost_by_checkpoint"] < TRUTH["acknowledged_records_lost"]
    # by producer, and the relay's lost rows that came back by content
    for p in TRUTH["records_lost_by_producer"]:
        mine = [b for b in data if b["producer_id"] == p["producer_id"]]
        assert [[b["base_offset"], b["last_offset"]] for b in mine] == [x["offsets"] for x in p["batches"]]
        assert sum(b["count"] for b in mine) == p["records"]
    relay_lost = [r for b in data if b["producer_id"] == 4001 for r in b["records"]]
    back = [r for b in new[common:] if b["producer_id"] == 5001 for r in b["records"] if r in relay_lost]
    assert len(back) == len(relay_lost) == TRUTH["content_recovered"]["records"]
    assert TRUTH["records_gone_from_the_new_leader"] == TRUTH["records_lost"] - len(back)


def test_the_transaction_whose_marker_was_lost() -> None:
    t = TRUTH["transaction_marker_lost"]
    pid, epoch = t["producer_id"], t["producer_epoch"]
    first, last = t["data_offsets"]["payments-0"]

    def marker(broker: str, name: str) -> list[int]:
        return [b["base_offset"] for b in _batches(broker, name)
                if (b["control"], b["producer_id"], b["producer_epoch"]) == ("COMMIT", pid, epoch)]

    assert marker("incident-1", "payments-0") == [t["marker_offsets"]["payments-0"]]  # the old leader's
    assert marker("incident-2", "payments-0") == []  # the new leader's: none
    assert marker("incident-3", "ledger-0") == marker("incident-2", "ledger-0") == [t["marker_offsets"]["ledger-0"]]
    data = [b for b in _batches("incident-2", "payments-0") if b["producer_id"] == pid and b["control"] is None
            and b["producer_epoch"] == t["data_epoch"]]
    assert [(b["base_offset"], b["last_offset"]) for b in data] == [(first, last)]
    assert t["new_leader"]["open_from"] == t["new_leader"]["last_stable_offset"] == first
    # the coordinator's records (TransactionLogValue v1: producer id, epoch, timeout, state) on broker 3
    reader = MemoryRecords((SAMPLE_LOGS / "incident-3" / t["coordinator_partition"] / "00000000000000000000.log")
                           .read_bytes())
    states = []
    while reader.has_next():
        states += [struct.unpack_from(">hqhib", r.value, 0) for r in reader.next_batch()]
    assert states[-1] == (1, pid, epoch, 60_000, 4)  # CompleteCommit of epoch 2, the last record


def test_the_groups_and_the_sequences(incident_scan: Path) -> None:
    new = _batches("incident-2", "payments-0")
    old = _batches("incident-1", "payments-0")
    new_end, old_end = new[-1]["last_offset"] + 1, old[-1]["last_offset"] + 1
    offsets = {r["group_id"]: r for r in read_table(str(incident_scan), "consumer_offsets")}
    for grp in TRUTH["groups_stranded"]:
        row = offsets[grp["group"]]
        assert (row["committed_offset"], row["committed_leader_epoch"]) == (grp["committed_offset"],
                                                                          grp["committed_leader_epoch"])
        assert new_end == grp["new_log_end_offset"] < grp["committed_offset"] <= old_end == grp[
            "old_leader_log_end_offset"]
    for p in TRUTH["producers_with_sequence_gaps"]:
        on_old = [b for b in old if b["producer_id"] == p["producer_id"]]
        on_new = [b for b in new if b["producer_id"] == p["producer_id"]]
        assert [on_old[0]["base_sequence"], on_old[-1]["last_sequence"]] == p["old_leader"]["sequences"]
        for e, (first, last) in p["new_leader"]["sequences_by_epoch"].items():
            runs = [b for b in on_new if b["producer_epoch"] == int(e)]
            assert [runs[0]["base_sequence"], runs[-1]["last_sequence"]] == [first, last]
        missing = p["missing_on_new_leader"]
        epoch0 = {s for b in on_new if b["producer_epoch"] == missing["producer_epoch"]
                  for s in range(b["base_sequence"], b["last_sequence"] + 1)}
        assert not epoch0 & set(range(missing["sequences"][0], missing["sequences"][1] + 1))
        # on the new leader's own log each producer epoch runs without a gap: no sequence_gap to report
        for e in {b["producer_epoch"] for b in on_new}:
            runs = [b for b in on_new if b["producer_epoch"] == e]
            assert all(a["last_sequence"] + 1 == b["base_sequence"] for a, b in zip(runs, runs[1:], strict=False))
