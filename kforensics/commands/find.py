"""`kforensics find`: every copy of a record on the disks (by key, header, value or time), and what became of it."""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any

import click

from kforensics.commands import options

#: The terminal table shows at most this many copies (memory stays bounded; --json and --out carry them all).
TABLE_LIMIT = 1000
#: The terminal table's columns (the JSON lines carry every field).
TABLE_COLUMNS = ("broker", "dir_state", "partition", "offset", "timestamp", "key", "value", "headers", "producer",
                 "transaction", "superseded_at", "file")


@click.command("find")
@click.argument("dirs", nargs=-1, metavar="[NAME=]DIR...")
@click.option("--key", metavar="TEXT", help="Records with this key (its UTF-8 bytes).")
@click.option("--key-hex", metavar="HEX", help="Records with this key, in hex (a key that is not text).")
@click.option("--header", metavar="NAME[=VALUE]", help="Records with a header of this name (and this value, as UTF-8; "
                                                       "without =VALUE: any value, null too).")
@click.option("--value-contains", metavar="TEXT", help="Records whose value holds these bytes (UTF-8).")
@click.option("--topic", metavar="T", help="Only topics matching this glob (other partition dirs are not read).")
@click.option("--from-time", metavar="T", help="Records with a timestamp at or after T (ms or ISO-8601, UTC).")
@click.option("--to-time", metavar="T", help="Records with a timestamp at or before T (ms or ISO-8601, UTC).")
@click.option("--from-finding", metavar="OUT:KIND|OUT:N", help="Look for the keys of the records a finding of a "
              "scan's OUT names (its row N in the findings table, from 0, or the first finding of KIND): a kind that "
              "names records (docs/findings.md: re-sent records, a lost range, what a restart discards, a stray "
              "dir's records). Without DIRs, the scan's inputs are searched.")
@click.option("--values", is_flag=True, help="Hand out each copy's value too (else its size only).")
@click.option("--json", "as_json", is_flag=True, help="JSON lines: one per copy, then one per finding.")
@click.option("--out", metavar="FILE.parquet", help="Also write the copies as Parquet (replaced only when it is an "
                                                     "earlier kforensics output).")
@click.option("--master", help="Spark master URL (default: this process for a small local input, else embedded "
                               "local[*]).")
@options.spark_conf("A Spark property for a search on Spark, as spark-submit's --conf (repeatable).")
@options.verbose("a file of kforensics' log dir")
def find(dirs: tuple[str, ...], key: str | None, key_hex: str | None, header: str | None,
         value_contains: str | None, topic: str | None, from_time: str | None, to_time: str | None,
         from_finding: str | None, values: bool, as_json: bool, out: str | None, master: str | None,
         spark_conf: dict[str, str], verbose: bool) -> None:
    """Find every copy of a record on the disks, and what became of it.

    Searches every partition dir of the inputs, live and Kafka's -delete, -future and -stray dirs, in every codec
    and in legacy message sets. Each copy with broker, topic, partition, offset, timestamp, key, headers, producer,
    its dir_state, `transaction` (COMMIT, ABORT or OPEN by its producer's marker in that partition dir, as a
    read_committed consumer judges it; null when not transactional) and `superseded_at` (the offset of the next
    record with the same key there, a tombstone too; null for the newest). Every selector given must hold.
    Damaged batches are reported as the scan reports them, and the search goes on.

    \b
    Exit codes: 0 something matched, 1 nothing did, 2 usage error.
    \b
    Examples:
      kforensics find b1=/data/kafka-1 b2=/data/kafka-2 --key A-1042
      kforensics find /data/kafka --topic 'orders*' --header trace-id=7f3a --json
      kforensics find /data/kafka --value-contains '"amount": 1042' --from-time 2025-11-20T10:00:00Z
      kforensics find --from-finding ./kforensics-out:0 --json > copies.jsonl
    """
    from kforensics.export import ExportError, check_out_path, parse_time
    from kforensics.find.query import FindError, Query, parse_header, parse_key_hex

    named = None
    try:
        keys: set[bytes] = set()
        if key is not None:
            keys.add(key.encode("utf-8", "surrogateescape"))
        if key_hex is not None:
            keys.add(parse_key_hex(key_hex))
        if len(keys) > 1:
            raise FindError("--key and --key-hex name two different keys: a record has one")
        if from_finding is not None:
            if keys:
                raise FindError("--from-finding gives the keys to look for: leave out --key and --key-hex")
            from kforensics.find.from_finding import finding_keys

            keys, named = finding_keys(from_finding)  # type: ignore[assignment]
            dirs = dirs or tuple(f"{label}={path}" for label, path in named["inputs"])
        header_name, header_value = parse_header(header) if header is not None else (None, None)
        query = Query(frozenset(keys) if keys else None, header_name, header_value,
                      None if value_contains is None else value_contains.encode("utf-8", "surrogateescape"),
                      parse_time(from_time), parse_time(to_time), topic, values)
        if not dirs:
            raise FindError("no log dir given: [NAME=]DIR...")
        inputs = options.inputs(dirs, out, files=False)
        if out is not None:
            check_out_path(out)
        from kforensics.find.sources import partition_dirs

        tasks, listing_findings = partition_dirs(inputs, query)
    except (FindError, ExportError) as exc:
        raise click.BadParameter(str(exc)) from exc
    _run(tasks, listing_findings, query, inputs, named, as_json=as_json, out=out, master=master,
         spark_conf=spark_conf, verbose=verbose)


