"""The index tree of Singh & Provan (1995, §4.3): the instantiations of a selected attribute set
Π that occur in weighted records, and the class × A (or X × Y) contingency table of each, one
layer per instantiation.

Selecting attribute A given Π needs the 3-d table class × A × *instantiation of Π*. Pairwise
counts cannot give it, so the table is built from records: a record is routed to the leaf of its
instantiation of Π, and extending Π by one attribute splits every leaf by that attribute's
values. Only instantiations that occur exist, so a table has at most m layers for m records.
A table counts the records where its attributes and every attribute of Π were observed (as
:mod:`streamnb.structure.weights` does for pairs), so each metric of it is the exact metric of
one coherent distribution; token attributes are never missing.
"""

from __future__ import annotations

import numpy as np

__all__ = ["IndexTree"]


class IndexTree:
    """The instantiations of a selected set Π that occur in the records (Singh & Provan §4.3).

    The paper's tree has one level per attribute of Π, an edge per value, and a 2-d contingency
    table (class × candidate) at each leaf; a path from the root is an instantiation. Here the
    tree is kept as its leaves: ``leaf[r]`` is the leaf of record r (−1 if an attribute of Π is
    missing in it) and ``instantiations[l]`` the path to leaf l. :meth:`extend` adds a level in
    O(m log m), :meth:`table` fills every leaf's table for a candidate in one ``bincount``, O(m).

    Examples
    --------
    >>> tree = IndexTree(4).extend(np.array([0, 1, 0, 1]), 2).extend(np.array([2, 2, 0, -1]), 3)
    >>> tree.leaf.tolist(), tree.instantiations.tolist()
    ([1, 2, 0, -1], [[0, 0], [0, 2], [1, 2]])
    >>> tree.table(np.array([0, 1, 1, 0]), 2, np.array([1, 1, 0, 0]), 2).tolist()
    [[[0.0, 0.0], [1.0, 0.0]], [[0.0, 1.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 1.0]]]

    """

    def __init__(self, n_records: int) -> None:
        self.leaf = np.zeros(n_records, dtype=np.int64)
        self.instantiations = np.zeros((1, 0), dtype=np.int64)

    @property
    def n_leaves(self) -> int:
        return int(self.instantiations.shape[0])

    def extend(self, values: np.ndarray, cardinality: int) -> IndexTree:
        """The tree one level deeper: every leaf split by ``values`` (−1: missing)."""
        values = np.asarray(values, dtype=np.int64)
        out = IndexTree.__new__(IndexTree)
        ok = (self.leaf >= 0) & (values >= 0)
        code = self.leaf[ok] * cardinality + values[ok]
        occurring, inverse = np.unique(code, return_inverse=True)
        out.leaf = np.full(len(values), -1, dtype=np.int64)
        out.leaf[ok] = inverse.reshape(-1)
        out.instantiations = np.column_stack([self.instantiations[occurring // cardinality],
                                              occurring % cardinality])
        return out

    def table(self, first: np.ndarray, r_first: int, second: np.ndarray, r_second: int,
              weights: np.ndarray | None = None) -> np.ndarray:
        """Weighted counts ``(leaves, r_first, r_second)`` of the records where the leaf and
        both values are known."""
        ok = (self.leaf >= 0) & (first >= 0) & (second >= 0)
        flat = (self.leaf[ok] * r_first + first[ok]) * r_second + second[ok]
        size = self.n_leaves * r_first * r_second
        counts = np.bincount(flat, weights=None if weights is None else weights[ok],
                             minlength=size)
        return counts.astype(np.float64, copy=False).reshape(self.n_leaves, r_first, r_second)

    def tables(self, first: np.ndarray, r_first: int, seconds: np.ndarray, r_second: int,
               weights: np.ndarray | None = None) -> np.ndarray:
        """:meth:`table` for each column of ``seconds`` (all of cardinality ``r_second``), in
        one bincount: ``(columns, leaves, r_first, r_second)``."""
        seconds = np.asarray(seconds, dtype=np.int64)
        if seconds.ndim == 1:
            seconds = seconds[:, None]
        n_tables, layers = seconds.shape[1], self.n_leaves
        ok = ((self.leaf >= 0) & (first >= 0))[:, None] & (seconds >= 0)
        rows, which = np.nonzero(ok)
        flat = (((which * layers + self.leaf[rows]) * r_first + first[rows]) * r_second
                + seconds[rows, which])
        counts = np.bincount(flat, weights=None if weights is None else weights[rows],
                             minlength=n_tables * layers * r_first * r_second)
        return counts.astype(np.float64, copy=False).reshape(n_tables, layers, r_first,
                                                             r_second)
