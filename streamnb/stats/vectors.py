"""Numeric records as vectors over a growing attribute domain (for the continuous models).

A record ``{name: number}`` becomes a float vector indexed by the attribute's position in a
:class:`~streamnb.stats.Domain`, NaN where the value is missing (absent key, None, NaN). Numbers
are ``float`` and ``int`` (and their numpy types); anything else (a ``str``, a ``bool``, which
streamnb reads as a token's presence), or a value beyond ±``NUMERIC_LIMIT`` (±inf included),
or a name a state file cannot hold (a lone surrogate) is rejected
with an :class:`~streamnb.stats.InvalidRecord` naming the record and the field, and attributes
registered by a rejected record (or batch) are rolled back, so bad input changes nothing.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np

from streamnb.stats.codec import normalize_name
from streamnb.stats.domain import Domain
from streamnb.stats.frames import records_of
from streamnb.stats.schema import InvalidRecord, RecordName
from streamnb.stats.values import NUMERIC_LIMIT, numeric_out_of_range, refuse_unencodable

__all__ = ["encode_vector", "encode_vectors"]

# a field first met with a number is numeric for good (the continuous models read the others
# as naive-Bayes factors: models/factors.py)
_HINT = "the attribute is numeric, it takes numbers only"


def _number(value: Any, record: str, name: Any) -> float:
    # the common case, before the ABC checks (NaN fails the comparison: it is read below)
    if type(value) is float and -NUMERIC_LIMIT <= value <= NUMERIC_LIMIT:
        return value
    if value is None:
        return math.nan
    if isinstance(value, bool | np.bool_):
        raise InvalidRecord(record, name, f"bool value {value!r} (a token's presence); {_HINT}")
    if isinstance(value, numbers.Real):
        if -NUMERIC_LIMIT <= value <= NUMERIC_LIMIT:
            return float(value)
        if value != value:
            return math.nan
        raise InvalidRecord(record, name, numeric_out_of_range(value))
    raise InvalidRecord(record, name, f"{type(value).__name__} value {value!r} for a numeric "
                        f"attribute; {_HINT}")


def encode_vector(attributes: Domain, x: Any, record: str, grow: bool) -> np.ndarray:
    """``x`` as a vector of length ``len(attributes)`` (after growth when ``grow``); unknown
    attributes are ignored when not growing. Rolls ``attributes`` back on error."""
    if not isinstance(x, Mapping):
        raise InvalidRecord(record, None, f"expected a mapping of features, got "
                            f"{type(x).__name__}")
    size = len(attributes)
    slots, values = [], []
    try:
        for name, value in x.items():
            try:
                key = normalize_name(name)
            except TypeError as exc:
                raise InvalidRecord(record, name, str(exc)) from None
            v = _number(value, record, name)
            j = attributes.get(key)
            if j is None and grow:  # a new name: one a state file can hold
                refuse_unencodable([key], record=record)
                j = attributes.add(key)
            if j is not None:
                slots.append(j)
                values.append(v)
    except BaseException:
        attributes.truncate(size)
        raise
    out = np.full(len(attributes), math.nan)
    out[slots] = values
    return out


def encode_vectors(attributes: Domain, X: Any, where: str, grow: bool) -> np.ndarray:
    """A batch (DataFrame or sequence of mappings) as an (n, p) array, NaN for missing; row i
    is named ``"{where} i"`` in errors. All or nothing: on error ``attributes`` is rolled back."""
    size = len(attributes)
    try:
        frame = _numeric_frame(attributes, X, where, grow)
        if frame is not None:
            return frame
        rows = [encode_vector(attributes, x, RecordName(where, i), grow)
                for i, x in enumerate(records_of(X))]
    except BaseException:
        attributes.truncate(size)
        raise
    out = np.full((len(rows), len(attributes)), math.nan)
    for i, row in enumerate(rows):
        out[i, : len(row)] = row
    return out


def _numeric_frame(attributes: Domain, X: Any, where: str, grow: bool) -> np.ndarray | None:
    """The fast path for a DataFrame whose columns are all numeric (None otherwise)."""
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover
        return None
    if not isinstance(X, pd.DataFrame) or not all(
            pd.api.types.is_numeric_dtype(t) and not pd.api.types.is_bool_dtype(t)
            and not isinstance(t, pd.SparseDtype) for t in X.dtypes):
        return None
    values = X.to_numpy(dtype=np.float64, na_value=np.nan)
    bad = np.abs(values) > NUMERIC_LIMIT  # NaN (missing) compares False
    if bad.any():
        i, j = map(int, np.argwhere(bad)[0])
        raise InvalidRecord(RecordName(where, i), X.columns[j],
                            numeric_out_of_range(values[i, j]))
    columns = []
    for j, name in enumerate(X.columns):
        try:
            key = normalize_name(name)
        except TypeError as exc:
            raise InvalidRecord(where, name, str(exc)) from None
        if grow and key not in attributes:  # named by the first row with a value there
            observed = np.flatnonzero(~np.isnan(values[:, j]))
            refuse_unencodable([key], record=RecordName(where, int(observed[0]) if len(
                observed) else 0))
        columns.append(attributes.add(key) if grow else attributes.get(key))
    out = np.full((len(X), len(attributes)), math.nan)
    keep = [j for j, c in enumerate(columns) if c is not None]
    out[:, [columns[j] for j in keep]] = values[:, keep]
    return out
