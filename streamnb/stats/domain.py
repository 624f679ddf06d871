"""A value ↔ index mapping that grows online (attribute domains, class labels, names)."""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any

from streamnb.stats.codec import decode, encode

__all__ = ["Domain"]


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
    def from_json(cls, data: list[Any], what: str = "value") -> Domain:
        domain = cls(decode(v, what) for v in data)
        if len(domain) != len(data):
            raise ValueError("domain holds duplicate values")
        return domain

