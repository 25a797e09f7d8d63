"""Scan every sample and real data set, and compare two such runs table by table (a script, not a test).

A restructuring of the pipeline promises "no output changes": every table of every scan, schema and rows, stays the
same. This script makes that promise checkable:

    python benchmarks/compare_scans.py scan  DIR     # scan every set below into DIR/<set>/ (one Spark session)
    python benchmarks/compare_scans.py diff  A B     # compare every table of A and B: schema, then rows

The sets: the sample brokers (full and headers-only), the KRaft samples (both modes), the compacted, exactly-once and
groups samples, the incident cluster (both modes), and each data set of ../shared/realdata scanned as one cluster
(all its log dirs together, each dir labelled by its folder name). Rows are compared as sorted lists of tuples (a table's row order is not a contract,
but the findings table's order is compared as written). `--only NAME` (repeatable) scans only the sets named.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "sample_logs"
REALDATA = (REPO.parent / "shared" / "realdata").resolve()


def scan_sets() -> dict[str, tuple[list[tuple[str, str]], bool]]:
    """name -> (inputs, headers_only)."""
    sets: dict[str, tuple[list[tuple[str, str]], bool]] = {}
    brokers = [(b, str(SAMPLE / b)) for b in ("broker-1", "broker-2", "broker-3")]
    kraft = [(f"kraft-{i}", str(SAMPLE / f"kraft-{i}")) for i in (1, 2, 3)]
    sets["sample-full"] = (brokers, False)
    sets["sample-headers"] = (brokers, True)
    sets["kraft-full"] = (kraft, False)
    sets["kraft-headers"] = (kraft, True)
    sets["compacted"] = ([("compacted-1", str(SAMPLE / "compacted-1"))], False)
    sets["eos"] = ([(b, str(SAMPLE / b)) for b in ("eos-1", "eos-2")], False)
    sets["groups"] = ([("groups-1", str(SAMPLE / "groups-1"))], False)
    incident = [(f"incident-{i}", str(SAMPLE / f"incident-{i}")) for i in (1, 2, 3)]
    sets["incident-full"] = (incident, False)
    sets["incident-headers"] = (incident, True)
    for extra in sorted(SAMPLE.iterdir()):  # samples added later (a sample dir holds meta.properties)
        if extra.is_dir() and (extra / "meta.properties").exists() and not any(
                extra.name in {label for label, _ in inputs} for inputs, _ in sets.values()):
            sets[f"sample-{extra.name}"] = ([(extra.name, str(extra))], False)
    if REALDATA.is_dir():
        for data_set in sorted(p for p in REALDATA.iterdir() if p.is_dir()):
            dirs = sorted(p.parent for p in data_set.rglob("meta.properties"))
            if dirs:
                labels = [d.name if len(dirs) > 1 else data_set.name for d in dirs]
                sets[f"real-{data_set.name}"] = (list(zip(labels, map(str, dirs), strict=True)), False)
    return sets


def scan(target: Path, only: list[str]) -> None:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from kforensics.spark.jobs import run_scan
    from kforensics.spark.session import build_session

    spark = build_session("local[2]", "kforensics-compare", **{"spark.sql.shuffle.partitions": "4"})
    target.mkdir(parents=True, exist_ok=True)
    times = {}
    for name, (inputs, headers_only) in scan_sets().items():
        if only and name not in only:
            continue
        started = time.perf_counter()
        run_scan(spark, inputs, str(target / name), headers_only=headers_only)
        times[name] = round(time.perf_counter() - started, 1)
        print(f"{name}: {times[name]} s", file=sys.stderr)
    (target / "times.json").write_text(json.dumps(times, indent=1))
    spark.stop()


_SAMPLE_PATH = re.compile(r"(?:file://)?/[^\"\s,]*?/sample_logs/")


def _rows(path: Path) -> tuple[str, list[tuple]]:
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    schema = ", ".join(f"{f.name} {f.type}" for f in table.schema)
    # the sample disks' paths name the checkout they were scanned from: two checkouts compare equal
    rows = [tuple(_SAMPLE_PATH.sub("<repo>/sample_logs/", json.dumps(v, sort_keys=True, default=str))
                  for v in row.values()) for row in table.to_pylist()]
    return schema, rows


def diff(a: Path, b: Path) -> int:
    differences = 0
    compared = 0
    for set_dir in sorted(p for p in a.iterdir() if p.is_dir()):
        other = b / set_dir.name
        if not other.is_dir():
            print(f"{set_dir.name}: only in {a}")
            differences += 1
            continue
        tables = sorted(p.name for p in set_dir.iterdir() if p.is_dir())
        other_tables = sorted(p.name for p in other.iterdir() if p.is_dir())
        for name in sorted(set(tables) ^ set(other_tables)):
            print(f"{set_dir.name}/{name}: only in {a if name in tables else b}")
            differences += 1
        for name in sorted(set(tables) & set(other_tables)):
            compared += 1
            schema_a, rows_a = _rows(set_dir / name)
            schema_b, rows_b = _rows(other / name)
            if schema_a != schema_b:
                print(f"{set_dir.name}/{name}: schema differs\n  {schema_a}\n  {schema_b}")
                differences += 1
                continue
            if name != "findings":
                rows_a, rows_b = sorted(rows_a), sorted(rows_b)
            if rows_a != rows_b:
                only_a = [r for r in rows_a if r not in set(rows_b)][:3]
                only_b = [r for r in rows_b if r not in set(rows_a)][:3]
                print(f"{set_dir.name}/{name}: rows differ ({len(rows_a)} vs {len(rows_b)})")
                for r in only_a:
                    print(f"  - {r}")
                for r in only_b:
                    print(f"  + {r}")
                differences += 1
    print(f"{compared} tables compared, {differences} differ")
    return 1 if differences else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("scan")
    s.add_argument("target", type=Path)
    s.add_argument("--only", action="append", default=[])
    d = sub.add_parser("diff")
    d.add_argument("a", type=Path)
    d.add_argument("b", type=Path)
    sub.add_parser("list")
    args = parser.parse_args()
    if args.command == "scan":
        scan(args.target, args.only)
        return 0
    if args.command == "list":
        for name, (inputs, headers_only) in scan_sets().items():
            print(name, "headers-only" if headers_only else "full", " ".join(f"{k}={v}" for k, v in inputs))
        return 0
    return diff(args.a, args.b)


if __name__ == "__main__":
    raise SystemExit(main())
