"""Selective TAN: Info-AS selection, then a Chow–Liu tree over the selected attributes."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

import numpy as np

from streamnb.models.params import Integer, OneOf
from streamnb.models.selective_base import SelectiveClassifier, _prefixed
from streamnb.stats.binning import coarse_pair_state
from streamnb.stats.encoded import EncodedBatch
from streamnb.stats.pairs import PairCounts
from streamnb.structure import (
    CLASS,
    TAN_WEIGHTS,
    DiscreteData,
    NetworkStructure,
    PairwiseCounts,
    Selection,
    learn_tan_structure,
)

__all__ = ["SelectiveTAN"]


class SelectiveTAN(SelectiveClassifier, state_name="SelectiveTAN", presets={
        # Info-AS with the CDC metric, the best on the spam stream (docs/selective.md)
        "selective-tan": {"metric": "cdc"}}):
    """TAN over an attribute subset selected by Info-AS, both re-learned from the stream.

    A relearn selects attributes with Info-AS (Singh & Provan §4.2, Definitions 4.1–4.3, as in
    :class:`SelectiveNB`) and builds Friedman's TAN over them: a maximum spanning tree of the
    conditional mutual information I(X_i; X_j | C) (``weight="cmi"``, Zhang eq. 15) or of Zhang's
    I_D (``"ddr"``, eq. 17–19), computed by :func:`~streamnb.structure.learn_tan_structure` from
    the exact pairwise counts N_ij(u, v, c) that :class:`~streamnb.stats.pairs.PairCounts` keeps
    for the ``max_candidates`` attributes of highest I(X; C) — the same state and tree learning
    as :class:`~streamnb.TAN`, restricted to the selected attributes. Every family
    (X | C, parent) is read from those pairwise counts, so the parameters are exact and current:
    θ(x | c, pa) = (N(x, pa, c) + α)/(N(pa, c) + α r_X). A missing attribute is summed out by
    variable elimination (its children's factors included), not replaced by its naive factor.

    Parameters
    ----------
    metric, significance
        Info-AS's metric (``"cig"``, ``"cgr"``, ``"cdc"``) and optional χ² stop level.
    weight
        ``"cmi"``, ``"ddr"`` or ``"bayes"``: the tree's edge weight (see
        :func:`~streamnb.structure.learn_tan_structure`).
    root
        Root policy or attribute name (see :func:`~streamnb.structure.learn_tan_structure`).
    max_candidates
        Attributes with pairwise counts, which Info-AS chooses from: the first ones seen, then
        at each relearn the top ones by I(X; C) (a newly chosen one's pair counts start then).
        Pairwise counts grow with its square: for text, the top-K token preselection.
    reservoir_size, relearn_every, drift_detector, alpha, seed, nominal, domains, half_life,
    drift_decay, numeric
        As in :class:`SelectiveNB`.

    Attributes
    ----------
    structure : NetworkStructure | None
        ``structure.selected`` in the order added; ``structure.parents[x]`` is ``(CLASS,)``
        for the tree's root and ``(CLASS, parent)`` for the others. None until the first
        relearn (prediction: the class prior).
    structure_version : int
        Incremented by every relearn.
    pairs : streamnb.stats.pairs.PairCounts
        The pairwise counts.

    Examples
    --------
    >>> from streamnb import SelectiveTAN
    >>> from streamnb.structure import CLASS
    >>> data = [({"a": a, "b": b, "c": c, "noise": n}, y) for a, b, c, n, y in [
    ...     ("x", "x", "u", "p", "+"), ("y", "y", "u", "q", "-"), ("x", "x", "w", "p", "+"),
    ...     ("y", "y", "w", "q", "+"), ("x", "y", "u", "q", "-"), ("y", "x", "w", "p", "-")] * 4]
    >>> model = SelectiveTAN(relearn_every=0, seed=0)
    >>> for x, y in data:
    ...     model.learn_one(x, y)
    >>> model.relearn()
    >>> model.structure.selected, model.structure.parents["c"]
    (('a', 'b', 'c'), (CLASS, 'b'))
    >>> round(model.predict_proba_one({"a": "x", "b": "x", "c": "u"})["+"], 4)
    0.9668

    The same with a batch:

    >>> import pandas as pd
    >>> batch = SelectiveTAN(relearn_every=0, seed=0)
    >>> batch.learn_many(pd.DataFrame([x for x, _ in data]), pd.Series([y for _, y in data]))
    >>> batch.relearn()
    >>> batch.predict_proba_many([{"a": "x", "b": "x", "c": "u"}]).round(4)
            +       -
    0  0.9668  0.0332

    References
    ----------
    M. Singh and G. M. Provan. Efficient learning of selective Bayesian network classifiers.
    Technical report MS-CIS-95-36, University of Pennsylvania, 1995: §4.1–4.2, §6.
    N. Friedman, D. Geiger, M. Goldszmidt. Bayesian network classifiers. Machine Learning 1997.
    H. Zhang. Exploring conditions for the optimality of naive Bayes. IJPRAI 2005, eq. 15–19.

    """

    _parameter_constraints: ClassVar[dict[str, list]] = {
        "weight": [OneOf(TAN_WEIGHTS)], "max_candidates": [Integer(2)]}

    def __init__(self, metric: str = "cgr", weight: str = "cmi",
                 significance: float | None = None, max_candidates: int = 100,
                 reservoir_size: int = 10_000, relearn_every: int = 1000,
                 drift_detector: Any = None, root: Any = None, alpha: float = 1.0,
                 seed: int | None = None, nominal: Iterable | None = None,
                 domains: Mapping | None = None, half_life: float | None = None,
                 drift_decay: float = 0.5, numeric: str = "mdl") -> None:
        self.weight = weight  # checked, with the base's parameters, by its constructor
        self.root = root
        super().__init__(metric=metric, significance=significance,
                         max_candidates=max_candidates, reservoir_size=reservoir_size,
                         relearn_every=relearn_every, drift_detector=drift_detector,
                         alpha=alpha, seed=seed, nominal=nominal, domains=domains,
                         half_life=half_life, drift_decay=drift_decay,
                         numeric=numeric)
        self.pairs = PairCounts(self.stats.schema, limit=max_candidates, text_tokens=True)

    @classmethod
    def _unit_test_params(cls):
        yield {"relearn_every": 50, "seed": 0}
        yield {"relearn_every": 50, "weight": "ddr", "metric": "cig", "significance": 0.05,
               "seed": 1}

    # -- the pairwise counts -------------------------------------------------------------------
    def _count_one(self, c: int, enc: Any) -> None:
        self.pairs.observe_schema(self.stats)
        self.pairs.update(c, enc)

    def _count_batch(self, classes: np.ndarray, batch: EncodedBatch) -> None:
        self.pairs.observe_schema(self.stats)
        self.pairs.update_batch(classes, batch)

    def _candidates(self) -> list[int]:
        """Refresh the candidates (top ``max_candidates`` by I(X; C), as TAN does) and return
        them: the attributes whose pairs are counted."""
        pairs = self.pairs
        chosen = set(super()._candidates())
        if set(pairs.candidates) != chosen:
            pairs.remove_candidates([a for a in pairs.candidates if a not in chosen])
            pairs.add_candidates(self.stats, [pairs.name_of(a) for a in sorted(chosen)
                                              if a not in pairs.epoch])
        return sorted(pairs.candidates)

    def _exact_table(self, nodes: tuple[int, ...]) -> np.ndarray | None:
        """A child, its tree parent and the class: from the pairwise counts."""
        attributes = [v for v in nodes if v != 0]
        if len(attributes) != 2 or 0 not in nodes:
            return super()._exact_table(nodes)
        i, j = (self._attributes[v - 1] for v in attributes)
        name_of = self.pairs.name_of
        table, _, _ = self.pairs.joint_table(self.stats, name_of(i), name_of(j))
        axes = [*attributes, 0]  # joint_table's axes: (first, second, class)
        return np.ascontiguousarray(table.transpose([axes.index(v) for v in nodes]))

    def _learn_network(self, data: DiscreteData, selection: Selection) -> NetworkStructure:
        selected = selection.selected
        details = self._selection_details(selection)
        method = f"{selection.method} + tan/{self.weight}"
        if len(selected) < 2:
            return NetworkStructure.naive(selected, method=method, **details)
        stats = self.stats
        index = [self.pairs.key_of(a) for a in selected]
        joints = {(i, j): self.pairs.joint_table(stats, selected[i], selected[j])[0]
                  for i in range(len(selected)) for j in range(i + 1, len(selected))}
        counts = PairwiseCounts(class_counts=stats.class_counts.copy(),
                                marginals=[self._marginal(a) for a in index], joints=joints,
                                names=selected)
        tree = learn_tan_structure(counts, weight=self.weight, root=self.root)
        parents = {CLASS: (), **{a: (CLASS,) if tree.parents[a] is None
                                 else (CLASS, tree.parents[a]) for a in selected}}
        return NetworkStructure(selected, parents, method=method, **details)

    # -- monoid operations and persistence -----------------------------------------------------
    def _check_merge(self, other: SelectiveClassifier) -> None:
        super()._check_merge(other)
        self.pairs.check_mergeable(other.pairs)

    def _merge_statistics(self, other: SelectiveClassifier) -> None:
        super()._merge_statistics(other)
        self.pairs.observe_schema(self.stats)
        index = self.stats.labels.index
        self.pairs.merge(other.pairs, np.array([index[label] for label in
                                                other.stats.labels.values], dtype=np.int64))

    def decay(self, factor: float) -> None:
        super().decay(factor)
        self.pairs.decay(factor)

    def _extra_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        meta, arrays = super()._extra_state()
        pairs_meta, pairs_arrays = self.pairs.to_state(self.stats.n_classes)
        return ({**meta, "pairs": pairs_meta},
                {**arrays, **{f"pairs.{k}": v for k, v in pairs_arrays.items()}})

    def _restore_extra(self, meta: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> None:
        self.pairs = PairCounts.from_state(self.stats.schema, meta["pairs"],
                                           _prefixed(arrays, "pairs."))
        super()._restore_extra(meta, arrays)

    def _coarse_extra(self, coarse_stats: Any, to: np.ndarray
                      ) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        meta, arrays = super()._coarse_extra(coarse_stats, to)
        meta["pairs"], pairs = coarse_pair_state(meta["pairs"], _prefixed(arrays, "pairs."), to,
                                                 coarse_stats.n_classes)
        return meta, {**arrays, **{f"pairs.{k}": v for k, v in pairs.items()}}
