"""Attributes of a record stream: their kinds, value domains and count-array columns.

Every (attribute, value) cell whose count is stored gets one *column*; all count arrays are
``(classes, columns)``, so a record is a list of column indices and a batch update is one
``np.bincount`` over flat ``class * columns + column`` indices.

An attribute's kind is fixed the first time it is seen, from the value's type (the kinds and
their value rules live in :mod:`streamnb.stats.values`, re-exported here):

- ``str`` → **nominal**: one column per value; a missing value (absent key, None, NaN) is not
  counted, so ``N_i(c)`` (class-c records where attribute i was observed) is stored per attribute.
- ``bool`` / ``int`` → **token** (binary presence, e.g. a word of a message, or a count from
  river's ``BagOfWords``): present iff the value is non-zero, and an absent key means *absent*,
  not missing. Only the "present" cell has a column; ``N_i(absent, c) = N(c) − N_i(present, c)``.
  ``#A_i = 2`` from the moment the token is first seen, and records before that are absent.
- ``float`` → **numeric**: per-class moments (Gaussian), NaN is missing; in a schema of
  discrete attributes (``numeric=False``) a nominal attribute of fine bins (``binned``).
- a bag of tokens → **text** (the multinomial event model of a message): a mapping
  ``{token: count}``, or a list/tuple of tokens (each occurrence one draw) or a set of tokens
  (each once: the "binary" multinomial). The message is a sequence of draws of one nominal
  attribute whose domain is the vocabulary, so every token of every text attribute gets one
  column, like a nominal value; ``value_counts`` holds the draws ``N_i(w, c)`` and
  ``draw_counts`` the total ``N_i(c) = Σ_w N_i(w, c)``. A token absent from a message costs
  nothing: learning and prediction are O(tokens in the message), whatever the vocabulary.

Attributes named in ``nominal`` are nominal whatever their values' type (ints used as category
codes, say). A value of the wrong type for an attribute's kind is rejected with an
:class:`InvalidRecord` naming the record and the field, and registrations made by a rejected
record are rolled back, so bad input never changes the domains. A name, nominal value or text
token a state file cannot hold (a lone surrogate) is refused where it would be registered, so
every encoder and model refuses it alike (``values.refuse_unencodable``: once per new value,
never per record); the encoding entry points name the record.
"""

from __future__ import annotations

import contextlib
import math
from array import array
from collections.abc import Hashable, Iterable, Mapping, MutableMapping
from typing import Any

import numpy as np

from streamnb._accel.names import NameTable
from streamnb.stats.binning import (
    FINE_BINS,
    bin_of,
    bin_position,
    fitting_shift,
    grid_bin,
    grid_name,
    grid_of,
)
from streamnb.stats.codec import normalize_name
from streamnb.stats.encoded import Registrations
from streamnb.stats.growing import GrowingArray
from streamnb.stats.text_vocabulary import TextVocabulary
from streamnb.stats.values import (
    KINDS,
    MISSING,
    NOMINAL,
    NUMERIC,
    TEXT,
    TOKEN,
    InvalidRecord,
    RecordName,
    nominal_value,
    numeric_value,
    refuse_unencodable,
)
from streamnb.stats.values_by_column import ValuesByColumn

__all__ = ["KINDS", "NOMINAL", "NUMERIC", "TEXT", "TOKEN", "InvalidRecord", "RecordName",
           "Schema"]

# sizes of the schema's parts (attributes, columns, nominal, numeric, text, tokens)
Mark = tuple[int, int, int, int, int, int]


