"""What a real log dir may hold beside its partitions, and how the listing and the scan take it (issue 23):
junk is an `unknown_file` finding and nothing else; Kafka's -delete, -future and -stray dirs are read and named;
every analysis takes empty inputs."""

from __future__ import annotations

import json
import os
import re
import struct
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from log_dir_builder import JUNK, PARTITIONS, add_junk, add_partitions, log_dirs

from kforensics import scan_output
from kforensics.parsers import log_dir
from kforensics.parsers.crc import crc32c
from kforensics.parsers.log_dir import (
    DIR_STATE_OF_FILE,
    REMOTE_INDEX_CACHE_DIR,
    kafka_topic_partition,
    parse_partition_dir_name,
    scan_log_dir,
)


def _unknown(findings) -> dict[str, dict]:
    return {Path(f.file).name: f for f in findings if f.kind == "unknown_file"}


def test_every_junk_entry_is_one_unknown_file_finding(tmp_path: Path) -> None:
    add_partitions(tmp_path, list(PARTITIONS[:2]), [(PARTITIONS[0], "future"), (PARTITIONS[1], "stray"),
                                                    (PARTITIONS[0], "delete")])
    made = add_junk(tmp_path, list(JUNK))
    listed, findings = scan_log_dir(tmp_path)
    unknown = _unknown(findings)
    assert len([f for f in findings if f.kind == "unknown_file"]) == made == len(unknown)
    entries = {name: json.loads(json.dumps(f.details))["entry"] for name, f in unknown.items()}
    assert entries["lost+found"] == "dir" and entries["lost+found.1"] == "dir" and entries["backup"] == "dir"
    # Kafka's own special dirs load; the folders would stop the broker (said on their unknown_file)
    assert sorted(Path(d).name for d in listed.refused_dirs) == ["backup", "lost+found", "lost+found.1"]
    assert entries["a-pipe"] == "fifo" and entries["a-socket"] == "socket" and entries["stuck.fifo"] == "fifo"
    assert entries["a-dangling-link"] == "dangling_symlink"
    assert entries["loop-a"] == entries["loop-b"] == "symlink_loop"
    assert entries["NOTES-incident-42.txt"] == entries[".DS_Store"] == "file"
    if "a-device" in entries:
        assert entries["a-device"] == "device"
    # a folder is one finding, not one per file in it
    assert not any("#1234" in f.file for f in findings)
    name = {p: parse_partition_dir_name(p)[:2] for p in PARTITIONS}
    assert sorted((p.topic, p.partition, p.dir_state) for p in listed.partitions) == sorted([
        (*name[PARTITIONS[0]], "live"), (*name[PARTITIONS[1]], "live"), (*name[PARTITIONS[0]], "future"),
        (*name[PARTITIONS[1]], "stray"), (*name[PARTITIONS[0]], "delete")])
    assert all(f.severity is None or f.effective_severity == "info" for f in findings if f.kind == "unknown_file")


def test_folders_kafka_cannot_load_are_named_and_its_index_cache_is_left_alone(tmp_path: Path) -> None:
    """LogManager.loadLogs skips remote-log-index-cache (RemoteIndexCache.DIR_NAME) and anything that is not a
    directory; every other directory must parse as topic-partition, or the broker does not start."""
    add_partitions(tmp_path, [PARTITIONS[0]], [(PARTITIONS[0], "delete")])
    (tmp_path / "lost+found").mkdir()
    (tmp_path / REMOTE_INDEX_CACHE_DIR / "0").mkdir(parents=True)
    (tmp_path / "NOTES.txt").write_text("a file: the broker skips it\n")
    os.symlink(tmp_path / "lost+found", tmp_path / "backup")  # a link to a folder is a folder to Kafka
    listed, findings = scan_log_dir(tmp_path)
    assert sorted(Path(d).name for d in listed.refused_dirs) == ["backup", "lost+found"]
    assert REMOTE_INDEX_CACHE_DIR not in _unknown(findings)
    assert set(_unknown(findings)) == {"lost+found", "backup", "NOTES.txt"}


