"""The analysis: input tables -> facts tables and findings. Transforms are wired here, nothing else."""

from __future__ import annotations

from functools import reduce

from pyspark.sql import DataFrame

from kforensics.spark import crosschecks, producers, transactions
from kforensics.spark.findings import FINDING_COLUMNS


def analyze(tables: dict[str, DataFrame], *, txn_timeout_ms: int = transactions.DEFAULT_TXN_TIMEOUT_MS) -> dict[str,
                                                                                                                DataFrame]:
    """Needs batches, segments, txnindex, snapshot_entries, leader_epochs, partition_checkpoints and
    parser_findings (records in full mode); returns producers, transactions, lso, lso_changes,
    aborted_ranges and findings."""
    batches = tables["batches"].transform(producers.with_leader_epoch_change).cache()
    data = producers.data_batches(batches)
    with_prev = producers.with_previous_batch(data)
    ends = transactions.partition_ends(batches, tables["partition_checkpoints"])
    txns = transactions.transactions_table(transactions.with_transaction_index(batches)).cache()
    sweep = transactions.lso_sweep(txns).cache()
    aborted, txnindex_findings = transactions.aborted_ranges(sweep, tables["txnindex"])

    found = [
        tables["parser_findings"],
        producers.sequence_gaps(with_prev),
        producers.duplicate_sequences(data),
        producers.zombie_epochs(batches),
        transactions.hanging_transactions(txns, ends, txn_timeout_ms),
        txnindex_findings,
        crosschecks.snapshot_mismatches(data, tables["snapshot_entries"], ends),
        crosschecks.leader_epoch_mismatches(batches, tables["leader_epochs"]),
        crosschecks.offset_overlaps(batches),
        crosschecks.segment_name_mismatches(tables["segments"]),
    ]
    if "records" in tables:
        found.append(producers.content_duplicates(tables["records"]))
    findings = reduce(DataFrame.unionByName, [f.select(*FINDING_COLUMNS) for f in found])
    return {
        "producers": producers.producers_table(data),
        "transactions": txns.drop("txn_index"),
        "lso": transactions.lso_table(txns, ends),
        "lso_changes": transactions.lso_changes(sweep),
        "aborted_ranges": aborted,
        "findings": findings,
    }
