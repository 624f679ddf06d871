"""Scores of probabilistic classifiers computed exactly from all predictions."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

import numpy as np

__all__ = ["brier_score", "confusion_matrix", "exact_auc", "log_loss", "log_score",
           "misclassification_rates", "one_vs_rest_auc", "operating_points", "roc_curve",
           "rolling_accuracy"]

#: The TREC spam track's operating points, in %: spam miss at these ham losses ...
HAM_LOSSES = (0.1, 0.5, 1.0)
#: ... and ham loss at these spam misses.
SPAM_MISSES = (1.0, 3.0, 5.0)


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


def roc_curve(positive: Sequence[bool] | np.ndarray, scores: Sequence[float] | np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The exact ROC curve: for every distinct score ``t``, from the highest down, the
    false-positive rate FPR(t) = #{negatives with score ≥ t} / #negatives and the true-positive
    rate TPR(t) = #{positives with score ≥ t} / #positives; tied scores move both rates at
    once (one diagonal step). A first point (0, 0) with threshold +∞ calls no record positive.
    Returns ``(fpr, tpr, thresholds)``, thresholds decreasing; the same points as
    scikit-learn's ``roc_curve(..., drop_intermediate=False)``. The trapezoid area under
    it is :func:`exact_auc`. Both rates are NaN when one class is absent.

    Examples
    --------
    >>> fpr, tpr, t = roc_curve([True, False, True, False], [0.9, 0.1, 0.4, 0.4])
    >>> fpr.tolist(), tpr.tolist(), t.tolist()
    ([0.0, 0.0, 0.5, 1.0], [0.0, 0.5, 1.0, 1.0], [inf, 0.9, 0.4, 0.1])

    """
    positive = np.asarray(positive, dtype=bool)
    scores = np.asarray(scores, dtype=np.float64)
    order = np.argsort(-scores, kind="mergesort")
    sorted_scores, sorted_positive = scores[order], positive[order]
    # the last record of each group of tied scores: the rates after the whole group
    last = np.flatnonzero(np.r_[sorted_scores[1:] != sorted_scores[:-1], True]) \
        if len(scores) else np.array([], dtype=np.intp)
    true_pos = np.r_[0, np.cumsum(sorted_positive)[last]]
    false_pos = np.r_[0, np.cumsum(~sorted_positive)[last]]
    n_pos, n_neg = int(positive.sum()), int((~positive).sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        fpr = false_pos / n_neg if n_neg else np.full(len(false_pos), np.nan)
        tpr = true_pos / n_pos if n_pos else np.full(len(true_pos), np.nan)
    return fpr.astype(np.float64), tpr.astype(np.float64), np.r_[np.inf, sorted_scores[last]]


def operating_points(positive: Sequence[bool] | np.ndarray,
                     scores: Sequence[float] | np.ndarray,
                     ham_losses: Sequence[float] = HAM_LOSSES,
                     spam_misses: Sequence[float] = SPAM_MISSES) -> dict[str, float]:
    """The TREC spam track's operating points read off the exact ROC curve (positive = spam),
    in %: for each ham loss ``h`` the smallest spam miss of any threshold whose ham loss is at
    most ``h`` ("spam miss % at ham loss h %"), and for each spam miss ``s`` the smallest ham
    loss of any threshold whose spam miss is at most ``s`` ("ham loss % at spam miss s %");
    with "1-ROCA %" = 100 · (1 − AUC). A point is a real cutoff on the scores (no
    interpolation between cutoffs), so an operator who sets that cutoff gets those rates on
    this stream. NaN when a class is absent.

    Examples
    --------
    >>> points = operating_points([True, True, False, False, False],
    ...                           [0.9, 0.2, 0.8, 0.1, 0.3], ham_losses=[0, 50],
    ...                           spam_misses=[50])
    >>> {k: round(v, 2) for k, v in points.items()}  # doctest: +NORMALIZE_WHITESPACE
    {'spam miss % at ham loss 0 %': 50.0, 'spam miss % at ham loss 50 %': 50.0,
     'ham loss % at spam miss 50 %': 0.0, '1-ROCA %': 33.33}

    """
    fpr, tpr, _ = roc_curve(positive, scores)
    miss = 1.0 - tpr
    out: dict[str, float] = {}
    # a relative tolerance: a rate of k/n equal to the target must count as "at most" it
    for h in ham_losses:
        allowed = fpr <= h / 100 * (1 + 1e-9)
        out[f"spam miss % at ham loss {h:g} %"] = 100 * float(miss[allowed].min()) \
            if not np.isnan(fpr).any() else float("nan")
    for s in spam_misses:
        allowed = miss <= s / 100 * (1 + 1e-9)
        out[f"ham loss % at spam miss {s:g} %"] = 100 * float(fpr[allowed].min()) \
            if not np.isnan(tpr).any() else float("nan")
    out["1-ROCA %"] = 100 * (1 - exact_auc(positive, scores))
    return out


def misclassification_rates(positive: Sequence[bool] | np.ndarray,
                            called_positive: Sequence[bool] | np.ndarray
                            ) -> tuple[float, float]:
    """The TREC spam track's error rates, in %: ham misclassification = 100 · #(negatives
    called positive) / #negatives (ham called spam) and spam misclassification = 100 ·
    #(positives not called positive) / #positives (spam called ham); NaN when a class is
    absent.

    Examples
    --------
    >>> misclassification_rates([True, True, False, False, False, False],
    ...                         [True, False, True, False, False, False])
    (25.0, 50.0)

    """
    positive = np.asarray(positive, dtype=bool)
    called = np.asarray(called_positive, dtype=bool)
    if positive.shape != called.shape:
        raise ValueError(f"{len(positive)} truths but {len(called)} decisions")
    n_pos, n_neg = int(positive.sum()), int((~positive).sum())
    ham = 100.0 * float((called & ~positive).sum()) / n_neg if n_neg else float("nan")
    spam = 100.0 * float((~called & positive).sum()) / n_pos if n_pos else float("nan")
    return ham, spam


def rolling_accuracy(correct: Sequence[bool] | np.ndarray, window: int, at: Sequence[int]
                     ) -> list[tuple[int, float]]:
    """Accuracy over the last ``window`` records (fewer at the start of the stream) after
    ``i`` records, for each ``i`` in ``at``: ``[(i, accuracy), ...]``.

    Examples
    --------
    >>> rolling_accuracy([True, False, True, True, True, False], window=2, at=[1, 2, 4, 6])
    [(1, 1.0), (2, 0.5), (4, 1.0), (6, 0.5)]

    """
    if isinstance(window, bool) or not isinstance(window, int | np.integer) or window < 1:
        raise ValueError(f"window must be a positive integer, got {window!r}")
    right = np.r_[0, np.cumsum(np.asarray(correct, dtype=np.int64))]
    out = []
    for i in at:
        if not 1 <= i < len(right):
            raise ValueError(f"curve point {i} is outside the {len(right) - 1} records")
        start = max(0, i - window)
        out.append((int(i), float((right[i] - right[start]) / (i - start))))
    return out


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