@pytest.mark.parametrize("name, parsed", [
    ("orders-0", ("orders", 0)), ("my.topic-v2-12", ("my.topic-v2", 12)), ("orders-+1", ("orders", 1)),
    ("orders--1", ("orders-", 1)), ("__cluster_metadata-0", ("__cluster_metadata", 0)),
    ("orders-3.0123456789abcdef0123456789abcdef-delete", ("orders", 3)), ("x-1.a-stray", ("x", 1)),
    ("lost+found", None), ("lost+found.1", None), ("backup", None), ("backup-dir", None), (".snapshot", None),
    ("x-3-delete", None), ("a b-1.uid-future", None), ("-1", None), ("orders-99999999999", None),
    ("orders-1_0", None), ("orders- 1", None),
])
def test_kafka_topic_partition_reads_a_name_as_kafka_does(name: str, parsed: tuple | None) -> None:
    """LocalLog.parseTopicPartitionName (Kafka 3.9): the cut at the last '-', Integer.parseInt, and the \\S+ patterns
    of the suffixed names."""
    assert kafka_topic_partition(name) == parsed


def test_kafka_dir_names() -> None:
    uid = "0123456789abcdef0123456789abcdef"
    assert parse_partition_dir_name(f"orders-3.{uid}-delete") == ("orders", 3, "delete")
    assert parse_partition_dir_name(f"orders-3.{uid}-future") == ("orders", 3, "future")
    assert parse_partition_dir_name(f"orders-3.{uid}-stray") == ("orders", 3, "stray")
    assert parse_partition_dir_name(f"my.topic-v2-12.{uid}-stray") == ("my.topic-v2", 12, "stray")
    assert parse_partition_dir_name("my.topic-v2-12") == ("my.topic-v2", 12, "live")
    assert parse_partition_dir_name("orders-3-delete") is None
    assert parse_partition_dir_name("lost+found") is None
    assert parse_partition_dir_name("orders-99999999999") is None  # not an int32 partition
    # a -delete name whose topic Kafka cut to keep the name within 255 characters (LocalLog, capped length)
    cut = "t" * (255 - len(f"-7.{uid}-delete")) + f"-7.{uid}-delete"
    assert len(cut) == 255 and parse_partition_dir_name(cut)[1:] == (7, "delete")


@pytest.mark.parametrize("name", ["orders-0", "orders-0.0123456789abcdef0123456789abcdef-delete",
                                  "orders-0.0123456789abcdef0123456789abcdef-future", "a.b-c-12.ff-stray",
                                  "x-delete-1", "x-1.abc-futur", "x-1.abc-stray.d", "__consumer_offsets-49"])
def test_spark_dir_state_pattern_agrees_with_the_listing(name: str) -> None:
    m = re.search(DIR_STATE_OF_FILE, f"/data/kafka/{name}/00000000000000000000.log")
    from_file = m.group(1) if m else "live"
    parsed = parse_partition_dir_name(name)
    assert from_file == (parsed[2] if parsed else "live")


def test_an_unreadable_partition_dir_is_reported_and_the_rest_is_listed(tmp_path: Path, monkeypatch) -> None:
    add_partitions(tmp_path, list(PARTITIONS[:2]), [])
    real = log_dir.list_entries
    blocked = str(tmp_path / PARTITIONS[0])

    def listing(fs, path):
        if path == blocked:
            raise PermissionError(13, "Permission denied", path)
        return real(fs, path)

    monkeypatch.setattr(log_dir, "list_entries", listing)
    listed, findings = scan_log_dir(tmp_path)
    assert [p.name for p in listed.partitions] == [PARTITIONS[1]]
    (bad,) = [f for f in findings if f.kind == "unreadable_file"]
    assert bad.file == blocked and "Permission denied" in bad.message


