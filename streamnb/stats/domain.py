"""A value ↔ index mapping that grows online (attribute domains, class labels, names)."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from streamnb.stats.codec import decode, encode
from streamnb.stats.values import is_missing

__all__ = ["Domain", "index_records"]


class Domain:
    """Values in order of first appearance, with their indices.

    Indices never change once given, so count arrays indexed by them stay valid as the domain
    grows; ``truncate`` exists only to roll back values registered by a record that then failed
    validation.

    Examples
    --------
    >>> d = Domain(["ham"])
    >>> d.add("spam"), d.add("ham"), d.get("eggs"), len(d)
    (1, 0, None, 2)
    >>> Domain.from_json(d.to_json()).values
    ['ham', 'spam']

    """

    __slots__ = ("index", "values")

    def __init__(self, values: Iterable[Hashable] = ()) -> None:
        self.values: list[Any] = []
        self.index: dict[Any, int] = {}
        for value in values:
            self.add(value)

    def __len__(self) -> int:
        return len(self.values)

    def __contains__(self, value: object) -> bool:
        return value in self.index

    def __iter__(self):
        return iter(self.values)

    def __repr__(self) -> str:
        return f"Domain({self.values!r})"

    def get(self, value: Hashable) -> int | None:
        return self.index.get(value)

    def name(self, i: int) -> Any:
        """The value of index ``i`` (as the schema's ``NameTable``, which has no list)."""
        return self.values[i]

    def names(self, lo: int = 0, hi: int | None = None) -> list[Any]:
        """The values of indices ``lo`` .. ``hi`` − 1."""
        return self.values[lo:hi]

    def add(self, value: Hashable) -> int:
        """Index of ``value``, registering it first if it is new."""
        i = self.index.get(value)
        if i is None:
            i = self.index[value] = len(self.values)
            self.values.append(value)
        return i

    def truncate(self, size: int) -> None:
        for value in self.values[size:]:
            del self.index[value]
        del self.values[size:]

    def copy(self) -> Domain:
        other = Domain()
        other.values = list(self.values)
        other.index = dict(self.index)
        return other

    def to_json(self) -> list[Any]:
        return [encode(v) for v in self.values]

    @classmethod
    def from_json(cls, data: list[Any]) -> Domain:
        domain = cls(decode(v) for v in data)
        if len(domain) != len(data):
            raise ValueError("domain holds duplicate values")
        return domain


def index_records(records: Sequence[Mapping[Hashable, Any]],
                  names: Sequence[Hashable] | None = None
                  ) -> tuple[list[Hashable], np.ndarray, list[dict[Any, int]]]:
    """Records of nominal values as an ``(m, n)`` matrix of value indices, with no kinds and
    no coercion (any hashable is a value): the encoding of the structure layer's reference
    counts (``PairwiseCounts.from_records``, ``DiscreteData.from_records``).

    Returns the attribute names (default: every key, in order of first appearance), the
    matrix (−1 where the value is missing: an absent key, None or NaN, as
    :func:`~streamnb.stats.values.is_missing` says) and each attribute's ``{value: index}``
    in order of first appearance.

    Examples
    --------
    >>> names, matrix, domains = index_records([{"a": "x", "b": 1}, {"a": None, "b": 2},
    ...                                         {"b": 1, "a": "y"}])
    >>> names, matrix.tolist(), domains
    (['a', 'b'], [[0, 0], [-1, 1], [1, 0]], [{'x': 0, 'y': 1}, {1: 0, 2: 1}])

    """
    if names is None:
        seen: dict[Hashable, None] = {}
        for r in records:
            seen.update(dict.fromkeys(r))
        names = list(seen)
    names = list(names)
    domains: list[dict[Any, int]] = [{} for _ in names]
    matrix = np.full((len(records), len(names)), -1, dtype=np.int64)
    for row, r in enumerate(records):
        for i, name in enumerate(names):
            v = r.get(name)
            if not is_missing(v):
                matrix[row, i] = domains[i].setdefault(v, len(domains[i]))
    return names, matrix, domains
