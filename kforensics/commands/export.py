"""`kforensics export`: records out of broker disks as data (jsonl, Parquet, or a file kcat re-produces)."""

from __future__ import annotations

import os
import sys

import click

from kforensics.commands import options
from kforensics.parsers.log_dir import DIR_STATES


@click.command("export")
@click.argument("dirs", nargs=-1, metavar="[NAME=]DIR...")
@click.option("--topic", help="The topic to export.")
@click.option("--partition", type=click.IntRange(min=0), help="The partition (without it: every partition of the "
                                                               "topic, on Spark, as Parquet).")
@options.offsets("offsets")
@click.option("--from-time", metavar="T", help="Records with a timestamp at or after T (ms or ISO-8601, UTC).")
@click.option("--to-time", metavar="T", help="Records with a timestamp at or before T (ms or ISO-8601, UTC).")
@click.option("--broker", help="Only the input with this label (needed when several hold the partition).")
@click.option("--dir-state", type=click.Choice(DIR_STATES), default="live",
              show_default=True, help="Read Kafka's -delete, -future or -stray copy of the partition instead of its "
                                      "live dir (a -delete or -stray dir may hold the only copy).")
@click.option("--isolation", type=click.Choice(["read_uncommitted", "read_committed"]), default="read_uncommitted",
              show_default=True, help="read_committed leaves out aborted and open transactions as a consumer does.")
@click.option("--format", "fmt", type=click.Choice(["jsonl", "parquet", "kcat", "console-producer"]), default="jsonl",
              show_default=True)
@click.option("--out", required=True, metavar="PATH", help="The file to write (a folder for a whole topic).")
@click.option("--from-finding", metavar="OUT:N|OUT:KIND", help="Export what a finding of a scan's OUT names: its "
              "row N in the findings table (from 0), or the first finding of KIND (on --topic/--partition): "
              "the offsets a finding says were lost or would be discarded, from the dir that holds them, or a stray "
              "dir whole (docs/findings.md: the kinds whose reports name export).")
