"""Info-AS attribute selection (Singh & Provan 1995, §4; science.md §3): contingency data in, the
selected attributes out.

Selecting attribute A given the already selected set Π needs the 3-d contingency table
class × A × *instantiation of Π*, with one layer per instantiation that occurs. Pairwise counts
cannot give it, so these functions read weighted, encoded records (:class:`DiscreteData`, e.g.
from :class:`streamnb.stats.Reservoir`) and build the tables with the paper's *index tree*
(:class:`IndexTree`): a record is routed to the leaf of its instantiation of Π, and extending Π
by one attribute splits every leaf by that attribute's values. Only instantiations that occur
exist, so a table has at most m layers for m records.

With p_l the probability of layer l and, inside it, p_{i/l}, p_{j/l}, p_{ij/l} the probabilities of
class i, value j and cell (i, j) (eq. 3–5):

- CIG(A; Π) = Σ_l p_l (H_C^l + H_A^l − H_Cell^l)                     (Definition 4.1)
- CGR(A; Π) = CIG(A; Π) / Σ_l p_l H_A^l                               (Definition 4.2)
- CDC(A; Π) = CIG(A; Π) / Σ_l p_l H_Cell^l                            (Definition 4.3)

in nats; CGR and CDC are 0 when their denominator is 0 (the paper's footnote 3). With Π = ∅ they
are Quinlan's gain and gain ratio and 1 − d_N, López de Màntaras' normalised distance.

Conventions:

- **Missing values.** A table counts the records where A and every attribute of Π were observed
  (as :mod:`streamnb.structure.weights` does for pairs), so each metric is the exact metric of
  one coherent distribution; token attributes are never missing.
- **Weights.** Each record carries a weight (a reservoir's estimated count of the records it
  stands for, or a decayed weight); tables sum weights. Only ratios of counts enter the metrics.
- **Rounding.** A CIG below 1e-12 nats is rounding of an exact 0 (the four entropy sums cancel)
  and is taken as 0, so that it cannot pass the "> 0" rule or turn into a large ratio.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from scipy.special import chdtrc

from streamnb.stats.domain import index_records

__all__ = [
    "METRICS",
    "DiscreteData",
    "IndexTree",
    "Selection",
    "conditional_distance_complement",
    "conditional_gain_ratio",
    "conditional_independence_test",
    "conditional_information_gain",
    "info_as",
]

MetricName = Literal["cig", "cgr", "cdc"]
#: A CIG at or below this (nats) is rounding of an exact zero.
ZERO_INFORMATION = 1e-12


@dataclass(frozen=True, eq=False)
class DiscreteData:
    """Weighted records of discrete attributes, encoded as value indices.

    Parameters
    ----------
    values
        ``(m, n)`` integer value indices of the ``n`` attributes, −1 for a missing value.
    classes
        ``(m,)`` class indices in ``[0, n_classes)``.
    cardinalities
        ``(n,)`` number of values of each attribute (#A_i); every index is below it.
    n_classes
        Number of classes k.
    names
        Attribute names, default ``0 .. n-1``.
    weights
        ``(m,)`` non-negative record weights; default all 1.
    class_names, value_names
        Optional labels of the classes and of each attribute's values (for display and
        :meth:`from_records`).

    Examples
    --------
    >>> data = DiscreteData.from_records([{"a": "x", "b": "u"}, {"a": "y"}], ["+", "-"])
    >>> data.values.tolist(), data.cardinalities.tolist(), data.class_names
    ([[0, 0], [1, -1]], [2, 1], ('+', '-'))

    """

    values: np.ndarray
    classes: np.ndarray
    cardinalities: np.ndarray
    n_classes: int
    names: tuple[Hashable, ...] | None = None
    weights: np.ndarray | None = None
    class_names: tuple[Hashable, ...] | None = None
    value_names: tuple[tuple[Hashable, ...], ...] | None = None

    def __post_init__(self) -> None:
        values = np.asarray(self.values, dtype=np.int64)
        if values.ndim != 2:
            raise ValueError(f"values must be a 2-d (records, attributes) array, got shape "
                             f"{values.shape}")
        m, n = values.shape
        classes = np.asarray(self.classes, dtype=np.int64).reshape(-1)
        if classes.shape != (m,):
            raise ValueError(f"classes must have shape ({m},), got {classes.shape}")
        cards = np.asarray(self.cardinalities, dtype=np.int64).reshape(-1)
        if cards.shape != (n,):
            raise ValueError(f"cardinalities must have shape ({n},), got {cards.shape}")
        k = int(self.n_classes)
        if m and (classes.min() < 0 or classes.max() >= k):
            raise ValueError(f"class indices must lie in [0, {k})")
        if m and n and (values.min() < -1 or (values >= cards).any()):
            raise ValueError("value indices must lie in [-1, cardinality)")
        weights = (np.ones(m) if self.weights is None
                   else np.asarray(self.weights, dtype=np.float64).reshape(-1))
        if weights.shape != (m,) or not (np.isfinite(weights).all() and (weights >= 0).all()):
            raise ValueError(f"weights must be {m} finite non-negative numbers")
        names = tuple(range(n)) if self.names is None else tuple(self.names)
        if len(names) != n or len(set(names)) != n:
            raise ValueError(f"names must be {n} distinct names, got {names!r}")
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "classes", classes)
        object.__setattr__(self, "cardinalities", cards)
        object.__setattr__(self, "n_classes", k)
        object.__setattr__(self, "names", names)
        object.__setattr__(self, "weights", weights)

    @property
    def n_records(self) -> int:
        return int(self.values.shape[0])

    @property
    def n_attributes(self) -> int:
        return int(self.values.shape[1])

    def effective_size(self, rows: np.ndarray | None = None) -> float:
        """Kish's effective sample size (Σw)²/Σw² of the records (or of ``rows``, a mask or
        index array): the number of independent records the weights carry evidence of. It is
        the record count for unit weights, and for a reservoir's equal estimated weights."""
        w = self.weights if rows is None else self.weights[rows]
        square = float(np.dot(w, w))
        return float(w.sum()) ** 2 / square if square > 0 else 0.0

    def take(self, rows: Any) -> DiscreteData:
        """The records ``rows`` (an index array or a mask)."""
        return DiscreteData(self.values[rows], self.classes[rows], self.cardinalities,
                            self.n_classes, self.names, self.weights[rows], self.class_names,
                            self.value_names)

    def select(self, attributes: Sequence[int]) -> DiscreteData:
        """The attributes ``attributes`` (indices), in that order."""
        idx = list(attributes)
        return DiscreteData(self.values[:, idx], self.classes, self.cardinalities[idx],
                            self.n_classes, [self.names[i] for i in idx], self.weights,
                            self.class_names,
                            None if self.value_names is None else
                            tuple(self.value_names[i] for i in idx))

    def split(self, fraction: float = 0.5, seed: int = 0) -> tuple[DiscreteData, DiscreteData]:
        """A random split into two parts, the first with ``round(fraction · m)`` records (the
        paper's subset-learn / subset-eval halves). The records are put in a canonical order
        (by content) first, so the split depends on the set of records, not on their order."""
        canonical = np.lexsort((self.weights, self.classes, *self.values.T))
        order = canonical[np.random.default_rng(seed).permutation(self.n_records)]
        cut = round(fraction * self.n_records)
        return self.take(np.sort(order[:cut])), self.take(np.sort(order[cut:]))

    @classmethod
    def from_records(cls, records: Iterable[Mapping[Hashable, Any]], labels: Iterable[Hashable],
                     names: Sequence[Hashable] | None = None,
                     weights: Any = None) -> DiscreteData:
        """Encode nominal records (None or NaN = missing); classes and values are indexed in
        order of first appearance."""
        records, labels = list(records), list(labels)
        if len(records) != len(labels):
            raise ValueError(f"{len(records)} records but {len(labels)} labels")
        names, values, domains = index_records(records, names)
        class_index: dict[Hashable, int] = {}
        classes = np.array([class_index.setdefault(y, len(class_index)) for y in labels],
                           dtype=np.int64)
        return cls(values, classes, [max(len(d), 1) for d in domains], max(len(class_index), 1),
                   names, weights, tuple(class_index), tuple(tuple(d) for d in domains))


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


