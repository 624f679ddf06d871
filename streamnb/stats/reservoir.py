"""A bounded, decayable, mergeable sample of recent records: the statistics of record subsets.

Counts of single attributes and pairs (:mod:`streamnb.stats.counts`, :mod:`streamnb.stats.pairs`)
cannot give what the selective classifiers of Singh & Provan need: their metrics condition on the
*instantiations of a selected set* Π of any size, and a Bayesian network's family may have
several attribute parents. Those need records. A :class:`Reservoir` keeps at most ``capacity``
of them, encoded as integer index arrays (the schema columns of the record's nominal values and
present tokens, and the class index), and from them builds, at relearn time, any contingency
table, with an estimated count per record.

Sampling is *priority sampling* (Duffield, Lund & Thorup 2007) with *forward decay* (Cormode,
Shkapenyuk, Srivastava & Xu 2009): record i, of current weight w_i, gets the priority
q_i = w_i / u_i with u_i uniform on (0, 1]; the reservoir keeps the ``capacity`` records of highest
priority and the threshold τ = the highest priority among those it dropped (the
``capacity + 1``-th highest overall). Each kept record stands for ŵ_i = max(w_i, τ) records:

- **exact below capacity**: nothing was ever dropped, τ = 0 and ŵ_i = w_i, so every table built
  from the reservoir equals the table of every record learned (decayed as the counts are);
- **unbiased above it**: Σ_{i∈S} ŵ_i is an unbiased estimate of the (decayed) count of any
  subset S of records, so a contingency table's cells estimate the true counts (Duffield et al.,
  Theorem 1). Without decay all w_i = 1, the sample is a uniform random sample of ``capacity``
  records and every ŵ_i = τ.

Forgetting: ``decay(f)`` multiplies every weight by f. Weights are stored in a *boosted* log
scale (a record learned when the boost is L has log weight L; ``decay`` adds −ln f to L and
touches nothing else), so decay is O(1) and old records, whose priorities were set against a
smaller boost, are the ones the next records displace: the sample leans towards recent records
exactly as far as the counts do.

Merge: the union of two reservoirs' records, the ``capacity`` of highest priority kept, τ the
highest dropped priority (including both thresholds). That is a priority sample of the union of
the two streams: exact while the union fits, unbiased otherwise, provided the two reservoirs drew
their u_i independently (give each shard its own ``seed``).

Memory: O(capacity × mean number of discrete cells per record) integers; numeric attributes are
not stored (the structures that use the reservoir are over discrete attributes). The tokens of a
text attribute are stored by their text columns when the caller offers them (the selective
models do): a text token can then be a binary attribute of a table, present iff its column is
among the record's cells (keys ``-1 - column``, as in :class:`~streamnb.stats.pairs.PairCounts`).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from streamnb.stats.encoded import EncodedBatch
from streamnb.stats.forgetting import check_decay_factor
from streamnb.stats.persist import header_int
from streamnb.stats.schema import NOMINAL, TOKEN, Schema

__all__ = ["ColumnValues", "Reservoir", "column_map"]


class ColumnValues:
    """Column → (attribute, value index) lookups that grow with a schema.

    A value's index within its attribute (its *rank*) is the order in which the value was
    registered, the order of :class:`~streamnb.stats.pairs.PairCounts`' tables: a token's present
    column has rank 0 (its absent value, which has no column, is rank 1). Columns are append-only
    once committed, so the arrays are extended, never recomputed: O(new columns) per call.

    Examples
    --------
    >>> from streamnb.stats.encoder import encode
    >>> s = Schema()
    >>> _ = encode(s, {"o": "sun", "t": True}, "r", grow=True); _ = encode(s, {"o": "rain"}, "r",
    ...                                                                    grow=True)
    >>> values = ColumnValues(s)
    >>> values.attribute().tolist(), values.rank().tolist()
    ([0, 1, 0], [0, 0, 1])

    """

    def __init__(self, schema: Schema) -> None:
        self.schema = schema
        self._attribute = np.zeros(16, dtype=np.int64)
        self._rank = np.zeros(16, dtype=np.int64)
        self._next_rank: list[int] = []  # per attribute: rank of its next nominal column
        self._done = 0

    def _sync(self) -> None:
        schema = self.schema
        n = schema.n_columns
        if n == self._done:
            return
        if n > len(self._attribute):
            size = max(n, 2 * len(self._attribute))
            self._attribute = np.resize(self._attribute, size)
            self._rank = np.resize(self._rank, size)
        if len(self._next_rank) < schema.n_attributes:
            self._next_rank.extend([0] * (schema.n_attributes - len(self._next_rank)))
        kinds, owner, next_rank = schema.kinds, schema.column_attribute, self._next_rank
        for j in range(self._done, n):
            a = owner[j]
            self._attribute[j] = a
            if kinds[a] == TOKEN:
                self._rank[j] = 0
            else:
                self._rank[j] = next_rank[a]
                next_rank[a] += 1
        self._done = n

    def attribute(self) -> np.ndarray:
        """The attribute of each column (a view)."""
        self._sync()
        return self._attribute[: self._done]

    def rank(self) -> np.ndarray:
        """The value index of each column within its attribute (a view)."""
        self._sync()
        return self._rank[: self._done]

    def value_matrix(self, rows: np.ndarray, columns: np.ndarray, n_records: int,
                     attributes: Sequence[int]) -> np.ndarray:
        """Records (given as flat ``rows``/``columns`` cell lists) as an ``(n_records,
        len(attributes))`` matrix of value indices: −1 for a missing nominal value, 1 (absent)
        for a token the record does not contain. ``attributes`` are attribute indices or text
        tokens' keys ``-1 - column`` (present: 0, absent: 1)."""
        schema = self.schema
        attribute, rank = self.attribute(), self.rank()
        keys = np.asarray(attributes, dtype=np.int64)
        position = np.full(max(schema.n_attributes, 1), -1, dtype=np.int64)
        plain = np.flatnonzero(keys >= 0)
        position[keys[plain]] = plain
        out = np.full((n_records, len(attributes)), -1, dtype=np.int64)
        tokens = [i for i, a in enumerate(attributes) if a < 0 or schema.kinds[a] == TOKEN]
        if tokens:
            out[:, tokens] = 1
        if len(columns):
            columns = np.asarray(columns, dtype=np.int64)
            where = position[attribute[columns]]
            keep = where >= 0
            out[rows[keep], where[keep]] = rank[columns[keep]]
            text = np.flatnonzero(keys < 0)
            if len(text):
                text_columns = -1 - keys[text]
                order = np.argsort(text_columns)
                sorted_columns = text_columns[order]
                at = np.minimum(np.searchsorted(sorted_columns, columns),
                                len(sorted_columns) - 1)
                hit = sorted_columns[at] == columns
                out[rows[hit], text[order[at[hit]]]] = 0
        return out


