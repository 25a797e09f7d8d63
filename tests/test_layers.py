"""The layers hold, read from the source tree with ast (every import, at module level or inside a function):

- the parsers (`parsers/`, kforensics.parsers) import nothing of kforensics outside the parsers: no Spark, no CLI;
- the Spark pipeline (`spark/`) imports nothing of the commands, the CLI, the rendering (render.py, dump_out.py,
  report.py, tiered_report.py) or the server;
- the compiled modules are imported by parsers/core.py only (the one binder), and by each other;
- no import cycle between modules.

The compiled modules' own imports (`.pyx`: Cython, not Python syntax) are read with a regex, so the parsers' compiled
core is held to the parsers' layer too; the layer rules hold for what a module imports through others as well.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from conftest import REPO

#: package -> source folder (pyproject's package-dir)
PACKAGES = {"kforensics": REPO / "kforensics", "kforensics.parsers": REPO / "parsers",
            "kforensics.spark": REPO / "spark"}
CLI_AND_RENDERING = ("kforensics.cli", "kforensics.commands", "kforensics.render", "kforensics.dump_out",
                     "kforensics.report", "kforensics.tiered_report", "kforensics.server")
COMPILED = ("kforensics.parsers._crc", "kforensics.parsers._reader", "kforensics.parsers._columns",
            "kforensics._dump_lines")
BINDER = "kforensics.parsers.core"


def _modules() -> dict[str, Path]:
    modules = {}
    for package, folder in PACKAGES.items():
        for path in sorted(folder.rglob("*.py")):
            parts = [p for p in path.relative_to(folder).with_suffix("").parts if p != "__init__"]
            if package == "kforensics" and parts and parts[0] in ("parsers", "spark"):
                continue
            modules[".".join([package, *parts])] = path
    return modules


MODULES = _modules()
#: compiled module name -> its .pyx source
PYX = {name: path for package, folder in PACKAGES.items() for path in sorted(folder.glob("*.pyx"))
       if (name := f"{package}.{path.stem}") in (
           "kforensics.parsers._crc", "kforensics.parsers._reader", "kforensics.parsers._columns",
           "kforensics._dump_lines")}
PYX_IMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+c?import|c?import\s+([\w.]+))", re.M)


def _imports(name: str, path: Path) -> set[str]:
    """The kforensics modules (or compiled modules) `name` imports, anywhere in its code."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, *([base] if base else [])])
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    known = set(MODULES) | set(COMPILED)
    return {m for m in found if m in known and m != name}


def _pyx_imports(name: str, path: Path) -> set[str]:
    found = {a or b for a, b in PYX_IMPORT.findall(path.read_text())}
    known = set(MODULES) | set(COMPILED)
    return {m for m in found if m in known and m != name}


GRAPH = {**{name: _imports(name, path) for name, path in MODULES.items()},
         **{name: _pyx_imports(name, path) for name, path in PYX.items()}}


def _reach(name: str) -> set[str]:
    """Every module `name` imports, directly or through others."""
    seen: set[str] = set()
    todo = list(GRAPH.get(name, ()))
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo.extend(GRAPH.get(m, ()))
    return seen


def _inside(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def test_the_graph_sees_the_package() -> None:
    assert {"kforensics.parsers.record_batch", "kforensics.spark.read", "kforensics.dump_engine"} <= set(GRAPH)
    assert "kforensics.parsers.record_batch" in GRAPH["kforensics.dump_engine"]  # a function-level import
    assert "kforensics.parsers.findings" in GRAPH["kforensics.spark.read"]


def test_the_graph_sees_the_compiled_modules() -> None:
    assert set(PYX) == set(COMPILED)
    assert GRAPH["kforensics.parsers._reader"] == {"kforensics.parsers._crc"}


def test_parsers_import_nothing_of_spark_or_the_cli() -> None:
    wrong = {name: sorted(m for m in _reach(name) if not _inside(m, ("kforensics.parsers",)))
             for name in GRAPH if _inside(name, ("kforensics.parsers",))}
    assert {name: deps for name, deps in wrong.items() if deps} == {}


def test_spark_imports_nothing_of_the_commands_the_rendering_or_the_server() -> None:
    wrong = {name: sorted(m for m in _reach(name) if _inside(m, CLI_AND_RENDERING))
             for name in GRAPH if _inside(name, ("kforensics.spark",))}
    assert {name: deps for name, deps in wrong.items() if deps} == {}


def test_only_the_binder_imports_the_compiled_modules() -> None:
    importers = {name for name, deps in GRAPH.items() if deps & set(COMPILED) and name not in COMPILED}
    assert importers <= {BINDER}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle() -> None:
    assert _cycles(GRAPH) == []


@pytest.mark.parametrize("graph, expected", [
    ({"a": {"b"}, "b": {"a"}, "c": set()}, [["a", "b"]]),
    ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
])
def test_the_cycle_finder_finds_cycles(graph: dict[str, set[str]], expected: list[list[str]]) -> None:
    assert _cycles(graph) == expected


def _third_party_imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.split(".")[0])
    return found


def test_only_render_prints_through_rich() -> None:
    """One door to the terminal (issue 42): kforensics/render.py shows every input string literally; a module that
    imported rich itself could hand it markup made of data."""
    importers = sorted(name for name, path in MODULES.items() if "rich" in _third_party_imports(path))
    assert importers == ["kforensics.render"]
