"""Batches of records in their accepted forms (sequences of mappings, pandas DataFrames,
scipy sparse matrices), and the record encoder's fast paths for frames and sparse matrices.

Callers encode through :mod:`streamnb.stats.encoder`, which picks these paths. A DataFrame row
is the record ``{column: value}`` without its missing (NaN/None) cells, and
:func:`frame_batch` encodes it exactly as the encoder's general path would encode that record,
attributes and values registered in the same order — but a column at a time, with
``pd.factorize`` instead of a dict lookup per cell, so a batch costs O(cells) numpy work and
O(distinct values) Python work. :func:`sparse_batch` does the same for a sparse matrix of
token presences (tests/test_encoder.py checks both equal to the general path).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from streamnb.stats.codec import normalize_name
from streamnb.stats.encoded import EncodedBatch
from streamnb.stats.schema import Schema
from streamnb.stats.values import (
    BAGS,
    MISSING,
    NOMINAL,
    NUMERIC_LIMIT,
    TEXT,
    TOKEN,
    InvalidRecord,
    RecordName,
    is_missing,
    kind_of,
    named,
    nominal_value,
    numeric_out_of_range,
    numeric_value,
    token_present,
)

__all__ = ["batch_rows", "canonical_csr", "frame_batch", "has_binned", "has_text", "is_frame",
           "is_sparse", "labels_of", "n_rows", "records_of", "sparse_batch"]


def is_frame(X: Any) -> bool:
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is only needed for DataFrame input
        return False
    return isinstance(X, pd.DataFrame)


def is_sparse(X: Any) -> bool:
    """Whether ``X`` is a scipy sparse matrix or array (without importing scipy for others)."""
    return type(X).__module__.startswith("scipy.sparse") and hasattr(X, "tocsr")


def n_rows(X: Any) -> int:
    """How many records a batch holds (a sparse matrix has no ``len``)."""
    return X.shape[0] if is_sparse(X) else len(X)


def batch_rows(X: Any, start: int, stop: int) -> Any:
    """Rows ``start:stop`` of a batch, in the batch's own form (a sequence, DataFrame or sparse
    matrix; an :class:`EncodedBatch` carries its registrations whole and cannot be cut)."""
    if is_sparse(X):
        return canonical_csr(X)[start:stop]
    if is_frame(X):
        return X.iloc[start:stop]
    if isinstance(X, EncodedBatch):
        raise TypeError("an EncodedBatch is learned whole: give the records to cut it")
    return X[start:stop]


def labels_of(y: Any) -> list:
    """A batch's labels as a list of Python values: a numpy array or pandas Series through
    ``tolist`` (its int64 or str_ scalars become int and str, whose check is one type test),
    anything else through ``list``."""
    return y.tolist() if hasattr(y, "tolist") and hasattr(y, "dtype") else list(y)


def canonical_csr(X: Any) -> Any:
    """``X`` in canonical CSR form: row-major, each row's columns sorted and listed once."""
    csr = X.tocsr()
    if not csr.has_canonical_format:
        csr = csr.copy()
        csr.sum_duplicates()
    return csr


def records_of(X: Any) -> list:
    """The records of a batch: a sequence of mappings, a DataFrame's rows without their
    missing cells (sparse frames read through their stored entries), or a scipy sparse
    matrix's rows as ``{column index: stored value}`` (column j is the attribute named j)."""
    if isinstance(X, Sequence) and not isinstance(X, str):
        return list(X)
    if is_sparse(X):
        csr = canonical_csr(X)
        return [dict(zip(csr.indices[lo:hi].tolist(), csr.data[lo:hi].tolist(), strict=True))
                for lo, hi in zip(csr.indptr[:-1].tolist(), csr.indptr[1:].tolist(),
                                  strict=True)]
    if is_frame(X):
        import pandas as pd

        columns = list(X.columns)
        if len(columns) and all(isinstance(t, pd.SparseDtype) for t in X.dtypes):
            csr = X.sparse.to_coo().tocsr()
            return [{columns[j]: v for j, v in zip(csr.indices[lo:hi].tolist(),
                                                   csr.data[lo:hi].tolist(), strict=True)}
                    for lo, hi in zip(csr.indptr[:-1], csr.indptr[1:], strict=True)]
        return [{k: v for k, v in r.items() if not is_missing(v)}
                for r in X.to_dict(orient="records")]
    raise TypeError(f"expected a pandas DataFrame or a sequence of mappings, got "
                    f"{type(X).__name__}")


