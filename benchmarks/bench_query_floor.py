"""The least Spark can spend on a small scan's analysis on this machine (a script, not a test).

A scan of the two sample brokers runs its parse pass (the input tables written to OUT), then ~28 finding checks and
~16 facts tables over those small tables. This replaces the analysis with N copies (default 28) of one stand-in
check, smaller than any real check that joins tables (a window over the batches, two aggregates, an inner and a
left join, a filter and a formatted message), and times it in the forms Spark offers:

  dataframe, separate   each check built with the DataFrame API and collected as its own job, from 4 threads
  dataframe, one query  the N checks built the same way, unioned, collected as one job
  sql, separate         each check as SQL text over temp views, its own job, from 4 threads
  sql, one query        the N checks as one SQL union, one job

Each run is in a fresh process, with the small-input settings a scan of the sample applies:

  bare       the embedded session started plus one trivial job (issue 26's yardstick)
  one-shot   a fresh session: the parse pass of the two sample brokers (full mode, input tables written, no
             analysis), then the N stand-in checks as one SQL query: what a one-shot scan would cost if its whole
             analysis were that one query
  warm       one session: a full scan first (warm-up), then best of --repeat of: the full scan, the parse pass alone,
             and the four forms above

and prints the budget issue 26's targets leave the analysis (one-shot <= 2.5x bare, through a warm server <= 0.6x
bare) next to what the stand-in checks cost.

    python benchmarks/bench_query_floor.py [--checks 28] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SAMPLE = Path(__file__).resolve().parent.parent / "sample_logs"
INPUTS = [(b, str(SAMPLE / b)) for b in ("broker-1", "broker-2")]
KEY = "broker, topic, partition"

#: The stand-in check, as SQL over the temp views `batches`, `leader_epochs` and `partition_checkpoints`; `{i}` makes
#: each copy a plan of its own (nothing to reuse between them).
CHECK_SQL = f"""
with b as (
  select {KEY}, base_offset, base_sequence, partition_leader_epoch,
         lag(last_sequence) over (partition by {KEY}, producer_id order by base_offset) as previous_sequence
  from batches where producer_id >= 0),
e as (select {KEY}, max(epoch) as max_epoch, count(*) as entries from leader_epochs group by {KEY}),
c as (select {KEY}, max(high_watermark) as high_watermark from partition_checkpoints group by {KEY})
select b.broker, b.topic, b.partition, b.base_offset as offset, 'stand_in_{{i}}' as kind,
       format_string('sequence %d after %d (high watermark %d)', b.base_sequence, b.previous_sequence,
                     c.high_watermark) as message
from b join e using ({KEY}) left join c using ({KEY})
where (b.previous_sequence is not null and b.base_sequence <> try_add(b.previous_sequence, {{i}}))
   or e.max_epoch < b.partition_leader_epoch
"""


def _check_df(tables: dict, i: int):  # noqa: ANN001, ANN202 (pyspark is imported in the child only)
    """The stand-in check with the DataFrame API (the same plan as CHECK_SQL)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    key = ["broker", "topic", "partition"]
    b = (tables["batches"].filter(F.col("producer_id") >= 0)
         .select(*key, "base_offset", "base_sequence", "partition_leader_epoch", "producer_id", "last_sequence")
         .withColumn("previous_sequence", F.lag("last_sequence").over(
             Window.partitionBy(*key, "producer_id").orderBy("base_offset"))))
    e = tables["leader_epochs"].groupBy(*key).agg(F.max("epoch").alias("max_epoch"), F.count(F.lit(1)).alias("entries"))
    c = tables["partition_checkpoints"].groupBy(*key).agg(F.max("high_watermark").alias("high_watermark"))
    joined = b.join(e, key).join(c, key, "left")
    wrong = ((F.col("previous_sequence").isNotNull()
              & (F.col("base_sequence") != F.try_add(F.col("previous_sequence"), F.lit(i))))
             | (F.col("max_epoch") < F.col("partition_leader_epoch")))
    return joined.filter(wrong).select(
        *key, F.col("base_offset").alias("offset"), F.lit(f"stand_in_{i}").alias("kind"),
        F.format_string("sequence %d after %d (high watermark %d)", "base_sequence", "previous_sequence",
                        "high_watermark").alias("message"))


def _forms(spark, tables: dict, n: int) -> dict:  # noqa: ANN001
    """The four forms: name -> a function that runs the N checks and returns the rows they found."""
    from concurrent.futures import ThreadPoolExecutor
    from functools import reduce

    def threads(run) -> int:  # noqa: ANN001
        with ThreadPoolExecutor(4) as pool:
            return sum(pool.map(run, range(n)))

    return {
        "dataframe, separate": lambda: threads(lambda i: _check_df(tables, i).toArrow().num_rows),
        "dataframe, one query": lambda: reduce(lambda x, y: x.unionByName(y),
                                               [_check_df(tables, i) for i in range(n)]).toArrow().num_rows,
        "sql, separate": lambda: threads(lambda i: spark.sql(CHECK_SQL.format(i=i)).toArrow().num_rows),
        "sql, one query": lambda: spark.sql(" union all ".join(f"({CHECK_SQL.format(i=i)})" for i in range(n)))
        .toArrow().num_rows,
    }


