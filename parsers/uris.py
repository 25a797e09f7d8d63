"""Local paths and URIs (file://, s3://, hdfs://, anything pyarrow.fs understands): the one filesystem helper
and the one join, shared by the directory model, the scan's executors, OUT and `locate`."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyarrow.fs as pafs


def filesystem(uri: str | os.PathLike[str]) -> tuple[pafs.FileSystem, str]:
    """The filesystem and path of a local path or a URI pyarrow.fs understands (file://, s3://, hdfs://)."""
    import pyarrow.fs as pafs

    uri = os.fspath(uri)
    if "://" in uri:
        return pafs.FileSystem.from_uri(uri)
    return pafs.LocalFileSystem(), os.path.abspath(uri)


def join_uri(uri: str, *names: str) -> str:
    """`uri`/`name`/..., keeping a URI's query string (`?endpoint_override=...`) at the end."""
    base, sep, query = uri.partition("?") if "://" in uri else (uri, "", "")
    return "/".join([base.rstrip("/"), *names]) + sep + query
