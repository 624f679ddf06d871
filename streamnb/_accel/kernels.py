"""Per-record kernels of the token path, and the text scans of the e-mail tokeniser
(`header_fields`, `email_words`, `email_hosts`, `url_hosts`, `host_tokens`, `html_signals`,
`html_text`): the C extension when built, else Python twins.

Both implementations give the same results (same operations, same order, libm's ``log``) and
refuse the same arguments with the same errors; tests/test_kernels.py checks each pair.
``STREAMNB_PURE_PYTHON=1`` forces the Python ones (the tests run the suite both ways).
"""

from __future__ import annotations

import math
import operator
import os
import re
import sys
from array import array
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import numpy as np

__all__ = ["ACCELERATED", "EMAIL_DOMAIN", "WORD_FIELDS", "NameTable", "class_absent_sum",
           "class_terms", "drawn_once", "email_hosts", "email_words", "encode_many",
           "encode_tokens", "field_tokens", "frozen", "header_fields", "header_tokens",
           "host_tokens", "html_signals", "html_text", "learn_tokens", "posterior",
           "score_tokens", "spam_evidence", "text_columns", "token_increment",
           "token_increment_many", "token_log_odds", "token_odds_rows", "url_hosts"]


def _ssize(j: Any) -> int:
    """j as the C kernels read an index (PyLong_AsSsize_t): an int (not a numpy integer) that
    fits a C ssize_t."""
    if not isinstance(j, int):
        raise TypeError("an integer is required")
    if not -sys.maxsize - 1 <= j <= sys.maxsize:
        raise OverflowError("Python int too large to convert to C ssize_t")
    return j


def _read_columns(columns: Any, limit: int) -> list[int]:
    """The columns (a list of ints, or an int64 buffer) as ints, each in [0, limit), checked
    before any is used (as the C kernels' read_columns does: a negative column must not wrap
    around as a numpy index would)."""
    if columns.__class__ is not list:
        try:
            view = memoryview(columns)
        except TypeError:
            raise TypeError(f"a bytes-like object is required, not "
                            f"'{type(columns).__name__}'") from None
        if view.itemsize != 8 or view.format.lstrip("@=<") not in ("q", "l"):
            raise TypeError("columns must be a list or an int64 buffer")
        columns = view.cast("B").cast("q").tolist()
    out = []
    for j in map(_ssize, columns):  # each read then checked: the first bad one is the error
        if not 0 <= j < limit:
            raise IndexError(f"column {j} out of range [0, {limit})")
        out.append(int(j))  # True as 1, as C reads it (numpy would take a bool as a mask)
    return out


def _check_rows(table: np.ndarray, rows: int, what: str) -> None:
    """The C kernels' check_rows: a 2-d table with at least `rows` rows."""
    if table.ndim != 2 or table.shape[0] < rows or rows < 0:
        raise ValueError(f"{what} must be 2-d with at least {rows} rows")


def _check_class_row(table: np.ndarray, c: int, what: str) -> None:
    """The C kernels' check_class_row: class c's row exists (numpy would wrap c = -1 around
    to the last row)."""
    if c < 0:
        raise IndexError(f"class {c} out of range")
    _check_rows(table, c + 1, what)


class _NameTable:
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
        return type(self), (), (self.names(), self.values())

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


_OTHER = object()  # a known attribute of another kind than token


def _lookup_token(table: Any, name: Any) -> Any:
    """A token's column (its value in the table), None for an unknown name, ``_OTHER`` for an
    attribute of another kind, whose value is -1 (the C kernels' lookup_token)."""
    a = table.get(name)
    if a is None:
        return None
    column = table.value(a)
    return column if column >= 0 else _OTHER


def _check_table(table: Any, what: str) -> None:
    if type(table).__name__ not in ("NameTable", "_NameTable"):  # the C one, built or not
        raise TypeError(f"{what} must be a NameTable")


def _check_lookup(table: Any, where: str) -> None:
    _check_table(table, f"{where}: the attribute table")


def _encode_tokens(x: dict, table: Any, grow: bool) -> tuple[list[int], list[Any]]:
    _check_lookup(table, "encode_tokens")
    columns: list[int] = []
    rest: list[Any] = []
    for name, value in x.items():
        if not (value.__class__ is bool or value.__class__ is int):
            rest.append(name)
            continue
        column = _lookup_token(table, name)
        if column is None or column is _OTHER:
            if grow or column is _OTHER:
                rest.append(name)
            continue
        if value:
            columns.append(column)
    return columns, rest


