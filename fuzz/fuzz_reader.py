"""Coverage-guided fuzzing of the segment reader's entry points with atheris (a script, not a test).

Every input runs through each entry point of the compiled core and, where there is one, its pure-Python
reference; any exception or any difference between the two readers is a crash that atheris reports and saves.

  walk      LogFile.batches() over the input as a segment (any start, max_bytes, CRC check on or off), in memory
            and as a file (the compiled reader's chunked walk, with chunk sizes that cut batches anywhere)
  records   LogFile.records() of every batch found (decompression by the codec libraries, then v2 decode)
  decode    the v2 record decoder straight on the input (as a decompressed records section, any header)
  dump      DumpLines (the compiled dump formatter, text and JSON) against TextOut/JsonOut, and the bulk
            record rows (RecordColumns) of both readers
  zeros     first_nonzero() against the reference's scan; crc32c() (every path: vpclmulqdq, SSE4.2, table) against crc32c

Seeds: every sample segment and, when present, every real segment under ../shared/realdata, written to a
temporary corpus folder (the project's files are never written).

    pip install atheris
    python fuzz/fuzz_reader.py [-atheris_runs=N | -max_total_time=SECONDS] [corpus dir ...]

Build the core with AddressSanitizer first to catch out-of-bounds reads in C:
    KFORENSICS_SANITIZE=address pip install -e . --no-build-isolation
    LD_PRELOAD=$(gcc -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0 python fuzz/fuzz_reader.py ...
"""

from __future__ import annotations

import atexit
import io
import os
import shutil
import struct
import sys
import tempfile
from pathlib import Path

import atheris
import crc32c as crc32c_lib

from kforensics import dump_out
from kforensics.dump_out import JsonOut, TextOut
from kforensics.parsers import core, kafka_codecs, record_batch, record_rows  # noqa: F401 - loaded before instrument_all()
from kforensics.parsers.findings import Finding
from kforensics.parsers.record_batch import Record, RecordBatch, open_log, open_log_bytes

# The package is imported through setuptools' editable finder, which atheris's import hook does not see:
# instrument every loaded function instead.
atheris.instrument_all()

CORE, CRC, PURE = core.COMPILED, core.COMPILED_CRC, core.PURE
DUMP_LINES = dump_out.compiled_dump_lines()
if CORE is None or DUMP_LINES is None:
    sys.exit("the compiled core is not built: nothing to fuzz against the reference")

ROOT = Path(__file__).resolve().parent.parent
MAX_SEED = 1 << 20


