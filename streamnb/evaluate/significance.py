"""Two-tailed t-tests for comparing classifiers' scores over folds or splits.

- :func:`paired_t_test`: the same folds or splits scored by both classifiers (Singh & Provan's
  30 random splits).
- :func:`unpaired_t_test`: two independent samples (Zhang's 5-fold × 20 protocol compares the
  two accuracy samples unpaired).
- :func:`corrected_resampled_t_test`: Nadeau & Bengio's correction of the paired test for
  resampled or repeated cross-validation, whose training sets overlap so that the plain paired
  test's variance is too small (it rejects far too often).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

__all__ = ["TTest", "corrected_resampled_t_test", "paired_t_test", "unpaired_t_test"]


@dataclass(frozen=True)
class TTest:
    """A two-tailed t-test of "the two means are equal".

    ``mean_difference`` is mean(a) − mean(b). When every difference is zero (or both samples
    are constant and equal) there is no evidence of a difference: ``statistic`` 0, ``p_value``
    1 (scipy would return NaN).
    """

    statistic: float
    p_value: float
    df: float
    mean_difference: float

    def significant(self, alpha: float = 0.05) -> bool:
        return self.p_value < alpha

    def verdict(self, alpha: float = 0.05) -> str:
        """"better", "worse" (a against b) or "tie" at level ``alpha``."""
        if not self.significant(alpha):
            return "tie"
        return "better" if self.mean_difference > 0 else "worse"


def _samples(a: Sequence[float], b: Sequence[float], paired: bool) -> tuple[np.ndarray, ...]:
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if x.ndim != 1 or y.ndim != 1:
        raise ValueError("the scores must be one-dimensional sequences")
    if paired and len(x) != len(y):
        raise ValueError(f"paired scores need equal lengths, got {len(x)} and {len(y)}")
    if len(x) < 2 or len(y) < 2:
        raise ValueError("a t-test needs at least two scores per classifier")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ValueError("the scores must be finite")
    return x, y


def paired_t_test(a: Sequence[float], b: Sequence[float]) -> TTest:
    """Student's paired t-test on the differences a_i − b_i (df = n − 1).

    Examples
    --------
    >>> t = paired_t_test([0.90, 0.85, 0.88, 0.92], [0.86, 0.84, 0.85, 0.87])
    >>> round(t.statistic, 4), round(t.p_value, 4), t.df, t.verdict()
    (3.806, 0.0319, 3.0, 'better')

    """
    x, y = _samples(a, b, paired=True)
    d = x - y
    if not d.any():
        return TTest(0.0, 1.0, float(len(d) - 1), 0.0)
    result = stats.ttest_rel(x, y)
    return TTest(float(result.statistic), float(result.pvalue), float(len(d) - 1),
                 float(d.mean()))


def unpaired_t_test(a: Sequence[float], b: Sequence[float], equal_var: bool = True) -> TTest:
    """Two-sample t-test (Student's with pooled variance, or Welch's if not ``equal_var``).

    Examples
    --------
    >>> t = unpaired_t_test([0.90, 0.85, 0.88, 0.92], [0.86, 0.84, 0.85, 0.87])
    >>> round(t.statistic, 4), round(t.p_value, 4), t.df
    (1.998, 0.0927, 6.0)

    """
    x, y = _samples(a, b, paired=False)
    difference = float(x.mean() - y.mean())
    if x.var() == 0 and y.var() == 0:
        if difference == 0:
            return TTest(0.0, 1.0, float(len(x) + len(y) - 2), 0.0)
        return TTest(math.copysign(math.inf, difference), 0.0, float(len(x) + len(y) - 2),
                     difference)
    result = stats.ttest_ind(x, y, equal_var=equal_var)
    df = float(getattr(result, "df", len(x) + len(y) - 2))
    return TTest(float(result.statistic), float(result.pvalue), df, difference)


def corrected_resampled_t_test(a: Sequence[float], b: Sequence[float], n_train: int,
                               n_test: int) -> TTest:
    """Nadeau & Bengio's corrected resampled t-test for J paired scores from resampled
    train/test splits or repeated cross-validation:
    t = mean(d) / sqrt((1/J + n_test/n_train) · var(d)), df = J − 1.

    Examples
    --------
    >>> t = corrected_resampled_t_test([0.90, 0.85, 0.88, 0.92], [0.86, 0.84, 0.85, 0.87],
    ...                                n_train=90, n_test=10)
    >>> round(t.statistic, 4), round(t.p_value, 4)
    (3.1668, 0.0506)

    References
    ----------
    C. Nadeau, Y. Bengio. Inference for the generalization error. Machine Learning 52, 2003.

    """
    if n_train <= 0 or n_test <= 0:
        raise ValueError(f"n_train and n_test must be positive, got {n_train} and {n_test}")
    x, y = _samples(a, b, paired=True)
    d = x - y
    J = len(d)
    if not d.any():
        return TTest(0.0, 1.0, float(J - 1), 0.0)
    variance = d.var(ddof=1)
    if variance == 0:
        return TTest(math.copysign(math.inf, d.mean()), 0.0, float(J - 1), float(d.mean()))
    t = d.mean() / math.sqrt((1.0 / J + n_test / n_train) * variance)
    p = 2.0 * stats.t.sf(abs(t), J - 1)
    return TTest(float(t), float(p), float(J - 1), float(d.mean()))
