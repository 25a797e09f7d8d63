"""The records of `__transaction_state`, the transaction coordinator's log.

A key is an int16 record type (0, TransactionLogKey; before Kafka 4.0 called the key version) and the
transactional id in the classic encoding; a value is an int16 version (0 classic, 1 flexible) and
TransactionLogValue. A null value is a tombstone.

Written from apache/kafka `transaction-coordinator/src/main/resources/common/message/TransactionLog{Key,Value}.json`
and checked field by field against the release tags 4.0.0, 4.1.1 and 4.2.0-rc1 (aiven/inkless mirror): the table
is Kafka 4.1's and 4.2's, versions 0-1, with the tagged fields of version 1: PreviousProducerId (0), NextProducerId
(1), ClientTransactionVersion (2) and NextProducerEpoch (3, int16, default -1: the epoch that goes with
NextProducerId when a producer id is rotated). Kafka 4.0.0 has tags 0-2 only; NextProducerEpoch came with KIP-939's
two-phase commit (KAFKA-15370, 247c0f0b, January 2025), in Kafka 4.1. Fields are in Kafka's declaration order,
which is the order JsonConverter (kafka-dump-log --transaction-log-decoder) prints them in. Any other tag is kept
as an unknown tagged field.
"""

from __future__ import annotations

from kforensics.parsers.message_schema import Field as F
from kforensics.parsers.message_schema import Message

KEY = Message("TransactionLogKey", None, "0", "none", (F("TransactionalId", "string", "0"),))
VALUE = Message("TransactionLogValue", None, "0-1", "1+", (
    F("ProducerId", "int64"),
    F("PreviousProducerId", "int64", "1+", tagged="1+", tag=0, default=-1),
    F("NextProducerId", "int64", "1+", tagged="1+", tag=1, default=-1),
    F("ProducerEpoch", "int16"),
    F("NextProducerEpoch", "int16", "1+", tagged="1+", tag=3, default=-1),
    F("TransactionTimeoutMs", "int32"),
    F("TransactionStatus", "int8"),
    F("TransactionPartitions", "[]PartitionsSchema", nullable="0+",
      fields=(F("Topic", "string"), F("PartitionIds", "[]int32"))),
    F("TransactionLastUpdateTimestampMs", "int64"),
    F("TransactionStartTimestampMs", "int64"),
    F("ClientTransactionVersion", "int16", "1+", tagged="1+", tag=2, default=0),
))

#: TransactionState ids (TransactionState.java), as kafka-dump-log names them.
TRANSACTION_STATES = ("Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort", "Dead",
                      "PrepareEpochFence")
