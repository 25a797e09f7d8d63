"""Transactions, the last stable offset (LSO) and aborted ranges.

A producer's transaction runs from its first transactional data batch after its previous marker to
its COMMIT or ABORT marker; a marker with nothing open is an empty transaction (listed, not flagged).
LSO = min(first offset of every open transaction, high watermark). For an ABORT, the .txnindex
records the LSO at marker time: the first offset of the earliest *other* open transaction, else the
marker offset + 1.
"""

from __future__ import annotations

import heapq

import pandas as pd
from pyspark.sql import DataFrame

from kforensics.spark.findings import KEY
from kforensics.spark.registry import python_model

PRODUCER = [*KEY, "producer_id"]


SWEEP_SCHEMA = ("row_kind string, broker string, topic string, partition int, offset long, "
                "last_stable_offset long, producer_id long, first_offset long, last_offset long")


def _sweep(txns: pd.DataFrame) -> pd.DataFrame:
    """One partition's transactions -> LSO change points and aborted ranges (a heap sweep in offset order).

    A window function cannot express "the smallest first offset among transactions still open", so this
    runs per partition over its transactions (not its batches) with applyInPandas.
    """
    key = txns.iloc[0][["broker", "topic", "partition"]].tolist()
    events: list[tuple[int, int, int, int, str]] = []  # (offset, order, first_offset, producer_id, outcome)
    out: list[list] = []
    for row in txns.itertuples(index=False):
        if pd.isna(row.marker_offset):
            if pd.notna(row.first_offset) and row.outcome == "OPEN":  # not one complete without its marker
                events.append((int(row.first_offset), 0, int(row.first_offset), int(row.producer_id), "start"))
        elif pd.notna(row.first_offset):
            events.append((int(row.first_offset), 0, int(row.first_offset), int(row.producer_id), "start"))
            events.append((int(row.marker_offset), 1, int(row.first_offset), int(row.producer_id), row.outcome))
        elif row.outcome == "ABORT":
            # an ABORT whose data the log cleaner removed (its .txnindex entry stays, CleanedTransactionMetadata), or
            # an empty transaction (no entry, ProducerAppendInfo.appendEndTxnMarker): its range and LSO are the index's
            marker = int(row.marker_offset)
            out.append(["aborted", *key, marker, None, int(row.producer_id), None, marker])
    events.sort()
    open_heap: list[tuple[int, int]] = []
    closed: set[tuple[int, int]] = set()
    current: int | None = None  # first offset of the transaction holding the LSO, None: LSO follows the log end
    for offset, order, first, pid, what in events:
        if order == 0:
            heapq.heappush(open_heap, (first, pid))
        else:
            closed.add((first, pid))
            while open_heap and open_heap[0] in closed:
                heapq.heappop(open_heap)
            if what == "ABORT":
                lso = open_heap[0][0] if open_heap else offset + 1
                out.append(["aborted", *key, offset, lso, pid, first, offset])
        holder = open_heap[0] if open_heap else None
        holder_first = holder[0] if holder else None
        if holder_first != current:
            lso = holder_first if holder is not None else offset + 1
            out.append(["change", *key, offset, lso, holder[1] if holder else None, holder_first, None])
            current = holder_first
    return pd.DataFrame(out, columns=["row_kind", "broker", "topic", "partition", "offset", "last_stable_offset",
                                      "producer_id", "first_offset", "last_offset"])


@python_model("lso_sweep", inputs=("log_transactions",), columns=SWEEP_SCHEMA, keep=True,
              doc="Per partition, the offsets where its LSO moves (`change`: the new value and the producer holding "
                  "it) and its aborted transactions (`aborted`: an ABORT's range and the LSO the broker records for "
                  "it in the .txnindex): a heap sweep over the partition's transactions in offset order.")
def lso_sweep(log_transactions: DataFrame) -> DataFrame:
    """log_transactions -> rows of SWEEP_SCHEMA (row_kind `change` or `aborted`)."""
    cols = [*PRODUCER, "first_offset", "marker_offset", "outcome"]
    return log_transactions.select(*cols).groupBy(*KEY).applyInPandas(_sweep, SWEEP_SCHEMA)