def _token_log_odds(value_counts: np.ndarray, k: int, columns: list[int],
                    class_counts: np.ndarray, a_present: float, a_absent: float,
                    finite: np.ndarray, zeros: np.ndarray) -> None:
    _check_rows(value_counts, k, "value_counts")
    if min(len(class_counts), len(finite), len(zeros)) < k:
        raise ValueError("class arrays shorter than n_classes")
    columns = _read_columns(columns, value_counts.shape[1])
    log = math.log
    for c in range(k):
        N = float(class_counts[c])
        total, z = 0.0, 0
        for present in value_counts[c, columns].tolist():
            absent = max(N - present, 0.0) + a_absent
            present += a_present
            if present > 0.0:
                total += log(present)
            else:
                z += 1
            if absent > 0.0:
                total -= log(absent)
            else:
                z -= 1
        finite[c] += total
        zeros[c] += z


def _token_odds_rows(value_counts: np.ndarray, k: int, columns: Any, rows: Any,
                     class_counts: np.ndarray, log_table: np.ndarray, sums: np.ndarray) -> bool:
    _check_rows(value_counts, k, "value_counts")
    sums = np.asarray(sums)
    if k < 1 or len(class_counts) < k or sums.size % k:
        raise ValueError("class_counts shorter than n_classes, or sums not whole rows of "
                         "n_classes")
    n = sums.size // k
    columns = np.asarray(_read_columns(columns, value_counts.shape[1]), dtype=np.int64)
    rows = np.asarray(_read_columns(rows, n), dtype=np.int64)
    if len(rows) != len(columns):
        raise ValueError("columns and rows differ in length")
    out = sums.reshape(-1)
    out[:] = 0.0
    top = len(log_table)
    totals = [float(class_counts[c]) for c in range(k)]
    if not all(0.0 <= total < top and total == math.floor(total) for total in totals):
        return False
    counts = value_counts[:k, columns]
    if not np.all((counts >= 0.0) & (counts < top)):
        return False
    counts = counts.astype(np.int64)  # integers (the caller's promise), read truncated
    for c in range(k):
        absent = np.maximum(int(totals[c]) - counts[c], 0)
        terms = log_table[counts[c]] - log_table[absent]
        out[c::k] += np.bincount(rows, weights=terms, minlength=n)  # in cell order, as C adds
    return True


def _token_increment(value_counts: np.ndarray, c: int, columns: Any, bins: np.ndarray,
                     is_head: np.ndarray, binned: bool) -> list[int]:
    _check_class_row(value_counts, c, "value_counts")
    _check_class_row(bins, c, "bins")
    columns = _read_columns(columns, min(len(is_head), value_counts.shape[1]))
    return _increment(value_counts[c], bins[c], is_head, columns, binned)


def _unbin(bin_row: np.ndarray, top: int, count: float, j: int) -> None:
    if not -1.0 < count < top + 1.0:  # C truncates it to a bin: [0, top] (NaN fails too)
        raise ValueError(f"count {count!r} of column {j} is not binned")
    bin_row[int(count)] -= 1.0


def _increment(row: np.ndarray, bin_row: np.ndarray, is_head: np.ndarray, columns: list[int],
               binned: bool) -> list[int]:
    # One column at a time, as the C loop: a column listed twice is counted twice, and an
    # unbinned count stops the loop with the columns before it (and its own count) changed.
    top = bin_row.shape[0] - 1
    crossed: list[int] = []
    for j in columns:
        count = float(row[j])
        row[j] = count + 1.0
        if not binned or is_head[j]:
            continue
        _unbin(bin_row, top, count, j)
        o = int(count)
        if o < top:
            bin_row[o + 1] += 1.0
        else:
            crossed.append(j)
    return crossed


def _token_increment_many(value_counts: np.ndarray, classes: np.ndarray, columns: np.ndarray,
                          bins: np.ndarray, is_head: np.ndarray) -> list[int]:
    if bins.ndim != 2:
        raise ValueError("bins must be 2-d")
    k, top = bins.shape[0], bins.shape[1] - 1
    _check_rows(value_counts, k, "value_counts")
    if len(classes) != len(columns):
        raise ValueError("classes and columns differ in length")
    limit = min(len(is_head), value_counts.shape[1])
    crossed: list[int] = []
    for c, j in zip(np.asarray(classes).tolist(), np.asarray(columns).tolist(), strict=True):
        if not 0 <= c < k:
            raise IndexError(f"class {c} out of range")
        if not 0 <= j < limit:
            raise IndexError(f"column {j} out of range [0, {limit})")
        old = float(value_counts[c, j])
        value_counts[c, j] = old + 1.0
        if is_head[j]:
            continue
        _unbin(bins[c], top, old, j)
        if int(old) < top:
            bins[c, int(old) + 1] += 1.0
            continue
        for other in range(k):
            if other != c:
                _unbin(bins[other], top, float(value_counts[other, j]), j)
        is_head[j] = True
        crossed.append(j)
    return crossed


def _class_absent_sum(bins: np.ndarray, counts: np.ndarray, c: int, N: int,
                      log_table: np.ndarray, head: np.ndarray, zero_terms: bool
                      ) -> tuple[float, int]:
    _check_class_row(bins, c, "bins")
    _check_class_row(counts, c, "counts")
    return _absent_sum(bins[c], counts[c], int(N), log_table, head, zero_terms)


