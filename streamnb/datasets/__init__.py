"""Data sets: the SpamAssassin and SMS spam corpora, and tabular UCI data sets from packages."""

from __future__ import annotations

from .registry import (
    PAPER_DATASETS,
    PaperDataset,
    Provenance,
    TabularDataset,
    UnknownDataset,
    load,
    load_file,
    names,
)
from .sms_spam import (
    SMS,
    SMSSpamCollection,
    fetch_sms_spam,
    iter_sms_spam_stream,
    load_sms_spam,
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
    "SMS",
    "DatasetCorrupt",
    "DatasetUnavailable",
    "Message",
    "PaperDataset",
    "Provenance",
    "SMSSpamCollection",
    "SpamAssassin",
    "TabularDataset",
    "UnknownDataset",
    "fetch_sms_spam",
    "fetch_spamassassin",
    "iter_sms_spam_stream",
    "iter_spamassassin_stream",
    "load",
    "load_file",
    "load_sms_spam",
    "load_spamassassin",
    "names",
]
