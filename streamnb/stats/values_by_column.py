"""The value each count-array column stands for, indexed by column, without a slot per token.

A nominal value's column and a text token's column stand for that value; a token attribute's
"present" column stands for no value (``None``). Tokens are most of a large vocabulary, so
their columns cost 4 bytes here (a place, −1) rather than a list slot each.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from streamnb.stats.growing import GrowingArray

__all__ = ["ValuesByColumn"]


class ValuesByColumn:
    """Per column, its value or None, read like a list (``values[j]``, slices, iteration).

    Examples
    --------
    >>> v = ValuesByColumn()
    >>> v.append("red"); v.extend_tokens(2); v.extend(["spam", "ham"])
    >>> v[0], v[1], v[3], v[-1], len(v)
    ('red', None, 'spam', 'ham', 5)
    >>> v.take(np.array([1, 3, 4]))
    [None, 'spam', 'ham']
    >>> v.truncate(2); list(v)
    ['red', None]

    """

    __slots__ = ("_place", "_values")

    def __init__(self) -> None:
        self._values: list[Any] = []  # the values of the columns that have one, in order
        self._place = GrowingArray(np.int32)  # per column: its place in _values, −1 for None

    def __len__(self) -> int:
        return self._place.size

    def __getitem__(self, j: Any) -> Any:
        if isinstance(j, slice):  # the new columns of a batch: read only those
            places = self._place.view()[j].tolist()
            values = self._values
            return [None if p < 0 else values[p] for p in places]
        n = self._place.size
        j = int(j)
        if j < 0:
            j += n
        if not 0 <= j < n:
            raise IndexError(f"column {j} out of range [0, {n})")
        p = int(self._place.data[j])
        return None if p < 0 else self._values[p]

    def __iter__(self) -> Iterator[Any]:
        # every column's value read in C, a token's place −1 indexing the None appended last
        # (a Python step per column was most of saving a large vocabulary)
        return map([*self._values, None].__getitem__, self._place.view().tolist())

    def take(self, columns: np.ndarray) -> list[Any]:
        """The values of ascending ``columns`` (None for a token's column), read in C; a copy
        of the list of values when the columns are all those that have one (a text
        vocabulary's tokens, written in a snapshot)."""
        places = self._place.view()[columns]
        n = len(self._values)
        if len(places) == n and (n == 0 or (places[0] == 0 and places[-1] == n - 1 and bool(
                (places >= 0).all()))):
            return list(self._values)  # places ascend among the columns that have a value
        return list(map([*self._values, None].__getitem__, places.tolist()))

    def append(self, value: Any) -> None:
        """One column standing for ``value`` (None: a token's column)."""
        if value is None:
            self._place.append(-1)
        else:
            self._place.append(len(self._values))
            self._values.append(value)

    def extend(self, values: list[Any]) -> None:
        """Columns standing for ``values``, none of them None (a text attribute's new tokens)."""
        start = len(self._values)
        self._values.extend(values)
        self._place.extend(np.arange(start, len(self._values), dtype=np.int32))

    def extend_tokens(self, n: int) -> None:
        """``n`` token columns."""
        self._place.extend(np.full(n, -1, dtype=np.int32))

    def truncate(self, n: int) -> None:
        """Forget the columns from ``n`` on (a rollback): O(the columns forgotten)."""
        gone = self._place.view()[n:]
        kept = gone[gone >= 0]
        if len(kept):
            del self._values[int(kept[0]):]
        self._place.truncate(n)
