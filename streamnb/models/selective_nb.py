"""Selective naive Bayes: naive Bayes over the attributes Info-AS selects from the stream."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from streamnb.models.selective_base import SelectiveClassifier
from streamnb.structure import DiscreteData, NetworkStructure, Selection

__all__ = ["SelectiveNB"]


class SelectiveNB(SelectiveClassifier, state_name="SelectiveNB", presets={
        # Info-AS with the CDC metric, the best on the spam stream (docs/selective.md)
        "selective-nb": {"metric": "cdc"}}):
    """Naive Bayes over an attribute subset selected by Info-AS, re-learned from the stream.

    Info-AS (Singh & Provan §4.2) adds, one at a time, the attribute that maximises an
    information metric *conditioned on the attributes already selected* — conditional
    information gain, gain ratio or distance complement (Definitions 4.1–4.3) — while the
    maximum is positive (or, with ``significance``, while the G-test of C ⊥ A | Π rejects, the
    paper's proposed stop). Conditioning is what separates it from ranking attributes one by
    one: an attribute that repeats a selected one carries no conditional information and is
    left out, which is the failure of naive Bayes the selection is for. The network is then the
    class as the only parent of each selected attribute: P(c | x) ∝ θ(c) Π_{i∈Π} θ(x_i | c),
    with θ = (N + α)/(N_pa + α r) read from the live counts; missing attributes drop out
    (exact: they sum to one).

    The paper learns a Bayesian network on the selected attributes and reports that naive
    Bayes on them was significantly less accurate (§5.6); this model is that variant, and the
    cheapest: its parameters are the exact naive Bayes counts, so only the selection reads the
    reservoir.

    A text attribute (a bag of tokens) is used with the text event model of all the selective
    models: its tokens compete for selection as binary attributes named ``(attribute,
    token)``, and the tokens outside the network enter through the multinomial renormalised
    over the rest of the vocabulary (:mod:`streamnb.models.selective_base`, docs/selective.md
    "On the text event model").

    Parameters
    ----------
    metric
        ``"cig"``, ``"cgr"`` (default; the best of the three in the paper) or ``"cdc"``.
    significance
        Level of the χ² (G-test) stop, or None for the paper's "while > 0" rule.
    max_candidates
        Info-AS considers the attributes of highest I(X; C) in the counts, at most this many
        (for a text vocabulary: the top-K tokens).
    reservoir_size
        Records kept for the selection (see :class:`~streamnb.stats.Reservoir`).
    relearn_every
        Re-select after 1, 2, 4, … records, then every this many (0: only on :meth:`relearn`
        or a drift): the schedule of TAN and AODE too (``streamnb.models.schedule``).
    drift_detector
        A river drift detector fed with the prequential error (``learn_one`` only); when it
        fires, the counts are multiplied by ``drift_decay`` and a relearn follows.
    half_life, drift_decay
        Forgetting, as in :class:`NaiveBayes`.
    alpha
        Dirichlet pseudo-count per cell of every conditional table.
    seed
        Seed of the reservoir's sampling (give each shard of a merge its own).
    nominal, domains
        As in :class:`~streamnb.NaiveBayes`.
    numeric
        ``"mdl"`` (default): a float attribute is counted in fine bins and read in MDL
        intervals of them, chosen from the bins' counts at each relearn
        (:mod:`streamnb.models.coarse`; ``intervals`` lists the cut points); ``"bins"``: read
        in the fine bins.

    Attributes
    ----------
    structure : NetworkStructure | None
        ``structure.selected``: the attributes in the order Info-AS added them;
        ``structure.scores``: the metric of each when added. None until the first relearn, and
        until then the prediction is the class prior.
    structure_version : int
        Incremented by every relearn.
    reservoir : streamnb.stats.Reservoir
        The sample of recent records the selection reads.

    Examples
    --------
    >>> from streamnb import SelectiveNB
    >>> data = [({"outlook": o, "wind": w, "outlook_copy": o}, y) for o, w, y in [
    ...     ("sun", "weak", "no"), ("sun", "strong", "no"), ("rain", "weak", "yes"),
    ...     ("rain", "strong", "yes"), ("fog", "weak", "yes"), ("sun", "weak", "no")] * 3]
    >>> model = SelectiveNB(metric="cgr", relearn_every=0, seed=0)
    >>> for x, y in data:
    ...     model.learn_one(x, y)
    >>> model.relearn()
    >>> model.structure.selected   # the copy adds no conditional information; a tie goes by name
    ('outlook',)
    >>> model.predict_proba_one({"outlook": "rain", "wind": "weak"})["yes"]   # 7/12 : 1/12
    0.875

    The same with a batch:

    >>> import pandas as pd
    >>> batch = SelectiveNB(relearn_every=0, seed=0)
    >>> batch.learn_many(pd.DataFrame([x for x, _ in data]), pd.Series([y for _, y in data]))
    >>> batch.relearn()
    >>> batch.predict_proba_many([{"outlook": "rain"}])
          no    yes
    0  0.125  0.875

    References
    ----------
    M. Singh and G. M. Provan. Efficient learning of selective Bayesian network classifiers.
    Technical report MS-CIS-95-36, University of Pennsylvania, 1995: §4.1 (Definitions
    4.1–4.3, eq. 3–5), §4.2 (Info-AS), §5.6 (naive Bayes on the selected attributes), §6 (the
    χ² stop).

    """

    def __init__(self, metric: str = "cgr", significance: float | None = None,
                 max_candidates: int = 100, reservoir_size: int = 10_000,
                 relearn_every: int = 1000, drift_detector: Any = None, alpha: float = 1.0,
                 seed: int | None = None, nominal: Iterable | None = None,
                 domains: Mapping | None = None, half_life: float | None = None,
                 drift_decay: float = 0.5, numeric: str = "mdl") -> None:
        super().__init__(metric=metric, significance=significance,
                         max_candidates=max_candidates, reservoir_size=reservoir_size,
                         relearn_every=relearn_every, drift_detector=drift_detector,
                         alpha=alpha, seed=seed, nominal=nominal, domains=domains,
                         half_life=half_life, drift_decay=drift_decay,
                         numeric=numeric)

    @classmethod
    def _unit_test_params(cls):
        yield {"relearn_every": 50, "seed": 0}
        yield {"relearn_every": 50, "metric": "cdc", "significance": 0.05, "seed": 1}

    def _learn_network(self, data: DiscreteData, selection: Selection) -> NetworkStructure:
        return NetworkStructure.naive(selection.selected, method=selection.method,
                                      **self._selection_details(selection))
