"""CB (Singh & Valtorta 1993, 1995): CI tests give K2 its ordering.

Start from the complete undirected graph over the variables (the attributes and the class) and,
for order = 0, 1, 2, …:

1. remove every edge X – Y for which some set S of ``order`` nodes adjacent to X (or to Y) makes
   X ⊥ Y | S at the given significance (G-test, :func:`~streamnb.structure.conditional_metrics.
   conditional_independence_test`), remembering S as their separating set;
2. orient the graph: X → Z ← Y for every unshielded triple X – Z – Y whose Z is not in the
   separating set of X, Y; then propagate (an edge B – C after A → B, A and C not adjacent,
   becomes B → C; A – C with a directed path A → B → C becomes A → C). Orientations that
   contradict an earlier one are not applied;
3. a total ordering: a topological order of the directed edges (ties and undirected edges by
   the lower index);
4. for a classifier, the class moves to the front of that ordering (``class_position="first"``,
   the default; the attributes keep their order), so that K2 may make it a parent of every
   attribute; ``class_position="learned"`` leaves it where the orientation put it;
5. K2 with that ordering gives a network.

Where the class goes is spelt out neither by Singh & Valtorta (CB is a general structure
learner; the class is one more node) nor by Singh & Provan (Info-AS "uses the final set of nodes
selected ... along with classvar to construct a network", §4.2, with CB, §5.1). We read Singh &
Provan as placing it first: they present their networks as the natural extension of the naive
Bayes classifier (§1, §7), whose class is the parent of every attribute (§2), and their
accuracies fit it. Left where the orientation puts it, the class often comes last — attributes
that depend on the class but hardly on one another form v-structures X → C ← Y, and ties go by
index, the class's being the highest — and K2 then gives it at most ``max_parents`` parents and
few or no children, a classifier that reads a handful of attributes. On Soybean (15 classes) and
Splice that costs 6–31 points against the paper's Table 3 (docs/results/singh_provan.md compares
the two placements).

As in Singh & Provan (§3), the loop continues while the network's predictive accuracy keeps
increasing: each order's network is learned on a *subset-learn* part of the records and scored
on the *subset-eval* part; the network returned is K2's on all the records, with the ordering of
the last order that improved.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

from streamnb.structure.conditional_metrics import conditional_independence_test
from streamnb.structure.discrete_data import DiscreteData
from streamnb.structure.index_tree import IndexTree
from streamnb.structure.k2 import k2
from streamnb.structure.network import DiscreteNetwork

__all__ = ["CLASS_POSITIONS", "CBResult", "cb", "cb_ordering", "pc_skeleton"]

#: Where :func:`cb` puts the class in the ordering it gives K2.
CLASS_POSITIONS = ("first", "learned")


@dataclass(frozen=True)
class CBResult:
    """A network learned by CB over the variables ``0 .. n-1`` (attributes) and ``n`` (class).

    Attributes
    ----------
    parents
        Node → parents (node indices).
    ordering
        The ordering given to K2 (the class first with ``class_position="first"``).
    order
        The CI-test order of the returned network.
    accuracies
        Subset-eval accuracy of the network of each order tried (the last one did not
        improve, unless the tests ran out).
    skeleton
        The undirected edges left after the CI tests up to ``order``.
    """

    parents: dict[int, tuple[int, ...]]
    ordering: tuple[int, ...]
    order: int
    accuracies: tuple[float, ...]
    skeleton: frozenset[frozenset[int]]


def _variables(data: DiscreteData) -> tuple[np.ndarray, list[int]]:
    values = np.column_stack([data.values, data.classes]).astype(np.int64)
    return values, [*data.cardinalities.tolist(), data.n_classes]


def _independent(values: np.ndarray, cards: list[int], weights: np.ndarray, x: int, y: int,
                 given: tuple[int, ...], significance: float) -> bool:
    """Whether the G-test accepts X ⊥ Y | given. Small conditioning sets index their layers by
    the mixed-radix code of their values (empty layers add nothing to G or its df); larger
    ones by the index tree of the instantiations that occur."""
    layers = int(np.prod([cards[s] for s in given]))
    if layers <= len(values):
        leaf = np.zeros(len(values), dtype=np.int64)
        for s in given:
            leaf = leaf * cards[s] + values[:, s]
        leaf[(values[:, list(given)] < 0).any(axis=1)] = -1
    else:
        tree = IndexTree(len(values))
        for s in given:
            tree = tree.extend(values[:, s], cards[s])
        leaf, layers = tree.leaf, tree.n_leaves
    vx, vy = values[:, x], values[:, y]
    observed = (leaf >= 0) & (vx >= 0) & (vy >= 0)
    flat = (leaf[observed] * cards[x] + vx[observed]) * cards[y] + vy[observed]
    w = weights[observed]
    table = np.bincount(flat, weights=w, minlength=layers * cards[x] * cards[y]).reshape(
        layers, cards[x], cards[y])
    square = float(np.dot(w, w))
    size = float(w.sum()) ** 2 / square if square > 0 else 0.0
    return not conditional_independence_test(table, size)[2] < significance


def pc_skeleton(values: np.ndarray, cards: list[int], weights: np.ndarray, order: int,
                adjacency: dict[int, set[int]], separators: dict[frozenset[int], tuple[int, ...]],
                significance: float) -> bool:
    """One order of CI tests, in place: remove the edges that a set of ``order`` neighbours
    separates. Returns False when no edge had enough neighbours to be tested."""
    tested = False
    for x in sorted(adjacency):
        for y in sorted(adjacency[x]):
            if y < x or y not in adjacency[x]:
                continue
            for base, other in ((x, y), (y, x)):
                neighbours = sorted(adjacency[base] - {other})
                if len(neighbours) < order:
                    continue
                tested = True
                for given in combinations(neighbours, order):
                    if _independent(values, cards, weights, x, y, given, significance):
                        adjacency[x].discard(y)
                        adjacency[y].discard(x)
                        separators[frozenset((x, y))] = given
                        break
                if y not in adjacency[x]:
                    break
    return tested


def cb_ordering(adjacency: dict[int, set[int]],
                separators: dict[frozenset[int], tuple[int, ...]]) -> tuple[int, ...]:
    """Orient the skeleton (v-structures, then propagation) and return a total ordering."""
    directed: set[tuple[int, int]] = set()

    def orient(a: int, b: int) -> bool:
        if (a, b) in directed or (b, a) in directed:
            return False
        directed.add((a, b))
        return True

    def adjacent(a: int, b: int) -> bool:
        return b in adjacency[a]

    nodes = sorted(adjacency)
    for z in nodes:
        for x, y in combinations(sorted(adjacency[z]), 2):
            if not adjacent(x, y) and z not in separators.get(frozenset((x, y)), ()):
                orient(x, z)
                orient(y, z)
    changed = True
    while changed:
        changed = False
        for a, b in sorted(directed):
            for c in sorted(adjacency[b]):
                if c != a and not adjacent(a, c) and orient(b, c):
                    changed = True
        for a in nodes:
            for c in sorted(adjacency[a]):
                if any((a, b) in directed and (b, c) in directed for b in nodes) and orient(a, c):
                    changed = True
    placed: list[int] = []
    remaining = set(nodes)
    while remaining:
        ready = [v for v in sorted(remaining)
                 if not any((u, v) in directed for u in remaining if u != v)]
        v = ready[0] if ready else min(remaining)  # a contradictory cycle: break it by index
        placed.append(v)
        remaining.discard(v)
    return tuple(placed)


def _place_class(ordering: tuple[int, ...], class_node: int, class_position: str
                ) -> tuple[int, ...]:
    """The ordering K2 gets: ``ordering`` with the class moved to the front (``"first"``) or
    left in place (``"learned"``); the other nodes keep their order."""
    if class_position == "first":
        return (class_node, *(v for v in ordering if v != class_node))
    return ordering


def _accuracy(network: DiscreteNetwork, values: np.ndarray, classes: np.ndarray,
              weights: np.ndarray) -> float:
    if not len(values):
        return 0.0
    predicted = np.argmax(network.class_log_scores(values), axis=1)
    total = float(weights.sum())
    return float(weights[predicted == classes].sum()) / total if total > 0 else 0.0


def cb(data: DiscreteData, significance: float = 0.05, max_parents: int = 3,
       max_order: int | None = None, alpha: float = 1.0, eval_fraction: float = 0.5,
       seed: int = 0, class_position: str = "first") -> CBResult:
    """Learn a network over the attributes and the class with CB (module docstring).

    Parameters
    ----------
    data
        The records; node ``data.n_attributes`` is the class.
    significance
        Level of the CI tests (an edge is removed when the G-test's p-value is ≥ it).
    max_parents
        K2's bound on the parents of a node.
    max_order
        Highest CI-test order (None: until the accuracy stops improving or no edge can be
        tested).
    alpha
        Dirichlet pseudo-count of the parameters used to score each order's network.
    eval_fraction
        Share of the records held out (subset-eval) to score each order's network.
    seed
        Seed of the subset-learn / subset-eval split.
    class_position
        ``"first"`` (default): the class precedes every attribute in each ordering given to K2,
        so it has no parents and any attribute may take it as one (the classifier reading of
        Singh & Provan, module docstring); ``"learned"``: the class stays where the CI tests'
        orientation puts it (Singh & Valtorta's CB for a general network).

    Returns
    -------
    CBResult

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> c = rng.integers(0, 2, 600)
    >>> a = np.where(rng.random(600) < 0.85, c, 1 - c)      # C → a
    >>> b = np.where(rng.random(600) < 0.85, a, 1 - a)      # a → b
    >>> data = DiscreteData(np.column_stack([a, b]), c, [2, 2], 2, ["a", "b"])
    >>> result = cb(data)
    >>> result.ordering, result.parents    # the chain C (node 2) → a → b, b ⊥ C | a
    ((2, 0, 1), {0: (2,), 1: (0,), 2: ()})
    >>> result.order, [round(a, 4) for a in result.accuracies]   # order 1 did not improve
    (0, [0.8633, 0.8633])

Left where the orientation puts it (nothing is oriented here: ties go by index), the class
comes last and K2 makes a its parent instead:

>>> cb(data, class_position="learned").parents
{0: (), 1: (0,), 2: (0,)}

    References
    ----------
    M. Singh and M. Valtorta. An algorithm for the construction of Bayesian network structures
    from data. UAI 1993. Construction of Bayesian network structures from data: a brief survey
    and an efficient algorithm. IJAR 12, 1995.

    """
    if not 0 < significance < 1:
        raise ValueError(f"significance must be in (0, 1), got {significance!r}")
    if not 0 < eval_fraction < 1:
        raise ValueError(f"eval_fraction must be in (0, 1), got {eval_fraction!r}")
    if max_order is not None and not (isinstance(max_order, int) and max_order >= 0):
        raise ValueError(f"max_order must be a non-negative int or None, got {max_order!r}")
    if class_position not in CLASS_POSITIONS:
        raise ValueError(f"class_position must be one of {CLASS_POSITIONS}, got "
                         f"{class_position!r}")
    values, cards = _variables(data)
    class_node = data.n_attributes
    n_nodes = class_node + 1
    learn, evaluate = data.split(1 - eval_fraction, seed)
    learn_values, _ = _variables(learn)
    eval_values, _ = _variables(evaluate)
    adjacency = {v: set(range(n_nodes)) - {v} for v in range(n_nodes)}
    separators: dict[frozenset[int], tuple[int, ...]] = {}
    best: tuple[tuple[int, ...], int, frozenset[frozenset[int]]] | None = None
    accuracies: list[float] = []
    best_accuracy = 0.0
    order = 0
    while max_order is None or order <= max_order:
        if not pc_skeleton(values, cards, data.weights, order, adjacency, separators,
                           significance) and order > 0:
            break
        ordering = _place_class(cb_ordering(adjacency, separators), class_node, class_position)
        parents = k2(learn_values, cards, ordering, max_parents, learn.weights)
        network = DiscreteNetwork.fit(learn_values, cards,
                                      [parents[v] for v in range(n_nodes)], class_node, alpha,
                                      learn.weights)
        accuracy = _accuracy(network, eval_values, evaluate.classes, evaluate.weights)
        accuracies.append(accuracy)
        if best is not None and accuracy <= best_accuracy:
            break
        best_accuracy = accuracy
        best = (ordering, order,
                frozenset(frozenset((u, v)) for u in adjacency for v in adjacency[u]))
        order += 1
    assert best is not None  # order 0 always runs
    ordering, chosen, skeleton = best
    parents = k2(values, cards, ordering, max_parents, data.weights)
    return CBResult({v: parents[v] for v in range(n_nodes)}, ordering, chosen,
                    tuple(accuracies), skeleton)
