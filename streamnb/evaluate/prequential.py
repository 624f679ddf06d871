"""Prequential (test-then-train) evaluation with a learning curve, with the TREC spam track's
feedback modes (immediate, delayed, partial) and measures (1-ROCA %, ham and spam
misclassification %)."""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from streamnb.evaluate.metrics import (
    confusion_matrix,
    exact_auc,
    log_loss,
    misclassification_rates,
    operating_points,
    roc_curve,
    rolling_accuracy,
)

__all__ = ["PartialFeedback", "PrequentialResult", "check_feedback", "prequential"]

#: ``rule(i, x, y) -> bool``: is the label of record ``i`` (0-based, stream order) learned?
FeedbackRule = Callable[[int, Any, Hashable], bool]


class PartialFeedback:
    """TREC 2007 partial feedback: the labels of a seeded random subset of the records only.

    Record ``i`` (0-based) is in the subset iff the ``i``-th number drawn by
    ``numpy.random.default_rng(seed).random()`` is below ``fraction``, so the subset of the
    first n records is ``np.random.default_rng(seed).random(n) < fraction`` whatever the
    stream's length (each record independently, its size Binomial(n, fraction)), the same for
    every model and every run with the same seed.

    Examples
    --------
    >>> rule = PartialFeedback(0.5, seed=1)
    >>> [rule(i, None, None) for i in range(6)]
    [False, False, True, False, True, True]
    >>> (np.random.default_rng(1).random(6) < 0.5).tolist()
    [False, False, True, False, True, True]

    """

    _BLOCK = 4096

    def __init__(self, fraction: float, seed: int = 0) -> None:
        check_feedback(0, fraction)
        self.fraction, self.seed = float(fraction), seed
        self._rng = np.random.default_rng(seed)
        self._draws = np.empty(0)

    def __call__(self, i: int, x: Any = None, y: Hashable = None) -> bool:
        while i >= len(self._draws):  # consecutive draws continue one stream of numbers
            self._draws = np.r_[self._draws, self._rng.random(self._BLOCK)]
        return bool(self._draws[i] < self.fraction)

    def __repr__(self) -> str:
        return f"PartialFeedback({self.fraction!r}, seed={self.seed!r})"


def check_feedback(delay: int, feedback: float | FeedbackRule | None) -> None:
    """Raise ``ValueError`` (naming the parameter, the value and what is allowed) unless
    ``delay`` is an integer ≥ 0 and ``feedback`` is None, a fraction in (0, 1] or a rule."""
    if isinstance(delay, bool) or not isinstance(delay, int | np.integer) or delay < 0:
        raise ValueError(f"delay must be an integer >= 0 (records between a prediction and "
                         f"the learning of its label), got {delay!r}")
    if feedback is None or callable(feedback):
        return
    if isinstance(feedback, bool) or not isinstance(feedback, int | float | np.floating) \
            or not 0 < feedback <= 1:
        raise ValueError(f"feedback must be a fraction in (0, 1] (the share of records whose "
                         f"label is learned) or a rule(i, x, y) -> bool, got {feedback!r}")


