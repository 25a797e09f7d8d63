"""kforensics never deletes or overwrites what it did not write, and never leaves an OUT that looks complete.

The rules of `kforensics.scan_output` on real folders, then the commands: `scan --out`, the reports over an
incomplete OUT, `report --html`, and the temporary folders of the reports over log dirs and of warm-ups.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import SAMPLE_LOGS

from kforensics import scan_output
from kforensics.cli import main
from kforensics.scan_output import MANIFEST, OutputError

BROKER_1 = str(SAMPLE_LOGS / "broker-1")
INPUTS = [("broker-1", BROKER_1)]


def _precious(folder: Path) -> dict[Path, bytes]:
    """An operator's files: one beside where the tables go, one inside a folder named like a table."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "thesis.txt").write_bytes(b"years of work\n")
    (folder / "batches").mkdir(exist_ok=True)
    (folder / "batches" / "keep.txt").write_bytes(b"do not delete\n")
    return {p: p.read_bytes() for p in (folder / "thesis.txt", folder / "batches" / "keep.txt")}


def _fake_scan(out: Path, *, completed: bool, tables: tuple[str, ...] = ("batches", "findings")) -> list[Path]:
    """What a scan leaves: the manifest, Spark's files in each table folder (as Spark names them)."""
    manifest = scan_output.prepare(str(out), inputs=INPUTS, options={}, tables=tables)
    written = []
    for table in tables:
        (out / table).mkdir()
        for name in ("part-00000-1a2b.snappy.parquet", ".part-00000-1a2b.snappy.parquet.crc", "_SUCCESS",
                     "._SUCCESS.crc"):
            (out / table / name).write_bytes(b"spark wrote this")
            written.append(out / table / name)
    if not completed:
        (out / "findings" / "_temporary" / "0").mkdir(parents=True)
        (out / "findings" / "_temporary" / "0" / "part-00001.parquet").write_bytes(b"half")
        written.append(out / "findings" / "_temporary" / "0" / "part-00001.parquet")
    else:
        scan_output.complete(str(out), manifest)
    return written


def _manifest(out: Path) -> dict:
    return json.loads((out / MANIFEST).read_text())


# --- the rules ------------------------------------------------------------------------------------

def test_absent_and_empty_out_are_prepared_with_an_incomplete_manifest(tmp_path: Path) -> None:
    for out in (tmp_path / "absent" / "deeper", tmp_path / "empty"):
        if out.name == "empty":
            out.mkdir()
        scan_output.prepare(str(out), inputs=INPUTS, options={"headers_only": True})
        manifest = _manifest(out)
        assert manifest["tool"] == "kforensics" and manifest["completed"] is False and manifest["ended_at"] is None
        assert manifest["inputs"] == [["broker-1", BROKER_1]] and manifest["options"] == {"headers_only": True}
        assert "findings" in manifest["tables"] and os.listdir(out) == [MANIFEST]


def test_a_folder_of_the_operators_is_refused_and_left_alone(tmp_path: Path) -> None:
    kept = _precious(tmp_path / "out")
    with pytest.raises(OutputError, match="not empty and holds no _kforensics.json"):
        scan_output.prepare(str(tmp_path / "out"), inputs=INPUTS, options={})
    assert {p: p.read_bytes() for p in kept} == kept
    assert sorted(os.listdir(tmp_path / "out")) == ["batches", "thesis.txt"]


def test_a_file_as_out_and_a_foreign_manifest_are_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputError, match="is a file"):
        scan_output.prepare(str(tmp_path / "file"), inputs=INPUTS, options={})
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / MANIFEST).write_text(json.dumps({"tool": "something else"}))
    with pytest.raises(OutputError, match="not written by kforensics"):
        scan_output.prepare(str(tmp_path / "other"), inputs=INPUTS, options={})
    (tmp_path / "other" / MANIFEST).write_text("{not json")
    with pytest.raises(OutputError, match="cannot be read"):
        scan_output.prepare(str(tmp_path / "other"), inputs=INPUTS, options={})
    assert (tmp_path / "other" / MANIFEST).read_text() == "{not json"


