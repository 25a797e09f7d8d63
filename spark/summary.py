"""What a scan tells at its end (light: the CLI builds it from a server's answer without importing pyspark)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ScanSummary:
    out: str
    partitions: int = 0
    segments: int = 0
    batches: int = 0
    records: int = 0
    bytes: int = 0
    producers: int = 0
    transactions: dict[str, int] = field(default_factory=dict)
    findings: list[tuple[str, str, int]] = field(default_factory=list)  # (kind, severity, count)
    #: Partitions a coordinator transaction or a group commit names that are not in the input (not judged).
    not_in_input: list[str] = field(default_factory=list)
    #: Broker labels of inputs read as kafka-dump-log text (what they lack is not checked).
    dump_inputs: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def has_problems(self) -> bool:
        return any(sev in ("warning", "error") for _, sev, _ in self.findings)
