"""Peak memory of `kforensics dump --deep-iteration --json` over a large segment (a script, not a test).

Builds a segment of the requested size (default 1 GiB) from a ~8 MB block of v2 batches written by
kafka-python's builder (mixed codecs, idempotent producer), repeated with the base offsets patched
(baseOffset sits outside the CRC, so every copy stays valid), then runs the dump to /dev/null and reads
the child's peak RSS from the kernel (ru_maxrss).

`--zero-gib N` instead measures a plain `kforensics dump` of a segment of N GiB (default 2) that is a few
real batches followed by a hole (a preallocated file), with each reader.

    python benchmarks/bench_dump_memory.py [--size-mib 1024] [--keep]
    python benchmarks/bench_dump_memory.py --zero-gib 2
"""

from __future__ import annotations

import argparse
import os
import resource
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kafka.record.default_records import DefaultRecordBatchBuilder

CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


def build_block(target_bytes: int = 8 << 20) -> tuple[bytes, int]:
    """Concatenated batches starting at offset 0; returns (bytes, number of offsets used)."""
    out = bytearray()
    offset = 0
    sequence = 0
    codecs = list(CODECS.values())
    i = 0
    while len(out) < target_bytes:
        builder = DefaultRecordBatchBuilder(
            magic=2, compression_type=codecs[i % len(codecs)], is_transactional=False,
            producer_id=1000, producer_epoch=0, base_sequence=sequence, batch_size=1 << 30)
        for j in range(100):
            builder.append(j, timestamp=1_763_632_800_000 + offset + j, key=f"key-{(offset + j) % 977}".encode(),
                           value=os.urandom(40) + b"payload " * 10, headers=[("trace", b"abc")])
        batch = bytearray(builder.build())
        struct.pack_into(">q", batch, 0, offset)
        out += batch
        offset += 100
        sequence += 100
        i += 1
    return bytes(out), offset


def write_segment(path: Path, size: int) -> int:
    block, span = build_block()
    written = 0
    base = 0
    with path.open("wb") as fh:
        while written < size:
            chunk = bytearray(block)
            pos = 0
            while pos < len(chunk):
                old = struct.unpack_from(">q", chunk, pos)[0]
                struct.pack_into(">q", chunk, pos, old + base)
                pos += 12 + struct.unpack_from(">i", chunk, pos + 8)[0]
            fh.write(chunk)
            written += len(chunk)
            base += span
    return written


def run_measured(cmd: list[str], env: dict[str, str] | None = None) -> tuple[int, float, float, str]:
    """(exit code, seconds, peak RSS in MiB, stderr) of one child process (its own rusage, from wait4)."""
    t0 = time.perf_counter()
    with open(os.devnull, "w") as devnull:
        proc = subprocess.Popen(cmd, stdout=devnull, stderr=subprocess.PIPE, text=True, env=env)
        stderr = proc.stderr.read() if proc.stderr else ""
        _pid, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, time.perf_counter() - t0, usage.ru_maxrss / 1024, stderr


def zero_filled(gib: int) -> None:
    """`kforensics dump` of a preallocated segment: a few batches, then a hole of `gib` GiB."""
    block, _span = build_block(1 << 20)
    tmp = Path(tempfile.mkdtemp(prefix="kforensics-zero-"))
    segment = tmp / "00000000000000000000.log"
    segment.write_bytes(block)
    os.truncate(segment, gib << 30)
    print(f"segment: {len(block)} bytes of batches, then zeros up to {gib} GiB (sparse): {segment}")
    for reader in ("compiled", "pure-python"):
        env = {**os.environ, "KFORENSICS_PURE_PYTHON": "1" if reader == "pure-python" else "0"}
        code, seconds, peak, stderr = run_measured([sys.executable, "-m", "kforensics", "dump", str(segment)], env)
        tail = [line for line in stderr.splitlines() if "zero_filled_tail" in line]
        print(f"| dump of a {gib} GiB zero-filled segment, {reader:<11} | exit {code} | {seconds:5.2f} s | "
              f"peak RSS {peak:5.0f} MiB (target < 300) | {'zero_filled_tail found' if tail else 'NO FINDING'} |")
    segment.unlink()
    tmp.rmdir()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--keep", action="store_true", help="keep the generated segment")
    parser.add_argument("--zero-gib", type=int, nargs="?", const=2, help="measure a zero-filled segment instead")
    args = parser.parse_args()
    if args.zero_gib:
        zero_filled(args.zero_gib)
        return
    tmp = Path(tempfile.mkdtemp(prefix="kforensics-mem-"))
    segment = tmp / "00000000000000000000.log"
    t0 = time.perf_counter()
    size = write_segment(segment, args.size_mib << 20)
    print(f"generated {size / 2**20:.0f} MiB segment in {time.perf_counter() - t0:.1f}s: {segment}")
    t0 = time.perf_counter()
    with open(os.devnull, "w") as devnull:
        proc = subprocess.run([sys.executable, "-m", "kforensics", "dump", "--deep-iteration", "--json", str(segment)],
                              stdout=devnull, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - t0
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(f"dump --deep-iteration --json: exit {proc.returncode}, {elapsed:.1f}s, "
          f"{size / 2**20 / elapsed:.1f} MiB/s, peak RSS {peak_kib / 1024:.0f} MiB (target < 300 MiB)")
    if proc.stderr:
        print(proc.stderr[-2000:])
    if not args.keep:
        segment.unlink()
        tmp.rmdir()


if __name__ == "__main__":
    main()