def test_replacing_an_earlier_scan_removes_only_what_it_wrote(tmp_path: Path) -> None:
    out = tmp_path / "out"
    written = _fake_scan(out, completed=True)
    listed = _manifest(out)["files"]
    assert sorted(listed) == sorted(str(p.relative_to(out)) for p in written)
    (out / "thesis.txt").write_text("mine")  # the operator's notes beside the tables
    (out / "notes").mkdir()
    (out / "notes" / "a.txt").write_text("mine too")
    scan_output.prepare(str(out), inputs=INPUTS, options={})
    assert not any(p.exists() for p in written)
    assert sorted(os.listdir(out)) == [MANIFEST, "notes", "thesis.txt"]
    assert (out / "thesis.txt").read_text() == "mine" and (out / "notes" / "a.txt").read_text() == "mine too"
    assert _manifest(out)["completed"] is False


def test_a_file_of_the_operators_inside_a_table_folder_stops_the_replacement(tmp_path: Path) -> None:
    out = tmp_path / "out"
    written = _fake_scan(out, completed=True)
    (out / "batches" / "keep.txt").write_text("mine")
    before = _manifest(out)
    with pytest.raises(OutputError, match=r"batches/keep.txt was not written by it"):
        scan_output.prepare(str(out), inputs=INPUTS, options={})
    assert all(p.exists() for p in written) and (out / "batches" / "keep.txt").read_text() == "mine"
    assert _manifest(out) == before  # nothing touched, the earlier manifest included


def test_a_folder_of_the_operators_named_like_a_new_table_stops_the_replacement(tmp_path: Path) -> None:
    out = tmp_path / "out"
    written = _fake_scan(out, completed=True, tables=("batches", "findings"))  # an earlier scan without `replicas`
    (out / "replicas").mkdir()
    (out / "replicas" / "mine.csv").write_text("a,b\n")
    with pytest.raises(OutputError, match="holds replicas, which the earlier kforensics scan there did not write"):
        scan_output.prepare(str(out), inputs=INPUTS, options={})
    assert all(p.exists() for p in written) and (out / "replicas" / "mine.csv").exists()


def test_an_interrupted_scan_is_replaced_by_sparks_file_names(tmp_path: Path) -> None:
    out = tmp_path / "out"
    written = _fake_scan(out, completed=False)
    assert _manifest(out)["completed"] is False and _manifest(out)["files"] == []
    scan_output.prepare(str(out), inputs=INPUTS, options={})
    assert not any(p.exists() for p in written) and os.listdir(out) == [MANIFEST]
    # ... but not a file Spark would never name so
    written = _fake_scan(tmp_path / "again", completed=False)
    (tmp_path / "again" / "findings" / "report.docx").write_text("mine")
    with pytest.raises(OutputError, match="findings/report.docx"):
        scan_output.prepare(str(tmp_path / "again"), inputs=INPUTS, options={})
    assert all(p.exists() for p in written)


def test_require_complete_says_what_out_is(tmp_path: Path) -> None:
    with pytest.raises(OutputError, match="holds no _kforensics.json: it is not the output"):
        scan_output.require_complete(str(tmp_path))
    (tmp_path / "findings").mkdir()
    with pytest.raises(OutputError, match="older than the manifest"):
        scan_output.require_complete(str(tmp_path))
    _fake_scan(tmp_path / "partial", completed=False)
    with pytest.raises(OutputError, match="did not complete"):
        scan_output.require_complete(str(tmp_path / "partial"))
    _fake_scan(tmp_path / "whole", completed=True)
    assert scan_output.require_complete(str(tmp_path / "whole")).completed


# --- the commands ---------------------------------------------------------------------------------

def _scan(out: Path, *extra: str):
    return CliRunner().invoke(main, ["scan", BROKER_1, "--out", str(out), "--headers-only", "--json", *extra])


def test_scan_refuses_an_operators_folder(spark, tmp_path: Path) -> None:
    kept = _precious(tmp_path / "F")
    result = _scan(tmp_path / "F")
    assert result.exit_code == 2, result.output
    assert "not the output of a kforensics scan" in result.output and "--out" in result.output
    assert {p: p.read_bytes() for p in kept} == kept
    assert sorted(os.listdir(tmp_path / "F")) == ["batches", "thesis.txt"]


