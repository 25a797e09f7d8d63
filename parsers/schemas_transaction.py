"""The records of `__transaction_state`, the transaction coordinator's log.

A key is an int16 record type (0, TransactionLogKey; before Kafka 4.0 called the key version) and the
transactional id in the classic encoding; a value is an int16 version (0 classic, 1 flexible) and
TransactionLogValue. A null value is a tombstone.

Written from apache/kafka `transaction-coordinator/src/main/resources/common/message/TransactionLog{Key,Value}.json`
at commit 054b66e3 (the "coordinator-value" schema of Kafka 4.x): versions 0-1, the tagged PreviousProducerId (0),
NextProducerId (1) and ClientTransactionVersion (2) from version 1. A tagged NextProducerEpoch is in no stored
schema version found; a tag the table does not declare is kept as an unknown tagged field.
"""

from __future__ import annotations

from kforensics.parsers.message_schema import Field as F, Message

KEY = Message("TransactionLogKey", None, "0", "none", (F("TransactionalId", "string", "0"),))
VALUE = Message("TransactionLogValue", None, "0-1", "1+", (
    F("ProducerId", "int64"),
    F("PreviousProducerId", "int64", "1+", tagged="1+", tag=0, default=-1),
    F("NextProducerId", "int64", "1+", tagged="1+", tag=1, default=-1),
    F("ProducerEpoch", "int16"),
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
