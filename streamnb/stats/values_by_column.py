"""The value each count-array column stands for, indexed by column, without a slot per token.

A nominal value's column and a text token's column stand for that value; a token attribute's
"present" column stands for no value (``None``). Tokens are most of a large vocabulary, so
their columns cost 4 bytes here (a place, −1) rather than a list slot each, and a text token is
not kept here at all: its column holds its place in its attribute's vocabulary, whose table
already holds its UTF-8 (as str objects here they would cost ≈ 60 B a token more, and a saved
vocabulary would have to be read back into 10⁵–10⁶ of them).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from streamnb.stats.growing import GrowingArray
from streamnb.stats.text_vocabulary import TextVocabulary

__all__ = ["ValuesByColumn"]


class ValuesByColumn:
    """Per column, its value or None, read like a list (``values[j]``, slices, iteration).

    ``vocabularies`` is the schema's list of text vocabularies (text slot → vocabulary), read
    when a text column's token is.

    Examples
    --------
    >>> body = TextVocabulary(); body.register(["spam", "ham"], range(3, 5))
    >>> v = ValuesByColumn([body])
    >>> v.append("red"); v.extend_tokens(2); v.extend_text(0, 0, 2)
    >>> v[0], v[1], v[3], v[-1], len(v)
    ('red', None, 'spam', 'ham', 5)
    >>> v.take(np.array([1, 3, 4]))
    [None, 'spam', 'ham']
    >>> v.truncate(2); list(v)
    ['red', None]

    """

    __slots__ = ("_place", "_source", "_values", "_vocabularies")

    def __init__(self, vocabularies: Sequence[TextVocabulary] = ()) -> None:
        self._values: list[Any] = []  # the nominal values, in order of their columns
        # per column: its place in _values or, for a text token, in its vocabulary; −1: None
        self._place = GrowingArray(np.int32)
        # per column: 0 (_values, or None), or 1 + the text slot of its token; made with the
        # first text column (a schema without text pays nothing for it)
        self._source: GrowingArray | None = None
        self._vocabularies = vocabularies

    def __len__(self) -> int:
        return self._place.size

    def __getitem__(self, j: Any) -> Any:
        if isinstance(j, slice):  # the new columns of a batch: read only those
            return self._read(self._place.view()[j],
                              None if self._source is None else self._source.view()[j])
        n = self._place.size
        j = int(j)
        if j < 0:
            j += n
        if not 0 <= j < n:
            raise IndexError(f"column {j} out of range [0, {n})")
        p = int(self._place.data[j])
        source = 0 if self._source is None else int(self._source.data[j])
        if source:
            return self._vocabularies[source - 1].token(p)
        return None if p < 0 else self._values[p]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._read(self._place.view(),
                               None if self._source is None else self._source.view()))

    def take(self, columns: np.ndarray) -> list[Any]:
        """The values of ``columns`` (None for a token's column)."""
        return self._read(self._place.view()[columns],
                          None if self._source is None else self._source.view()[columns])

    def _read(self, places: np.ndarray, sources: np.ndarray | None) -> list[Any]:
        # read in C: a token's place −1 indexes the None appended last (a Python step per
        # column would be most of saving a large vocabulary), a text token's run of places one
        # slice of its vocabulary
        lookup = [*self._values, None]
        if sources is None or not sources.any():
            return list(map(lookup.__getitem__, places.tolist()))
        out = list(map(lookup.__getitem__, np.where(sources == 0, places, -1).tolist()))
        for source in np.unique(sources[sources > 0]).tolist():
            at = np.flatnonzero(sources == source)
            mine = places[at]
            vocabulary = self._vocabularies[source - 1]
            lo = int(mine[0])
            if np.array_equal(mine, np.arange(lo, lo + len(mine))):
                tokens = vocabulary.tokens(lo, lo + len(mine))
            else:
                tokens = list(map(vocabulary.token, mine.tolist()))
            if len(at) == len(out):
                out = tokens
            else:
                for i, token in zip(at.tolist(), tokens, strict=True):
                    out[i] = token
        return out

    def append(self, value: Any) -> None:
        """One column standing for nominal ``value`` (None: a token's column)."""
        if value is None:
            self._place.append(-1)
        else:
            self._place.append(len(self._values))
            self._values.append(value)
        if self._source is not None:
            self._source.append(0)

    def extend_text(self, slot: int, first: int, n: int) -> None:
        """``n`` columns standing for the tokens ``first``, ``first + 1``, … of text slot
        ``slot``'s vocabulary (registered there first)."""
        if self._source is None:
            self._source = GrowingArray(np.int32)
            self._source.fill(0, self._place.size)
        self._place.extend(np.arange(first, first + n, dtype=np.int32))
        self._source.fill(slot + 1, n)

    def extend_tokens(self, n: int) -> None:
        """``n`` token columns."""
        self._place.fill(-1, n)
        if self._source is not None:
            self._source.fill(0, n)

    def truncate(self, n: int) -> None:
        """Forget the columns from ``n`` on (a rollback): O(the columns forgotten)."""
        gone = self._place.view()[n:]
        if self._source is not None:
            gone = gone[self._source.view()[n:] == 0]
            self._source.truncate(n)
        kept = gone[gone >= 0]
        if len(kept):
            del self._values[int(kept[0]):]
        self._place.truncate(n)
