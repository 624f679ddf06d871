"""What the corpus loaders share: their errors, cache directory, checksums and atomic writes."""

from __future__ import annotations

import hashlib
import os
import secrets
from pathlib import Path

__all__ = ["DatasetCorrupt", "DatasetUnavailable", "atomic_write", "cache_directory", "sha256"]


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
