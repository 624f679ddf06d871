"""Per-record kernels: on the token path encoding a message's tokens, counting them, scoring
them (naive Bayes, SpamFilter), the posterior; on the numeric path Fisher's χ² tails
(SpamFilter's combining), adding a record to a class's
pairwise moments (LDA, QDA), and adding a record to a binned density and evaluating its kernel
density estimates (KernelNB): the C extension ``streamnb._accel._kernels`` when built, else the
Python twins here.

Both implementations give the same results (same operations, same order, libm's ``log``,
``exp`` and ``pow``) and refuse the same arguments with the same errors; tests/test_kernels.py
checks each pair.
``__all__`` is the list of kernels; ``STREAMNB_PURE_PYTHON=1`` forces the twins
(streamnb/_accel/choose.py).
"""

from __future__ import annotations

import math
import operator
import sys
from array import array
from collections.abc import Sequence
from typing import Any

import numpy as np

from streamnb._accel.choose import choose

__all__ = ["binned_add_one", "chi2_log_odds", "class_absent_sum", "class_terms",
           "covariance_add_one", "drawn_once", "encode_many", "encode_tokens",
           "kde_log_likelihood", "learn_tokens", "posterior", "score_tokens", "spam_evidence",
           "text_columns", "token_increment", "token_increment_many", "token_log_odds",
           "token_odds_rows"]


def _ssize(j: Any) -> int:
    """j as the C kernels read an index (PyLong_AsSsize_t): an int (not a numpy integer) that
    fits a C ssize_t."""
    if not isinstance(j, int):
        raise TypeError("an integer is required")
    if not -sys.maxsize - 1 <= j <= sys.maxsize:
        raise OverflowError("Python int too large to convert to C ssize_t")
    return j


def _double(x: Any) -> float:
    """x as the C kernels read a float argument (PyFloat_AsDouble: ``__float__``, else
    ``__index__``; a str is refused)."""
    if not (hasattr(type(x), "__float__") or hasattr(type(x), "__index__")):
        raise TypeError(f"must be real number, not {type(x).__name__}")
    return float(x)


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
    if type(table).__name__ != "NameTable":  # the C type or its twin, whichever is bound
        raise TypeError(f"{what} must be a NameTable")


def _check_lookup(table: Any, where: str) -> None:
    _check_table(table, f"{where}: the attribute table")


def encode_tokens(x: dict, table: Any, grow: bool) -> tuple[list[int], list[Any]]:
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


