"""The versioned, checksummed state-file format (no pickle).

Layout of a file::

    b"STREAMNB"                magic, 8 bytes
    uint32 little-endian       format version
    uint64 little-endian       length H of the header
    H bytes                    UTF-8 JSON header: metadata + one descriptor per array
    array bytes                each array's raw little-endian bytes, in descriptor order
    32 bytes                   SHA-256 of everything above

Arrays are restored with ``np.frombuffer`` from a whitelist of numeric dtypes, and the header is
plain JSON, so loading a file never executes code. The checksum is verified before anything is
parsed, so a truncated or bit-flipped file is rejected as a whole. ``write_state`` writes to a
temporary file in the target directory, fsyncs it and renames it over the target: a crash leaves
either the old file or the new one, never a mixture.
"""

from __future__ import annotations

import hashlib
import math
import os
import struct
import tempfile
from itertools import chain, compress
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from streamnb.stats.collector import paused_collector

__all__ = ["FORMAT_VERSION", "INT64_MAX", "StateFileError", "dumps_state", "encode_header",
           "header_int", "loads_state", "read_state", "write_state"]

MAGIC = b"STREAMNB"
FORMAT_VERSION = 1
_PREFIX = struct.Struct("<8sIQ")
_DTYPES = {"<f8", "<f4", "<i8", "<i4", "<u8", "<u4", "|u1", "|b1", "<i2", "<u2"}


class StateFileError(ValueError):
    """A state file is missing, truncated, corrupted or of an unknown format version."""


INT64_MAX = 2**63 - 1  # Kafka's offsets, numpy's counters: what a header's integers must fit


def header_int(value: Any, what: str, low: int = 0, high: int = INT64_MAX) -> int:
    """``value``, a header's integer field, checked to be an int in ``[low, high]``: a
    checksummed file can still be crafted, and an integer past 64 bits would raise
    OverflowError far from the file that held it.

    >>> header_int(2**64, "offset", high=99)
    Traceback (most recent call last):
    ...
    streamnb.stats.persist.StateFileError: offset 18446744073709551616 is not an integer in [0, 99]
    """
    # a header handed over in memory (copy_model) may hold numpy integers; never a bool
    if not isinstance(value, int | np.integer) or isinstance(value, bool) or not (
            low <= value <= high):
        raise StateFileError(f"{what} {value!r:.40} is not an integer in [{low}, {high}]")
    return int(value)


_CONTAINERS = frozenset({dict, list, tuple})
_NOT_PLAIN = _CONTAINERS | {float}  # what a container is read for
_LARGE = 256  # items from which a container's kinds are read before it is pooled


def _refuse_non_finite(value: Any) -> None:
    """A float NaN or infinity anywhere in ``value`` raises ValueError, as ``json.dumps(...,
    allow_nan=False)`` would (msgspec writes them as null, which would load as None). Read a
    level of nesting at a time, each with C-speed passes (``map``, ``compress``): a schema
    holds 10⁵ ``[attribute, kind]`` pairs (many small containers, pooled into one pass) or a
    vocabulary's list of 10⁵ names (a large container, whose kinds of items are read in place
    and which is passed over when it holds neither floats nor containers)."""
    level = [value if type(value) in _CONTAINERS else [value]]
    while level:
        if dict in set(map(type, level)):
            level = [v.values() if type(v) is dict else v for v in level]
        large = list(compress(level, map(_LARGE.__lt__, map(len, level))))
        if large:
            level = [*compress(level, map(_LARGE.__ge__, map(len, level))),
                     *(v for v in large if set(map(type, v)) & _NOT_PLAIN)]
        items = list(chain.from_iterable(level))
        types = list(map(type, items))
        kinds = set(types)
        if float in kinds and not all(map(math.isfinite, compress(
                items, map({float}.__contains__, types)))):
            raise ValueError("Out of range float values are not JSON compliant")
        level = list(compress(items, map(_CONTAINERS.__contains__, types))) \
            if kinds & _CONTAINERS else []