#: the input as a file, for the compiled reader's chunked header walk (reads with pread, not the mapping)
_ON_FILE_DIR = tempfile.mkdtemp(prefix="kforensics-fuzz-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
atexit.register(shutil.rmtree, _ON_FILE_DIR, ignore_errors=True)
ON_FILE = os.path.join(_ON_FILE_DIR, "fuzz.log")


def _everything(data: bytes, compiled: bool, *, name: str = "fuzz.log", on_file: bool = False,
                **kwargs: object) -> list[object]:
    out: list[object] = []
    if on_file:
        Path(name).write_bytes(data)
        record_batch.READ_CHUNK_BYTES = 61 + len(data) % 997  # chunk edges anywhere, batches larger than one
    with (open_log(name, compiled=compiled) if on_file else open_log_bytes(data, name, compiled=compiled)) as log:
        for item in log.batches(**kwargs):
            out.append(item)
            if isinstance(item, RecordBatch):
                out.extend(log.records(item))
    return out


def _dump_lines(data: bytes, json: bool, print_data: bool) -> None:
    """DumpLines (C) against TextOut/JsonOut (Python) on every non-control v2 batch of the input."""
    with open_log_bytes(data, "fuzz.log", compiled=True) as log:
        for b in log.batches():
            if not isinstance(b, RecordBatch) or b.magic != 2 or b.is_control:
                continue
            text = io.StringIO()
            out = JsonOut(text) if json else TextOut(text, io.StringIO())
            out.batch(b, "fuzz.log")
            findings = []
            for r in log.records(b):
                if isinstance(r, Finding):
                    findings.append(r)
                else:
                    out.record(b, r, print_data=print_data, decoded=None)
            lines = DUMP_LINES.DumpLines(json, print_data, dump_out.batch_layout(json, "fuzz.log"))
            lines.batch(b)
            section = log.records_section(b)
            if isinstance(section, Finding):
                continue
            problem, _last, _gaps = lines.records_v2(*section, b, -1)
            got = [] if problem is None else [record_batch.record_problem_finding("fuzz.log", b, problem)]
            if lines.take() != text.getvalue().encode("utf-8") or got != findings:
                raise AssertionError("dump lines differ")


def _record_columns(data: bytes) -> None:
    from kforensics.parsers.record_rows import RecordColumns

    out = []
    for compiled in (True, False):
        columns, findings = RecordColumns(compiled=compiled), []
        with open_log_bytes(data, "fuzz.log", compiled=compiled) as log:
            for b in log.batches():
                if isinstance(b, RecordBatch):
                    findings += columns.add(log, b)
        out.append(({k: v.to_pylist() for k, v in columns.take().items()}, findings))
    if out[0] != out[1]:
        raise AssertionError("record columns differ")


def _header(fdp: atheris.FuzzedDataProvider) -> RecordBatch:
    attributes = fdp.ConsumeIntInRange(-(2**15), 2**15 - 1)
    return RecordBatch(
        position=fdp.ConsumeIntInRange(0, 2**31), size=61, magic=2,
        base_offset=fdp.ConsumeIntInRange(-(2**63), 2**63 - 1), last_offset=0,
        count=fdp.ConsumeIntInRange(-(2**31), 2**31 - 1), partition_leader_epoch=0, producer_id=1, producer_epoch=0,
        base_sequence=fdp.ConsumeIntInRange(-(2**31), 2**31 - 1), last_sequence=0, is_transactional=False,
        is_control=bool(attributes & 0x20), codec="none",
        timestamp_type="LogAppendTime" if attributes & 8 else "CreateTime",
        base_timestamp=fdp.ConsumeIntInRange(-(2**63), 2**63 - 1),
        max_timestamp=fdp.ConsumeIntInRange(-(2**63), 2**63 - 1), crc=0, crc_valid=True, delete_horizon_ms=None,
        attributes=attributes, last_offset_delta=0)


def test_one_input(raw: bytes) -> None:
    if len(raw) < 4:
        return
    entry = raw[0] % 5
    fdp = atheris.FuzzedDataProvider(raw[1:])
    if entry in (0, 1, 3):  # walk / records / dump
        verify = fdp.ConsumeBool()
        max_bytes = fdp.ConsumeIntInRange(0, 1 << 16) if fdp.ConsumeBool() else None
        data = fdp.ConsumeBytes(fdp.remaining_bytes())
        pure = _everything(data, False, verify_crc=verify, max_bytes=max_bytes)
        fast = _everything(data, True, verify_crc=verify, max_bytes=max_bytes)
        if pure != fast:
            raise AssertionError(f"readers differ on {len(data)} bytes")
        if entry == 0 and data:
            if (_everything(data, False, name=ON_FILE, verify_crc=verify, max_bytes=max_bytes)
                    != _everything(data, True, name=ON_FILE, on_file=True, verify_crc=verify, max_bytes=max_bytes)):
                raise AssertionError(f"the chunked walk of the file differs on {len(data)} bytes")
        if entry == 3:
            _dump_lines(data, json=verify, print_data=max_bytes is None)
            _record_columns(data)
    elif entry == 2:  # decode
        batch = _header(fdp)
        body = fdp.ConsumeBytes(fdp.remaining_bytes())
        pure = PURE.decode_v2(body, 0, len(body), batch, Record, record_batch._control)
        fast = CORE.decode_v2(body, 0, len(body), batch, Record, record_batch._control)
        if pure != fast:
            raise AssertionError("decoders differ")
        if CORE.check_v2(body, 0, len(body), batch) != pure[1] or PURE.check_v2(body, 0, len(body), batch) != pure[1]:
            raise AssertionError("check_v2 differs from the decoder's problem")
        if pure[1] is not None:
            record_batch.record_problem_finding("fuzz.log", batch, pure[1])  # every problem has its message
    else:  # zeros + crc
        data = fdp.ConsumeBytes(fdp.remaining_bytes())
        stripped = len(data) - len(data.lstrip(b"\x00"))
        if CORE.first_nonzero(data, 0, len(data)) != stripped or PURE.first_nonzero(data, 0, len(data)) != stripped:
            raise AssertionError("first_nonzero differs")
        expected = crc32c_lib.crc32c(data)
        for path in CRC.CRC_PATHS:  # each path the CPU has (a missing one falls back to the next)
            CRC.force_crc(path)
            if CRC.crc32c(data) != expected:
                raise AssertionError(f"crc32c ({CRC.crc_implementation()}) differs")
            if len(data) > 4 and CRC.crc32c(data[3:], CRC.crc32c(data[:3])) != expected:
                raise AssertionError(f"crc32c ({CRC.crc_implementation()}) does not chain")


def _seed_corpus() -> str:
    folder = tempfile.mkdtemp(prefix="kforensics-fuzz-")
    seeds = sorted((ROOT / "sample_logs").rglob("*.log"))
    real = (ROOT.parent / "shared" / "realdata").resolve()
    if real.is_dir():
        seeds += sorted(p for p in real.rglob("*") if p.suffix in (".log", ".checkpoint", ".bin"))
    n = 0
    for path in seeds:
        data = path.read_bytes()[:MAX_SEED]
        if not data:
            continue
        for entry in (0, 1, 3):
            # entry byte, then verify_crc, then "no max_bytes" for the FuzzedDataProvider
            (Path(folder) / f"{n:05d}").write_bytes(bytes([entry]) + data)
            n += 1
        if len(data) > 61 and data[16] == 2:  # a batch's records section for the decoder
            size = min(len(data), 12 + struct.unpack_from(">i", data, 8)[0])
            (Path(folder) / f"{n:05d}").write_bytes(bytes([2]) + data[:61] + data[61:size])
            n += 1
    print(f"seed corpus: {n} inputs from {len(seeds)} files in {folder}", file=sys.stderr)
    return folder


def main() -> None:
    args = sys.argv[:]
    if not any(not a.startswith("-") for a in args[1:]):
        args.append(_seed_corpus())
    os.environ.setdefault("KFORENSICS_SERVER", "off")
    atheris.Setup(args, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
