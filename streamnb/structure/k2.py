"""K2 (Cooper & Herskovits 1992): a Bayesian network from records, given an ordering.

The Cooper–Herskovits score of a node i with parents π_i, over records where the family is
observed, is the log of their g(i, π_i) (Theorem 1 with uniform parameter priors):

    log g(i, π_i) = Σ_j [ ln Γ(r_i) − ln Γ(N_ij + r_i) + Σ_k ln Γ(N_ijk + 1) ]

with j running over the parent configurations that occur (an unseen one contributes 0), k over
the r_i values of node i, N_ijk the count of value k under configuration j and N_ij = Σ_k N_ijk.
Γ accepts fractional counts, so weighted (e.g. decayed or estimated) counts are allowed.

K2 takes the nodes in a given order and gives each, greedily, the predecessor that raises its
score most, while that raises it and the node has fewer than ``max_parents`` parents.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.special import gammaln

__all__ = ["cooper_herskovits_score", "dirichlet_log_score", "k2", "network_score"]


# Parent configurations are indexed by their mixed-radix code up to this many, and
# renumbered to the ones that occur beyond it (unseen configurations score 0 either way).
_DENSE_CONFIGURATIONS = 1 << 16


def _extend(code: np.ndarray, q: int, column: np.ndarray, r: int) -> tuple[np.ndarray, int]:
    """Configuration codes with one more parent (−1: a parent missing) and their range."""
    ok = (code >= 0) & (column >= 0)
    out = np.where(ok, code * r + column, -1)
    q = q * r
    if q > _DENSE_CONFIGURATIONS:
        occurring, inverse = np.unique(out[ok], return_inverse=True)
        out[ok] = inverse.reshape(-1)
        q = len(occurring)
    return out, q


def dirichlet_log_score(counts: np.ndarray, alpha: float = 1.0) -> np.ndarray:
    """Σ_j [ln Γ(r α) − ln Γ(N_ij + r α) + Σ_k (ln Γ(N_ijk + α) − ln Γ(α))] of counts shaped
    ``(..., configurations, r)``: the log marginal likelihood of a child's counts under a
    Dirichlet(α) prior per parent configuration — the module's score with α = 1, the ``"bayes"``
    TAN edge weight's with Weka's α = 0.5. One score per leading index.

    Examples
    --------
    >>> import math   # α = 1, N = (2, 0) and (1, 1): 1!/3! · 2! 0!  ×  1!/3! · 1! 1!
    >>> math.isclose(dirichlet_log_score(np.array([[2., 0], [1, 1]])), math.log(2 / 36))
    True
    >>> dirichlet_log_score(np.zeros((4, 3, 2)), alpha=0.5)   # no counts: no evidence
    array([0., 0., 0., 0.])

    """
    configurations, r = counts.shape[-2:]
    return (configurations * gammaln(r * alpha) - gammaln(counts.sum(axis=-1) + r * alpha).sum(-1)
            + (gammaln(counts + alpha) - gammaln(alpha)).sum(axis=(-2, -1)))


def _family_score(code: np.ndarray, q: int, child: np.ndarray, r: int,
                  weights: np.ndarray | None) -> float:
    ok = (code >= 0) & (child >= 0)
    counts = np.bincount(code[ok] * r + child[ok],
                         weights=None if weights is None else weights[ok],
                         minlength=q * r).reshape(q, r)
    return float(dirichlet_log_score(counts))


def cooper_herskovits_score(values: np.ndarray, cardinalities: Sequence[int], child: int,
                            parents: Sequence[int] = (), weights: np.ndarray | None = None
                            ) -> float:
    """log g(child, parents): the K2 (Cooper–Herskovits) score of one family (module docstring).

    Parameters
    ----------
    values
        ``(m, nodes)`` value indices, −1 for missing; rows with the child or a parent missing
        are left out of this family's counts.
    cardinalities
        r of each node.
    child, parents
        Column indices.
    weights
        Optional ``(m,)`` record weights.

    Examples
    --------
    >>> import math
    >>> v = np.array([[0, 0], [0, 0], [1, 1], [1, 0]])
    >>> s = cooper_herskovits_score(v, [2, 2], child=1, parents=[0])
    >>> math.isclose(s, math.log(1 / math.factorial(3) * math.factorial(2)  # a=0: N = (2, 0)
    ...                          * 1 / math.factorial(3) * 1))              # a=1: N = (1, 1)
    True

    """
    values = np.asarray(values, dtype=np.int64)
    code, q = np.zeros(len(values), dtype=np.int64), 1
    for p in parents:
        code, q = _extend(code, q, values[:, p], int(cardinalities[p]))
    return _family_score(code, q, values[:, child], int(cardinalities[child]),
                         None if weights is None else np.asarray(weights, dtype=np.float64))


def network_score(values: np.ndarray, cardinalities: Sequence[int],
                  parents: dict[int, Sequence[int]], weights: np.ndarray | None = None) -> float:
    """Σ over the nodes of ``parents`` of their family scores: log P(B_S, D) − log P(B_S)."""
    return sum(cooper_herskovits_score(values, cardinalities, i, pa, weights)
               for i, pa in parents.items())


def k2(values: np.ndarray, cardinalities: Sequence[int], ordering: Sequence[int],
       max_parents: int = 3, weights: np.ndarray | None = None) -> dict[int, tuple[int, ...]]:
    """The K2 search: parents of each node of ``ordering`` among its predecessors.

    Parameters
    ----------
    values
        ``(m, nodes)`` value indices, −1 for missing.
    cardinalities
        r of each node.
    ordering
        The nodes to place (column indices), in order; a node's parents are chosen among the
        nodes before it.
    max_parents
        Upper bound u on the number of parents of a node.
    weights
        Optional record weights.

    Returns
    -------
    dict
        node → tuple of parents, in the order they were added; nodes in ``ordering`` order.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> a = rng.integers(0, 2, 300)
    >>> b = np.where(rng.random(300) < 0.9, a, 1 - a)       # b follows a
    >>> c = rng.integers(0, 2, 300)                         # c is independent
    >>> k2(np.column_stack([a, b, c]), [2, 2, 2], ordering=[0, 1, 2])
    {0: (), 1: (0,), 2: ()}

    References
    ----------
    G. F. Cooper and E. Herskovits. A Bayesian method for the induction of probabilistic
    networks from data. Machine Learning 9, 1992.

    """
    if not (isinstance(max_parents, int) and max_parents >= 0):
        raise ValueError(f"max_parents must be a non-negative int, got {max_parents!r}")
    ordering = [int(v) for v in ordering]
    if len(set(ordering)) != len(ordering):
        raise ValueError(f"ordering must not repeat a node, got {ordering!r}")
    values = np.asarray(values, dtype=np.int64)
    w = None if weights is None else np.asarray(weights, dtype=np.float64)
    out: dict[int, tuple[int, ...]] = {}
    for position, node in enumerate(ordering):
        child, r = values[:, node], int(cardinalities[node])
        chosen: list[int] = []
        code, q = np.zeros(len(values), dtype=np.int64), 1
        best = _family_score(code, q, child, r, w)
        while len(chosen) < max_parents:
            top, top_score, top_code = None, best, (code, q)
            for z in ordering[:position]:
                if z in chosen:
                    continue
                extended = _extend(code, q, values[:, z], int(cardinalities[z]))
                score = _family_score(*extended, child, r, w)
                if score > top_score:  # strict: ties keep the earlier predecessor
                    top, top_score, top_code = z, score, extended
            if top is None:
                break
            chosen.append(top)
            best = top_score
            code, q = top_code
        out[node] = tuple(chosen)
    return out
