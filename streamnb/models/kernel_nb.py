"""Naive Bayes with Gaussian kernel densities for numeric attributes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from streamnb.models.discriminant import GaussianDiscriminant
from streamnb.models.factors import Factors
from streamnb.models.params import VAR_SMOOTHING, Integer
from streamnb.stats.binned_density import BinnedDensity
from streamnb.stats.cache import StateCache
from streamnb.stats.encoder import encode_batch
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

    def _terms(self) -> dict[str, Any]:
        stats = self.stats
        return self._cache.get("terms", (stats, stats.version), self._compute_terms)

    def _compute_terms(self) -> dict[str, Any]:
        s = self.stats
        return self._class_terms(range(s.n_classes), {
            "log_weight": np.empty(s.counts.shape), "centres": np.empty(s.counts.shape)})

    def _updated_terms(self, terms: dict[str, Any], c: int, x: np.ndarray) -> None:
        """After ``learn_one`` of a record of class ``c``: only that class's bins moved, so
        only its rows of the kernel terms are recomputed (O(p·n_bins), not O(k·p·n_bins)),
        its bin centres only if its bins were re-placed. The terms belong to the cache alone,
        so they are updated in place and re-keyed."""
        s = self.stats
        if terms["log_weight"].shape != s.counts.shape:
            return  # a new class or attribute: recomputed in full when a prediction asks
        grid = terms["grid"]
        placed = (np.array_equal(s.origin[c], grid[0][c])
                  and np.array_equal(s.exponent[c], grid[1][c]))
        self._cache.put("terms", (s, s.version), self._class_terms([c], terms, not placed))

    def _class_terms(self, classes: Any, terms: dict[str, Any], centres: bool = True
                     ) -> dict[str, Any]:
        """``terms`` with the bin rows of ``classes`` (their centres only with ``centres``) and
        every per-(class, attribute) term (bandwidths, priors, active attributes) computed from
        the state."""
        s = self.stats
        m = s.moments
        n = m.weight
        var = m.variance()
        floor = self.var_smoothing * np.maximum(var.max(axis=0, initial=0.0), 1.0)
        sigma = np.sqrt(var + np.maximum(floor, 1e-300))
        width = np.ldexp(1.0, s.exponent)
        rows = np.asarray(classes, dtype=np.int64)
        with np.errstate(divide="ignore"):
            h = np.maximum(silverman_bandwidth(sigma, np.where(n > 0, n, 1.0)), width)
            # log(N_b / n): the bins as the kernel estimate's weighted centres
            terms["log_weight"][rows] = np.log(s.counts[rows]) - np.log(
                np.where(n[rows] > 0, n[rows], 1.0))[..., None]
        if centres:
            terms["centres"][rows] = np.ldexp(s.origin[rows][..., None] + np.arange(s.n_bins)
                                              + 0.5, s.exponent[rows][..., None])
            # the bin grid the centres were computed from
            terms["grid"] = (s.origin.copy(), s.exponent.copy())
        total = float(s.class_weight.sum())
        with np.errstate(divide="ignore"):
            log_prior = np.log(s.class_weight / total) if total > 0 else np.zeros(
                s.n_classes)
        active = np.flatnonzero((n > 0).all(axis=0)) if s.n_classes else np.zeros(
            0, dtype=np.int64)
        terms.update(h=h, log_prior=log_prior, active=active)
        return terms

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

    def _numeric_log_likelihood_one(self, x: Mapping) -> tuple[Any, Any] | None:
        """One record: every observed active attribute's density in one vectorised step,
        O(k·p·n_bins)."""
        self._check_record(x, "record to predict")
        if not self.stats.n_classes:
            return None
        terms = self._terms()
        vector = self._encode_to_predict(x)
        active = terms["active"]
        log_weight, centres, h = terms["log_weight"], terms["centres"], terms["h"]
        if len(active) < len(vector) or np.isnan(vector).any():
            # some attributes unobserved (or not yet in every class): their factors omitted
            slots = active[~np.isnan(vector[active])]
            vector, log_weight, centres, h = (vector[slots], log_weight[:, slots],
                                              centres[:, slots], h[:, slots])
        finite = terms["log_prior"].copy()
        if len(vector):
            with np.errstate(divide="ignore"):  # a class without values: log 0
                finite += log_mixture_density(vector[None, :], log_weight, centres,
                                              h[..., None]).sum(axis=1)
        finite, zeros = self._zero_factors(finite[None])
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
        terms = self._terms()
        values = encode_batch(self.stats.attributes, records, where, grow=False).numeric_matrix(
            len(self.stats.attributes))
        n = values.shape[0]
        finite = np.tile(terms["log_prior"], (n, 1))
        for a in terms["active"]:
            rows = np.flatnonzero(~np.isnan(values[:, a]))
            for start in range(0, len(rows), _CHUNK):
                chunk = rows[start: start + _CHUNK]
                finite[chunk] += self._log_density(terms, a, values[chunk, a])
        return self._zero_factors(finite)

    def covariance(self, label: Any | None = None) -> np.ndarray:  # pragma: no cover
        raise AttributeError("KernelNB has no covariance")
