"""Indifferent naive Bayes (Cerquides & López de Màntaras)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from streamnb.models.naive_bayes import NaiveBayes

__all__ = ["IndifferentNB"]


class IndifferentNB(NaiveBayes, state_name="IndifferentNB", presets={
        "indifferent": {}, "indifferent-bins": {"numeric": "bins"},
        "indifferent-mdl": {"numeric": "mdl"}}):
    """Naive Bayes averaged over all naive Bayes models under a uniform prior (eq. 16–17).

    ``NaiveBayes(estimator="indifferent")`` under its own name: the posterior is the closed-form
    Bayesian model average, α_c ∝ N(c) + 1 + Σ_i #A_i − n and
    θ_{i,v,c} = (N_i(v,c) + 1)/(N_i(c) + #A_i). See :class:`streamnb.estimators.Indifferent`
    for the #A_i policy in a stream (domains seen so far, declared domains, tokens count 2).

    Parameters
    ----------
    nominal
        Attributes that are nominal whatever their values' type.
    domains
        Declared value domains ``{attribute: [values]}`` (they fix ``#A_i`` up front).
    var_smoothing
        Variance smoothing of numeric attributes (see :class:`NaiveBayes`).
    numeric
        ``"gaussian"``, ``"bins"`` or ``"mdl"``: how a float attribute is read (see
        :class:`NaiveBayes`).
    relearn_every
        Under ``numeric="mdl"``, when the intervals are re-chosen (see :class:`NaiveBayes`).
    half_life, drift_detector, drift_decay
        Forgetting, as every model takes it (:class:`~streamnb.NaiveBayes`;
        docs/recipes/forgetting.md).

    Examples
    --------
    >>> from river import compose, feature_extraction
    >>> from streamnb import IndifferentNB
    >>> model = compose.Pipeline(feature_extraction.BagOfWords(lowercase=True), IndifferentNB())
    >>> for text, label in [("win free money now", "spam"), ("lunch meeting at noon", "ham"),
    ...                     ("free lunch on friday", "ham"), ("claim your free prize", "spam")]:
    ...     model.learn_one(text, label)
    >>> model.predict_one("free prize money")
    'spam'
    >>> {k: round(v, 3) for k, v in model.predict_proba_one("meeting at noon").items()}
    {'spam': 0.036, 'ham': 0.964}

    References
    ----------
    J. Cerquides and R. López de Màntaras. The Indifferent Naive Bayes Classifier. FLAIRS 2003,
    eq. 16–17.

    """

    def __init__(self, nominal: Iterable | None = None, domains: Mapping | None = None,
                 var_smoothing: float = 1e-9, numeric: str = "gaussian",
                 half_life: float | None = None, drift_detector: Any = None,
                 drift_decay: float = 0.5, relearn_every: int = 1000) -> None:
        super().__init__(estimator="indifferent", nominal=nominal, domains=domains,
                         var_smoothing=var_smoothing, numeric=numeric, half_life=half_life,
                         drift_detector=drift_detector, drift_decay=drift_decay,
                         relearn_every=relearn_every)

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"numeric": "bins"}
        yield {"numeric": "mdl", "relearn_every": 20}