class Reservoir:
    """At most ``capacity`` encoded records, a priority sample of the (decayed) stream.

    Parameters
    ----------
    capacity
        Maximum number of records kept.
    seed
        Seed of the u_i; ``None`` draws one from the operating system. Reservoirs that will be
        merged must use different seeds.

    Examples
    --------
    >>> from streamnb.stats import CountStatistics
    >>> from streamnb.stats.encoder import encode
    >>> stats, sample = CountStatistics(), Reservoir(capacity=3, seed=0)
    >>> for x, y in [({"o": "sun"}, "+"), ({"o": "rain"}, "-"), ({"o": "sun", "t": 1}, "+")]:
    ...     stats.update(x, y)
    ...     enc = encode(stats.schema, x, "r", grow=False)
    ...     sample.add(enc.nominal_columns + enc.token_columns, stats.labels.index[y])
    >>> values, classes, weights = sample.records(stats.schema, [0, 1])   # o, t
    >>> values.tolist(), classes.tolist(), weights.tolist()   # below capacity: every record, w=1
    ([[0, 1], [1, 1], [0, 0]], [0, 1, 0], [1.0, 1.0, 1.0])
    >>> sample.add([0], 0); sample.size, sample.exact    # one more: one record dropped
    (3, False)

    References
    ----------
    N. Duffield, C. Lund, M. Thorup. Priority sampling for estimation of arbitrary subset sums.
    Journal of the ACM 54(6), 2007.
    G. Cormode, V. Shkapenyuk, D. Srivastava, B. Xu. Forward decay: a practical time decay model
    for streaming systems. ICDE 2009.

    """

    def __init__(self, capacity: int = 10_000, seed: int | None = None) -> None:
        if not (isinstance(capacity, int) and not isinstance(capacity, bool) and capacity >= 1):
            raise ValueError(f"capacity must be an int >= 1, got {capacity!r}")
        if seed is not None and not (isinstance(seed, int) and not isinstance(seed, bool)):
            raise ValueError(f"seed must be an int or None, got {seed!r}")
        self.capacity = capacity
        self.seed = seed
        self._rng = np.random.default_rng(seed)
        self._cells: list[np.ndarray] = []  # slot -> the record's columns
        self._class = np.zeros(0, dtype=np.int64)
        self._log_weight = np.zeros(0)  # boosted log weight at insertion
        self._log_priority = np.zeros(0)  # boosted log priority
        self._heap: list[tuple[float, int]] = []  # (log priority, slot): the lowest on top
        self._boost = 0.0
        self._threshold = -math.inf  # log τ, boosted
        self.n_offered = 0.0  # decayed number of records offered

    # -- views -------------------------------------------------------------------------------
    @property
    def size(self) -> int:
        return len(self._cells)

    @property
    def exact(self) -> bool:
        """True while no record was ever dropped: tables from the reservoir are exact counts."""
        return self._threshold == -math.inf

    def estimated_weights(self) -> np.ndarray:
        """ŵ_i = max(w_i, τ) of each kept record, in the current (decayed) scale."""
        n = self.size
        return np.exp(np.maximum(self._log_weight[:n], self._threshold) - self._boost)

    def cells(self) -> tuple[np.ndarray, np.ndarray]:
        """The kept records as flat ``(rows, columns)`` cell lists (rows index the slots)."""
        if not self._cells:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        lengths = np.fromiter((len(c) for c in self._cells), np.int64, len(self._cells))
        return (np.repeat(np.arange(len(self._cells)), lengths),
                np.concatenate(self._cells).astype(np.int64, copy=False))

    def classes(self) -> np.ndarray:
        return self._class[: self.size].copy()

    def records(self, schema: Schema, attributes: Sequence[int]
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Value-index matrix of ``attributes`` (see :meth:`ColumnValues.value_matrix`), class
        indices and estimated weights of the kept records."""
        for a in attributes:
            if a >= 0 and schema.kinds[a] not in (NOMINAL, TOKEN):
                raise ValueError(f"attribute {schema.attributes.name(a)!r} is numeric: the "
                                 "reservoir keeps discrete values only")
        rows, columns = self.cells()
        values = ColumnValues(schema).value_matrix(rows, columns, self.size, attributes)
        return values, self.classes(), self.estimated_weights()

    # -- learning ----------------------------------------------------------------------------
    def _grow_arrays(self, size: int) -> None:
        if size > len(self._class):
            size = min(max(size, 2 * len(self._class), 16), self.capacity)
            self._class = np.resize(self._class, size)
            self._log_weight = np.resize(self._log_weight, size)
            self._log_priority = np.resize(self._log_priority, size)

    def add(self, columns: Sequence[int], c: int) -> None:
        """Offer one record (its schema columns and class index) to the sample."""
        log_priority = self._boost - math.log(1.0 - self._rng.random())
        self.n_offered += 1.0
        if len(self._cells) < self.capacity:
            slot = len(self._cells)
            self._grow_arrays(slot + 1)
            self._cells.append(np.asarray(columns, dtype=np.int64))
            heapq.heappush(self._heap, (log_priority, slot))
        elif log_priority > self._heap[0][0]:
            dropped, slot = self._heap[0]
            heapq.heapreplace(self._heap, (log_priority, slot))
            self._threshold = max(self._threshold, dropped)
            self._cells[slot] = np.asarray(columns, dtype=np.int64)
        else:
            self._threshold = max(self._threshold, log_priority)
            return
        self._class[slot] = c
        self._log_weight[slot] = self._boost
        self._log_priority[slot] = log_priority

    def add_batch(self, classes: np.ndarray, batch: EncodedBatch, text: bool = False) -> None:
        """Offer a batch of encoded records of classes ``classes``; the same sample as
        :meth:`add` on each record in order (the kept set is the top ``capacity`` priorities of
        everything offered, whatever the order). With ``text`` the records' text columns are
        kept too (after their nominal and token cells, as :meth:`add` is given them)."""
        n = batch.n
        if not n:
            return
        log_priority = self._boost - np.log(1.0 - self._rng.random(n))
        self.n_offered += n
        rows = np.concatenate([batch.nominal_rows, batch.token_rows]).astype(np.int64)
        columns = np.concatenate([batch.nominal_columns, batch.token_columns]).astype(np.int64)
        if text and len(batch.text_columns):
            rows = np.concatenate([rows, batch.text_rows]).astype(np.int64)
            columns = np.concatenate([columns, batch.text_columns]).astype(np.int64)
        self._admit(np.asarray(classes, dtype=np.int64), rows, columns, n,
                    np.full(n, self._boost), log_priority, -math.inf)

    def _admit(self, classes: np.ndarray, rows: np.ndarray, columns: np.ndarray, n: int,
               log_weight: np.ndarray, log_priority: np.ndarray, threshold: float) -> None:
        """Keep the ``capacity`` highest priorities among the kept records and ``n`` offered
        ones (given as flat cells); everything else raises the threshold."""
        size = self.size
        self._threshold = max(self._threshold, threshold)
        everything = np.concatenate([self._log_priority[:size], log_priority])
        if size + n <= self.capacity:
            entering = np.arange(n)
            freed: list[int] = []
        else:
            keep = np.argpartition(-everything, self.capacity - 1)[: self.capacity]
            dropped = np.ones(size + n, dtype=bool)
            dropped[keep] = False
            self._threshold = max(self._threshold, float(everything[dropped].max()))
            freed = np.flatnonzero(dropped[:size]).tolist()
            entering = np.sort(keep[keep >= size]) - size
        order = np.argsort(rows, kind="stable")
        rows, columns = rows[order], columns[order]
        starts = np.searchsorted(rows, np.arange(n + 1))
        slots = freed + list(range(size, size + len(entering) - len(freed)))
        self._grow_arrays(size + len(entering) - len(freed))
        for slot, r in zip(slots, entering.tolist(), strict=True):
            cells = columns[starts[r]: starts[r + 1]].copy()
            if slot < size:
                self._cells[slot] = cells
            else:
                self._cells.append(cells)
        slots_array = np.asarray(slots, dtype=np.int64)
        self._class[slots_array] = classes[entering]
        self._log_weight[slots_array] = log_weight[entering]
        self._log_priority[slots_array] = log_priority[entering]
        self._heap = list(zip(self._log_priority[: self.size].tolist(), range(self.size),
                              strict=True))
        heapq.heapify(self._heap)

    # -- monoid operations -------------------------------------------------------------------
    def decay(self, factor: float) -> None:
        """Multiply every record's weight by ``factor`` in (0, 1] (O(1): the boost moves)."""
        check_decay_factor(factor)
        self._boost -= math.log(factor)
        self.n_offered *= factor

    def merge(self, other: Reservoir, column_map: np.ndarray, class_map: np.ndarray) -> None:
        """Add ``other``'s sample: ``column_map[j]`` is this schema's column of other's column
        ``j`` and ``class_map[c]`` this state's index of other's class ``c`` (see
        :func:`column_map`). The result is a priority sample of both streams (module
        docstring)."""
        shift = self._boost - other._boost
        rows, columns = other.cells()
        n = other.size
        self.n_offered += other.n_offered
        self._admit(np.asarray(class_map, dtype=np.int64)[other._class[:n]], rows,
                    np.asarray(column_map, dtype=np.int64)[columns], n,
                    other._log_weight[:n] + shift, other._log_priority[:n] + shift,
                    other._threshold + shift)

    # -- persistence -------------------------------------------------------------------------
    def to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        n = self.size
        rows, columns = self.cells()
        meta = {"capacity": self.capacity, "seed": self.seed,
                "rng": self._rng.bit_generator.state}
        arrays = {
            "cells": columns,
            "lengths": np.bincount(rows, minlength=n).astype(np.int64),
            "classes": self._class[:n].copy(),
            "log_weight": self._log_weight[:n].copy(),
            "log_priority": self._log_priority[:n].copy(),
            # boost, log threshold (−inf until a record is dropped), decayed records offered
            "scalars": np.array([self._boost, self._threshold, self.n_offered]),
        }
        return meta, arrays

    @classmethod
    def from_state(cls, meta: Mapping[str, Any], arrays: Mapping[str, np.ndarray]
                   ) -> Reservoir:
        sample = cls(capacity=header_int(meta["capacity"], "capacity"), seed=meta["seed"])
        state = meta["rng"]
        if state.get("bit_generator") != type(sample._rng.bit_generator).__name__:
            raise ValueError(f"reservoir random state of an unknown generator: "
                             f"{state.get('bit_generator')!r}")
        sample._rng.bit_generator.state = state
        lengths = np.asarray(arrays["lengths"], dtype=np.int64)
        n = len(lengths)
        if n > sample.capacity or int(lengths.sum()) != len(arrays["cells"]):
            raise ValueError(f"reservoir of capacity {sample.capacity} cannot hold {n} records "
                             f"of {int(lengths.sum())} cells ({len(arrays['cells'])} stored)")
        for name in ("classes", "log_weight", "log_priority"):
            if arrays[name].shape != (n,):
                raise ValueError(f"reservoir array {name!r}: expected shape ({n},), got "
                                 f"{arrays[name].shape}")
        cells = np.asarray(arrays["cells"], dtype=np.int64)
        sample._cells = [cells[lo:hi] for lo, hi in zip(
            np.concatenate([[0], np.cumsum(lengths)[:-1]]).tolist(),
            np.cumsum(lengths).tolist(), strict=True)]
        sample._class = np.array(arrays["classes"], dtype=np.int64)
        sample._log_weight = np.array(arrays["log_weight"], dtype=np.float64)
        sample._log_priority = np.array(arrays["log_priority"], dtype=np.float64)
        sample._boost, sample._threshold, sample.n_offered = (
            float(v) for v in arrays["scalars"])
        sample._heap = list(zip(sample._log_priority.tolist(), range(n), strict=True))
        heapq.heapify(sample._heap)
        return sample


def column_map(schema: Schema, other: Schema) -> np.ndarray:
    """This schema's column of each of ``other``'s columns, matched by attribute name and value
    (call after ``schema.absorb(other)``, which registers whatever was missing)."""
    out = np.empty(other.n_columns, dtype=np.int64)
    names = other.attributes.names()
    for j, (a, value) in enumerate(zip(other.column_attribute.tolist(), other.column_value,
                                           strict=True)):
        mine = schema.attributes.get(names[a])
        if schema.kinds[mine] == TOKEN:
            out[j] = schema.slots[mine]
        else:
            out[j] = schema.values_of(mine)[value]
    return out
