"""Edge weights for TAN structure learning, computed from count tables only (docs/science.md §2).

Every weight here is a pure function of a pair's count table ``N_ij(u, v, c)`` of shape
``(r_i, r_j, k)``, so it is as current as the counts and costs O(r_i · r_j · k), whatever the
number of records. Counts are float64 and may be non-integer (exponential forgetting scales
them); only ratios of counts matter, so scaling a whole table leaves every weight unchanged.

Missing values: a pair's weight is computed from the pair's *own* table, i.e. from the records
where both attributes were observed. Its probabilities p(x_i | c), p(x_j | c) and p(x_i, x_j) are
marginals of that table, never the attribute's global marginals (which also count records where
the partner was missing), so each weight is the exact weight of one coherent distribution.

References
----------
H. Zhang, "Exploring conditions for the optimality of naive Bayes", IJPRAI 19(2), 2005:
eq. 15 (conditional mutual information), eq. 17 (dependence-distribution weight I_D, two
classes), eq. 18–19 (I_D, more than two classes).
N. Friedman, D. Geiger, M. Goldszmidt, "Bayesian network classifiers", Machine Learning 29, 1997.
G. F. Cooper, E. Herskovits, "A Bayesian method for the induction of probabilistic networks from
data", Machine Learning 9, 1992 (the Dirichlet marginal likelihood of the ``"bayes"`` weight).
R. R. Bouckaert, "Bayesian network classifiers in Weka", 2004 (Weka's TAN search and scores).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from streamnb.stats.values import NOMINAL, TOKEN
from streamnb.structure.k2 import dirichlet_log_score
from streamnb.structure.pairwise_counts import PairwiseCounts

__all__ = [
    "DEFAULT_BAYES_ALPHA",
    "DEFAULT_DDR_SMOOTHING",
    "TAN_WEIGHTS",
    "attribute_class_information",
    "class_mutual_information",
    "conditional_mutual_information",
    "dependence_distribution_weight",
    "pairwise_weights",
]

#: Dirichlet pseudo-count per cell of the (r_i, r_j, k) table used inside I_D's logarithms
#: (Jeffreys' prior): large enough to keep empty cells finite, small enough not to swamp sparse
#: tables.
DEFAULT_DDR_SMOOTHING = 0.5

#: Dirichlet pseudo-count per cell of the local Bayesian score behind the ``"bayes"`` weight
#: (Weka's ``SimpleEstimator`` default, ``-A 0.5``).
DEFAULT_BAYES_ALPHA = 0.5

WeightKind = Literal["cmi", "ddr", "bayes"]
#: The edge weights of :func:`pairwise_weights` (and of TAN trees).
TAN_WEIGHTS = ("cmi", "ddr", "bayes")
DdrFormula = Literal["auto", "eq17", "eq18"]


def _check_joint(joint_ijc: Any) -> np.ndarray:
    t = np.asarray(joint_ijc, dtype=np.float64)
    if t.ndim != 3:
        raise ValueError(f"joint_ijc must have shape (r_i, r_j, k), got shape {t.shape}")
    if t.size and not (np.isfinite(t).all() and (t >= 0).all()):
        raise ValueError("joint_ijc must hold finite non-negative counts")
    return t


# The cores below take a stack of P same-shaped tables, shape (P, r_i, r_j, k), so that
# pairwise_weights pays numpy's per-call overhead once per table shape, not once per pair
# (all pairs of binary token attributes share one shape).
def _log_dependence_ratio(tables: np.ndarray) -> np.ndarray:
    """ln p(x_i|x_j,c)/p(x_i|c) = ln p(x_i,x_j|c)/(p(x_i|c) p(x_j|c)) = ln N_ijc N_c/(N_i·c N_·jc).

    The symmetric right-hand form (docs/science.md §2) is what makes both weights symmetric in i, j.
    Cells with a zero numerator give -inf; callers either weight them by zero or smooth first.
    """
    n_c = tables.sum(axis=(1, 2))         # N_c: pair-observed records of class c, (P, k)
    n_ic = tables.sum(axis=2)             # N_i·c, (P, r_i, k)
    n_jc = tables.sum(axis=1)             # N_·jc, (P, r_j, k)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (np.log(tables * n_c[:, None, None, :])
                - np.log(n_ic[:, :, None, :] * n_jc[:, None, :, :]))


def _cmi_many(tables: np.ndarray, smoothing: float) -> np.ndarray:
    if smoothing:
        tables = tables + smoothing
    total = tables.sum(axis=(1, 2, 3))
    with np.errstate(invalid="ignore"):
        # 0 · ln 0 = 0: empty cells drop out of the sum (their product is NaN, replaced by 0)
        terms = np.where(tables > 0, tables * _log_dependence_ratio(tables), 0.0)
        cmi = terms.sum(axis=(1, 2, 3)) / np.where(total > 0, total, 1.0)            # eq. 15
    return np.maximum(cmi, 0.0)   # ≥ 0 in exact arithmetic; clip rounding


def _ddr_many(tables: np.ndarray, smoothing: float, formula: DdrFormula) -> np.ndarray:
    k = tables.shape[3]
    total = tables.sum(axis=(1, 2, 3))
    if k < 2:
        return np.zeros(tables.shape[0])
    p_cell = tables.sum(axis=3) / np.where(total > 0, total, 1.0)[:, None, None]  # p(x_i, x_j)
    log_ratio = _log_dependence_ratio(tables + smoothing)    # L(x_i, x_j, c), finite
    if k == 2 and formula != "eq18":
        spread = (log_ratio[..., 0] - log_ratio[..., 1]) ** 2                         # eq. 17
    else:
        avg = log_ratio.mean(axis=3, keepdims=True)                                   # eq. 19
        spread = ((log_ratio - avg) ** 2).sum(axis=3)                                 # eq. 18
    return (p_cell * spread).sum(axis=(1, 2))


def _bayes_many(tables: np.ndarray, alpha: float) -> np.ndarray:
    """max over the two directions of the gain in the child's local Bayesian score when the
    other attribute joins the class as its parent: log BD(X_i | C, X_j) − log BD(X_i | C)."""
    p = tables.shape[0]
    gains = []
    for child_first in (tables, tables.transpose(0, 2, 1, 3)):  # X_i | X_j, then X_j | X_i
        r = child_first.shape[1]
        # in one memory order whichever attribute the pair table has first, so that a gain is
        # the same float either way round: a sum of log-gammas taken in another order differs
        # in its last bits, and a gain of 0 (a parent of one value) would become ±1e-13,
        # enough to break a tie between edges by the order the attributes arrived in
        given_both = np.ascontiguousarray(
            child_first.transpose(0, 2, 3, 1)).reshape(p, -1, r)           # (x_pa, c) × x
        given_class = np.ascontiguousarray(child_first.sum(axis=2).transpose(0, 2, 1))  # c × x
        gains.append(dirichlet_log_score(given_both, alpha)
                     - dirichlet_log_score(given_class, alpha))
    return np.maximum(*gains)


def _check_ddr_args(smoothing: float, formula: str) -> None:
    if not smoothing > 0:
        raise ValueError(f"smoothing must be > 0 for the ddr weight (empty cells would make "
                         f"its logarithm infinite), got {smoothing!r}")
    if formula not in ("auto", "eq17", "eq18"):
        raise ValueError(f"formula must be 'auto', 'eq17' or 'eq18', got {formula!r}")


# -- eq. 15 ------------------------------------------------------------------------------------
def conditional_mutual_information(joint_ijc: Any, smoothing: float = 0.0) -> float:
    """I(X_i; X_j | C) in nats from the pair's count table (Zhang eq. 15).

    I(X_i; X_j | C) = Σ_{x_i,x_j,c} p(x_i,x_j,c) ln [ p(x_i,x_j|c) / (p(x_i|c) p(x_j|c)) ]
                    = Σ N_ijc/N · ln [ N_ijc N_c / (N_i·c N_·jc) ],

    with every marginal taken from this table (records where both attributes were observed).

    Parameters
    ----------
    joint_ijc
        Counts N_ij(u, v, c), shape ``(r_i, r_j, k)``; may be fractional.
    smoothing
        Pseudo-count added to every cell before computing; 0 (the default) gives the plug-in
        (maximum-likelihood) estimate that Chow–Liu and Friedman et al. use. CMI needs no
        smoothing: a zero cell contributes 0 · ln 0 = 0, and a cell with N_ijc > 0 has
        N_i·c, N_·jc > 0, so no term is ever infinite.

    Returns
    -------
    float
        The weight, ≥ 0 (rounding is clipped at 0); 0 for an empty table. Symmetric in i, j.

    Examples
    --------
    >>> import numpy as np
    >>> t = np.zeros((2, 2, 2))
    >>> t[:, :, 0] = [[4, 0], [0, 4]]   # class 0: x_j copies x_i
    >>> t[:, :, 1] = [[2, 2], [2, 2]]   # class 1: independent
    >>> round(conditional_mutual_information(t), 6)   # ½ ln 2
    0.346574
    >>> conditional_mutual_information(t) == conditional_mutual_information(t.transpose(1, 0, 2))
    True

    """
    table = _check_joint(joint_ijc)
    if smoothing < 0:
        raise ValueError(f"smoothing must be >= 0, got {smoothing!r}")
    return float(_cmi_many(table[None], smoothing)[0])


# -- eq. 17–19 ---------------------------------------------------------------------------------
def dependence_distribution_weight(
    joint_ijc: Any,
    smoothing: float = DEFAULT_DDR_SMOOTHING,
    formula: DdrFormula = "auto",
) -> float:
    """Zhang's dependence-distribution weight I_D(X_i, X_j | C) from the pair's count table.

    Let L(x_i,x_j,c) = ln p(x_i|x_j,c)/p(x_i|c) = ln p(x_i,x_j|c)/(p(x_i|c) p(x_j|c)), the log
    local dependence derivative of Zhang's Definition 2.

    - Two classes, eq. 17: I_D = Σ_{x_i,x_j} p(x_i,x_j) [L(x_i,x_j,+) − L(x_i,x_j,−)]².
    - Any number of classes, eq. 18–19:
      I_D = Σ_{x_i,x_j,c} p(x_i,x_j) [L(x_i,x_j,c) − Avg(x_i,x_j)]², with
      Avg(x_i,x_j) = (1/|C|) Σ_c L(x_i,x_j,c), the mean over classes *per cell*. The paper
      prints Avg as a sum over x_i, x_j, c; only the per-cell mean reduces to eq. 17 for two
      classes, so that is what we implement.

    For two classes Σ_c (L_c − Avg)² = (L_+ − L_−)²/2, so eq. 18 = eq. 17 / 2. ``formula="auto"``
    (default) uses eq. 17 exactly when k = 2 (Zhang's definition, and the only one in the
    two-class experiments) and eq. 18–19 otherwise. A constant factor over all pairs leaves
    the maximum spanning tree unchanged, so both conventions give the same TAN structure.

    Parameters
    ----------
    joint_ijc
        Counts N_ij(u, v, c), shape ``(r_i, r_j, k)``; may be fractional.
    smoothing
        Dirichlet pseudo-count added to every cell of the ``(r_i, r_j, k)`` table for the
        conditional probabilities inside the logarithm (default 0.5, Jeffreys): the smoothed
        p(x_i, x_j | c) = (N_ijc + s)/(N_c + s r_i r_j) and its own marginals
        p(x_i | c) = (N_i·c + s r_j)/(N_c + s r_i r_j), so an empty cell or an unseen class gives
        a finite ratio (exactly 1 for an unseen class). Must be > 0: without it one empty cell
        in one class makes I_D infinite. The cell weight p(x_i, x_j) = N_ij·/N is the unsmoothed
        empirical frequency, so unseen cells carry no weight.
    formula
        ``"auto"`` (eq. 17 for two classes, eq. 18–19 otherwise), ``"eq17"`` (two classes
        only) or ``"eq18"`` (per-cell class mean for any k).

    Returns
    -------
    float
        The weight, ≥ 0; 0 for an empty table or a single class. Symmetric in i, j.

    Examples
    --------
    >>> import numpy as np
    >>> t = np.zeros((2, 2, 2))
    >>> t[:, :, 0] = [[4, 0], [0, 4]]   # dependent in class 0 only: uneven, I_D > 0
    >>> t[:, :, 1] = [[2, 2], [2, 2]]
    >>> d17 = dependence_distribution_weight(t)   # eq. 17, smoothed ratios 9/5, 1/5 vs 1
    >>> round(d17, 6), round(float(6/16 * 2 * np.log(9/5) ** 2 + 2/16 * 2 * np.log(1/5) ** 2), 6)
    (0.906692, 0.906692)
    >>> round(dependence_distribution_weight(t, formula="eq18") / d17, 12)   # eq. 18 = eq. 17 / 2
    0.5
    >>> u = np.stack([t[:, :, 0], t[:, :, 0]], axis=2)   # same dependence in both classes
    >>> dependence_distribution_weight(u), round(conditional_mutual_information(u), 6)
    (0.0, 0.693147)

    """
    table = _check_joint(joint_ijc)
    _check_ddr_args(smoothing, formula)
    if formula == "eq17" and table.shape[2] != 2:
        raise ValueError(f"formula='eq17' needs exactly two classes, the table has "
                         f"k={table.shape[2]}")
    return float(_ddr_many(table[None], smoothing, formula)[0])


# -- root policy -------------------------------------------------------------------------------
def class_mutual_information(marginal_ic: Any) -> float:
    """I(X_i; C) in nats from an attribute's ``(r_i, k)`` count table (records where observed).

    I(X_i; C) = Σ_{x,c} p(x,c) ln [ p(x,c) / (p(x) p(c)) ], with 0 · ln 0 = 0. Used to pick the
    TAN root (the attribute most informative about the class); the tree itself does not use it.

    Examples
    --------
    >>> round(class_mutual_information([[3, 0], [0, 3]]), 6)   # X determines C: ln 2
    0.693147
    >>> class_mutual_information([[2, 2], [1, 1]])
    0.0

    """
    table = np.asarray(marginal_ic, dtype=np.float64)
    if table.ndim != 2:
        raise ValueError(f"marginal_ic must have shape (r_i, k), got shape {table.shape}")
    # An attribute-vs-class MI is a CMI with a single, trivial conditioning value.
    return conditional_mutual_information(table[:, :, None])


# -- all pairs ---------------------------------------------------------------------------------
def pairwise_weights(
    counts: PairwiseCounts,
    weight: WeightKind = "cmi",
    smoothing: float | None = None,
    formula: DdrFormula = "auto",
) -> np.ndarray:
    """Symmetric ``(n, n)`` matrix of edge weights for every counted attribute pair.

    Parameters
    ----------
    counts
        The pairwise statistics.
    weight
        ``"cmi"``: conditional mutual information, eq. 15 (Friedman's TAN);
        ``"ddr"``: Zhang's dependence-distribution weight I_D, eq. 17–19 (ddr-ChowLiu);
        ``"bayes"``: the gain in the child's local Bayesian-Dirichlet score (Cooper &
        Herskovits with α per cell) when the other attribute joins the class as its parent,
        log BD(X_i | C, X_j) − log BD(X_i | C), in the better of the two directions — the
        score of Weka's default TAN search (``-S BAYES``), whose greedy linking (best gain
        over pairs with one end linked) is Prim's algorithm on exactly this symmetric weight.
        Unlike CMI it penalises a parent with many values, and it grows with the counts (a
        log marginal likelihood, not a per-record rate).
    smoothing
        Pseudo-count per cell; ``None`` means each weight's default (0 for ``"cmi"``,
        :data:`DEFAULT_DDR_SMOOTHING` for ``"ddr"``, :data:`DEFAULT_BAYES_ALPHA` for
        ``"bayes"``).
    formula
        Only for ``"ddr"``: see :func:`dependence_distribution_weight`.

    Returns
    -------
    numpy.ndarray
        ``w[i, j] = w[j, i]`` = weight of pair (i, j); the diagonal is 0; a pair absent from
        ``counts.joints`` is NaN ("unmeasured", which :func:`chow_liu_tree` ranks below every
        measured weight).

    Examples
    --------
    >>> pc = PairwiseCounts.from_records(
    ...     [{"a": 0, "b": 0, "c": 0}, {"a": 1, "b": 1, "c": 0}, {"a": 0, "b": 0, "c": 1},
    ...      {"a": 1, "b": 1, "c": 1}], ["+", "+", "-", "-"])
    >>> pairwise_weights(pc).round(4)   # b copies a; c is independent of both in each class
    array([[0.    , 0.6931, 0.    ],
           [0.6931, 0.    , 0.    ],
           [0.    , 0.    , 0.    ]])

    """
    if weight == "cmi":
        s = 0.0 if smoothing is None else smoothing
        if s < 0:
            raise ValueError(f"smoothing must be >= 0, got {smoothing!r}")

        def many(tables: np.ndarray) -> np.ndarray:
            return _cmi_many(tables, s)
    elif weight == "ddr":
        s = DEFAULT_DDR_SMOOTHING if smoothing is None else smoothing
        _check_ddr_args(s, formula)
        if formula == "eq17" and counts.n_classes != 2:
            raise ValueError(f"formula='eq17' needs exactly two classes, got k={counts.n_classes}")

        def many(tables: np.ndarray) -> np.ndarray:
            return _ddr_many(tables, s, formula)
    elif weight == "bayes":
        s = DEFAULT_BAYES_ALPHA if smoothing is None else smoothing
        if not s > 0:
            raise ValueError(f"smoothing must be > 0 for the bayes weight (the Dirichlet "
                             f"pseudo-count α per cell), got {smoothing!r}")

        def many(tables: np.ndarray) -> np.ndarray:
            return _bayes_many(tables, s)
    else:
        raise ValueError(f"weight must be one of {TAN_WEIGHTS}, got {weight!r}")
    n = counts.n_attributes
    w = np.full((n, n), np.nan)
    np.fill_diagonal(w, 0.0)
    by_shape: dict[tuple[int, ...], list[tuple[int, int]]] = {}
    for key, table in counts.joints.items():
        by_shape.setdefault(table.shape, []).append(key)
    for pairs in by_shape.values():
        values = many(np.stack([counts.joints[key] for key in pairs]))
        rows, cols = np.array(pairs, dtype=np.intp).T
        w[rows, cols] = w[cols, rows] = values
    return w


def attribute_class_information(stats: Any, attributes: Sequence[int]) -> np.ndarray:
    """I(X_i; C) of each attribute (schema indices) from the single-attribute counts of a
    :class:`~streamnb.stats.CountStatistics`: binary tokens (present/absent) in one vectorised
    pass, nominal attributes through :func:`class_mutual_information` of their value × class
    table (the records where they were observed). Numeric attributes are not supported.

    Examples
    --------
    >>> from streamnb.stats import CountStatistics
    >>> stats = CountStatistics()
    >>> for x, y in [({"w": True, "a": "u"}, "+"), ({"a": "u"}, "-"), ({"w": True, "a": "v"}, "+")]:
    ...     stats.update(x, y)
    >>> [round(float(v), 4) for v in attribute_class_information(stats, [0, 1])]
    [0.6365, 0.1744]

    """
    schema = stats.schema
    out = np.empty(len(attributes))
    tokens = [i for i, a in enumerate(attributes) if schema.kinds[a] == TOKEN]
    if tokens:
        present = stats.value_counts[:, [schema.slots[attributes[i]] for i in tokens]]
        table = np.stack([present, stats.class_counts[:, None] - present])  # (2, k, T)
        p = table / max(float(stats.class_counts.sum()), 1e-300)
        expected = p.sum(axis=1, keepdims=True) * p.sum(axis=0, keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(p > 0, p * np.log(p / expected), 0.0)
        out[tokens] = terms.sum(axis=(0, 1))
    for i, a in enumerate(attributes):
        if schema.kinds[a] == NOMINAL:
            columns = list(schema.nominal_values[schema.slots[a]].values())
            out[i] = class_mutual_information(stats.value_counts[:, columns].T)
        elif schema.kinds[a] != TOKEN:
            raise ValueError(f"attribute {schema.attributes.name(a)!r} is numeric: class "
                             "information needs discrete attributes")
    return out
