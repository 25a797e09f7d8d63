"""`kforensics locate` and the coordinator-partition rule (Utils.abs(String.hashCode) % N)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kforensics.cli import main
from kforensics.parsers.coordinator_partition import java_string_hash, kafka_abs, partition_for

INT_MIN = -(2**31)
# ASCII, a non-BMP character (two UTF-16 code units), BMP non-ASCII, empty, and strings with known hashes
SAMPLES = ["", "a", "hello", "Aa", "BB", "payments-app-0", "grüße-gruppe", "tx-😀-1", "😀", "𝄞music",
           "polygenelubricants", "a" * 200]


def fold_by_code_points(text: str) -> int:
    """An independent route: split code points into surrogates by arithmetic, then evaluate
    s[0]*31^(n-1) + ... + s[n-1] as Java's documentation states it, reduced to a signed 32-bit int."""
    units: list[int] = []
    for ch in text:
        cp = ord(ch)
        if cp > 0xFFFF:
            cp -= 0x10000
            units += [0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF)]
        else:
            units.append(cp)
    n = len(units)
    total = sum(u * pow(31, n - 1 - i, 2**32) for i, u in enumerate(units)) % 2**32
    return total - 2**32 if total >= 2**31 else total


def brute_force_min_value() -> str:
    """A string whose hashCode is Integer.MIN_VALUE, by a small brute force: `kforensics-<k>` followed by two CJK
    characters c1 c2, whose hash is base*31^2 + c1*31 + c2 (mod 2^32); try k until c1 and c2 exist."""
    lo, hi = 0x4E00, 0x9FFF
    for k in range(1_000_000):
        prefix = f"kforensics-{k}"
        need = (2**31 - (fold_by_code_points(prefix) % 2**32) * 961) % 2**32  # = c1*31 + c2
        c1 = max(lo, (need - hi) // 31)
        while c1 <= hi and c1 * 31 <= need:
            if lo <= need - c1 * 31 <= hi:
                return prefix + chr(c1) + chr(need - c1 * 31)
            c1 += 1
    raise AssertionError("no string found")


def java_hashes(strings: list[str], tmp_path: Path) -> list[int] | None:
    """The hashCode values a real JVM computes (Java 11+ runs a single source file); None without a JDK."""
    if shutil.which("java") is None or shutil.which("javac") is None:
        return None
    source = tmp_path / "Hash.java"
    source.write_text(
        "public class Hash { public static void main(String[] args) throws Exception {\n"
        "  java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(System.in));\n"
        "  for (String line; (line = in.readLine()) != null; ) {\n"
        "    String[] parts = line.trim().isEmpty() ? new String[0] : line.trim().split(\",\");\n"
        "    int[] cps = new int[parts.length];\n"
        "    for (int i = 0; i < parts.length; i++) cps[i] = Integer.parseInt(parts[i]);\n"
        "    System.out.println(new String(cps, 0, cps.length).hashCode()); } } }\n")
    # code points as numbers: no dependence on the JVM's default charset
    stdin = "".join(",".join(str(ord(c)) for c in s) + "\n" for s in strings)
    done = subprocess.run(["java", str(source)], input=stdin, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return [int(line) for line in done.stdout.split()]


def test_hash_matches_an_independent_fold_and_a_real_jvm(tmp_path: Path) -> None:
    strings = [*SAMPLES, brute_force_min_value()]
    ours = [java_string_hash(s) for s in strings]
    assert ours == [fold_by_code_points(s) for s in strings]
    assert ours[:5] == [0, 97, 99162322, 2112, 2112]  # values from the Java documentation's formula, by hand
    jvm = java_hashes(strings, tmp_path)
    if jvm is None:
        pytest.skip("no JDK (java + javac) to compare with a real String.hashCode")
    assert ours == jvm


def test_non_bmp_characters_count_as_two_code_units() -> None:
    # U+1F600 is the surrogate pair D83D DE00: 0xD83D * 31 + 0xDE00
    assert java_string_hash("😀") == 0xD83D * 31 + 0xDE00
    assert java_string_hash("😀") != ord("😀")  # a fold over code points would give this


def test_integer_min_value_goes_to_partition_zero() -> None:
    for text in ("polygenelubricants", brute_force_min_value()):
        assert java_string_hash(text) == INT_MIN
        assert kafka_abs(java_string_hash(text)) == 0
        assert [partition_for(text, n) for n in (1, 3, 50, 7919)] == [0, 0, 0, 0]
    # Math.abs would keep MIN_VALUE negative, and Python's abs() % 50 would give 2^31 % 50 = 48
    assert abs(INT_MIN) % 50 == 48
    assert kafka_abs(-5) == 5 and kafka_abs(7) == 7


def test_partition_is_abs_hash_modulo_n() -> None:
    for text in SAMPLES:
        h = fold_by_code_points(text)
        assert partition_for(text, 50) == (0 if h == INT_MIN else abs(h)) % 50
        assert partition_for(text, 7) == (0 if h == INT_MIN else abs(h)) % 7
    with pytest.raises(ValueError):
        partition_for("x", 0)


def _locate(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["locate", *args])
    return result.exit_code, result.output


def test_locate_json_finds_the_sample_coordinator_partitions(sample_logs: Path) -> None:
    b1, b2 = str(sample_logs / "broker-1"), str(sample_logs / "broker-2")
    # With two partitions: payments-app-0 -> __transaction_state-0 (broker-1), payments-app-1 -> -1 (broker-2),
    # orders-service -> __consumer_offsets-1 (broker-2), analytics -> __consumer_offsets-0 (broker-1).
    code, out = _locate("--json", "--partitions", "2", "--group", "orders-service", "--group", "analytics",
                        "--transactional-id", "payments-app-0", "--transactional-id", "payments-app-1", b1, f"b2={b2}")
    assert code == 0, out
    rows = [json.loads(line) for line in out.splitlines()]
    assert [list(r) for r in rows] == [["kind", "id", "topic", "partition", "found"]] * 4
    assert [(r["kind"], r["id"], r["topic"], r["partition"], r["found"]) for r in rows] == [
        ("group", "orders-service", "__consumer_offsets", 1,
         [{"broker": "b2", "path": str(sample_logs / "broker-2" / "__consumer_offsets-1")}]),
        ("group", "analytics", "__consumer_offsets", 0,
         [{"broker": "broker-1", "path": str(sample_logs / "broker-1" / "__consumer_offsets-0")}]),
        ("transactional_id", "payments-app-0", "__transaction_state", 0,
         [{"broker": "broker-1", "path": str(sample_logs / "broker-1" / "__transaction_state-0")}]),
        ("transactional_id", "payments-app-1", "__transaction_state", 1,
         [{"broker": "b2", "path": str(sample_logs / "broker-2" / "__transaction_state-1")}]),
    ]
    # by the broker's default 50 partitions, none of those is on these disks
    code, out = _locate("--json", "--transactional-id", "payments-app-1", "--transactional-id", "😀", b1, b2)
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0
    assert [(r["partition"], r["found"]) for r in rows] == [(fold_by_code_points("payments-app-1") % 50, []),
                                                           (abs(0xD83D * 31 + 0xDE00) % 50, [])]


def test_locate_without_dirs_and_as_a_table(sample_logs: Path) -> None:
    code, out = _locate("--json", "--transactional-id", "polygenelubricants")
    assert code == 0
    assert json.loads(out) == {"kind": "transactional_id", "id": "polygenelubricants",
                               "topic": "__transaction_state", "partition": 0, "found": []}
    code, out = _locate("--transactional-id", "polygenelubricants", str(sample_logs / "broker-1"))
    assert code == 0
    assert "polygenelubricants" in out and "__transaction_state-0" in out and "broker-1" in out


def test_locate_usage_errors(tmp_path: Path) -> None:
    assert _locate("--json")[0] == 2  # no id
    assert _locate("--group", "g", str(tmp_path / "absent"))[0] == 2
    assert _locate("--group", "g", "--partitions", "0")[0] == 2
    assert _locate("--group", "g", f"a={tmp_path}", f"a={tmp_path}")[0] == 2


def test_locate_does_not_import_pyspark(sample_logs: Path) -> None:
    code = ("import sys; from kforensics.cli import main\n"
            "try:\n    main(['locate', '--group', 'g', " + repr(str(sample_logs / "broker-1")) + "])\n"
            "except SystemExit:\n    pass\n"
            "assert 'pyspark' not in sys.modules, 'pyspark imported'\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_spark_column_matches_the_library(spark) -> None:

    from unit_frames import run_model

    strings = [*SAMPLES, brute_force_min_value()]
    log = spark.createDataFrame([(s,) for s in strings] + [(None,)], "transactional_id string")
    # the model's hash is a step of its statement: with 2^31 - 1 partitions the partition is abs(hash) itself (but
    # for abs(hash) = 2^31 - 1), so the two counts hold the hash and the partition rule to the library's
    for partitions in (50, 2**31 - 1):
        rows = run_model("transactional_id_partitions", {"transaction_state_partitions": partitions},
                         coordinator_log=log).collect()
        got = {r["transactional_id"]: r["expected_coordinator_partition"] for r in rows}
        assert got == {s: f"__transaction_state-{partition_for(s, partitions)}" for s in strings}  # no row for null


def test_scan_names_the_expected_coordinator_partition(full_scan: Path) -> None:
    """Coordinator findings, the coordinator's transactions and `txns` carry the __transaction_state partition
    the id hashes to (default 50 partitions); the sample's ids live in other partitions, and both are shown."""
    import pyarrow.parquet as pq

    def expected(tid: str | None) -> str | None:
        return None if tid is None else f"__transaction_state-{partition_for(tid, 50)}"

    findings = [f | {"details": json.loads(f["details"])} for f in pq.read_table(full_scan / "findings").to_pylist()
                if f["kind"] in ("marker_missing", "outcome_mismatch", "epoch_fenced_write")]
    assert len(findings) == 3
    for f in findings:
        tid = f["details"]["transactional_id"]
        assert f["details"]["expected_coordinator_partition"] == expected(tid), f
    coordinator = pq.read_table(full_scan / "coordinator_transactions").to_pylist()
    assert {r["transactional_id"]: r["expected_coordinator_partition"] for r in coordinator} == {
        tid: expected(tid) for tid in ("payments-app-0", "payments-app-1", "transfers-app-0", "transfers-app-1",
                                       "transfers-app-3", "txnbad-app")}
    # transfers-app-0 is recorded in __transaction_state-1, but by 50 partitions belongs to 47
    assert {r["coordinator_partition"] for r in coordinator if r["transactional_id"] == "transfers-app-0"} == {
        "__transaction_state-1"}
    assert expected("transfers-app-0") == "__transaction_state-47"
    result = CliRunner().invoke(main, ["txns", str(full_scan), "--json", "--topic", "transfers"])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert {(line["transactional_id"], line["expected_coordinator_partition"]) for line in lines} == {
        (tid, expected(tid)) for tid in ("transfers-app-0", "transfers-app-1", "transfers-app-3", None)}


def test_real_brokers_keep_every_id_in_the_partition_it_hashes_to(realdata: Path) -> None:
    """Real broker disks (50-partition internal topics): every group id in a __consumer_offsets-<n> and every
    transactional id in a __transaction_state-<n> hashes to n."""
    from kforensics.parsers.internal_topics import decode_consumer_offsets, decode_transaction_state
    from kforensics.parsers.record_batch import Record, RecordBatch, open_log

    checked: dict[str, set[str]] = {"__consumer_offsets": set(), "__transaction_state": set()}
    for topic, decode, field in (("__consumer_offsets", decode_consumer_offsets, "group"),
                                 ("__transaction_state", decode_transaction_state, "transactional_id")):
        for log_file in sorted(realdata.rglob(f"{topic}-*/*.log")):
            n = int(log_file.parent.name.rsplit("-", 1)[1])
            with open_log(log_file) as log:
                for batch in log.batches():
                    if not isinstance(batch, RecordBatch) or batch.is_control:
                        continue
                    for record in log.records(batch):
                        if not isinstance(record, Record):
                            continue
                        decoded = decode(record.key, record.value)
                        coordinator_id = (decoded.get("key") or {}).get(field)
                        if coordinator_id is not None:
                            assert partition_for(coordinator_id, 50) == n, (log_file, coordinator_id)
                            checked[topic].add(coordinator_id)
    assert len(checked["__consumer_offsets"]) >= 3 and "default_" in checked["__transaction_state"]
