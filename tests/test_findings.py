from kforensics.parsers.findings import KINDS, Finding


def test_finding_json_has_contract_fields_and_details() -> None:
    f = Finding("corrupt_crc", "a.log", 61, "stored CRC differs", {"stored_crc": 1, "computed_crc": 2})
    out = f.to_json()
    assert out["type"] == "finding"
    assert out["severity"] == KINDS["corrupt_crc"][0] == "error"
    assert (out["file"], out["position"], out["stored_crc"], out["computed_crc"]) == ("a.log", 61, 1, 2)


def test_details_cannot_overwrite_contract_fields() -> None:
    out = Finding("truncated_tail", "a.log", 7, "m", {"kind": "evil", "file": "b"}).to_json()
    assert out["kind"] == "truncated_tail" and out["file"] == "a.log"


def test_remote_tier_kinds_are_registered_and_documented() -> None:
    from pathlib import Path

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    for kind, severity in (("remote_log_gap", "error"), ("remote_segment_stuck", "warning"),
                           ("remote_leader_epoch_mismatch", "error"), ("remote_overlap", "warning")):
        assert KINDS[kind][0] == severity
        assert f"| `{kind}` | {severity} |" in readme, kind
