"""The model part of the service: one state per input partition, and their sum.

A partition's state is a model that has learned exactly the labelled records of that partition
before its ``offset``, so a (state, offset) pair is valid whoever computed it and whenever: a
snapshot, a changelog record or a live state are interchangeable, and restoring the one with the
highest offset only saves re-reading. The model that predicts is the sum of every partition's
state (``merge``; counts add), the partitions this member owns (live) and the others' (as last
published on the changelog).

Each learned batch goes into its partition's state and into the sum, so the sum stays current
without re-adding; it is rebuilt from the states only when a state enters from outside (a
restore, another member's newer changelog record). With a single non-empty state the sum *is*
that state's model, and a batch is learned once.

Nothing here reads Kafka or files: the service feeds records in and the persistence layer
(:mod:`consumers.snapshots`, :mod:`consumers.changelog`) moves states out.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from streamnb.models.aode import AODE
from streamnb.models.base import CountClassifier
from streamnb.models.registry import MODELS
from streamnb.models.tan import TAN
from streamnb.stats import InvalidRecord

__all__ = ["PartitionState", "PartitionedModel", "copy_model", "model_factory"]

Key = Hashable  # (topic, partition)


def model_factory(name: str, max_candidates: int = 100) -> Callable[[], CountClassifier]:
    """A factory of fresh models for the service: the registry's names, plus ``"tan"`` and
    ``"aode"``. TAN is built with ``relearn_every=0``: the service drives re-learning (every
    partition state must be mergeable with every other, so all are built alike)."""
    if name == "tan":
        return lambda: TAN(relearn_every=0, max_candidates=max_candidates)
    if name == "aode":
        return lambda: AODE(max_candidates=max_candidates)
    if name not in MODELS:
        raise ValueError(f"unknown model {name!r}; choose one of "
                         f"{sorted([*MODELS, 'tan', 'aode'])}")
    return MODELS[name]


def copy_model(model: CountClassifier) -> CountClassifier:
    """An independent copy, through the model's own array state (no pickle)."""
    header, arrays = model.to_state()
    return CountClassifier.from_state(header, {k: np.array(v) for k, v in arrays.items()})


@dataclass
class PartitionState:
    """A model of one partition's labelled records before ``offset`` (the next to read)."""

    model: CountClassifier
    offset: int


def _row(exc: InvalidRecord) -> int | None:
    """The batch row an :class:`InvalidRecord` names ("row 17"), if it names one."""
    where = str(exc.record)
    if where.startswith("row "):
        tail = where[4:]
        if tail.isdigit():
            return int(tail)
    return None