def test_scan_replaces_its_own_output_and_keeps_the_operators_files(spark, tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = _scan(out)
    assert first.exit_code in (0, 1), first.output
    manifest = _manifest(out)
    assert manifest["completed"] is True and manifest["ended_at"] and manifest["files"]
    assert all((out / f).is_file() for f in manifest["files"])
    assert {f.split("/")[0] for f in manifest["files"]} >= {"batches", "findings", "transactions"}
    (out / "thesis.txt").write_text("mine")
    second = _scan(out)
    assert second.exit_code == first.exit_code and second.stdout == first.stdout
    assert (out / "thesis.txt").read_text() == "mine"
    assert _manifest(out)["completed"] is True
    # a file of the operator's inside a table folder: refused before anything is deleted
    (out / "findings" / "keep.txt").write_text("mine")
    third = _scan(out)
    assert third.exit_code == 2 and "findings/keep.txt" in third.output
    assert all((out / f).is_file() for f in _manifest(out)["files"])


def test_an_out_through_a_link_and_dot_dot_is_one_folder(spark, tmp_path: Path) -> None:
    """`--out link/../name`: the manifest and every table land in one folder, the one `name` is by the path's text
    (as a scan through the server resolves it), and nothing in the folder the link points into."""
    (tmp_path / "elsewhere" / "deep").mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "elsewhere" / "deep")
    result = _scan(Path(f"{tmp_path}/link/../out"))
    assert result.exit_code in (0, 1), result.output
    manifest = _manifest(tmp_path / "out")
    assert manifest["completed"] is True and all((tmp_path / "out" / f).is_file() for f in manifest["files"])
    assert os.listdir(tmp_path / "elsewhere") == ["deep"] and not os.listdir(tmp_path / "elsewhere" / "deep")


def test_a_failed_scan_leaves_an_incomplete_out_that_the_reports_refuse(spark, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import kforensics.spark.jobs as jobs

    def broken(*_args, **_kwargs):
        raise RuntimeError("No space left on device")

    monkeypatch.setattr(jobs, "analyze", broken)
    out = tmp_path / "out"
    result = _scan(out)
    assert result.exit_code == 2 and "the scan failed: No space left on device" in result.output
    assert _manifest(out)["completed"] is False
    assert (out / "batches").is_dir()  # the first table was written before the failure
    for command in (["gaps"], ["txns"], ["lso"], ["producers"], ["report"], ["lso", "--progression"]):
        refused = CliRunner().invoke(main, [command[0], str(out), *command[1:]])
        assert refused.exit_code == 2, (command, refused.output)
        assert "did not complete" in refused.output
    monkeypatch.undo()
    again = _scan(out)  # a new scan replaces the incomplete one
    assert again.exit_code in (0, 1) and _manifest(out)["completed"] is True


def test_report_html_never_writes_over_a_file_that_is_not_a_report(full_scan: Path, tmp_path: Path) -> None:
    precious = tmp_path / "notes.html"
    precious.write_text("<html>my notes</html>")
    refused = CliRunner().invoke(main, ["report", str(full_scan), "--html", str(precious), "--max-plots", "1"])
    assert refused.exit_code == 2 and "is not a kforensics report" in refused.output
    assert precious.read_text() == "<html>my notes</html>"
    report = tmp_path / "report.html"
    first = CliRunner().invoke(main, ["report", str(full_scan), "--html", str(report), "--max-plots", "1"])
    assert first.exit_code == 1 and report.stat().st_size > 10_000
    again = CliRunner().invoke(main, ["report", str(full_scan), "--html", str(report), "--max-plots", "0"])
    assert again.exit_code == 1 and report.stat().st_size > 10_000  # an earlier report is replaced
    forced = CliRunner().invoke(main, ["report", str(full_scan), "--html", str(precious), "--max-plots", "0",
                                       "--force"])
    assert forced.exit_code == 1 and "kforensics report" in precious.read_text()
    assert sorted(os.listdir(tmp_path)) == ["notes.html", "report.html"]  # no partial file left


def test_reports_over_log_dirs_leave_no_temporary_scan(spark, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    result = CliRunner().invoke(main, ["gaps", BROKER_1, "--json"])
    assert result.exit_code == 0, result.output
    assert any(json.loads(line)["kind"] == "sequence_gap" for line in result.stdout.splitlines())
    assert os.listdir(scratch) == []


def test_warm_up_deletes_its_folder_also_when_a_scan_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import kforensics.spark.jobs as jobs

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    calls = []

    def scan_then_fail(_spark, _inputs, out, *_args, **_kwargs):
        calls.append(out)
        Path(out).mkdir()
        (Path(out) / "batches").mkdir()
        if len(calls) == 2:
            raise KeyboardInterrupt("SIGTERM")

    monkeypatch.setattr(jobs, "run_scan", scan_then_fail)
    with pytest.raises(KeyboardInterrupt):
        jobs.warm_up(None, INPUTS)
    assert len(calls) == 2 and all(c.startswith(str(scratch)) for c in calls)
    assert os.listdir(scratch) == []
