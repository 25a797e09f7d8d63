"""The incident sample (sample_logs/incident-1..3, generate_incident.py, EXPECTED_INCIDENT.json; issue 49): an unclean
election of payments-0 that cost acknowledged records, T1's COMMIT marker and two groups' positions.

One full scan of the three disks: its warning and error findings are exactly EXPECTED_INCIDENT.json's `findings` and
`findings_full_only` (a headers-only scan raises `findings` alone: content_duplicate needs the records), nothing else
is reported. `not_raised_today` lists what Kafka would show that today's scan does not (a committed offset judged
against the longest replica, a follower's truncation at restart): when the scan learns them, they move to `findings`.

The `incident` ground truth is held to the bytes by an independent reader (kafka-python) and to the metadata log as the
scan replays it: the lost range, the records and acknowledged records lost, the marker, the groups, the sequences."""

from __future__ import annotations

import html
import json
import struct
from html.parser import HTMLParser
from pathlib import Path

from conftest import SAMPLE_LOGS
from kafka.record.memory_records import MemoryRecords

from kforensics.scan_output import read_table

EXPECTED = json.loads((SAMPLE_LOGS / "EXPECTED_INCIDENT.json").read_text())
TRUTH = EXPECTED["incident"]


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
            if key != "incident":  # the incident is explain's: test_explain_tells_the_election_as_one_incident
                assert f.get(key) == value, (p["kind"], key, f.get(key), value)
    assert {p["kind"] for p in EXPECTED["findings_full_only"]} == {"content_duplicate"}


def test_the_groups_are_judged_against_the_current_leader(incident_scan: Path) -> None:
    """The groups' committed offsets are judged against incident-2 (leader of epoch 2 in the metadata log: the log
    Kafka serves), not incident-1 (the longest replica, the diverged old leader): beyond its log end. The restart
    prediction of incident-1 still truncates nothing (`not_raised_today`: a follower's truncation is not modelled)."""
    offsets = {r["group_id"]: r for r in read_table(str(incident_scan), "consumer_offsets")}
    for grp in TRUTH["groups_stranded"]:
        row = offsets[grp["group"]]
        assert (row["committed_offset"], row["data_broker"], row["log_end_offset"], row["status"]) == (
            grp["committed_offset"], "incident-2", grp["new_log_end_offset"], "beyond_log_end")
    assert [m["kind"] for m in EXPECTED["not_raised_today"]] == ["restart_would_truncate", "sequence_gap"]
    (restart,) = [r for r in read_table(str(incident_scan), "restart_prediction")
                  if (r["broker"], r["topic"]) == ("incident-1", "payments")]
    assert restart["truncate_at_offset"] is None and restart["offsets_discarded"] is None


def _explain(out: Path, *args: str) -> tuple[int, str]:
    from click.testing import CliRunner

    from kforensics.cli import main

    result = CliRunner().invoke(main, ["explain", str(out), *args])
    return result.exit_code, result.output


