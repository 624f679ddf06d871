"""Accuracy-driven forward selection: naive-AS (Langley & Sage 1994) and K2-AS (Singh & Provan).

Both split the records into a *subset-learn* and a *subset-eval* half (Singh & Provan §5.1).
Starting from no attribute (the classifier is then the class prior), each step learns a
classifier on subset-learn for the selected attributes plus each remaining candidate, scores it
on subset-eval and adds the candidate of highest accuracy:

- **naive-AS**: the classifier is naive Bayes; attributes are added "until the addition of any
  other attribute results in reduced accuracy" (§2), so ties continue the search;
- **K2-AS**: the classifier is a Bayesian network learned by K2 (the class first in the
  ordering, then the attributes in the order they were selected) and queried by exact
  inference; attributes are added as long as the accuracy increases (§3; ``allow_ties=True``
  gives K2-AS<).

Each step learns and evaluates a classifier per candidate, so these cost far more than Info-AS's
one contingency table per candidate: the comparison of ``benchmarks/bench_selective.py``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from streamnb.structure.discrete_data import DiscreteData
from streamnb.structure.k2 import k2
from streamnb.structure.network import DiscreteNetwork
from streamnb.structure.selection import Selection

__all__ = ["k2_as", "naive_as"]


def _forward(data: DiscreteData, accuracy_of: Callable[[list[int]], float], allow_ties: bool,
             method: str) -> Selection:
    chosen: list[int] = []
    scores: list[float] = []
    current = accuracy_of([])
    remaining = list(range(data.n_attributes))
    stop = "no candidate left"
    while remaining:
        best, best_accuracy = remaining[0], -1.0
        for a in remaining:
            accuracy = accuracy_of([*chosen, a])
            if accuracy > best_accuracy:  # strict: ties keep the lower index
                best, best_accuracy = a, accuracy
        if best_accuracy < current or (best_accuracy == current and not allow_ties):
            stop = "accuracy would drop" if best_accuracy < current else "no accuracy gain"
            break
        chosen.append(best)
        scores.append(best_accuracy)
        current = best_accuracy
        remaining.remove(best)
    return Selection(tuple(data.names[a] for a in chosen), tuple(chosen), tuple(scores), None,
                     method, stop)


def _weighted_accuracy(predicted: np.ndarray, data: DiscreteData) -> float:
    total = float(data.weights.sum())
    return float(data.weights[predicted == data.classes].sum()) / total if total > 0 else 0.0


def naive_as(data: DiscreteData, alpha: float = 1.0, allow_ties: bool = True, seed: int = 0
             ) -> Selection:
    """Langley & Sage's selective naive Bayes: forward selection on subset-eval accuracy.

    Parameters
    ----------
    data
        The records.
    alpha
        Dirichlet pseudo-count of the naive Bayes estimates, θ = (N(x, c) + α)/(N(c) + α r).
    allow_ties
        Keep adding while the accuracy does not drop (the paper's naive-AS); False stops at the
        first step that does not increase it.
    seed
        Seed of the subset-learn / subset-eval split.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> c = rng.integers(0, 2, 400)
    >>> a = np.where(rng.random(400) < 0.9, c, 1 - c)
    >>> data = DiscreteData(np.column_stack([rng.integers(0, 2, 400), a]), c, [2, 2], 2,
    ...                     ["noise", "a"])
    >>> naive_as(data, allow_ties=False).selected
    ('a',)

    References
    ----------
    P. Langley and S. Sage. Induction of selective Bayesian classifiers. UAI 1994.

    """
    if not alpha > 0:
        raise ValueError(f"alpha must be > 0, got {alpha!r}")
    learn, evaluate = data.split(0.5, seed)
    k = data.n_classes
    prior = np.bincount(learn.classes, weights=learn.weights, minlength=k) + alpha
    base = np.broadcast_to(np.log(prior / prior.sum()), (evaluate.n_records, k))
    terms = []  # per attribute: its log θ(x | c) for each subset-eval record, 0 if missing
    for a in range(data.n_attributes):
        r = int(data.cardinalities[a])
        x = learn.values[:, a]
        ok = x >= 0
        counts = np.bincount(x[ok] * k + learn.classes[ok], weights=learn.weights[ok],
                             minlength=r * k).reshape(r, k)
        log_theta = np.log(counts + alpha) - np.log(counts.sum(axis=0) + alpha * r)
        xe = evaluate.values[:, a]
        terms.append(np.where((xe >= 0)[:, None], log_theta[np.maximum(xe, 0)], 0.0))

    def accuracy_of(subset: list[int]) -> float:
        scores = base + sum((terms[a] for a in subset), np.zeros_like(base))
        return _weighted_accuracy(np.argmax(scores, axis=1), evaluate)

    return _forward(data, accuracy_of, allow_ties, "naive-as")


def k2_as(data: DiscreteData, max_parents: int = 3, alpha: float = 1.0,
          allow_ties: bool = False, seed: int = 0) -> Selection:
    """K2-AS: forward selection on the subset-eval accuracy of K2 networks (module docstring).

    Parameters
    ----------
    data
        The records.
    max_parents
        K2's bound on the parents of a node.
    alpha
        Dirichlet pseudo-count of the networks' parameters.
    allow_ties
        False: K2-AS (add while the accuracy increases); True: K2-AS<.
    seed
        Seed of the subset-learn / subset-eval split.

    References
    ----------
    M. Singh and G. M. Provan. A comparison of induction algorithms for selective and
    non-selective Bayesian classifiers. ICML 1995.

    """
    learn, evaluate = data.split(0.5, seed)

    def accuracy_of(subset: list[int]) -> float:
        n = len(subset)
        learn_values = np.column_stack([learn.values[:, subset], learn.classes])
        cards = [*data.cardinalities[subset].tolist(), data.n_classes]
        parents = k2(learn_values, cards, [n, *range(n)], max_parents, learn.weights)
        network = DiscreteNetwork.fit(learn_values, cards, [parents[v] for v in range(n + 1)],
                                      n, alpha, learn.weights)
        evidence = np.column_stack([evaluate.values[:, subset],
                                    np.full(evaluate.n_records, -1)])
        return _weighted_accuracy(np.argmax(network.class_log_scores(evidence), axis=1),
                                  evaluate)

    return _forward(data, accuracy_of, allow_ties, "k2-as" + ("<" if allow_ties else ""))
