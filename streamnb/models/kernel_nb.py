"""Naive Bayes with Gaussian kernel densities for numeric attributes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from streamnb._accel.kernels import kde_log_likelihood
from streamnb.models.discriminant import GaussianDiscriminant
from streamnb.models.factors import Factors
from streamnb.models.params import VAR_SMOOTHING, Integer
from streamnb.stats.binned_density import BinnedDensity
from streamnb.stats.cache import StateCache
from streamnb.stats.encoder import encode_batch
from streamnb.stats.kde import silverman_bandwidth

__all__ = ["KernelNB"]


class KernelNB(GaussianDiscriminant, state_name="KernelNB", presets={"kernel-nb": {}}):
    """Naive Bayes whose per-class densities of numeric attributes are Gaussian kernel
    density estimates over a binned, mergeable sketch of the values.

    P(y | x) ∝ π_y Π_i f_{i,y}(x_i) with f_{i,y}(t) = (1 / n h) Σ_b N_b φ((t − c_b) / h): N_b
    values of attribute i in class y fell in bin b of centre c_b (the sketch of
    :class:`~streamnb.stats.binned_density.BinnedDensity`: at most ``n_bins`` aligned bins per
    class and attribute, exact under merge and order), and h is Silverman's bandwidth
    1.06 σ̂ n^(−1/5) (σ̂ the class's standard deviation of the attribute, n its weight), never
    below the bin width. Learning is O(p) per record (plus an O(n_bins) re-binning when a value
    leaves its bins' range); prediction is O(k·p·n_bins) multiplications in one C kernel call,
    straight from the bins (nothing derived is rebuilt or cached per record): the estimate is
    over at most ``n_bins`` bins per class and attribute, never over stored values.

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
    half_life, drift_detector, drift_decay
        Forgetting, as every model takes it (:class:`~streamnb.NaiveBayes`;
        docs/recipes/forgetting.md).

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

    def __init__(self, n_bins: int = 128, var_smoothing: float = 1e-9,
                 half_life: float | None = None, drift_detector: Any = None,
                 drift_decay: float = 0.5) -> None:
        self.n_bins = n_bins
        self.var_smoothing = var_smoothing
        self._adapt(half_life, drift_detector, drift_decay)
        self.stats = BinnedDensity(n_bins)
        self.factors = Factors()
        self.n_learned = 0
        self._cache = StateCache()

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"n_bins": 16}

    def _log_densities(self, values: np.ndarray, attributes: np.ndarray, out: np.ndarray
                       ) -> np.ndarray:
        """``out`` (m, k) plus Σ_a log f_{a,y}(values[i, a]) over ``attributes`` (NaN omitted):
        the bandwidths (O(k·p)), then one call of the kernel ``kde_log_likelihood``
        (streamnb/_accel), which reads the densities straight from the bins: nothing is
        rebuilt or cached between records."""
        s = self.stats
        s.resize()
        n = s.moments.weight
        var = s.moments.variance()
        floor = self.var_smoothing * np.maximum(var.max(axis=0, initial=0.0), 1.0)
        # the kernel raises h to the bin width where it is below (the sketch's resolution)
        h = silverman_bandwidth(np.sqrt(var + np.maximum(floor, 1e-300)),
                                np.where(n > 0, n, 1.0))
        kde_log_likelihood(s.counts, s.origin, s.exponent, h,
                           np.ascontiguousarray(values, dtype=np.float64), attributes, out)
        return out

    def _log_prior(self) -> np.ndarray:
        """log π_y (−inf for a class decayed or merged to weight 0)."""
        weight = self.stats.class_weight
        total = float(weight.sum())
        if total <= 0:
            return np.zeros(len(weight))
        return np.log(weight / total, out=np.full(len(weight), -np.inf), where=weight > 0)

    def _active(self) -> np.ndarray:
        """The attributes every class has observed (the others' factors are omitted)."""
        return np.flatnonzero((self.stats.moments.weight > 0).all(axis=0))

    def log_density(self, label: Any, attribute: Any, value: float) -> float:
        """log f_{attribute, label}(value), the kernel density estimate."""
        s = self.stats
        c, a = s.labels.index[label], s.attributes.get(attribute)
        values = np.full((1, len(s.attributes)), np.nan)
        values[0, a] = float(value)
        out = self._log_densities(values, np.array([a]), np.zeros((1, s.n_classes)))
        return float(out[0, c])

    def _numeric_log_likelihood_one(self, x: Mapping) -> tuple[Any, Any] | None:
        """One record: every observed active attribute's density, O(k·p·n_bins)."""
        self._check_record(x, "record to predict")
        if not self.stats.n_classes:
            return None
        vector = self._encode_to_predict(x)
        finite, zeros = self._zero_factors(self._log_densities(vector[None], self._active(),
                                                               self._log_prior()[None]))
        return finite[0], zeros[0]

    @staticmethod
    def _zero_factors(finite: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A −inf log-likelihood (a class without values, or far outside its bins) as a zero
        factor."""
        bad = ~np.isfinite(finite)
        zeros = bad.astype(np.int64)
        finite[bad] = 0.0
        return finite, zeros

    def _numeric_joint_log_likelihood(self, records: Any, where: str
                                      ) -> tuple[np.ndarray, np.ndarray]:
        values = encode_batch(self.stats.attributes, records, where, grow=False).numeric_matrix(
            len(self.stats.attributes))
        return self._zero_factors(self._log_densities(values, self._active(), np.tile(
            self._log_prior(), (len(values), 1))))

    def covariance(self, label: Any | None = None) -> np.ndarray:  # pragma: no cover
        raise AttributeError("KernelNB has no covariance")
