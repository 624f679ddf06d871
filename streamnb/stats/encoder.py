"""The record encoder: records in any accepted form → the columns of a :class:`Schema`.

One contract, two entry points:

- :func:`encode` — one record (a mapping) → :class:`Encoded`;
- :func:`encode_batch` — a batch (a sequence of mappings, a pandas DataFrame, a scipy sparse
  matrix, or an :class:`EncodedBatch` made by ``CountStatistics.encode``) → :class:`EncodedBatch`.

With ``grow`` (learning) new attributes and values are registered in the schema, in the order
encoding the records one by one registers them; a caller that rejects the records rolls the
schema back to a ``mark`` taken before. Without it (prediction) unknown attributes and values
are missing: they carry no information about the classes seen so far. An invalid record is
refused with :class:`InvalidRecord` naming the record (``where i`` for row i of a batch) and
the field.

The general path takes a record field by field through the value rules of
:mod:`streamnb.stats.values`. Its fast paths are private and give the same columns and the
same registrations (tests/test_encoder.py feeds the same records through every form): a dict's
present tokens in one kernel call (``kernels.encode_tokens``; a batch's, ``kernels.encode_many``,
new tokens registered in bulk), a text bag drawing each token once looked up in its vocabulary
in one call (:func:`text_columns`; a batch of such messages joined, :func:`_encode_texts`),
DataFrames a column at a time and sparse token matrices as arrays (``stats/frames.py``).

The registry is a :class:`Schema`, or a :class:`~streamnb.stats.Domain` of numeric attributes
only (the continuous models'): every field a number by the numeric kind's rule (a str or a bool
is refused, saying what such a model takes), the domain rolled back here on error (a batch:
all or nothing). Callers read views of the result: the columns, the numeric block as dense
vectors (:meth:`Encoded.vector`, :meth:`EncodedBatch.numeric_matrix`), the nominal block as
value ranks (:meth:`EncodedBatch.nominal_matrix`, the structure layer's).

:func:`text_lookup` keeps the lookups of the frozensets first met at one schema version, so that
scoring a message and then learning it looks its tokens up once (SpamFilter, a scored batch).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import chain
from typing import Any

import numpy as np

from streamnb._accel.kernels import encode_many, encode_tokens
from streamnb.stats.codec import normalize_name
from streamnb.stats.collector import paused_collector
from streamnb.stats.domain import Domain
from streamnb.stats.encoded import Encoded, EncodedBatch
from streamnb.stats.frames import (
    canonical_csr,
    frame_batch,
    has_binned,
    has_text,
    is_frame,
    is_sparse,
    records_of,
    sparse_batch,
)
from streamnb.stats.schema import Schema
from streamnb.stats.values import (
    MISSING,
    NOMINAL,
    NUMERIC,
    NUMERIC_LIMIT,
    TEXT,
    TOKEN,
    UNNAMED,
    InvalidRecord,
    RecordName,
    kind_of,
    named,
    numeric_out_of_range,
    numeric_value,
    refuse_unencodable,
    text_draws,
    token_present,
)

__all__ = ["encode", "encode_batch", "text_columns", "text_lookup"]

# frozensets whose lookups text_lookup keeps: the messages of a batch (a service's poll is
# 1,000) scored, then learned
_KEPT_LOOKUPS = 1024


def encode(schema: Schema | Domain, x: Any, where: str, grow: bool,
           fields: Iterable[Any] | None = None) -> Encoded:
    """Column indices of record ``x`` (``where`` names it in errors); ``fields``: only those
    of its fields (a caller that scored the others in a kernel, NaiveBayes' prediction; the
    pair tables' candidates). A :class:`Domain` for ``schema``: numeric attributes only
    (the continuous models'), rolled back here on error."""
    if isinstance(schema, Domain):
        return _encode_numbers(schema, x, where, grow, fields)
    if fields is None:
        return _encode(schema, x, where, grow)
    out = Encoded()
    try:
        for name in fields:
            _encode_field(schema, out, name, x[name], where, grow)
    except InvalidRecord as exc:
        if exc.record is not UNNAMED:
            raise
        raise named(exc, where) from None
    return out


def encode_batch(schema: Schema | Domain, X: Any, where: str, grow: bool) -> EncodedBatch:
    """Encode a batch (``where i`` names row i in errors), the same columns and registrations
    as :func:`encode` on each record in turn. The collector is paused meanwhile: the rows'
    encodings live until the batch is whole. A :class:`Domain`: all or nothing, rolled back
    here on error."""
    with paused_collector():
        if isinstance(schema, Domain):
            return _encode_number_batch(schema, X, where, grow)
        if isinstance(X, EncodedBatch):  # encoded once already (CountStatistics.encode)
            if grow:
                raise TypeError("learn an EncodedBatch with CountStatistics.update_many")
            return X.known(schema)
        if is_frame(X) and not any(type(t).__name__ == "SparseDtype" for t in X.dtypes) and (
                not has_text(schema, X)) and not has_binned(schema, X):
            return frame_batch(schema, X, where, grow)
        if is_sparse(X) and X.dtype.kind in "biu":
            csr = canonical_csr(X)
            batch = sparse_batch(schema, csr, where, grow)
            if batch is not None:
                return batch
            X = csr
        return _encode_records(schema, records_of(X), where, grow)


def text_lookup(schema: Schema, a: int, bag: Any) -> tuple[np.ndarray, list] | None:
    """``bag``'s tokens looked up in text attribute ``a``'s vocabulary when it draws each
    once (as :meth:`text_once` takes it): ``(columns, new)``, an int64 column per token in
    the bag's order, its tokens not registered yet listed in ``new`` and numbered from
    ``n_columns`` on (the columns :meth:`text_once` registers them at); None for any
    other value. The lookups of the frozensets first met at one schema version are kept
    (those met at an earlier one are forgotten; 1,024 at most, a service's poll), so that
    scoring a message and then learning it looks its tokens up once (SpamFilter), and a
    batch scored and then learned looks up only the tokens that were new: those an
    earlier message of the batch registered since take their columns, the others are
    numbered again."""
    vocabulary = schema.text_values[schema.slots[a]]
    if bag.__class__ is not frozenset:  # a set or dict could change under the same key
        return vocabulary.lookup(bag, True, schema.n_columns)
    kept = schema._text_lookups.get(id(bag))  # the entry holds the bag: ids are not reused
    if kept is None or kept[0] is not bag or kept[1] != a:
        found = vocabulary.lookup(bag, True, schema.n_columns)
        if found is None:
            return None
        if (schema._text_lookups_version != schema.version
                or len(schema._text_lookups) >= _KEPT_LOOKUPS):
            # a scored batch's lookups, not every message's (nor every message a model
            # that only predicts ever scored)
            schema._text_lookups.clear()
            schema._text_lookups_version = schema.version
        columns, new = found
    else:
        _, _, version, first_new, columns, new = kept
        if version == schema.version and first_new == schema.n_columns:
            return columns, new
        # the known tokens' columns stand (only a rollback takes columns back, and it
        # forgets every kept lookup); the new ones are looked up again
        if new:
            again = vocabulary.lookup(dict.fromkeys(new, True), True, schema.n_columns)
            columns = columns.copy()
            columns[columns >= first_new] = again[0]
            new = again[1]
    schema._text_lookups[id(bag)] = (bag, a, schema.version, schema.n_columns, columns, new)
    return columns, new

def text_columns(schema: Schema, a: int, bag: Any, grow: bool) -> np.ndarray | None:
    """The int64 columns of text attribute ``a``'s value ``bag`` when it draws each token
    once (a set or frozenset of str, or a dict of str to True), in the bag's order, its new
    tokens registered with ``grow`` (else left out); None, with nothing registered, for
    any other value (the text kind's general rule then decides). One kernel pass gives
    what that rule gives, in the same order."""
    if not grow:
        once = schema.text_values[schema.slots[a]].lookup(bag, False)
        return None if once is None else once[0]
    once = text_lookup(schema, a, bag)
    if once is None:
        return None
    columns, new = once
    if new:
        schema._add_text_values(a, new)  # at the columns the lookup numbered them with
    return columns


def _encode(schema: Schema, x: Any, record: str, grow: bool, batch: bool = False) -> Encoded:
    """Column indices of record ``x``.

    With ``grow`` (learning) new attributes and values are registered; a caller that
    rejects the record ``rollback``s to a ``mark`` taken before. Without it
    (prediction) unknown attributes and values are treated as missing: they carry no
    information about the classes seen so far. ``batch``: a row of an
    :class:`EncodedBatch` (its text draws kept as arrays, ``Encoded.text_chunks``).
    """
    if not isinstance(x, Mapping):
        raise InvalidRecord(record, None, f"expected a mapping of features, got "
                            f"{type(x).__name__}")
    out = Encoded(batch)
    try:
        if type(x) is dict:  # present tokens in one kernel call; the rest field by field
            out.token_columns, rest = encode_tokens(x, schema.attributes, grow)
            for name in rest:
                _encode_field(schema, out, name, x[name], record, grow)
        else:
            for name, value in x.items():
                _encode_field(schema, out, name, value, record, grow)
    except InvalidRecord as exc:
        if exc.record is not UNNAMED:
            raise
        raise named(exc, record) from None  # a registration's refusal names no record
    return out

def _encode_records(schema: Schema, records: list, where: str, grow: bool) -> EncodedBatch:
    """``encode`` for a batch: messages of tokens in one kernel call (their new tokens
    registered in bulk), the other records (``where i`` names row i in errors) one by one.
    Same ``grow`` contract, and the same registrations in the same order as ``encode`` on
    each record in turn."""
    try:
        return _encode_many(schema, records, where, grow)
    except InvalidRecord as exc:
        if exc.record is not UNNAMED:
            raise
        # a new name or token refused at its registration: the first record holding it is
        # the one that would have registered it
        row = next((i for i, x in enumerate(records) if _holds(x, exc.value)), 0)
        raise named(exc, RecordName(where, row)) from None

def _encode_many(schema: Schema, records: list, where: str, grow: bool) -> EncodedBatch:
    texts = _encode_texts(schema, records) if grow else None
    if texts is not None:
        return texts
    mark = schema.mark()
    columns, lengths, special, new = encode_many(records, schema.attributes, grow)
    lengths = np.frombuffer(lengths, dtype=np.int64)
    columns = np.frombuffer(columns, dtype=np.int64)
    rows = np.repeat(np.arange(len(records)), lengths)  # each column's record
    if new:
        # the kernel's records' new tokens, registered in record order around the others'
        columns = columns.copy()
        places = np.flatnonzero(columns < 0)
        before = np.searchsorted(rows[places], special).tolist()
    encoded, done = {}, 0
    for k, i in enumerate(special):
        if new and before[k] > done:
            _register_new_tokens(schema, new[done: before[k]])
            done = before[k]
        encoded[i] = _encode_row(schema, records[i], where, i, grow)
    if new and not special:
        # nothing registered since the kernel found them unknown: the distinct names take
        # the next columns in order, numbered here rather than looked up again (each
        # lookup of a name a cache miss in a large vocabulary)
        fresh = _numbered(schema, new)
        schema.add_tokens(list(fresh))
        columns[places] = list(map(fresh.__getitem__, new))
    elif new:
        _register_new_tokens(schema, new[done:])
        get, slots, kinds = schema.attributes.get, schema.slots, schema.kinds
        found = [get(name) for name in new]
        columns[places] = [slots[a] for a in found]
        if any(kinds[a] != TOKEN for a in found):
            # an earlier record of the batch registered a new token's name as another kind
            # (rare): the batch again, one record at a time, registers what those would
            schema.rollback(mark)
            return _encode_each(schema, records, where, grow)
    return EncodedBatch(len(records), rows, columns, encoded)

def _numbered(schema: Schema, names: Iterable[str]) -> dict[str, int]:
    """The distinct ``names``, new ones, each with the column registering them in order of
    first appearance gives it (the next columns), as encoding the records in turn would."""
    fresh = dict.fromkeys(names)
    return dict(zip(fresh, range(schema.n_columns, schema.n_columns + len(fresh)), strict=True))

def _encode_texts(schema: Schema, records: list) -> EncodedBatch | None:
    """``encode_many`` (growing) of messages of one text attribute each drawing its tokens
    once (``{"tokens": frozenset}``, SpamFilter's), when that attribute exists: the
    messages' lookups (:meth:`text_lookup`, kept when the batch was scored) joined and
    their new tokens numbered and registered at once, in order of first appearance — the
    columns and registrations of ``encode`` on each in turn, without looking each
    message's new tokens up again after the earlier ones registered theirs. None, with
    nothing registered, for any other batch."""
    first = records[0] if records else None
    if type(first) is not dict or len(first) != 1:
        return None
    (name,) = first
    a = schema.attributes.get(name) if type(name) is str else None
    if a is None or schema.kinds[a] != TEXT:
        return None
    lookups = []
    for x in records:
        if type(x) is not dict or len(x) != 1 or name not in x:
            return None
        found = text_lookup(schema, a, x[name])
        if found is None:
            return None
        lookups.append(found)
    lengths = [len(columns) for columns, _ in lookups]
    columns = np.concatenate([columns for columns, _ in lookups])
    new = list(chain.from_iterable(new for _, new in lookups))
    if new:
        # each message's new tokens are its columns from n_columns on, in the order of its
        # list; numbered again across the batch
        fresh = _numbered(schema, new)
        columns[columns >= schema.n_columns] = np.fromiter(
            map(fresh.__getitem__, new), np.int64, len(new))
        schema._add_text_values(a, list(fresh))
    n = len(records)
    return EncodedBatch.from_arrays(
        n, text_rows=np.repeat(np.arange(n), lengths), text_columns=columns,
        text_counts=np.ones(len(columns)),
        text_slots=np.full(len(columns), schema.slots[a], dtype=np.int64))

def _encode_each(schema: Schema, records: list, where: str, grow: bool) -> EncodedBatch:
    """``encode_many`` by the general encoder, record by record."""
    encoded = {i: _encode_row(schema, x, where, i, grow) for i, x in enumerate(records)}
    empty = np.zeros(0, dtype=np.int64)
    return EncodedBatch(len(records), empty, empty, encoded)

def _encode_row(schema: Schema, x: Any, where: str, i: int, grow: bool) -> Encoded:
    """Row ``i`` of a batch by the general encoder."""
    if isinstance(x, Mapping) and not x and grow:  # predicting one: the prior
        raise InvalidRecord(RecordName(where, i), None, "the record has no features")
    return _encode(schema, x, RecordName(where, i), grow, batch=True)

def _register_new_tokens(schema: Schema, names: list[str]) -> None:
    """Register the tokens among ``names`` not known yet, once each, in order."""
    known = schema.attributes
    fresh = [name for name in dict.fromkeys(names) if name not in known]
    if fresh:
        schema.add_tokens(fresh)

def _encode_field(schema: Schema, out: Encoded, name: Any, value: Any, record: str,
                 grow: bool) -> None:
    """Encode one field of a record into ``out``: what :meth:`encode` does for each
    field (callers that score some fields in a kernel encode the rest with this)."""
    if type(name) is not str:
        try:
            name = normalize_name(name)
        except TypeError as exc:
            raise InvalidRecord(record, name, str(exc)) from None
    a = schema.attributes.get(name)
    if a is None:
        if name in schema.declared_nominal:
            kind = NOMINAL
        else:
            try:
                kind = kind_of(value)
            except TypeError as exc:
                raise InvalidRecord(record, name, str(exc)) from None
            if kind is None or (kind in (TOKEN, TEXT) and not value):
                return  # missing, an absent token or an empty text: nothing to register
        if not grow:
            if kind == TEXT:  # unknown, so skipped, but a malformed bag is still an error
                text_draws(value, record, name)
            return
        if kind == NUMERIC and not schema.numeric:
            a = schema._add_attribute(name, NOMINAL)
            schema.binned.add(a)
        else:
            a = schema._add_attribute(name, kind)
    kind = schema.kinds[a]
    if kind == TOKEN:
        if token_present(value, record, name):
            out.token_columns.append(schema.slots[a])
    elif kind == TEXT:
        slot = schema.slots[a]
        values = schema.text_values[slot]
        columns = text_columns(schema, a, value, grow)
        if columns is not None:
            if out.text_chunks is not None:
                out.text_chunks.append((columns, None, slot))
                return
            out.text_columns += columns.tolist()
            out.text_counts += [1.0] * len(columns)
            out.text_slots += [slot] * len(columns)
            return
        found, counts = [], []
        for token, count in text_draws(value, record, name).items():
            column = values.get(token)
            if column is None:
                if not grow:
                    continue  # a token unseen in training: missing, like a nominal value
                column = schema._add_nominal_value(a, token)
            found.append(column)
            counts.append(count)
        if out.text_chunks is not None:
            out.text_chunks.append((np.asarray(found, dtype=np.int64),
                                    np.asarray(counts, dtype=np.float64), slot))
        else:
            out.text_columns += found
            out.text_counts += counts
            out.text_slots += [slot] * len(found)
    elif kind == NOMINAL:
        # a str of a nominal attribute (not a binned one's) is stored as it is: the common
        # case, without the value rules' type tests
        if value.__class__ is not str or a in schema.binned:
            value = schema.stored_value(a, value, record, name)
            if value is MISSING:
                return
        column = schema.nominal_values[schema.slots[a]].get(value)
        if column is None:
            if not grow:
                return
            column = schema._add_nominal_value(a, value)
        out.nominal_columns.append(column)
        out.nominal_slots.append(schema.slots[a])
    else:
        value = numeric_value(value, record, name)
        if value is not MISSING:
            out.numeric_slots.append(schema.slots[a])
            out.numeric_values.append(value)


def _holds(x: Any, value: Any) -> bool:
    """Whether record ``x`` has ``value`` as a name, a nominal value or a token of a bag."""
    if not isinstance(x, Mapping):
        return False
    if value in x:
        return True
    return any((v.__class__ is value.__class__ and v == value)
               or (isinstance(v, Mapping | list | tuple | set | frozenset) and value in v)
               for v in x.values())


# -- numeric attributes only (a Domain: the continuous models) -----------------------------------
# a field first met with a number is numeric for good (the continuous models read the others
# as naive-Bayes factors: models/factors.py)
_HINT = "the attribute is numeric, it takes numbers only"


def _number(value: Any, record: str, name: Any) -> float:
    """A field's value for a numeric-only domain: the numeric kind's rule, its refusals
    saying what such a model takes."""
    # the common case, before the rule's type tests (NaN fails the comparison: the rule's)
    if value.__class__ is float and -NUMERIC_LIMIT <= value <= NUMERIC_LIMIT:
        return value
    try:
        number = numeric_value(value, record, name)
    except InvalidRecord as exc:
        if isinstance(value, int | float | np.number) and not isinstance(value, bool):
            raise  # a number out of range: the hint would mislead
        raise InvalidRecord(record, name, f"{exc.reason}; {_HINT}") from None
    return np.nan if number is MISSING else number


def _encode_numbers(attributes: Domain, x: Any, record: str, grow: bool,
                    fields: Iterable[Any] | None = None, batch: bool = False) -> Encoded:
    """Record ``x`` over a numeric-only domain: its numeric slots are the attributes' indices
    (unknown ones left out without ``grow``). Rolls ``attributes`` back on error."""
    if not isinstance(x, Mapping):
        raise InvalidRecord(record, None, f"expected a mapping of features, got "
                            f"{type(x).__name__}")
    out = Encoded(batch)
    size = len(attributes)
    try:
        for name, value in (x.items() if fields is None else ((f, x[f]) for f in fields)):
            try:
                key = normalize_name(name)
            except TypeError as exc:
                raise InvalidRecord(record, name, str(exc)) from None
            v = _number(value, record, name)
            j = attributes.get(key)
            if j is None and grow:  # a new name: one a state file can hold
                refuse_unencodable([key], record=record)
                j = attributes.add(key)
            if j is not None and v == v:
                out.numeric_slots.append(j)
                out.numeric_values.append(v)
    except BaseException:
        attributes.truncate(size)
        raise
    return out


def _encode_number_batch(attributes: Domain, X: Any, where: str, grow: bool) -> EncodedBatch:
    """:func:`_encode_numbers` of each row of a batch (a DataFrame of numbers column by
    column); all or nothing."""
    size = len(attributes)
    try:
        batch = _number_frame(attributes, X, where, grow)
        if batch is None:
            records = records_of(X)
            rows = {i: _encode_numbers(attributes, x, RecordName(where, i), grow, batch=True)
                    for i, x in enumerate(records)}
            empty = np.zeros(0, dtype=np.int64)
            batch = EncodedBatch(len(records), empty, empty, rows)
    except BaseException:
        attributes.truncate(size)
        raise
    return batch


def _number_frame(attributes: Domain, X: Any, where: str, grow: bool) -> EncodedBatch | None:
    """A DataFrame whose columns are all numeric, as arrays (None for any other batch)."""
    if not is_frame(X):
        return None
    import pandas as pd  # (is_frame: pandas is there)

    if not all(pd.api.types.is_numeric_dtype(t) and not pd.api.types.is_bool_dtype(t)
               and not isinstance(t, pd.SparseDtype) for t in X.dtypes):
        return None
    values = X.to_numpy(dtype=np.float64, na_value=np.nan)
    bad = np.abs(values) > NUMERIC_LIMIT  # NaN (missing) compares False
    if bad.any():
        i, j = map(int, np.argwhere(bad)[0])
        raise InvalidRecord(RecordName(where, i), X.columns[j],
                            numeric_out_of_range(values[i, j]))
    slots = []
    for j, name in enumerate(X.columns):
        try:
            key = normalize_name(name)
        except TypeError as exc:
            raise InvalidRecord(where, name, str(exc)) from None
        if grow and key not in attributes:  # named by the first row with a value there
            observed = np.flatnonzero(~np.isnan(values[:, j]))
            refuse_unencodable([key], record=RecordName(
                where, int(observed[0]) if len(observed) else 0))
        slots.append(attributes.add(key) if grow else attributes.get(key))
    keep = [j for j, slot in enumerate(slots) if slot is not None]
    values = values[:, keep]
    rows, js = np.nonzero(~np.isnan(values))  # row by row, each row's in column order
    return EncodedBatch.from_arrays(
        len(X), numeric_rows=rows.astype(np.int64),
        numeric_slots=np.asarray([slots[j] for j in keep], dtype=np.int64)[js],
        numeric_values=values[rows, js])