def _absent_sum(bin_row: np.ndarray, count_row: np.ndarray, N: int, log_table: np.ndarray,
                head: np.ndarray, zero_terms: bool) -> tuple[float, int]:
    if not 0 <= N < len(log_table):
        raise ValueError("log_table does not reach N")
    total, zeros = 0.0, 0
    width = min(N + 1, bin_row.shape[0])
    for n, b in enumerate(bin_row[:width].tolist()):
        if b == 0.0:
            continue
        if zero_terms and n == N:
            zeros += int(b)
        else:
            total += b * float(log_table[N - n])
    for j in head.tolist():
        if not 0 <= j < count_row.shape[0]:
            raise IndexError("head column out of range")
        absent = N - int(count_row[j])
        if not 0 <= absent < len(log_table):
            raise ValueError("head count outside [0, N]")
        if zero_terms and absent == 0:
            zeros += 1
        else:
            total += float(log_table[absent])
    return total, zeros


def _score_tokens(x: dict, table: Any, value_counts: np.ndarray, k: int,
                  class_counts: np.ndarray, a_present: float, a_absent: float, finite: Any,
                  zeros: Any) -> list[Any]:
    _check_rows(value_counts, k, "value_counts")
    if min(len(class_counts), len(finite), len(zeros)) < k:
        raise ValueError("class arrays shorter than n_classes")
    _check_lookup(table, "score_tokens")
    columns = _simple(x, table, False, value_counts.shape[1])
    rest: list[Any] = []
    if columns is None:
        columns, rest = _encode_tokens(x, table, False)
    _token_log_odds(value_counts, k, columns, class_counts, a_present, a_absent, finite, zeros)
    return rest


def _posterior(labels: list, finite: Any, zeros: Any, log: bool = False) -> dict:
    if min(len(finite), len(zeros)) < len(labels) or not labels:
        raise ValueError("posterior: arrays shorter than the labels")
    fewest = min(zeros[c] for c in range(len(labels)))
    top = max(finite[c] for c in range(len(labels)) if zeros[c] == fewest)
    total = 0.0
    for c in range(len(labels)):
        if zeros[c] == fewest:
            total += math.exp(finite[c] - top)
    if log:
        log_total = math.log(total)
        return {label: finite[c] - top - log_total if zeros[c] == fewest else -math.inf
                for c, label in enumerate(labels)}
    return {label: math.exp(finite[c] - top) / total if zeros[c] == fewest else 0.0
            for c, label in enumerate(labels)}


def _log(x: float) -> float:
    """libm's log, which C's class_terms calls where math.log raises: -inf at 0 (no records of
    any class and no prior smoothing; an unseen class under a = 0), NaN below."""
    if x > 0.0:
        return math.log(x)
    return -math.inf if x == 0.0 else math.nan


def _class_terms(class_counts: np.ndarray, k: int, b: float, a_present: float, a_absent: float,
                 n_tokens: int, bins: np.ndarray, value_counts: np.ndarray, head: np.ndarray,
                 log_table: np.ndarray, dirty: Any, sums: Any, sum_zeros: Any, finite: Any,
                 zeros: Any) -> bool:
    _check_rows(bins, k, "bins")
    _check_rows(value_counts, k, "value_counts")
    if min(len(class_counts), len(sums), len(sum_zeros), len(finite), len(zeros)) < k:
        raise ValueError("class_terms: arrays shorter than n_classes")
    N = class_counts[:k].tolist()
    if int(max(N, default=0.0)) >= len(log_table):
        return False
    if n_tokens:
        for c in range(k) if dirty is None else dirty:
            c = _ssize(c)
            if not 0 <= c < k:
                raise IndexError("dirty class out of range")
            sums[c], sum_zeros[c] = _absent_sum(bins[c], value_counts[c], int(N[c]), log_table,
                                                head, a_absent == 0.0)
    log_total = _log(sum(n + b for n in N))
    for c, n in enumerate(N):
        w = n + b
        finite[c] = math.log(w) - log_total if w > 0.0 else -log_total
        zeros[c] = 0 if w > 0.0 else 1
        if n_tokens:
            finite[c] += sums[c] - n_tokens * _log(n + a_present + a_absent)
            zeros[c] += sum_zeros[c]
    return True


def _simple(x: dict, table: Any, grow: bool, limit: int = sys.maxsize,
            new_names: list | None = None) -> list[int] | None:
    # The C kernels' simple_token_columns: a column out of range is an error where it comes in
    # the record, even if a later field would have sent the record to the general path.
    columns: list[int] = []
    named = len(new_names) if new_names is not None else 0
    for name, value in x.items():
        if not (value.__class__ is bool or value.__class__ is int):
            break
        column = _lookup_token(table, name)
        if column is _OTHER:
            break
        if column is None:
            if grow and value:
                if new_names is None or name.__class__ is not str:
                    break
                new_names.append(name)
                columns.append(-1)
        elif value:
            j = _ssize(column)
            if not 0 <= j < limit:
                raise IndexError(f"column {j} out of range [0, {limit})")
            columns.append(j)
    else:
        return columns
    if new_names is not None:
        del new_names[named:]
    return None


