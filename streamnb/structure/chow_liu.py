"""Chow–Liu trees over the attributes: counts in, TAN structure out (docs/science.md §2).

Friedman's TAN and Zhang's ddr-ChowLiu are the same algorithm with different edge weights:

1. weight every attribute pair (eq. 15 for ``"cmi"``, eq. 17–19 for ``"ddr"``),
2. build a maximum weighted spanning tree over the attributes,
3. pick a root and direct every edge away from it,
4. add the class as a parent of every attribute (implicit here: a TAN model always does).

Conventions, chosen so that the same counts always give the same tree:

- **Tie-breaking.** Edges are ranked by weight, then by their attribute index pair
  ``(min(i, j), max(i, j))``, lower pair first. This is a strict total order, so the maximum
  spanning tree is unique (Kruskal and Prim agree on it) and does not depend on the root.
- **Unmeasured pairs** (NaN weight, e.g. a pair outside a candidate set) rank below every
  measured weight: they are used only when nothing else connects two parts of the tree, and
  count 0 in ``total_weight``.
- **Spanning.** The tree always spans every attribute: attributes whose weights are all zero
  (or negative, or unmeasured) are still attached, by the best-ranked edge available. TAN needs
  each attribute to have at most one attribute parent, and a zero-weight edge costs nothing
  but a slightly larger conditional table.
- **Root.** By default the attribute with the highest mutual information with the class
  I(X_i; C), ties to the lowest index; ``root="first"`` takes attribute 0; a name fixes it.
  For a tree with maximum-likelihood parameters the root does not change the distribution, so
  this matters only for smoothed parameters and for the edge directions users see.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from streamnb.structure.pairwise_counts import PairwiseCounts
from streamnb.structure.weights import (
    DdrFormula,
    WeightKind,
    class_mutual_information,
    pairwise_weights,
)

__all__ = ["ROOT_POLICIES", "TreeStructure", "chow_liu_tree", "learn_tan_structure"]

#: Root policies accepted by :func:`learn_tan_structure` besides an attribute name.
ROOT_POLICIES = ("max-class-information", "first")


@dataclass(frozen=True)
class TreeStructure:
    """A TAN attribute tree: each attribute's attribute parent (the class is implicit).

    Attributes
    ----------
    parents
        Attribute name → parent attribute name, ``None`` for the root; keys in attribute order.
    edges
        ``(parent, child)`` pairs, directed away from the root, in breadth-first order from the
        root (so a parent always appears before its children).
    root
        The root attribute (``None`` only when there are no attributes).
    names
        The attribute names, in index order.
    weight_kind
        ``"cmi"``, ``"ddr"`` or whatever label the caller gave :func:`chow_liu_tree`.
    total_weight
        Sum of the tree's edge weights (unmeasured edges count 0).
    weights
        The ``(n, n)`` weight matrix the tree was built from (read-only; not compared by ``==``).

    Examples
    --------
    >>> import numpy as np
    >>> t = chow_liu_tree(np.array([[0, 3, 1], [3, 0, 2], [1, 2, 0.]]), ["a", "b", "c"], root="c")
    >>> t.parents, t.edges, t.total_weight
    ({'a': 'b', 'b': 'c', 'c': None}, (('c', 'b'), ('b', 'a')), 5.0)

    """

    parents: dict[Hashable, Hashable | None]
    edges: tuple[tuple[Hashable, Hashable], ...]
    root: Hashable | None
    names: tuple[Hashable, ...]
    weight_kind: str
    total_weight: float
    weights: np.ndarray = field(compare=False, repr=False)

    @property
    def undirected_edges(self) -> frozenset[frozenset[Hashable]]:
        """The tree's edges without direction, for comparing trees whatever their roots."""
        return frozenset(frozenset(e) for e in self.edges)


