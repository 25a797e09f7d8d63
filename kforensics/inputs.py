"""The command line's `[NAME=]DIR` inputs: a broker label and a path or URI (light: no Spark, no click).

URIs (`s3://`, `gs://`, `hdfs://`, `file://`) are checked on the driver before any Spark starts. pyarrow.fs
reads credentials and the endpoint the way the AWS SDK does: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY
(AWS_SESSION_TOKEN), AWS_PROFILE / ~/.aws, AWS_DEFAULT_REGION or AWS_REGION, and AWS_ENDPOINT_URL for an
S3-compatible server.
"""

from __future__ import annotations

import os


def parse_inputs(specs: list[str]) -> list[tuple[str, str]]:
    """`[NAME=]DIR` -> (label, dir); the label defaults to the dir's base name. A `=` inside a path or URI (a
    NAME with `/` or `:`) is part of the path. A label given several times names one broker's log dirs (JBOD:
    `b3=/mnt/d1/kafka b3=/mnt/d2/kafka`), in the order given."""
    out = []
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep or "/" in name or ":" in name:
            name, path = os.path.basename(spec.rstrip("/")) or spec, spec
        out.append((name, path))
    return out


def label_problem(specs: list[str]) -> tuple[str, str] | None:
    """A label repeated where it was not written: two dirs with one base name are two brokers until the user says
    they are one (`NAME=DIR` given several times names one broker's log dirs)."""
    parsed = parse_inputs(specs)
    for (label, _), spec in zip(parsed, specs, strict=True):
        named = spec.partition("=")[0] == label and "=" in spec
        if not named and sum(1 for other, _ in parsed if other == label) > 1:
            return "DIR", (f"two inputs have the same broker label {label} (their base name); name them NAME=DIR "
                           "(one NAME given several log dirs is one broker's dirs)")
    return None


CREDENTIALS_HINT = ("pyarrow reads S3 credentials and the endpoint from the environment (AWS_ACCESS_KEY_ID, "
                    "AWS_SECRET_ACCESS_KEY, AWS_PROFILE, AWS_DEFAULT_REGION, AWS_ENDPOINT_URL)")


def input_problem(inputs: list[tuple[str, str]], out: str | None, *, files: bool = True,
                  uri_queries: bool = False) -> tuple[str, str] | None:
    """What is wrong with the inputs (and with an --out the user chose), as (option, message); None if nothing.
    An input is a log dir, or (`files`) a regular file of kafka-dump-log text; a URI may carry pyarrow's query
    parameters (`?endpoint_override=...`) only where `uri_queries` (the scan's executors join file names to it)."""
    what = "directory or file" if files else "directory"
    for label, path in inputs:
        for text in {label, path}:
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:  # the tables name every file by its path, in UTF-8
                return "DIR", (f"{os.fsencode(text).decode('utf-8', 'backslashreplace')} is not UTF-8: kforensics "
                               "names files in UTF-8 (give the dir a UTF-8 path, or link to it from one, and label it "
                               "NAME=DIR)")
        if "://" in path:
            problem = check_uri(path, files=files) or (
                "a URI query (?...) is not supported: pass the endpoint in the environment "
                "(AWS_ENDPOINT_URL=http://HOST:PORT) instead" if "?" in path and not uri_queries else None)
            if problem:
                return "DIR", problem
        elif not (os.path.isdir(path) or (files and os.path.isfile(path))):
            return "DIR", f"{path} is not a readable {what}"
        if out is not None and "://" not in path and "://" not in out:
            real_in, real_out = os.path.realpath(path), os.path.realpath(out)
            if real_out == real_in or real_out.startswith(real_in + os.sep):
                return "--out", f"--out {out} is inside the input {path}: kforensics never writes into the " \
                                 "directories it reads"
    # One label given several dirs is one broker's log dirs (JBOD, `log.dirs`); a dump file has no siblings
    paths = [path.rstrip("/") if "://" in path else os.path.realpath(path) for _, path in inputs]
    if len(set(paths)) != len(paths):
        return "DIR", "the same log dir is given twice"
    labels = [label for label, _ in inputs]
    for label, path in inputs:
        if labels.count(label) > 1 and "://" not in path and os.path.isfile(path):
            return "DIR", (f"{label} names a kafka-dump-log file and other inputs: one label is one broker, and several "
                           "inputs under it must be its log dirs; name the file NAME=FILE")
    return None


def check_uri(uri: str, *, files: bool = True) -> str | None:
    """None when `uri` names a readable directory (or, `files`, a file); else one sentence saying why not."""
    import pyarrow.fs as pafs

    what = "directory or file" if files else "directory"
    from kforensics.parsers.uris import filesystem

    try:
        fs, path = filesystem(uri)
    except (ValueError, OSError) as exc:  # ArrowInvalid is a ValueError: unknown scheme, bad query
        return f"cannot open {uri}: {exc}"
    try:
        kind = fs.get_file_info(path).type
        if kind == pafs.FileType.Directory or (files and kind == pafs.FileType.File):
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
    return f"{uri} is not a readable {what}"
