"""Persistence of partition states: snapshot files and changelog records.

Both use streamnb's state format (:mod:`streamnb.stats.persist`: a versioned header, raw
little-endian arrays, a SHA-256 checksum; never pickle) around the models' own
``to_state``/``from_state``. A snapshot holds every partition state this instance owns with the
offset each reflects; it is written to a temporary file and renamed over the old one, so a crash
at any moment leaves the previous snapshot or the new one. The ``generations - 1`` snapshots
before the newest are kept beside it (``snapshot.1.snb`` the one before, ``snapshot.2.snb``
…), each with its own checksum: a reader falls back to the newest one it can read. A changelog
record holds one
partition's state, zlib-compressed (counts compress well); its decompressed size is capped.
"""

from __future__ import annotations

import contextlib
import os
import time
import zlib
from collections.abc import Callable, Hashable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from streamnb.consumers.state import PartitionState
from streamnb.models.base import CountClassifier
from streamnb.stats.persist import (
    StateFileError,
    dumps_state,
    encode_header,
    header_int,
    loads_state,
    read_state,
    write_state,
)

__all__ = ["SNAPSHOT_FILE", "SNAPSHOT_VERSION", "SnapshotDirectoryUnwritable",
           "SnapshotsUnreadable", "decode_partition", "encode_partition", "generation_path",
           "probe_directory", "read_snapshot", "snapshot_paths", "write_snapshot"]

SNAPSHOT_FORMAT = "streamnb-service-snapshot"
CHANGELOG_FORMAT = "streamnb-partition-state"
SNAPSHOT_VERSION = 1
SNAPSHOT_FILE = "snapshot.snb"


def _pack(states: Mapping[Hashable, PartitionState]
          ) -> tuple[list[dict], dict[str, np.ndarray], dict[int, tuple]]:
    entries, arrays, packed = [], {}, {}
    for i, ((topic, partition), state) in enumerate(sorted(states.items())):
        header, model_arrays = state.model.to_state()
        header = encode_header(header)  # JSON once, for the model file too
        packed[id(state.model)] = (header, model_arrays)
        entries.append({"topic": topic, "partition": int(partition),
                        "offset": int(state.offset), "epoch": int(state.epoch),
                        "last": state.last, "drift": state.drift, "clock": int(state.clock),
                        "model": header})
        arrays.update({f"p{i}.{name}": array for name, array in model_arrays.items()})
    return entries, arrays, packed


def _unpack(entries: Any, arrays: Mapping[str, np.ndarray], source: str
            ) -> dict[tuple[str, int], PartitionState]:
    out = {}
    try:
        for i, entry in enumerate(entries):
            prefix = f"p{i}."
            model_arrays = {k[len(prefix):]: v for k, v in arrays.items() if k.startswith(prefix)}
            model = CountClassifier.from_state(entry["model"], model_arrays)
            # every integer within what Kafka and numpy hold (a partition is an int32)
            offset = header_int(entry["offset"], "offset")
            epoch = header_int(entry.get("epoch", 0), "epoch")  # absent before gap policies
            last = entry.get("last")  # absent before fingerprints: None (not checked)
            if last is not None:
                header_int(last, "record fingerprint")
            drift = entry.get("drift")  # absent before drift detectors: None
            clock = header_int(entry.get("clock", 0), "clock")  # absent before time half-lives
            partition = header_int(entry["partition"], "partition", high=2**31 - 1)
            if drift is not None and not (isinstance(drift, dict) and isinstance(
                    drift.get("detector"), str) and isinstance(drift.get("state"), dict)):
                raise ValueError(f"drift detector state {drift!r:.100} is malformed")
            if type(entry["topic"]) is not str:
                raise ValueError(f"topic {entry['topic']!r:.40} is not a string")
            out[(entry["topic"], partition)] = PartitionState(
                model, offset, epoch, last, drift, clock)
    except (AttributeError, KeyError, TypeError, ValueError, OverflowError) as exc:
        # StateFileError included: the model's and header_int's messages do not name the file
        raise StateFileError(f"{source}: inconsistent partition state: {exc}") from exc
    return out


class SnapshotsUnreadable(StateFileError):
    """Snapshot files exist, but not one generation can be read."""


class SnapshotDirectoryUnwritable(ValueError):
    """The snapshot directory cannot hold a snapshot (a bad ``--snapshot-dir``)."""


def probe_directory(directory: str | os.PathLike) -> None:
    """Do in ``directory`` (created if missing) what a snapshot does: create a file, write
    and fsync it, rename it, fsync the directory, delete the file; raise
    :class:`SnapshotDirectoryUnwritable` naming the directory and the failed step."""
    directory = Path(directory)
    probe = directory / f".probe-{os.getpid()}"
    renamed = directory / f".probe-{os.getpid()}.renamed"
    step = "creating it"
    try:
        directory.mkdir(parents=True, exist_ok=True)
        step = f"creating {probe.name}"
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            step = f"writing {probe.name}"
            os.write(fd, b"streamnb snapshot directory probe\n")
            os.fsync(fd)
        finally:
            os.close(fd)
        step = f"renaming {probe.name}"
        os.replace(probe, renamed)
        _fsync_directory(directory)
        step = f"deleting {renamed.name}"
        renamed.unlink()
    except OSError as exc:
        for leftover in (probe, renamed):
            with contextlib.suppress(OSError):
                leftover.unlink()
        raise SnapshotDirectoryUnwritable(
            f"snapshot directory {directory} (--snapshot-dir) cannot hold snapshots: "
            f"{step} failed: {exc.strerror or exc}") from None


