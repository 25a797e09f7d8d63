"""`find --from-finding OUT:KIND|N`: the keys of the records a finding of a finished scan names, read from the
scan's own inputs (export's reader over the finding's span), to search for across every input."""

from __future__ import annotations

from typing import Any

from kforensics.find.query import FindError
from kforensics.kinds import KINDS

#: Findings that name records (their kind's `records`), each with the field of its details holding their [first,
#: last] offsets (None: every record of the partition dir the finding's `file` is in).
FINDABLE: dict[str, str | None] = {k.name: k.records or None for k in KINDS.values() if k.records is not None}


def finding_keys(ref: str) -> tuple[frozenset[bytes], dict[str, Any]]:
    """The keys (not null) of the records finding `OUT:N` or `OUT:KIND` names, and what the finding names (export's
    `finding_range`: broker, topic, partition, offsets, dir, the scan's inputs, kind)."""
    from kforensics.export import ExportError, PartitionReader, Selection, find_partitions, finding_range

    out, sep, which = ref.rpartition(":")
    if not sep or not out or not which:
        raise FindError(f"--from-finding {ref!r} is not OUT:N or OUT:KIND")
    try:
        named = finding_range(out, which, None, None, FINDABLE)
        inputs = [(label, path) for label, path in named["inputs"]]
        sources = find_partitions(inputs, named["topic"], named["partition"], named["broker"], path=named["dir"])
    except ExportError as exc:
        raise FindError(str(exc)) from exc
    if not sources:
        raise FindError(f"the partition dir of finding {which!r} ({named['topic']}-{named['partition']} on "
                        f"{named['broker']}) is not in the scan's inputs any more")
    first, last = named["offsets"]
    keys: set[bytes] = set()
    for source in sources[:1]:
        reader = PartitionReader(source.broker, source.topic, source.partition, list(source.segments))
        keys.update(row["key"] for row in reader.rows(Selection(first, last)) if row["key"] is not None)
    if not keys:
        span = "every record" if first is None else f"offsets {first}-{last}"
        raise FindError(f"the records finding {which!r} names ({named['topic']}-{named['partition']} on "
                        f"{named['broker']}, {span}) have no key to search for")
    return frozenset(keys), named
