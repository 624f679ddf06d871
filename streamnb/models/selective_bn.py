"""Selective Bayesian network: Info-AS selection, then a network learned by CB or K2."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

import numpy as np

from streamnb.models.params import Integer, OneOf, Real
from streamnb.models.selective_base import SelectiveClassifier
from streamnb.structure import CLASS, DiscreteData, NetworkStructure, Selection, cb, k2
from streamnb.structure.cb import CLASS_POSITIONS

__all__ = ["SelectiveBN"]

SEARCHES = ("cb", "k2")


class SelectiveBN(SelectiveClassifier, state_name="SelectiveBN", presets={
        # Info-AS with the CDC metric, the best on the spam stream (docs/selective.md)
        "selective-bn": {"metric": "cdc"}}):
    """Singh & Provan's selective Bayesian network classifier, re-learned from the stream.

    A relearn runs Info-AS (§4.2; ``metric`` = CIG, CGR or CDC, Definitions 4.1–4.3; optional
    χ² stop, §6) on the reservoir's records, then learns a Bayesian network over the selected
    attributes and the class from the same records:

    - ``search="cb"`` (the paper's choice, §5.1): CI tests of increasing order give an ordering,
      K2 builds the network, and the order grows while the network's accuracy on a held-out
      half of the records increases (:func:`~streamnb.structure.cb`). With
      ``class_position="first"`` (the default) the class leads that ordering, so every
      selected attribute may take it as a parent, as in the naive Bayes classifier the paper's
      networks extend (§1, §2); ``"learned"`` leaves it where CB's orientation puts it, often
      last, which limits it to ``max_parents`` parents and few or no children;
    - ``search="k2"``: K2 (Cooper–Herskovits score) with the class first and the attributes in
      the order Info-AS selected them, so the most informative attributes may be parents of the
      later ones (:func:`~streamnb.structure.k2`).

    The class may get parents, children and spouses. Prediction reads its Markov blanket when
    every selected attribute is observed and runs variable elimination otherwise. Families the
    naive Bayes counts hold exactly (the class; an attribute with at most the class as parent)
    are read from them; the others are initialised from the reservoir at each relearn (exact
    while the reservoir has dropped no record, an unbiased estimate after that; see
    ``family_sources``) and counted exactly from then on.

    Parameters
    ----------
    metric, significance
        Info-AS's metric (``"cig"``, ``"cgr"``, ``"cdc"``) and optional χ² stop level.
    search
        ``"cb"`` or ``"k2"``.
    max_parents
        K2's bound on the parents of a node (the class counts as one).
    ci_significance
        Level of CB's conditional-independence tests.
    class_position
        Where CB puts the class in the ordering it gives K2: ``"first"`` or ``"learned"``
        (:func:`~streamnb.structure.cb`; our reading of the paper is ``"first"``, see there).
        ``search="k2"`` always puts it first.
    max_candidates, reservoir_size, relearn_every, drift_detector, alpha, seed, nominal, domains,
    half_life, drift_decay, numeric
        As in :class:`SelectiveNB`.

    Attributes
    ----------
    structure : NetworkStructure | None
        ``structure.selected`` in the order added, ``structure.parents`` of every node (the
        class is :data:`~streamnb.structure.CLASS`). None until the first relearn (prediction:
        the class prior).
    structure_version : int
        Incremented by every relearn.
    family_sources : dict
        Node → where its family's counts started at the last relearn.

    Examples
    --------
    >>> from streamnb import SelectiveBN
    >>> import random
    >>> rng = random.Random(0)
    >>> data = []
    >>> for _ in range(300):
    ...     y = rng.choice("+-")
    ...     a = y if rng.random() < 0.8 else {"+": "-", "-": "+"}[y]
    ...     b = a if rng.random() < 0.9 else rng.choice("+-")       # b depends on a
    ...     data.append(({"a": a, "b": b, "noise": rng.choice("xyz")}, y))
    >>> model = SelectiveBN(search="k2", relearn_every=0, seed=0)
    >>> for x, y in data:
    ...     model.learn_one(x, y)
    >>> model.relearn()
    >>> model.structure.selected   # the "> 0" rule also takes chance information ("noise")
    ('a', 'noise', 'b')
    >>> model.structure.parents["b"], model.family_sources["b"]
    (('a',), 'reservoir (exact)')
    >>> round(model.predict_proba_one({"b": "+"})["+"], 3)   # a missing: summed out
    0.763

    The same data in a batch, with CB and the χ² stop:

    >>> import pandas as pd
    >>> batch = SelectiveBN(search="cb", significance=0.01, relearn_every=0, seed=0)
    >>> batch.learn_many(pd.DataFrame([x for x, _ in data]), pd.Series([y for _, y in data]))
    >>> batch.relearn()
    >>> batch.structure.selected, batch.structure.stop
    (('a',), 'G-test not significant at 0.01 (p = 0.0206)')
    >>> batch.predict_proba_many([{"a": "+", "b": "+"}]).round(3)
           -      +
    0  0.197  0.803

    References
    ----------
    M. Singh and G. M. Provan. Efficient learning of selective Bayesian network classifiers.
    Technical report MS-CIS-95-36, University of Pennsylvania, 1995: §3 (K2, CB), §4.1–4.3
    (Definitions 4.1–4.3, Info-AS, eq. 3–5), §5.1, §6 (the χ² stop).
    G. F. Cooper and E. Herskovits. A Bayesian method for the induction of probabilistic
    networks from data. Machine Learning 9, 1992.
    M. Singh and M. Valtorta. Construction of Bayesian network structures from data: a brief
    survey and an efficient algorithm. IJAR 12, 1995.

    """

    _parameter_constraints: ClassVar[dict[str, list]] = {
        "search": [OneOf(SEARCHES)], "max_parents": [Integer(1)],
        "ci_significance": [Real(0, 1, closed="neither")],
        "class_position": [OneOf(CLASS_POSITIONS)]}

    def __init__(self, metric: str = "cgr", search: str = "cb",
                 significance: float | None = None, max_parents: int = 3,
                 ci_significance: float = 0.05, class_position: str = "first",
                 max_candidates: int = 100,
                 reservoir_size: int = 10_000, relearn_every: int = 1000,
                 drift_detector: Any = None, alpha: float = 1.0, seed: int | None = None,
                 nominal: Iterable | None = None, domains: Mapping | None = None,
                 half_life: float | None = None, drift_decay: float = 0.5,
                 numeric: str = "mdl") -> None:
        self.search = search  # checked, with the base's parameters, by its constructor
        self.max_parents = max_parents
        self.ci_significance = ci_significance
        self.class_position = class_position
        super().__init__(metric=metric, significance=significance,
                         max_candidates=max_candidates, reservoir_size=reservoir_size,
                         relearn_every=relearn_every, drift_detector=drift_detector,
                         alpha=alpha, seed=seed, nominal=nominal, domains=domains,
                         half_life=half_life, drift_decay=drift_decay,
                         numeric=numeric)

    @classmethod
    def _unit_test_params(cls):
        yield {"relearn_every": 50, "seed": 0}
        yield {"relearn_every": 50, "search": "k2", "metric": "cdc", "significance": 0.05,
               "seed": 1}
        yield {"relearn_every": 50, "class_position": "learned", "seed": 2}

    def _learn_network(self, data: DiscreteData, selection: Selection) -> NetworkStructure:
        selected = selection.selected
        n = len(selected)
        method = f"{selection.method} + {self.search}"
        details = self._selection_details(selection)
        if not n:
            return NetworkStructure.naive((), method=method, **details)
        sub = data.select(selection.indices)
        if self.search == "k2":
            values = np.column_stack([sub.values, sub.classes])
            cards = [*sub.cardinalities.tolist(), sub.n_classes]
            parents = k2(values, cards, [n, *range(n)], self.max_parents, sub.weights)
        else:
            parents = cb(sub, significance=self.ci_significance, max_parents=self.max_parents,
                         alpha=self.alpha, class_position=self.class_position).parents
        name = {n: CLASS, **dict(enumerate(selected))}
        return NetworkStructure(selected, {name[v]: tuple(name[p] for p in pa)
                                           for v, pa in parents.items()},
                                method=method, **details)
