"""The broker's text files: checkpoints, leader-epoch-checkpoint, partition.metadata, meta.properties,
quorum-state and .kafka_cleanshutdown. Each reader returns (content, findings) and never raises on
content; malformed lines become `checkpoint_malformed` findings with the line's byte position."""

from __future__ import annotations

import json
import os
from typing import Any, NamedTuple

from kforensics.parsers.findings import Finding

MAX_TEXT_BYTES = 64 << 20


class EpochEntry(NamedTuple):
    epoch: int
    start_offset: int


class OffsetCheckpointEntry(NamedTuple):
    topic: str
    partition: int
    offset: int


def _lines(path: str) -> tuple[list[tuple[int, int, str]], list[Finding]]:
    """(line number from 1, byte position, text) for each line."""
    size = os.path.getsize(path)
    if size > MAX_TEXT_BYTES:
        return [], [Finding("checkpoint_malformed", path, 0, f"{size} bytes is far too large for this text file",
                            {"file_size": size})]
    with open(path, "rb") as fh:
        raw = fh.read()
    out = []
    position = 0
    for number, line in enumerate(raw.split(b"\n"), start=1):
        out.append((number, position, line.decode("utf-8", errors="replace").rstrip("\r")))
        position += len(line) + 1
    while out and not out[-1][2].strip():
        out.pop()
    return out, []


def _malformed(path: str, line: int, position: int, why: str) -> Finding:
    return Finding("checkpoint_malformed", path, position, f"line {line}: {why}", {"line": line})


def _versioned(path: str, fields: int) -> tuple[list[tuple[int, int, list[str]]], list[Finding]]:
    """Version 0, entry count, then `fields` whitespace-separated columns per entry."""
    lines, findings = _lines(path)
    if findings:
        return [], findings
    if not lines:
        return [], [_malformed(path, 1, 0, "empty file (expected a version line)")]
    number, position, text = lines[0]
    if text.strip() != "0":
        return [], [_malformed(path, number, position, f"version {text.strip()!r}; only 0 exists")]
    if len(lines) < 2 or not lines[1][2].strip().lstrip("-").isdigit():
        return [], [_malformed(path, 2, lines[1][1] if len(lines) > 1 else position, "missing entry count")]
    expected = int(lines[1][2])
    rows = []
    for number, position, text in lines[2:]:
        parts = text.split()
        if len(parts) != fields:
            findings.append(_malformed(path, number, position, f"expected {fields} fields, found {text!r}"))
            continue
        rows.append((number, position, parts))
    if expected != len(lines) - 2:
        findings.append(_malformed(path, 2, lines[1][1], f"declares {expected} entries, holds {len(lines) - 2}"))
    return rows, findings


def read_leader_epoch_checkpoint(path: str | os.PathLike[str]) -> tuple[list[EpochEntry], list[Finding]]:
    path = os.fspath(path)
    rows, findings = _versioned(path, 2)
    entries: list[EpochEntry] = []
    for number, position, (epoch, start) in rows:
        try:
            entry = EpochEntry(int(epoch), int(start))
        except ValueError:
            findings.append(_malformed(path, number, position, f"not numbers: {epoch} {start}"))
            continue
        if entries and (entry.epoch <= entries[-1].epoch or entry.start_offset < entries[-1].start_offset):
            findings.append(_malformed(path, number, position,
                                       f"epoch {entry.epoch} at {entry.start_offset} does not follow epoch "
                                       f"{entries[-1].epoch} at {entries[-1].start_offset}"))
        entries.append(entry)
    return entries, findings


def read_offset_checkpoint(path: str | os.PathLike[str]) -> tuple[list[OffsetCheckpointEntry], list[Finding]]:
    """replication-offset-checkpoint, recovery-point-offset-checkpoint, log-start-offset-checkpoint,
    cleaner-offset-checkpoint: `topic partition offset` lines."""
    path = os.fspath(path)
    rows, findings = _versioned(path, 3)
    entries = []
    for number, position, (topic, partition, offset) in rows:
        try:
            entries.append(OffsetCheckpointEntry(topic, int(partition), int(offset)))
        except ValueError:
            findings.append(_malformed(path, number, position, f"not numbers: {partition} {offset}"))
    return entries, findings


def _key_values(path: str, separator: str) -> tuple[dict[str, str], list[Finding]]:
    lines, findings = _lines(path)
    props: dict[str, str] = {}
    for number, position, text in lines:
        stripped = text.strip()
        if not stripped or stripped.startswith(("#", "!")):
            continue
        key, sep, value = stripped.partition(separator)
        if not sep:
            findings.append(_malformed(path, number, position, f"no {separator!r} in {stripped!r}"))
            continue
        props[key.strip()] = value.strip()
    return props, findings


def read_partition_metadata(path: str | os.PathLike[str]) -> tuple[dict[str, Any], list[Finding]]:
    """`version: 0` / `topic_id: <base64 uuid>`."""
    path = os.fspath(path)
    props, findings = _key_values(path, ":")
    out: dict[str, Any] = dict(props)
    if "version" in out:
        out["version"] = int(out["version"]) if str(out["version"]).isdigit() else out["version"]
    if "version" not in props or "topic_id" not in props:
        findings.append(_malformed(path, 1, 0, "expected `version` and `topic_id` lines"))
    return out, findings


def read_meta_properties(path: str | os.PathLike[str]) -> tuple[dict[str, Any], list[Finding]]:
    """Java properties: version 0 (ZooKeeper: broker.id, cluster.id) or 1 (KRaft: node.id, directory.id)."""
    path = os.fspath(path)
    props, findings = _key_values(path, "=")
    version = props.get("version")
    required = {"0": ("broker.id",), "1": ("node.id", "cluster.id")}.get(version or "")
    if required is None:
        findings.append(_malformed(path, 1, 0, f"meta.properties version {version!r}; expected 0 or 1"))
    else:
        missing = [k for k in required if k not in props]
        if missing:
            findings.append(_malformed(path, 1, 0, f"version {version} lacks {', '.join(missing)}"))
    return dict(props), findings


def _read_json(path: str, allow_empty: bool) -> tuple[dict[str, Any], list[Finding]]:
    lines, findings = _lines(path)
    if findings:
        return {}, findings
    text = "\n".join(t for _, _, t in lines).strip()
    if not text and allow_empty:
        return {}, []
    try:
        value = json.loads(text)
    except ValueError as exc:
        return {}, [_malformed(path, 1, 0, f"not JSON: {exc}")]
    if not isinstance(value, dict):
        return {}, [_malformed(path, 1, 0, "expected a JSON object")]
    return value, []


def read_quorum_state(path: str | os.PathLike[str]) -> tuple[dict[str, Any], list[Finding]]:
    return _read_json(os.fspath(path), allow_empty=False)


def read_clean_shutdown(path: str | os.PathLike[str]) -> tuple[dict[str, Any], list[Finding]]:
    """KRaft writes `{"version":0,"brokerEpoch":N}`; older brokers leave the file empty."""
    return _read_json(os.fspath(path), allow_empty=True)
