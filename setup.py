"""Build of the compiled core: the reader's parts (parsers/_crc.pyx, _reader.pyx, _columns.pyx, sharing
parsers/_layouts.pxd) and dump's line formatter (kforensics/_dump_lines.pyx). Everything else is declared in
pyproject.toml.

The extensions are optional: when it cannot be built (no C compiler, no Python headers), the install still
succeeds and kforensics runs its pure-Python reader (`kforensics --version` says which one runs).
`KFORENSICS_SANITIZE=address` builds it with AddressSanitizer (for the fuzz harness, see README).
"""

from __future__ import annotations

import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

FALLBACK = ("kforensics: the compiled core could not be built ({why}); installing without it: the pure-Python "
            "reader will be used (same results, slower). `kforensics --version` says which reader runs.")


class OptionalBuildExt(build_ext):
    """build_ext whose failure is reported, not fatal."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # noqa: BLE001 - any compiler or toolchain failure
            self._fallback(exc)

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as exc:  # noqa: BLE001
            self._fallback(exc)

    @staticmethod
    def _fallback(exc: BaseException) -> None:
        message = FALLBACK.format(why=f"{type(exc).__name__}: {exc}".strip())
        print("\n" + "*" * 100 + "\n" + message + "\n" + "*" * 100 + "\n", file=sys.stderr)
        print(message)


#: (module, source, extra headers); parsers/core.py loads them (and checks their API_VERSION).
MODULES = [
    ("kforensics.parsers._crc", "parsers/_crc.pyx", ["parsers/_crc32c.h"]),
    ("kforensics.parsers._reader", "parsers/_reader.pyx", []),
    ("kforensics.parsers._columns", "parsers/_columns.pyx", ["parsers/_blake2b.h"]),
    ("kforensics._dump_lines", "kforensics/_dump_lines.pyx", []),
]


def extensions() -> list[Extension]:
    try:
        from Cython.Build import cythonize
    except ImportError as exc:
        OptionalBuildExt._fallback(exc)
        return []
    compile_args = ["-O3"]
    link_args: list[str] = []
    if os.environ.get("KFORENSICS_SANITIZE") == "address":
        compile_args = ["-O1", "-g", "-fsanitize=address", "-fno-omit-frame-pointer"]
        link_args = ["-fsanitize=address"]
    shared = ["parsers/_layouts.pxd", "parsers/_core_helpers.h"]
    exts = [Extension(name, [source], include_dirs=["parsers"], depends=[*shared, *depends],
                      extra_compile_args=compile_args, extra_link_args=link_args)
            for name, source, depends in MODULES]
    try:
        # include_path: `from _layouts cimport ...` (declarations and inline functions only: nothing imported)
        return cythonize(exts, include_path=["parsers"], compiler_directives={"language_level": "3"}, quiet=True)
    except Exception as exc:  # noqa: BLE001 - a Cython error must not fail the install either
        OptionalBuildExt._fallback(exc)
        return []


setup(ext_modules=extensions(), cmdclass={"build_ext": OptionalBuildExt})
