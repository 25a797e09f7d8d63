"""`kforensics locate`: the coordinator partition of a group or transactional id, and the disks holding it.

No Spark: a hash and a few directory look-ups.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import click

from kforensics.commands import options
from kforensics.defaults import DEFAULT_OFFSETS_TOPIC_PARTITIONS


def _holds(path: str, name: str) -> str | None:
    """The path of the `name` partition dir under log dir `path` (a local path or a pyarrow.fs URI), or None."""
    if "://" not in path:
        full = os.path.join(path, name)
        return full if os.path.isdir(full) else None
    import pyarrow.fs as pafs

    from kforensics.parsers.uris import join_uri

    fs, root = pafs.FileSystem.from_uri(path)
    if fs.get_file_info(join_uri(root, name)).type == pafs.FileType.Directory:
        return join_uri(path, name)
    return None


def locate_ids(ids: list[tuple[str, str]], partitions: int, dirs: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """One row per (kind, id): kind, id, topic, partition, found ([{broker, path}] among `dirs`)."""
    from kforensics.parsers.coordinator_partition import TOPIC_OF, partition_for
    from kforensics.parsers.log_dir import partition_dir_name

    rows = []
    for kind, coordinator_id in ids:
        topic, partition = TOPIC_OF[kind], partition_for(coordinator_id, partitions)
        found = []
        for broker, path in dirs:
            held = _holds(path, partition_dir_name(topic, partition))
            if held is not None:
                found.append({"broker": broker, "path": held})
        rows.append({"kind": kind, "id": coordinator_id, "topic": topic, "partition": partition, "found": found})
    return rows


@click.command("locate")
@click.argument("dirs", nargs=-1, metavar="[[NAME=]DIR...]")
@click.option("--group", "groups", multiple=True, metavar="ID", help="A consumer group id (repeatable).")
@click.option("--transactional-id", "transactional_ids", multiple=True, metavar="ID",
              help="A producer's transactional.id (repeatable).")
@click.option("--partitions", type=click.IntRange(min=1), default=DEFAULT_OFFSETS_TOPIC_PARTITIONS, show_default=True,
              help="Partitions of the internal topic (offsets.topic.num.partitions / "
                   "transaction.state.log.num.partitions).")
@click.option("--json", "as_json", is_flag=True, help="JSON lines, one per id.")
def locate(dirs: tuple[str, ...], groups: tuple[str, ...], transactional_ids: tuple[str, ...], partitions: int,
           as_json: bool) -> None:
    """Which __consumer_offsets / __transaction_state partition holds a group or transactional id, and which
    of the log dirs DIR hold that partition.

    The partition is the broker's own: Utils.abs(id.hashCode()) % N, with Java's String.hashCode.
    Groups are listed first, then transactional ids, each in the order given.

    \b
    Exit codes: 0 done (found or not), 2 usage error or a DIR that cannot be read.
    \b
    Examples:
      kforensics locate --group payments-app
      kforensics locate --transactional-id tx-1 --partitions 50 b1=/data/kafka-1 b2=/data/kafka-2 --json
    """
    if not groups and not transactional_ids:
        raise click.UsageError("name at least one --group or --transactional-id")
    inputs = options.inputs(dirs, files=False, uri_queries=True)
    ids = [("group", g) for g in groups] + [("transactional_id", t) for t in transactional_ids]
    try:
        rows = locate_ids(ids, partitions, inputs)
    except OSError as exc:
        raise click.ClickException(str(exc)) from exc
    if as_json:
        for row in rows:
            sys.stdout.write(json.dumps(row, ensure_ascii=False) + "\n")
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"coordinator partitions (of {partitions})")
    for column in ("kind", "id", "topic", "partition", "found"):
        table.add_column(column, overflow="fold", justify="right" if column == "partition" else "left")
    for row in rows:
        found = "\n".join(f"{f['broker']}: {f['path']}" for f in row["found"]) or ("-" if inputs else "")
        table.add_row(row["kind"], row["id"], row["topic"], str(row["partition"]), found)
    Console(width=None if sys.stdout.isatty() else 200).print(table)
