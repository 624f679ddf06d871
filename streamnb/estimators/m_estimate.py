"""The m-estimate (Cestnik) in its add-m form, m pseudo-counts per cell."""

from __future__ import annotations

from streamnb.estimators.base import UniformEstimator
from streamnb.stats import CountStatistics

__all__ = ["MEstimate"]


class MEstimate(UniformEstimator):
    """θ = (N_i(v,c) + m) / (N_i(c) + m·#A_i), α_c = (N(c) + m) / (N + m·k).

    With a uniform prior estimate ``p = 1/#A_i`` Cestnik's ``(N + m'p)/(N_i(c) + m')`` is this
    with ``m' = m·#A_i``; ``m = 1`` is Laplace.

    Parameters
    ----------
    m
        Pseudo-count per cell, > 0.

    Examples
    --------
    >>> import numpy as np
    >>> from streamnb.stats import CountStatistics
    >>> s = CountStatistics()
    >>> _ = s.update_many([{"a": "x"}, {"a": "y"}, {"a": "x"}], ["+", "+", "-"])
    >>> logs, _ = MEstimate(m=2.0).log_theta(s, np.array([1]))
    >>> np.exp(logs).round(4).tolist()   # (1+2)/(2+4), (0+2)/(1+4)
    [[0.5], [0.4]]

    """

    name = "m-estimate"

    def __init__(self, m: float = 1.0) -> None:
        if not (isinstance(m, int | float) and m > 0):
            raise ValueError(f"m must be a positive number, got {m!r}")
        self.m = m

    def _cell(self) -> float:
        return float(self.m)

    def class_pseudocounts(self, stats: CountStatistics) -> float:
        return float(self.m)
