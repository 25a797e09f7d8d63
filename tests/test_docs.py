"""The docs: generated pages are current, and the README's command examples print what the README shows."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

#: The terminal width the README's examples were run at (rich tables wrap at it).
README_COLUMNS = "100"


def _generator():  # noqa: ANN202
    spec = importlib.util.spec_from_file_location("docs_generate", REPO / "docs" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_pages_are_current() -> None:
    """As sqlite-utils does with cog: a changed command, option or finding kind needs `python docs/generate.py`."""
    stale = _generator().stale_pages()
    assert not stale, f"stale generated docs {stale}: run `python docs/generate.py` and commit the result"


def test_check_mode_fails_on_a_stale_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    generate = _generator()
    for page in generate.PAGES:
        (tmp_path / page).write_text((REPO / "docs" / page).read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setattr(generate, "DOCS", tmp_path)
    assert generate.main(["--check"]) == 0
    page = tmp_path / "findings.md"
    page.write_text(page.read_text(encoding="utf-8").replace("**Severity**: error", "**Severity**: info", 1),
                    encoding="utf-8")
    assert generate.main(["--check"]) == 1
    assert generate.main([]) == 0 and generate.main(["--check"]) == 0  # regenerated


def test_the_cli_reference_names_every_command_and_option() -> None:
    import click

    from kforensics.cli import main

    page = (REPO / "docs" / "cli-reference.md").read_text(encoding="utf-8")
    for name, command in main.commands.items():
        assert f"## kforensics {name}\n" in page
        section = page.split(f"## kforensics {name}\n", 1)[1].split("\n## ", 1)[0]
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden:
                assert any(opt in section for opt in param.opts), (name, param.opts)


def test_the_findings_page_names_each_kinds_implementation() -> None:
    from kforensics.kinds import KINDS

    page = (REPO / "docs" / "findings.md").read_text(encoding="utf-8")
    for name in KINDS:
        section = page.split(f"### `{name}`\n", 1)[1].split("\n### ", 1)[0]
        modules = re.search(r"\*\*Implemented in\*\*: (.*?)\.(?:\s|$)", " ".join(section.split())).group(1)
        source = r"`(?:(?:parsers|spark)/\w+\.pyx?|spark/sql/\w+\.sql)`"
        assert re.fullmatch(rf"{source}(, {source})*", modules), (name, modules)
        assert all((REPO / m.strip("`")).is_file() for m in modules.split(", ")), (name, modules)


def test_pages_in_the_site_navigation_exist() -> None:
    nav = re.findall(r"^  - [^:]+: (\S+\.md)$", (REPO / "mkdocs.yml").read_text(encoding="utf-8"), flags=re.M)
    assert "index.md" in nav and "cli-reference.md" in nav and "findings.md" in nav
    for page in nav:
        assert (REPO / "docs" / page).is_file(), page


def test_the_readme_is_a_front_door() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    lines = readme.splitlines()
    assert len(lines) <= 200
    assert max(len(line) for line in lines) <= 200
    # .ci/run runs the README's test command
    assert "pip install '.[test]' && python -m pytest -q" in readme
    for link in re.findall(r"\]\((docs/[^)#]+)", readme):
        assert (REPO / link).is_file(), link


def readme_console_blocks() -> list[list[tuple[str, list[str]]]]:
    """Each ```console block of the README as its (command, expected output lines), one per `$ ` line."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = []
    for text in re.findall(r"```console\n(.*?)```", readme, flags=re.S):
        examples: list[tuple[str, list[str]]] = []
        for line in text.splitlines():
            if line.startswith("$ "):
                examples.append((line[2:], []))
            else:
                examples[-1][1].append(line)
        blocks.append(examples)
    return blocks


def test_the_readme_has_dump_scan_and_report_examples() -> None:
    commands = [command for block in readme_console_blocks() for command, _ in block]
    for needle in ("kforensics dump", "kforensics scan", "kforensics lso"):
        assert any(c.startswith(needle) for c in commands), needle


MARK = "--- kforensics readme example done ---"


def _run_block(commands: list[str], cwd: Path) -> list[list[str]]:
    """The commands run one after the other in one shell (so `$?` is the previous command's), stderr in order with
    stdout; each command's output lines."""
    script = ["exec 2>&1"]
    for command in commands:
        script += [command, f"__status=$?; echo '{MARK}'; (exit $__status)"]
    env = {**os.environ, "COLUMNS": README_COLUMNS, "KFORENSICS_SERVER": "off",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("KFORENSICS_PURE_PYTHON", None)
    done = subprocess.run(["bash", "-c", "\n".join(script)], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)
    outputs = done.stdout.split(MARK + "\n")
    assert len(outputs) == len(commands) + 1 and outputs[-1] == "", done.stdout
    return [[line.rstrip() for line in output.splitlines()] for output in outputs[:-1]]


def test_the_readme_command_examples_print_what_it_shows(full_scan: Path, incident_scan: Path,
                                                       tmp_path: Path) -> None:
    """Every example but `scan` runs as written (against the sample logs, a finished scan of them as ./kforensics-out
    and one of the incident sample as ./incident-out) and prints exactly the README's lines; the scan's summary rows
    are those of that scan."""
    (tmp_path / "sample_logs").symlink_to(REPO / "sample_logs")
    (tmp_path / "kforensics-out").symlink_to(full_scan)
    (tmp_path / "incident-out").symlink_to(incident_scan)
    blocks = readme_console_blocks()
    assert sum(len(block) for block in blocks) >= 4
    for block in blocks:
        if block[0][0].startswith("kforensics scan"):
            assert len(block) == 1
            _check_scan_summary(block[0][1], full_scan)
            continue
        printed = _run_block([command for command, _ in block], tmp_path)
        for (command, expected), output in zip(block, printed, strict=True):
            assert output == [line.rstrip() for line in expected], command


def _check_scan_summary(expected: list[str], out: Path) -> None:
    """The README shows the start of a scan's output (then `...`): each line shown, but the title naming OUT and
    the time taken, is a line of the summary of the same scan."""
    from kforensics import queries, render
    from kforensics.scan_output import summarize

    printed = io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(printed):
        patch.setenv("COLUMNS", README_COLUMNS)
        render.scan_summary(summarize(str(out)), queries.findings(str(out)))
    lines = {line.rstrip() for line in printed.getvalue().splitlines()}
    shown = [line for line in expected if line.strip() not in ("...", "")]
    assert len(shown) >= 10
    for line in shown:
        if "kforensics scan ->" in line or re.match(r"│ seconds +│", line):
            continue
        assert line.rstrip() in lines, line


def test_the_parquet_tables_page_names_every_declared_column() -> None:
    """docs/output.md has a section per table of a scan's OUT, in the order a scan lists them, with a row per column
    its schema declares (the parse pass's in spark/schemas.py, a facts table's in its model file), type and meaning:
    generated, so a new column is documented where it is declared or test_sql_files fails."""
    from kforensics.scan_output import OUTPUT_TABLES
    from kforensics.spark import output_schemas
    from kforensics.spark import schemas as S

    text = (REPO / "docs" / "output.md").read_text(encoding="utf-8")
    section = text[text.index("## Parquet tables under OUT"):text.index("## What a scan does to OUT")]
    tables = re.findall(r"^### `([a-z_]+)`$", section, re.M)
    assert tables == list(OUTPUT_TABLES)
    declared = {**{name: S.INPUT_TABLES[source].names for name, (source, _, _) in S.WRITTEN_INPUTS.items()},
                **{name: s.names for name, s in output_schemas.OUTPUT_TABLES.items()}}
    # the findings table is a model since issue 49: the check families' columns, then each finding's incident
    assert declared["findings"] == [*S.FINDINGS.names, "incident_id"]
    for table, body in zip(tables, re.split(r"^### `[a-z_]+`$", section, flags=re.M)[1:], strict=True):
        rows = re.findall(r"^\| `([a-z_]+)` \| ([^|]+) \|", body, re.M)
        assert [name for name, _ in rows] == list(declared[table]), table
