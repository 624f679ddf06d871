"""Dirichlet (BIBL, Kontkanen et al.) estimates with configurable hyperparameters."""

from __future__ import annotations

from collections.abc import Hashable, Mapping

import numpy as np

from streamnb.estimators.base import Estimator
from streamnb.stats import CountStatistics

__all__ = ["Dirichlet"]

Prior = float | Mapping[Hashable, float]


def _positive(value: float, what: str) -> float:
    if not (isinstance(value, int | float) and not isinstance(value, bool) and value > 0):
        raise ValueError(f"{what} must be a positive number, got {value!r}")
    return float(value)


class Dirichlet(Estimator):
    """Posterior-mean estimates under Dirichlet priors μ (class) and σ (attribute values).

    α_c = (N(c) + μ_c) / Σ_c' (N(c') + μ_c'),
    θ_{i,v,c} = (N_i(v,c) + σ_{i,v}) / (N_i(c) + Σ_v' σ_{i,v'})

    All hyperparameters default to 1 (uniform priors). σ does not depend on the class.

    Parameters
    ----------
    class_prior
        μ: one number for every class, or ``{class: μ_c}`` (unlisted classes get ``default``).
    value_prior
        σ: one number for every cell, or ``{attribute: σ}`` / ``{attribute: {value: σ}}``;
        a token's cells are the values ``True`` (present) and ``False`` (absent).
    default
        Hyperparameter for anything ``class_prior`` or ``value_prior`` does not list.

    Examples
    --------
    >>> import numpy as np
    >>> from streamnb.stats import CountStatistics
    >>> s = CountStatistics()
    >>> _ = s.update_many([{"a": "x"}, {"a": "y"}, {"a": "x"}], ["+", "+", "-"])
    >>> est = Dirichlet(class_prior={"+": 2.0}, value_prior={"a": {"x": 3.0}})
    >>> logs, _ = est.log_theta(s, np.array([0]))   # value "x": (1+3)/(2+4), (1+3)/(1+4)
    >>> np.exp(logs).round(4).tolist()
    [[0.6667], [0.8]]
    >>> np.exp(est.log_class_prior(s)[0]).round(4).tolist()   # (2+2)/6, (1+1)/6
    [0.6667, 0.3333]

    References
    ----------
    P. Kontkanen, P. Myllymäki, T. Silander, H. Tirri. BAYDA: Software for Bayesian
    classification and feature selection. KDD 1998.

    """

    name = "bibl"

    def __init__(self, class_prior: Prior = 1.0, value_prior: float | Mapping = 1.0,
                 default: float = 1.0) -> None:
        _positive(default, "default")
        if isinstance(class_prior, Mapping):
            for label, mu in class_prior.items():
                _positive(mu, f"class_prior[{label!r}]")
        else:
            _positive(class_prior, "class_prior")
        if isinstance(value_prior, Mapping):
            for attribute, sigma in value_prior.items():
                if isinstance(sigma, Mapping):
                    for value, s in sigma.items():
                        _positive(s, f"value_prior[{attribute!r}][{value!r}]")
                else:
                    _positive(sigma, f"value_prior[{attribute!r}]")
        else:
            _positive(value_prior, "value_prior")
        self.class_prior = class_prior
        self.value_prior = value_prior
        self.default = default

    def class_pseudocounts(self, stats: CountStatistics) -> float | np.ndarray:
        if not isinstance(self.class_prior, Mapping):
            return float(self.class_prior)
        return np.array([float(self.class_prior.get(label, self.default))
                         for label in stats.labels.values])

    def attribute_pseudocounts(self, stats: CountStatistics, columns: np.ndarray
                               ) -> np.ndarray:
        if not isinstance(self.value_prior, Mapping):  # one σ per cell: O(columns), not O(V)
            return float(self.value_prior) * stats.schema.column_sizes(columns)
        return super().attribute_pseudocounts(stats, columns)

    def cell_pseudocounts(self, stats: CountStatistics
                          ) -> tuple[np.ndarray | float, np.ndarray | float]:
        if not isinstance(self.value_prior, Mapping):
            return float(self.value_prior), float(self.value_prior)
        schema = stats.schema
        present = np.empty(schema.n_columns)
        absent = np.empty(schema.n_columns)
        for j, (a, value) in enumerate(zip(schema.column_attribute, schema.column_value,
                                           strict=True)):
            sigma = self.value_prior.get(schema.attributes.name(a), self.default)
            if isinstance(sigma, Mapping):
                if value is None:  # a token: cells True and False
                    present[j] = sigma.get(True, self.default)
                    absent[j] = sigma.get(False, self.default)
                else:
                    present[j] = absent[j] = sigma.get(value, self.default)
            else:
                present[j] = absent[j] = sigma
        return present, absent
