"""Classifying a batch of records with one model, the records it rejects left out (the service
dead-letters them) and the others classified all the same."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from streamnb.stats import InvalidRecord

__all__ = ["classify", "rejected_row", "scores_of"]


def rejected_row(exc: InvalidRecord) -> int:
    """The batch row a model's batch error names (``InvalidRecord.row``; every batch path of
    every model sets it: tests/test_invalid_rows.py). One without is a defect of the model,
    raised rather than guessed around."""
    if exc.row is None:
        raise RuntimeError(f"a batch error that names no row: {exc}") from exc
    return exc.row


def scores_of(model: Any) -> bool:
    """Whether ``model`` also gives a score (``score_many``: the spam log-odds of
    :class:`~streamnb.SpamFilter`), published beside the probabilities."""
    return callable(getattr(model, "score_many", None))


def classify(model: Any, X: Sequence[dict]) -> tuple[np.ndarray, list, list[int],
                                                     list[tuple[int, InvalidRecord]],
                                                     np.ndarray | None]:
    """Class probabilities of ``X`` by ``model`` and its scores of the same rows
    (``score_many``; None for a model without): ``(proba, classes, rows, rejected, scores)``,
    with ``proba[j]`` the row of ``X[rows[j]]`` and the records the model rejects left out as
    ``(index, error)``.

    A model with ``proba_of_scores`` (:class:`~streamnb.SpamFilter`) is scored once: its
    probabilities are read from those scores by the model itself (what its
    ``predict_proba_many`` gives), which halves its classification cost."""
    rows = list(range(len(X)))
    rejected: list[tuple[int, InvalidRecord]] = []
    scored = scores_of(model)
    proba_of_scores = getattr(model, "proba_of_scores", None)
    while rows:
        batch = [X[i] for i in rows]
        try:
            if proba_of_scores is not None:
                scores = np.asarray(model.score_many(batch), dtype=np.float64)
                proba, classes = proba_of_scores(scores)
                return proba, classes, rows, rejected, scores
            frame = model.predict_proba_many(batch)
            scores = np.asarray(model.score_many(batch), dtype=np.float64) if scored else None
        except InvalidRecord as exc:
            row = rejected_row(exc)
            rejected.append((rows[row], exc))
            rows = rows[:row] + rows[row + 1:]
            continue
        return frame.to_numpy(dtype=np.float64), list(frame.columns), rows, rejected, scores
    return np.zeros((0, 0)), [], [], rejected, np.zeros(0) if scored else None