class Schema:
    """Attribute registry (records are encoded by :mod:`streamnb.stats.encoder`).

    Parameters
    ----------
    nominal
        Names of attributes that are nominal whatever the type of their values.
    domains
        Declared value domains ``{attribute: [values]}`` of nominal attributes. Declared values
        are registered up front, so ``#A_i`` is the declared size from the first record on;
        values outside a declared domain still extend it (and ``#A_i``) when learned.
    numeric
        False for a model of discrete attributes only (TAN, AODE, the selective models): a new
        attribute of float values is then a nominal attribute whose values are its fine bins
        (``binned``; :mod:`streamnb.stats.binning`: the grid of at most ``FINE_BINS`` bins
        fitted to its values, or the octave bins of a schema saved before the grid, ``grid``
        False); a str value for it is refused, as for any numeric attribute. A value that
        widens the grid registers its bin at the wider width and leaves the attribute in
        ``regrid_pending`` until its owner sums the narrower bins' state into the wider
        (``regrid_exponents``).
    fine_bins
        The grid's bound, bins per binned attribute (``FINE_BINS`` unless the model reads only
        per-class counts of its bins and affords a finer grid); saved with the schema, and
        only schemas of one bound merge.

    """

    def __init__(self, nominal: Iterable[Hashable] = (),
                 domains: Mapping[Hashable, Iterable[Hashable]] | None = None,
                 numeric: bool = True, fine_bins: int = FINE_BINS) -> None:
        self.declared_nominal = frozenset(normalize_name(n) for n in nominal)
        self.numeric = numeric
        # name -> attribute: the vocabulary's size, hence a C table of UTF-8 names (~30 B a
        # token) rather than a dict of str and int objects (~150 B); kind and slot per attribute
        # in typed arrays for the same reason. A name's value in the table is a token's column
        # (-1 for the other kinds): all the encoding kernels read, from the entry their lookup
        # loads anyway, where a column array of its own cost one more cache miss per token.
        self.attributes = NameTable()
        self.kinds = array("b")
        self.slots = array("q")  # nominal/numeric/text: slot among its kind; token: its column
        self.nominal_attributes: list[int] = []  # nominal slot -> attribute
        self.nominal_values: list[dict[Any, int]] = []  # nominal slot -> {value: column}
        self.numeric_attributes: list[int] = []  # numeric slot -> attribute
        # nominal attributes of binned floats (a schema with numeric=False)
        self.binned: set[int] = set()
        self.grid = True  # binned attributes on the fitted grid (False: octave bins)
        self.fine_bins = fine_bins
        # per binned attribute on the grid: (exponent, lowest, highest index) of its bins, a
        # cache of what its registered bins say (cleared by a rollback)
        self._held: dict[int, tuple[int, int, int]] = {}
        # binned attributes whose bins are not all of the grid's width (or exceed its bound)
        self.regrid_pending: set[int] = set()
        self._grid_names: dict[tuple[int, int], str] = {}
        self.text_attributes: list[int] = []  # text slot -> attribute
        # text slot -> {token: column}: a message's ~200 lookups in a C table, not a dict
        self.text_values: list[TextVocabulary] = []
        self.column_value = ValuesByColumn(self.text_values)  # None: a token's own column
        self.version = 0
        # changes when attributes are added or forgotten, not when a known attribute gains a
        # value: what arrays sized by attributes and slots (not by columns) depend on
        self.shape_version = 0
        self._new_arrays()
        self._cache: dict[str, Any] = {}
        self._cache_version = -1
        # the encoder's kept text lookups (stats/encoder.py text_lookup), here because a
        # rollback takes back the columns they hold
        self._text_lookups: dict[int, tuple] = {}
        self._text_lookups_version = -1
        self._free, self._free_version = 0, -1
        for name, values in (domains or {}).items():
            name = normalize_name(name)
            a = self._add_attribute(name, NOMINAL)
            for value in values:
                self._add_nominal_value(a, nominal_value(value, "declared domain", name))

    # -- sizes -------------------------------------------------------------------------------
    @property
    def n_attributes(self) -> int:
        return len(self.kinds)

    @property
    def n_columns(self) -> int:
        return self._column_attribute.size

    @property
    def column_attribute(self) -> np.ndarray:
        """The attribute of each column (a view, O(1))."""
        return self._column_attribute.view()

    @property
    def n_nominal(self) -> int:
        return len(self.nominal_attributes)

    @property
    def n_numeric(self) -> int:
        return len(self.numeric_attributes)

    @property
    def n_text(self) -> int:
        return len(self.text_attributes)

    @property
    def n_tokens(self) -> int:
        return self._token_columns.size

    def attribute_size(self, a: int) -> int:
        """``#A_i``: 2 for a token, the domain size for a nominal attribute, the vocabulary
        seen so far for a text attribute."""
        kind = self.kinds[a]
        if kind == TOKEN:
            return 2
        if kind == NOMINAL:
            return len(self.nominal_values[self.slots[a]])
        if kind == TEXT:
            return len(self.text_values[self.slots[a]])
        raise ValueError(f"attribute {self.attributes.name(a)!r} is numeric: it has no #A_i")

    def free_values(self) -> int:
        """``Σ_i (#A_i − 1)`` over the discrete attributes (eq. 16's class-prior softening); a
        text attribute is one attribute whose domain is its vocabulary (docs/text.md)."""
        if self._free_version != self.version:
            self._free = self.n_tokens + sum(
                max(len(v) - 1, 0) for v in (*self.nominal_values, *self.text_values))
            self._free_version = self.version
        return self._free

    def arrays(self) -> dict[str, np.ndarray]:
        """Per-column index arrays: ``attribute`` (the column's attribute), ``nominal_slot`` (−1
        for tokens and text), ``text_slot`` (−1 but for text columns), ``is_token``, ``size``
        (#A_i of each column's attribute),
        ``attribute_size`` (#A_i per attribute, 0 for numeric ones) and ``token_columns``.
        O(columns) after the schema grew, so hot paths use the O(1) accessors below."""
        if self._cache_version != self.version:
            attribute = self._column_attribute.view()
            slot = self._column_slot.view()
            text = self._column_text.view()
            attribute_size = self._attribute_size.view()
            self._cache = {
                "attribute": attribute,
                "nominal_slot": slot,
                "text_slot": text,
                "is_token": (slot < 0) & (text < 0),
                "attribute_size": attribute_size,
                "size": attribute_size[attribute],
                "token_columns": self._token_columns.view(),
            }
            self._cache_version = self.version
        return self._cache

    def token_columns(self) -> np.ndarray:
        """The present-columns of all tokens (a view, O(1))."""
        return self._token_columns.view()

    def nominal_slots(self, columns: np.ndarray) -> np.ndarray:
        """Nominal slot of each of ``columns`` (−1 for a token or text column)."""
        return self._column_slot.data[columns]

    def text_slots(self, columns: np.ndarray) -> np.ndarray:
        """Text slot of each of ``columns`` (−1 for a nominal or token column)."""
        return self._column_text.data[columns]

    def column_sizes(self, columns: np.ndarray) -> np.ndarray:
        """#A_i of the attributes of ``columns``."""
        return self._attribute_size.data[self._column_attribute.data[columns]]

    # -- registration -----------------------------------------------------------------------
    def stored_value(self, a: int, value: Any, record: str, name: Any) -> Any:
        """Nominal attribute ``a``'s ``value`` as its domain stores it (``MISSING`` for None
        or NaN): a binned attribute's float is its bin (a str for it is refused)."""
        if a in self.binned:
            value = numeric_value(value, record, name)
            if value is MISSING or not self.grid:
                return value if value is MISSING else bin_of(value)
            held = self._held.get(a) or self.held_bins(a)
            if held is not None:  # a value inside the grid's range: the usual case
                e, lo, hi = held
                i = math.floor(math.ldexp(value, -e))
                if lo <= i <= hi:
                    return self._grid_name(i, e)
            return self._grid_name(*grid_bin(value, held, self.fine_bins))
        return nominal_value(value, record, name)

    def _grid_name(self, i: int, e: int) -> str:
        """:func:`~streamnb.stats.binning.grid_name`, kept: formatting two exact floats costs
        more than the rest of a value's encoding."""
        name = self._grid_names.get((i, e))
        if name is None:
            if len(self._grid_names) >= 65536:
                self._grid_names.clear()
            name = self._grid_names[(i, e)] = grid_name(i, e)
        return name

    # -- the fine grid of binned attributes (streamnb.stats.binning) --------------------------
    def held_bins(self, a: int) -> tuple[int, int, int] | None:
        """(exponent, lowest index, highest index) of grid attribute ``a``'s bins, the
        exponent the smallest holding them in ``fine_bins`` bins (None before a value)."""
        held = self._held.get(a)
        if held is None and self.nominal_values[self.slots[a]]:
            bins = [grid_of(name) for name in self.nominal_values[self.slots[a]]]
            e = max(exponent for _, exponent in bins)
            indices = [i >> (e - exponent) for i, exponent in bins]
            lo, hi = min(indices), max(indices)
            shift = fitting_shift(lo, hi, self.fine_bins)
            held = self._held[a] = (e + shift, lo >> shift, hi >> shift)
            if shift or any(exponent != e for _, exponent in bins):
                self.regrid_pending.add(a)
        return held

    def _hold_bin(self, a: int, name: str) -> None:
        """Widen grid attribute ``a``'s held bins by the new bin ``name``."""
        held = self._held.get(a)
        if held is None:  # (re)read from the registered bins, this one among them
            self.held_bins(a)
            return
        i, exponent = grid_of(name)
        e = max(held[0], exponent)
        lo, hi = min(held[1] >> (e - held[0]), i >> (e - exponent)), max(
            held[2] >> (e - held[0]), i >> (e - exponent))
        shift = fitting_shift(lo, hi, self.fine_bins)
        self._held[a] = (e + shift, lo >> shift, hi >> shift)
        if e + shift != exponent or e + shift != held[0]:
            self.regrid_pending.add(a)

    def regrid_exponents(self) -> dict[Any, int]:
        """Per attribute name whose bins are not all of its grid's width, the grid exponent
        they are to be read at (:func:`~streamnb.stats.binning.sum_columns` sums them); none
        is pending after."""
        pending, self.regrid_pending = self.regrid_pending, set()
        out = {}
        for a in sorted(pending):
            if a < self.n_attributes and a in self.binned:
                self._held.pop(a, None)  # read again: whether its bins still need it
                held = self.held_bins(a)
                if a in self.regrid_pending and held is not None:
                    out[self.attributes.name(a)] = held[0]
        self.regrid_pending.clear()
        return out

    def bin_position_of(self, a: int, value: float) -> float:
        """Where the fine bin of binned attribute ``a`` holding ``value`` starts, in the bins
        held now (a value beyond them: the bin of the current width it would fall in)."""
        if not self.grid:
            return bin_position(bin_of(value))
        held = self.held_bins(a)
        e = grid_bin(value, None)[1] if held is None else held[0]
        return math.ldexp(math.floor(math.ldexp(value, -e)), e)

    def _add_attribute(self, name: Any, kind: int) -> int:
        if not (name.__class__ is str and name.isascii()):  # (the usual name: nothing to do)
            refuse_unencodable([name])
        a = self.attributes.add(name, self.n_columns if kind == TOKEN else -1)
        self.kinds.append(kind)
        if kind == NOMINAL:
            self.slots.append(len(self.nominal_attributes))
            self.nominal_attributes.append(a)
            self.nominal_values.append({})
            self._attribute_size.append(0.0)
        elif kind == NUMERIC:
            self.slots.append(len(self.numeric_attributes))
            self.numeric_attributes.append(a)
            self._attribute_size.append(0.0)
        elif kind == TEXT:
            self.slots.append(len(self.text_attributes))
            self.text_attributes.append(a)
            self.text_values.append(TextVocabulary())
            self._attribute_size.append(0.0)
        else:
            column = self.n_columns
            self.slots.append(column)
            self._attribute_size.append(2.0)
            self._append_column(a, None, -1, -1)
            self._token_columns.append(column)
        self.version += 1
        self.shape_version += 1
        return a

    def add_tokens(self, names: list[str]) -> None:
        """Register new token attributes (distinct names not yet known) in bulk: what
        ``_add_attribute`` does for each, a list or array operation at a time (a stream's
        vocabulary grows by many tokens per batch)."""
        n = len(names)
        if n < 16:  # below this, the numpy calls' fixed cost exceeds the per-token appends'
            for name in names:
                self._add_attribute(name, TOKEN)
            return
        refuse_unencodable(names)
        a, column = self.n_attributes, self.n_columns
        self.attributes.add_new(names, column)
        self.kinds.extend(array("b", [TOKEN]) * n)
        self.slots.extend(range(column, column + n))
        self.column_value.extend_tokens(n)
        self._column_attribute.extend(np.arange(a, a + n))
        self._column_slot.fill(-1, n)
        self._column_text.fill(-1, n)
        self._token_columns.extend(np.arange(column, column + n))
        self._attribute_size.fill(2.0, n)
        self.version += 1
        self.shape_version += 1

    def id_columns(self, ids: np.ndarray) -> np.ndarray:
        """The columns of the tokens named by the non-negative ints ``ids`` (−1 where no token
        has that name): a sparse matrix's column indices, read as a batch."""
        if self._ids_upto < self.n_attributes:
            self._read_ids(self._ids_upto)
        # take: fancy indexing by an int32 array (scipy's usual indices) is 3x slower
        if not len(ids) or ids.max() < len(self._ids):
            return self._ids.take(ids)
        out = np.full(len(ids), -1, dtype=np.int64)
        inside = ids < len(self._ids)
        out[inside] = self._ids.take(ids[inside])
        return out

    def _read_ids(self, lo: int) -> None:
        """Map the ids of the tokens named by non-negative ints among the attributes from
        ``lo`` on, in bulk (a batch registers thousands)."""
        kinds, names, named = self.kinds, self.attributes.names(lo), None
        if set(map(type, names)) == {int}:  # a sparse stream's: numpy reads them at once
            with contextlib.suppress(OverflowError):
                named = np.array(names, dtype=np.int64)
        if named is not None:
            picked = (np.frombuffer(kinds, dtype=np.int8)[lo:] == TOKEN) & (named >= 0)
            attributes, named = np.flatnonzero(picked) + lo, named[picked]
        else:
            found = [a for a, name in enumerate(names, lo)
                     if kinds[a] == TOKEN and type(name) is int and 0 <= name < 2**63]
            attributes = np.array(found, dtype=np.int64)
            named = np.array([names[a - lo] for a in found], dtype=np.int64)
        if len(attributes):
            top = int(named.max())
            if top >= len(self._ids):
                grown = np.full(max(top + 1, 2 * len(self._ids)), -1, dtype=np.int64)
                grown[: len(self._ids)] = self._ids
                self._ids = grown
            self._ids[named] = np.frombuffer(self.slots, dtype=np.int64)[attributes]
            self._ids_set.extend(attributes)
            self._ids_named.extend(named)
        self._ids_upto = len(kinds)

    def _forget_ids(self, n_attributes: int) -> None:
        """The attributes from ``n_attributes`` on are gone (a rollback): so are their ids."""
        if self._ids_upto <= n_attributes:
            return
        keep = int(np.searchsorted(self._ids_set.view(), n_attributes))
        self._ids[self._ids_named.view()[keep:]] = -1
        self._ids_set.truncate(keep)
        self._ids_named.truncate(keep)
        self._ids_upto = n_attributes

    def _append_column(self, a: int, value: Any, slot: int, text_slot: int) -> None:
        self.column_value.append(value)
        self._column_attribute.append(a)
        self._column_slot.append(slot)
        self._column_text.append(text_slot)

    def values_of(self, a: int) -> MutableMapping[Any, int]:
        """``{value: column}`` of a nominal attribute, ``{token: column}`` of a text one."""
        return (self.text_values if self.kinds[a] == TEXT else self.nominal_values)[self.slots[a]]

    def _add_nominal_value(self, a: int, value: Any) -> int:
        """The column of a nominal value or text token, registered if new."""
        values = self.values_of(a)
        column = values.get(value)
        if column is None:
            text = self.kinds[a] == TEXT
            if value.__class__ is not int and value.__class__ is not bool:
                refuse_unencodable([value], self.attributes.name(a), what=(
                    "token" if text else "value"))
            column = values[value] = self.n_columns
            self._append_column(a, value, -1 if text else self.slots[a],
                                self.slots[a] if text else -1)
            self._attribute_size.data[a] += 1.0
            self.version += 1
            if self.grid and a in self.binned:
                self._hold_bin(a, value)
        return column

    def _add_text_values(self, a: int, tokens: list[str]) -> range:
        """Register distinct new tokens of text attribute ``a`` in bulk (what
        ``_add_nominal_value`` does for each, a list or array operation at a time: a message
        brings tens of new tokens); their columns."""
        refuse_unencodable(tokens, self.attributes.name(a), what="token")
        n, column, slot = len(tokens), self.n_columns, self.slots[a]
        columns = range(column, column + n)
        vocabulary = self.text_values[slot]
        vocabulary.register(tokens, columns)
        self.column_value.extend_text(slot, len(vocabulary) - n, n)
        self._column_attribute.fill(a, n)
        self._column_slot.fill(-1, n)
        self._column_text.fill(slot, n)
        self._attribute_size.data[a] += float(n)
        self.version += 1
        return columns

    def mark(self) -> Mark:
        """A point to roll back to if the records encoded after it are rejected."""
        return (self.n_attributes, self.n_columns, self.n_nominal, self.n_numeric, self.n_text,
                self.n_tokens)

    def rollback(self, mark: Mark) -> None:
        """Forget what was registered since ``mark``: O(registrations since), not O(schema)."""
        if mark == self.mark():  # nothing registered (the schema, its version, unchanged)
            return
        n_attributes, n_columns, n_nominal, n_numeric, n_text, n_tokens = mark
        # the values of older attributes registered since: the new columns that stand for one,
        # newest first (a text vocabulary forgets its newest token only); none when every new
        # column is a new token's own (a stream's usual growth, thousands a batch)
        older = () if self._only_tokens_since(mark) else zip(
            reversed(self.column_attribute[n_columns:].tolist()),
            reversed(self.column_value[n_columns:]), strict=True)
        for a, value in older:
            if value is not None and a < n_attributes:
                del self.values_of(a)[value]
                self._attribute_size.data[a] -= 1.0
        self._column_attribute.truncate(n_columns)
        self._column_slot.truncate(n_columns)
        self._column_text.truncate(n_columns)
        self._attribute_size.truncate(n_attributes)
        self._token_columns.truncate(n_tokens)
        self._forget_ids(n_attributes)
        self.attributes.truncate(n_attributes)
        del self.kinds[n_attributes:], self.slots[n_attributes:]
        self.column_value.truncate(n_columns)
        del self.nominal_attributes[n_nominal:], self.nominal_values[n_nominal:]
        del self.numeric_attributes[n_numeric:]
        self.binned = {a for a in self.binned if a < n_attributes}
        self._held.clear()  # read again from the bins that remain
        del self.text_attributes[n_text:], self.text_values[n_text:]
        self._text_lookups.clear()
        self.version += 1
        self.shape_version += 1

    def _only_tokens_since(self, mark: Mark) -> bool:
        """Whether everything registered since ``mark`` is new tokens, each with its own
        column (nothing else adds columns without attributes or attributes without one)."""
        n_new = self.n_attributes - mark[0]
        return (self.n_columns - mark[1] == n_new
                and self.kinds[mark[0]:].count(TOKEN) == n_new)

    def registered_since(self, mark: Mark) -> Registrations:
        """The attributes and columns registered since ``mark``, for :meth:`replay`."""
        n_attributes, n_columns = mark[0], mark[1]
        if self._only_tokens_since(mark):
            return Registrations.new_tokens(n_attributes, self.attributes.names(n_attributes))
        return Registrations(list(zip(self.attributes.names(n_attributes),
                                      self.kinds[n_attributes:], strict=True)),
                             list(zip(self.column_attribute[n_columns:].tolist(),
                                      self.column_value[n_columns:], strict=True)),
                             [a - n_attributes for a in self.binned if a >= n_attributes])

    def replay(self, registrations: Registrations) -> None:
        """Register again what :meth:`registered_since` returned, after a rollback to its mark:
        the same attribute and column indices, since both are numbered in order of creation
        and a column comes after its attribute (a token's column with it)."""
        if registrations.tokens is not None:  # new tokens only, each with its own column
            self.add_tokens(registrations.tokens)
            return
        attributes, columns = registrations
        first, added = self.n_attributes, 0
        tokens: list[Any] = []  # a run of new tokens (columns of their own), added in bulk

        def add_through(a: int) -> None:
            nonlocal added
            while first + added <= a:
                name, kind = attributes[added]
                if kind == TOKEN:
                    tokens.append(name)
                else:
                    self.add_tokens(tokens)
                    tokens.clear()
                    new = self._add_attribute(name, kind)
                    if added in registrations.binned:
                        self.binned.add(new)
                added += 1

        for a, value in columns:
            add_through(a)
            if (self.kinds[a] if a < first else attributes[a - first][1]) != TOKEN:
                self.add_tokens(tokens)  # their columns come before this one
                tokens.clear()
                self._add_nominal_value(a, value)
        add_through(first + len(attributes) - 1)
        self.add_tokens(tokens)

    # -- merge support ------------------------------------------------------------------------
    def absorb(self, other: Schema
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Register ``other``'s attributes and values; return its column, nominal-slot,
        numeric-slot and text-slot indices in this schema. Kind conflicts raise before anything
        changes."""
        names = other.attributes.names()
        attribute_map = [self.attributes.get(n) for n in names]
        for a, (name, mine) in enumerate(zip(names, attribute_map, strict=True)):
            if mine is not None and self.kinds[mine] != other.kinds[a]:
                raise ValueError(f"cannot merge: attribute {name!r} is {KINDS[self.kinds[mine]]}"
                                 f" here and {KINDS[other.kinds[a]]} in the other state")
            if mine is not None and (mine in self.binned) != (a in other.binned):
                raise ValueError(f"cannot merge: attribute {name!r} is binned numeric in one "
                                 "state and nominal in the other")
        if other.binned and other.grid != self.grid:
            if self.binned:
                raise ValueError("cannot merge: one state counts its floats in octave bins "
                                 "(saved before the fitted grid), the other on the grid")
            self.grid = other.grid
        if other.binned and other.fine_bins != self.fine_bins:
            if self.binned:
                raise ValueError(f"cannot merge: one state counts its floats in at most "
                                 f"{self.fine_bins} bins, the other in at most "
                                 f"{other.fine_bins}")
            self.fine_bins = other.fine_bins
        for a, name in enumerate(names):
            if attribute_map[a] is None:
                attribute_map[a] = self._add_attribute(name, other.kinds[a])
                if a in other.binned:
                    self.binned.add(attribute_map[a])
        columns = np.empty(other.n_columns, dtype=np.int64)
        for j, (a, value) in enumerate(zip(other.column_attribute.tolist(), other.column_value,
                                           strict=True)):
            mine = attribute_map[a]
            if other.kinds[a] == TOKEN:
                columns[j] = self.slots[mine]
            else:
                columns[j] = self._add_nominal_value(mine, value)
        text = np.array([self.slots[attribute_map[a]] for a in other.text_attributes],
                        dtype=np.int64)
        nominal = np.array([self.slots[attribute_map[a]] for a in other.nominal_attributes],
                           dtype=np.int64)
        numeric = np.array([self.slots[attribute_map[a]] for a in other.numeric_attributes],
                           dtype=np.int64)
        return columns, nominal, numeric, text

    # -- persistence (streamnb.stats.schema_state) ---------------------------------------------
    def to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """The schema as a state file holds it (:func:`~streamnb.stats.schema_state.
        schema_to_state`)."""
        from streamnb.stats.schema_state import schema_to_state
        return schema_to_state(self)

    def to_json(self) -> dict[str, Any]:
        """:meth:`to_state` as JSON alone, its arrays as lists."""
        from streamnb.stats.schema_state import schema_to_json
        return schema_to_json(self)

    @classmethod
    def from_state(cls, header: Mapping[str, Any], arrays: Mapping[str, np.ndarray]
                   ) -> Schema:
        """The schema :meth:`to_state` (or :meth:`to_json`, with no arrays) gave."""
        from streamnb.stats.schema_state import schema_from_state
        return schema_from_state(header, arrays)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Schema:
        return cls.from_state(data, {})

    def _new_arrays(self) -> None:
        # per-column arrays, kept current so estimators never rebuild them; attributes and
        # slots in int32 (the NameTable's limit is 2**31 - 1 attributes) to save 12 B a column
        self._column_attribute = GrowingArray(np.int32)
        self._column_slot = GrowingArray(np.int32)  # nominal slot, −1 for a token column
        self._column_text = GrowingArray(np.int32)  # text slot, −1 for the other columns
        self._token_columns = GrowingArray(np.int64)
        self._attribute_size = GrowingArray(np.float64)  # #A_i (0 for numeric attributes)
        # column of the token named by each int id (−1: none), for sparse-matrix input; kept
        # for the attributes below _ids_upto (read lazily, reset on rollback and rebuild)
        self._ids = np.full(0, -1, dtype=np.int64)
        self._ids_upto = 0
        self._ids_set = GrowingArray(np.int64)  # attributes whose ids are set, in order, to undo
        self._ids_named = GrowingArray(np.int64)  # and their ids

    def _rebuild_arrays(self, column_attribute: np.ndarray) -> None:
        """The per-column arrays of the columns' owning attributes, a numpy pass each."""
        self._new_arrays()
        kinds = np.asarray(self.kinds, dtype=np.int64)
        slots = np.asarray(self.slots, dtype=np.int64)
        kind, slot = kinds[column_attribute], slots[column_attribute]
        n = len(column_attribute)
        self._column_attribute.fill(column_attribute, n)
        self._column_slot.fill(np.where(kind == NOMINAL, slot, -1), n)
        self._column_text.fill(np.where(kind == TEXT, slot, -1), n)
        tokens = slot[kind == TOKEN]
        self._token_columns.fill(tokens, len(tokens))
        sizes = [2.0 if kind == TOKEN else float(len(self.values_of(a)))
                 if kind in (NOMINAL, TEXT) else 0.0 for a, kind in enumerate(self.kinds)]
        self._attribute_size.fill(sizes, len(sizes))
        self.version += 1
        self.shape_version += 1

