"""The one place that binds each piece of the segment reader to its compiled or its pure-Python implementation.

Pieces (same signatures, same results; tests/test_differential.py and fuzz/fuzz_reader.py hold them to it):

  walk_v2, first_nonzero, decode_v2, check_v2   `_reader.pyx`   or `_pure.py`
  RecordColumns (bulk record rows for Arrow)     `_columns.pyx`  or `_pure.py`
  CRC-32C paths (crc32c, force_crc, CRC_PATHS)   `_crc.pyx`      (the pure reader uses parsers/crc.py)

The compiled modules are used when they were built and KFORENSICS_PURE_PYTHON is not set (`READER`). Like
aiokafka, the choice is made once, at import; `implementation(compiled)` hands a caller that asks for one
reader explicitly (the differential tests) the whole set of that reader. Nothing else imports a compiled module
of the reader or branches on which one runs; other compiled modules (kforensics/_dump_lines.pyx) are loaded
through `load_compiled`, so that they follow the same rules.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from kforensics.parsers import _pure

#: The compiled modules' API_VERSION this module was written for: a stale build is not used.
CORE_API_VERSION = 3
#: The compiled modules of the reader, in the order they load (_reader takes _crc's CRC-32C).
READER_MODULES = ("kforensics.parsers._crc", "kforensics.parsers._reader", "kforensics.parsers._columns")

PURE_PYTHON_FORCED = os.environ.get("KFORENSICS_PURE_PYTHON", "") not in ("", "0")


@dataclass(frozen=True)
class Implementation:
    """One reader's pieces."""

    name: str  # "compiled" or "pure-python"
    walk_v2: Callable[..., tuple[list[Any], int]]
    first_nonzero: Callable[[Any, int, int], int]
    decode_v2: Callable[..., tuple[list[Any], tuple[int, int, int] | None]]
    check_v2: Callable[..., tuple[int, int, int] | None]
    RecordColumns: Callable[[bool], Any]  # noqa: N815 - a class
    #: the header walk with CRCs reads the file in chunks into one buffer (compiled: faster than the mapping)
    chunked_walk: bool


def _installed(name: str) -> ModuleType | None:
    """The compiled module `name` of an installed kforensics when this copy of the package came from a zip
    (Spark's addPyFile ships the Python files only): executors whose environment has the package still run
    compiled."""
    package, _, _leaf = name.rpartition(".")
    dirs = [d for d in (os.path.join(p, *package.split(".")) for p in sys.path if isinstance(p, str))
            if os.path.isdir(d)]
    for finder in sys.meta_path:
        try:
            find = getattr(finder, "find_spec", None)
            spec = find(name, dirs if finder is importlib.machinery.PathFinder else None) if find else None
            if spec is None or spec.loader is None or not str(spec.origin).endswith(
                    tuple(importlib.machinery.EXTENSION_SUFFIXES)):
                continue
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
            return module
        except (ImportError, OSError):
            sys.modules.pop(name, None)
            return None
    return None


def _load(name: str) -> tuple[ModuleType | None, str]:
    try:
        module = importlib.import_module(name)
    except ImportError:  # no compiler at install time, or a zipped copy of the package
        module = _installed(name)
    if module is None:
        return None, "the compiled core is not built"
    if getattr(module, "API_VERSION", None) != CORE_API_VERSION:
        return None, f"the compiled core at {module.__file__} is stale: rebuild it (pip install)"
    return module, ""


def load_compiled(name: str) -> ModuleType | None:
    """A compiled module of kforensics, or None when it is not built, stale, or KFORENSICS_PURE_PYTHON is set."""
    if PURE_PYTHON_FORCED:
        return None
    return _load(name)[0]


def _load_reader() -> tuple[Implementation | None, ModuleType | None, str]:
    modules = []
    for name in READER_MODULES:
        module, why = _load(name)
        if module is None:
            return None, None, why
        modules.append(module)
    crc, reader, columns = modules
    return Implementation("compiled", reader.walk_v2, reader.first_nonzero, reader.decode_v2, reader.check_v2,
                          columns.RecordColumns, chunked_walk=True), crc, ""


PURE = Implementation("pure-python", _pure.walk_v2, _pure.first_nonzero, _pure.decode_v2, _pure.check_v2,
                      _pure.RecordColumns, chunked_walk=False)
#: The compiled reader (None when not built or stale), and its CRC-32C module (its paths, for tests).
COMPILED, COMPILED_CRC, _NO_CORE = _load_reader()
READER = "compiled" if COMPILED is not None and not PURE_PYTHON_FORCED else "pure-python"


def implementation(compiled: bool | None = None) -> Implementation:
    """The reader's pieces: the compiled ones or the pure-Python ones (default: `READER`'s)."""
    if compiled is None:
        compiled = READER == "compiled"
    if not compiled:
        return PURE
    if COMPILED is None:
        raise RuntimeError("the compiled core of kforensics is not built")
    return COMPILED


def reader_description() -> str:
    """Which reader runs, for `kforensics --version`."""
    if READER == "compiled":
        return f"compiled reader (CRC-32C: {COMPILED_CRC.crc_implementation()})"  # type: ignore[union-attr]
    why = "KFORENSICS_PURE_PYTHON is set" if COMPILED is not None else _NO_CORE
    return f"pure-Python reader ({why})"