def _learn_tokens(x: dict, table: Any, value_counts: np.ndarray, c: int, bins: np.ndarray,
                  is_head: np.ndarray, binned: bool) -> list[int] | None:
    _check_lookup(table, "learn_tokens")
    _check_class_row(value_counts, c, "value_counts")
    _check_class_row(bins, c, "bins")
    columns = _simple(x, table, True, min(len(is_head), value_counts.shape[1]))
    if columns is None:
        return None
    return _increment(value_counts[c], bins[c], is_head, columns, binned)


def _encode_many(records: list, table: Any, grow: bool
                 ) -> tuple[bytes, bytes, list[int], list[str]]:
    _check_lookup(table, "encode_many")
    columns: list[int] = []
    lengths: list[int] = []
    special: list[int] = []
    new_names: list[str] = []
    for r, x in enumerate(records):
        simple = (_simple(x, table, grow, sys.maxsize, new_names if grow else None)
                  if type(x) is dict and x else None)
        if simple is None:
            special.append(r)
            lengths.append(0)
        else:
            columns.extend(simple)
            lengths.append(len(simple))
    return array("q", columns).tobytes(), array("q", lengths).tobytes(), special, new_names


def _drawn_once(value: Any) -> bool:
    """Whether a text value draws each token once: a dict of str to True, or a set or frozenset
    of str, none a subclass (the shape `text_columns` reads)."""
    if value.__class__ is dict:
        return all(token.__class__ is str and count is True for token, count in value.items())
    if value.__class__ is frozenset or value.__class__ is set:
        return all(token.__class__ is str for token in value)
    return False


def _text_columns(bag: Any, table: Any, grow: bool, first_new: int = 0
                  ) -> tuple[bytes, list] | None:
    """A text value drawn once per token — a set or frozenset of str, or a dict of str to
    True: ``(found, new)``, the columns of its tokens in the bag's order as int64 bytes (a
    token's column is its value in ``table``, a NameTable); with
    ``grow`` the unknown tokens are listed in ``new``, in order, and numbered ``first_new``,
    ``first_new + 1``, … in ``found`` (the columns they get when the caller registers them, in
    that order, before anything else); without, they are left out. None, with nothing read,
    for any other value: the text kind's general rule decides (and names the error)."""
    first_new = operator.index(first_new)
    _check_table(table, "text_columns: the vocabulary")
    if not _drawn_once(bag):
        return None
    found = array("q")
    new: list = []
    index = table.get
    for token in bag:
        i = index(token)
        if i is None:
            if grow:
                found.append(first_new + len(new))
                new.append(token)
            continue
        found.append(table.value(i))
    return found.tobytes(), new


# E-mail words (streamnb.features.email): letters, digits and underscore (``\w``), "$", "!" and
# apostrophes; a word is a maximal run of them stripped of apostrophes at both ends.
_EMAIL_WORD = re.compile(r"[\w$!][\w$!']*")
_EMAIL_ASCII_WORD_CHARACTERS = (
    b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$!'"
)
_EMAIL_NOT_WORD_TO_SPACE = bytes(c if c in _EMAIL_ASCII_WORD_CHARACTERS else 32
                                 for c in range(256))
_EMAIL_ONE_CHARACTER_WORDS = frozenset(map(chr, _EMAIL_ASCII_WORD_CHARACTERS))


def _type_name(value: Any) -> str:
    return "None" if value is None else type(value).__name__


def _email_words(text: str, into: set[str] | None = None) -> set[str]:
    """The word set of lower-cased e-mail text: words of 2 to 40 characters as they are,
    longer ones as ``skip:<first char>:<length rounded down to 10>``, shorter ones dropped;
    added to the set `into` when given (which is returned)."""
    # PyArg_ParseTuple's messages, which call None "None"
    if not isinstance(text, str):
        raise TypeError(f"email_words() argument 1 must be str, not {_type_name(text)}")
    if into is not None and not isinstance(into, set):
        raise TypeError(f"email_words() argument 2 must be set, not {_type_name(into)}")
    if text.isascii():
        # Every character that cannot be in a word becomes a space (one C pass over the
        # bytes) and str.split cuts the rest: the regex's words, faster.
        words = set(text.encode("ascii").translate(_EMAIL_NOT_WORD_TO_SPACE).decode("ascii")
                    .split())
        words.difference_update(_EMAIL_ONE_CHARACTER_WORDS)
    else:
        # The regex starts a word after its leading apostrophes; trailing ones are stripped
        # below, which is cheaper than excluding them in the regex.
        words = set(_EMAIL_WORD.findall(text))
    # One pass over the distinct words, not the occurrences: most words need no fixing.
    odd = [word for word in words if not 2 <= len(word) <= 40 or "'" in word]
    words.difference_update(odd)
    for word in odd:
        word = word.strip("'")
        if len(word) > 40:
            # Encoded blobs and ASCII art: only their first character and length are evidence.
            words.add(f"skip:{word[0]}:{len(word) // 10 * 10}")
        elif len(word) >= 2:
            # Single characters carry no evidence in e-mail (unlike SMS: "u" for "you").
            words.add(word)
    if into is None:
        return words
    into.update(words)
    return into


