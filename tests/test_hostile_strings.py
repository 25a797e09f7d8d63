"""Strings read from a disk are data (issue 42): never markup, never terminal control, never a crash.

A broker disk whose folder, topic, group and transactional id are hostile strings (rich markup and closing tags,
emoji codes, CSI and OSC sequences, a C1 CSI, bidirectional overrides, NUL, CR, LF, a name that is not UTF-8) is
built by the sample generator and scanned once; every command that renders it must show each string escaped on
the terminal and exactly in JSON lines, and exit as the exit-code table says. A hypothesis property test then puts
arbitrary strings in place of the hostile ones in that scan's tables and runs every command over them again.
"""

from __future__ import annotations

import codecs
import html
import importlib.util
import io
import json
import os
import pty
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from conftest import SAMPLE_LOGS
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from rich.cells import cell_len

from kforensics import render
from kforensics.cli import main

_spec = importlib.util.spec_from_file_location("sample_generate", SAMPLE_LOGS / "generate.py")
generate = sys.modules.setdefault("sample_generate", importlib.util.module_from_spec(_spec))
if not hasattr(generate, "build_hostile_broker"):
    _spec.loader.exec_module(generate)  # type: ignore[union-attr]

#: What may reach a terminal from kforensics: no control character but the line feed, nothing a terminal hides
#: or obeys (render.HIDDEN), no lone surrogate.
OBEYED = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
#: The pieces hostile strings are made of (hypothesis combines them with arbitrary text).
PIECES = ["[bold]", "[/]", "[/bold]", "[link=https://example.com]x[/link]", ":x:", ":smile:", "\x1b[31m", "\x1b[2J",
          "\x1b]0;title\x07", "\x1b]52;c;cHduZWQ=\x07", "\x9b31m", "\x9d0;t\x9c", "\u202e", "\u2066", "\u2069",
          "\u200f", "\x00", "\r", "\n", "\t", "\x7f", "\\", "\\x1b", "%s", "{0}", "\ufeff", "\u200b", " "]
hostile_text = st.lists(st.sampled_from(PIECES) | st.text(max_size=4), min_size=1, max_size=8).map("".join)
LONG = "[/]\x1b[31m" + "n" * 10_000 + "\u202e"

GROUP, TID, TOPIC, FOLDER = (generate.HOSTILE_GROUP, generate.HOSTILE_TID, generate.HOSTILE_TOPIC,
                             generate.HOSTILE_DIR)


def _assert_inert(text: str, where: str) -> None:
    bad = sorted({hex(ord(c)) for c in OBEYED.findall(text)})
    assert not bad, f"{where}: characters a terminal obeys reached it: {bad}"


