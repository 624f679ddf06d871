"""A record, or a batch of records, encoded as column indices of a :class:`~streamnb.stats.
schema.Schema`: what every count, pair table and model reads (the record encoder,
:mod:`streamnb.stats.encoder`, makes them)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import chain
from typing import TYPE_CHECKING, Any

import numpy as np

from streamnb.stats.values import TOKEN

if TYPE_CHECKING:
    from streamnb.stats.schema import Schema

__all__ = ["Encoded", "EncodedBatch", "Registrations"]



class Registrations:
    """What an encoding registered, in order: new attributes ``(name, kind)`` and new columns
    ``(attribute, value)`` (value None for a token's column); unpacks as that pair. A batch
    that registered only new tokens, each with its own column (a stream's usual growth,
    thousands a batch), keeps their names alone (``tokens``, the first numbered ``first``):
    the pairs are built only if read. ``binned``: the positions in ``attributes`` of the
    nominal attributes of binned floats (a schema with ``numeric=False``), which their kind
    alone does not tell apart from nominal ones."""

    __slots__ = ("_attributes", "_columns", "binned", "first", "tokens")

    def __init__(self, attributes: list[tuple[Any, int]], columns: list[tuple[int, Any]],
                 binned: Iterable[int] = ()) -> None:
        self._attributes: list[tuple[Any, int]] | None = attributes
        self._columns: list[tuple[int, Any]] | None = columns
        self.binned = frozenset(binned)
        self.tokens: list[Any] | None = None
        self.first = -1

    @classmethod
    def new_tokens(cls, first: int, names: list[Any]) -> Registrations:
        """New token attributes ``names``, numbered from ``first``, each with its column."""
        registrations = cls.__new__(cls)
        registrations._attributes = registrations._columns = None
        registrations.binned = frozenset()
        registrations.tokens, registrations.first = names, first
        return registrations

    @property
    def attributes(self) -> list[tuple[Any, int]]:
        if self._attributes is None:
            self._attributes = [(name, TOKEN) for name in self.tokens or ()]
        return self._attributes

    @property
    def columns(self) -> list[tuple[int, Any]]:
        if self._columns is None:
            self._columns = [(self.first + i, None) for i in range(len(self.tokens or ()))]
        return self._columns

    def __bool__(self) -> bool:
        return bool(self.tokens) if self.tokens is not None else bool(
            self._attributes or self._columns)

    def __iter__(self) -> Iterator[list]:
        return iter((self.attributes, self.columns))

    def __getitem__(self, i: int) -> list:
        return (self.attributes, self.columns)[i]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Registrations):
            return NotImplemented
        return ((self.attributes, self.columns, self.binned)
                == (other.attributes, other.columns, other.binned))

    __hash__ = None  # type: ignore[assignment]  # mutable lists inside

    def __repr__(self) -> str:
        binned = f", binned={sorted(self.binned)!r}" if self.binned else ""
        return f"Registrations({self.attributes!r}, {self.columns!r}{binned})"


class Encoded:
    """A record as column indices: nominal cells, present tokens, numeric values and the
    draws of text attributes (column, count and text slot of each distinct token)."""

    __slots__ = ("nominal_columns", "nominal_slots", "numeric_slots", "numeric_values",
                 "text_chunks", "text_columns", "text_counts", "text_slots", "token_columns")

    def __init__(self, batch: bool = False) -> None:
        # a row of a batch keeps its text draws as arrays, one (columns, counts or None for
        # ones, slot) per attribute, which the batch joins: a message's ~200 tokens as
        # lists of Python numbers were a third of a text batch's learning
        self.text_chunks: list[tuple[np.ndarray, np.ndarray | None, int]] | None = (
            [] if batch else None)
        self.nominal_columns: list[int] = []
        self.nominal_slots: list[int] = []
        self.token_columns: list[int] = []
        self.numeric_slots: list[int] = []
        self.numeric_values: list[float] = []
        self.text_columns: list[int] = []
        self.text_counts: list[float] = []
        self.text_slots: list[int] = []

    @property
    def columns(self) -> list[int]:
        return self.nominal_columns + self.token_columns

    def vector(self, width: int) -> np.ndarray:
        """The numeric block as a dense vector over ``width`` numeric slots, NaN where the
        value is missing (the continuous models' view)."""
        out = np.full(width, np.nan)
        out[self.numeric_slots] = self.numeric_values
        return out

    def is_empty(self) -> bool:
        return not (self.nominal_columns or self.token_columns or self.numeric_slots
                    or self.text_columns)


# an EncodedBatch's flat arrays, each kind's rows and cells (its other attributes, in its
# __slots__, say where it came from)
_PARTS = ("nominal_columns", "nominal_rows", "nominal_slots", "numeric_rows", "numeric_slots",
          "numeric_values", "text_columns", "text_counts", "text_rows", "text_slots",
          "token_columns", "token_rows")


class EncodedBatch:
    """A batch of records as flat index arrays, each part with the row it belongs to, in row
    order (a row's entries in the order its record gives them).

    One made by :meth:`CountStatistics.encode <streamnb.stats.CountStatistics.encode>` is
    encoded once for both prediction and learning: it carries the attributes and values its
    records would register (``registrations``, replayed by ``update_many``) and where the
    schema ended when it was encoded (``known_columns``, ``known_numeric``: prediction reads
    only the cells below, as an encoding without growth would have given)."""

    __slots__ = ("known_columns", "known_numeric", "n", "registrations", "schema_version",
                 *_PARTS)

    def __init__(self, n: int, token_rows: np.ndarray, token_columns: np.ndarray,
                 special: dict[int, Encoded]) -> None:
        self.n = n
        self.registrations: Registrations | None = None
        self.schema_version = -1
        self.known_columns = self.known_numeric = -1
        rows = list(special)
        encs = list(special.values())

        def flat(part: str, dtype: type) -> tuple[np.ndarray, np.ndarray]:
            if not encs:  # a batch of messages the kernel took whole: nothing to gather
                return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=dtype)
            lists = [getattr(e, part) for e in encs]
            lengths = list(map(len, lists))
            # chained in C: a generator frame per value would be a third of a text batch's
            # learning
            values = np.fromiter(chain.from_iterable(lists), dtype, sum(lengths))
            return np.repeat(np.asarray(rows, dtype=np.int64), lengths), values

        extra_rows, extra_columns = flat("token_columns", np.int64)
        if len(extra_rows):
            self.token_rows = np.concatenate([token_rows, extra_rows])
            self.token_columns = np.concatenate([token_columns, extra_columns])
        else:
            self.token_rows, self.token_columns = token_rows, token_columns
        if len(extra_rows) and len(token_rows):
            # the kernel's rows come first, the others after: back to row order (stable, so a
            # row keeps its own order), which does not depend on which rows the kernel took
            order = np.argsort(self.token_rows, kind="stable")
            self.token_rows, self.token_columns = self.token_rows[order], self.token_columns[order]
        self.nominal_rows, self.nominal_columns = flat("nominal_columns", np.int64)
        self.nominal_slots = flat("nominal_slots", np.int64)[1]
        self.numeric_rows, self.numeric_slots = flat("numeric_slots", np.int64)
        self.numeric_values = flat("numeric_values", np.float64)[1]
        chunks = [(row, chunk) for row, e in zip(rows, encs, strict=True)
                  for chunk in e.text_chunks]
        if chunks:
            lengths = [len(chunk[0]) for _, chunk in chunks]
            self.text_rows = np.repeat(np.asarray([row for row, _ in chunks], dtype=np.int64),
                                       lengths)
            self.text_columns = np.concatenate([chunk[0] for _, chunk in chunks])
            weighed = [chunk[1] for _, chunk in chunks]
            self.text_counts = np.ones(sum(lengths)) if not any(
                w is not None for w in weighed) else np.concatenate(
                [np.ones(n) if w is None else w for n, w in zip(lengths, weighed, strict=True)])
            self.text_slots = np.repeat(np.asarray([chunk[2] for _, chunk in chunks],
                                                   dtype=np.int64), lengths)
        else:
            self.text_rows = self.text_columns = self.text_slots = np.zeros(0, dtype=np.int64)
            self.text_counts = np.zeros(0)

    def __len__(self) -> int:
        return self.n

    def numeric_matrix(self, width: int) -> np.ndarray:
        """The numeric block as a dense ``(n, width)`` array over ``width`` numeric slots, NaN
        where a value is missing (the continuous models' view)."""
        out = np.full((self.n, width), np.nan)
        out[self.numeric_rows, self.numeric_slots] = self.numeric_values
        return out

    def nominal_matrix(self, schema: Schema, slots: Iterable[int]) -> np.ndarray:
        """The nominal block as an ``(n, len(slots))`` array of value ranks (a value's index in
        its attribute's domain, in order of registration) of nominal ``slots`` of ``schema``,
        −1 where a value is missing (the structure layer's view)."""
        slots = list(slots)
        out = np.full((self.n, len(slots)), -1, dtype=np.int64)
        place = np.full(len(schema.nominal_values), -1, dtype=np.int64)
        place[slots] = np.arange(len(slots))
        rank = np.full(schema.n_columns, -1, dtype=np.int64)
        for slot in slots:
            columns = list(schema.nominal_values[slot].values())
            rank[columns] = np.arange(len(columns))
        j = place[self.nominal_slots]
        mine = j >= 0
        out[self.nominal_rows[mine], j[mine]] = rank[self.nominal_columns[mine]]
        return out

    def known(self, schema: Schema) -> EncodedBatch:
        """The batch as an encoding without growth would give it: the cells of attributes and
        values ``schema`` knew before encoding (the others are missing at prediction)."""
        if self.registrations is None:
            return self
        if schema.version != self.schema_version:
            raise ValueError("the batch was encoded before the model's attributes changed "
                             "(it learned since?): encode it again")
        if not self.registrations:  # the batch registered nothing: all of it is known
            return self
        parts: dict[str, np.ndarray] = {}
        for rows, names, index, bound in (
                (self.token_rows, ("token_columns",), self.token_columns, self.known_columns),
                (self.nominal_rows, ("nominal_columns", "nominal_slots"), self.nominal_columns,
                 self.known_columns),
                (self.text_rows, ("text_columns", "text_counts", "text_slots"),
                 self.text_columns, self.known_columns),
                (self.numeric_rows, ("numeric_slots", "numeric_values"), self.numeric_slots,
                 self.known_numeric)):
            keep = index < bound
            whole = keep.all()  # most cells of a batch are known: no copies then
            parts[names[0].split("_")[0] + "_rows"] = rows if whole else rows[keep]
            for name in names:
                parts[name] = getattr(self, name) if whole else getattr(self, name)[keep]
        return EncodedBatch.from_arrays(self.n, **parts)

    @classmethod
    def from_arrays(cls, n: int, **parts: np.ndarray) -> EncodedBatch:
        """A batch from its flat arrays (the attribute names of this class; those not given
        are empty)."""
        batch = cls.__new__(cls)
        batch.n = n
        batch.registrations, batch.schema_version = None, -1
        batch.known_columns = batch.known_numeric = -1
        for name in _PARTS:
            setattr(batch, name, parts.pop(name) if name in parts else np.zeros(
                0, dtype=np.float64 if name in ("numeric_values", "text_counts") else np.int64))
        if parts:
            raise TypeError(f"not parts of a batch: {sorted(parts)}")
        return batch
