"""Broker disks in object storage: `kforensics scan s3://...` against a real S3-compatible server (moto's
standalone server, started here on 127.0.0.1 at a free port, with IAM authentication switched on), through
pyarrow's S3FileSystem with the endpoint and credentials in the environment."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import SAMPLE_LOGS

boto3 = pytest.importorskip("boto3", reason="the S3 tests need the test extra (moto[server], boto3)")
pytest.importorskip("moto.server", reason="the S3 tests need the test extra (moto[server])")

BUCKET = "disks"
FILLERS = 1100  # objects in one partition dir, so that its listing needs a second page (S3 returns 1000 at most)
BIG_SEGMENT = "big-0/00000000000000000000.log"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _big_segment(size: int = 3 << 20) -> bytes:
    """A sound segment of idempotent batches, larger than the 1 MiB pieces a remote file is read in."""
    from kafka.record.default_records import DefaultRecordBatchBuilder

    out, offset = bytearray(), 0
    while len(out) < size:
        builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=4242,
                                            producer_epoch=0, base_sequence=offset, batch_size=1 << 30)
        for i in range(100):
            builder.append(i, timestamp=1_763_632_800_000 + offset + i, key=b"k%d" % (offset + i), value=b"v" * 200,
                           headers=[])
        batch = bytearray(builder.build())
        batch[0:8] = offset.to_bytes(8, "big")
        out += batch
        offset += 100
    return bytes(out)


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    """A moto S3 server with broker-1 of the sample logs, filler objects and a 3 MiB segment under
    s3://disks/broker-1; yields (environment for pyarrow, server log path, local copy of the big segment)."""
    port = _free_port()
    endpoint = f"http://127.0.0.1:{port}"
    folder = tmp_path_factory.mktemp("s3")
    log = folder / "moto.log"
    # The first 3 requests are unauthenticated (the IAM user below); every later one must be signed by its key.
    env = {**os.environ, "INITIAL_NO_AUTH_ACTION_COUNT": "3"}
    with open(log, "wb") as log_file:
        server = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                                  stdout=log_file, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"moto server did not start: {log.read_text()[-2000:]}")
                time.sleep(0.2)
        anonymous = {"endpoint_url": endpoint, "region_name": "us-east-1", "aws_access_key_id": "setup",
                     "aws_secret_access_key": "setup"}
        iam = boto3.client("iam", **anonymous)
        iam.create_user(UserName="forensics")
        key = iam.create_access_key(UserName="forensics")["AccessKey"]
        iam.put_user_policy(UserName="forensics", PolicyName="all", PolicyDocument=json.dumps(
            {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}))
        creds = {"AWS_ACCESS_KEY_ID": key["AccessKeyId"], "AWS_SECRET_ACCESS_KEY": key["SecretAccessKey"],
                 "AWS_DEFAULT_REGION": "us-east-1", "AWS_ENDPOINT_URL": endpoint}
        client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                              aws_access_key_id=creds["AWS_ACCESS_KEY_ID"],
                              aws_secret_access_key=creds["AWS_SECRET_ACCESS_KEY"])
        client.create_bucket(Bucket=BUCKET)
        root = SAMPLE_LOGS / "broker-1"
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            client.put_object(Bucket=BUCKET, Key=f"broker-1/{path.relative_to(root).as_posix()}", Body=path.read_bytes())
        # Leftovers that sort between orders-0's first segment and its later ones: those are on the second page.
        for i in range(FILLERS):
            client.put_object(Bucket=BUCKET, Key=f"broker-1/orders-0/00000000000000000000.log.{i:04d}.deleted", Body=b"")
        big = _big_segment()
        client.put_object(Bucket=BUCKET, Key=f"broker-1/{BIG_SEGMENT}", Body=big)
        (folder / "big.log").write_bytes(big)
        listed = client.list_objects_v2(Bucket=BUCKET, Prefix="broker-1/orders-0/")
        assert listed["IsTruncated"] and listed["KeyCount"] == 1000  # the listing really paginates
        yield {**os.environ, **creds, "KFORENSICS_SERVER": "off"}, log, folder / "big.log"
    finally:
        server.terminate()
        server.wait(timeout=30)


