"""The Indifferent naive Bayes estimates (Cerquides & López de Màntaras, eq. 16–17)."""

from __future__ import annotations

from streamnb.estimators.base import UniformEstimator
from streamnb.stats import CountStatistics

__all__ = ["Indifferent"]


class Indifferent(UniformEstimator):
    """Closed-form Bayesian model averaging under a uniform prior over naive Bayes models.

    α_c ∝ N(c) + 1 + Σ_i #A_i − n  (eq. 16),   θ_{i,v,c} = (N_i(v,c) + 1)/(N_i(c) + #A_i)  (eq. 17)

    where the sum runs over the ``n`` discrete attributes. The class prior's softening grows
    with the number of attribute values, so it is *not* Laplace on the class: a model with many
    attributes keeps its class prior near uniform until ``N(c)`` outweighs ``Σ_i (#A_i − 1)``.

    ``#A_i`` in a stream: the attribute's domain as seen so far (declared values included, see
    ``Schema(domains=...)``), 2 for a token from its first appearance; it is part of the saved
    state. Values unseen at prediction time are treated as missing.

    Examples
    --------
    >>> from streamnb.stats import CountStatistics
    >>> s = CountStatistics()
    >>> _ = s.update_many([{"a": "x", "b": "u"}, {"a": "y", "b": "u"}, {"a": "x", "b": "w"}],
    ...               ["+", "+", "-"])
    >>> est = Indifferent()
    >>> est.class_pseudocounts(s)                 # 1 + (2 + 2) - 2
    3.0
    >>> import numpy as np
    >>> logs, _ = est.log_class_prior(s)
    >>> np.exp(logs).round(4).tolist()            # (2+3)/9, (1+3)/9
    [0.5556, 0.4444]

    References
    ----------
    J. Cerquides and R. López de Màntaras. The Indifferent Naive Bayes Classifier. FLAIRS 2003.

    """

    name = "indifferent"

    def _cell(self) -> float:
        return 1.0

    def class_pseudocounts(self, stats: CountStatistics) -> float:
        return 1.0 + stats.schema.free_values()
