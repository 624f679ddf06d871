"""Maximum-likelihood (frequency) estimates: MAPNB in Cerquides & López de Màntaras."""

from __future__ import annotations

from streamnb.estimators.base import UniformEstimator
from streamnb.stats import CountStatistics

__all__ = ["MaximumLikelihood"]


class MaximumLikelihood(UniformEstimator):
    """θ = N_i(v,c) / N_i(c), α_c = N(c) / N.

    A value never seen with a class gives that class probability zero; when every class gets a
    zero the posterior is the limit of a vanishing softening: the classes with the fewest zero
    factors share the mass. An attribute never observed in a class (possible under missing
    values) is uninformative for it (θ = 1/#A_i).

    Examples
    --------
    >>> from streamnb.stats import CountStatistics
    >>> s = CountStatistics()
    >>> _ = s.update_many([{"a": "x"}, {"a": "y"}, {"a": "x"}], ["+", "+", "-"])
    >>> import numpy as np
    >>> logs, zeros = MaximumLikelihood().log_theta(s, np.array([1]))  # value "y"
    >>> np.exp(logs).round(3).tolist(), zeros.tolist()
    ([[0.5], [1.0]], [[0], [1]])

    """

    name = "ml"

    def _cell(self) -> float:
        return 0.0

    def class_pseudocounts(self, stats: CountStatistics) -> float:
        return 0.0