@click.option("--master", help="Spark master URL for a whole-topic export (default: embedded local[*]).")
def export(dirs: tuple[str, ...], topic: str | None, partition: int | None, offsets: tuple[int | None, int | None],
           from_time: str | None, to_time: str | None, broker: str | None, dir_state: str, isolation: str, fmt: str,
           out: str, from_finding: str | None, master: str | None) -> None:
    """Write the records of a partition (an offset or time range of it) as data.

    Every record with broker, topic, partition, offset, timestamp, timestamp_type, key, value, headers,
    producer_id, producer_epoch, sequence, leader_epoch, transaction (COMMIT, ABORT, OPEN or null), file,
    position. Control records are never exported. PATH is written under a temporary name and renamed when
    complete; an existing PATH is replaced only when it is an earlier kforensics export.

    \b
    Formats: jsonl and parquet keep every field; kcat and console-producer write a file that re-produces
    the records (the command is printed): kcat -P carries keys and values, kafka-console-producer (Kafka
    3.2+) keys, values and headers as UTF-8 text.

    \b
    Exit codes: 0 every selected record written, 1 some left out (a corrupt batch, or what the kcat or
    console-producer format cannot carry; listed on stderr), 2 usage error.
    \b
    Examples:
      kforensics export /data/kafka --topic orders --partition 0 --offsets 1200:1899 --out lost.jsonl
      kforensics export b1=/data/kafka --topic payments --partition 3 --isolation read_committed \\
          --format parquet --out payments-3.parquet
      kforensics export --from-finding ./kforensics-out:restart_would_truncate --format kcat --out save.kcat
      kforensics export /data/kafka --topic orders --partition 0 --format console-producer --out orders.txt
      kforensics export b1=/data/k1 b2=/data/k2 --topic orders --format parquet --out orders-all/
    """
    from kforensics import export as ex

    directory = None
    try:
        first, last = offsets
        if from_finding:
            scan_out, sep, ref = from_finding.rpartition(":")
            if not sep or not scan_out or not ref:
                raise ex.ExportError(f"--from-finding {from_finding!r} is not OUT:N or OUT:KIND")
            named = ex.finding_range(scan_out, ref, topic, partition)
            topic, partition, broker = named["topic"], named["partition"], named["broker"]
            first, last = named["offsets"]
            directory = named["dir"]
            dirs = dirs or tuple(f"{label}={path}" for label, path in named["inputs"])
        if not topic:
            raise ex.ExportError("--topic is required (or --from-finding)")
        if not dirs:
            raise ex.ExportError("no log dir given: [NAME=]DIR...")
        inputs = options.inputs(dirs, out, files=False)
        selection = ex.Selection(first, last, ex.parse_time(from_time), ex.parse_time(to_time), isolation)
        sources = ex.find_partitions(inputs, topic, partition, broker, dir_state=dir_state, path=directory)
        if not sources:
            what = "" if dir_state == "live" or directory else f" -{dir_state}"
            raise ex.ExportError(f"no {topic}-{partition if partition is not None else '*'}{what} partition dir in "
                                 "the inputs" + (f" of broker {broker}" if broker else "")
                                 + (f" at {directory}" if directory else ""))
        if partition is None:
            if fmt != "parquet":
                raise ex.ExportError("a whole topic is exported on Spark as Parquet: add --format parquet (or "
                                     "--partition)")
            ex.check_out_path(out, folder=True)
            from kforensics.spark.export import export_on_spark

            rows, skipped = export_on_spark(sources, selection, out, master=master)
            _report(rows, skipped, out)
            sys.exit(options.EXIT_FINDINGS if skipped else options.EXIT_OK)
        if len(sources) > 1:
            raise ex.ExportError(f"{topic}-{partition} has several dirs in the inputs ("
                                 f"{', '.join(f'{s.broker}: {s.path}' for s in sources)}): choose one with --broker")
        ex.check_out_path(out)
    except ex.ExportError as exc:
        raise click.BadParameter(str(exc)) from exc
    (source,) = sources
    reader = ex.PartitionReader(source.broker, source.topic, source.partition, list(source.segments))
    meta = {"inputs": [[b, p] for b, p in inputs], "topic": topic, "partition": partition, "broker": source.broker,
            "dir": source.path, "format": fmt, "isolation": isolation, "offsets": [first, last],
            "from_time": selection.from_time,
            "to_time": selection.to_time}
    writer = ex.Writer(out, fmt, meta)
    from kforensics import render

    show = sys.stderr.isatty()
    try:
        if show:
            bar, advance = render.byte_progress("exporting", sum(os.path.getsize(p) for p in source.segments))
            with bar:
                for row in reader.rows(selection, progress=advance):
                    writer.write(row)
        else:
            for row in reader.rows(selection):
                writer.write(row)
        writer.commit()
    except BaseException:
        writer.abort()
        raise
    skipped = [f"{s.file}:{s.position}: {s.reason}" for s in reader.skipped]
    skipped += [f"offset {offset}: {why}: use jsonl or parquet" for offset, why in writer.unframeable]
    if fmt == "kcat":
        if writer.headers_dropped:
            skipped.append(f"{writer.headers_dropped} records have headers, which kcat -P cannot produce per record "
                           "(use jsonl or parquet to keep them)")
        if writer.empty_to_null:
            skipped.append(f"{writer.empty_to_null} records have an empty (not null) key or value, which kcat -Z "
                           "produces as null")
    _report(writer.rows, skipped, out)
    if fmt == "kcat":
        render.echo(f"re-produce with: {ex.kcat_command(topic, partition, out)}", err=True)
    elif fmt == "console-producer":
        render.echo(f"re-produce with: {ex.console_producer_command(topic, out)}", err=True)
    sys.exit(options.EXIT_FINDINGS if skipped else options.EXIT_OK)


def _report(rows: int, skipped: list[str], out: str) -> None:
    from kforensics import render

    render.echo(f"{rows} records written to {out}", err=True)
    for line in skipped:
        render.echo(f"left out: {line}", err=True)