def test_explain_tells_the_election_as_one_incident(incident_scan: Path) -> None:
    """`kforensics explain --json` against the hand-counted ground truth: one incident, caused by the unclean
    election, holding every planted finding, costing 80 records (80 acknowledged) of payments-0 100-180 on
    incident-1, with the timeline in time order and a plan that saves before it destroys."""
    code, output = _explain(incident_scan, "--json")
    assert code == 1
    incidents = [json.loads(line) for line in output.splitlines()]
    (r,) = incidents
    planted = EXPECTED["findings"] + EXPECTED["findings_full_only"]
    assert {json.dumps(p["incident"], sort_keys=True) for p in planted} == {json.dumps(r["cause"], sort_keys=True)}
    assert r["cause"] == {"kind": TRUTH["cause"]["kind"], "broker": "incident-2", "topic": TRUTH["cause"]["topic"],
                          "partition": TRUTH["cause"]["partition"], "offset": 100, "producer_id": None}
    assert r["severity"] == "error" and r["type"] == "incident"
    assert sorted(_key(f) for f in r["findings"]) == sorted(_key(p) for p in planted)
    cost = r["cost"]
    assert cost["records_lost"] == TRUTH["records_lost"] == 80
    assert cost["acknowledged_records_lost"] == TRUTH["acknowledged_records_lost"] == 80
    assert cost["lost_offsets"] == TRUTH["lost_offsets"]  # payments-0 100-180 on incident-1
    assert cost["groups_affected"] == sorted(g["group"] for g in TRUTH["groups_stranded"])
    assert cost["transactions_stuck"] == 1
    # the timeline: in time order (events known by offset only last), the ISR shrinking to the leader alone first,
    # the election at its metadata record's time, the groups' commits beyond the new log end between
    timed = [e["at"] for e in r["timeline"] if e["at"] is not None]
    assert timed == sorted(timed) and all(e["at"] is None for e in r["timeline"][len(timed):])
    assert r["started_at"] == timed[0] == TRUTH["acknowledged_how"]["isr_leader_alone_from"]["timestamp"]
    election = [e for e in r["timeline"] if "unclean election" in e["event"]]
    assert [(e["at"], e["broker"]) for e in election] == [(TRUTH["cause"]["elected_at"], "incident-2")]
    last_write = [e for e in r["timeline"] if e["event"].startswith("last write incident-1 holds")]
    lost_tail = EXPECTED["brokers"]["incident-1"]["partitions"]["payments-0"]["batches"][-1]
    # the disk holds the producer's CreateTime, not the append's time: the last lost batch's max_timestamp, which
    # the producer stamped before the broker appended it (last_lost_append)
    assert [e["at"] for e in last_write] == [lost_tail["max_timestamp"]]
    assert lost_tail["max_timestamp"] <= TRUTH["acknowledged_how"]["last_lost_append"]
    # and each timed event says whose clock gave its time: the producer's for a batch (CreateTime), the
    # controller's for the election, the group coordinator's for a commit
    assert [e["event"].endswith(" (producer's CreateTime)") for e in last_write] == [True]
    assert [e["event"].endswith(" (controller's clock)") for e in election] == [True]
    assert all(e["event"].endswith(("'s clock)", "'s CreateTime)", "'s LogAppendTime)"))
               for e in r["timeline"] if e["at"] is not None), r["timeline"]
    commits = {g["coordinator_offset"]: g["timestamp"] for g in EXPECTED["groups"]}
    for grp in TRUTH["groups_stranded"]:
        (e,) = [e for e in r["timeline"] if f"group {grp['group']} committed" in e["event"]]
        assert (e["at"], e["broker"]) == (commits[grp["coordinator_offset"]], "incident-3")
        assert e["event"].endswith(" (group coordinator's clock)")
    # the plan: Kafka's commands with their values filled in; each destructive step after the save of what it
    # destroys (an export of that partition, or the old leader's log dir copied aside)
    actions = r["actions"]
    assert [a["step"] for a in actions] == list(range(1, len(actions) + 1))
    commands = [a["command"] for a in actions]
    abort = "kafka-transactions.sh --bootstrap-server <BOOTSTRAP> abort --topic payments --partition 0 --start-offset 95"
    assert abort in commands
    for grp in TRUTH["groups_stranded"]:
        assert (f"kafka-consumer-groups.sh --bootstrap-server <BOOTSTRAP> --group {grp['group']} --reset-offsets "
                f"--topic payments:0 --to-offset {grp['new_log_end_offset']} --dry-run") in commands
    destructive = [i for i, a in enumerate(actions) if a["destructive"]]
    assert destructive and commands.index(abort) in destructive
    for i in destructive:
        saves = [c for c in commands[:i] if c.startswith("kforensics export ") and "--topic payments --partition 0" in c]
        assert any("--broker incident-2" in c and "--offsets 95:" in c for c in saves), actions[i]
        assert any("--broker incident-1" in c and "--offsets 100:" in c for c in saves), actions[i]
    # the terminal: the same story for the operator
    code, text = _explain(incident_scan)
    assert code == 1
    assert "records lost 80 (80 acknowledged)" in text and "payments-0 100-180 on incident-1" in text
    assert "DESTRUCTIVE" in text and r["id"] in text
    code, one = _explain(incident_scan, "--incident", r["id"], "--json")
    assert code == 1 and json.loads(one) == r


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


class _Page(HTMLParser):
    """The HTML report's structure: every element id, the h2 sections in order, and within the incidents section its
    incident sections, links and table rows by table class."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.sections: list[str] = []
        self.incidents: list[dict] = []
        self._table: str | None = None
        self._in_incidents = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "h2":
            self.sections.append(a.get("id") or "")
            self._in_incidents = a.get("id") == "incidents"
        elif not self._in_incidents:
            return
        if tag == "section" and a.get("class") == "incident":
            self.incidents.append({"id": a.get("data-incident"), "links": [], "rows": {}})
        elif self.incidents and tag == "a" and (a.get("href") or "").startswith("#"):
            self.incidents[-1]["links"].append(a["href"][1:])
        elif self.incidents and tag == "table":
            self._table = a.get("class")
        elif self.incidents and tag == "tr" and self._table:
            self.incidents[-1]["rows"][self._table] = self.incidents[-1]["rows"].get(self._table, 0) + 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._table = None


def test_the_html_report_opens_with_the_incident(incident_scan: Path, tmp_path: Path) -> None:
    """No browser here: the page's structure, parsed. The incidents section comes first; the election's incident
    is one section whose links all land on an element of the page (its findings, its partition's timelines), with
    one row per timeline event and per step (plus each table's header row)."""
    from click.testing import CliRunner

    from kforensics.cli import main

    page = tmp_path / "report.html"
    result = CliRunner().invoke(main, ["report", str(incident_scan), "--html", str(page)])
    assert result.exit_code == 1, result.output[-2000:]
    text = page.read_text(encoding="utf-8")
    parsed = _Page()
    parsed.feed(text)
    assert parsed.sections[0] == "incidents" and "findings" in parsed.sections
    code, output = _explain(incident_scan, "--json")
    (r,) = [json.loads(line) for line in output.splitlines()]
    (section,) = parsed.incidents
    assert section["id"] == r["id"] and f"incident-{r['id']}" in parsed.ids
    assert section["links"] and set(section["links"]) <= parsed.ids
    assert any(link.startswith("timeline") for link in section["links"])
    assert section["rows"] == {"incident-timeline": len(r["timeline"]) + 1, "incident-actions": len(r["actions"]) + 1}
    assert html.escape(r["title"], quote=False) in text and "records lost 80 (80 acknowledged)" in text