def generation_path(directory: str | os.PathLike, generation: int) -> Path:
    """Generation 0 (the newest) is ``snapshot.snb``, generation g ``snapshot.<g>.snb``."""
    stem, dot, suffix = SNAPSHOT_FILE.rpartition(".")
    return Path(directory) / (SNAPSHOT_FILE if generation == 0 else
                              f"{stem}.{generation}{dot}{suffix}")


def snapshot_paths(directory: str | os.PathLike) -> list[Path]:
    """The snapshot generations present in ``directory``, newest first."""
    found = []
    for path in Path(directory).glob("snapshot*.snb"):
        middle = path.name[len("snapshot"):-len(".snb")]
        if middle == "":
            found.append((0, path))
        elif middle[:1] == "." and middle[1:].isdigit() and int(middle[1:]) > 0:
            found.append((int(middle[1:]), path))
    return [path for _, path in sorted(found)]


def write_snapshot(directory: str | os.PathLike, states: Mapping[Hashable, PartitionState],
                   meta: Mapping[str, Any] | None = None, generations: int = 1,
                   on_packed: Callable[[dict[int, tuple]], None] | None = None) -> Path:
    """Atomically write ``states`` (and free-form ``meta``) to ``directory/snapshot.snb``,
    keeping the ``generations - 1`` previous snapshots as ``snapshot.1.snb`` (the one before),
    ``snapshot.2.snb``, … (older ones are deleted). ``on_packed``, if given, is called with each
    state model's ``to_state()`` by ``id`` of the model before the file is written, for a
    caller that writes one of these models again before it changes (the service's model file
    at shutdown, in a thread meanwhile: serialising a large vocabulary twice was half of its
    shutdown, and its write the third of the rest).

    The new file is written and fsynced under a temporary name first; then each generation
    moves one place older (``snapshot.snb`` is hard-linked, not moved, so that a newest
    snapshot exists at every instant) and the new file is renamed over ``snapshot.snb``. A
    crash at any point leaves every file whole: at worst one generation is missing or present
    twice."""
    if not (isinstance(generations, int) and generations >= 1):
        raise ValueError(f"generations must be an int >= 1, got {generations!r}")
    directory = Path(directory)
    entries, arrays, packed = _pack(states)
    if on_packed is not None:
        on_packed(packed)
    header = {"format": SNAPSHOT_FORMAT, "version": SNAPSHOT_VERSION, "written": time.time(),
              "partitions": entries, "meta": dict(meta or {})}
    path = generation_path(directory, 0)
    if generations == 1 or not path.exists():
        write_state(path, header, arrays)
    else:
        staged = directory / f".{SNAPSHOT_FILE}.new"
        write_state(staged, header, arrays)  # fsynced, whole, under a name no reader takes
        for g in range(generations - 1, 1, -1):
            older = generation_path(directory, g - 1)
            if older.exists():
                os.replace(older, generation_path(directory, g))
        link = directory / f".{SNAPSHOT_FILE}.1.link"
        link.unlink(missing_ok=True)
        os.link(path, link)
        os.replace(link, generation_path(directory, 1))
        os.replace(staged, path)
        _fsync_directory(directory)
    for stale in snapshot_paths(directory)[generations:]:
        with contextlib.suppress(FileNotFoundError):
            stale.unlink()
    return path


def _fsync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def read_snapshot(directory: str | os.PathLike,
                  on_error: Callable[[Path, Exception, Path | None], None] | None = None
                  ) -> tuple[dict[tuple[str, int], PartitionState], dict[str, Any]]:
    """The states and meta of ``directory``'s newest readable snapshot generation;
    ``({}, {})`` if there is none. An unreadable generation (corrupted, truncated, empty,
    foreign) is reported to ``on_error(path, error, next_path or None)`` and the one before it
    is tried; if none can be read, :class:`SnapshotsUnreadable` is raised (without
    ``on_error``, the first error is raised as it is)."""
    paths = snapshot_paths(directory)
    errors = []
    for i, path in enumerate(paths):
        try:
            return read_snapshot_file(path)
        except (StateFileError, OSError) as exc:
            if on_error is None:
                raise
            errors.append(str(exc))
            on_error(path, exc, paths[i + 1] if i + 1 < len(paths) else None)
    if errors:
        raise SnapshotsUnreadable(f"no snapshot generation in {directory} can be read ("
                                  + "; ".join(errors) + ")")
    return {}, {}


def read_snapshot_file(path: str | os.PathLike
                       ) -> tuple[dict[tuple[str, int], PartitionState], dict[str, Any]]:
    """The states and meta of one snapshot file."""
    path = Path(path)
    header, arrays = read_state(path)
    if header.get("format") != SNAPSHOT_FORMAT:
        raise StateFileError(f"{path}: not a service snapshot (format {header.get('format')!r})")
    if header.get("version") != SNAPSHOT_VERSION:
        raise StateFileError(f"{path}: snapshot version {header.get('version')!r} is not "
                             f"supported (this streamnb reads version {SNAPSHOT_VERSION})")
    return _unpack(header.get("partitions"), arrays, str(path)), dict(header.get("meta", {}))


def encode_partition(key: tuple[str, int], state: PartitionState) -> bytes:
    """One partition's state as a changelog record value."""
    entries, arrays, _ = _pack({key: state})
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
