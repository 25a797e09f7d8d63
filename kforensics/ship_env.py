"""`kforensics scan --master URL --ship-env`: this Python environment, packed with venv-pack and shipped to the
cluster's executors through `spark.archives`, as PySpark's docs ship a venv ("Python Package Management"), so that
executors where kforensics is not installed run its compiled core.

The archive is built once per environment content, in the cache dir (`env-<key>.tar.gz`): the key hashes every
installed distribution's RECORD (file names with their sha256) and kforensics' own files, so a changed package or
source builds a new one. pyspark and py4j are left out: an executor runs the pyspark of its Spark installation.
venv-pack packs a virtual environment only (not a system Python, not one that sees system site-packages) and
refuses editable installs: the message says so. Light: no pyspark, no click.
"""

from __future__ import annotations

import glob
import hashlib
import importlib
import importlib.metadata
import json
import os
import sys
import sysconfig
from pathlib import Path

#: The folder the executors unpack the archive into (the `#name` of spark.archives) and run Python from.
ENV_NAME = "kforensics-env"
#: What the archive leaves out (venv-pack filters, relative to the environment's root).
EXCLUDED = ("lib/python*/site-packages/pyspark/*", "lib/python*/site-packages/pyspark-*",
            "lib/python*/site-packages/py4j/*", "lib/python*/site-packages/py4j-*", "bin/pyspark*", "bin/spark-*")


class ShipEnvError(Exception):
    """The environment cannot be packed (the message says why and what to do)."""


def environment_key(prefix: str = sys.prefix) -> str:
    """A hash of what is installed in the environment at `prefix`, and of the Python it runs."""
    digest = hashlib.sha256(f"{sys.version}\0{os.path.realpath(sys.executable)}".encode())
    site = sysconfig.get_paths(vars={"base": prefix, "platbase": prefix})["purelib"]
    for record in sorted(glob.glob(os.path.join(site, "*.dist-info", "RECORD"))):
        digest.update(record.encode())
        digest.update(Path(record).read_bytes())
    for name in ("kforensics", "kforensics.parsers", "kforensics.spark"):  # the sources and compiled core themselves
        folder = Path(importlib.import_module(name).__file__ or "").parent
        for path in sorted([*folder.glob("*.py"), *folder.glob("*.so")]):
            digest.update(f"{name}/{path.name}\0".encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def packed_environment(cache: Path | None = None, prefix: str = sys.prefix) -> Path:
    """The venv-pack archive of the environment at `prefix`, built into `cache` (the cache dir) unless it is there
    already. Raises ShipEnvError when it cannot be built."""
    if prefix == sys.base_prefix:
        raise ShipEnvError(f"--ship-env packs a virtual environment, and {sys.executable} is not one: install "
                           "kforensics into a venv (python -m venv) and run it from there")
    if cache is None:
        from kforensics.paths import cache_dir

        cache = cache_dir()
    archive = cache / f"env-{environment_key(prefix)}.tar.gz"
    if archive.is_file():
        return archive  # packed from this very content, so packable
    problem = _unpackable(prefix)
    if problem:
        raise ShipEnvError(f"--ship-env cannot pack {prefix}: {problem}")
    try:
        import venv_pack
    except ImportError as exc:
        raise ShipEnvError("--ship-env needs venv-pack (pip install venv-pack)") from exc
    cache.mkdir(parents=True, exist_ok=True)
    partial = archive.with_name(f"{archive.name}.{os.getpid()}.partial")
    try:
        venv_pack.pack(prefix=prefix, output=str(partial), format="tar.gz", force=True,
                       filters=[("exclude", pattern) for pattern in EXCLUDED])
    except venv_pack.VenvPackException as exc:
        partial.unlink(missing_ok=True)
        raise ShipEnvError(f"venv-pack cannot pack {prefix}: {exc}") from exc
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    os.replace(partial, archive)  # whole or absent: a scan interrupted while packing leaves no archive
    return archive


def _unpackable(prefix: str) -> str | None:
    """Why the venv at `prefix` would not work on the executors once packed (venv-pack 0.2 checks neither)."""
    config = Path(prefix) / "pyvenv.cfg"
    settings = dict(line.split("=", 1) for line in config.read_text().splitlines() if "=" in line) \
        if config.is_file() else {}
    if {k.strip(): v.strip() for k, v in settings.items()}.get("include-system-site-packages") == "true":
        return ("it sees the system's site-packages, which the archive would not hold: make a venv without "
                "--system-site-packages and install kforensics into it")
    site = sysconfig.get_paths(vars={"base": prefix, "platbase": prefix})["purelib"]
    for dist in importlib.metadata.distributions(path=[site]):
        if dist.metadata["Name"] == "kforensics":
            direct = json.loads(dist.read_text("direct_url.json") or "{}")
            if direct.get("dir_info", {}).get("editable"):
                return ("kforensics is installed editable (pip install -e), so the archive would hold a link to "
                        "this machine's checkout: pip install it without -e")
            return None
    return "kforensics is not installed in it (pip install kforensics)"


def spark_settings(archive: Path) -> tuple[dict[str, str], str]:
    """The Spark properties that ship `archive` and the PYSPARK_PYTHON the executors run from it."""
    return {"spark.archives": f"{archive}#{ENV_NAME}"}, f"./{ENV_NAME}/bin/python"
