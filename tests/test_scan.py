"""`kforensics scan` on sample_logs against EXPECTED.json, on the real broker disks, and its CLI contract.

One scan per mode for the whole session (each takes tens of seconds on 2 cores); every test reads the
Parquet tables it wrote.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from conftest import REALDATA, SAMPLE_INPUTS, SAMPLE_LOGS

from kforensics.cli import main

EXPECTED = json.loads((SAMPLE_LOGS / "EXPECTED.json").read_text())
INPUTS = SAMPLE_INPUTS
#: Finding kinds the scan itself adds; parser kinds (corrupt_crc, ...) are pinned by the parser tests too.
SCAN_KINDS = {"sequence_gap", "duplicate_sequence", "zombie_epoch", "hanging_transaction", "txnindex_missing",
              "txnindex_orphan", "txnindex_mismatch", "snapshot_mismatch", "leader_epoch_mismatch", "offset_overlap",
              "segment_name_mismatch", "content_duplicate", "replica_divergence", "marker_missing", "outcome_mismatch",
              "unknown_producer", "epoch_fenced_write", "committed_offset_beyond_log_end",
              "committed_offset_below_log_start", "committed_offset_in_aborted_range", "remote_log_gap",
              "remote_segment_stuck", "remote_leader_epoch_mismatch", "remote_overlap"}
REMOTE_KINDS = {"remote_log_gap", "remote_segment_stuck", "remote_leader_epoch_mismatch", "remote_overlap"}


def _table(out: Path, name: str) -> list[dict]:
    return pq.read_table(out / name).to_pylist()


def _planted() -> list[tuple[str, str, str, dict]]:
    """(broker, topic, kind, anomaly); a committed-offset anomaly is about the partition it names (`topic`),
    not the __consumer_offsets partition that holds it."""
    return [(broker, a.get("topic", name.rsplit("-", 1)[0]), a["kind"], a)
            for broker, info in EXPECTED["brokers"].items()
            for name, facts in info["partitions"].items() for a in facts["anomalies"]]


def test_every_planted_anomaly_is_found_where_it_was_planted(full_scan: Path) -> None:
    findings = _table(full_scan, "findings")
    for broker, topic, kind, planted in _planted():
        matches = [f for f in findings if (f["broker"], f["topic"], f["kind"]) == (broker, topic, kind)
                   and (planted.get("offset") is None or f["offset"] in (planted["offset"], None))]
        assert matches, f"{kind} planted in {broker}/{topic} at offset {planted.get('offset')} was not found"
        found = matches[0]
        details = json.loads(found["details"])
        if "producer_id" in planted and kind not in ("txnindex_orphan",):
            assert found["producer_id"] == planted["producer_id"], (kind, found)
        if "position" in planted and kind in ("corrupt_crc", "truncated_tail", "sequence_gap", "zombie_epoch",
                                              "duplicate_sequence", "offset_overlap", "replica_divergence",
                                              "marker_missing", "outcome_mismatch", "unknown_producer",
                                              "epoch_fenced_write") or kind.startswith("committed_offset"):
            assert found["position"] == planted["position"], (kind, found)
        if kind in REMOTE_KINDS:  # about a record of __remote_log_metadata, named relative to the partition dir
            assert Path(found["file"]).resolve() == (SAMPLE_LOGS / broker / f"{topic}-0" / planted["file"]).resolve()
            assert (found["position"], found["offset"]) == (planted["position"], planted["offset"]), found
        for field in ("expected_sequence", "found_sequence", "gap_size", "size_class", "leader_epoch_change",
                      "stored_crc", "computed_crc", "declared_size", "bytes_present", "newer_epoch",
                      "newer_epoch_first_offset", "sequence_range", "lso_stuck_at", "producer_ids", "matches",
                      "common_prefix_end_offset", "brokers", "lost_offsets", "transactional_id",
                      "coordinator_outcome", "marker_outcome", "fenced_at", "fencing_epoch", "completed_at",
                      "partitions_not_in_input", "group", "log_start_offset", "log_end_offset",
                      "aborted_first_offset", "aborted_last_offset", "missing_offsets", "remote_end_offset",
                      "local_log_start_offset", "remote_segment_id", "other_remote_segment_id", "overlap", "state",
                      "remote_epoch", "expected_epoch", "against"):
            if field in planted:
                assert details.get(field) == planted[field], (kind, field, details)


def test_nothing_but_the_planted_anomalies_is_reported(full_scan: Path) -> None:
    """Silence on the legal cases: epoch bumps to sequence 0, wraparound, clean leader changes, empty
    transactions, sequences across aborts, preallocated index tails, mid-sequence starts, a lagging follower."""
    planted = {(b, t, k) for b, t, k, _ in _planted()}
    unexpected = [f for f in _table(full_scan, "findings") if f["severity"] != "info"
                  and (f["broker"], f["topic"], f["kind"]) not in planted
                  and not (f["kind"] == "txnindex_bad_entry" and f["topic"] == "txnbad")]
    assert unexpected == []
    kinds = {f["kind"] for f in _table(full_scan, "findings")}
    assert SCAN_KINDS <= kinds


def _sorted(rows) -> list[tuple]:
    return sorted(tuple(-1 if v is None else v for v in row) for row in rows)


def test_transactions_match_what_was_written(full_scan: Path) -> None:
    rows = _table(full_scan, "transactions")
    for broker, info in EXPECTED["brokers"].items():
        for name, facts in info["partitions"].items():
            topic = name.rsplit("-", 1)[0]
            ours = _sorted((r["producer_id"], r["first_offset"], r["last_data_offset"], r["marker_offset"], r["outcome"],
                           r["batch_count"], r["record_count"]) for r in rows
                          if (r["broker"], r["topic"]) == (broker, topic))
            theirs = _sorted((t["producer_id"], t["first_offset"], t["last_data_offset"], t["marker_offset"],
                             t["outcome"], t["batch_count"], t["record_count"]) for t in facts["transactions"])
            assert ours == theirs, (broker, name)


def test_aborted_ranges_and_lso(full_scan: Path) -> None:
    payments = EXPECTED["brokers"]["broker-1"]["partitions"]["payments-0"]
    ranges = sorted((r["producer_id"], r["first_offset"], r["last_offset"], r["last_stable_offset"],
                     r["txnindex_agrees"]) for r in _table(full_scan, "aborted_ranges")
                    if (r["broker"], r["topic"]) == ("broker-1", "payments"))
    assert ranges == sorted((r["producer_id"], r["first_offset"], r["last_offset"], r["last_stable_offset"], True)
                            for r in payments["aborted_ranges"])
    lso = {(r["broker"], r["topic"]): r for r in _table(full_scan, "lso")}
    hanging = next(t for t in payments["transactions"] if t["outcome"] == "OPEN")
    assert lso[("broker-1", "payments")]["last_stable_offset"] == hanging["first_offset"]
    assert lso[("broker-1", "payments")]["high_watermark"] == payments["high_watermark"]
    assert lso[("broker-1", "orders")]["last_stable_offset"] == lso[("broker-1", "orders")]["log_end_offset"] == 390
    changes = [r for r in _table(full_scan, "lso_changes") if (r["broker"], r["topic"]) == ("broker-1", "payments")]
    assert changes and changes[-1]["last_stable_offset"] == hanging["first_offset"]


def test_producers_table_counts(full_scan: Path) -> None:
    rows = _table(full_scan, "producers")
    for name in ("orders-0", "events-0", "payments-0"):
        facts = EXPECTED["brokers"]["broker-1"]["partitions"][name]
        topic = name.rsplit("-", 1)[0]
        for producer in facts["producers"]:
            ours = [r for r in rows if (r["broker"], r["topic"], r["producer_id"]) == ("broker-1", topic,
                                                                                        producer["producer_id"])]
            assert sorted({r["producer_epoch"] for r in ours}) == sorted(producer["epochs"])
            assert sum(r["batch_count"] for r in ours) == producer["batch_count"]
            assert sum(r["record_count"] for r in ours) == producer["record_count"]


def test_remote_segments_and_partition_deletes_tables(full_scan: Path) -> None:
    """One row per remote segment with its final state, as the generator wrote its metadata records; the
    remote deletion of the deleted topic; and the sound tiered partition (views-0) has no finding at all."""
    rows = _table(full_scan, "remote_segments")
    for name in ("clicks-0", "views-0"):
        facts = EXPECTED["brokers"]["broker-1"]["partitions"][name]
        metadata_dir = SAMPLE_LOGS / "broker-1" / facts["remote_log_metadata_partition"]
        ours = sorted((r["remote_segment_id"], r["start_offset"], r["end_offset"], r["segment_leader_epochs"], r["state"],
                       r["broker_id"], r["size"], r["first_event_at"], r["last_event_at"], Path(r["file"]).parent.name,
                       Path(r["file"]).name, r["position"], r["topic_id"])
                      for r in rows if (r["broker"], r["topic"], r["partition"]) == ("broker-1", name[:-2], 0))
        topic_id = (SAMPLE_LOGS / "broker-1" / name / "partition.metadata").read_text().split("topic_id: ")[1].strip()
        theirs = sorted((s["remote_segment_id"], s["start_offset"], s["end_offset"],
                         ", ".join(f"{e}@{o}" for e, o in s["segment_leader_epochs"]), s["state"], s["broker_id"],
                         s["size"], s["first_event_at"], s["last_event_at"], metadata_dir.name, s["file"], s["position"],
                         topic_id) for s in facts["remote_segments"])
        assert ours == theirs, name
    assert {r["broker_leader_epoch"] for r in rows if r["topic"] == "clicks"} == {0, 1, 2}
    deletes = _table(full_scan, "remote_partition_deletes")
    assert [(d["topic"], d["state"]) for d in sorted(deletes, key=lambda d: d["offset"])] == [
        ("scratch", "DELETE_PARTITION_MARKED"), ("scratch", "DELETE_PARTITION_STARTED"),
        ("scratch", "DELETE_PARTITION_FINISHED")]
    assert [f for f in _table(full_scan, "findings") if f["topic"] in ("views", "__remote_log_metadata")] == []


def _canonical(rows: list[dict]) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True, default=str) for r in rows)


@pytest.mark.parametrize("large_tables", [False, True], ids=["small-tables", "large-tables"])
def test_a_large_scan_writes_the_same_tables_as_a_small_one(spark, full_scan: Path, tmp_path: Path,
                                                            monkeypatch, large_tables: bool) -> None:
    """A small input's tables are collected and written by the driver (one file each), a large one's by Spark's
    writers with Spark's settings; the analysis of a large input whose input tables are small is a small input's,
    in generated code. The same scan through each path gives the same rows."""
    from kforensics.spark import session
    from kforensics.spark.jobs import run_scan

    assert [p.name for p in (full_scan / "findings").iterdir()] == ["part-00000.parquet"]
    monkeypatch.setattr(session, "SMALL_INPUT_BYTES", -1)
    if large_tables:
        monkeypatch.setattr(session, "SMALL_TABLES_BYTES", -1)
    out = tmp_path / "large"
    run_scan(spark, INPUTS, str(out), headers_only=False)
    # the parse pass's tables are written by Spark's writers either way; the analysis's by the driver if small
    assert any(p.name.startswith("part-") and p.name != "part-00000.parquet" for p in (out / "batches").iterdir())
    findings_files = [p.name for p in (out / "findings").iterdir()]
    assert (findings_files == ["part-00000.parquet"]) != large_tables, findings_files
    # Spark's settings are the session's again once the scan is done
    assert spark.conf.get("spark.sql.adaptive.enabled") == "true"
    manifest = json.loads((full_scan / "_kforensics.json").read_text())
    for name in manifest["tables"]:
        assert _canonical(_table(out, name)) == _canonical(_table(full_scan, name)), name
    def order(out: Path) -> list[tuple]:
        return [tuple(f[k] for k in ("broker", "topic", "partition", "offset", "kind")) for f in _table(out, "findings")]

    assert order(out) == order(full_scan)  # sorted alike, nulls first


def test_headers_only_finds_the_same_except_content(full_scan: Path, headers_scan: Path) -> None:
    def kinds(out: Path) -> set[tuple]:
        return {(f["broker"], f["topic"], f["kind"], f["offset"]) for f in _table(out, "findings")}

    assert kinds(headers_scan) == {k for k in kinds(full_scan) if k[2] != "content_duplicate"}


def test_the_summary_streamed_from_the_files_equals_sparks_aggregates(spark, full_scan: Path, headers_scan: Path,
                                                                      tmp_path: Path) -> None:
    """`scan_output.summarize` streams the Parquet tables with pyarrow (local paths and URIs alike); the same
    aggregates computed by Spark over the same files must agree, on real scans and on an OUT whose analysis
    tables are empty."""
    import shutil

    from pyspark.sql import functions as F

    from kforensics.scan_output import IMAGE_TIME_COLUMNS, ScanSummary, summarize
    from kforensics.times import iso

    def by_spark(out: Path) -> ScanSummary:
        base = str(out)
        seg = spark.read.parquet(f"{base}/segments")
        agg = seg.agg(F.count(F.lit(1)).alias("s"), F.sum("batch_count").alias("b"), F.sum("record_count").alias("r"),
                      F.sum("size").alias("bytes")).first()
        replicas = seg.filter("dir_state = 'live'").select("broker", "topic", "partition").distinct().collect()
        special = {r["dir_state"]: r["n"] for r in seg.filter("dir_state != 'live'").select(
            "broker", "topic", "partition", "dir_state").distinct().groupBy("dir_state").agg(
            F.count(F.lit(1)).alias("n")).collect()}
        named = (spark.read.parquet(f"{base}/coordinator_transactions")
                 .select(F.explode("partitions_not_in_input").alias("p"))
                 .unionByName(spark.read.parquet(f"{base}/consumer_offsets").filter(~F.col("in_input"))
                              .select(F.format_string("%s-%d", "topic", "partition").alias("p"))).distinct())
        return ScanSummary(
            out=base, brokers=sorted(r["broker"] for r in seg.select("broker").distinct().collect()), partitions=len(replicas),
            topic_partitions=len({(r["topic"], r["partition"]) for r in replicas}), segments=agg["s"] or 0,
            batches=agg["b"] or 0, records=agg["r"] or 0, bytes=agg["bytes"] or 0,
            producers=spark.read.parquet(f"{base}/producers").select("broker", "topic", "partition",
                                                                      "producer_id").distinct().count(),
            transactions={r["outcome"]: r["n"] for r in spark.read.parquet(f"{base}/transactions")
                          .groupBy("outcome").agg(F.count(F.lit(1)).alias("n")).orderBy("outcome").collect()},
            findings=[(r["kind"], r["severity"], r["n"]) for r in spark.read.parquet(f"{base}/findings")
                      .groupBy("kind", "severity").agg(F.count(F.lit(1)).alias("n")).orderBy("kind", "severity")
                      .collect()],
            not_in_input=sorted(r["p"] for r in named.collect()), special_dirs=dict(sorted(special.items())),
            incomplete=sorted(f"{r['topic']}-{r['partition']} on {r['broker']}" for r in
                              spark.read.parquet(f"{base}/replicas").filter(F.col("complete") == F.lit(False))
                              .select("broker", "topic", "partition").distinct().collect()),
            image_times=[{**{c: r[c] for c in IMAGE_TIME_COLUMNS}, "image_time_iso": iso(r["image_time"])}
                         for r in spark.read.parquet(f"{base}/image_times").orderBy("broker").collect()]
            if (out / "image_times").is_dir() else [])

    # the scans named their jobs for Spark's UI, and left no name behind on this thread
    assert spark.sparkContext.getLocalProperty("spark.job.description") is None
    for out in (full_scan, headers_scan):
        assert summarize(str(out)) == by_spark(out)
        uri = summarize(f"file://{out}")
        assert uri.out == f"file://{out}" and ScanSummary.from_dict({**uri.to_dict(), "out": str(out)}) == by_spark(out)
    full = summarize(str(full_scan))
    assert full.partitions > 10 and full.segments >= full.partitions and full.batches > full.partitions
    assert full.records > full.batches and full.bytes > 0 and full.producers > 0
    assert full.brokers == ["broker-1", "broker-2", "broker-3"] and full.topic_partitions < full.partitions
    assert {"COMMIT", "ABORT"} <= set(full.transactions) and full.findings and full.not_in_input == ["ledger-0"]
    # every broker of the sample disks has its image time, from its own files
    assert [r["broker"] for r in full.image_times] == full.brokers
    assert all(r["image_time"] > 0 and r["clock"] in ("broker", "producer") and r["source"] for r in full.image_times)

    empty = tmp_path / "empty"
    for table in ("segments", "producers", "transactions", "findings", "coordinator_transactions",
                  "consumer_offsets", "replicas"):
        spark.read.parquet(str(full_scan / table)).limit(0).write.parquet(str(empty / table))
    assert summarize(str(empty)) == by_spark(empty) == ScanSummary(out=str(empty))
    shutil.rmtree(empty / "findings")
    (empty / "findings").mkdir()  # a table that wrote no file at all
    assert summarize(str(empty)).findings == []


def realdata_clusters() -> dict[str, list[tuple[str, str]]]:
    """Each data set of ../shared/realdata as one cluster: all its log dirs (a folder holding meta.properties), each
    labelled by its folder's name where the set has several (`<set>/<folder>`), else by the set's name."""
    sets = {}
    for data_set in sorted(p for p in REALDATA.iterdir() if p.is_dir()):
        dirs = sorted(p.parent for p in data_set.rglob("meta.properties"))
        if dirs:
            sets[data_set.name] = [(f"{data_set.name}/{d.name}" if len(dirs) > 1 else data_set.name, str(d))
                                   for d in dirs]
    return sets


def _cluster_ids(inputs: list[tuple[str, str]]) -> set[str]:
    ids = set()
    for _, path in inputs:
        text = (Path(path) / "meta.properties").read_text(errors="replace")
        found = [line.split("=", 1)[1].strip() for line in text.splitlines() if line.startswith("cluster.id=")]
        ids.add(found[0] if found else "")  # the scan's cluster id: "" when meta.properties has none
    return ids


def scans_of_separate_clusters(sets: dict[str, list[tuple[str, str]]]) -> list[list[str]]:
    """The data sets packed into as few scans as can hold them apart: two sets share a scan only if no cluster id is
    in both (every rule that joins log dirs does so within a cluster id), so that nothing crosses between them."""
    scans: list[tuple[list[str], set[str]]] = []
    for name, inputs in sets.items():
        ids = _cluster_ids(inputs)
        for names, taken in scans:
            if not ids & taken:
                names.append(name)
                taken |= ids
                break
        else:
            scans.append(([name], set(ids)))
    return [names for names, _ in scans]


#: The partitions whose copy in ../shared/realdata lacks a segment (PROVENANCE.md: files of 4 MiB and more were not
#: kept): the offsets each lacks, and the absent segment where its files name it.
INCOMPLETE_COPIES = {
    ("arthur-kraft-raw-snappy", "__consumer_offsets", 19): [(258527, 330478, 258527)],
    ("erickimm-kraft-rolled-segments", "__cluster_metadata", 0): [(0, 108214, 0), (108215, 203418, 108215)],
    ("islamalishaev-kraft-go-snappy", "__cluster_metadata", 0): [(0, 785758, 0)],
    ("ronem123-rupia-kraft", "__cluster_metadata", 0): [(839130, 1725412, 839130)],
    # no file of its 00000000000000000000.log is left (its active indexes were preallocated, 10 MiB): its
    # leader-epoch-checkpoint starts at 0, a producer snapshot is at 53298, a metadata snapshot ends at 60500
    ("ksqldb-patient-admissions-cp", "__cluster_metadata", 0): [(0, 60499, None)],
}


@pytest.fixture(scope="module")
def realdata_scans(spark, tmp_path_factory) -> list[Path]:
    """Every data set of ../shared/realdata scanned as one cluster (all its log dirs together), in as few scans as
    keep the clusters apart."""
    from kforensics.spark.jobs import run_scan

    if not REALDATA.is_dir():
        pytest.skip("../shared/realdata is absent")
    sets = realdata_clusters()
    outs = []
    for names in scans_of_separate_clusters(sets):
        out = tmp_path_factory.mktemp("scan-realdata")
        run_scan(spark, [i for name in names for i in sets[name]], str(out), headers_only=False)
        outs.append(out)
    return outs


def _tables(outs: list[Path], name: str) -> list[dict]:
    return [row for out in outs for row in _table(out, name)]


def test_real_disks_explain_to_no_incident_but_their_copies_gaps(realdata_scans: list[Path]) -> None:
    """Issue 49 on real disks (the same scans, one per cluster): no warning or error incident, but those of the
    segments a copy lacks (issue 47's segment_missing, a fact of the copy, not of the cluster)."""
    from test_explain_samples import _explained

    for out in realdata_scans:
        findings = _table(out, "findings")
        for incident in _explained(out):
            kinds = {f["kind"] for f in findings
                     if f["incident_id"] == incident["id"] and f["severity"] in ("warning", "error")}
            assert kinds <= {"segment_missing"}, (out.name, incident["title"], kinds)


def test_real_broker_disks_scan_without_warnings(realdata_scans: list[Path]) -> None:
    sets = realdata_clusters()
    assert len(realdata_scans) < len(sets)  # one scan per cluster, packed
    assert sum(len(_table(out, "segments")) for out in realdata_scans) > 40
    assert sum(r["batch_count"] for r in _tables(realdata_scans, "segments")) > 50_000
    findings = _tables(realdata_scans, "findings")
    problems = [f for f in findings if f["severity"] != "info" and f["kind"] != "segment_missing"]
    assert problems == []
    # segment_missing on exactly the partitions whose copy lacks a segment, with the offsets it lacks
    missing: dict[tuple, list] = {}
    for f in findings:
        if f["kind"] == "segment_missing":
            details = json.loads(f["details"])
            missing.setdefault((f["broker"], f["topic"], f["partition"]), []).append(
                (*details["missing_offsets"], details.get("absent_segment")))  # none where no file names it
    assert {k: sorted(v) for k, v in missing.items()} == INCOMPLETE_COPIES
    replicas = {(r["broker"], r["topic"], r["partition"]): r for r in _tables(realdata_scans, "replicas")
                if r["dir_state"] == "live"}
    assert replicas[("arthur-kraft-raw-snappy", "__consumer_offsets", 19)]["covered_to"] == 258527
    assert not any(replicas[k]["complete"] for k in INCOMPLETE_COPIES if k in replicas)
    # what needs the offsets a copy lacks is not judged, and says so: the group's commits seen on
    # __consumer_offsets-19 are not its latest (those are in the absent segment), and the restart prediction of
    # that partition is for the disk as given
    notes = [json.loads(f["details"]) | {"broker": f["broker"], "topic": f["topic"]} for f in findings
             if f["kind"] == "not_judged"]
    assert {(n["broker"], n["rule"], n["incomplete_partition"]) for n in notes
            if n["broker"] == "arthur-kraft-raw-snappy"} == {
        ("arthur-kraft-raw-snappy", "committed_offset_below_log_start", "__consumer_offsets-19"),
        ("arthur-kraft-raw-snappy", "restart_prediction", "__consumer_offsets-19")}
    # the leader epochs given after erickimm's metadata snapshot at 194445 are in the segments its copy lacks
    erickimm = [n for n in notes if n["broker"] == "erickimm-kraft-rolled-segments"]
    assert len(erickimm) == 54 and {(n["rule"], n["missing_offsets"][0]) for n in erickimm} == {
        ("leader_epoch_unknown", 108215)}
    # Compacted __consumer_offsets (ronem123: cleaner-offset-checkpoint `31 3`, `44 9`; its KRaft metadata log's
    # ConfigRecord says cleanup.policy=compact): read as compacted, nothing to say about it (issue 43).
    assert not [f for f in findings if f["kind"] == "cleaned_sequence_holes"]
    offsets = {r["partition"]: r for r in replicas.values()
               if (r["broker"], r["topic"]) == ("ronem123-rupia-kraft", "__consumer_offsets")}
    assert offsets[31]["cleaned_up_to"] == 3 and all(r["compacted"] for r in offsets.values())
    # The one real __transaction_state partition (ksqlDB's `default_` transactional id) committed on its command
    # topic, which is in the same dir: the coordinator and the COMMIT marker agree, and `txns` names the id.
    (coord,) = _tables(realdata_scans, "coordinator_transactions")
    assert (coord["transactional_id"], coord["outcome"], coord["partitions"], coord["partitions_not_in_input"]) == (
        "default_", "COMMIT", ["_confluent-ksql-default__command_topic-0"], [])
    commits = [t for t in _tables(realdata_scans, "transactions")
               if t["topic"] == "_confluent-ksql-default__command_topic"]
    assert [(t["producer_id"], t["outcome"], t["transactional_id"]) for t in commits
            if t["broker"] == "ksqldb-patient-admissions-cp"] == [(0, "COMMIT", "default_")]
    # Another ksqlDB disk committed 4 times on its own command topic, but its __transaction_state-0 dir holds no
    # segment: nothing in the input names the producer, so nothing is judged (and no id is guessed).
    other = [t for t in commits if t["broker"] == "ksqldb-bigdatatech-v2"]
    assert len(other) == 4 and {t["transactional_id"] for t in other} == {None}
    # Real group commits are judged where their partition is in the input (same cluster id), listed otherwise.
    offsets = _tables(realdata_scans, "consumer_offsets")
    assert {o["status"] for o in offsets} == {"ok", "not_in_input", "below_log_start"}
    assert sum(o["in_input"] for o in offsets) >= 3
    # The multi-node sets are clusters of replicas: greenlemont's three nodes hold __consumer_offsets-14 alike
    greenlemont = [r for r in replicas.values() if r["broker"].startswith("greenlemont-kraft35-3node/")
                   and (r["topic"], r["partition"]) == ("__consumer_offsets", 14)]
    assert len(greenlemont) == 3 and all(r["replica_count"] == 3 and r["in_sync"] for r in greenlemont)
    # replica_count is the number of inputs of the same cluster id holding the partition, within a scan (sets that
    # share a cluster id, erickimm's and ksqldb-patient's, are scanned apart: each its own replica)
    for out in realdata_scans:
        live = [r for r in _table(out, "replicas") if r["dir_state"] == "live"]
        holders = Counter((r["cluster_id"], r["topic"], r["partition"]) for r in live)
        assert all(r["replica_count"] == holders[(r["cluster_id"], r["topic"], r["partition"])] for r in live)
    # ronem123's single combined node (Kafka 3.9+, a dynamic quorum): its snapshot holds the KRaftVersion and Voters
    # control records and the node's RegisterControllerRecord, read as the controllers' baseline (issue 50:
    # controller_history)
    ronem = [r for r in _tables(realdata_scans, "controller_history")
             if r["metadata_broker"] == "ronem123-rupia-kraft"]
    assert {(r["event"], r["from_snapshot"], r["kraft_version"]) for r in ronem} == {
        ("kraft_version", True, 1), ("voters", True, None), ("controller_registered", True, None)}
    (voters,) = [r for r in ronem if r["event"] == "voters"]
    assert voters["voter_ids"] == [1] and voters["added_voters"] is None
    assert voters["voters"][0]["voter_directory_id"] == "yYuMrFRVQVSX0VVQPcMSrA"
    assert [(e["host"], e["port"]) for e in voters["voters"][0]["endpoints"]] == [("localhost", 9093)]
    # ... and `leaders --controllers` shows them, as JSON lines and as a table marked as the snapshot's baseline
    (out,) = [o for o in realdata_scans if any(r["metadata_broker"] == "ronem123-rupia-kraft"
                                                for r in _table(o, "controller_history"))]
    shown = CliRunner().invoke(main, ["leaders", str(out), "--controllers", "--json"])
    assert shown.exit_code == 0, shown.output
    lines = [json.loads(line) for line in shown.stdout.splitlines()]
    assert {(line["event"], tuple(line["voter_ids"] or ())) for line in lines
            if line["metadata_broker"] == "ronem123-rupia-kraft"} == {("kraft_version", ()), ("voters", (1,)),
                                                                       ("controller_registered", ())}
    table = CliRunner().invoke(main, ["leaders", str(out), "--controllers"], env={"COLUMNS": "250"})
    assert table.exit_code == 0 and "yYuMrFRVQVSX0VVQPcMSrA" in table.output and "voters (snapshot: baseline)" in table.output
    # Their classic groups replayed (issue 41): every consumer-protocol member's assignment reads (no note), and
    # the groups of other protocols (Connect, Schema Registry) are members that own no partition.
    assert not [f for f in findings if f["kind"] == "consumer_protocol_undecodable"]
    owned = _tables(realdata_scans, "group_assignments")
    assert len(owned) > 50 and {r["group_type"] for r in owned} == {"classic"}
    assert {r["group"] for r in _tables(realdata_scans, "group_members")} >= {"schema-registry",
                                                                                "my-first-application"}


def test_realdata_sets_scanned_together_are_held_apart() -> None:
    """Two data sets share a scan only when no cluster id is in both (erickimm's and ksqldb-patient's disks both carry
    the quickstart's MkU3OEVBNTcwNTJENDM2Qk; romanenko's empty cluster.id and sharaweil's missing one are both '')."""
    if not REALDATA.is_dir():
        pytest.skip("../shared/realdata is absent")
    sets = realdata_clusters()
    scans = scans_of_separate_clusters(sets)
    assert sorted(n for names in scans for n in names) == sorted(sets)
    for names in scans:
        ids = [i for n in names for i in _cluster_ids(sets[n])]
        assert len(ids) == len(set(ids))
    together = {n: i for i, names in enumerate(scans) for n in names}
    assert together["erickimm-kraft-rolled-segments"] != together["ksqldb-patient-admissions-cp"]


def test_scan_cli_json_lines_and_exit_code(spark, tmp_path: Path) -> None:
    out = tmp_path / "out"
    # The input as a URI: listing and reading go through pyarrow.fs, as for s3:// or hdfs://.
    result = CliRunner().invoke(main, ["scan", f"b1={(SAMPLE_LOGS / 'broker-1').as_uri()}", "--out", str(out),
                                       "--json", "--topic", "events"])
    assert result.exit_code == 1, result.output
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert {line["kind"] for line in lines} == {"sequence_gap", "duplicate_sequence", "zombie_epoch"}
    for line in lines:
        assert list(line)[:11] == ["kind", "severity", "broker", "topic", "partition", "file", "position", "offset",
                                   "producer_id", "producer_epoch", "message"]
        assert line["broker"] == "b1" and line["file"].startswith("file://")
    gap = next(line for line in lines if line["kind"] == "sequence_gap")
    assert {"expected_sequence", "found_sequence", "gap_size", "size_class", "leader_epoch_change"} <= set(gap)
    clean = CliRunner().invoke(main, ["scan", str(SAMPLE_LOGS / "broker-1"), "--out", str(tmp_path / "o2"),
                                      "--topic", "orders"])
    assert clean.exit_code == 0, clean.output


def test_scan_usage_errors_exit_2(tmp_path: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(main, ["scan", str(tmp_path / "nope")]).exit_code == 2
    inside = SAMPLE_LOGS / "broker-1" / "out"
    assert runner.invoke(main, ["scan", str(SAMPLE_LOGS / "broker-1"), "--out", str(inside)]).exit_code == 2
    assert not inside.exists()
    assert runner.invoke(main, ["scan"]).exit_code == 2
    bad_conf = runner.invoke(main, ["scan", str(SAMPLE_LOGS / "broker-1"), "--conf", "spark.driver.memory"])
    assert bad_conf.exit_code == 2 and "KEY=VALUE" in bad_conf.output
    bad_duration = runner.invoke(main, ["scan", str(SAMPLE_LOGS / "broker-1"), "--remote-stuck-after", "soon"])
    assert bad_duration.exit_code == 2 and "not a duration" in bad_duration.output


def test_report_commands_over_a_finished_scan(full_scan: Path) -> None:
    runner = CliRunner()

    def lines(*args: str) -> list[dict]:
        result = runner.invoke(main, [*args, str(full_scan), "--json"])
        assert result.exit_code == 0, result.output
        return [json.loads(line) for line in result.stdout.splitlines()]

    txns = lines("txns", "--topic", "payments", "--pid", "2001")
    assert txns and all(t["producer_id"] == 2001 for t in txns)
    assert set(txns[0]) >= {"broker", "topic", "partition", "producer_id", "producer_epoch", "first_offset",
                            "last_data_offset", "marker_offset", "outcome", "batch_count", "record_count",
                            "duration_ms"}
    lso = lines("lso", "--topic", "payments")
    assert {(r["broker"], r["last_stable_offset"]) for r in lso} == {("broker-1", 43), ("broker-2", 43)}
    assert set(lso[0]) >= {"broker", "topic", "partition", "last_stable_offset", "high_watermark", "log_end_offset"}
    progression = lines("lso", "--progression", "--topic", "payments", "--partition", "0")
    assert progression and set(progression[0]) >= {"broker", "topic", "partition", "offset", "last_stable_offset"}
    gaps = lines("gaps", "--topic", "events")
    assert {g["kind"] for g in gaps} == {"sequence_gap", "duplicate_sequence", "zombie_epoch"}
    producers = lines("producers", "--topic", "orders", "--pid", "1001")
    assert {p["producer_epoch"] for p in producers if p["broker"] == "broker-1"} == {0, 1}
    table = runner.invoke(main, ["txns", str(full_scan)])
    assert table.exit_code == 0 and "transactions by outcome" in table.stdout


def test_scan_help_does_not_import_pyspark() -> None:
    import subprocess
    import sys

    code = ("import sys; from click.testing import CliRunner; from kforensics.cli import main; "
            "CliRunner().invoke(main, ['scan', '--help']); CliRunner().invoke(main, ['txns', '--help']); "
            "print('pyspark' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip() == "False"


@pytest.mark.process
def test_scan_in_its_own_process_keeps_the_terminal_clean(tmp_path: Path) -> None:
    """The real command, as an operator runs it: its own embedded Spark (with the default JVM options and a
    `--conf`), exit code 1, findings on stdout, and nothing on stderr that looks like a failure. Spark logs an
    ERROR stack trace per task when a lazily checkpointed table's plan is collected before the table is read."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "PYSPARK_SUBMIT_ARGS"}
    result = subprocess.run([sys.executable, "-m", "kforensics", "scan", *(f"{n}={p}" for n, p in SAMPLE_INPUTS),
                             "--headers-only", "--json", "--out", str(tmp_path / "out"),
                             "--conf", "spark.sql.shuffle.partitions=3"],
                            capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 1, result.stderr[-3000:]
    kinds = {json.loads(line)["kind"] for line in result.stdout.splitlines()}
    assert {"replica_divergence", "sequence_gap", "corrupt_crc"} <= kinds
    for marker in ("ERROR", "Traceback", "Exception"):
        assert marker not in result.stderr, result.stderr[-3000:]
