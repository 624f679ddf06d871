"""Persistence of partition states: snapshot files and changelog records.

Both use streamnb's state format (:mod:`streamnb.stats.persist`: a versioned header, raw
little-endian arrays, a SHA-256 checksum; never pickle) around the models' own
``to_state``/``from_state``. A snapshot holds every partition state this instance owns with the
offset each reflects; it is written to a temporary file and renamed over the old one, so a crash
at any moment leaves the previous snapshot or the new one. A changelog record holds one
partition's state, zlib-compressed (counts compress well); its decompressed size is capped.
"""

from __future__ import annotations

import os
import time
import zlib
from collections.abc import Hashable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from consumers.state import PartitionState
from streamnb.models.base import CountClassifier
from streamnb.stats.persist import StateFileError, dumps_state, loads_state, read_state, write_state

__all__ = ["SNAPSHOT_FILE", "SNAPSHOT_VERSION", "decode_partition", "encode_partition",
           "read_snapshot", "write_snapshot"]

SNAPSHOT_FORMAT = "streamnb-service-snapshot"
CHANGELOG_FORMAT = "streamnb-partition-state"
SNAPSHOT_VERSION = 1
SNAPSHOT_FILE = "snapshot.snb"


def _pack(states: Mapping[Hashable, PartitionState]) -> tuple[list[dict], dict[str, np.ndarray]]:
    entries, arrays = [], {}
    for i, ((topic, partition), state) in enumerate(sorted(states.items())):
        header, model_arrays = state.model.to_state()
        entries.append({"topic": topic, "partition": int(partition),
                        "offset": int(state.offset), "model": header})
        arrays.update({f"p{i}.{name}": array for name, array in model_arrays.items()})
    return entries, arrays


def _unpack(entries: Any, arrays: Mapping[str, np.ndarray], source: str
            ) -> dict[tuple[str, int], PartitionState]:
    out = {}
    try:
        for i, entry in enumerate(entries):
            prefix = f"p{i}."
            model_arrays = {k[len(prefix):]: v for k, v in arrays.items() if k.startswith(prefix)}
            model = CountClassifier.from_state(entry["model"], model_arrays)
            offset = int(entry["offset"])
            if offset < 0:
                raise ValueError(f"negative offset {offset}")
            out[(str(entry["topic"]), int(entry["partition"]))] = PartitionState(model, offset)
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, StateFileError):
            raise
        raise StateFileError(f"{source}: inconsistent partition state: {exc}") from exc
    return out


def write_snapshot(directory: str | os.PathLike, states: Mapping[Hashable, PartitionState],
                   meta: Mapping[str, Any] | None = None) -> Path:
    """Atomically write ``states`` (and free-form ``meta``) to ``directory/snapshot.snb``."""
    entries, arrays = _pack(states)
    header = {"format": SNAPSHOT_FORMAT, "version": SNAPSHOT_VERSION, "written": time.time(),
              "partitions": entries, "meta": dict(meta or {})}
    path = Path(directory) / SNAPSHOT_FILE
    write_state(path, header, arrays)
    return path


def read_snapshot(directory: str | os.PathLike
                  ) -> tuple[dict[tuple[str, int], PartitionState], dict[str, Any]]:
    """The states and meta of ``directory``'s snapshot; ``({}, {})`` if there is none. A
    corrupted or foreign file raises :class:`~streamnb.stats.persist.StateFileError`."""
    path = Path(directory) / SNAPSHOT_FILE
    if not path.exists():
        return {}, {}
    header, arrays = read_state(path)
    if header.get("format") != SNAPSHOT_FORMAT:
        raise StateFileError(f"{path}: not a service snapshot (format {header.get('format')!r})")
    if header.get("version") != SNAPSHOT_VERSION:
        raise StateFileError(f"{path}: snapshot version {header.get('version')!r} is not "
                             f"supported (this streamnb reads version {SNAPSHOT_VERSION})")
    return _unpack(header.get("partitions"), arrays, str(path)), dict(header.get("meta", {}))


def encode_partition(key: tuple[str, int], state: PartitionState) -> bytes:
    """One partition's state as a changelog record value."""
    entries, arrays = _pack({key: state})
    header = {"format": CHANGELOG_FORMAT, "version": SNAPSHOT_VERSION, "partitions": entries}
    return zlib.compress(dumps_state(header, arrays), 1)


def decode_partition(data: bytes, max_bytes: int) -> tuple[tuple[str, int], PartitionState]:
    """Inverse of :func:`encode_partition`; refuses to inflate past ``max_bytes``."""
    inflater = zlib.decompressobj()
    try:
        raw = inflater.decompress(data, max_bytes)
    except zlib.error as exc:
        raise StateFileError(f"changelog record: not a compressed state ({exc})") from None
    if inflater.unconsumed_tail:
        raise StateFileError(f"changelog record: inflates past {max_bytes} bytes")
    header, arrays = loads_state(raw, "changelog record")
    if header.get("format") != CHANGELOG_FORMAT or header.get("version") != SNAPSHOT_VERSION:
        raise StateFileError(f"changelog record: format {header.get('format')!r} version "
                             f"{header.get('version')!r} is not supported")
    states = _unpack(header.get("partitions"), arrays, "changelog record")
    if len(states) != 1:
        raise StateFileError(f"changelog record: {len(states)} partition states, expected 1")
    return next(iter(states.items()))
