"""The package's shape: from a checkout, only `parsers/` and `spark/` serve as kforensics' subpackages, and the
library modules the commands share import neither Spark nor the CLI."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import REPO


@pytest.mark.parametrize("module", ["kforensics.kforensics", "kforensics.sample_logs", "kforensics.tests",
                                    "kforensics.benchmarks"])
def test_a_checkout_does_not_leak_its_other_folders_into_the_package(module: str) -> None:
    done = subprocess.run([sys.executable, "-c", f"import {module}"], cwd=REPO, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 1 and "ModuleNotFoundError" in done.stderr


def test_the_library_modules_import_neither_spark_nor_click_nor_rich() -> None:
    code = ("import sys; import kforensics.scan_output, kforensics.queries, kforensics.scan_runner, "
            "kforensics.inputs, kforensics.defaults, kforensics.paths, kforensics.parsers.findings, "
            "kforensics.parsers.log_dir, kforensics.parsers.index_check; "
            "print(sorted(m for m in ('pyspark', 'click', 'rich') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_every_subpackage_is_installed() -> None:
    """An installed kforensics holds every package of the checkout: pyproject's list names them all (a
    subpackage missing there works from a checkout and an editable install, and breaks `pip install .`)."""
    import tomllib

    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {"kforensics." + ".".join(p.parent.relative_to(REPO / "kforensics").parts) if p.parent != REPO / "kforensics"
             else "kforensics" for p in (REPO / "kforensics").rglob("__init__.py")}
    assert found | {"kforensics.parsers", "kforensics.spark"} == listed
