"""Scores of probabilistic classifiers computed exactly from all predictions."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

import numpy as np

__all__ = ["brier_score", "confusion_matrix", "exact_auc", "log_loss", "log_score",
           "one_vs_rest_auc"]


def exact_auc(positive: Sequence[bool] | np.ndarray, scores: Sequence[float] | np.ndarray
              ) -> float:
    """Area under the ROC curve, exactly: the Mann–Whitney U statistic with tied scores
    counted one half.

    Examples
    --------
    >>> exact_auc([True, False, True, False], [0.9, 0.1, 0.4, 0.4])
    0.875

    """
    positive = np.asarray(positive, dtype=bool)
    scores = np.asarray(scores, dtype=np.float64)
    n_pos = int(positive.sum())
    n_neg = len(positive) - n_pos
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    order = np.argsort(scores, kind="mergesort")
    sorted_scores = scores[order]
    # average rank (1-based) of each group of tied scores
    starts = np.flatnonzero(np.r_[True, sorted_scores[1:] != sorted_scores[:-1]])
    ends = np.r_[starts[1:], len(scores)]
    ranks = np.empty(len(scores))
    ranks[order] = np.repeat((starts + ends + 1) / 2.0, ends - starts)
    u = ranks[positive].sum() - n_pos * (n_pos + 1) / 2.0
    return float(u / (n_pos * n_neg))


def log_score(p_true: Sequence[float] | np.ndarray) -> float:
    """Cerquides & López de Màntaras' LogScore: Σ −log P(true class) (lower is better; ∞ as
    soon as one true class got probability 0).

    Examples
    --------
    >>> round(log_score([0.5, 0.25]), 6)
    2.079442

    """
    p = np.asarray(p_true, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return float(-np.log(p).sum())


def confusion_matrix(y_true: Sequence[Hashable], y_pred: Sequence[Hashable],
                     labels: Sequence[Hashable] | None = None) -> tuple[list, np.ndarray]:
    """Counts ``m[i, j]`` of records of class ``labels[i]`` predicted as ``labels[j]``.

    Examples
    --------
    >>> labels, m = confusion_matrix(["a", "b", "b"], ["a", "a", "b"])
    >>> labels, m.tolist()
    (['a', 'b'], [[1, 0], [1, 1]])

    """
    if labels is None:
        labels = list(dict.fromkeys([*y_true, *[p for p in y_pred if p is not None]]))
    index = {label: i for i, label in enumerate(labels)}
    m = np.zeros((len(labels), len(labels)), dtype=np.int64)
    for t, p in zip(y_true, y_pred, strict=True):
        if p in index:
            m[index[t], index[p]] += 1
    return list(labels), m


def log_loss(log_p_true: Sequence[float] | np.ndarray, eps: float = 1e-15) -> float:
    """Mean −log P(true class), each probability floored at ``eps`` (as scikit-learn's
    ``log_loss`` clips), so one confident mistake does not make it infinite; the unfloored sum
    is :func:`log_score`. Takes log-probabilities (exact where probabilities underflow).

    Examples
    --------
    >>> import math
    >>> round(log_loss([math.log(0.5), math.log(0.25)]), 6)
    1.039721
    >>> round(log_loss([0.0, -math.inf]), 4)   # the zero is floored at 1e-15
    17.2694

    """
    logs = np.asarray(log_p_true, dtype=np.float64)
    if not len(logs):
        return float("nan")
    return float(-np.maximum(logs, math.log(eps)).mean())


def brier_score(proba: np.ndarray, true_index: Sequence[int] | np.ndarray) -> float:
    """Multi-class Brier score (Brier 1950): the mean over records of
    Σ_c (P(c | x) − [c = true class])², between 0 (perfect) and 2.

    Examples
    --------
    >>> round(brier_score(np.array([[0.8, 0.2], [0.4, 0.6]]), [0, 0]), 6)
    0.4

    """
    p = np.asarray(proba, dtype=np.float64)
    truth = np.zeros_like(p)
    truth[np.arange(len(p)), np.asarray(true_index, dtype=np.intp)] = 1.0
    return float(((p - truth) ** 2).sum(axis=1).mean()) if len(p) else float("nan")


def one_vs_rest_auc(log_proba: np.ndarray, true_index: Sequence[int] | np.ndarray) -> float:
    """Exact AUC: for two classes, of class 1 against class 0 scored by the log-odds; for more,
    the unweighted mean over the classes present of each class against the rest, scored by its
    log-probability (classes absent from the test set are left out).

    Examples
    --------
    >>> import math
    >>> logs = np.log([[0.9, 0.1], [0.3, 0.7], [0.6, 0.4]])
    >>> one_vs_rest_auc(logs, [0, 1, 1])
    1.0

    """
    logs = np.asarray(log_proba, dtype=np.float64)
    y = np.asarray(true_index, dtype=np.intp)
    if logs.shape[1] == 2:
        with np.errstate(invalid="ignore"):
            odds = logs[:, 1] - logs[:, 0]
        odds = np.where(np.isnan(odds), 0.0, odds)  # −inf − (−inf): no evidence either way
        return exact_auc(y == 1, odds)
    aucs = [exact_auc(y == c, logs[:, c]) for c in range(logs.shape[1])
            if 0 < (y == c).sum() < len(y)]
    return float(np.mean(aucs)) if aucs else float("nan")
