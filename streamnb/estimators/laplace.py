"""Laplace's rule of succession: one pseudo-count per cell and per class."""

from __future__ import annotations

from streamnb.estimators.base import UniformEstimator
from streamnb.stats import CountStatistics

__all__ = ["Laplace"]


class Laplace(UniformEstimator):
    """θ = (N_i(v,c) + 1) / (N_i(c) + #A_i), α_c = (N(c) + 1) / (N + k).

    Examples
    --------
    >>> import numpy as np
    >>> from streamnb.stats import CountStatistics
    >>> s = CountStatistics()
    >>> _ = s.update_many([{"a": "x"}, {"a": "y"}, {"a": "x"}], ["+", "+", "-"])
    >>> logs, _ = Laplace().log_theta(s, np.array([0, 1]))
    >>> np.exp(logs).round(4).tolist()   # (1+1)/(2+2), (1+1)/(2+2); (1+1)/(1+2), (0+1)/(1+2)
    [[0.5, 0.5], [0.6667, 0.3333]]

    """

    name = "laplace"

    def _cell(self) -> float:
        return 1.0

    def class_pseudocounts(self, stats: CountStatistics) -> float:
        return 1.0
