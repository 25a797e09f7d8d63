"""Builds broker log dirs that hold what real ones hold beside the partitions: Kafka's -delete, -future and -stray
dirs, and junk (lost+found, notes, FIFOs, sockets, devices, broken links). Shared by tests/test_log_dirs.py and
fuzz/fuzz_log_dirs.py."""

from __future__ import annotations

import os
import shutil
import socket
import stat
import struct
from pathlib import Path

from hypothesis import strategies as st

SAMPLE_BROKER = Path(__file__).resolve().parent.parent / "sample_logs" / "broker-2"
#: The live partition dirs of the sample broker the built dirs draw from.
PARTITIONS = tuple(sorted(p.name for p in SAMPLE_BROKER.iterdir() if p.is_dir() and "." not in p.name))
BROKER_FILES = tuple(sorted(p.name for p in SAMPLE_BROKER.iterdir() if p.is_file()))
SPECIAL_STATES = ("delete", "future", "stray")
#: Junk a log dir may hold; each is one `unknown_file` finding.
JUNK = ("lost+found", "lost+found-full", "backup-dir", "notes", "hidden", "fifo", "socket", "device", "dangling",
        "loop", "fifo-in-partition")


def record_batches(records: list[tuple[bytes | None, bytes | None]]) -> bytes:
    """One uncompressed v2 batch per (key, value), at offsets 0, 1, ..., written by kafka-python's builder (an
    independent writer): the bytes of a segment of an internal topic's records."""
    from kafka.record.default_records import DefaultRecordBatchBuilder

    data = bytearray()
    for offset, (key, value) in enumerate(records):
        builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                            producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
        builder.append(0, timestamp=1700000000000 + offset, key=key, value=value, headers=[])
        batch = bytearray(builder.build())
        struct.pack_into(">q", batch, 0, offset)
        data += batch
    return bytes(data)


def unique_id(n: int) -> str:
    return f"{n:032x}"


def add_partitions(root: Path, live: list[str], special: list[tuple[str, str]]) -> None:
    """The broker files, `live` partition dirs, and (partition, state) copies named as Kafka names them."""
    root.mkdir(parents=True, exist_ok=True)
    for name in BROKER_FILES:
        shutil.copy2(SAMPLE_BROKER / name, root / name)
    for name in live:
        shutil.copytree(SAMPLE_BROKER / name, root / name)
    for i, (name, state) in enumerate(special):
        shutil.copytree(SAMPLE_BROKER / name, root / f"{name}.{unique_id(i + 1)}-{state}")


def add_junk(root: Path, junk: list[str]) -> int:
    """Adds the named junk entries; returns how many `unknown_file` findings they make (a device node needs root:
    left out elsewhere)."""
    made = 0
    for kind in junk:
        if kind == "lost+found":
            (root / "lost+found").mkdir()
        elif kind == "lost+found-full":
            (root / "lost+found.1" / "#1234").mkdir(parents=True)
            (root / "lost+found.1" / "#1234" / "00000000000000000000.log").write_bytes(b"\0" * 64)
        elif kind == "backup-dir":
            shutil.copytree(SAMPLE_BROKER / PARTITIONS[0], root / "backup" / PARTITIONS[0])
        elif kind == "notes":
            (root / "NOTES-incident-42.txt").write_text("moved orders-0 here by hand\n")
        elif kind == "hidden":
            (root / ".DS_Store").write_bytes(b"\0\1")
        elif kind == "fifo":
            os.mkfifo(root / "a-pipe")
        elif kind == "socket":
            with socket.socket(socket.AF_UNIX) as s:
                s.bind(str(root / "a-socket"))
        elif kind == "device":
            try:
                os.mknod(root / "a-device", stat.S_IFBLK | 0o600, os.makedev(7, 250))
            except (PermissionError, OSError):
                continue
        elif kind == "dangling":
            os.symlink(root / "nowhere", root / "a-dangling-link")
        elif kind == "loop":
            os.symlink(root / "loop-b", root / "loop-a")
            os.symlink(root / "loop-a", root / "loop-b")
            made += 1
        elif kind == "fifo-in-partition":
            partition = next((p for p in sorted(root.iterdir()) if p.is_dir() and p.name in PARTITIONS), None)
            if partition is None:
                continue
            os.mkfifo(partition / "stuck.fifo")
        made += 1
    return made


log_dirs = st.fixed_dictionaries({
    "live": st.lists(st.sampled_from(PARTITIONS), unique=True, max_size=len(PARTITIONS)),
    "special": st.lists(st.tuples(st.sampled_from(PARTITIONS), st.sampled_from(SPECIAL_STATES)), max_size=3),
    "junk": st.lists(st.sampled_from(JUNK), unique=True, min_size=1, max_size=len(JUNK)),
})
