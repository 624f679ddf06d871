"""Quadratic discriminant analysis on streaming, mergeable moments."""

from __future__ import annotations

import numpy as np

from streamnb.models.discriminant import GaussianDiscriminant, shrink

__all__ = ["QDA"]


class QDA(GaussianDiscriminant, state_name="QDA", presets={"qda": {}}):
    """Quadratic discriminant analysis: one Gaussian (mean and covariance) per class.

    d_y(x) = −½ (x − μ_y)ᵀ Σ_y⁻¹ (x − μ_y) − ½ log |Σ_y| + log π_y, with Σ_y the class's
    maximum-likelihood covariance, optionally shrunk: (1 − α) Σ_y + α (tr Σ_y / p) I. Learning
    is O(p²) per record; the k Cholesky factors are computed once per state version (without
    shrinkage, ``learn_one`` updates the learned class's Σ_y⁻¹ by a rank-one correction
    instead) and a prediction costs O(k·p²).

    **Small classes.** A class with no more records than dimensions has a singular covariance.
    Without shrinkage (α = 0) such a class uses the pooled covariance (the LDA one) instead, so
    it still predicts; with shrinkage its shrunk covariance is used (positive definite as soon
    as the class has two distinct records). Pairs of attributes a class never observed together
    take the pooled covariance's entries.

    Parameters
    ----------
    shrinkage
        ``None`` (no shrinkage), a number α in [0, 1] for every class, or ``"ledoit-wolf"``:
        each class's own Ledoit–Wolf intensity from its moments. A fixed α is exactly
        scikit-learn's ``QuadraticDiscriminantAnalysis(solver="eigen", shrinkage=α)``; its
        ``reg_param=r`` (``solver="svd"``) is (1 − r) Σ_y + r I instead, the same only where
        tr Σ_y / p = 1.
    half_life, drift_detector, drift_decay
        Forgetting, as every model takes it (:class:`~streamnb.NaiveBayes`;
        docs/recipes/forgetting.md).

    Attributes
    ----------
    stats : streamnb.stats.covariance.ClassCovariance
        The model's whole state.
    classes : list
        Labels seen so far.
    means : dict
        Class → attribute → mean.

    Examples
    --------
    Class a at x = 0 and 2 (mean 1, variance 1), class b at 3 and 7 (mean 5, variance 4). At
    x = 2: d_a = −½·1²/1 − ½ log 1 = −0.5, d_b = −½·3²/4 − ½ log 4 = −1.125 − 0.693 = −1.818,
    so P(a | x) = 1 / (1 + e^(−1.318)) ≈ 0.789.

    >>> from streamnb import QDA
    >>> model = QDA()
    >>> for x, y in [(0.0, "a"), (2.0, "a"), (3.0, "b"), (7.0, "b")]:
    ...     model.learn_one({"x": x}, y)
    >>> {c: round(p, 3) for c, p in model.predict_proba_one({"x": 2.0}).items()}
    {'a': 0.789, 'b': 0.211}

    The same with a batch:

    >>> import pandas as pd
    >>> batch = QDA()
    >>> batch.learn_many(pd.DataFrame({"x": [0.0, 2.0, 3.0, 7.0]}), pd.Series(list("aabb")))
    >>> batch.predict_proba_many(pd.DataFrame({"x": [2.0]})).round(3)
           a      b
    0  0.789  0.211

    References
    ----------
    S. Jaroszewicz, *Bayesian classification* (lecture notes): discriminant functions, QDA,
    shrinkage. T. Hastie, R. Tibshirani, J. Friedman, *The Elements of Statistical Learning*,
    eq. 4.12. O. Ledoit and M. Wolf (2004), Lemmas 3.2–3.4.

    """

    def _covariances(self, active: np.ndarray) -> tuple[np.ndarray, bool]:
        s = self.stats
        ix = np.ix_(active, active)
        pooled = s.pooled_covariance()[ix]
        pooled_shrunk = None
        out = np.empty((s.n_classes, len(active), len(active)))
        for c in range(s.n_classes):
            weight = s.weight[c][ix]
            cov = np.where(weight > 0, s.covariance(c)[ix], pooled)
            alpha = self._alpha(weight, cov, s.fourth[c][ix])
            if alpha == 0.0 and s.class_weight[c] <= len(active):
                if pooled_shrunk is None:
                    pooled_shrunk = self._pooled(active)
                out[c] = pooled_shrunk
            else:
                out[c] = shrink(cov, alpha)
        return out, False
