"""`scan --ship-env`'s archive: built once per environment content, refused with a reason where venv-pack cannot
pack (the cluster run itself: tests/test_spark_cluster.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kforensics import ship_env


def test_a_cached_archive_is_reused_and_a_changed_environment_gets_another(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    if sys.prefix == sys.base_prefix:
        pytest.skip("the tests do not run in a venv")
    key = ship_env.environment_key()
    assert key == ship_env.environment_key()  # the same content, the same key
    cached = tmp_path / f"env-{key}.tar.gz"
    cached.write_bytes(b"packed before")
    venv_pack = pytest.importorskip("venv_pack")

    def no_packing(**_kwargs: object) -> None:
        raise AssertionError("packed again")

    monkeypatch.setattr(venv_pack, "pack", no_packing)
    assert ship_env.packed_environment(tmp_path) == cached
    site = Path(ship_env.sysconfig.get_paths(vars={"base": sys.prefix, "platbase": sys.prefix})["purelib"])
    if not list(site.glob("*.dist-info/RECORD")):
        pytest.skip("no distribution with a RECORD in this environment")
    records = sorted(site.glob("*.dist-info/RECORD"))
    real_read = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda p: real_read(p) + (b"x" if p == records[0] else b""))
    assert ship_env.environment_key() != key  # one installed file changed: another archive


def test_venv_pack_refusals_are_a_ship_env_error(tmp_path: Path) -> None:
    pytest.importorskip("venv_pack")
    with pytest.raises(ship_env.ShipEnvError, match="virtual environment"):
        ship_env.packed_environment(tmp_path, prefix=sys.base_prefix)
    if sys.prefix != sys.base_prefix and "include-system-site-packages = true" in (
            Path(sys.prefix) / "pyvenv.cfg").read_text():
        with pytest.raises(ship_env.ShipEnvError, match="system's site-packages"):
            ship_env.packed_environment(tmp_path)
        assert list(tmp_path.iterdir()) == []  # nothing half-written left in the cache