@dataclass
class PrequentialResult:
    """Every prediction of a prequential run, and the scores computed from them."""

    labels: list = field(default_factory=list)  # true labels, in stream order
    predicted: list = field(default_factory=list)
    log_p_true: list[float] = field(default_factory=list)  # log P(true class | x)
    known: list[bool] = field(default_factory=list)  # was the true class seen before?
    score: list[float] = field(default_factory=list)  # log-odds of ``positive``, for AUC
    positive: Hashable | None = None
    curve: list[tuple[int, float]] = field(default_factory=list)  # (records, accuracy so far)
    fed_back: list[bool] = field(default_factory=list)  # was the record's label learned?

    @property
    def n(self) -> int:
        return len(self.labels)

    def _correct(self) -> np.ndarray:
        return np.array([t == p for t, p in zip(self.labels, self.predicted, strict=True)],
                        dtype=bool)

    def _is_positive(self) -> np.ndarray:
        return np.array([t == self.positive for t in self.labels], dtype=bool)

    def accuracy(self) -> float:
        return float(np.mean(self._correct()))

    def auc(self) -> float:
        return exact_auc(self._is_positive(), self.score)

    def one_minus_roca(self) -> float:
        """The TREC spam track's 1-ROCA %: 100 · (1 − AUC) over the whole run."""
        return 100.0 * (1.0 - self.auc())

    def operating_points(self) -> dict[str, float]:
        """The TREC spam track's operating points of the run, in %: spam miss at ham loss
        0.1 / 0.5 / 1 % and ham loss at spam miss 1 / 3 / 5 %, each a real cutoff on
        :attr:`score` (:func:`~streamnb.evaluate.metrics.operating_points`)."""
        return operating_points(self._is_positive(), self.score)

    def roc_curve(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(fpr, tpr, thresholds)`` over every threshold on :attr:`score` (the log-odds of
        ``positive``): :func:`~streamnb.evaluate.metrics.roc_curve`."""
        return roc_curve(self._is_positive(), self.score)

    def called_positive(self, threshold: float | None = None) -> np.ndarray:
        """Which records were called ``positive``: by the classifier's decision (its most
        probable class) or, given a ``threshold``, where the log-odds score ≥ ``threshold``
        (the decision of the ROC curve's point at that threshold)."""
        if threshold is None:
            return np.array([p == self.positive for p in self.predicted], dtype=bool)
        return np.asarray(self.score, dtype=np.float64) >= threshold

    def misclassification(self, threshold: float | None = None) -> tuple[float, float]:
        """``(ham %, spam %)``: the share of the other classes' records called ``positive``
        and of ``positive``'s records not called so, at the classifier's decision or at a
        log-odds ``threshold`` (:meth:`called_positive`)."""
        return misclassification_rates(self._is_positive(), self.called_positive(threshold))

    def ham_misclassification(self, threshold: float | None = None) -> float:
        """Ham misclassification %: ham called spam (see :meth:`misclassification`)."""
        return self.misclassification(threshold)[0]

    def spam_misclassification(self, threshold: float | None = None) -> float:
        """Spam misclassification %: spam called ham (see :meth:`misclassification`)."""
        return self.misclassification(threshold)[1]

    def rolling_curve(self, window: int) -> list[tuple[int, float]]:
        """Accuracy over the last ``window`` records at the points of :attr:`curve` (which
        holds the cumulative accuracy)."""
        return rolling_accuracy(self._correct(), window, [i for i, _ in self.curve])

    def _known_log_p_true(self) -> np.ndarray:
        return np.asarray(self.log_p_true)[np.asarray(self.known, dtype=bool)]

    def log_score(self) -> float:
        """LogScore Σ −log P(true class) over the records whose class the model had already
        seen (a class that has never appeared cannot be given probability; those few records
        are left out)."""
        return float(-self._known_log_p_true().sum())

    def log_loss(self) -> float:
        """Mean −log P(true class), each term capped at −log 1e-15 (scikit-learn's clipping):
        :func:`~streamnb.evaluate.metrics.log_loss` over the same records as LogScore."""
        return log_loss(self._known_log_p_true())

    def confusion(self) -> tuple[list, np.ndarray]:
        return confusion_matrix(self.labels, self.predicted)

    def summary(self) -> dict[str, Any]:
        ham, spam = self.misclassification()
        return {"records": self.n, "accuracy": self.accuracy(), "auc": self.auc(),
                "log_score": self.log_score(), "log_loss": self.log_loss(),
                "one_minus_roca": self.one_minus_roca(), "ham_misclassification": ham,
                "spam_misclassification": spam, "operating_points": self.operating_points()}


def _log_odds(logs: dict[Hashable, float], positive: Hashable) -> float:
    """log P(positive) − log P(not positive), from log-probabilities (0 when undefined)."""
    if positive not in logs or len(logs) < 2:
        return 0.0
    others = [v for c, v in logs.items() if c != positive]
    top = max(others)
    if top == -math.inf:
        return math.inf
    rest = top + math.log(sum(math.exp(v - top) for v in others))
    return logs[positive] - rest


def prequential(model: Any, stream: Iterable[tuple[Any, Hashable]], positive: Hashable,
                every: int = 100, progress: Callable[[int], None] | None = None,
                delay: int = 0, feedback: float | FeedbackRule | None = None, seed: int = 0
                ) -> PrequentialResult:
    """Predict each record, then learn it; works with any river classifier.

    Parameters
    ----------
    model
        A river classifier (``predict_proba_one`` / ``learn_one``).
    stream
        ``(x, y)`` pairs in stream order.
    positive
        The class whose probability is the score for AUC (e.g. ``"spam"``).
    every
        A learning-curve point every ``every`` records.
    progress
        Called with the number of records processed, after each record.
    delay
        Delayed feedback (TREC 2007): the label of record ``i`` is learned right after record
        ``i + delay`` has been predicted, so the model learns the records in stream order,
        ``delay`` behind (0: immediately, before the next prediction). The labels still
        pending after the last prediction are learned at the end: they change no score, and
        the model ends having learned every fed-back label, as with immediate feedback.
    feedback
        Partial feedback (TREC 2007): None (every label), a fraction in (0, 1] (the seeded
        random subset :class:`PartialFeedback` ``(feedback, seed)``) or a rule
        ``rule(i, x, y) -> bool`` (``i`` 0-based). Only the chosen records' labels are ever
        learned; every record is predicted and scored. :attr:`PrequentialResult.fed_back`
        says which.
    seed
        The seed of the partial-feedback subset.

    Examples
    --------
    >>> from streamnb import IndifferentNB
    >>> stream = [({"w": True}, "spam"), ({"v": True}, "ham")] * 20
    >>> r = prequential(IndifferentNB(), stream, positive="spam", every=10)
    >>> r.n, round(r.accuracy(), 3), r.curve[-1][0]
    (40, 0.95, 40)
    >>> late = prequential(IndifferentNB(), stream, positive="spam", every=10, delay=5)
    >>> round(late.accuracy(), 3), late.misclassification()   # (ham %, spam %)
    (0.85, (0.0, 15.0))
    >>> part = prequential(IndifferentNB(), stream, positive="spam", feedback=0.25, seed=3)
    >>> sum(part.fed_back), part.n
    (10, 40)

    """
    check_feedback(delay, feedback)
    if feedback is None or feedback == 1:
        rule = None
    else:
        rule = feedback if callable(feedback) else PartialFeedback(feedback, seed)
    result = PrequentialResult(positive=positive)
    correct = 0
    in_logs = hasattr(model, "predict_log_proba_one")
    pending: deque[tuple[int, Any, Hashable]] = deque()  # labels not yet learned, in order
    for i, (x, y) in enumerate(stream, start=1):
        if in_logs:  # exact where probabilities underflow to 0 and 1
            logs = model.predict_log_proba_one(x)
        else:
            logs = {c: math.log(p) if p > 0 else -math.inf
                    for c, p in model.predict_proba_one(x).items()}
        predicted = max(logs, key=logs.__getitem__) if logs else None
        result.labels.append(y)
        result.predicted.append(predicted)
        result.known.append(y in logs)
        result.log_p_true.append(logs.get(y, -math.inf))
        result.score.append(_log_odds(logs, positive))
        correct += predicted == y
        fed = rule is None or bool(rule(i - 1, x, y))
        result.fed_back.append(fed)
        if fed:
            pending.append((i, x, y))
        while pending and pending[0][0] <= i - delay:  # record j's label comes after j + delay
            _, xj, yj = pending.popleft()
            model.learn_one(xj, yj)
        if i % every == 0:
            result.curve.append((i, correct / i))
        if progress is not None:
            progress(i)
    for _, xj, yj in pending:  # after the last prediction: no score depends on these
        model.learn_one(xj, yj)
    if result.n and (not result.curve or result.curve[-1][0] != result.n):
        result.curve.append((result.n, correct / result.n))
    if any(math.isnan(v) for v in result.log_p_true):  # a model bug must not pass as a score
        raise ValueError("the model returned NaN probabilities")
    return result
