"""Directory fuzzing: random broker log dirs built from real partition dirs, Kafka's -delete/-future/-stray dirs and
junk (lost+found, notes, FIFOs, sockets, devices, broken links); every scan must complete with the warning and error
findings of the partitions alone, and one `unknown_file` (info) finding per junk entry, saying `broker_would_not_start`
exactly where a folder was added (Kafka does not start on a directory that is not a partition dir).

    python fuzz/fuzz_log_dirs.py [--examples 50] [--seed N]

The default test run runs two examples of the same property (tests/test_log_dirs.py).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=50)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()

    import pytest

    os.environ["KFORENSICS_DIR_FUZZ_EXAMPLES"] = str(args.examples)
    test = Path(__file__).resolve().parent.parent / "tests" / "test_log_dirs.py"
    argv = ["-q", "-p", "no:cacheprovider", str(test), "-k", "directory_fuzz"]
    if args.seed is not None:
        argv.append(f"--hypothesis-seed={args.seed}")
    return pytest.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