_EMAIL_NOT_NAME_TO_SPACE = bytes(c if chr(c).isascii() and (chr(c).isalnum() or chr(c) in "_.-")
                                 else 32 for c in range(256))


def _email_hosts(text: str) -> set[str]:
    """The host names and addresses of e-mail text: maximal runs of ASCII letters, digits,
    "_", "." and "-" that hold a ".", stripped of "." and "-" at both ends (empty ones
    dropped)."""
    if not isinstance(text, str):
        raise TypeError(f"email_hosts: expected str, got {type(text).__name__}")
    # Every byte that cannot be in a name becomes a space (non-ASCII characters first become
    # "?"), and str.split cuts the runs.
    runs = set(text.encode("ascii", "replace").translate(_EMAIL_NOT_NAME_TO_SPACE)
               .decode("ascii").split())
    hosts = {run.strip(".-") for run in runs if "." in run}
    hosts.discard("")
    return hosts


# Links (streamnb.features.email): two literal-prefixed patterns rather than one alternation, so
# that re skips ahead to "http" or "www." instead of trying the pattern at every character.
_URL_HTTP = re.compile(r"https?://(?:[^\s/@<>\"']+@)?(\[?[\w-]+(?:\.[\w-]+)+)", re.ASCII)
_URL_WWW = re.compile(r"www\.[\w-]+(?:\.[\w-]+)+", re.ASCII)


def _url_hosts(text: str) -> set[str]:
    """The hosts of the links in text: ``http(s)://`` links' hosts (after an optional user part
    ending in "@"; a leading "[" kept) and ``www.`` names, as a set."""
    if not isinstance(text, str):
        raise TypeError(f"url_hosts: expected str, got {type(text).__name__}")
    hosts = set(_URL_HTTP.findall(text)) if "http" in text else set()
    if "www." in text:
        hosts.update(_URL_WWW.findall(text))
    return hosts


# An entity's header block (streamnb.features.email): field lines ("Name: value", RFC 5322
# field-name characters) and their folded continuations, up to the blank line or the first line
# that is neither (the body starts there, as in the `email` package). Possessive: no
# backtracking state per line. The fields read, each with its folded value, are found from the
# newline before the block, so that the literal "\n" lets re skip from line to line.
_HEADER_BLOCK = re.compile(r"(?:(?:[!-9;-~]+:|[ \t])[^\n]*+(?:\n|\Z))*+")
_HEADER_FIELDS = re.compile(
    r"\n(subject|from|to|cc|reply-to|x-mailer|received|message-id|content-type"
    r"|content-transfer-encoding|content-disposition):([^\n]*+(?:\n[ \t][^\n]*+)*+)",
    re.I,
)


def _header_fields(text: str, start: int, end: int, max_value: int = sys.maxsize
                   ) -> tuple[int, list[tuple[str, str]], dict[str, str]]:
    """The header block of the entity at ``text[start:end]`` (``text[start - 1]`` a newline):
    ``(header_end, fields, content)``, where the line that ends the block starts (or ``end``);
    of its fields named in `_HEADER_FIELDS` (the name lower-cased, the value its folded lines
    cut to ``max_value`` characters), the ``(name, value)`` of the message fields in order,
    and ``{name: value}`` of the first of each content-* field."""
    if not isinstance(text, str):
        raise TypeError(f"header_fields() argument 1 must be str, not {type(text).__name__}")
    max_value = _ssize(operator.index(max_value))
    if max_value < 0:
        raise ValueError("header_fields: max_value must be >= 0")
    # as re reads pos and endpos: within the text, an end before start an empty block
    start = min(operator.index(start), len(text))
    end = max(min(operator.index(end), len(text)), start)
    if start < 1:
        raise ValueError(f"header_fields: start must be 1 or more (after the newline before "
                         f"the entity), got {start}")
    header_end = _HEADER_BLOCK.match(text, start, end).end()
    fields: list[tuple[str, str]] = []
    content: dict[str, str] = {}
    for name, value in _HEADER_FIELDS.findall(text, start - 1, header_end):
        name, value = name.lower(), value[:max_value]
        if name.startswith("content-"):
            content.setdefault(name, value)
        else:
            fields.append((name, value))
    return header_end, fields, content


