"""Information metrics of a layered contingency table (Singh & Provan 1995, Definitions 4.1–4.3)
and the G-test of conditional independence on one.

With p_l the probability of layer l and, inside it, p_{i/l}, p_{j/l}, p_{ij/l} the probabilities of
class i, value j and cell (i, j) (eq. 3–5):

- CIG(A; Π) = Σ_l p_l (H_C^l + H_A^l − H_Cell^l)                     (Definition 4.1)
- CGR(A; Π) = CIG(A; Π) / Σ_l p_l H_A^l                               (Definition 4.2)
- CDC(A; Π) = CIG(A; Π) / Σ_l p_l H_Cell^l                            (Definition 4.3)

in nats; CGR and CDC are 0 when their denominator is 0 (the paper's footnote 3). With Π = ∅ they
are Quinlan's gain and gain ratio and 1 − d_N, López de Màntaras' normalised distance. Only
ratios of counts enter the metrics, so weighted tables are read alike.

A CIG below 1e-12 nats is rounding of an exact 0 (the four entropy sums cancel) and is taken as
0, so that it cannot pass Info-AS's "> 0" rule or turn into a large ratio.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.special import chdtrc

__all__ = ["METRICS", "conditional_distance_complement", "conditional_gain_ratio",
           "conditional_independence_test", "conditional_information_gain", "metric_of_tables"]

#: A CIG at or below this (nats) is rounding of an exact zero.
ZERO_INFORMATION = 1e-12


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


def metric_of_tables(metric: str, tables: np.ndarray) -> np.ndarray:
    """The metric ``metric`` (a key of :data:`METRICS`) of each of a stack of ``(layers, k, r)``
    tables, in one pass."""
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
