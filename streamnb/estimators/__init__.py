"""Estimators: probabilities (in log space) from count statistics."""

from __future__ import annotations

from streamnb.estimators.base import Estimator, LogProb
from streamnb.estimators.dirichlet import Dirichlet
from streamnb.estimators.indifferent import Indifferent
from streamnb.estimators.jeffreys import Jeffreys
from streamnb.estimators.laplace import Laplace
from streamnb.estimators.m_estimate import MEstimate
from streamnb.estimators.ml import MaximumLikelihood
from streamnb.estimators.robinson_fisher import RobinsonFisher

__all__ = ["ESTIMATORS", "Dirichlet", "Estimator", "Indifferent", "Jeffreys", "Laplace",
           "LogProb", "MEstimate", "MaximumLikelihood", "RobinsonFisher", "make_estimator"]

ESTIMATORS: dict[str, type[Estimator]] = {
    "ml": MaximumLikelihood,
    "laplace": Laplace,
    "jeffreys": Jeffreys,
    "m-estimate": MEstimate,
    "bibl": Dirichlet,
    "indifferent": Indifferent,
}


def make_estimator(spec: str | Estimator) -> Estimator:
    """An estimator from its name (``"ml"``, ``"laplace"``, ``"jeffreys"``, ``"m-estimate"``,
    ``"bibl"``, ``"indifferent"``; defaults for its hyperparameters) or an instance (returned
    as is)."""
    if isinstance(spec, Estimator):
        return spec
    if isinstance(spec, str) and spec in ESTIMATORS:
        return ESTIMATORS[spec]()
    raise ValueError(f"estimator must be one of {sorted(ESTIMATORS)} or an Estimator instance, "
                     f"got {spec!r}")