def _input_tables(spark, out: str) -> dict:  # noqa: ANN001
    """The parse pass's tables the stand-in reads, from OUT, also as temp views."""
    tables = {name: spark.read.parquet(f"{out}/{name}").filter("dir_state = 'live'")
              for name in ("batches", "leader_epochs")}
    tables["partition_checkpoints"] = spark.read.parquet(f"{out}/partition_checkpoints")
    for name, df in tables.items():
        df.createOrReplaceTempView(name)
    return tables


def _parse_pass(spark, out: str) -> None:  # noqa: ANN001
    """`run_scan` of the two sample brokers, full mode, with the analysis switched off (bench_scan.py's floor)."""
    from bench_scan import write_inputs  # this script's folder is on sys.path

    write_inputs(spark, INPUTS, out, headers_only=False)


def child(mode: str, n: int, repeat: int) -> dict:
    t0 = time.perf_counter()
    from kforensics.spark.jobs import run_scan
    from kforensics.spark.session import SMALL_INPUT_SETTINGS, build_session

    scratch = tempfile.mkdtemp(prefix="kforensics-floor-")
    spark = build_session(None)
    spark.range(1).count()
    result = {"session_s": time.perf_counter() - t0}
    if mode == "bare":
        return result
    for key, value in SMALL_INPUT_SETTINGS.items():  # as run_scan applies them to a small input's analysis
        spark.conf.set(key, value)
    if mode == "one-shot":
        t = time.perf_counter()
        _parse_pass(spark, f"{scratch}/out")
        result["parse_s"] = time.perf_counter() - t
        for key, value in SMALL_INPUT_SETTINGS.items():  # run_scan restored the session's own
            spark.conf.set(key, value)
        t = time.perf_counter()
        tables = _input_tables(spark, f"{scratch}/out")
        result["rows"] = _forms(spark, tables, n)["sql, one query"]()
        result["checks_s"] = time.perf_counter() - t
        result["total_s"] = time.perf_counter() - t0
        return result
    run_scan(spark, INPUTS, f"{scratch}/warm-up")

    def best(run) -> float:  # noqa: ANN001
        times = []
        for _ in range(repeat):
            t = time.perf_counter()
            run()
            times.append(time.perf_counter() - t)
        return min(times)

    result["scan_s"] = best(lambda: run_scan(spark, INPUTS, tempfile.mkdtemp(dir=scratch) + "/out"))
    result["parse_s"] = best(lambda: _parse_pass(spark, tempfile.mkdtemp(dir=scratch) + "/out"))
    for key, value in SMALL_INPUT_SETTINGS.items():
        spark.conf.set(key, value)
    tables = _input_tables(spark, f"{scratch}/warm-up")
    forms = _forms(spark, tables, n)
    for name, run in forms.items():
        run()  # each form's classes loaded and compiled once
        result[name] = best(run)
    return result


def _run(mode: str, n: int, repeat: int) -> dict:
    env = {**os.environ}
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    proc = subprocess.run([sys.executable, __file__, "--child", mode, "--checks", str(n), "--repeat", str(repeat)],
                          env=env, capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"{mode} failed (exit {proc.returncode}): {proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checks", type=int, default=28, help="stand-in checks (a scan of the sample runs 28)")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs (bare: of this many starts)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.checks, args.repeat)))
        return
    n = args.checks
    bare = min(_run("bare", n, 1)["session_s"] for _ in range(args.repeat))
    one_shot = _run("one-shot", n, 1)
    warm = _run("warm", n, args.repeat)
    rows = [
        ("bare session (start + one trivial job)", bare),
        ("one-shot: session + parse pass + the stand-in checks as one SQL query", one_shot["total_s"]),
        ("  of which the parse pass (input tables written)", one_shot["parse_s"]),
        ("  of which the stand-in checks, cold", one_shot["checks_s"]),
        ("warm: the full scan", warm["scan_s"]),
        ("warm: the parse pass alone", warm["parse_s"]),
        *((f"warm: {n} stand-in checks, {name}", warm[name]) for name in _forms(None, {}, n)),
    ]
    print(f"| {n} stand-in checks, two sample brokers | seconds | x bare |")
    print("|---|---|---|")
    for label, seconds in rows:
        print(f"| {label} | {seconds:.2f} | {seconds / bare:.2f}x |")
    best_warm = min(warm[name] for name in _forms(None, {}, n))
    print(f"\none-shot target 2.5x bare = {2.5 * bare:.1f} s; the parse pass and the stand-in checks as one query "
          f"already take {one_shot['total_s']:.1f} s ({one_shot['total_s'] / bare:.2f}x).")
    print(f"server target 0.6x bare = {0.6 * bare:.1f} s; the warm parse pass takes {warm['parse_s']:.1f} s, leaving "
          f"{0.6 * bare - warm['parse_s']:.1f} s for the analysis; {n} stand-in checks take {best_warm:.1f} s at best.")


if __name__ == "__main__":
    main()
