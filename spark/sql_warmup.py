"""The statements earlier scans on this machine ran, kept in the cache folder for the parser warm-up of a new local
session (`session.warm_sql_parser`, `analysis.statement_texts`).

A fresh JVM parses slowly until ANTLR's prediction caches are filled and the JIT has compiled the parser. The
checks' text is known without a scan; the statements of the shared and facts tables are built by the transforms
from the tables they are given, so `views.run_sql` remembers the text it ran (placeholders unfilled) and a scan
saves it here when it is done. The file is a cache: unreadable or missing, the warm-up parses the checks alone.
Nothing here imports pyspark.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile

from kforensics.paths import cache_dir

FILE = "sql-statements.json"
#: At most this many statements are kept (the newest), so that texts older versions ran do not pile up.
LIMIT = 300


def saved() -> list[str]:
    """The statements saved by earlier scans (none when the file is missing or unreadable)."""
    try:
        texts = json.loads((cache_dir() / FILE).read_text())
    except (OSError, ValueError):
        return []
    return [text for text in texts if isinstance(text, str)] if isinstance(texts, list) else []


def save(statements: list[str]) -> None:
    """Add `statements` to the saved ones (newest last, at most LIMIT), if any is new. Best effort: a cache
    folder that cannot be written leaves the warm-up to the checks' text."""
    known = saved()
    if set(statements) <= set(known):
        return
    merged = [text for text in known if text not in set(statements)] + list(dict.fromkeys(statements))
    with contextlib.suppress(OSError):
        folder = cache_dir()
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{FILE}.", dir=folder)
        try:
            with os.fdopen(fd, "w") as out:
                json.dump(merged[-LIMIT:], out)
            os.replace(tmp, folder / FILE)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