def sparse_batch(schema: Schema, csr: Any, where: str, grow: bool) -> EncodedBatch | None:
    """A sparse matrix of token presences (bool or integer entries: column j is the token
    named j, present where its entry is non-zero, absent where it is 0): what
    the encoder's general path gives for :func:`records_of`'s records — the same columns, new
    tokens registered in the same order (first appearance, row by row) — with numpy
    operations on the stored entries instead of a dict lookup per token."""
    n, sizes = csr.shape[0], np.diff(csr.indptr)
    if grow and n and sizes.min() == 0:  # the record rule for {}
        row = int(np.flatnonzero(sizes == 0)[0])
        raise InvalidRecord(RecordName(where, row), None, "the record has no features")
    ids = csr.indices  # int32 or int64: numpy indexes with either
    rows = np.repeat(np.arange(n, dtype=np.int64), sizes)
    if not csr.data.all():
        present = csr.data != 0  # a stored zero is an absent token: nothing to register or count
        ids, rows = ids[present], rows[present]
    columns = schema.id_columns(ids)
    unknown = columns < 0
    if unknown.any():
        distinct, first, inverse = np.unique(ids[unknown], return_index=True,
                                             return_inverse=True)
        order = np.argsort(first)
        new = distinct[order]  # in order of first appearance
        if any(map(schema.attributes.__contains__, new.tolist())):
            # a name that another kind holds (or a token named True for 1): the record rules
            # decide, record by record (None: the encoder's general path)
            return None
        if grow:
            rank = np.empty_like(order)  # each distinct id's place among the new tokens
            rank[order] = np.arange(len(order))
            columns[unknown] = schema.n_columns + rank[inverse]  # their columns, in order
            schema.add_tokens(new.tolist())
        else:  # prediction leaves unknown tokens out
            rows, columns = rows[~unknown], columns[~unknown]
    empty = np.zeros(0, dtype=np.int64)
    return EncodedBatch.from_arrays(
        n, token_rows=rows, token_columns=columns, nominal_rows=empty,
        nominal_columns=empty, nominal_slots=empty, numeric_rows=empty, numeric_slots=empty,
        numeric_values=np.zeros(0))


def has_text(schema: Schema, frame: Any) -> bool:
    """Whether a column holds bags of tokens (text attributes are encoded row by row)."""
    for label, series in frame.items():
        if series.dtype != object:
            continue
        a = schema.attributes.get(label) if isinstance(label, str) else None
        if a is not None:
            if schema.kinds[a] == TEXT:
                return True
            continue
        observed = series.dropna()
        if len(observed) and isinstance(observed.iat[0], BAGS):
            return True
    return False


def has_binned(schema: Schema, frame: Any) -> bool:
    """Whether a discrete-only schema meets floats (binned by the record encoder)."""
    if schema.numeric:
        return False
    for label, series in frame.items():
        a = schema.attributes.get(label) if isinstance(label, str) else None
        if (a is not None and a in schema.binned) or series.dtype.kind == "f":
            return True
        if series.dtype == object and a is None:
            observed = series.dropna()
            if len(observed) and isinstance(observed.iat[0], float | np.floating):
                return True
    return False


class _Column:
    """One DataFrame column's plan: its attribute, kind and per-row codes."""

    def __init__(self, position: int, name: Any, kind: int) -> None:
        self.position, self.name, self.kind = position, name, kind
        self.rows = np.zeros(0, dtype=np.int64)  # rows with an (observed, present) value
        self.codes = np.zeros(0, dtype=np.int64)  # nominal: index into values
        self.values: list = []  # nominal: coerced distinct values
        self.first: np.ndarray = np.zeros(0, dtype=np.int64)  # nominal: first row of each
        self.numbers = np.zeros(0)  # numeric values


