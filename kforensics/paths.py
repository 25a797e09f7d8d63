"""Where kforensics keeps files of its own between runs (no Spark, no CLI)."""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "KFORENSICS_CACHE_DIR"


def cache_dir() -> Path:
    """$KFORENSICS_CACHE_DIR, else $XDG_CACHE_HOME/kforensics, else ~/.cache/kforensics."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "kforensics"


def log_dir() -> Path:
    """Spark's logs of sessions with no local OUT (the server, warmup, a scan writing to a URI)."""
    folder = cache_dir() / "logs"
    folder.mkdir(parents=True, exist_ok=True)
    return folder
