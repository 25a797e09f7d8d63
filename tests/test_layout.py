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


#: Our package folders (pyproject's package-dir): any of them can be the first entry of sys.path, as spark-submit
#: puts the folder of the script it runs (spark/jobs.py) there.
PACKAGE_FOLDERS = {"kforensics": REPO / "kforensics", "kforensics.parsers": REPO / "parsers",
                   "kforensics.spark": REPO / "spark"}


def test_no_module_of_ours_is_named_as_a_standard_library_module() -> None:
    """A module (or subpackage) named `profile` in spark/ made `import profile` find ours under spark-submit, and
    pyspark died at import; no module in any of our package folders may carry a standard library module's name."""
    ours = set()
    for folder in PACKAGE_FOLDERS.values():
        for path in folder.rglob("*"):
            if "__pycache__" in path.parts:
                continue
            if path.suffix in (".py", ".pyx", ".so") or (path.is_dir() and (path / "__init__.py").exists()):
                ours.add((path.name.split(".")[0], str(path.relative_to(REPO))))
    assert len(ours) > 50
    assert [where for name, where in sorted(ours) if name in sys.stdlib_module_names] == []


def test_the_zip_for_executors_holds_every_module_and_resource(tmp_path) -> None:
    """`python -m kforensics.spark.jobs --zip` (what spark-submit's --py-files and a cluster scan ship): a Python with
    only the zip (the installed package hidden) imports every module of ours from it and reads every SQL file."""
    import zipfile

    from kforensics.spark.jobs import package_zip

    archive = package_zip(str(tmp_path / "kforensics.zip"))
    modules = sorted({".".join([package, *path.relative_to(folder).with_suffix("").parts]).replace(".__init__", "")
                      for package, folder in PACKAGE_FOLDERS.items() for path in folder.rglob("*.py")
                      if path.name != "__main__.py"  # runs the CLI
                      and not (package == "kforensics" and path.relative_to(folder).parts[0] in ("parsers", "spark"))})
    sql = sorted(p.name for p in (REPO / "spark" / "sql").glob("*.sql"))
    assert len(modules) > 50 and sql
    names = zipfile.ZipFile(archive).namelist()
    assert not [n for n in names if n.endswith((".so", ".c", ".pyx", ".pyc"))]
    check = f"""
import importlib, importlib.abc, sys
from importlib import resources
class OnlyTheZip(importlib.abc.MetaPathFinder):  # the editable install's finder, or an installed copy, hidden
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "kforensics" and not any("kforensics.zip" in str(p) for p in (path or sys.path[:1])):
            raise ImportError(name)
sys.path.insert(0, {archive!r})
sys.meta_path.insert(0, OnlyTheZip())
for name in {modules!r}:
    module = importlib.import_module(name)
    assert {archive!r} in module.__file__, (name, module.__file__)
for name in {sql!r}:
    assert (resources.files("kforensics.spark") / "sql" / name).read_text(encoding="utf-8").strip(), name
print("ok", len({modules!r}))
"""
    done = subprocess.run([sys.executable, "-c", check], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["ok", str(len(modules))]