def _run(tasks: list[Any], findings: list[Any], query: Any, inputs: list[tuple[str, str]], named: Any, *,
         as_json: bool, out: str | None, master: str | None, spark_conf: dict[str, str], verbose: bool) -> None:
    from kforensics import render
    from kforensics.find.output import SCHEMA, copy_line
    from kforensics.find.run import on_spark, search
    from kforensics.find.search import FoundFinding
    from kforensics.find.sources import input_bytes

    writer = None
    if out is not None:
        from kforensics.export import Writer

        meta = {"command": "find", "inputs": [[b, p] for b, p in inputs], "query": query.describe(),
                "from_finding": None if named is None else {k: named[k] for k in ("kind", "broker", "topic",
                                                                                   "partition", "offsets")}}
        writer = Writer(out, "parquet", meta, schema=SCHEMA)
    copies: list[dict[str, Any]] = []
    count = 0
    show = sys.stderr.isatty() and not on_spark(tasks, master)
    found = list(findings)
    try:
        bar, advance = (render.byte_progress("searching", input_bytes(tasks) or 0) if show
                        else (contextlib.nullcontext(), None))
        with bar:
            for item in search(tasks, query, master=master, spark_conf=spark_conf, verbose=verbose,
                               progress=advance):
                if isinstance(item, FoundFinding):
                    found.append(item)
                    continue
                count += 1
                if writer is not None:
                    writer.write(item)
                if as_json:
                    sys.stdout.write(render.json_line(copy_line(item)) + "\n")
                elif len(copies) < TABLE_LIMIT:
                    copies.append(item)
        if writer is not None:
            writer.commit()
    except BaseException:
        if writer is not None:
            writer.abort()
        raise
    if as_json:
        render.json_lines(f.line for f in found)
    else:
        _table(copies, query)
        if count > len(copies):
            render.echo(f"the table shows the first {len(copies)} of {count} copies: --json or --out has them all",
                        err=True)
        problems = [f.line for f in found]
        if problems:
            render.table(problems, render.FINDINGS_TABLE_COLUMNS, "what the search met", style={"severity": "bold red"})
    what = (f"{count} {'copy' if count == 1 else 'copies'} in {len(tasks)} partition "
            f"{'dir' if len(tasks) == 1 else 'dirs'} searched")
    render.echo(what + (f"; written to {out}" if out is not None else ""), err=True)
    sys.exit(options.EXIT_OK if count else options.EXIT_FINDINGS)


def _bytes_cell(data: bytes | None) -> str | None:
    """A key or value on the terminal: its text where it is UTF-8 (escaped as every string is), else 0x + hex."""
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return "0x" + data.hex()


def _table(rows: list[dict[str, Any]], query: Any) -> None:
    from kforensics import render
    from kforensics.times import iso

    shown = []
    for r in rows:
        value = _bytes_cell(r["value"]) if "value" in r else None
        shown.append({
            "broker": r["broker"], "dir_state": r["dir_state"], "partition": f"{r['topic']}-{r['partition']}",
            "offset": r["offset"], "timestamp": iso(r["timestamp"]),
            "key": _bytes_cell(r["key"]) if r["key"] is not None else "null",
            "value": (("null" if r["value_size"] is None else value) if "value" in r
                      else ("null" if r["value_size"] is None else f"{r['value_size']} bytes")),
            "headers": render.cell_lines(f"{h['key']}={_bytes_cell(h['value']) if h['value'] is not None else 'null'}"
                                         for h in r["headers"]) if r["headers"] else None,
            "producer": None if r["producer_id"] is None or r["producer_id"] < 0
            else f"{r['producer_id']}/{r['producer_epoch']}",
            "transaction": r["transaction"], "superseded_at": r["superseded_at"],
            "file": f"{os.path.basename(r['file'])}:{r['position']}"})
    render.table(shown, TABLE_COLUMNS, f"copies of {query.describe()}",
                 justify={"offset": "right", "superseded_at": "right"})