def _kforensics(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kforensics", *args], capture_output=True, text=True, env=env,
                          timeout=540)


def _batches(out: Path, broker: str | None = None) -> list[tuple]:
    rows = pq.read_table(out / "batches").to_pylist()
    return sorted((r["topic"], r["partition"], os.path.basename(r["file"]), r["position"], r["base_offset"],
                   r["last_offset"], r["crc"], r["crc_valid"], r["producer_id"], r["base_sequence"])
                  for r in rows if broker is None or r["broker"] == broker)


#: Findings about one partition of one broker, from its own files (no other broker needed).
LOCAL_KINDS = {"sequence_gap", "duplicate_sequence", "zombie_epoch", "hanging_transaction", "offset_overlap",
               "segment_name_mismatch", "corrupt_crc", "truncated_tail", "txnindex_missing", "txnindex_orphan",
               "txnindex_mismatch", "snapshot_mismatch", "leader_epoch_mismatch", "index_bad_entry",
               "index_non_monotonic", "cleaner_blocked", "content_duplicate"}


def _local_findings(rows: list[dict], broker: str) -> set[tuple]:
    return {(f["kind"], f["topic"], f["partition"], f["offset"], f["producer_id"], f["position"],
             os.path.basename(f["file"] or "")) for f in rows if f["kind"] in LOCAL_KINDS and f["broker"] == broker}


@pytest.mark.process
def test_scan_reads_a_broker_disk_from_s3(s3, headers_scan: Path, tmp_path: Path) -> None:
    env, log, big = s3
    out = tmp_path / "out"
    done = _kforensics(["scan", f"broker-1=s3://{BUCKET}/broker-1", "--out", str(out), "--headers-only", "--json"],
                       env)
    assert done.returncode == 1, done.stderr[-3000:]  # the sample's planted findings
    # every batch of every segment, including orders-0's segments after the 1,100 fillers (second page)
    remote = [b for b in _batches(out) if b[0] != "big"]
    assert remote == _batches(headers_scan, "broker-1")
    assert {b[2] for b in remote if b[0] == "orders"} == {"00000000000000000000.log", "00000000000000000130.log",
                                                          "00000000000000000260.log"}
    # indexes, .txnindex, snapshots, checkpoints and leader-epoch-checkpoint came through S3 too: the same findings
    printed = [json.loads(line) for line in done.stdout.splitlines()]
    expected = _local_findings(pq.read_table(headers_scan / "findings").to_pylist(), "broker-1")
    assert _local_findings(printed, "broker-1") == expected
    assert {"txnindex_mismatch", "snapshot_mismatch", "leader_epoch_mismatch", "cleaner_blocked"} <= {
        k[0] for k in expected}
    assert all(f["file"] is None or f["file"].startswith(f"s3://{BUCKET}/broker-1/") for f in printed)
    # the 3 MiB segment: the same batches as read from the local copy, fetched in ranged GETs (206), not at once
    from kforensics.parsers.record_batch import RecordBatch, open_log

    with open_log(big) as segment:
        local = [(b.position, b.base_offset, b.last_offset, b.crc) for b in segment.batches()
                 if isinstance(b, RecordBatch)]
    assert [(b[3], b[4], b[5], b[6]) for b in _batches(out) if b[0] == "big"] == local and len(local) > 100
    ranged = [line for line in log.read_text(errors="replace").splitlines()
              if f"GET /{BUCKET}/broker-1/{BIG_SEGMENT}" in line and re.search(r"\" 206 ", line)]
    assert len(ranged) >= 3, "the big segment was not read in ranges"


