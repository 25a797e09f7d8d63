"""Inputs given as URIs (`s3://`, `gs://`, `hdfs://`, `file://`), checked on the driver before any Spark starts.

pyarrow.fs reads credentials and the endpoint the way the AWS SDK does: AWS_ACCESS_KEY_ID,
AWS_SECRET_ACCESS_KEY (AWS_SESSION_TOKEN), AWS_PROFILE / ~/.aws, AWS_DEFAULT_REGION or AWS_REGION, and
AWS_ENDPOINT_URL for an S3-compatible server; or `?endpoint_override=HOST:PORT&scheme=http` on the URI itself.
"""

from __future__ import annotations

CREDENTIALS_HINT = ("pyarrow reads S3 credentials and the endpoint from the environment (AWS_ACCESS_KEY_ID, "
                    "AWS_SECRET_ACCESS_KEY, AWS_PROFILE, AWS_DEFAULT_REGION, AWS_ENDPOINT_URL)")


def join_uri(uri: str, name: str) -> str:
    """`uri`/`name`, keeping a URI's query string (`?endpoint_override=...`) at the end."""
    base, sep, query = uri.partition("?") if "://" in uri else (uri, "", "")
    return base.rstrip("/") + "/" + name + sep + query


def check_uri(uri: str) -> str | None:
    """None when `uri` names a readable directory or file; else one sentence saying why not."""
    import pyarrow.fs as pafs

    try:
        fs, path = pafs.FileSystem.from_uri(uri)
    except (ValueError, OSError) as exc:  # ArrowInvalid is a ValueError: unknown scheme, bad query
        return f"cannot open {uri}: {exc}"
    try:
        kind = fs.get_file_info(path).type
        if kind in (pafs.FileType.Directory, pafs.FileType.File):
            return None
        bucket = path.split("/", 1)[0]
        if fs.type_name in ("s3", "gcs") and "/" in path and fs.get_file_info(bucket).type == pafs.FileType.NotFound:
            return f"{uri}: the bucket {bucket} does not exist (or these credentials cannot see it)"
    except OSError as exc:
        text = str(exc)
        hint = f"; {CREDENTIALS_HINT}" if any(w in text for w in ("ACCESS_DENIED", "403", "redential",
                                                                    "InvalidAccessKeyId", "SignatureDoesNotMatch")) \
            else ""
        return f"cannot read {uri}: {text}{hint}"
    return f"{uri} is not a readable directory or file"