class PartitionedModel:
    """Per-partition states and the model that predicts: their sum.

    Parameters
    ----------
    factory
        Makes an empty model (every state and the sum are made by it, so they merge).
    relearn_every
        Re-learn the sum's structure (models with ``relearn()``) after every this many learned
        records, at exact multiples: a batch is split there, so the points do not depend on
        how the records were batched.
    on_relearn
        Called with the duration in seconds after each re-learning.

    Examples
    --------
    >>> from streamnb import IndifferentNB
    >>> pm = PartitionedModel(IndifferentNB)
    >>> pm.take(("t", 0), PartitionState(IndifferentNB(), 0))
    >>> pm.take(("t", 1), PartitionState(IndifferentNB(), 0))
    >>> pm.rebuild()
    >>> pm.learn(("t", 0), [{"w": True}, {"v": True}], ["spam", "ham"])
    []
    >>> pm.learn(("t", 1), [{"w": True}, {"w": "x"}], ["spam", "spam"])  # "w" is a token
    [(1, InvalidRecord(...))]
    >>> pm.model.n_learned, pm.own[("t", 0)].model.n_learned, pm.own[("t", 1)].model.n_learned
    (3, 2, 1)

    """

    def __init__(self, factory: Callable[[], CountClassifier], relearn_every: int = 0,
                 on_relearn: Callable[[float], None] | None = None) -> None:
        if not (isinstance(relearn_every, int) and relearn_every >= 0):
            raise ValueError(f"relearn_every must be a non-negative int, got {relearn_every!r}")
        self.factory = factory
        self.relearn_every = relearn_every
        self.on_relearn = on_relearn
        self.own: dict[Key, PartitionState] = {}
        self.others: dict[Key, PartitionState] = {}
        self.model = factory()
        self.model_class = type(self.model)
        self._summed: dict[Key, PartitionState] = {}  # what ``model`` is the sum of
        self._alias: PartitionState | None = None  # the state whose model *is* the sum

    # -- which states ---------------------------------------------------------------------------
    def states(self) -> dict[Key, PartitionState]:
        return {**self.others, **self.own}

    @property
    def dirty(self) -> bool:
        """True when the sum misses a state that entered from outside."""
        states = self.states()
        return states.keys() != self._summed.keys() or any(
            self._summed[k] is not s for k, s in states.items())

    def compatible(self, state: PartitionState) -> bool:
        """Whether ``state`` holds the model this service runs (a snapshot or changelog
        written with another ``--model`` does not)."""
        return type(state.model) is self.model_class

    def take(self, key: Key, state: PartitionState) -> None:
        """Own partition ``key`` from now on, starting from ``state``."""
        if not self.compatible(state):
            raise ValueError(f"the state of {key} holds a {type(state.model).__name__}, this "
                             f"service runs a {self.model_class.__name__}")
        self.others.pop(key, None)
        self.own[key] = state

    def release(self, key: Key) -> PartitionState | None:
        """Stop owning ``key``; its state stays in the sum as another member's until that
        member publishes a newer one."""
        state = self.own.pop(key, None)
        if state is not None:
            self.others[key] = state
        return state

    def offer(self, key: Key, state: PartitionState) -> bool:
        """Another member's state of ``key`` (from the changelog); kept if ``key`` is not ours
        and it is further than the one we have (at the same offset it is the same state).
        Returns whether it was kept."""
        if key in self.own or not self.compatible(state):
            return False
        mine = self.others.get(key)
        if mine is not None and mine.offset >= state.offset:
            return False
        self.others[key] = state
        return True

    def restore_candidate(self, key: Key) -> PartitionState | None:
        """The state we hold for ``key`` (another member's, or ours before a rebalance)."""
        return self.own.get(key) or self.others.get(key)

    # -- the sum ----------------------------------------------------------------------------------
    def rebuild(self) -> None:
        """Make the predicting model the sum of all states again."""
        states = self.states()
        nonempty = [s for s in states.values() if s.model.n_learned]
        if not nonempty:
            self.model, self._alias = self.factory(), None
        elif len(nonempty) == 1:
            self.model, self._alias = nonempty[0].model, nonempty[0]
        else:
            total = copy_model(nonempty[0].model)
            for s in nonempty[1:]:
                try:
                    total.merge(s.model)
                except ValueError as exc:
                    raise ValueError(
                        f"the partition states of this {type(total).__name__} cannot be summed "
                        f"exactly ({exc}); pairwise models (tan, aode) need every attribute "
                        "among their candidates (max-candidates) to scale out, or a "
                        "single-partition input") from exc
            self.model, self._alias = total, None
        self._summed = dict(states)

    def _separate(self, state: PartitionState) -> None:
        """Before learning ``state``'s records: the sum may be ``state``'s own model when every
        other state is empty, and must not be another state's model."""
        if self._alias is state:
            return
        if not self.dirty and all(s is state or not s.model.n_learned
                                  for s in self.states().values()):
            self.model, self._alias = state.model, state
        elif self._alias is not None:
            self.model, self._alias = copy_model(self.model), None

    # -- learning and prediction -----------------------------------------------------------------
    def learn(self, key: Key, X: Sequence[dict], y: Sequence[Any]
              ) -> list[tuple[int, InvalidRecord]]:
        """Learn the labelled records ``X, y`` of partition ``key`` into the partition's state
        and the sum (the caller advances the state's ``offset`` past the whole batch). Records
        the model rejects are left out and returned as ``(index, error)``; nothing of them is
        counted."""
        state = self.own[key]
        self._separate(state)
        rows = list(range(len(X)))
        rejected: list[tuple[int, InvalidRecord]] = []
        if self.relearn_every and hasattr(self.model, "relearn"):
            due = self.relearn_every - self.model.n_learned % self.relearn_every
            while rows:
                part, rows = rows[:due], rows[due:]
                accepted = self._learn_rows(state, X, y, part, rejected)
                due -= accepted
                if due == 0:
                    self._relearn()
                    due = self.relearn_every
        else:
            self._learn_rows(state, X, y, rows, rejected)
        return rejected

    def _learn_rows(self, state: PartitionState, X: Sequence[dict], y: Sequence[Any],
                    rows: list[int], rejected: list[tuple[int, InvalidRecord]]) -> int:
        """Learn ``rows`` of the batch, dropping the rows the model rejects; how many learned."""
        while rows:
            xs, ys = [X[i] for i in rows], [y[i] for i in rows]
            try:
                self.model.learn_many(xs, ys)  # first the sum: a rejection leaves it unchanged
            except InvalidRecord as exc:
                row = _row(exc)
                if row is None:  # the error names no row: learn one by one to find it
                    return self._learn_one_by_one(state, X, y, rows, rejected)
                rejected.append((rows[row], exc))
                rows = rows[:row] + rows[row + 1:]
                continue
            if state.model is not self.model:
                state.model.learn_many(xs, ys)
            return len(rows)
        return 0

    def _learn_one_by_one(self, state: PartitionState, X: Sequence[dict], y: Sequence[Any],
                          rows: list[int], rejected: list[tuple[int, InvalidRecord]]) -> int:
        learned = 0
        for i in rows:
            try:
                self.model.learn_one(X[i], y[i])
            except InvalidRecord as exc:
                rejected.append((i, exc))
                continue
            if state.model is not self.model:
                state.model.learn_one(X[i], y[i])
            learned += 1
        return learned

    def _relearn(self) -> None:
        start = time.perf_counter()
        self.model.relearn()
        if self.on_relearn is not None:
            self.on_relearn(time.perf_counter() - start)

    def predict_proba(self, X: Sequence[dict]
                      ) -> tuple[np.ndarray, list, list[int], list[tuple[int, InvalidRecord]]]:
        """Class probabilities of ``X`` by the sum: ``(proba, classes, rows, rejected)``, with
        ``proba[j]`` the row of ``X[rows[j]]`` and the records the model rejects left out."""
        rows = list(range(len(X)))
        rejected: list[tuple[int, InvalidRecord]] = []
        while rows:
            try:
                frame = self.model.predict_proba_many([X[i] for i in rows])
            except InvalidRecord as exc:
                row = _row(exc)
                if row is None:
                    raise
                rejected.append((rows[row], exc))
                rows = rows[:row] + rows[row + 1:]
                continue
            return frame.to_numpy(dtype=np.float64), list(frame.columns), rows, rejected
        return np.zeros((0, 0)), [], [], rejected