def test_wrong_credentials_and_a_missing_bucket_are_usage_errors(s3, tmp_path: Path) -> None:
    env, _log, _big = s3
    wrong = _kforensics(["scan", f"s3://{BUCKET}/broker-1", "--out", str(tmp_path / "a")],
                        {**env, "AWS_SECRET_ACCESS_KEY": "not-the-secret"})
    assert wrong.returncode == 2, wrong.stderr
    assert "ACCESS_DENIED" in wrong.stderr and "AWS_SECRET_ACCESS_KEY" in wrong.stderr
    unknown = _kforensics(["scan", f"s3://{BUCKET}/broker-1", "--out", str(tmp_path / "b")],
                          {**env, "AWS_ACCESS_KEY_ID": "AKIAUNKNOWNUNKNOWN00"})
    assert unknown.returncode == 2 and "ACCESS_DENIED" in unknown.stderr, unknown.stderr
    missing = _kforensics(["scan", "s3://no-such-bucket/broker-1", "--out", str(tmp_path / "c")], env)
    assert missing.returncode == 2
    assert "the bucket no-such-bucket does not exist" in missing.stderr, missing.stderr
    absent = _kforensics(["scan", f"s3://{BUCKET}/broker-9", "--out", str(tmp_path / "d")], env)
    assert absent.returncode == 2 and "not a readable directory or file" in absent.stderr
    query = _kforensics(["scan", f"s3://{BUCKET}/broker-1?scheme=http", "--out", str(tmp_path / "e")], env)
    assert query.returncode == 2 and "AWS_ENDPOINT_URL" in query.stderr
    assert not any((tmp_path / name).exists() for name in "abcde")  # no Spark started, nothing written


def test_locate_on_s3(s3) -> None:
    env, _log, _big = s3
    endpoint = env["AWS_ENDPOINT_URL"].removeprefix("http://")
    by_env = _kforensics(["locate", "--json", "--partitions", "2", "--group", "analytics",
                          f"b1=s3://{BUCKET}/broker-1"], env)
    assert by_env.returncode == 0, by_env.stderr
    assert json.loads(by_env.stdout)["found"] == [{"broker": "b1", "path": f"s3://{BUCKET}/broker-1/__consumer_offsets-0"}]
    # the endpoint on the URI itself (pyarrow's query parameters), credentials from the environment
    uri = f"s3://{BUCKET}/broker-1?endpoint_override={endpoint}&scheme=http"
    by_query = _kforensics(["locate", "--json", "--partitions", "2", "--group", "analytics", f"b1={uri}"],
                           {k: v for k, v in env.items() if k != "AWS_ENDPOINT_URL"})
    assert by_query.returncode == 0, by_query.stderr
    assert json.loads(by_query.stdout)["found"] == [
        {"broker": "b1", "path": f"s3://{BUCKET}/broker-1/__consumer_offsets-0?endpoint_override={endpoint}&scheme=http"}]


def test_a_remote_file_is_read_from_a_local_copy_of_the_same_name(s3, monkeypatch) -> None:
    """An executor reads a remote file from a temporary local copy; the parsers take a segment's base offset from
    its file name (a .txnindex entry below it is the damage Kafka's sanityCheck trips on), so the copy keeps the
    object's name, and it is gone once read."""
    from kforensics.parsers._fixed_entries import base_offset_from_name
    from kforensics.spark.executor_files import local_file

    env, _log, _big = s3
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL"):
        monkeypatch.setenv(key, env[key])
    name = "00000000000000000130.log"
    with local_file(f"s3://{BUCKET}/broker-1/orders-0/{name}") as path:
        assert path is not None and os.path.basename(path) == name and base_offset_from_name(path) == 130
        assert Path(path).read_bytes() == (SAMPLE_LOGS / "broker-1" / "orders-0" / name).read_bytes()
    assert not os.path.exists(path) and not os.path.exists(os.path.dirname(path))


@pytest.mark.process
def test_find_on_s3(s3) -> None:
    """`find` over a broker disk in S3 runs on Spark (remote segments, as the scan reads them) and finds what it
    finds in the local copy of the same disk, the files named by their URIs; the cleaner-offset-checkpoint comes
    through S3 too."""
    env, _log, _big = s3
    args = ["find", "--json", "--value-contains", "a", "--topic", "[op]*"]
    remote = _kforensics([*args, f"broker-1=s3://{BUCKET}/broker-1"], env)
    local = _kforensics([*args, f"broker-1={SAMPLE_LOGS / 'broker-1'}"], env)
    assert remote.returncode == local.returncode == 0, remote.stderr[-3000:]
    assert remote.stdout == local.stdout.replace(str(SAMPLE_LOGS / "broker-1"), f"s3://{BUCKET}/broker-1")
    assert {json.loads(line)["transaction"] for line in remote.stdout.splitlines()} >= {"COMMIT", "ABORT", "OPEN"}