@pytest.fixture(scope="session")
def hostile_disk(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return Path(generate.build_hostile_broker(tmp_path_factory.mktemp("hostile") / "broker")["path"])


@pytest.fixture(scope="session")
def hostile_scan(spark, hostile_disk: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """`kforensics scan --json` of the hostile disk, and then the same scan's terminal summary (one scan)."""
    out = tmp_path_factory.mktemp("hostile-scan") / "out"
    scanned = CliRunner().invoke(main, ["scan", str(hostile_disk), "--out", str(out), "--json"])
    return {"out": out, "json": scanned}


@pytest.fixture
def wide_console(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tables as wide as their cells (nothing folded), so that a string can be looked for whole."""
    from rich.console import Console

    monkeypatch.setattr(render, "console", lambda stderr=False: Console(
        file=sys.stderr if stderr else sys.stdout, width=100_000, color_system=None, force_terminal=True))


def _run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


# --- the one rule, on its own -------------------------------------------------------------------------------------

@settings(max_examples=300, deadline=None)
@given(text=st.text(st.characters(codec=None, categories=None)) | hostile_text)
@example(text=LONG)
def test_shown_escapes_exactly_what_a_terminal_would_obey(text: str) -> None:
    shown = render.shown(text)
    assert not render.HIDDEN.search(shown)
    escaped = "".join(render.shown(c) if render.HIDDEN.match(c) else c for c in text)  # character by character
    whole = "".join(render.shown(c) if render.HIDDEN.match(c) else render._char_escape(c) for c in text)
    assert shown == escaped or (shown == whole and cell_len(escaped) == 0)  # nothing visible: escaped whole
    for c in set(text):
        if not render.HIDDEN.match(c):
            assert render.shown(c) == c or cell_len(c) == 0
        elif not 0xDC80 <= ord(c) <= 0xDCFF:  # the escape spells the character (a name's byte: see below)
            assert codecs.decode(render.shown(c), "unicode_escape") == c


def test_shown_spells_the_escapes() -> None:
    assert render.shown("a\x1b[31mb") == "a\\x1b[31mb"
    assert render.shown("\u202eexe.txt") == "\\u202eexe.txt"
    assert render.shown("l1\nl2\r\t\x00\x7f\x9b") == "l1\\nl2\\r\\t\\x00\\x7f\\x9b"
    assert render.shown(os.fsdecode(b"\xfcbersicht")) == "\\xfcbersicht"  # a name's undecodable byte
    assert render.shown("\U000e0041") == "\\U000e0041"
    assert render.shown("[bold]:x: ok") == "[bold]:x: ok"  # not markup here: rich gets it as Text
    assert render.shown("\U0001f3fb") == "\\U0001f3fb" and render.shown("e\u0301") == "e\u0301"  # alone, invisible


@settings(max_examples=300, deadline=None)
@given(text=st.text(st.characters(codec=None, categories=None)) | hostile_text)
def test_json_lines_carry_the_exact_string_and_nothing_a_terminal_obeys(text: str) -> None:
    line = render.json_line({"id": text, "list": [text]})
    assert json.loads(line) == {"id": text, "list": [text]}
    _assert_inert(line, "json")
    line.encode("utf-8")  # strict: no lone surrogate left


@settings(max_examples=200, deadline=None)
@given(text=hostile_text)
@example(text=LONG)
def test_rich_gets_literal_text(text: str) -> None:
    from rich.console import Console

    out = io.StringIO()
    console = Console(file=out, width=100_000, color_system="truecolor", force_terminal=True)
    console.print(render.table([{"id": text, "n": 1}], ("id", "n"), text, style={"id": "bold"}, show=False))
    console.print(render.facts(text, [(text, text)]))
    render.line(f"message about {text}", out=console)
    render.log_line(console, "10:00:00", text)
    printed = re.sub(r"\x1b\[[0-9;]*m", "", out.getvalue())  # rich's own styling is the one escape allowed
    _assert_inert(printed, "rich")
    shown = render.shown(text)
    assert printed.count(shown) >= 6 or shown != shown.strip()  # titles and lines lose outer white space
    page = render.html_text(text)
    assert page.startswith("<bdi>") and html.unescape(page[5:-6]) == render.shown(text)


# --- the hostile disk through every command ----------------------------------------------------------------------

def test_the_sample_generator_builds_the_hostile_names(hostile_disk: Path) -> None:
    names = set(os.listdir(hostile_disk))
    assert {FOLDER, f"{TOPIC}-0", "__consumer_offsets-0", "__transaction_state-0"} <= names
    assert os.fsencode(generate.HOSTILE_UNDECODABLE) in set(os.listdir(os.fsencode(hostile_disk)))


def test_scan_json_carries_the_exact_strings(hostile_scan: dict[str, Any]) -> None:
    result = hostile_scan["json"]
    assert result.exit_code == 1, result.output[-3000:]  # findings: a sequence gap, a commit beyond the log end
    _assert_inert(result.stdout, "scan --json")
    findings = [json.loads(line) for line in result.stdout.splitlines()]
    commit = next(f for f in findings if f["kind"] == "committed_offset_beyond_log_end")
    assert (commit["group"], commit["topic"]) == (GROUP, TOPIC)
    assert any(f["kind"] == "sequence_gap" and f["topic"] == TOPIC for f in findings)
    folders = {f["file"].rsplit("/", 1)[-1]: f for f in findings if f["kind"] == "unknown_file"}
    assert FOLDER in folders
    undecodable = os.fsencode(generate.HOSTILE_UNDECODABLE)
    odd = folders[undecodable.decode("utf-8", "backslashreplace")]  # never read as a partition, its bytes kept
    assert odd["name_hex"] == undecodable.hex() and "not UTF-8" in odd["message"]


def test_parquet_keeps_the_strings(hostile_scan: dict[str, Any]) -> None:
    out = hostile_scan["out"]
    commits = pq.read_table(out / "offset_commits").to_pylist()
    assert [(c["group_id"], c["commit_topic"]) for c in commits] == [(GROUP, TOPIC)]
    assert {r["transactional_id"] for r in pq.read_table(out / "coordinator_records").to_pylist()} == {TID}


def test_a_scan_without_group_records_plans_no_group_replay(hostile_scan: dict[str, Any]) -> None:
    """The hostile disk's __consumer_offsets holds a commit and no group record: the group and share replays are
    not planned (no check, their tables written from their schema), the commit is still judged."""
    from kforensics.scan_output import read_manifest

    steps = {s["step"]: s for s in read_manifest(str(hostile_scan["out"])).profile["steps"]}
    assert "check committed_offset" in steps and not {"check groups", "check share_groups"} & set(steps)
    assert not any(pq.read_table(hostile_scan["out"] / t).num_rows
                   for t in ("group_members", "group_assignments", "share_partition_state"))


def test_scan_summary_and_findings_on_the_terminal(hostile_scan: dict[str, Any], wide_console: None) -> None:
    from kforensics import queries
    from kforensics.scan_output import summarize

    out = str(hostile_scan["out"])
    printed = io.StringIO()
    sys_stdout, sys.stdout = sys.stdout, printed
    try:
        render.scan_summary(summarize(out), queries.findings(out))
    finally:
        sys.stdout = sys_stdout
    text = printed.getvalue()
    _assert_inert(text, "scan summary")
    assert f"Group {render.shown(GROUP)} committed offset" in text
    assert render.shown(TOPIC) in text and TOPIC not in text


@pytest.mark.parametrize("command", [["gaps"], ["txns"], ["lso"], ["lso", "--progression"], ["producers"],
                                     ["leaders"], ["groups"], ["report"]])
def test_each_report_shows_the_strings_escaped(hostile_scan: dict[str, Any], wide_console: None,
                                               command: list[str]) -> None:
    result = _run(command[0], str(hostile_scan["out"]), *command[1:])
    assert result.exit_code == (1 if command == ["report"] else 0), result.output[-3000:]
    _assert_inert(result.stdout + result.stderr, " ".join(command))
    if command[0] in ("gaps", "txns", "lso", "producers", "groups", "report"):
        assert render.shown(TOPIC) in result.stdout
    if command[0] in ("txns", "report"):
        assert render.shown(TID) in result.stdout
    if command == ["report"]:
        assert render.shown(GROUP) in result.stdout and render.shown(FOLDER) in result.stdout
    if command == ["groups"]:
        assert render.shown(GROUP) in result.stdout


@pytest.mark.parametrize("command", ["gaps", "txns", "lso", "producers", "groups"])
def test_each_report_json_is_exact(hostile_scan: dict[str, Any], command: str) -> None:
    result = _run(command, str(hostile_scan["out"]), "--json")
    assert result.exit_code == 0, result.output[-3000:]
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert rows and all(r["topic"] == TOPIC for r in rows if r["topic"] != "__consumer_offsets"
                        and not r["topic"].startswith("__"))
    if command == "txns":
        assert {r["transactional_id"] for r in rows} == {TID}
    if command == "groups":
        assert {r["group"] for r in rows} == {GROUP}


def test_explain_shows_the_strings_escaped_and_json_exact(hostile_scan: dict[str, Any], wide_console: None) -> None:
    """`explain`: the story on the terminal shows each hostile string escaped; `--json` carries it exactly, and each
    command of the plan gives it back exactly when the shell splits the line (shell-quoted, never shell syntax)."""
    import shlex

    out = str(hostile_scan["out"])
    told = _run("explain", out)
    assert told.exit_code == 1, told.output[-3000:]
    _assert_inert(told.stdout + told.stderr, "explain")
    assert render.shown(GROUP) in told.stdout and render.shown(TOPIC) in told.stdout
    as_json = _run("explain", out, "--json")
    assert as_json.exit_code == 1
    incidents = [json.loads(line) for line in as_json.stdout.splitlines()]
    _assert_inert(as_json.stdout, "explain --json")
    assert any(GROUP in r["cost"]["groups_affected"] for r in incidents)
    assert TOPIC in {f["topic"] for r in incidents for f in r["findings"]}
    resets = [shlex.split(a["command"]) for r in incidents for a in r["actions"]
              if a["command"].startswith("kafka-consumer-groups.sh")]
    assert resets and all(w[w.index("--group") + 1] == GROUP for w in resets)
    assert all(w[w.index("--topic") + 1].rpartition(":")[0] == TOPIC for w in resets)
    one = next(r for r in incidents if GROUP in r["cost"]["groups_affected"])
    alone = _run("explain", out, "--incident", one["id"])
    assert alone.exit_code == 1 and render.shown(GROUP) in alone.stdout
    _assert_inert(alone.stdout, "explain --incident")


def test_the_html_report_isolates_and_escapes(hostile_scan: dict[str, Any], tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    result = _run("report", str(hostile_scan["out"]), "--html", str(page))
    assert result.exit_code == 1, result.output[-3000:]
    text = page.read_text(encoding="utf-8")
    _assert_inert(text, "report --html")
    for value in (GROUP, TID, TOPIC):
        assert render.html_text(value) in text
    assert "<bdi>" in text and "[/]" in text  # markup characters are plain text in HTML


def test_locate_table_and_json(hostile_disk: Path, wide_console: None) -> None:
    table = _run("locate", "--group", GROUP, "--transactional-id", TID, str(hostile_disk))
    assert table.exit_code == 0, table.output
    _assert_inert(table.stdout, "locate")
    assert render.shown(GROUP) in table.stdout and render.shown(TID) in table.stdout
    rows = [json.loads(line) for line in _run("locate", "--json", "--group", GROUP, "--transactional-id", TID,
                                              str(hostile_disk)).stdout.splitlines()]
    assert [r["id"] for r in rows] == [GROUP, TID]


def test_export_writes_exact_records_and_escapes_its_errors(hostile_disk: Path, tmp_path: Path) -> None:
    out = tmp_path / "records.jsonl"
    done = _run("export", str(hostile_disk), "--topic", TOPIC, "--partition", "0", "--out", str(out))
    assert done.exit_code == 0, done.output
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert records and records[0]["key"] == generate.HOSTILE_KEY.decode()
    assert records[0]["headers"][0]["key"] == generate.HOSTILE_HEADER
    missing = _run("export", str(hostile_disk), "--topic", GROUP, "--partition", "0", "--out", str(tmp_path / "x"))
    assert missing.exit_code == 2 and "Traceback" not in missing.output
    _assert_inert(missing.stderr, "export error")
    assert render.shown(GROUP) in missing.stderr


def _segment(hostile_disk: Path) -> Path:
    return hostile_disk / f"{TOPIC}-0" / "00000000000000000000.log"


def _on_a_terminal(args: list[str]) -> bytes:
    """kforensics with its stdout on a pseudo-terminal: what the terminal receives."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "kforensics", *args], stdout=follower, stderr=subprocess.DEVNULL)
    os.close(follower)
    received = b""
    while True:
        try:
            chunk = os.read(leader, 1 << 16)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        received += chunk
    os.close(leader)
    assert proc.wait(timeout=60) == 0
    return received


def test_dump_text_keeps_kafka_dump_logs_bytes_off_a_terminal(hostile_disk: Path) -> None:
    segment = _segment(hostile_disk)
    done = subprocess.run([sys.executable, "-m", "kforensics", "dump", "--print-data-log", str(segment)],
                          capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    key = generate.HOSTILE_KEY
    assert f"Dumping {segment}\n".encode() in done.stdout  # the name as it is
    assert b"key: " + key + b" payload: " + key + b"-value" in done.stdout
    assert f"headerKeys: [{generate.HOSTILE_HEADER}]".encode() in done.stdout


def test_dump_text_on_a_terminal_is_escaped_unless_raw(hostile_disk: Path) -> None:
    segment = str(_segment(hostile_disk))
    escaped = _on_a_terminal(["dump", "--print-data-log", segment]).decode()
    _assert_inert(escaped.replace("\r\n", "\n"), "dump on a terminal")
    shown_key = render.shown(generate.HOSTILE_KEY.decode())
    assert f"key: {shown_key} payload: {shown_key}-value" in escaped
    assert f"Dumping {render.shown(segment)}" in escaped
    raw = _on_a_terminal(["dump", "--raw", "--print-data-log", segment])
    assert b"key: " + generate.HOSTILE_KEY in raw


def test_dump_json_is_exact(hostile_disk: Path) -> None:
    done = _run("dump", "--json", "--print-data-log", str(_segment(hostile_disk)))
    assert done.exit_code == 0, done.output
    _assert_inert(done.stdout, "dump --json")
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines[0]["file"] == str(_segment(hostile_disk))
    record = next(r for r in lines if r["type"] == "record")
    assert (record["key"], record["header_keys"]) == (generate.HOSTILE_KEY.decode(), [generate.HOSTILE_HEADER])


def test_dump_of_a_name_that_is_not_utf8(tmp_path: Path) -> None:
    segment = os.fsencode(tmp_path) + b"/\xfe\x1b-0"
    os.mkdir(segment)
    shutil.copy(SAMPLE_LOGS / "broker-1" / "orders-0" / "00000000000000000000.log",
                os.fsdecode(segment + b"/00000000000000000000.log"))
    path = os.fsdecode(segment + b"/00000000000000000000.log")
    piped = subprocess.run([sys.executable, "-m", "kforensics", "dump", path], capture_output=True, timeout=60)
    assert piped.returncode == 0 and piped.stdout.startswith(b"Dumping " + os.fsencode(path) + b"\n")
    as_json = subprocess.run([sys.executable, "-m", "kforensics", "dump", "--json", path], capture_output=True,
                             timeout=60)
    assert as_json.returncode == 0, as_json.stderr
    assert os.fsencode(json.loads(as_json.stdout.splitlines()[0])["file"]) == os.fsencode(path)


# --- any string, every command ---------------------------------------------------------------------------------

def _replaced(column: Any, replacements: list[tuple[str, str]]) -> Any:
    for old, new in replacements:
        column = pc.replace_substring(column, old, new)
    return column


def _rewrite_out(source: Path, target: Path, text: str) -> None:
    """A copy of the scan under `source` with `text` wherever the hostile group, transactional id and topic
    were (as JSON inside `details`)."""
    import pyarrow as pa

    def in_json(details: str | None) -> str | None:
        def swap(value: Any) -> Any:
            if isinstance(value, str):
                return _swapped(value)
            if isinstance(value, list):
                return [swap(v) for v in value]
            return {k: swap(v) for k, v in value.items()} if isinstance(value, dict) else value
        return None if details is None else json.dumps(swap(json.loads(details)))

    def _swapped(value: str) -> str:
        for old in (GROUP, TID, TOPIC):
            value = value.replace(old, text)
        return value

    shutil.copytree(source, target)
    for path in target.rglob("*.parquet"):
        table = pq.read_table(path)
        columns = [pa.array([in_json(d) for d in c.to_pylist()], pa.string()) if name == "details"
                   else _replaced(c, [(GROUP, text), (TID, text), (TOPIC, text)]) if pa.types.is_string(c.type) else c
                   for name, c in zip(table.column_names, table.columns, strict=True)]
        pq.write_table(pa.table(columns, schema=table.schema), path)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                HealthCheck.too_slow])
@given(text=hostile_text)
@example(text="[/]")
@example(text=":x:[bold]\x1b]0;t\x07")
@example(text=LONG)
def test_any_string_through_every_command(hostile_scan: dict[str, Any], tmp_path_factory: pytest.TempPathFactory,
                                          wide_console: None, text: str) -> None:
    from kforensics import queries
    from kforensics.scan_output import summarize

    out = tmp_path_factory.mktemp("any") / "out"
    _rewrite_out(hostile_scan["out"], out, text)
    shown = render.shown(text)
    findable = bool(shown.strip()) and shown == shown.strip()
    printed = io.StringIO()
    sys_stdout, sys.stdout = sys.stdout, printed
    try:
        render.scan_summary(summarize(str(out)), queries.findings(str(out)))
        render.json_lines(queries.findings(str(out)))
    finally:
        sys.stdout = sys_stdout
    summary, _, as_json = printed.getvalue().partition("\n{")
    _assert_inert(printed.getvalue(), "scan")
    assert not findable or f"Group {shown} committed" in summary
    commit = next(json.loads("{" + line if not line.startswith("{") else line) for line in ("{" + as_json)
                  .splitlines() if "committed_offset_beyond_log_end" in line)
    assert (commit["group"], commit["topic"]) == (text, text)
    for command in (["gaps"], ["txns"], ["lso", "--progression"], ["producers"], ["leaders"], ["groups"], ["report"]):
        result = _run(command[0], str(out), *command[1:])
        assert result.exit_code in (0, 1), (command, result.output[-2000:])
        _assert_inert(result.stdout + result.stderr, command[0])
        if findable and command[0] in ("txns", "report"):
            assert shown in result.stdout, command
    txns = [json.loads(line) for line in _run("txns", str(out), "--json").stdout.splitlines()]
    assert {t["transactional_id"] for t in txns} == {text}
    located = _run("locate", "--group", text, "--partitions", "3")
    assert located.exit_code == 0 and (not findable or shown in located.stdout)
    _assert_inert(located.stdout, "locate")
    refused = _run("export", str(out), "--topic", text or "x", "--partition", "0", "--out", str(out.parent / "e"))
    assert refused.exit_code == 2 and "Traceback" not in refused.output
    _assert_inert(refused.stderr, "export error")


# --- exit codes ------------------------------------------------------------------------------------------------

def test_a_failure_is_exit_code_2_and_one_line(hostile_scan: dict[str, Any], monkeypatch: pytest.MonkeyPatch,
                                              tmp_path: Path) -> None:
    from kforensics import queries

    def broken(*_args: Any, **_kwargs: Any) -> None:
        raise RuntimeError(f"boom {FOLDER}\nsecond line")

    monkeypatch.setenv("KFORENSICS_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("KFORENSICS_DEBUG", raising=False)
    monkeypatch.setattr(queries, "sequence_problems", broken)
    result = _run("gaps", str(hostile_scan["out"]))
    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"kforensics gaps failed: RuntimeError: boom {render.shown(FOLDER)}; traceback in ")
    trace = Path(line.split("traceback in ")[1].split(" (KFORENSICS_DEBUG")[0])
    assert trace.parent == tmp_path / "logs" and "Traceback (most recent call last)" in trace.read_text()
    monkeypatch.setenv("KFORENSICS_DEBUG", "1")
    debug = _run("gaps", str(hostile_scan["out"]))
    assert debug.exit_code == 2 and "Traceback (most recent call last)" in debug.stderr


@pytest.mark.parametrize(("raised", "code", "says"), [(KeyboardInterrupt, 130, "kforensics txns: interrupted"),
                                                      (BrokenPipeError, 141, "")])
def test_interrupt_and_closed_stdout(hostile_scan: dict[str, Any], monkeypatch: pytest.MonkeyPatch, raised: type,
                                     code: int, says: str) -> None:
    from kforensics import queries

    def stop(*_args: Any, **_kwargs: Any) -> None:
        raise raised()

    monkeypatch.setattr(queries, "transactions", stop)
    result = _run("txns", str(hostile_scan["out"]))
    assert result.exit_code == code and result.stderr.strip() == says


def test_a_usage_error_is_exit_code_2_with_the_path_shown(tmp_path: Path) -> None:
    missing = tmp_path / "no\x1b[31mpe[/]"
    result = _run("gaps", str(missing))
    assert result.exit_code == 2 and render.shown(str(missing)) in result.stderr
    _assert_inert(result.stderr, "usage error")


def test_a_scan_input_whose_path_is_not_utf8_is_a_usage_error(tmp_path: Path) -> None:
    odd = os.fsencode(tmp_path) + b"/copy\xff"
    os.mkdir(odd)
    result = _run("scan", os.fsdecode(odd), "--out", str(tmp_path / "out"))
    assert result.exit_code == 2 and "\\xff is not UTF-8" in result.stderr, result.output
    assert not (tmp_path / "out").exists()


def test_find_escapes_keys_and_headers_on_the_terminal_and_keeps_them_exact_in_json(hostile_disk: Path,
                                                                                  wide_console: None) -> None:
    key = generate.HOSTILE_KEY.decode()
    table = _run("find", str(hostile_disk), "--key", key)
    assert table.exit_code == 0, table.output
    _assert_inert(table.stdout, "find")
    _assert_inert(table.stderr, "find")
    assert render.shown(key) in table.stdout and render.shown(generate.HOSTILE_HEADER) in table.stdout
    assert render.shown(TOPIC) in table.stdout
    lines = [json.loads(line) for line in _run("find", "--json", "--values", str(hostile_disk), "--header",
                                               generate.HOSTILE_HEADER).stdout.splitlines()]
    assert len(lines) == 9 and {x["topic"] for x in lines} == {TOPIC}
    assert all(x["key"] == key and x["value"] == key + "-value" and x["headers"] == [
        {"key": generate.HOSTILE_HEADER, "value": key, "encoding": "utf-8"}] for x in lines)
    missing = _run("find", str(hostile_disk), "--key", key, "--topic", GROUP)
    assert missing.exit_code == 1
    _assert_inert(missing.stdout + missing.stderr, "find, nothing found")