# -- the metrics (Definitions 4.1–4.3) -----------------------------------------------------------
def _xlogx(t: np.ndarray) -> np.ndarray:
    logs = np.log(t, where=t > 0, out=np.zeros_like(t))
    return t * logs


def _entropy_sums_many(tables: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CIG, Σ_l p_l H_A^l and Σ_l p_l H_Cell^l of each of a stack of ``(layers, k, r)`` tables.

    With n_· the table's sums and N its total, Σ_l p_l H_C^l = (Σ n_l ln n_l − Σ n_li ln n_li)/N
    and likewise for A and the cells, so CIG = (S_l − S_C − S_A + S_Cell)/N with S_x = Σ n ln n.
    """
    t = np.asarray(tables, dtype=np.float64)
    total = t.sum(axis=(1, 2, 3))
    s_layer = _xlogx(t.sum(axis=(2, 3))).sum(axis=1)
    s_class = _xlogx(t.sum(axis=3)).sum(axis=(1, 2))
    s_value = _xlogx(t.sum(axis=2)).sum(axis=(1, 2))
    s_cell = _xlogx(t).sum(axis=(1, 2, 3))
    n = np.where(total > 0, total, 1.0)
    cig = (s_layer - s_class - s_value + s_cell) / n
    cig = np.where((total > 0) & (cig > ZERO_INFORMATION), cig, 0.0)
    h_a = np.where(total > 0, np.maximum((s_layer - s_value) / n, 0.0), 0.0)
    h_cell = np.where(total > 0, np.maximum((s_layer - s_cell) / n, 0.0), 0.0)
    return cig, h_a, h_cell


def _metric_many(metric: str, tables: np.ndarray) -> np.ndarray:
    cig, h_a, h_cell = _entropy_sums_many(tables)
    if metric == "cig":
        return cig
    denominator = h_a if metric == "cgr" else h_cell
    ok = (cig > 0) & (denominator > 0)
    return np.where(ok, cig / np.where(ok, denominator, 1.0), 0.0)


def _entropy_sums(table: Any) -> tuple[float, float, float]:
    t = np.asarray(table, dtype=np.float64)
    if t.ndim != 3:
        raise ValueError(f"the table must be (layers, classes, values), got shape {t.shape}")
    cig, h_a, h_cell = _entropy_sums_many(t[None])
    return float(cig[0]), float(h_a[0]), float(h_cell[0])


def conditional_information_gain(table: Any) -> float:
    """CIG(A; Π) = Σ_l p_l (H_C^l + H_A^l − H_Cell^l) (Definition 4.1, eq. 3–5), in nats.

    ``table[l, i, j]`` counts class i and value j of A in instantiation l of Π.

    Examples
    --------
    >>> t = np.array([[[2, 0], [0, 2]]])   # Π = ∅: A determines the class
    >>> round(conditional_information_gain(t), 6)   # = H(C) = ln 2
    0.693147

    """
    return _entropy_sums(table)[0]


def conditional_gain_ratio(table: Any) -> float:
    """CGR(A; Π) = CIG / Σ_l p_l H_A^l (Definition 4.2); 0 if the denominator is 0.

    Examples
    --------
    >>> t = np.array([[[2, 0, 0], [0, 1, 1]]])   # A has 3 values, 2 suffice
    >>> round(conditional_gain_ratio(t), 6)      # ln 2 / H(1/2, 1/4, 1/4)
    0.666667

    """
    cig, h_a, _ = _entropy_sums(table)
    return cig / h_a if cig > 0 and h_a > 0 else 0.0


def conditional_distance_complement(table: Any) -> float:
    """CDC(A; Π) = CIG / Σ_l p_l H_Cell^l = 1 − d_N(A/Π) (Definition 4.3); 0 if the denominator
    is 0.

    Examples
    --------
    >>> t = np.array([[[2, 0], [0, 2]]])
    >>> conditional_distance_complement(t)   # ln 2 / ln 2: distance 0
    1.0

    """
    cig, _, h_cell = _entropy_sums(table)
    return cig / h_cell if cig > 0 and h_cell > 0 else 0.0


METRICS: dict[str, Callable[[Any], float]] = {
    "cig": conditional_information_gain,
    "cgr": conditional_gain_ratio,
    "cdc": conditional_distance_complement,
}


def conditional_independence_test(table: Any, effective_size: float | None = None
                                  ) -> tuple[float, int, float]:
    """G-test of X ⊥ Y | Z on a ``(layers of Z, r_X, r_Y)`` table: ``(G, df, p-value)``.

    G = 2 n I(X; Y | Z), with I the conditional mutual information of the table (its CIG) and n
    the effective number of records (default: the table's total, right for raw counts; pass
    :meth:`DiscreteData.effective_size` for weighted records). Under independence G is
    asymptotically χ² with df = Σ_l (r_X^l − 1)(r_Y^l − 1), r^l counting the values that occur
    in layer l (structural zeros carry no degrees of freedom). p = 1 when df = 0.

    Examples
    --------
    >>> g, df, p = conditional_independence_test(np.array([[[30, 10], [10, 30]]]))
    >>> round(g, 3), df, round(p, 6)
    (20.93, 1, 5e-06)

    """
    t = np.asarray(table, dtype=np.float64)
    cig = _entropy_sums(t)[0]
    n = float(t.sum()) if effective_size is None else float(effective_size)
    rows = (t.sum(axis=2) > 0).sum(axis=1)
    cols = (t.sum(axis=1) > 0).sum(axis=1)
    df = int((np.maximum(rows - 1, 0) * np.maximum(cols - 1, 0)).sum())
    g = 2.0 * n * cig
    # chdtrc is the χ² survival function that scipy.stats.chi2.sf evaluates, without the
    # distribution object's per-call overhead (about 2 ms here, and CB runs many tests)
    return g, df, (float(chdtrc(df, g)) if df > 0 else 1.0)


# -- Info-AS (§4.2) -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Selection:
    """The outcome of a forward attribute selection.

    Attributes
    ----------
    selected
        Attribute names in the order they were added.
    indices
        Their column indices in the data.
    scores
        The criterion of each when it was added (the metric for Info-AS, the subset-eval
        accuracy for the wrappers).
    p_values
        The G-test p-value of each added attribute (Info-AS with a ``significance``), else None.
    method
        ``"info-as/cgr"``, ``"naive-as"``, ...
    stop
        Why the selection stopped.
    """

    selected: tuple[Hashable, ...]
    indices: tuple[int, ...]
    scores: tuple[float, ...]
    p_values: tuple[float, ...] | None
    method: str
    stop: str


def info_as(data: DiscreteData, metric: MetricName = "cgr", significance: float | None = None,
            max_selected: int | None = None, candidates: Sequence[int] | None = None
            ) -> Selection:
    """Info-AS's node-selection phase: forward selection by an information metric (§4.2).

    Start with Π = ∅; at each step compute IM(Π; A) for every candidate A not yet selected
    (one index-tree table each) and add the argmax (ties: the lowest index) while the maximum is
    > 0. Cost O(m r n² (r + n)) for m records, n attributes, r values (§4.3).

    The paper's future work (§6): as Π grows its instantiations thin out and the metric becomes
    unreliable. With ``significance`` set, the argmax is added only if the G-test rejects
    C ⊥ A | Π at that level (:func:`conditional_independence_test`, with the records' effective
    size), and the selection stops at the first one that does not.

    Parameters
    ----------
    data
        The records.
    metric
        ``"cig"``, ``"cgr"`` or ``"cdc"`` (Definitions 4.1–4.3).
    significance
        Level of the χ² stopping test, in (0, 1); None for the paper's rule (> 0) alone.
    max_selected
        Stop after this many attributes (None: no limit).
    candidates
        Column indices that may be selected (default: all).

    Returns
    -------
    Selection

    Examples
    --------
    >>> records = [{"a": a, "b": b, "noise": n} for a, b, n in
    ...            [("x", "u", 1), ("x", "w", 2), ("y", "u", 1), ("y", "w", 2)] * 5]
    >>> labels = ["+" if r["a"] == "x" else "-" for r in records]
    >>> info_as(DiscreteData.from_records(records, labels)).selected
    ('a',)

    """
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {sorted(METRICS)}, got {metric!r}")
    if significance is not None and not (isinstance(significance, float | int)
                                         and 0 < significance < 1):
        raise ValueError(f"significance must be in (0, 1) or None, got {significance!r}")
    if max_selected is not None and not (isinstance(max_selected, int) and max_selected >= 0):
        raise ValueError(f"max_selected must be a non-negative int or None, got "
                         f"{max_selected!r}")
    remaining = list(range(data.n_attributes) if candidates is None else candidates)
    for c in remaining:
        if not 0 <= c < data.n_attributes:
            raise ValueError(f"candidate {c} is not a column of the data "
                             f"({data.n_attributes} attributes)")
    y, k, w = data.classes, data.n_classes, data.weights
    tree = IndexTree(data.n_records)
    chosen: list[int] = []
    scores: list[float] = []
    p_values: list[float] = []
    stop = "no candidate left"
    while remaining:
        if max_selected is not None and len(chosen) >= max_selected:
            stop = "max_selected reached"
            break
        values = _candidate_metrics(tree, data, remaining, metric)
        at = int(np.argmax(values))  # the first maximum: ties keep the earlier candidate
        if not values[at] > 0:
            stop = "no candidate has a positive metric"
            break
        best, best_value = remaining[at], float(values[at])
        if significance is not None:
            table = tree.table(y, k, data.values[:, best], int(data.cardinalities[best]), w)
            observed = (tree.leaf >= 0) & (data.values[:, best] >= 0)
            _, _, p = conditional_independence_test(table, data.effective_size(observed))
            if not p < significance:
                stop = f"G-test not significant at {significance} (p = {p:.3g})"
                break
            p_values.append(p)
        chosen.append(best)
        scores.append(best_value)
        remaining.remove(best)
        tree = tree.extend(data.values[:, best], int(data.cardinalities[best]))
    return Selection(tuple(data.names[a] for a in chosen), tuple(chosen), tuple(scores),
                     tuple(p_values) if significance is not None else None,
                     f"info-as/{metric}", stop)


#: Cells of the stacked candidate tables built at once (bounds Info-AS's working memory).
_CELLS_PER_PASS = 1 << 22


def _candidate_metrics(tree: IndexTree, data: DiscreteData, candidates: list[int],
                       metric: str) -> np.ndarray:
    """IM(Π; A) of every candidate A, candidates of one cardinality stacked into one table."""
    out = np.zeros(len(candidates))
    k = data.n_classes
    by_size: dict[int, list[int]] = {}
    for i, a in enumerate(candidates):
        by_size.setdefault(int(data.cardinalities[a]), []).append(i)
    for r, positions in by_size.items():
        per_pass = max(_CELLS_PER_PASS // max(tree.n_leaves * k * r, 1), 1)
        for lo in range(0, len(positions), per_pass):
            part = positions[lo: lo + per_pass]
            columns = data.values[:, [candidates[i] for i in part]]
            tables = tree.tables(data.classes, k, columns, r, data.weights)
            out[part] = _metric_many(metric, tables)
    return out
