"""A text attribute's vocabulary: token → its count-array column, without a Python dict.

A message stream's text attribute gathers 10⁵–10⁶ tokens, and each message looks ~200 of them
up, scored and then learned: a dict there costs an entry, an int object and several dependent
cache misses per token. Here the tokens are names of a C ``NameTable`` (UTF-8 in its entries,
long ones in an arena; indices in order of registration) whose values are their columns, so
that a message's lookups (`lookup`, one kernel call) load ahead what they will read, stage by
stage, and find each column in the entry that confirms the token.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from streamnb._accel.kernels import text_columns
from streamnb._accel.names import NameTable

__all__ = ["TextVocabulary"]


class TextVocabulary(Mapping):
    """``{token: column}`` of one text attribute, read like a dict, grown by registration.

    Tokens are only added (`register`, or ``vocabulary[token] = column``) and forgotten
    newest first (``del`` of the last one, `truncate`), as the schema registers them and
    rolls them back.

    Examples
    --------
    >>> v = TextVocabulary()
    >>> v["free"] = 3; v.register(["money", "now"], range(7, 9))
    >>> v["money"], v.get("cash"), len(v), list(v)
    (7, None, 3, ['free', 'money', 'now'])
    >>> v.lookup({"now": True, "soon": True}, grow=True, first_new=9)  # soon: new, column 9
    (array([8, 9]), ['soon'])
    >>> v.joined().split(bytes(1))  # NUL-separated UTF-8
    [b'free', b'money', b'now']
    >>> del v["now"]; dict(v)
    {'free': 3, 'money': 7}

    """

    __slots__ = ("_names",)

    def __init__(self) -> None:
        self._names = NameTable()  # token -> index, whose value is the column

    def __len__(self) -> int:
        return len(self._names)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._names)

    def __contains__(self, token: object) -> bool:
        return token in self._names

    def __getitem__(self, token: Any) -> int:
        i = self._names.get(token)
        if i is None:
            raise KeyError(token)
        return self._names.value(i)

    def get(self, token: Any, default: Any = None) -> Any:
        i = self._names.get(token)
        return default if i is None else self._names.value(i)

    def __setitem__(self, token: Any, column: int) -> None:
        """Register a new token (a registered one raises ValueError: columns do not move)."""
        self._names.add_new([token], column)

    def register(self, tokens: list[Any], columns: range) -> None:
        """Register distinct new tokens at once, ``tokens[k]`` at ``columns[k]`` (consecutive
        columns: a schema numbers a batch's new tokens in order)."""
        if len(tokens) != len(columns):
            raise ValueError(f"{len(tokens)} tokens but {len(columns)} columns")
        if len(columns) > 1 and columns.step != 1:
            raise ValueError("the columns of tokens registered at once are consecutive")
        if tokens:
            self._names.add_new(tokens, columns.start)

    def register_joined(self, joined: Any, columns: np.ndarray) -> None:
        """Register the tokens of ``joined`` (what :meth:`joined` gave: NUL-separated UTF-8)
        at ``columns``, one each, without a str object a token (`NameTable.add_joined`): a
        saved vocabulary read back. ValueError, with nothing registered, if the tokens are
        not UTF-8, not as many as the columns, or one is registered or repeated."""
        self._names.add_joined(joined, np.asarray(columns, dtype=np.int32))

    def __delitem__(self, token: Any) -> None:
        """Forget the newest token (a rollback forgets newest first)."""
        n = len(self._names)
        if not n or self._names.get(token) != n - 1:
            raise KeyError(f"{token!r} is not the newest token")
        self.truncate(n - 1)

    def token(self, i: int) -> Any:
        """The token registered ``i``-th (its str made from the table's UTF-8)."""
        return self._names.name(i)

    def tokens(self, lo: int, hi: int) -> list[Any]:
        """The tokens registered ``lo``-th to ``hi - 1``-th."""
        return self._names.names(lo, hi)

    def joined(self) -> bytes | None:
        """The tokens in order of registration as UTF-8, NUL-separated, read from the table
        (no str object a token); None if one is a lone surrogate or holds a NUL."""
        return self._names.joined()

    def truncate(self, n: int) -> None:
        """Forget the tokens registered after the first ``n``."""
        self._names.truncate(n)

    def lookup(self, bag: Any, grow: bool, first_new: int = 0) -> tuple[np.ndarray, list] | None:
        """A text value drawn once per token (a set or frozenset of str, or a dict of str to
        True): ``(columns, new)``, the int64 columns of its tokens in the bag's order; with
        ``grow`` its unknown tokens are listed in ``new`` and numbered ``first_new``,
        ``first_new + 1``, … in ``columns`` (the columns registering them next gives them;
        without, they are left out); None for any other value. One kernel call
        (`streamnb._accel.kernels.text_columns`)."""
        once = text_columns(bag, self._names, grow, first_new)
        return None if once is None else (np.frombuffer(once[0], dtype=np.int64), once[1])
