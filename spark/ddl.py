"""Spark DDL column lists (`name type, ...`), as the models declare their columns: read without Spark or Arrow."""

from __future__ import annotations


def split_ddl(ddl: str) -> list[tuple[str, str]]:
    """`name type, ...` (types may hold commas inside <...>) as (name, type) pairs."""
    out, depth, current = [], 0, ""
    for ch in ddl:
        depth += ch == "<"
        depth -= ch == ">"
        if ch == "," and depth == 0:
            out.append(current)
            current = ""
        else:
            current += ch
    out.append(current)
    pairs = []
    for item in (i.strip() for i in out if i.strip()):
        name, _, kind = item.partition(" ")
        pairs.append((name.strip("`"), kind.strip()))
    return pairs