def chow_liu_tree(
    weights: Any,
    names: Sequence[Hashable] | None = None,
    *,
    root: Hashable | None = None,
    root_scores: Any = None,
    weight_kind: str = "custom",
) -> TreeStructure:
    """Maximum weighted spanning tree over the attributes, directed away from a root.

    Prim's algorithm, vectorised over the vertices outside the tree (O(n²) time, O(n) extra
    memory), ranking edges by weight and then by lower attribute index pair (see the module
    docstring), which makes the tree unique and independent of the root.

    Parameters
    ----------
    weights
        Symmetric ``(n, n)`` matrix (up to rounding; the upper triangle is what is read). The
        diagonal is ignored; NaN marks an unmeasured pair, ranked below every finite weight.
    names
        Attribute names in index order; default ``0 .. n-1``.
    root
        The root attribute's name. Default: the argmax of ``root_scores`` (ties to the lowest
        index) if given, else the first attribute.
    root_scores
        Optional ``(n,)`` scores, e.g. I(X_i; C), used only to pick the default root.
    weight_kind
        Label stored in the result.

    Returns
    -------
    TreeStructure

    Examples
    --------
    >>> import numpy as np
    >>> w = np.array([[0., 1, 1, 0], [1, 0, 1, 0], [1, 1, 0, 0], [0, 0, 0, 0]])
    >>> tree = chow_liu_tree(w, ["a", "b", "c", "d"])   # ties: (a,b) and (a,c) beat (b,c)
    >>> sorted(tuple(sorted(e)) for e in tree.undirected_edges)   # d still attached, via a
    [('a', 'b'), ('a', 'c'), ('a', 'd')]
    >>> tree.root, tree.parents["d"]
    ('a', 'a')

    """
    w = np.array(weights, dtype=np.float64)
    if w.ndim != 2 or w.shape[0] != w.shape[1]:
        raise ValueError(f"weights must be a square (n, n) matrix, got shape {w.shape}")
    n = w.shape[0]
    if np.isinf(w).any():
        raise ValueError("weights must be finite (or NaN for an unmeasured pair)")
    if not np.allclose(w, w.T, equal_nan=True):
        raise ValueError("weights must be symmetric: w[i, j] == w[j, i]")
    upper = np.triu_indices(n, k=1)
    w.T[upper] = w[upper]      # read the upper triangle only, so rounding asymmetry cannot matter
    np.fill_diagonal(w, 0.0)
    w.setflags(write=False)

    names = tuple(range(n)) if names is None else tuple(names)
    if len(names) != n:
        raise ValueError(f"names has {len(names)} entries for a {n}×{n} weight matrix")
    if len(set(names)) != n:
        raise ValueError(f"names must be distinct, got {names!r}")
    index = {name: i for i, name in enumerate(names)}

    if n == 0:
        return TreeStructure({}, (), None, names, weight_kind, 0.0, w)
    if root is not None:
        if root not in index:
            raise ValueError(f"root {root!r} is not an attribute; attributes: {list(names)}")
        r = index[root]
    elif root_scores is not None:
        scores = np.asarray(root_scores, dtype=np.float64)
        if scores.shape != (n,) or not np.isfinite(scores).all():
            raise ValueError(f"root_scores must be {n} finite numbers, got shape {scores.shape}")
        r = int(np.argmax(scores))      # first maximum: ties go to the lowest index
    else:
        r = 0

    adjacency = _maximum_spanning_tree(w)
    parent = [-1] * n
    order = [r]
    seen = {r}
    queue = deque([r])
    while queue:
        u = queue.popleft()
        for v in sorted(adjacency[u]):     # children in index order: a deterministic edge order
            if v not in seen:
                seen.add(v)
                parent[v] = u
                order.append(v)
                queue.append(v)
    edges = tuple((names[parent[v]], names[v]) for v in order[1:])
    parents = {names[v]: (names[parent[v]] if parent[v] >= 0 else None) for v in range(n)}
    total = float(np.nansum([w[parent[v], v] for v in order[1:]]))
    return TreeStructure(parents, edges, names[r], names, weight_kind, total, w)