# The tokens of header fields (streamnb.features.email): the words of subject, from and
# x-mailer values, the from value's with its addresses blanked; the domains after an "@".
_ADDRESS = re.compile(r"<[^<>]*>|(?<!\S)\S*@\S*")
# the domain of each address (the tokeniser's email:<domain> of the body too)
EMAIL_DOMAIN = re.compile(r"@([\w-]+(?:\.[\w-]+)+)")
# header fields whose words are tokens (their values may need decoding first)
WORD_FIELDS = frozenset({"subject", "from", "x-mailer"})
_DOMAIN_FIELDS = frozenset({"to", "cc", "reply-to", "message-id"})


def _read_field(field: str, value: str, tokens: set, words: Callable, hosts: Callable) -> None:
    """`field_tokens` with the given word and host kernels (C, or the twins)."""
    if field == "from":
        tokens.update(map("from:".__add__, words(_ADDRESS.sub(" ", value))))
        hosts("from:", EMAIL_DOMAIN.findall(value), tokens)
    elif field in WORD_FIELDS:
        tokens.update(map((field + ":").__add__, words(value)))
    elif field in _DOMAIN_FIELDS:
        tokens.update(map((field + ":").__add__, EMAIL_DOMAIN.findall(value)))
    else:
        raise ValueError(f"header_tokens: no tokens are read from field {field!r}")


def field_tokens(field: str, value: str, tokens: set) -> None:
    """The tokens of one header field's decoded, lower-cased value (any characters), added to
    ``tokens``: what `header_tokens` gives for the fields it returns to be decoded. For
    subject and x-mailer, its words (`email_words`) as ``<field>:<word>``; for from, the words
    left once the addresses (``<...>`` and white-space-delimited runs holding an "@") are
    blanked, as ``from:<word>``, and the domains after an "@" with their parent domains
    (`host_tokens`) as ``from:<domain>``; for to, cc, reply-to and message-id, those domains
    as ``<field>:<domain>``."""
    _read_field(field, value, tokens, email_words, host_tokens)


def _header_tokens(fields: Any, tokens: set) -> list[tuple[str, str]]:
    """The tokens of a message's header fields (`header_fields`' ``(name, value)`` list) added
    to ``tokens``; the fields whose value must be decoded first are returned, in order: a
    subject, from or x-mailer value that is not ASCII or holds an RFC 2047 encoded word
    ("=?"), and any other non-ASCII value but a received one. Received values are joined
    with a space and lower-cased, and their host names (`email_hosts`) give ``received:``
    tokens (`host_tokens`); every other value is lower-cased and read by `field_tokens`."""
    if not isinstance(tokens, set):
        raise TypeError(f"header_tokens() argument 2 must be set, not {_type_name(tokens)}")
    try:
        items = list(fields)
    except TypeError:
        raise TypeError("header_tokens: fields must be a sequence") from None
    rest: list[tuple[str, str]] = []
    received: list[str] = []
    for item in items:
        if not (type(item) is tuple and len(item) == 2 and isinstance(item[0], str)
                and isinstance(item[1], str)):
            raise TypeError(f"header_tokens: a field must be a (str, str) pair, got "
                            f"{type(item).__name__}")
        field, value = item
        if field not in WORD_FIELDS and field not in _DOMAIN_FIELDS and field != "received":
            raise ValueError(f"header_tokens: no tokens are read from field {field!r}")
        if field == "received":  # host names are ASCII: no decoding needed
            received.append(value)
        elif not value.isascii() or (field in WORD_FIELDS and "=?" in value):
            rest.append(item)
        else:
            _read_field(field, value.lower(), tokens, _email_words, _host_tokens)
    if received:
        _host_tokens("received:", _email_hosts(" ".join(received).lower()), tokens)
    return rest


# HTML's signal tags (streamnb.features.email), matched on the lower-cased source: a few tags,
# and links (an "a" tag with a non-empty href).
_HTML_SIGNAL = re.compile(
    r"<(img|font|form|table|iframe|script|embed|a(?=\s[^<>]*?(?<![\w-])href\s*=\s*[^\s>]))"
    r"(?![\w-])"
)


def _html_signals(text: str) -> set[str]:
    """The names of the signal tags of HTML source ("a" for a link), as a set."""
    if not isinstance(text, str):
        raise TypeError(f"html_signals: expected str, got {type(text).__name__}")
    return set(_HTML_SIGNAL.findall(text))


# Host names (streamnb.features.email): a numeric address, DNS's longest name, and the
# second-level registries that are not evidence about a sender ("co.uk", "com.au").
_IPV4 = re.compile(r"\d{1,3}(?:\.\d{1,3}){3}")
_MAX_HOST = 253
_SECOND_LEVEL_REGISTRIES = frozenset({"co", "com", "net", "org", "ac", "gov", "edu", "ne", "or"})


