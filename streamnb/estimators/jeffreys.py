"""Jeffreys' prior (the Krichevsky–Trofimov estimator): half a pseudo-count per cell and class."""

from __future__ import annotations

from streamnb.estimators.base import UniformEstimator
from streamnb.stats import CountStatistics

__all__ = ["Jeffreys"]


class Jeffreys(UniformEstimator):
    """θ = (N_i(v,c) + ½) / (N_i(c) + ½·#A_i), α_c = (N(c) + ½) / (N + ½·k).

    The posterior mean under the Dirichlet(½, …, ½) prior, the prior that TAN's Bayesian edge
    score (``weight="bayes"``) assumes, and Weka's ``SimpleEstimator -A 0.5``; equal to
    ``MEstimate(m=0.5)``, under a name of its own so that it can be a parameter's default.

    Examples
    --------
    >>> import numpy as np
    >>> from streamnb.stats import CountStatistics
    >>> s = CountStatistics()
    >>> _ = s.update_many([{"a": "x"}, {"a": "y"}, {"a": "x"}], ["+", "+", "-"])
    >>> logs, _ = Jeffreys().log_theta(s, np.array([1]))
    >>> np.exp(logs).round(4).tolist()   # (1+½)/(2+1), (0+½)/(1+1)
    [[0.5], [0.25]]

    """

    name = "jeffreys"

    def _cell(self) -> float:
        return 0.5

    def class_pseudocounts(self, stats: CountStatistics) -> float:
        return 0.5
