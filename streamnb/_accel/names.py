"""NameTable: names ↔ indices 0, 1, ... in order of addition, each with an int32 value (the
schema's registry of attributes and tokens): the C extension ``streamnb._accel._names`` when
built, else the Python twin here. tests/test_names.py checks the two against each other;
``STREAMNB_PURE_PYTHON=1`` forces the twin (streamnb/_accel/choose.py).
"""

from __future__ import annotations

import operator
from array import array
from typing import Any

from streamnb._accel.choose import choose

__all__ = ["NameTable"]


class NameTable:
    """Names ↔ indices 0, 1, ... in order of addition, each with an int32 value its owner
    assigns (-1 unless set): the C ``NameTable``'s twin, which keeps a str name's UTF-8 and
    value in its 16-byte entry (the UTF-8 in an arena when longer than 11 bytes); this one is a
    dict and two lists."""

    __slots__ = ("_index", "_names", "_values")

    def __init__(self) -> None:
        self._index: dict[Any, int] = {}
        self._names: list[Any] = []
        self._values: list[int] = []

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name: Any) -> bool:
        return name in self._index

    def __iter__(self) -> Any:
        return iter(list(self._names))

    def get(self, name: Any, default: Any = None) -> Any:
        return self._index.get(name, default)

    def add(self, name: Any, value: Any = -1) -> int:
        value = _name_value(value)
        e = self._index.get(name)
        if e is None:
            e = self._index[name] = len(self._names)
            self._names.append(name)
            self._values.append(value)
        return e

    def add_new(self, names: Any, first: Any = -1) -> None:
        first = _name_value(first)
        if not isinstance(names, (list, tuple)):
            try:
                names = list(names)
            except TypeError:
                raise TypeError("add_new() takes a sequence of names") from None
        if first >= 0 and names and first + len(names) - 1 > _INT32_MAX:
            raise OverflowError("a NameTable value is at most 2**31 - 1")
        before = len(self._names)
        for k, name in enumerate(names):
            if name in self._index:
                self.truncate(before)
                raise ValueError(f"add_new(): {name!r} is already present")
            self._index[name] = len(self._names)
            self._names.append(name)
            self._values.append(-1 if first < 0 else first + k)

    def add_joined(self, utf8: Any, values: Any) -> None:
        data, packed = bytes(utf8), bytes(values)
        n = len(packed) // 4
        pieces = data.count(b"\0") + 1 if data or n else 0
        if len(packed) % 4 or pieces != n:
            raise ValueError(f"add_joined(): {pieces} names but {n} values")
        given = array("i")
        given.frombytes(packed)
        before = len(self._names)
        try:  # name by name, as the kernel reads them
            for piece, value in zip(data.split(b"\0") if n else [], given, strict=True):
                value = _name_value(value)
                name = piece.decode()
                if name in self._index:
                    raise ValueError(f"add_joined(): {name!r} is already present")
                self._index[name] = len(self._names)
                self._names.append(name)
                self._values.append(value)
        except BaseException:
            self.truncate(before)
            raise

    def _at(self, i: Any) -> int:
        e = operator.index(i)
        if not 0 <= e < len(self._names):
            raise IndexError(f"name index {e} out of range [0, {len(self._names)})")
        return e

    def name(self, i: Any) -> Any:
        return self._names[self._at(i)]

    def value(self, i: Any) -> int:
        return self._values[self._at(i)]

    def set_value(self, i: Any, value: Any) -> None:
        e = self._at(i)
        self._values[e] = _name_value(value)

    def names(self, lo: int = 0, hi: int | None = None) -> list[Any]:
        lo, hi = self._bounds(lo, hi)
        return self._names[lo:hi]

    def joined(self, lo: int = 0, hi: int | None = None) -> bytes | None:
        lo, hi = self._bounds(lo, hi)
        names = self._names[lo:hi]
        if not all(type(n) is str for n in names):
            return None
        text = "\0".join(names)
        if text.count("\0") > max(len(names) - 1, 0):
            return None
        try:
            return text.encode()
        except UnicodeEncodeError:  # a lone surrogate
            return None

    def values(self, lo: int = 0, hi: int | None = None) -> bytes:
        lo, hi = self._bounds(lo, hi)
        return array("i", self._values[lo:hi]).tobytes()

    def _bounds(self, lo: int, hi: int | None) -> tuple[int, int]:
        n = len(self._names)
        lo = min(max(lo, 0), n)
        return lo, n if hi is None else min(max(hi, lo), n)

    def __reduce__(self) -> tuple:
        # made by a function: where the extension is built, this class's name is the C type's
        return _new_twin, (), (self.names(), self.values())

    def __setstate__(self, state: tuple[list[Any], bytes]) -> None:
        if self._names:
            raise ValueError("__setstate__() fills an empty NameTable only")
        names, values = state
        self.add_new(names)
        values = array("i", values)
        if len(values) != len(self._names):
            self.truncate(0)
            raise ValueError("__setstate__(): one value a name")
        self._values[:] = values.tolist()

    def truncate(self, n: Any) -> None:
        n = operator.index(n)
        if n < 0:
            raise ValueError("truncate(): a negative size")
        for name in self._names[n:]:
            del self._index[name]
        del self._names[n:], self._values[n:]


_INT32_MAX = 2**31 - 1


def _name_value(value: Any) -> int:
    """A NameTable value: an int in [-1, 2**31 - 1]."""
    value = operator.index(value)
    if not -1 <= value <= _INT32_MAX:
        raise OverflowError(f"a NameTable value is in [-1, 2**31 - 1], not {value}")
    return value


def _new_twin() -> NameTable:
    """An empty twin table (what a pickled one is read into)."""
    return twin.NameTable()


twin, ACCELERATED = choose(globals(), "streamnb._accel._names")
