"""Build of the compiled core (parsers/_core.pyx). Everything else is declared in pyproject.toml.

The extension is optional: when it cannot be built (no C compiler, no Python headers), the install still
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
    ext = Extension("kforensics.parsers._core", ["parsers/_core.pyx"], include_dirs=["parsers"],
                    depends=["parsers/_crc32c.h", "parsers/_core_helpers.h", "parsers/_blake2b.h"],
                    extra_compile_args=compile_args, extra_link_args=link_args)
    try:
        return cythonize([ext], compiler_directives={"language_level": "3"}, quiet=True)
    except Exception as exc:  # noqa: BLE001 - a Cython error must not fail the install either
        OptionalBuildExt._fallback(exc)
        return []


setup(ext_modules=extensions(), cmdclass={"build_ext": OptionalBuildExt})
