"""Datasets for evaluating streaming spam classifiers."""

from __future__ import annotations

from .spamassassin import (
    GROUPS,
    DatasetCorrupt,
    DatasetUnavailable,
    Message,
    SpamAssassin,
    fetch_spamassassin,
    iter_spamassassin_stream,
    load_spamassassin,
)

__all__ = [
    "GROUPS",
    "DatasetCorrupt",
    "DatasetUnavailable",
    "Message",
    "SpamAssassin",
    "fetch_spamassassin",
    "iter_spamassassin_stream",
    "load_spamassassin",
]
