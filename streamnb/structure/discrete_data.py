"""Weighted records of discrete attributes, encoded as value indices (:class:`DiscreteData`): the
input of Info-AS (:mod:`.selection`), K2 (:mod:`.k2`), CB (:mod:`.cb`) and the wrappers, e.g.
from :class:`streamnb.stats.Reservoir`.

Each record carries a weight (a reservoir's estimated count of the records it stands for, or a
decayed weight); tables built from the records sum weights.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from streamnb.stats.codec import normalize_name
from streamnb.stats.encoder import encode_batch
from streamnb.stats.schema import Schema

__all__ = ["DiscreteData", "index_records"]


def index_records(records: Sequence[Mapping[Hashable, Any]],
                  names: Sequence[Hashable] | None = None
                  ) -> tuple[list[Hashable], np.ndarray, list[dict[Any, int]]]:
    """Records of nominal values as an ``(m, n)`` matrix of value indices: the encoding of the
    structure layer's reference counts (``PairwiseCounts.from_records``,
    ``DiscreteData.from_records``). The record encoder's, every attribute nominal whatever its
    values' type (str, int, bool; an integral float is its int): another value is refused
    with an :class:`~streamnb.stats.InvalidRecord` naming the record and the field.

    Returns the attribute names (default: every key, in order of first appearance; keys not
    in ``names`` are ignored), the matrix (−1 where the value is missing: an absent key, None
    or NaN) and each attribute's ``{value: index}`` in order of first appearance.

    Examples
    --------
    >>> names, matrix, domains = index_records([{"a": "x", "b": 1}, {"a": None, "b": 2},
    ...                                         {"b": 1, "a": "y"}])
    >>> names, matrix.tolist(), domains
    (['a', 'b'], [[0, 0], [-1, 1], [1, 0]], [{'x': 0, 'y': 1}, {1: 0, 2: 1}])

    """
    records = list(records)
    names = list(dict.fromkeys(k for r in records for k in r) if names is None else names)
    # declared up front, so that each attribute is nominal and its slot is its place here
    schema = Schema(domains=dict.fromkeys(names, ()))
    wanted = set(names)
    kept = [{k: v for k, v in r.items() if k in wanted} for r in records]
    # a record with none of the attributes is all missing (the encoder refuses to learn one)
    some = [i for i, r in enumerate(kept) if r]
    batch = encode_batch(schema, [kept[i] for i in some], "record", grow=True)
    slots = [schema.slots[schema.attributes.get(normalize_name(name))] for name in names]
    matrix = np.full((len(records), len(names)), -1, dtype=np.int64)
    matrix[some] = batch.nominal_matrix(schema, slots)
    domains = [{v: r for r, v in enumerate(schema.nominal_values[slot])} for slot in slots]
    return names, matrix, domains


@dataclass(frozen=True, eq=False)
class DiscreteData:
    """Weighted records of discrete attributes, encoded as value indices.

    Parameters
    ----------
    values
        ``(m, n)`` integer value indices of the ``n`` attributes, −1 for a missing value.
    classes
        ``(m,)`` class indices in ``[0, n_classes)``.
    cardinalities
        ``(n,)`` number of values of each attribute (#A_i); every index is below it.
    n_classes
        Number of classes k.
    names
        Attribute names, default ``0 .. n-1``.
    weights
        ``(m,)`` non-negative record weights; default all 1.
    class_names, value_names
        Optional labels of the classes and of each attribute's values (for display and
        :meth:`from_records`).

    Examples
    --------
    >>> data = DiscreteData.from_records([{"a": "x", "b": "u"}, {"a": "y"}], ["+", "-"])
    >>> data.values.tolist(), data.cardinalities.tolist(), data.class_names
    ([[0, 0], [1, -1]], [2, 1], ('+', '-'))

    """

    values: np.ndarray
    classes: np.ndarray
    cardinalities: np.ndarray
    n_classes: int
    names: tuple[Hashable, ...] | None = None
    weights: np.ndarray | None = None
    class_names: tuple[Hashable, ...] | None = None
    value_names: tuple[tuple[Hashable, ...], ...] | None = None

    def __post_init__(self) -> None:
        values = np.asarray(self.values, dtype=np.int64)
        if values.ndim != 2:
            raise ValueError(f"values must be a 2-d (records, attributes) array, got shape "
                             f"{values.shape}")
        m, n = values.shape
        classes = np.asarray(self.classes, dtype=np.int64).reshape(-1)
        if classes.shape != (m,):
            raise ValueError(f"classes must have shape ({m},), got {classes.shape}")
        cards = np.asarray(self.cardinalities, dtype=np.int64).reshape(-1)
        if cards.shape != (n,):
            raise ValueError(f"cardinalities must have shape ({n},), got {cards.shape}")
        k = int(self.n_classes)
        if m and (classes.min() < 0 or classes.max() >= k):
            raise ValueError(f"class indices must lie in [0, {k})")
        if m and n and (values.min() < -1 or (values >= cards).any()):
            raise ValueError("value indices must lie in [-1, cardinality)")
        weights = (np.ones(m) if self.weights is None
                   else np.asarray(self.weights, dtype=np.float64).reshape(-1))
        if weights.shape != (m,) or not (np.isfinite(weights).all() and (weights >= 0).all()):
            raise ValueError(f"weights must be {m} finite non-negative numbers")
        names = tuple(range(n)) if self.names is None else tuple(self.names)
        if len(names) != n or len(set(names)) != n:
            raise ValueError(f"names must be {n} distinct names, got {names!r}")
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "classes", classes)
        object.__setattr__(self, "cardinalities", cards)
        object.__setattr__(self, "n_classes", k)
        object.__setattr__(self, "names", names)
        object.__setattr__(self, "weights", weights)

    @property
    def n_records(self) -> int:
        return int(self.values.shape[0])

    @property
    def n_attributes(self) -> int:
        return int(self.values.shape[1])

    def effective_size(self, rows: np.ndarray | None = None) -> float:
        """Kish's effective sample size (Σw)²/Σw² of the records (or of ``rows``, a mask or
        index array): the number of independent records the weights carry evidence of. It is
        the record count for unit weights, and for a reservoir's equal estimated weights."""
        w = self.weights if rows is None else self.weights[rows]
        square = float(np.dot(w, w))
        return float(w.sum()) ** 2 / square if square > 0 else 0.0

    def take(self, rows: Any) -> DiscreteData:
        """The records ``rows`` (an index array or a mask)."""
        return DiscreteData(self.values[rows], self.classes[rows], self.cardinalities,
                            self.n_classes, self.names, self.weights[rows], self.class_names,
                            self.value_names)

    def select(self, attributes: Sequence[int]) -> DiscreteData:
        """The attributes ``attributes`` (indices), in that order."""
        idx = list(attributes)
        return DiscreteData(self.values[:, idx], self.classes, self.cardinalities[idx],
                            self.n_classes, [self.names[i] for i in idx], self.weights,
                            self.class_names,
                            None if self.value_names is None else
                            tuple(self.value_names[i] for i in idx))

    def split(self, fraction: float = 0.5, seed: int = 0) -> tuple[DiscreteData, DiscreteData]:
        """A random split into two parts, the first with ``round(fraction · m)`` records (the
        paper's subset-learn / subset-eval halves). The records are put in a canonical order
        (by content) first, so the split depends on the set of records, not on their order."""
        canonical = np.lexsort((self.weights, self.classes, *self.values.T))
        order = canonical[np.random.default_rng(seed).permutation(self.n_records)]
        cut = round(fraction * self.n_records)
        return self.take(np.sort(order[:cut])), self.take(np.sort(order[cut:]))

    @classmethod
    def from_records(cls, records: Iterable[Mapping[Hashable, Any]], labels: Iterable[Hashable],
                     names: Sequence[Hashable] | None = None,
                     weights: Any = None) -> DiscreteData:
        """Encode nominal records (None or NaN = missing); classes and values are indexed in
        order of first appearance."""
        records, labels = list(records), list(labels)
        if len(records) != len(labels):
            raise ValueError(f"{len(records)} records but {len(labels)} labels")
        names, values, domains = index_records(records, names)
        class_index: dict[Hashable, int] = {}
        classes = np.array([class_index.setdefault(y, len(class_index)) for y in labels],
                           dtype=np.int64)
        return cls(values, classes, [max(len(d), 1) for d in domains], max(len(class_index), 1),
                   names, weights, tuple(class_index), tuple(tuple(d) for d in domains))
