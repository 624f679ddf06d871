"""Scores of probabilistic classifiers computed exactly from all predictions."""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

__all__ = ["confusion_matrix", "exact_auc", "log_score"]


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
