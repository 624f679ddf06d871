"""Per-class histograms of token counts, for O(1)-in-vocabulary "all tokens absent" sums.

Bernoulli-style naive Bayes needs, per class, ``Σ_t log(N(c) − N_t(c) + a)`` over the whole
vocabulary. Every record of class ``c`` changes ``N(c)`` and hence every term, so no per-token
cache survives a learn; but the sum only depends on the *multiset* of token counts. This keeps
that multiset: tokens whose counts are integers ≤ ``threshold`` in every class are binned
(``bins[c, n]`` tokens have count ``n`` in class ``c``), the few frequent ones are listed in
``head``. The sum is then one dot product over the bins plus a gather over the head, exactly,
and a learn costs O(tokens in the record); a batch, O(distinct tokens in the batch)
(:meth:`TokenHistogram.recount`), so neither ever touches the whole vocabulary.

Counts that stop being integers (forgetting) are not binned: ``exact`` turns False and callers
fall back to the O(vocabulary) sum.
"""

from __future__ import annotations

import bisect
from array import array

import numpy as np

from streamnb._accel.kernels import class_terms

__all__ = ["TokenHistogram"]


class TokenHistogram:
    def __init__(self, threshold: int = 1024) -> None:
        self.threshold = threshold
        self.bins = np.zeros((0, threshold + 1))
        self.is_head = np.zeros(0, dtype=bool)  # indexed by column
        self.head: list[int] = []  # sorted, so that a rebuild gives the same list
        self.exact = True
        # tokens and classes the bins account for; newer ones join through ``cover``
        self.n_tokens = 0
        self.n_classes = 0
        self._head_array: np.ndarray | None = None
        # per-class sums for one pseudo-count ``a``, recomputed only for classes that changed
        self._a: float | None = None
        self._log_table = np.zeros(0)  # log(j + a), j = 0, 1, ...
        self._sums = array("d")
        self._zeros = array("q")
        self._finite = array("d")
        self._finite_zeros = array("q")
        self._dirty: set[int] | None = None  # None: every class

    def head_columns(self) -> np.ndarray:
        if self._head_array is None:
            self._head_array = np.asarray(self.head, dtype=np.int64)
        return self._head_array

    def _fit(self, n_classes: int, n_columns: int) -> None:
        if n_classes > len(self.bins):
            grown = np.zeros((n_classes, self.threshold + 1))
            grown[: len(self.bins)] = self.bins
            self.bins = grown
        if n_columns > len(self.is_head):
            grown = np.zeros(max(n_columns, 2 * len(self.is_head), 64), dtype=bool)
            grown[: len(self.is_head)] = self.is_head
            self.is_head = grown

    def cover(self, n_tokens: int, n_classes: int, n_columns: int) -> None:
        """Account for the tokens and classes that joined since the last call: each new token
        has count 0 in every class, every token (binned or head) count 0 in a new class."""
        self._fit(n_classes, n_columns)
        if n_tokens == self.n_tokens and n_classes == self.n_classes:
            return
        if n_classes > self.n_classes:
            self.bins[self.n_classes:n_classes, 0] = self.n_tokens - len(self.head)
        self.bins[:n_classes, 0] += n_tokens - self.n_tokens
        self.n_tokens, self.n_classes = n_tokens, n_classes
        self._dirty = None

    def counted(self, c: int, crossed: list[int], value_counts: np.ndarray) -> None:
        """Class ``c``'s token counts were incremented (by ``kernels.token_increment``, which
        also moved them between bins); ``crossed`` left the last bin and join the head."""
        if not self.exact:
            return
        if self._dirty is not None:
            self._dirty.add(c)
        for j in crossed:  # leaves every other class's bins too
            for other in range(len(self.bins)):
                if other != c:
                    self.bins[other, int(value_counts[other, j])] -= 1.0
            self.is_head[j] = True
            bisect.insort(self.head, j)
            self._head_array = None

    def joined(self, crossed: list[int]) -> None:
        """A batch's token counts were incremented (by ``kernels.token_increment_many``,
        which also moved them between bins, took ``crossed`` out of every class's bins and
        marked them head): ``crossed`` join the head list; every class's sum is stale."""
        if crossed:
            self.head = sorted(self.head + crossed)
            self._head_array = None
        self._dirty = None

    def recount(self, columns: np.ndarray, old: np.ndarray, new: np.ndarray) -> None:
        """Token ``columns`` (distinct, already covered) went from counts ``old`` to ``new``
        (both classes × columns) in a batch: move them between bins, and into the head when one
        passed the threshold. O(classes × (columns + threshold)), whatever the vocabulary; the
        result equals :meth:`rebuild` from the new counts (tests/test_properties.py)."""
        if not self.exact:
            raise ValueError("recount needs integer counts: rebuild instead")
        binned = ~self.is_head[columns]
        columns, old, new = columns[binned], old[:, binned], new[:, binned]
        crossed = (new > self.threshold).any(axis=0)
        size = self.threshold + 1
        for c in range(len(old)):
            self.bins[c] -= np.bincount(old[c].astype(np.int64), minlength=size)
            self.bins[c] += np.bincount(new[c, ~crossed].astype(np.int64), minlength=size)
        if crossed.any():
            joined = columns[crossed]
            self.is_head[joined] = True
            self.head = sorted(self.head + joined.tolist())
            self._head_array = None
        self._dirty = None

    def rebuild(self, class_counts: np.ndarray, token_counts: np.ndarray,
                token_columns: np.ndarray, n_columns: int) -> None:
        """Recompute from the counts (after a batch update, merge, decay or load)."""
        k = len(class_counts)
        self._dirty = None
        self.n_tokens, self.n_classes = len(token_columns), k
        self.bins = np.zeros((k, self.threshold + 1))
        self.is_head = np.zeros(max(n_columns, 64), dtype=bool)
        self._head_array = None
        self.exact = bool(np.all(token_counts == np.floor(token_counts))
                          and np.all(class_counts == np.floor(class_counts)))
        if not self.exact:
            self.head = []
            return
        head = (token_counts > self.threshold).any(axis=0) if k else np.zeros(0, bool)
        self.head = token_columns[head].tolist()
        self.is_head[self.head] = True
        binned = token_counts[:, ~head].astype(np.int64)
        for c in range(k):
            self.bins[c] = np.bincount(binned[c], minlength=self.threshold + 1)

    def _reset_cache(self, k: int, a: float) -> None:
        if a != self._a or len(self._sums) != k:
            self._a, self._dirty = a, None
            self._log_table = np.zeros(0)
            self._sums, self._zeros = array("d", bytes(8 * k)), array("q", bytes(8 * k))

    def _extend_log_table(self, top: int) -> None:
        """``log(j + a)`` for j = 0 … at least ``top`` (doubling, so amortised O(1))."""
        size = max(top + 1, 2 * len(self._log_table), 1024)
        with np.errstate(divide="ignore"):
            table = np.log(np.arange(size) + self._a)
        table[np.isinf(table)] = 0.0  # a = 0: zero terms are counted, not logged
        self._log_table = table

    def log_table(self, a: float) -> np.ndarray | None:
        """``log(j + a)`` for j = 0, 1, … as :meth:`class_terms` last extended it (far enough for
        every class's ``N(c)`` at that call), or None when that call used another ``a``. Read
        it only; a kernel indexing it must check its range."""
        return self._log_table if a == self._a and len(self._log_table) else None

    def class_terms(self, class_counts: np.ndarray, k: int, b: float, a_present: float,
                    a_absent: float, n_tokens: int, value_counts: np.ndarray
                    ) -> tuple[array, array]:
        """Per class ``log((N(c) + b)/Σ(N + b)) + Σ_t log θ(absent_t | c)`` with
        ``θ(absent_t | c) = (N(c) − N_t(c) + a_absent)/(N(c) + a_present + a_absent)``, and the
        zero-factor counts, in one kernel call (``class_counts``/``value_counts`` are the
        statistics' full, C-contiguous arrays). The arrays returned are reused by the next
        call: copy them to keep them."""
        if a_absent != self._a or len(self._sums) != k:
            self._reset_cache(k, a_absent)
        finite, zeros = self._finite, self._finite_zeros
        if len(finite) != k:
            finite = self._finite = array("d", bytes(8 * k))
            zeros = self._finite_zeros = array("q", bytes(8 * k))
        while not class_terms(class_counts, k, b, a_present, a_absent, n_tokens, self.bins,
                              value_counts, self.head_columns(), self._log_table, self._dirty,
                              self._sums, self._zeros, finite, zeros):
            self._extend_log_table(2 * len(self._log_table))
        self._dirty = set()
        return finite, zeros