def _host_tokens(prefix: str, hosts: Any, tokens: set) -> None:
    """For each host name or address in ``hosts``: ``prefix`` + the host and each parent
    domain with at least two labels, added to ``tokens``, after stripping "[", "]", "." and
    "-" at both ends and lower-casing; a registry ("co.uk") is not a parent domain. A numeric
    address gives ``prefix + "ip"``; something that is neither an address nor a name ending
    in a letter label (a version number, "..") gives nothing, and neither does a name longer
    than DNS allows (253 characters; its parent domains would grow with the square of its
    length)."""
    if not isinstance(prefix, str):
        raise TypeError(f"host_tokens() argument 1 must be str, not {type(prefix).__name__}")
    if not isinstance(tokens, set):
        raise TypeError(f"host_tokens() argument 3 must be set, not {type(tokens).__name__}")
    for host in hosts:
        if not isinstance(host, str):
            raise TypeError(f"host_tokens: hosts must be str, got {type(host).__name__}")
        if len(host) <= _MAX_HOST + 4:
            tokens.update(_cached_host_tokens(prefix, host))


@lru_cache(maxsize=4096)
def _cached_host_tokens(prefix: str, host: str) -> tuple[str, ...]:
    """One host's tokens, cached: the same relays and link hosts recur from message to
    message."""
    host = host.strip("[].-").lower()
    if len(host) > _MAX_HOST:
        return ()
    last = host.rfind(".")
    if last < 0 or not host[last + 1 :].isalpha():
        return (prefix + "ip",) if _IPV4.fullmatch(host) else ()
    # The host, then the name after each dot but the last: every suffix of 2 labels or more.
    names = [prefix + host]
    dot = host.find(".")
    while dot < last:
        names.append(prefix + host[dot + 1 :])
        dot = host.find(".", dot + 1)
    # "co.uk", "com.au" are registries, not evidence about a sender: stop before them.
    labels = host[host.rfind(".", 0, last) + 1 :].split(".")
    if len(names) > 1 and len(labels[1]) == 2 and labels[0] in _SECOND_LEVEL_REGISTRIES:
        names.pop()
    return tuple(names)


# HTML (streamnb.features.email), matched on the lower-cased source. `[^<>]` in every tag
# pattern stops a match at the next "<": a "<" without its ">" cannot make re scan the rest of
# the text from every "<". Comments, scripts and style sheets are invisible. A comment ends at
# the next "-->" (it is only looked for before the last "-->": after it, "<!--" is a tag like
# "<!doctype", to its ">", as spam's "<!--#rotate>" is); an unterminated script or style sheet
# runs to the end, as in browsers.
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)
_HTML_SCRIPT = re.compile(r"<(script|style)(?![\w-]).*?(?:</\1|\Z)", re.S)
# Tags after which a browser starts a new line: their boundaries separate words. Other tags
# (and comments) do not, which undoes the "V<!-- -->iagra" trick of splitting a word with markup.
_HTML_BLOCK_TAG = re.compile(
    r"</?(?:br|p|div|td|th|tr|li|ul|ol|table|h[1-6]|hr|title|blockquote|pre|center|option"
    r"|body|head)(?![\w-])[^<>]*>?"
)
_HTML_TAG = re.compile(r"<(?:[/?]?[a-z]|!)[^<>]*>?")


def _html_text(source: str) -> str:
    """The visible text of lower-cased HTML, entities not decoded: comments, scripts and style
    sheets removed, block tags replaced by a space, other tags removed."""
    if not isinstance(source, str):
        raise TypeError(f"html_text: expected str, got {type(source).__name__}")
    comments_end = source.rfind("-->") + 3
    if comments_end > 2:
        source = _HTML_COMMENT.sub("", source[:comments_end]) + source[comments_end:]
    if "<script" in source or "<style" in source:
        source = _HTML_SCRIPT.sub("", source)
    return _HTML_TAG.sub("", _HTML_BLOCK_TAG.sub(" ", source))


def _pairwise_sum(a: list[float]) -> float:
    """numpy's pairwise summation of a contiguous float64 array (what ``ndarray.sum`` does)."""
    n = len(a)
    if n < 8:
        res = 0.0
        for v in a:
            res += v
        return res
    if n <= 128:
        r = a[:8]
        i = 8
        while i < n - n % 8:
            for j in range(8):
                r[j] += a[i + j]
            i += 8
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        for v in a[i:]:
            res += v
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return _pairwise_sum(a[:n2]) + _pairwise_sum(a[n2:])