def token_log_odds(value_counts: np.ndarray, k: int, columns: list[int],
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


def token_odds_rows(value_counts: np.ndarray, k: int, columns: Any, rows: Any,
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


def token_increment(value_counts: np.ndarray, c: int, columns: Any, bins: np.ndarray,
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


def token_increment_many(value_counts: np.ndarray, classes: np.ndarray, columns: np.ndarray,
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


def class_absent_sum(bins: np.ndarray, counts: np.ndarray, c: int, N: int,
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


def score_tokens(x: dict, table: Any, value_counts: np.ndarray, k: int,
                  class_counts: np.ndarray, a_present: float, a_absent: float, finite: Any,
                  zeros: Any) -> list[Any]:
    _check_rows(value_counts, k, "value_counts")
    if min(len(class_counts), len(finite), len(zeros)) < k:
        raise ValueError("class arrays shorter than n_classes")
    _check_lookup(table, "score_tokens")
    columns = _simple(x, table, False, value_counts.shape[1])
    rest: list[Any] = []
    if columns is None:
        columns, rest = twin.encode_tokens(x, table, False)
    twin.token_log_odds(value_counts, k, columns, class_counts, a_present, a_absent, finite, zeros)
    return rest


def posterior(labels: list, finite: Any, zeros: Any, log: bool = False) -> dict:
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


def class_terms(class_counts: np.ndarray, k: int, b: float, a_present: float, a_absent: float,
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


def learn_tokens(x: dict, table: Any, value_counts: np.ndarray, c: int, bins: np.ndarray,
                  is_head: np.ndarray, binned: bool, new_names: list | None = None
                  ) -> list[int] | None:
    _check_lookup(table, "learn_tokens")
    if new_names is not None and new_names.__class__ is not list:
        raise TypeError("learn_tokens: new_names must be a list or None")
    named = len(new_names) if new_names is not None else 0
    _check_class_row(value_counts, c, "value_counts")
    _check_class_row(bins, c, "bins")
    columns = _simple(x, table, True, min(len(is_head), value_counts.shape[1]), new_names)
    if columns is None or (new_names is not None and len(new_names) > named):
        return None
    return _increment(value_counts[c], bins[c], is_head, columns, binned)


def encode_many(records: list, table: Any, grow: bool
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


def drawn_once(value: Any) -> bool:
    """Whether a text value draws each token once: a dict of str to True, or a set or frozenset
    of str, none a subclass (the shape `text_columns` reads)."""
    if value.__class__ is dict:
        return all(token.__class__ is str and count is True for token, count in value.items())
    if value.__class__ is frozenset or value.__class__ is set:
        return all(token.__class__ is str for token in value)
    return False


def text_columns(bag: Any, table: Any, grow: bool, first_new: int = 0
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
    if not twin.drawn_once(bag):
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


def spam_evidence(columns: Any, value_counts: np.ndarray, spam: int, ham: int,
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


_MOMENTS = ("weight", "mean", "comoment", "square", "cube", "fourth", "x")


def covariance_add_one(weight: Any, mean: Any, comoment: Any, square: Any, cube: Any,
                       fourth: Any, x: Any) -> None:
    """One complete record ``x`` (p,) added in place to a class's pairwise moments (each
    (p, p) float64): ``_combine`` of streamnb/stats/covariance.py with a part of one record
    (weight 1, central sums 0), its zero terms left out."""
    from streamnb.stats.covariance import _shifted  # that module imports this one

    views = []
    for name, obj in zip(_MOMENTS, (weight, mean, comoment, square, cube, fourth, x),
                         strict=True):
        try:
            view = memoryview(obj)
        except TypeError as exc:
            raise TypeError(f"covariance_add_one: {name}: {exc}") from None
        if view.readonly or not view.c_contiguous:
            raise BufferError(f"covariance_add_one: {name}: a writable C-contiguous buffer "
                              f"is required")
        if view.itemsize != 8:
            raise TypeError(f"covariance_add_one: {name} must have 8-byte items, not "
                            f"{view.itemsize}")
        views.append(view)
    for name, view in zip(_MOMENTS, views, strict=True):
        if view.format != "d":
            raise TypeError(f"covariance_add_one: {name} must be float64")
    p = views[6].shape[0] if views[6].ndim == 1 else -1
    if p < 0:
        raise ValueError("covariance_add_one: x must be 1-d")
    for name, view in zip(_MOMENTS[:6], views[:6], strict=True):
        if view.shape != (p, p):
            raise ValueError(f"covariance_add_one: {name} must be {p} x {p}")
    w1, m1, c1, v1, t1, q1, row = (np.asarray(view) for view in views)
    w = w1 + 1.0
    means = m1 + (row[:, None] - m1) * (1.0 / w)
    moved = _shifted(w1, c1, v1, t1, q1, means - m1)
    alpha = means - row[:, None]
    beta = alpha.T
    ab = alpha * beta
    a2 = alpha * alpha
    c1[...] = moved[0] + ab
    v1[...] = moved[1] + a2
    t1[...] = moved[2] - a2 * beta
    q1[...] = moved[3] + a2 * beta * beta
    w1[...] = w
    m1[...] = means


# the C kernels' bounds on a binned cell (_kernels.c, KDE_*): 2^e finite, origin + bin no overflow
_KDE_EXPONENTS = (-1074, 1023)
_KDE_MAX_ORIGIN = 2**62


def _writable_views(where: str, names: Sequence[str], objs: Sequence[Any]
                    ) -> list[memoryview]:
    """The C kernels' get_buffers: a writable C-contiguous buffer of 8-byte items per
    argument, the first one at fault named in the error (numpy's messages, as C relays them)."""
    views = []
    for name, obj in zip(names, objs, strict=True):
        try:
            view = memoryview(obj)
        except TypeError as exc:
            raise TypeError(f"{where}: {name}: {str(exc).removeprefix('memoryview: ')}"
                            ) from None
        if view.readonly:
            raise ValueError(f"{where}: {name}: buffer source array is read-only")
        if not view.c_contiguous:
            raise ValueError(f"{where}: {name}: ndarray is not C-contiguous")
        if view.itemsize != 8:
            raise TypeError(f"{where}: {name} must have 8-byte items, not {view.itemsize}")
        views.append(view)
    return views


def _check_binned(where: str, names: Sequence[str], kinds: Sequence[str],
                  views: Sequence[memoryview]) -> tuple[int, int, int]:
    """The C kernels' check_binned: formats, then counts (k, p, B) and the cells' (k, p)."""
    for name, kind, view in zip(names, kinds, views, strict=True):
        ok = view.format.lstrip("@=<") in ("q", "l") if kind == "int64" else view.format == "d"
        if not ok:
            raise TypeError(f"{where}: {name} must be {kind}")
    if views[0].ndim != 3:
        raise ValueError(f"{where}: counts must be 3-d")
    k, p, n_bins = views[0].shape
    for name, view in zip(names[1:], views[1:], strict=True):
        if view.shape != (k, p):
            raise ValueError(f"{where}: {name} must be {k} x {p}")
    return k, p, n_bins


def _check_cells(where: str, origin: np.ndarray, exponent: np.ndarray, first: int, p: int
                 ) -> None:
    """The C kernels' check_cells: every bin width 2^e finite, origin + bin no overflow."""
    for cell, (start, power) in enumerate(zip(origin.ravel().tolist(),
                                              exponent.ravel().tolist(), strict=True), first):
        if not (_KDE_EXPONENTS[0] <= power <= _KDE_EXPONENTS[1]
                and -_KDE_MAX_ORIGIN <= start <= _KDE_MAX_ORIGIN):
            raise ValueError(f"{where}: cell ({cell // p}, {cell % p}) has bins 2^{power} wide "
                             f"from {start}, out of range")


# the largest ½z² of the nearest held bin for the geometric sum (_kernels.c, KDE_GEOMETRIC_MAX)
_KDE_GEOMETRIC_MAX = 700.0


def _kde_cell(row: list[float], origin: int, exponent: int, h: float, t: float) -> float:
    """The C kernels' kde_cell: log of Σ_b N_b φ((t − m_b) / h) / (h Σ_b N_b), the held bins'
    smallest ½z² factored out, the terms summed outwards from the nearest held bin as a
    geometric recurrence (see the C kernel)."""
    w = math.ldexp(1.0, exponent)
    inv = 1.0 / h  # h ≥ 2^e > 0: the bandwidth is never below the bin width
    total, s, nearest = 0.0, math.inf, -1
    for b, n in enumerate(row):
        if n > 0.0:
            z = (t - (float(origin + b) + 0.5) * w) * inv
            q = 0.5 * z * z
            total += n
            if q < s:
                s, nearest = q, b
    if nearest < 0:
        return -math.inf
    total_sum = row[nearest]
    if s <= _KDE_GEOMETRIC_MAX:
        delta = w * inv
        shrink = math.exp(-delta * delta)
        z = (t - (float(origin + nearest) + 0.5) * w) * inv
        for side, g in ((range(nearest + 1, len(row)), math.exp(delta * z - 0.5 * delta * delta)),
                        (range(nearest - 1, -1, -1), math.exp(-delta * z - 0.5 * delta * delta))):
            term = 1.0
            for b in side:
                if term == 0.0:
                    break
                term *= g
                g *= shrink
                if row[b] > 0.0:
                    total_sum += row[b] * term
    else:
        for b, n in enumerate(row):
            if n > 0.0 and b != nearest:
                z = (t - (float(origin + b) + 0.5) * w) * inv
                total_sum += n * math.exp(s - 0.5 * z * z)
    return _log(total_sum) - s - _log(h * total) - 0.5 * math.log(2.0 * math.pi)


def kde_log_likelihood(counts: Any, origin: Any, exponent: Any, bandwidth: Any, values: Any,
                       attributes: Any, out: Any) -> None:
    """out[i, c] += Σ_a log f_{c,a}(values[i, a]) over ``attributes`` (NaN values omitted): the
    binned Gaussian kernel density estimates of streamnb/stats/binned_density.py, bandwidth
    never below a cell's bin width (see the C kernel)."""
    where = "kde_log_likelihood"
    names = ("counts", "origin", "exponent", "bandwidth", "values", "out")
    views = _writable_views(where, names, (counts, origin, exponent, bandwidth, values, out))
    k, p, _ = _check_binned(where, names[:4], ("float64", "int64", "int64", "float64"),
                            views[:4])
    for name, view in zip(names[4:], views[4:], strict=True):
        if view.format != "d":
            raise TypeError(f"{where}: {name} must be float64")
    if views[4].ndim != 2 or views[4].shape[1] != p:
        raise ValueError(f"{where}: values must be 2-d with {p} columns")
    m = views[4].shape[0]
    if views[5].shape != (m, k):
        raise ValueError(f"{where}: out must be {m} x {k}")
    n, o, e, h, x, sums = (np.asarray(view) for view in views)
    _check_cells(where, o, e, 0, p)
    columns = _read_columns(attributes, p)
    for i in range(m):
        row = x[i].tolist()
        for c in range(k):
            acc = float(sums[i, c])
            for a in columns:
                t = row[a]
                if t != t:
                    continue  # missing: the factor is omitted
                width, given = math.ldexp(1.0, int(e[c, a])), float(h[c, a])
                acc += _kde_cell(n[c, a].tolist(), int(o[c, a]), int(e[c, a]),
                                 given if given > width else width, t)
            sums[i, c] = acc


def _floor_scaled(v: float, e: int) -> float:
    """C's floor(ldexp(v, −e)): ±inf where Python's raise OverflowError."""
    try:
        return float(math.floor(math.ldexp(v, -e)))
    except OverflowError:
        return math.copysign(math.inf, v)


def binned_add_one(counts: Any, origin: Any, exponent: Any, weight: Any, mean: Any, m2: Any,
                   c: int, x: Any) -> list[int]:
    """One record ``x`` of class ``c`` added to a binned density's bins and moments; the
    attributes whose value fell outside their cell's bins, left for the caller to re-bin (see
    the C kernel)."""
    where = "binned_add_one"
    names = ("counts", "origin", "exponent", "weight", "mean", "m2", "x")
    kinds = ("float64", "int64", "int64", "float64", "float64", "float64")
    c = _ssize(c)
    views = _writable_views(where, names, (counts, origin, exponent, weight, mean, m2, x))
    k, p, n_bins = _check_binned(where, names[:6], kinds, views[:6])
    if views[6].format != "d":
        raise TypeError(f"{where}: x must be float64")
    if views[6].shape != (p,):
        raise ValueError(f"{where}: x must be 1-d of length {p}")
    if not 0 <= c < k:
        raise IndexError(f"class {c} out of range")
    n, o, e, w, mu, s2, row = (np.asarray(view) for view in views)
    _check_cells(where, o[c], e[c], c * p, p)
    outside = []
    for a, v in enumerate(row.tolist()):
        if v != v:
            continue
        first = int(o[c, a])
        scaled = _floor_scaled(v, int(e[c, a]))
        if scaled >= float(first) and scaled < float(first + n_bins) and w[c, a] > 0.0:
            n[c, a, int(scaled - float(first))] += 1.0
        else:
            outside.append(a)
        count = float(w[c, a]) + 1.0
        d = v - float(mu[c, a])
        mean_a = float(mu[c, a]) + d / count
        w[c, a], mu[c, a] = count, mean_a
        s2[c, a] = float(s2[c, a]) + d * (v - mean_a)
    return outside


# ---- Fisher's χ² tails -----------------------------------------------------------------------

# ln k! for k = 0, 1, …, grown on demand up to _MAX_LOG_FACTORIALS entries by a compensated
# (Kahan) sum of ln k, the C kernel's table: CPython's math.lgamma is not libm's lgamma, a sum
# of libm's logs is the same in both, and compensated it is within an ulp or two of ln k! (a
# plain sum drifts by ~k ulps). Past the table the sum goes on without being kept.
_MAX_LOG_FACTORIALS = 1 << 16
_LOG_FACTORIALS = [0.0]
_LOG_FACTORIAL_CARRY = [0.0]  # the compensation after the table's last term


def _log_factorial(k: int) -> float:
    table = _LOG_FACTORIALS
    if k < len(table):
        return table[k]
    total, carry = table[-1], _LOG_FACTORIAL_CARRY[0]
    for j in range(len(table), k + 1):
        y = math.log(j) - carry
        t = total + y
        carry = (t - total) - y
        total = t
        if j < _MAX_LOG_FACTORIALS:
            table.append(total)
            _LOG_FACTORIAL_CARRY[0] = carry
    return total


def _poisson_run(lam: float, start: int, step: int) -> float:
    """Σ e^−λ λᵏ/k! from k = ``start`` on, k stepping by ``step`` (±1) away from the mode λ, so
    the terms shrink geometrically: the first in log space (no overflow of λᵏ, no underflow of
    e^−λ before the product), the rest by the ratio of neighbours, until they no longer count."""
    term = math.exp(start * math.log(lam) - lam - _log_factorial(start))
    total, k = term, start
    while term > total * 1e-17 and k + step >= 0:
        term *= k / lam if step < 0 else lam / (k + 1)
        k += step
        total += term
    return total


def _log_tails(stat: float, m: int) -> tuple[float, float]:
    """ln Q and ln(1 − Q) of the χ² survival Q(stat; 2m), in closed form: Q is the chance of
    fewer than m events of a Poisson process of mean λ = stat/2, Q = Σ_{k<m} e^−λ λᵏ/k!. The
    smaller tail is summed and its log taken, the larger is log1p of minus it (equal to scipy's
    ``chdtrc``/``chdtr`` to 1e-12, which ``import scipy.special`` would cost ~0.5 s of every
    ``streamnb score`` process)."""
    lam = stat / 2.0
    if lam <= 0.0:
        return 0.0, -math.inf
    if lam >= m:  # the mode is at or past the last term of Q: Q is the smaller tail
        sf = _poisson_run(lam, m - 1, -1)
        return (math.log(sf) if sf > 0.0 else -math.inf), math.log1p(-sf)
    cdf = _poisson_run(lam, m, 1)  # 1 − Q: the terms from m on
    return math.log1p(-cdf), (math.log(cdf) if cdf > 0.0 else -math.inf)


_LOG_2 = math.log(2.0)


def _logaddexp(a: float, b: float) -> float:
    """ln(eᵃ + eᵇ) of two floats: numpy's ``logaddexp`` (npy_logaddexp, libm's exp and log1p:
    the same value, bit for bit) without a ufunc call's ~1 µs."""
    if a == b:  # infinities of one sign included
        return a + _LOG_2
    gap = a - b
    if gap > 0:
        return a + math.log1p(math.exp(-gap))
    if gap <= 0:
        return b + math.log1p(math.exp(gap))
    return gap  # NaN


def chi2_log_odds(m: int, spam_stat: float, ham_stat: float) -> float:
    """ln I − ln(1 − I) of Fisher's combined indicator I = (1 + H − S) / 2 over ``m``
    spamicities, from its statistics −2 Σ ln f(w) (H = Q(spam_stat; 2m)) and −2 Σ ln(1 − f(w))
    (S = Q(ham_stat; 2m)); 0 when m = 0 (streamnb/estimators/robinson_fisher.py)."""
    m = _ssize(operator.index(m))
    spam_stat, ham_stat = _double(spam_stat), _double(ham_stat)
    if m < 0:
        raise ValueError("chi2_log_odds: m must be >= 0")
    if m == 0:
        return 0.0
    log_h, log_not_h = _log_tails(spam_stat, m)
    log_s, log_not_s = _log_tails(ham_stat, m)
    # I = (H + (1 − S)) / 2,  1 − I = ((1 − H) + S) / 2
    return _logaddexp(log_h, log_not_s) - _logaddexp(log_not_h, log_s)


twin, ACCELERATED = choose(globals(), "streamnb._accel._kernels")
