"""`cleaner_blocked`: a compacted partition whose log cleaner a long-open transaction holds at the LSO."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
from conftest import SAMPLE_LOGS
from unit_frames import run_check, with_timeouts

from kforensics.kinds import KINDS

EXPECTED = json.loads((SAMPLE_LOGS / "EXPECTED.json").read_text())
TXNS = ("broker string, topic string, partition int, producer_id long, producer_epoch int, first_offset long, "
        "first_timestamp long, outcome string, file string, position long")
ENDS = ("broker string, topic string, partition int, cleaner_offset long, high_watermark long, log_end_offset long, "
        "log_end_timestamp long")
BATCHES = "broker string, topic string, partition int, last_offset long, size int"
MIN = 60_000


def _blocked(spark, txns: list[tuple], ends: list[tuple], batches: list[tuple], timeout: int = 15 * MIN) -> list:
    found = run_check("cleaner_blocked", {"txn_timeout_ms": timeout},
                      timed_transactions=with_timeouts(spark.createDataFrame(txns, TXNS)),
                      partition_ends=spark.createDataFrame(ends, ENDS),
                      log_batches=spark.createDataFrame(batches, BATCHES))
    return sorted((r["topic"], r["offset"], r["producer_id"], json.loads(r["details"])) for r in found.collect())


def test_cleaner_blocked_rules(spark) -> None:
    """Only a compacted partition (cleaner checkpoint), held by the transaction itself, below the log end, for
    longer than the timeout; the earliest open transaction is the holder; bytes from its batch to the log end."""
    t0 = 1_700_000_000_000
    txns = [
        # compacted, an old open transaction at 40 and a younger one at 60: blocked by producer 7 at 40
        ("b", "compacted", 0, 7, 1, 40, t0, "OPEN", "c.log", 400),
        ("b", "compacted", 0, 8, 0, 60, t0 + 30 * MIN, "OPEN", "c.log", 600),
        ("b", "compacted", 0, 9, 0, 10, t0 - MIN, "COMMIT", "c.log", 100),
        # not compacted (no cleaner checkpoint entry): a hanging transaction, but no cleaner to block
        ("b", "plain", 0, 7, 1, 40, t0, "OPEN", "p.log", 400),
        # compacted, open but young
        ("b", "young", 0, 7, 1, 40, t0, "OPEN", "y.log", 400),
        # compacted, old and open, but the high watermark (30) is below it: the HW holds the LSO, not the txn
        ("b", "below_hw", 0, 7, 1, 40, t0, "OPEN", "h.log", 400),
    ]
    ends = [("b", "compacted", 0, 20, 100, 100, t0 + 40 * MIN), ("b", "plain", 0, None, 100, 100, t0 + 40 * MIN),
            ("b", "young", 0, 20, 100, 100, t0 + 5 * MIN), ("b", "below_hw", 0, 20, 30, 100, t0 + 40 * MIN)]
    batches = [("b", topic, 0, last, 100) for topic in ("compacted", "plain", "young", "below_hw")
               for last in (9, 19, 39, 49, 59, 99)]
    found = _blocked(spark, txns, ends, batches)
    # no image time in these tables: the age is taken at the partition's last write (40 min after the transaction)
    assert found == [("compacted", 40, 7, {"cleaner_offset": 20, "last_stable_offset": 40, "held_by_producer_id": 7,
                                           "txn_first_offset": 40, "bytes_behind": 300, "age_ms": 40 * MIN,
                                           "partition_last_write": t0 + 40 * MIN})]
    # with a timeout longer than the transaction's age, nothing
    assert _blocked(spark, txns, ends, batches, timeout=41 * MIN) == []
    assert KINDS["cleaner_blocked"].severity == "warning"


def test_cleaner_blocked_on_the_sample_payments_partition(full_scan: Path) -> None:
    """payments-0 on broker-1 has a cleaner-offset-checkpoint entry (34) and a hanging transaction at 43;
    broker-2's copy has the same hanging transaction but no cleaner checkpoint entry: no finding there."""
    planted = [a for a in EXPECTED["brokers"]["broker-1"]["partitions"]["payments-0"]["anomalies"]
               if a["kind"] == "cleaner_blocked"]
    assert len(planted) == 1
    found = [f for f in pq.read_table(full_scan / "findings").to_pylist() if f["kind"] == "cleaner_blocked"]
    assert [(f["broker"], f["topic"], f["partition"], f["severity"]) for f in found] == [
        ("broker-1", "payments", 0, "warning")]
    (f,) = found
    (a,) = planted
    assert (f["offset"], f["producer_id"], f["producer_epoch"], f["position"]) == (
        a["offset"], a["producer_id"], a["producer_epoch"], a["position"])
    assert f["file"].endswith("payments-0/" + a["file"])
    details = json.loads(f["details"])
    assert {k: details[k] for k in ("cleaner_offset", "last_stable_offset", "held_by_producer_id", "txn_first_offset",
                                    "bytes_behind")} == {k: a[k] for k in ("cleaner_offset", "last_stable_offset",
                                                                           "held_by_producer_id", "txn_first_offset",
                                                                           "bytes_behind")}
    # judged at broker-1's image time (its newest write), hours after the transaction's first batch
    (image,) = [r for r in pq.read_table(full_scan / "image_times").to_pylist() if r["broker"] == "broker-1"]
    assert details["image_time"] == image["image_time"] > details["partition_last_write"]
    assert details["age_ms"] > 60_000
    # bytes_behind is what the segment files hold from the LSO's batch to the log end
    segment = SAMPLE_LOGS / "broker-1" / "payments-0" / a["file"]
    assert details["bytes_behind"] == segment.stat().st_size - a["position"]
