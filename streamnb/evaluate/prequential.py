"""Prequential (test-then-train) evaluation with a learning curve."""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from streamnb.evaluate.metrics import confusion_matrix, exact_auc

__all__ = ["PrequentialResult", "prequential"]


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

    @property
    def n(self) -> int:
        return len(self.labels)

    def accuracy(self) -> float:
        return float(np.mean([t == p for t, p in zip(self.labels, self.predicted, strict=True)]))

    def auc(self) -> float:
        return exact_auc([t == self.positive for t in self.labels], self.score)

    def _known_log_p_true(self) -> np.ndarray:
        return np.asarray(self.log_p_true)[np.asarray(self.known, dtype=bool)]

    def log_score(self) -> float:
        """LogScore Σ −log P(true class) over the records whose class the model had already
        seen (a class that has never appeared cannot be given probability; those few records
        are left out)."""
        return float(-self._known_log_p_true().sum())

    def log_loss(self) -> float:
        """Mean −log P(true class), each term capped at −log 1e-15 (scikit-learn's clipping)."""
        return float(np.minimum(-self._known_log_p_true(), -math.log(1e-15)).mean())

    def confusion(self) -> tuple[list, np.ndarray]:
        return confusion_matrix(self.labels, self.predicted)

    def summary(self) -> dict[str, Any]:
        return {"records": self.n, "accuracy": self.accuracy(), "auc": self.auc(),
                "log_score": self.log_score(), "log_loss": self.log_loss()}


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
                every: int = 100, progress: Callable[[int], None] | None = None
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

    Examples
    --------
    >>> from streamnb import IndifferentNB
    >>> stream = [({"w": True}, "spam"), ({"v": True}, "ham")] * 20
    >>> r = prequential(IndifferentNB(), stream, positive="spam", every=10)
    >>> r.n, round(r.accuracy(), 3), r.curve[-1][0]
    (40, 0.95, 40)

    """
    result = PrequentialResult(positive=positive)
    correct = 0
    in_logs = hasattr(model, "predict_log_proba_one")
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
        model.learn_one(x, y)
        if i % every == 0:
            result.curve.append((i, correct / i))
        if progress is not None:
            progress(i)
    if result.n and (not result.curve or result.curve[-1][0] != result.n):
        result.curve.append((result.n, correct / result.n))
    if any(math.isnan(v) for v in result.log_p_true):  # a model bug must not pass as a score
        raise ValueError("the model returned NaN probabilities")
    return result
