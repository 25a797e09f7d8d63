"""`kforensics locate`: the coordinator partition of a group, transactional id or share-partition, and the disks
holding it.

No Spark: a hash and a few directory look-ups.
"""

from __future__ import annotations

import os
from typing import Any

import click

from kforensics.commands import options
from kforensics.defaults import DEFAULT_OFFSETS_TOPIC_PARTITIONS, DEFAULT_SHARE_STATE_PARTITIONS


def _holds(path: str, name: str) -> str | None:
    """The path of the `name` partition dir under log dir `path` (a local path or a pyarrow.fs URI), or None."""
    if "://" not in path:  # no pyarrow import for a local dir (most of the command's start-up)
        full = os.path.join(path, name)
        return full if os.path.isdir(full) else None
    import pyarrow.fs as pafs

    from kforensics.parsers.uris import filesystem, join_uri

    fs, root = filesystem(path)
    if fs.get_file_info(join_uri(root, name)).type == pafs.FileType.Directory:
        return join_uri(path, name)
    return None


def locate_ids(ids: list[tuple[str, str]], partitions: int, dirs: list[tuple[str, str]],
               share_partitions: int | None = None) -> list[dict[str, Any]]:
    """One row per (kind, id): kind, id, topic, partition, found ([{broker, path}] among `dirs`). A `share_group`
    id is the coordinator key "<group>:<topic id>:<partition>" and is placed among `share_partitions`."""
    from kforensics.parsers.coordinator_partition import TOPIC_OF, partition_for
    from kforensics.parsers.log_dir import partition_dir_name

    rows = []
    for kind, coordinator_id in ids:
        n = share_partitions if kind == "share_group" and share_partitions is not None else partitions
        topic, partition = TOPIC_OF[kind], partition_for(coordinator_id, n)
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
@click.option("--share-group", "share_groups", multiple=True, metavar="GROUP",
              help="A share group (KIP-932), with --topic-id and --partition: where its state of that topic partition "
                   "lives in __share_group_state (repeatable).")
@click.option("--topic-id", metavar="ID", help="The topic id of the share-partition (base64url as Kafka prints it, "
                                                "or a hex UUID).")
@click.option("--partition", "topic_partition", type=click.IntRange(min=0), metavar="N",
              help="The partition of the share-partition.")
@click.option("--share-state-partitions", type=click.IntRange(min=1), default=DEFAULT_SHARE_STATE_PARTITIONS,
              show_default=True, help="Partitions of __share_group_state (share.coordinator.state.topic.num.partitions).")
@click.option("--json", "as_json", is_flag=True, help="JSON lines, one per id.")
def locate(dirs: tuple[str, ...], groups: tuple[str, ...], transactional_ids: tuple[str, ...], partitions: int,
           share_groups: tuple[str, ...], topic_id: str | None, topic_partition: int | None,
           share_state_partitions: int, as_json: bool) -> None:
    """Which __consumer_offsets / __transaction_state / __share_group_state partition holds a group, a
    transactional id or a share group's state of one topic partition, and which of the log dirs DIR hold it.

    The partition is the broker's own: Utils.abs(id.hashCode()) % N, with Java's String.hashCode; a share
    group's id is the key "GROUP:TOPIC_ID:PARTITION" (SharePartitionKey). Groups are listed first, then
    transactional ids, then share groups, each in the order given.

    \b
    Exit codes: 0 done (found or not), 2 usage error or a DIR that cannot be read.
    \b
    Examples:
      kforensics locate --group payments-app
      kforensics locate --transactional-id tx-1 --partitions 50 b1=/data/kafka-1 b2=/data/kafka-2 --json
      kforensics locate --share-group sg1 --topic-id 3aJOBeUFT2i-2s4EZqlyqQ --partition 0 /data/kafka-1
    """
    if not groups and not transactional_ids and not share_groups:
        raise click.UsageError("name at least one --group, --transactional-id or --share-group")
    if share_groups and (topic_id is None or topic_partition is None):
        raise click.UsageError("--share-group needs --topic-id and --partition (the share-partition)")
    if not share_groups and (topic_id is not None or topic_partition is not None):
        raise click.UsageError("--topic-id and --partition go with --share-group")
    share_keys: list[str] = []
    if share_groups:
        from kforensics.parsers.coordinator_partition import share_coordinator_key

        try:
            share_keys = [share_coordinator_key(g, topic_id, topic_partition) for g in share_groups]  # type: ignore[arg-type]
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--topic-id") from exc
    inputs = options.inputs(dirs, files=False, uri_queries=True)
    ids = ([("group", g) for g in groups] + [("transactional_id", t) for t in transactional_ids]
           + [("share_group", k) for k in share_keys])
    try:
        rows = locate_ids(ids, partitions, inputs, share_state_partitions)
    except OSError as exc:
        raise click.ClickException(str(exc)) from exc
    from kforensics import render

    if as_json:
        render.json_lines(rows)
        return
    shown = [{**row, "found": render.cell_lines(f"{f['broker']}: {f['path']}" for f in row["found"])
              if row["found"] else ("-" if inputs else "")} for row in rows]
    render.table(shown, ("kind", "id", "topic", "partition", "found"), f"coordinator partitions (of {partitions})",
                 justify={"partition": "right"})
