"""The command line's `[NAME=]DIR` inputs: a broker label and a path or URI (light: no Spark, no click)."""

from __future__ import annotations

import os


def parse_inputs(specs: list[str]) -> list[tuple[str, str]]:
    """`[NAME=]DIR` -> (label, dir); the label defaults to the dir's base name. A `=` inside a path or URI (a
    NAME with `/` or `:`) is part of the path."""
    out = []
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep or "/" in name or ":" in name:
            name, path = os.path.basename(spec.rstrip("/")) or spec, spec
        out.append((name, path))
    return out


def input_problem(inputs: list[tuple[str, str]], out: str | None) -> tuple[str, str] | None:
    """What is wrong with the inputs (and with an --out the user chose), as (option, message); None if nothing."""
    for _label, path in inputs:
        if "://" not in path and not os.path.isdir(path):
            return "DIR", f"{path} is not a readable directory"
        if "://" in path:
            problem = _uri_problem(path)
            if problem:
                return "DIR", problem
        if out is not None and "://" not in path and "://" not in out:
            real_in, real_out = os.path.realpath(path), os.path.realpath(out)
            if real_out == real_in or real_out.startswith(real_in + os.sep):
                return "--out", f"--out {out} is inside the input {path}: kforensics never writes into the " \
                                 "directories it reads"
    if len({label for label, _ in inputs}) != len(inputs):
        return "DIR", "two inputs have the same broker label; name them NAME=DIR"
    return None


def _uri_problem(uri: str) -> str | None:
    """Why a URI input is not a readable directory (None when it is), asked of its filesystem."""
    import pyarrow.fs as pafs

    try:
        fs, path = pafs.FileSystem.from_uri(uri)
        kind = fs.get_file_info(path).type
    except (OSError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return f"cannot read {uri}: {first}"
    return None if kind == pafs.FileType.Directory else f"{uri} is not a readable directory"