def test_an_entry_whose_type_cannot_be_read_is_unknown(tmp_path: Path, monkeypatch) -> None:
    add_partitions(tmp_path, [PARTITIONS[0]], [])
    (tmp_path / "private").mkdir()
    real_stat = log_dir.os.stat

    def fake_stat(path, *args, **kwargs):
        if str(path).endswith("/private"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(log_dir.os, "stat", fake_stat)
    _, findings = scan_log_dir(tmp_path)
    private = _unknown(findings)["private"]
    assert private.details["entry"] == "unreadable" and "Permission denied" in private.message


# --- the scan ------------------------------------------------------------------------------------------------


def _scan(spark, root: Path, out: Path, headers_only: bool = True):
    from kforensics.spark.jobs import run_scan

    summary = run_scan(spark, [("b", str(root))], str(out), headers_only=headers_only)
    assert json.loads((out / "_kforensics.json").read_text())["completed"] is True
    return summary, pq.read_table(out / "findings").to_pylist()


def _problems(rows: list[dict], root: Path) -> set[tuple]:
    return {(r["kind"], r["severity"], r["topic"], r["partition"], (r["file"] or "").replace(str(root), ""),
             r["position"], r["offset"]) for r in rows if r["severity"] in ("warning", "error")}


def _refused(rows: list[dict]) -> list[str]:
    """The folders whose `unknown_file` (info) says Kafka would not start the broker with them in its log dir."""
    return sorted(Path(r["file"]).name for r in rows if r["kind"] == "unknown_file"
                  and json.loads(r["details"]).get("broker_would_not_start"))


@pytest.mark.parametrize("content", ["lost+found", "stray", "nothing"])
def test_a_log_dir_with_no_partition_completes(spark, tmp_path: Path, content: str) -> None:
    root = tmp_path / "broker"
    root.mkdir()
    if content == "lost+found":
        (root / "lost+found").mkdir()
    elif content == "stray":
        add_partitions(root, [], [(PARTITIONS[0], "stray")])
    summary, findings = _scan(spark, root, tmp_path / "out", headers_only=False)
    assert summary.partitions == 0
    if content == "lost+found":  # one info finding, which says the broker would not start with it there
        assert [(f["kind"], f["severity"]) for f in findings] == [("unknown_file", "info")]
        assert _refused(findings) == ["lost+found"] and "does not start a broker" in findings[0]["message"]
    if content == "stray":
        assert summary.special_dirs == {"stray": 1}
        segments = pq.read_table(tmp_path / "out" / "segments").to_pylist()
        assert segments and {s["dir_state"] for s in segments} == {"stray"}
        replicas = pq.read_table(tmp_path / "out" / "replicas").to_pylist()
        assert [(r["topic"], r["partition"], r["dir_state"]) for r in replicas] == [
            (*parse_partition_dir_name(PARTITIONS[0])[:2], "stray")]
    if content == "nothing":
        assert findings == []


def test_junk_and_special_dirs_change_no_problem_finding(spark, tmp_path: Path) -> None:
    clean, messy = tmp_path / "clean", tmp_path / "messy"
    special = [(PARTITIONS[0], "future"), (PARTITIONS[1], "stray"), (PARTITIONS[2], "delete")]
    add_partitions(clean, list(PARTITIONS), special)
    add_partitions(messy, list(PARTITIONS), special)
    made = add_junk(messy, list(JUNK))
    clean_summary, clean_findings = _scan(spark, clean, tmp_path / "out-clean", headers_only=False)
    # the messy copy through the CLI, as an operator runs it (in this process: it takes the tests' session)
    from click.testing import CliRunner

    from kforensics.cli import main

    result = CliRunner().invoke(main, ["scan", f"b={messy}", "--out", str(tmp_path / "out-messy"), "--json"])
    assert result.exit_code == (1 if clean_summary.has_problems else 0), result.output
    messy_summary = scan_output.summarize(str(tmp_path / "out-messy"))
    messy_findings = pq.read_table(tmp_path / "out-messy" / "findings").to_pylist()
    assert _problems(clean_findings, clean) == _problems(messy_findings, messy)
    assert sum(f["kind"] == "unknown_file" for f in messy_findings) == made
    assert not any(f["kind"] == "unknown_file" for f in clean_findings)
    # Kafka itself would not start on the messy copy: its folders are not partition dirs (info on each folder, and
    # the restart prediction of every partition of the broker says so)
    assert _refused(clean_findings) == [] and _refused(messy_findings) == ["backup", "lost+found", "lost+found.1"]
    restart = pq.read_table(tmp_path / "out-messy" / "restart_prediction").to_pylist()
    assert restart and all(r["restart_fails"] and "LogManager.loadLogs" in r["reason"] for r in restart)
    # the special dirs are read, named, summarized and never taken for replicas of the live dir
    assert messy_summary.special_dirs == {"delete": 1, "future": 1, "stray": 1}
    assert messy_summary.partitions == clean_summary.partitions == len(PARTITIONS)
    segments = pq.read_table(tmp_path / "out-messy" / "segments").to_pylist()
    assert {s["dir_state"] for s in segments} == {"live", "delete", "future", "stray"}
    replicas = pq.read_table(tmp_path / "out-messy" / "replicas").to_pylist()
    assert sorted(r["dir_state"] for r in replicas) == sorted(["live"] * len(PARTITIONS) + ["delete", "future",
                                                                                          "stray"])
    assert all(r["diverged_at"] is None and r["longest_broker"] is None for r in replicas if r["dir_state"] != "live")
    # an identical -future copy is silent; the live replicas count one replica each
    assert not any(f["kind"] == "future_replica_divergence" for f in messy_findings)
    assert all(r["replica_count"] == 1 for r in replicas if r["dir_state"] == "live")


def _rewrite_first_batch_producer_id(log: Path, producer_id: int) -> tuple[int, int]:
    """Gives the first batch of a v2 segment another producer id, with a valid CRC: a batch the live replica does
    not hold. Returns its (position, base_offset)."""
    data = bytearray(log.read_bytes())
    base_offset, length = struct.unpack_from(">qi", data, 0)
    assert data[16] == 2
    struct.pack_into(">q", data, 43, producer_id)
    struct.pack_into(">I", data, 17, crc32c(bytes(data[21:12 + length])))
    log.write_bytes(bytes(data))
    return 0, base_offset


@pytest.mark.parametrize("layout", ["two log dirs", "one log dir"])
def test_a_diverging_future_copy_is_reported(spark, tmp_path: Path, layout: str) -> None:
    """Kafka keeps a replica's -future copy in the log dir it moves to, the live one in the other: the broker's two
    log dirs are two inputs of one node (same meta.properties). A copy made into one log dir is matched too."""
    from kforensics.spark.jobs import run_scan

    name = "orders-0" if "orders-0" in PARTITIONS else PARTITIONS[0]
    live_dir, future_dir = tmp_path / "data-1", tmp_path / ("data-2" if layout == "two log dirs" else "data-1")
    add_partitions(live_dir, [name], [])
    add_partitions(future_dir, [], [(name, "future")])
    inputs = [("b1", str(live_dir))] + ([("b1-second-dir", str(future_dir))] if future_dir != live_dir else [])
    future = next(future_dir.glob(f"{name}.*-future"))
    position, base_offset = _rewrite_first_batch_producer_id(sorted(future.glob("*.log"))[0], 987654321)
    out = tmp_path / "out"
    run_scan(spark, inputs, str(out), headers_only=True)
    findings = pq.read_table(out / "findings").to_pylist()
    (found,) = [f for f in findings if f["kind"] == "future_replica_divergence"]
    assert found["file"].startswith(str(future)) and found["position"] == position
    assert found["offset"] == base_offset and found["severity"] == "warning"
    assert found["broker"] == inputs[-1][0]
    details = json.loads(found["details"])
    assert details["future_crc"] != details["live_crc"] and details["live_log_start_offset"] == 0
    assert details["live_broker"] == "b1"
    # two log dirs of one broker are not replicas of each other, and a future dir of another broker is no match
    assert not [f for f in findings if f["kind"] == "replica_divergence"]
    if layout == "two log dirs":
        other = tmp_path / "other-broker"
        add_partitions(other, [name], [])
        meta = other / "meta.properties"
        meta.write_text(meta.read_text().replace("broker.id=", "broker.id=9"))
        out = tmp_path / "out-other"
        run_scan(spark, [("b9", str(other)), ("b1-second-dir", str(future_dir))], str(out), headers_only=True)
        assert not [f for f in pq.read_table(out / "findings").to_pylist()
                    if f["kind"] == "future_replica_divergence"]


def test_every_analysis_takes_empty_inputs_with_their_schema(spark) -> None:
    from kforensics.scan_options import ScanOptions
    from kforensics.spark import output_schemas
    from kforensics.spark import schemas as S
    from kforensics.spark.read import InputFacts, empty_tables
    from kforensics.spark.runner import analyze

    tables = empty_tables(spark)
    assert {n: [f.name for f in df.schema] for n, df in tables.items()} == {
        n: s.names for n, s in S.INPUT_TABLES.items()}
    every_check = InputFacts(replicas_possible=True, has_transaction_state=True, has_consumer_offsets=True,
                             has_remote_log_metadata=True, has_future_replicas=True, has_cluster_metadata=True)
    outputs = analyze(tables, ScanOptions(resend_min_records=3, resend_tail=100, resend_window_ms=0),
                      facts=every_check)
    declared = {name: [(f.name, f.dataType.simpleString()) for f in S.frame(spark, schema, []).schema]
                for name, schema in output_schemas.OUTPUT_TABLES.items()}
    assert set(declared) == set(outputs)  # the findings table is a model too (issue 49)
    for name, build in outputs.items():
        df = build()
        assert df.count() == 0, name
        if name in declared:  # each transform builds the columns its table declares (written as is when it is
            # not planned)
            assert [(f.name, f.dataType.simpleString()) for f in df.schema] == declared[name], name


def test_the_parse_pass_gives_the_declared_schemas(spark, sample_logs) -> None:
    from kforensics.spark import schemas as S
    from kforensics.spark.read import read_tables

    tables, _ = read_tables(spark, [("b", str(sample_logs / "broker-2"))], headers_only=True)
    for name, df in tables.items():
        assert [(f.name, f.dataType.simpleString()) for f in df.schema] == [
            (f.name, f.dataType.simpleString()) for f in S.frame(spark, S.INPUT_TABLES[name], []).schema], name


@settings(max_examples=int(os.environ.get("KFORENSICS_DIR_FUZZ_EXAMPLES", "2")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(layout=log_dirs)
def test_directory_fuzz_junk_never_changes_problems(spark, tmp_path_factory, layout) -> None:
    """Random mixes of partition dirs, Kafka's special dirs and junk: the scan completes with the warning and
    error findings of the partitions alone (fuzz/fuzz_log_dirs.py runs many more examples)."""
    base = tmp_path_factory.mktemp("fuzz")
    alone, mixed = base / "alone", base / "mixed"
    add_partitions(alone, layout["live"], layout["special"])
    add_partitions(mixed, layout["live"], layout["special"])
    made = add_junk(mixed, layout["junk"])
    _, alone_findings = _scan(spark, alone, base / "out-alone")
    _, mixed_findings = _scan(spark, mixed, base / "out-mixed")
    assert _problems(alone_findings, alone) == _problems(mixed_findings, mixed)
    assert sum(f["kind"] == "unknown_file" for f in mixed_findings) == made
    folders = {"lost+found", "lost+found-full", "backup-dir"} & set(layout["junk"])
    assert bool(_refused(mixed_findings)) == bool(folders) and _refused(alone_findings) == []


def _executor_rows(function, task: dict) -> list[dict]:
    import pyarrow as pa

    return [row for batch in function(iter([pa.RecordBatch.from_pylist([task])])) for row in batch.to_pylist()]


def test_a_file_that_cannot_be_read_is_a_finding_and_the_rest_is_read(sample_logs, monkeypatch) -> None:
    """Permission denied on a segment, EIO part way through one, an index or a small file that cannot be read:
    an `unreadable_file` finding naming the file (and the byte where reading stopped), never a failed task that
    would fail the scan (running as root makes chmod moot: the errors are raised by mocks)."""
    import errno

    from kforensics.parsers import checkpoints, index_check, record_batch
    from kforensics.spark import read

    part = sample_logs / "broker-1" / "orders-0"
    log = part / "00000000000000000130.log"
    task = {"task_kind": "segment", "broker": "b", "topic": "orders", "partition": 0, "path": str(log),
            "base_offset": 130}
    clean = _executor_rows(read.segment_rows, task)
    batches = [r for r in clean if r["row_kind"] == "batch"]
    assert len(batches) > 2 and [r["row_kind"] for r in clean].count("segment") == 1

    real_open = record_batch.open_log

    def denied(path, *args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied", str(path))

    monkeypatch.setattr(record_batch, "open_log", denied)
    (row,) = _executor_rows(read.segment_rows, task)
    assert (row["row_kind"], row["kind"], row["file"], row["severity"]) == ("finding", "unreadable_file", str(log),
                                                                             "error")
    assert "Permission denied" in row["message"]

    class FailingPartWay:  # the first two batches, then an I/O error (a bad sector)
        def __init__(self, path, *args, **kwargs):
            self._log = real_open(path, *args, **kwargs)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self._log.close()

        def __getattr__(self, name):
            return getattr(self._log, name)

        def batches(self, **kwargs):
            for n, b in enumerate(self._log.batches(**kwargs)):
                if n == 2:
                    raise OSError(errno.EIO, "Input/output error")
                yield b

    monkeypatch.setattr(record_batch, "open_log", FailingPartWay)
    rows = _executor_rows(read.segment_rows, task)
    assert [r["row_kind"] for r in rows] == ["batch", "batch", "finding"]
    assert rows[:2] == batches[:2]
    stop = batches[1]["position"] + batches[1]["size"]
    assert (rows[2]["kind"], rows[2]["file"], rows[2]["position"]) == ("unreadable_file", str(log), stop)
    assert "Input/output error" in rows[2]["message"] and f"at byte {stop}" in rows[2]["message"]

    monkeypatch.setattr(record_batch, "open_log", real_open)
    monkeypatch.setattr(index_check, "check_index_file", lambda path, *a, **k: denied(path))
    rows = _executor_rows(read.segment_rows, task)
    assert [r for r in rows if r["row_kind"] == "batch"] == batches
    assert sorted(r["file"] for r in rows if r["row_kind"] == "finding") == [
        str(part / "00000000000000000130.index"), str(part / "00000000000000000130.timeindex")]

    partition_task = {"task_kind": "partition", "broker": "b", "topic": "orders", "partition": 0, "path": str(part),
                      "base_offset": None}
    clean = _executor_rows(read.small_file_rows, partition_task)
    monkeypatch.setattr(checkpoints, "read_leader_epoch_checkpoint", denied)
    rows = _executor_rows(read.small_file_rows, partition_task)
    assert [r for r in clean if r["row_kind"] != "leader_epoch"] == [r for r in rows if r["row_kind"] != "finding"]
    (finding,) = [r for r in rows if r["row_kind"] == "finding"]
    assert (finding["kind"], finding["file"]) == ("unreadable_file", str(part / "leader-epoch-checkpoint"))
