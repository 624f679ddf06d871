"""Data sets: the SpamAssassin corpus and tabular UCI data sets from installed packages."""

from __future__ import annotations

from .registry import (
    PAPER_DATASETS,
    PaperDataset,
    Provenance,
    TabularDataset,
    UnknownDataset,
    load,
    names,
)
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
    "PAPER_DATASETS",
    "DatasetCorrupt",
    "DatasetUnavailable",
    "Message",
    "PaperDataset",
    "Provenance",
    "SpamAssassin",
    "TabularDataset",
    "UnknownDataset",
    "fetch_spamassassin",
    "iter_spamassassin_stream",
    "load",
    "load_spamassassin",
    "names",
]
