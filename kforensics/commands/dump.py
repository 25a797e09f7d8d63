"""`kforensics dump`: print any broker file, as kafka-dump-log does, or as JSON lines (the options; the work is
:mod:`kforensics.dump_engine`'s). Never imports pyspark.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from kforensics.commands import options
from kforensics.dump_engine import DECODERS, FILE_TYPES, DumpOptions, run_dump
from kforensics.dump_out import JsonOut, TextOut


@click.command("dump")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--files", "files_opt", multiple=True, metavar="F1,F2,...",
              help="Comma-separated files to dump (as kafka-dump-log); also accepted positionally.")
@click.option("--type", "file_type", type=click.Choice(FILE_TYPES), help="Override the type guessed from the name.")
@click.option("--print-data-log", is_flag=True, help="Print keys and values (implies --deep-iteration).")
@click.option("--deep-iteration", is_flag=True, help="Print every record, not only batch headers.")
@click.option("--index-sanity-check", is_flag=True, help="Only check index sanity, as the broker does at start-up.")
@click.option("--verify-index-only", is_flag=True, help="Verify index entries against the log without printing them.")
@click.option("--max-bytes", type=click.IntRange(min=0), help="Read at most this many bytes of batches per .log.")
@click.option("--max-message-size", type=int, default=5 * 1024 * 1024, show_default=True,
              help="Accepted for kafka-dump-log compatibility (batches are never size-limited here).")
@click.option("--skip-record-metadata", is_flag=True, help="Do not print record metadata (offset, sizes...).")
@click.option("--offsets-decoder", is_flag=True, help="Decode __consumer_offsets keys and values.")
@click.option("--transaction-log-decoder", is_flag=True, help="Decode __transaction_state keys and values.")
@click.option("--cluster-metadata-decoder", is_flag=True, help="Decode KRaft __cluster_metadata records.")
@click.option("--remote-log-metadata-decoder", is_flag=True,
              help="Decode tiered storage's __remote_log_metadata records.")
@click.option("--share-group-state-decoder", is_flag=True,
              help="Decode __share_group_state (KIP-932 share groups) keys and values.")
@click.option("--json", "as_json", is_flag=True, help="JSON lines instead of kafka-dump-log text.")
@click.option("--pid", "pids", type=int, multiple=True, help="Only batches of this producer id (repeatable).")
@click.option("--producer-epoch", type=int, help="Only batches of this producer epoch.")
@click.option("--leader-epoch", type=int, help="Only batches of this partition leader epoch.")
@options.offsets("offsets_range")
@click.option("--iso-time", is_flag=True, help="Human-readable UTC timestamps (JSON: extra *_iso fields).")
@click.option("--raw", is_flag=True, help="On a terminal too, print keys, values and names as they are (by default a "
                                          "terminal gets their control characters as escapes, e.g. \\x1b).")
def dump(paths: tuple[Path, ...], files_opt: tuple[str, ...], file_type: str | None, print_data_log: bool,
         deep_iteration: bool, index_sanity_check: bool, verify_index_only: bool, max_bytes: int | None,
         max_message_size: int, skip_record_metadata: bool, offsets_decoder: bool, transaction_log_decoder: bool,
         cluster_metadata_decoder: bool, remote_log_metadata_decoder: bool, share_group_state_decoder: bool, as_json: bool, pids: tuple[int, ...], producer_epoch: int | None,
         leader_epoch: int | None, offsets_range: tuple[int | None, int | None], iso_time: bool, raw: bool) -> None:
    """Print broker files: *.log, *.index, *.timeindex, *.txnindex, *.snapshot, checkpoints, metadata.

    \b
    Exit codes: 0 read fine, 1 warning/error findings, 2 usage error or unreadable file.
    \b
    Examples:
      kforensics dump orders-0/00000000000000000000.log --deep-iteration --print-data-log
      kforensics dump --files a.index,a.timeindex --verify-index-only
      kforensics dump --json --pid 4000 --offsets 100:200 orders-0/00000000000000000000.log
    """
    files = list(paths) + [Path(f) for opt in files_opt for f in opt.split(",") if f.strip()]
    if not files:
        raise click.UsageError("no file given: pass files as arguments or with --files")
    decoders = [name for name, on in zip(DECODERS, (offsets_decoder, transaction_log_decoder,
                                                     cluster_metadata_decoder, remote_log_metadata_decoder,
                                                     share_group_state_decoder), strict=True) if on]
    if len(decoders) > 1:
        raise click.UsageError("choose at most one of --offsets-decoder, --transaction-log-decoder, "
                               "--cluster-metadata-decoder, --remote-log-metadata-decoder, "
                               "--share-group-state-decoder")
    opts = DumpOptions(
        print_data_log=print_data_log or bool(decoders),
        deep_iteration=deep_iteration or print_data_log or bool(decoders),
        index_sanity_check=index_sanity_check, verify_index_only=verify_index_only, max_bytes=max_bytes,
        skip_record_metadata=skip_record_metadata, decoder=decoders[0] if decoders else None,
        pids=pids, producer_epoch=producer_epoch, leader_epoch=leader_epoch,
        offsets=offsets_range,
    )
    escape = not as_json and not raw and sys.stdout.isatty()
    if not escape and hasattr(sys.stdout, "reconfigure"):  # a name's undecodable bytes go out as they are
        sys.stdout.reconfigure(errors="surrogateescape")
    out = JsonOut(iso_time=iso_time) if as_json else TextOut(iso_time=iso_time, escape=escape,
                                                              skip_record_metadata=skip_record_metadata)
    sys.exit(run_dump(files, file_type, opts, out).exit_code)