def frame_batch(schema: Schema, frame: Any, where: str, grow: bool) -> EncodedBatch:
    import pandas as pd

    n = len(frame)
    errors: list[tuple[int, int, InvalidRecord]] = []
    plans: list[_Column] = []
    for position, (label, series) in enumerate(frame.items()):
        try:
            name = normalize_name(label)
        except TypeError as exc:
            errors.append((0, position, InvalidRecord(RecordName(where, 0), label, str(exc))))
            continue
        missing = series.isna().to_numpy()
        observed = np.flatnonzero(~missing)
        if not len(observed):
            continue
        a = schema.attributes.get(name)
        if a is not None:
            kind = schema.kinds[a]
        elif name in schema.declared_nominal:
            kind = NOMINAL
        else:
            first = int(observed[0])
            try:
                kind = kind_of(series.iat[first])
            except TypeError as exc:
                errors.append((first, position, InvalidRecord(RecordName(where, first), name,
                                                              str(exc))))
                continue
        plan = _Column(position, name, kind)
        if kind == NOMINAL:
            try:
                codes, uniques = pd.factorize(series, use_na_sentinel=True)
            except TypeError:  # an unhashable cell: name the first bad one as encode would
                errors.append(_first_bad_nominal(series, observed, position, name, where))
                continue
            first_rows = np.full(len(uniques), n, dtype=np.int64)
            np.minimum.at(first_rows, codes[observed], observed)
            coerced = []
            for u, row in zip(uniques, first_rows.tolist(), strict=True):
                try:
                    coerced.append(nominal_value(u, RecordName(where, row), name))
                except InvalidRecord as exc:
                    errors.append((row, position, exc))
                    coerced.append(MISSING)
            keep = np.array([v is not MISSING for v in coerced] + [False])[codes]
            plan.rows = np.flatnonzero(keep)
            plan.codes = codes[plan.rows]
            plan.values, plan.first = coerced, first_rows
        elif kind == TOKEN:
            values = series.to_numpy()
            if values.dtype.kind in "biu":
                present = values != 0
            else:
                present = np.zeros(n, dtype=bool)
                for row in observed.tolist():
                    try:
                        present[row] = token_present(values[row], RecordName(where, row), name)
                    except InvalidRecord as exc:
                        errors.append((row, position, exc))
                        break
            plan.rows = np.flatnonzero(present)
        else:
            values = series.to_numpy()
            if values.dtype.kind in "fiu":
                numbers = values.astype(np.float64)
                bad = np.flatnonzero(np.abs(numbers) > NUMERIC_LIMIT)  # NaN compares False
                if len(bad):
                    row = int(bad[0])
                    errors.append((row, position, InvalidRecord(
                        RecordName(where, row), name, numeric_out_of_range(values[row]))))
            else:
                numbers = np.full(n, np.nan)
                for row in observed.tolist():
                    try:
                        value = numeric_value(values[row], RecordName(where, row), name)
                    except InvalidRecord as exc:
                        errors.append((row, position, exc))
                        break
                    numbers[row] = np.nan if value is MISSING else value
            plan.rows = np.flatnonzero(~np.isnan(numbers))
            plan.numbers = numbers[plan.rows]
        plans.append(plan)
    if errors:
        raise min(errors, key=lambda e: (e[0], e[1]))[2]
    _register(schema, plans, grow, where)
    return _assemble(schema, plans, n)


def _first_bad_nominal(series: Any, observed: np.ndarray, position: int, name: Any,
                       where: str) -> tuple[int, int, InvalidRecord]:
    for row in observed.tolist():
        try:
            nominal_value(series.iat[row], RecordName(where, row), name)
        except InvalidRecord as exc:
            return row, position, exc
    row = int(observed[0])
    return row, position, InvalidRecord(RecordName(where, row), name, "unhashable value")


def _register(schema: Schema, plans: list[_Column], grow: bool, where: str) -> None:
    """Register new attributes and values in the order the row-wise encoder would: by first
    row, then column position, an attribute before its first value."""
    if not grow:
        return
    events = []
    for plan in plans:
        if schema.attributes.get(plan.name) is None and len(plan.rows):
            events.append((int(plan.rows[0]), plan.position, 0, plan, None))
        if plan.kind == NOMINAL:
            a = schema.attributes.get(plan.name)
            known = schema.nominal_values[schema.slots[a]] if a is not None else {}
            for value, row in zip(plan.values, plan.first.tolist(), strict=True):
                if value is not MISSING and value not in known:
                    events.append((row, plan.position, 1, plan, value))
    for row, _, _, plan, value in sorted(events, key=lambda e: e[:3]):
        try:
            a = schema.attributes.get(plan.name)
            if a is None:
                a = schema._add_attribute(plan.name, plan.kind)
            if value is not None:
                schema._add_nominal_value(a, value)
        except InvalidRecord as exc:  # a registration's refusal names no record
            raise named(exc, RecordName(where, row)) from None


def _assemble(schema: Schema, plans: list[_Column], n: int) -> EncodedBatch:
    empty = np.zeros(0, dtype=np.int64)
    parts: dict[str, list[np.ndarray]] = {key: [] for key in (
        "token_rows", "token_columns", "nominal_rows", "nominal_columns", "nominal_slots",
        "numeric_rows", "numeric_slots", "numeric_values")}
    for plan in plans:
        a = schema.attributes.get(plan.name)
        if a is None or not len(plan.rows):  # unknown at prediction: missing
            continue
        slot = schema.slots[a]
        if plan.kind == TOKEN:
            parts["token_rows"].append(plan.rows)
            parts["token_columns"].append(np.full(len(plan.rows), slot, dtype=np.int64))
        elif plan.kind == NOMINAL:
            domain = schema.nominal_values[slot]
            lookup = np.array([domain.get(v, -1) if v is not MISSING else -1
                               for v in plan.values], dtype=np.int64)
            columns = lookup[plan.codes]
            seen = columns >= 0  # values unseen at prediction are missing
            parts["nominal_rows"].append(plan.rows[seen])
            parts["nominal_columns"].append(columns[seen])
            parts["nominal_slots"].append(np.full(int(seen.sum()), slot, dtype=np.int64))
        else:
            parts["numeric_rows"].append(plan.rows)
            parts["numeric_slots"].append(np.full(len(plan.rows), slot, dtype=np.int64))
            parts["numeric_values"].append(plan.numbers)
    joined = {key: np.concatenate(value) if value else
              (np.zeros(0) if key == "numeric_values" else empty)
              for key, value in parts.items()}
    return EncodedBatch.from_arrays(n, **joined)
