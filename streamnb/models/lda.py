"""Linear discriminant analysis on streaming, mergeable moments."""

from __future__ import annotations

import numpy as np

from streamnb.models.discriminant import GaussianDiscriminant

__all__ = ["LDA"]


class LDA(GaussianDiscriminant, state_name="LDA", presets={"lda": {}}):
    """Linear discriminant analysis: Gaussian classes sharing one (pooled) covariance.

    d_y(x) = −½ (x − μ_y)ᵀ Σ⁻¹ (x − μ_y) − ½ log |Σ| + log π_y, with Σ the pooled within-class
    covariance S_W / N (maximum likelihood, as scikit-learn's ``LinearDiscriminantAnalysis``),
    optionally shrunk: Σ_s = (1 − α) Σ + α (tr Σ / p) I. Learning adds a record's outer product
    to its class's co-moments (O(p²)); the Cholesky factor of Σ is computed once per state
    version (without shrinkage, ``learn_one`` updates Σ⁻¹ by a rank-one correction instead, so
    one-by-one use costs O(p²) per record) and a prediction costs O(p² + k·p). The whole state
    is per-class counts, means and co-moments, so models merge exactly and forget by
    ``decay``.

    Parameters
    ----------
    shrinkage
        ``None`` (no shrinkage), a number α in [0, 1], or ``"ledoit-wolf"``: Ledoit & Wolf's
        intensity for the pooled covariance (of the records centred on their class means),
        computed from the same moments. A fixed α is exactly scikit-learn's ``shrinkage=α``
        (``solver="lsqr"`` or ``"eigen"``); ``"ledoit-wolf"`` differs from its ``"auto"``, which
        shrinks each class's *standardised* covariance towards the identity and re-weights.
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
    Class a at x = 0 and 2 (mean 1, variance 1), class b at 4 and 6 (mean 5, variance 1): the
    pooled variance is 1, so at x = 2, d_a = −½(2 − 1)² = −0.5 and d_b = −½(2 − 5)² = −4.5, and
    P(a | x) = 1 / (1 + e^(−4.5 + 0.5)) = 1 / (1 + e^−4) ≈ 0.982.

    >>> from streamnb import LDA
    >>> model = LDA()
    >>> for x, y in [(0.0, "a"), (2.0, "a"), (4.0, "b"), (6.0, "b")]:
    ...     model.learn_one({"x": x}, y)
    >>> {c: round(p, 4) for c, p in model.predict_proba_one({"x": 2.0}).items()}
    {'a': 0.982, 'b': 0.018}

    The same with a batch (the statistics of ``learn_one`` on each row):

    >>> import pandas as pd
    >>> batch = LDA()
    >>> batch.learn_many(pd.DataFrame({"x": [0.0, 2.0, 4.0, 6.0]}), pd.Series(list("aabb")))
    >>> batch.predict_proba_many(pd.DataFrame({"x": [2.0, 3.0]})).round(4)
            a      b
    0  0.982  0.018
    1  0.500  0.500

    References
    ----------
    S. Jaroszewicz, *Bayesian classification* (lecture notes): discriminant functions, LDA,
    shrinkage. T. Hastie, R. Tibshirani, J. Friedman, *The Elements of Statistical Learning*,
    eq. 4.9–4.10. O. Ledoit and M. Wolf, "A well-conditioned estimator for large-dimensional
    covariance matrices", J. Multivariate Analysis 88 (2004), Lemmas 3.2–3.4.

    """

    def _covariances(self, active: np.ndarray) -> tuple[np.ndarray, bool]:
        return self._pooled(active)[None], True