def encode_header(header: dict[str, Any] | msgspec.Raw) -> msgspec.Raw:
    """``header`` as JSON once, to be written in several files as it is (the service's
    snapshot and model file hold the same model): msgspec, 4× ``json.dumps`` on a vocabulary's
    lists. Non-finite floats are refused."""
    if isinstance(header, msgspec.Raw):
        return header
    _refuse_non_finite(header)
    return msgspec.Raw(msgspec.json.encode(header))


def dumps_state(header: dict[str, Any] | msgspec.Raw, arrays: dict[str, np.ndarray]) -> bytes:
    """The state file of ``header`` (a JSON-able dict, or :func:`encode_header`'s bytes) and
    ``arrays``."""
    descriptors = []
    blobs = []
    for name, array in arrays.items():
        array = np.ascontiguousarray(array)
        dtype = array.dtype.newbyteorder("<") if array.dtype.byteorder == ">" else array.dtype
        array = array.astype(dtype, copy=False)
        if dtype.str not in _DTYPES:
            raise TypeError(f"array {name!r} has dtype {dtype.str}, not a plain numeric dtype")
        blob = array.tobytes()
        descriptors.append({"name": name, "dtype": dtype.str, "shape": list(array.shape),
                            "nbytes": len(blob)})
        blobs.append(blob)
    head = msgspec.json.encode({"meta": encode_header(header), "arrays": descriptors})
    body = _PREFIX.pack(MAGIC, FORMAT_VERSION, len(head)) + head + b"".join(blobs)
    return body + hashlib.sha256(body).digest()


def loads_state(data: bytes, source: str = "<bytes>") -> tuple[dict[str, Any],
                                                                 dict[str, np.ndarray]]:
    if len(data) < _PREFIX.size + 32:
        raise StateFileError(f"{source}: {len(data)} bytes is too short for a streamnb state "
                             "file (truncated?)")
    magic, version, head_len = _PREFIX.unpack_from(data)
    if magic != MAGIC:
        raise StateFileError(f"{source}: not a streamnb state file (bad magic {magic!r})")
    if version != FORMAT_VERSION:
        raise StateFileError(f"{source}: format version {version} is not supported "
                             f"(this streamnb reads version {FORMAT_VERSION})")
    body, digest = data[:-32], data[-32:]
    if hashlib.sha256(body).digest() != digest:
        raise StateFileError(f"{source}: checksum mismatch: the file is truncated or corrupted")
    try:
        with paused_collector():
            try:
                head = msgspec.json.decode(body[_PREFIX.size:_PREFIX.size + head_len])
            except RecursionError:  # msgspec's own bound on nesting (the interpreter's limit)
                raise StateFileError(f"{source}: malformed header: nested too deep") from None
        offset = _PREFIX.size + head_len
        arrays = {}
        for d in head["arrays"]:
            if d["dtype"] not in _DTYPES:
                raise StateFileError(f"{source}: array {d['name']!r} has dtype {d['dtype']}")
            end = offset + d["nbytes"]
            if end > len(body):
                raise StateFileError(f"{source}: array {d['name']!r} runs past the end")
            array = np.frombuffer(body[offset:end], dtype=d["dtype"]).reshape(d["shape"])
            arrays[d["name"]] = array.copy()
            offset = end
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, StateFileError):
            raise
        raise StateFileError(f"{source}: malformed header: {exc}") from exc
    if offset != len(body):
        raise StateFileError(f"{source}: {len(body) - offset} unexpected trailing bytes")
    return head["meta"], arrays


def write_state(path: str | os.PathLike, header: dict[str, Any] | msgspec.Raw,
                arrays: dict[str, np.ndarray]) -> None:
    """Atomically write a state file (temp file + fsync + rename + directory fsync)."""
    path = Path(path)
    data = dumps_state(header, arrays)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def read_state(path: str | os.PathLike) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise StateFileError(f"{path}: no such state file") from None
    return loads_state(data, str(path))