def _maximum_spanning_tree(w: np.ndarray) -> list[set[int]]:
    """Adjacency sets of the maximum spanning tree under (weight, lower index pair) ranking."""
    n = w.shape[0]
    rank = np.where(np.isnan(w), -np.inf, w)     # unmeasured pairs rank below everything
    idx = np.arange(n)
    in_tree = np.zeros(n, dtype=bool)
    in_tree[0] = True   # the tree is unique under a strict total order, so any start will do
    best_w = rank[0].copy()                       # best edge from the tree to each vertex ...
    best_u = np.zeros(n, dtype=np.intp)           # ... and its endpoint inside the tree
    adjacency: list[set[int]] = [set() for _ in range(n)]
    for _ in range(n - 1):
        out = ~in_tree
        top = best_w[out].max()
        cand = idx[out & (best_w == top)]
        lo = np.minimum(best_u[cand], cand)
        hi = np.maximum(best_u[cand], cand)
        v = int(cand[np.lexsort((hi, lo))[0]])     # equal weights: lowest (lo, hi) pair wins
        u = int(best_u[v])
        adjacency[u].add(v)
        adjacency[v].add(u)
        in_tree[v] = True
        # An edge (v, x) replaces x's current best (b, x) if it ranks higher; with equal
        # weights, compare the index pairs (min, max) lexicographically.
        new_w = rank[v]
        new_lo, new_hi = np.minimum(v, idx), np.maximum(v, idx)
        old_lo, old_hi = np.minimum(best_u, idx), np.maximum(best_u, idx)
        pair_lower = (new_lo < old_lo) | ((new_lo == old_lo) & (new_hi < old_hi))
        better = ~in_tree & ((new_w > best_w) | ((new_w == best_w) & pair_lower))
        best_w[better] = new_w[better]
        best_u[better] = v
    return adjacency


def learn_tan_structure(
    counts: PairwiseCounts,
    weight: WeightKind = "cmi",
    root: Hashable | None = None,
    smoothing: float | None = None,
    formula: DdrFormula = "auto",
) -> TreeStructure:
    """Learn the TAN attribute tree from pairwise counts: Friedman's TAN or Zhang's ddr-ChowLiu.

    A pure function of the counts: its cost depends on the number of attributes and values,
    never on the number of records, so a streaming model can re-run it whenever it likes.

    Parameters
    ----------
    counts
        Class, attribute and attribute-pair counts.
    weight
        ``"cmi"`` (conditional mutual information, eq. 15), ``"ddr"`` (Zhang's I_D,
        eq. 17–19) or ``"bayes"`` (the Bayesian-Dirichlet score gain of Weka's default TAN,
        see :func:`~streamnb.structure.pairwise_weights`; with it the undirected tree is
        Weka's, the root and directions follow ``root``).
    root
        An attribute name, or a policy: ``None`` / ``"max-class-information"`` (default: the
        attribute with the highest I(X_i; C) from its marginal counts, ties to the lowest
        index) or ``"first"`` (attribute 0). An attribute whose name equals a policy string
        wins over the policy.
    smoothing
        Pseudo-count per cell of each pair table; ``None``: 0 for ``"cmi"``, 0.5 for
        ``"ddr"`` and ``"bayes"`` (the Dirichlet α of its score).
    formula
        For ``"ddr"``: ``"auto"``, ``"eq17"`` or ``"eq18"`` (see
        :func:`~streamnb.structure.dependence_distribution_weight`); the tree is the same.

    Returns
    -------
    TreeStructure

    Examples
    --------
    >>> from streamnb.structure import PairwiseCounts
    >>> records = [{"outlook": o, "humid": h, "windy": w} for o, h, w in [
    ...     ("sun", "hi", 0), ("sun", "hi", 1), ("rain", "lo", 0), ("rain", "lo", 1),
    ...     ("sun", "lo", 0), ("rain", "hi", 1)]]
    >>> pc = PairwiseCounts.from_records(records, ["no", "no", "yes", "yes", "yes", "no"])
    >>> tan = learn_tan_structure(pc)
    >>> tan.root, tan.parents   # humid alone predicts the class: the root
    ('humid', {'outlook': 'humid', 'humid': None, 'windy': 'outlook'})
    >>> learn_tan_structure(pc, weight="ddr").undirected_edges == tan.undirected_edges
    True

    """
    w = pairwise_weights(counts, weight=weight, smoothing=smoothing, formula=formula)
    names = counts.names
    root_name: Hashable | None = None
    scores = None
    if root is not None and root in names:
        root_name = root
    elif root is None or root == "max-class-information":
        scores = [class_mutual_information(m) for m in counts.marginals]
    elif root == "first":
        root_name = names[0] if names else None
    else:
        raise ValueError(f"root must be an attribute name or one of {ROOT_POLICIES}, "
                         f"got {root!r}; attributes: {list(names)}")
    return chow_liu_tree(w, names, root=root_name,
                         root_scores=scores if names else None, weight_kind=weight)
