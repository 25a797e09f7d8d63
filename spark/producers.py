"""Re-sends by a new producer id (a content duplicate): the two Python models of the check, the records of the
batches it compares (decoded on the executors) and the match of a new producer id's first records against the last
records of the producer ids before it (an ordered comparison per producer id, in `applyInPandas`). The rest of the
check is SQL: spark/sql/resend_*.sql, producer_spans.sql and the check that reads `resends`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import pandas as pd
from pyspark.sql import DataFrame

from kforensics.spark import schemas as S
from kforensics.spark.findings import KEY
from kforensics.spark.read import batch_record_rows
from kforensics.spark.registry import python_model

PRODUCER = [*KEY, "producer_id"]

RESEND_SCHEMA = ("broker string, topic string, partition int, pid_a long, pid_b long, producer_epoch int, "
                 "matches long, a_first_offset long, a_last_offset long, b_first_offset long, b_last_offset long, "
                 "ms_between long")


def longest_prefix_matches(head: list, tail: list) -> list[int]:
    """For each position j of `tail`, how many elements of `head` match tail[j], tail[j+1], ... in order (the
    Z-algorithm over head + separator + tail: linear in their lengths, whatever repeats in them)."""
    sep = object()
    s = [*head, sep, *tail]
    n = len(s)
    z = [0] * n
    left = right = 0
    for i in range(1, n):
        if i < right:
            z[i] = min(right - i, z[i - left])
        while i + z[i] < n and s[z[i]] == s[i + z[i]]:
            z[i] += 1
        if i + z[i] > right:
            left, right = i, i + z[i]
    return z[len(head) + 1:]


def _match_resends(min_records: int) -> Callable[[pd.DataFrame], pd.DataFrame]:
    def match(group: pd.DataFrame) -> pd.DataFrame:
        """One new producer id's head against the tails of its candidate predecessors."""
        out = []
        head = group[group["role"] == "head"].sort_values("offset")
        h = list(zip(head["key_hash"], head["value_hash"], strict=True))
        in_head = Counter(h)
        for pid_a, tail in group[group["role"] == "tail"].groupby("pid_a"):
            tail = tail.sort_values("offset")
            t = list(zip(tail["key_hash"], tail["value_hash"], strict=True))
            z = longest_prefix_matches(h, t)
            anchors = [j for j, k in enumerate(z) if k >= min_records]
            # The run's first records must stand once in the earlier tail: a stream that repeats its own
            # records (heartbeats, status) matches everywhere, and that is its nature, not a re-send.
            if len(anchors) != 1:
                continue
            j = anchors[0]
            k = z[j]
            # A constant (the same key and value recurring: a heartbeat `{"type":"ping"}` with a null key, once a
            # minute, across a producer restart) proves nothing: at least `min_records` records of the run must
            # stand once in the earlier tail and once in the new head (issue 47).
            in_tail = Counter(t)
            if sum(in_tail[r] == 1 and in_head[r] == 1 for r in h[:k]) < min_records:
                continue
            out.append({**{c: head.iloc[0][c] for c in KEY}, "pid_a": pid_a, "pid_b": head.iloc[0]["producer_id"],
                        "producer_epoch": head.iloc[0]["producer_epoch"], "matches": k,
                        "a_first_offset": tail.iloc[j]["offset"], "a_last_offset": tail.iloc[j + k - 1]["offset"],
                        "b_first_offset": head.iloc[0]["offset"], "b_last_offset": head.iloc[k - 1]["offset"],
                        "ms_between": head.iloc[0]["timestamp"] - tail.iloc[-1]["timestamp"]})
        return pd.DataFrame(out, columns=[c.split(" ")[0] for c in RESEND_SCHEMA.split(", ")])

    return match


@python_model("resend_records", inputs=("resend_batches",), columns=S.ddl(S.RECORD_ROWS),
              doc="The records of the batches a re-send check compares (resend_batches), decoded on the executors: "
                  "a file's batches in one task and in file order.")
def resend_records(resend_batches: DataFrame) -> DataFrame:
    return batch_record_rows(resend_batches)


@python_model("resends", inputs=("resend_runs",), columns=RESEND_SCHEMA, params=("resend_min_records",),
              doc="One row per re-send: a run of at least :resend_min_records consecutive records at the start of "
                  "pid_b's history in a partition that equals, record for record (key and value hashes), a "
                  "consecutive run among pid_a's last records (resend_runs). The work grows with the number of "
                  "producer ids and with the tail compared, never with how often a value repeats.")
def resends(resend_runs: DataFrame, resend_min_records: int) -> DataFrame:
    return resend_runs.groupBy(*PRODUCER).applyInPandas(_match_resends(resend_min_records), RESEND_SCHEMA)