def _spam_evidence(columns: Any, value_counts: np.ndarray, spam: int, ham: int,
                   totals: tuple[float, float, float, float], size: float, alpha: float,
                   top_tokens: int, s: float, x: float, min_dev: float, max_tokens: int,
                   learned: int) -> tuple[int, float, int, float, float]:
    """SpamFilter's score of one message in one pass over its tokens' columns (a list or
    int64; one at or past ``learned``: a token never learned): ``(known, multinomial, kept,
    spam_stat, ham_stat)`` (the C kernel's comment says what each is)."""
    learned = _ssize(operator.index(learned))
    if top_tokens < 1 or max_tokens < 1:
        raise ValueError("spam_evidence: top_tokens and max_tokens must be >= 1")
    N_s, N_h, T_s, T_h = map(float, totals)
    if not (size > 0.0 and alpha > 0.0 and N_s >= 0.0 and N_h >= 0.0 and T_s >= 0.0
            and T_h >= 0.0):
        raise ValueError("spam_evidence: size and alpha must be > 0, the totals >= 0")
    for c in (spam, ham):
        if c != -1:
            _check_class_row(value_counts, c, "value_counts")
    uniform, A = -math.log(size), alpha * size
    den_s, den_h = math.log(T_s + A), math.log(T_h + A)
    ratios: list[float] = []
    kept: list[tuple[float, float]] = []
    width = value_counts.shape[1] if value_counts.ndim == 2 else 0
    for j in _read_columns(columns, sys.maxsize):
        if j >= learned:
            continue  # never learned (numbered ahead by the lookup): no evidence
        if j >= width:
            raise IndexError(f"column {j} out of range [0, {width})")
        n_s = 0.0 if spam == -1 else float(value_counts[spam, j])
        n_h = 0.0 if ham == -1 else float(value_counts[ham, j])
        log_s = uniform if spam == -1 else math.log(n_s + alpha) - den_s
        log_h = uniform if ham == -1 else math.log(n_h + alpha) - den_h
        ratios.append(log_s - log_h)
        b = n_s / N_s if N_s > 0.0 else 0.0
        g = n_h / N_h if N_h > 0.0 else 0.0
        total, draws = b + g, n_s + n_h
        p = b / total if total > 0.0 else x
        f = (s * x + draws * p) / (s + draws)
        if abs(f - 0.5) >= min_dev:
            kept.append((abs(f - 0.5), f))
    multinomial = 0.0
    if ratios:
        top = sorted(ratios, key=lambda d: (-abs(d), -d))[:top_tokens]
        multinomial = _pairwise_sum(top) / len(top)
    kept.sort(key=lambda kf: (-kf[0], kf[1]))
    f_kept = [min(max(f, 1e-300), 1.0 - 1e-16) for _, f in kept[:max_tokens]]
    spam_stat = -2.0 * _pairwise_sum([math.log(f) for f in f_kept])
    ham_stat = -2.0 * _pairwise_sum([math.log1p(-f) for f in f_kept])
    return len(ratios), multinomial, len(f_kept), spam_stat, ham_stat


def _frozen(items: Any) -> frozenset:
    """``frozenset(items)``: the C kernel freezes a set that nothing else holds in place
    instead of copying it (a tokeniser's last step); the items are the same."""
    return frozenset(items)


ACCELERATED = False
encode_tokens = _encode_tokens
token_log_odds = _token_log_odds
token_odds_rows = _token_odds_rows
token_increment = _token_increment
token_increment_many = _token_increment_many
class_absent_sum = _class_absent_sum
NameTable: type = _NameTable
score_tokens = _score_tokens
posterior = _posterior
class_terms = _class_terms
learn_tokens = _learn_tokens
encode_many = _encode_many
text_columns = _text_columns
drawn_once = _drawn_once
email_words = _email_words
email_hosts = _email_hosts
url_hosts = _url_hosts
host_tokens = _host_tokens
header_fields = _header_fields
header_tokens = _header_tokens
html_signals = _html_signals
html_text = _html_text
spam_evidence = _spam_evidence
frozen = _frozen

if os.environ.get("STREAMNB_PURE_PYTHON", "") in ("", "0"):
    try:
        from streamnb._accel import _kernels
    except ImportError:  # not compiled (no C compiler at install): the Python twins serve
        pass
    else:
        ACCELERATED = True
        NameTable = _kernels.NameTable
        encode_tokens = _kernels.encode_tokens
        token_log_odds = _kernels.token_log_odds
        token_odds_rows = _kernels.token_odds_rows
        token_increment = _kernels.token_increment
        token_increment_many = _kernels.token_increment_many
        class_absent_sum = _kernels.class_absent_sum
        score_tokens = _kernels.score_tokens
        posterior = _kernels.posterior
        class_terms = _kernels.class_terms
        learn_tokens = _kernels.learn_tokens
        encode_many = _kernels.encode_many
        text_columns = _kernels.text_columns
        drawn_once = _kernels.drawn_once
        email_words = _kernels.email_words
        email_hosts = _kernels.email_hosts
        url_hosts = _kernels.url_hosts
        host_tokens = _kernels.host_tokens
        header_fields = _kernels.header_fields
        header_tokens = _kernels.header_tokens
        html_signals = _kernels.html_signals
        html_text = _kernels.html_text
        spam_evidence = _kernels.spam_evidence
        frozen = _kernels.frozen
