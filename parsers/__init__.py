"""Decoders for every file a Kafka broker writes to its log directories.

One module per on-disk file type. Parsers read lazily (mmap or chunked reads), yield small typed
entities and report problems as :class:`~kforensics.parsers.findings.Finding` values instead of
raising. Nothing here imports Spark or the CLI.
"""
