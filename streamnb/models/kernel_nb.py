"""Naive Bayes with Gaussian kernel densities for numeric attributes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from streamnb.models.discriminant import GaussianDiscriminant
from streamnb.models.params import VAR_SMOOTHING, Integer, validate_params
from streamnb.stats.binned_density import BinnedDensity
from streamnb.stats.cache import StateCache
from streamnb.stats.kde import log_mixture_density, silverman_bandwidth

__all__ = ["KernelNB"]

_CHUNK = 256


class KernelNB(GaussianDiscriminant, state_name="KernelNB", presets={"kernel-nb": {}}):
    """Naive Bayes whose per-class densities of numeric attributes are Gaussian kernel
    density estimates over a binned, mergeable sketch of the values.

    P(y | x) ∝ π_y Π_i f_{i,y}(x_i) with f_{i,y}(t) = (1 / n h) Σ_b N_b φ((t − c_b) / h): N_b
    values of attribute i in class y fell in bin b of centre c_b (the sketch of
    :class:`~streamnb.stats.binned_density.BinnedDensity`: at most ``n_bins`` aligned bins per
    class and attribute, exact under merge and order), and h is Silverman's bandwidth
    1.06 σ̂ n^(−1/5) (σ̂ the class's standard deviation of the attribute, n its weight), never
    below the bin width. Learning is O(p) per record (plus an O(n_bins) re-binning when a value
    leaves its bins' range); prediction is O(k·p·n_bins).

    A missing value's factor is omitted (exact for naive Bayes); an attribute contributes once
    every class has observed it.

    Parameters
    ----------
    n_bins
        Bins per class and attribute (memory k·p·n_bins floats). Binning moves each value by
        less than range / n_bins, small against h when n_bins ≳ 100.
    var_smoothing
        Fraction of the attribute's largest class variance added to every σ̂² (as
        :class:`~streamnb.NaiveBayes`), so a constant attribute does not give a zero bandwidth.

    Attributes
    ----------
    stats : streamnb.stats.binned_density.BinnedDensity
        The model's whole state.

    Examples
    --------
    Class a at x = 0 and 1, class b at x = 3: with one attribute, σ̂_a = 0.5 (ML) so
    h_a = 1.06 · 0.5 · 2^(−1/5) = 0.461, and class b's single value gets the bandwidth of its
    variance floor: at x = 0.5, f_a = ½ (φ(0.5/0.461) + φ(0.5/0.461)) / 0.461 ≈ 0.481 (the
    values sit at their bins' centres, 2^−8 above 0 and 1) while f_b ≈ 0, so P(a | 0.5) = 1.

    >>> from streamnb import KernelNB
    >>> model = KernelNB()
    >>> for x, y in [(0.0, "a"), (1.0, "a"), (3.0, "b")]:
    ...     model.learn_one({"x": x}, y)
    >>> {c: round(p, 3) for c, p in model.predict_proba_one({"x": 0.5}).items()}
    {'a': 1.0, 'b': 0.0}
    >>> round(float(np.exp(model.log_density("a", "x", 0.5))), 3)
    0.481

    The same with a batch:

    >>> import pandas as pd
    >>> batch = KernelNB()
    >>> batch.learn_many(pd.DataFrame({"x": [0.0, 1.0, 3.0]}), pd.Series(list("aab")))
    >>> batch.predict_proba_many(pd.DataFrame({"x": [0.5]})).round(3)
         a    b
    0  1.0  0.0

    References
    ----------
    S. Jaroszewicz, *Bayesian classification* (lecture notes): kernel density naive Bayes.
    B. W. Silverman, *Density Estimation for Statistics and Data Analysis* (1986), eq. 3.28
    (h = 1.06 σ̂ n^(−1/5)) and §3.5 (binned kernel estimates).

    """

    _statistics = BinnedDensity

    _parameter_constraints: ClassVar[dict[str, list]] = {
        "n_bins": [Integer(2)], "var_smoothing": VAR_SMOOTHING}

    def __init__(self, n_bins: int = 128, var_smoothing: float = 1e-9) -> None:
        self.n_bins = n_bins
        self.var_smoothing = var_smoothing
        validate_params(self)
        self.stats = BinnedDensity(n_bins)
        self.n_learned = 0
        self._cache = StateCache()

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"n_bins": 16}

    def _terms(self) -> dict[str, Any]:
        stats = self.stats
        return self._cache.get("terms", (stats, stats.version), self._compute_terms)

    def _compute_terms(self) -> dict[str, Any]:
        s = self.stats
        m = s.moments
        n = m.weight
        var = m.variance()
        floor = self.var_smoothing * np.maximum(var.max(axis=0, initial=0.0), 1.0)
        sigma = np.sqrt(var + np.maximum(floor, 1e-300))
        width = np.ldexp(1.0, s.exponent)
        with np.errstate(divide="ignore"):
            h = np.maximum(silverman_bandwidth(sigma, np.where(n > 0, n, 1.0)), width)
            # log(N_b / n): the bins as the kernel estimate's weighted centres
            log_weight = np.log(s.counts) - np.log(np.where(n > 0, n, 1.0))[..., None]
        centres = np.ldexp(s.origin[..., None] + np.arange(s.n_bins) + 0.5,
                           s.exponent[..., None])
        total = float(s.class_weight.sum())
        with np.errstate(divide="ignore"):
            log_prior = np.log(s.class_weight / total) if total > 0 else np.zeros(
                s.n_classes)
        active = np.flatnonzero((n > 0).all(axis=0)) if s.n_classes else np.zeros(
            0, dtype=np.int64)
        return {"h": h, "log_weight": log_weight, "centres": centres, "log_prior": log_prior,
                "active": active}

    def _log_density(self, terms: dict[str, Any], a: int, t: np.ndarray) -> np.ndarray:
        """log f_{a,y}(t) for values ``t`` (m,), all classes: (m, k)."""
        with np.errstate(divide="ignore"):  # a class without values: log 0
            return log_mixture_density(t[:, None], terms["log_weight"][None, :, a],
                                       terms["centres"][None, :, a], terms["h"][None, :, a, None])

    def log_density(self, label: Any, attribute: Any, value: float) -> float:
        """log f_{attribute, label}(value), the kernel density estimate."""
        terms = self._terms()
        c, a = self.stats.labels.index[label], self.stats.attributes.get(attribute)
        return float(self._log_density(terms, a, np.array([float(value)]))[0, c])

    def _joint_log_likelihood(self, records: Sequence[Mapping], where: str
                              ) -> tuple[np.ndarray, np.ndarray]:
        from streamnb.stats.vectors import encode_vectors

        terms = self._terms()
        values = encode_vectors(self.stats.attributes, records, where, grow=False)
        n, k = values.shape[0], self.stats.n_classes
        finite = np.tile(terms["log_prior"], (n, 1))
        for a in terms["active"]:
            rows = np.flatnonzero(~np.isnan(values[:, a]))
            for start in range(0, len(rows), _CHUNK):
                chunk = rows[start: start + _CHUNK]
                finite[chunk] += self._log_density(terms, a, values[chunk, a])
        zeros = np.zeros((n, k), dtype=np.int64)
        bad = ~np.isfinite(finite)
        zeros[bad] = 1
        finite[bad] = 0.0
        return finite, zeros

    def covariance(self, label: Any | None = None) -> np.ndarray:  # pragma: no cover
        raise AttributeError("KernelNB has no covariance")
