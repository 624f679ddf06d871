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
that state's model, and a batch is learned once. Otherwise a count-only model's batch is
encoded once, for the state, and the sum learns that encoding translated to its own columns
(:mod:`.translation`).

Pairwise models (TAN, AODE) share their candidate lists across partitions
(:mod:`.candidates`); forgetting (:mod:`streamnb.stats.forgetting`) and drift detection
(:mod:`.drift`) act on each own partition's state, and the sum follows.

Nothing here reads Kafka or files: the service feeds records in and the persistence layer
(:mod:`streamnb.consumers.snapshots`, :mod:`streamnb.consumers.changelog`) moves states out.
"""

from __future__ import annotations

import logging
import time
import zlib
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from streamnb.consumers.candidates import SharedCandidates
from streamnb.consumers.classify import classify, rejected_row, scores_of
from streamnb.consumers.drift import DriftWatch
from streamnb.consumers.ownership import PartitionStates
from streamnb.consumers.translation import OneEncoding, learns_counts_only
from streamnb.models.aode import AODE
from streamnb.models.base import CountClassifier
from streamnb.models.pairwise import PairwiseNaiveBayes
from streamnb.models.registry import MODELS
from streamnb.models.schedule import next_relearn, react_to_drift
from streamnb.models.tan import TAN
from streamnb.stats import InvalidRecord
from streamnb.stats.forgetting import Forgetting

__all__ = ["PartitionState", "PartitionedModel", "copy_model", "fingerprint", "model_factory"]

Key = Hashable  # (topic, partition)
log = logging.getLogger("streamnb.service")


def _shared(model: PairwiseNaiveBayes) -> PairwiseNaiveBayes:
    model.share_candidates()
    return model


def model_factory(name: str, max_candidates: int = 100) -> Callable[[], CountClassifier]:
    """A factory of fresh models for the service: the registry's names, plus ``"tan"`` and
    ``"aode"``, built with shared candidates (:meth:`~streamnb.models.pairwise
    .PairwiseNaiveBayes.share_candidates`) and no re-learning of their own: the service
    chooses their candidates and re-learns TAN's tree (every partition state must be mergeable
    with every other, so all are built alike)."""
    if name == "tan":
        # spelled out, not the library's defaults: a snapshot's states must stay mergeable
        # with the ones a later version of the service makes
        return lambda: _shared(TAN(weight="cmi", estimator="indifferent", relearn_every=0,
                                   max_candidates=max_candidates))
    if name == "aode":
        return lambda: _shared(AODE(max_candidates=max_candidates, refresh_every=0))
    if name not in MODELS:
        raise ValueError(f"unknown model {name!r}; choose one of "
                         f"{sorted([*MODELS, 'tan', 'aode'])}")
    return MODELS[name]


def copy_model(model: CountClassifier) -> CountClassifier:
    """An independent copy, through the model's own array state (no pickle)."""
    header, arrays = model.to_state()
    return CountClassifier.from_state(header, {k: np.array(v) for k, v in arrays.items()})


def fingerprint(record: Any) -> int:
    """A record's identity on its log, as far as a consumer can tell: its timestamp and the
    CRC-32 of its key and value. Two logs agree at an offset when the records there have the
    same fingerprint; a re-created topic's record at the same offset almost never does (it was
    produced at another millisecond, or holds another payload). The timestamp is taken modulo
    2**31 ms (24.8 days) so that the fingerprint fits a signed 64-bit integer."""
    crc = zlib.crc32(record.value or b"", zlib.crc32(record.key or b""))
    return (max(int(record.timestamp), 0) % 2**31) << 32 | crc


@dataclass
class PartitionState:
    """A model of one partition's labelled records before ``offset`` (the next to read).

    ``epoch`` counts the times the state was moved *back* on its partition's log (the offset
    gap policies of the service, after the topic was re-created or its offsets reset): a state
    of a later epoch is newer than any of an earlier one, whatever their offsets, so a stale
    snapshot or changelog record of the old log never wins a restore. States compare by
    :attr:`position`.

    ``last`` is the :func:`fingerprint` of the record just before ``offset`` (``None`` when
    it was not read: a new state, one moved by a gap policy, or one saved by a version before
    fingerprints). The service compares it with what the broker holds there, so that a topic
    re-created and refilled past the state's offset is not taken for the log the state read.

    ``drift`` is the state of the partition's drift detector (``--drift-detector``) as plain
    data, ``{"detector": name, "state": {...}}`` (:func:`.drift.detector_state`), or ``None``:
    it travels with the state so that a restart or another member detects the same drift at the
    same record.
    """

    model: CountClassifier
    offset: int
    epoch: int = 0
    last: int | None = None
    drift: dict | None = None
    clock: int = 0  # the largest record timestamp (ms) read, for a half-life in time

    @property
    def position(self) -> tuple[int, int]:
        """``(epoch, offset)``: the furthest state is the one with the highest position."""
        return (self.epoch, self.offset)


class SummedStates(PartitionStates):
    """The partition states and the model that predicts: their sum, kept current by the
    learning of :class:`PartitionedModel` and rebuilt from the states when one enters from
    outside.

    Parameters
    ----------
    factory
        Makes an empty model (every state and the sum are made by it, so they merge).
    candidates
        The shared candidate lists (pairwise models built with shared candidates).
    on_relearn
        Called with the duration in seconds after each re-learning of the sum's structure.

    """

    def __init__(self, factory: Callable[[], CountClassifier], candidates: SharedCandidates,
                 on_relearn: Callable[[float], None] | None = None) -> None:
        self.factory = factory
        self.candidates = candidates
        self.on_relearn = on_relearn
        self.model = factory()
        super().__init__(type(self.model))
        self.shared = isinstance(self.model, PairwiseNaiveBayes) and self.model.shared_candidates
        # A structure re-learned by the service for the sum (TAN's tree with shared candidates)
        # belongs to the sum only: the sum is then never a partition state's own model, so no
        # state carries a tree learned while it stood for the sum (which would depend on when
        # another partition started, i.e. on batching); a state keeps the structure it was
        # built with, and its own predictions (drift detection) are a function of its records.
        self._own_sum = self.shared and hasattr(self.model, "relearn")
        self._summed: dict[Key, PartitionState] = {}  # what ``model`` is the sum of
        self._alias: PartitionState | None = None  # the state whose model *is* the sum
        self._stale = False  # an own state learned records the sum could not take
        # a batch is encoded once, for the state, and the sum learns it translated
        self._once = OneEncoding() if learns_counts_only(self.model) else None

    @property
    def dirty(self) -> bool:
        """True when the sum misses a state that entered from outside, or records of an own
        state that could not be learned into it directly."""
        states = self.states()
        return self._stale or states.keys() != self._summed.keys() or any(
            self._summed[k] is not s for k, s in states.items())

    def classes(self) -> set:
        """The classes of the sum, and of the states it does not hold yet."""
        out = set(self.model.classes)
        if self.dirty:
            for state in self.states().values():
                out.update(state.model.classes)
        return out

    def rebuild(self) -> None:
        """Make the predicting model the sum of all states again (with shared candidates: each
        state advanced to the latest list, as if it adopted the lists it has not reached at its
        current offset; a state past the lists known here waits for them)."""
        states = self.states()
        if self.shared:
            # the latest list the non-empty states can all be advanced to with the lists known
            top = self.candidates.latest([s.model.candidate_version for s in states.values()
                                          if s.model.n_learned])
            states = {k: s for k, s in states.items() if s.model.candidate_version <= top}
        nonempty = [states[k] for k in sorted(states, key=str) if states[k].model.n_learned]
        previous = getattr(self.model, "structure_version", 0)
        if not nonempty:
            self.model, self._alias = self.factory(), None
        elif len(nonempty) == 1 and not self._own_sum:
            self.model, self._alias = nonempty[0].model, nonempty[0]
        else:
            latest = max(s.model.candidate_version for s in nonempty) if self.shared else 0
            total = self._advanced(nonempty[0].model, latest, copy=True)
            for s in nonempty[1:]:
                try:
                    total.merge(self._advanced(s.model, latest))
                except ValueError as exc:
                    raise ValueError(
                        f"the partition states of this {type(total).__name__} cannot be summed "
                        f"exactly ({exc}); pairwise models (tan, aode) scale out with shared "
                        "candidates (streamnb.consumers.state.model_factory)") from exc
            self.model, self._alias = total, None
            if self.shared and hasattr(total, "relearn"):
                self._relearn()
                if hasattr(total, "structure_version"):  # a tree (TAN), not AODE's intervals
                    total.structure_version = max(total.structure_version, previous + 1)
        self._summed = dict(states)
        self._stale = False
        self._forget_maps()  # maps into the previous sum

    def _forget_maps(self) -> None:
        if self._once is not None:
            self._once.forget()

    def _advanced(self, model: CountClassifier, version: int, copy: bool = False
                  ) -> CountClassifier:
        """``model`` having adopted the candidate lists up to ``version`` (a copy if that
        changes it, or if ``copy``)."""
        behind = self.shared and model.candidate_version < version
        if copy or behind:
            model = copy_model(model)
        if behind:
            self.candidates.adopt_up_to(model, version)
        return model

    def _separate(self, state: PartitionState) -> None:
        """Before learning ``state``'s records: the sum may be ``state``'s own model when every
        other state is empty (not when the sum has a structure of its own: ``_own_sum``), and
        must not be another state's model."""
        if self._alias is state:
            return
        if not self._own_sum and not self.dirty and all(s is state or not s.model.n_learned
                                                        for s in self.states().values()):
            self.model, self._alias = state.model, state
            self._forget_maps()
        elif self._alias is not None:
            self.model, self._alias = copy_model(self.model), None
            self._forget_maps()

    def _relearn(self) -> None:
        start = time.perf_counter()
        self.model.relearn()
        if self.on_relearn is not None:
            self.on_relearn(time.perf_counter() - start)

    def predict_proba(self, X: Sequence[dict]
                      ) -> tuple[np.ndarray, list, list[int], list[tuple[int, InvalidRecord]]]:
        """Class probabilities of ``X`` by the sum: ``(proba, classes, rows, rejected)``, with
        ``proba[j]`` the row of ``X[rows[j]]`` and the records the model rejects left out."""
        return classify(self.model, X)[:4]

    def classify(self, X: Sequence[dict]) -> tuple[np.ndarray, list, list[int],
                                                   list[tuple[int, InvalidRecord]],
                                                   np.ndarray | None]:
        """:meth:`predict_proba` and the sum's scores of the same rows
        (:func:`~streamnb.consumers.classify.classify`)."""
        return classify(self.model, X)

    @property
    def reads_token_sets(self) -> bool:
        """Whether the model takes a text message as its token set (:class:`~streamnb.SpamFilter`:
        no ``{token: True}`` dict built for it and read back into a set, twice a message)."""
        return self.model.reads_token_sets

    @property
    def scored(self) -> bool:
        """Whether the sum also gives scores (:func:`~streamnb.consumers.classify.scores_of`)."""
        return scores_of(self.model)


class PartitionedModel(SummedStates):
    """Per-partition states (:class:`~streamnb.consumers.ownership.PartitionStates`), their
    sum (:class:`SummedStates`), and the learning of both.

    Parameters
    ----------
    factory
        Makes an empty model (every state and the sum are made by it, so they merge).
    relearn_every
        Re-learn the sum's structure (models with ``relearn()``) at the points of the models'
        one schedule, :func:`~streamnb.models.schedule.relearn_point` of the sum's learned
        records: a batch is split there, so the points do not depend on how the records were
        batched. Shared candidates: the points of
        :func:`~streamnb.consumers.candidates.candidate_point` of each partition's records.
    on_relearn
        Called with the duration in seconds after each re-learning.
    half_life, decay_every, by_time
        Forget exponentially (:class:`~streamnb.stats.forgetting.Forgetting`; ``half_life``
        0: never). With a half-life, :meth:`learn` needs the records' offsets (``by_time``:
        their clocks).
    drift_detector, drift_decay, on_drift
        ``""`` (none) or a name of :data:`streamnb.consumers.drift.DETECTORS`: each own
        partition's state watches its prequential errors
        (:class:`~streamnb.consumers.drift.DriftWatch`); at a drift its counts are multiplied
        by ``drift_decay``, its structure re-learned (models with ``relearn``; shared
        candidates: the sum's, at the next rebuild), and ``on_drift(key, offset)`` called with
        the offset of the record that revealed it.
    propose
        Shared candidates: how a candidate list is recorded
        (:class:`~streamnb.consumers.candidates.SharedCandidates`).

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
                 on_relearn: Callable[[float], None] | None = None,
                 propose: Callable[[int, list, dict[str, int]], list] | None = None,
                 half_life: float = 0.0, decay_every: int = 0, by_time: bool = False,
                 drift_detector: str = "",
                 drift_decay: float = 0.5,
                 on_drift: Callable[[Key, int | None], None] | None = None) -> None:
        if not (isinstance(relearn_every, int) and relearn_every >= 0):
            raise ValueError(f"relearn_every must be a non-negative int, got {relearn_every!r}")
        self.forgetting = Forgetting(half_life, decay_every, by_time)
        self.by_time = by_time
        self.drift = DriftWatch(drift_detector, drift_decay) if drift_detector else None
        self.on_drift = on_drift
        self.relearn_every = relearn_every
        super().__init__(factory, SharedCandidates(relearn_every, propose), on_relearn)

    def take(self, key: Key, state: PartitionState) -> None:
        super().take(key, state)
        self._forget(key)
        if self.drift is not None:
            self.drift.take(key, state)

    def release(self, key: Key) -> PartitionState | None:
        self._forget(key)
        return super().release(key)

    def _forget(self, key: Key) -> None:
        """What was kept about own partition ``key`` in the middle of a batch."""
        self.candidates.cut(key)
        self.forgetting.settled(key)
        if self.drift is not None:
            self.drift.release(key)
        if self._once is not None:
            self._once.forget(key)

    def learn(self, key: Key, X: Sequence[dict], y: Sequence[Any],
              offsets: Sequence[int] | None = None, clocks: Sequence[int] | None = None
              ) -> list[tuple[int, InvalidRecord]]:
        """Learn the labelled records ``X, y`` of partition ``key`` into the partition's state
        and the sum (the caller then moves the state past the whole batch with
        :meth:`advance`; the records' own ``offsets``, if given, tell where a shared candidate
        list was chosen). Records the model rejects are left out and returned as ``(index,
        error)``; nothing of them is counted. With a ``half_life``, ``offsets`` (``by_time``:
        ``clocks``, the partition's clock at each record) are required: the batch is split at
        the decay points between them."""
        if not self.forgetting.decay_every:
            return self._learn_batch(key, X, y, offsets)
        positions = clocks if self.by_time else offsets
        if positions is None:
            raise ValueError("learning with a half-life needs the records' "
                             + ("clocks" if self.by_time else "offsets"))
        rejected: list[tuple[int, InvalidRecord]] = []
        for start, end in self.forgetting.segments(positions):
            self._decay_to(key, positions[start])
            rejected += [(start + j, exc) for j, exc in self._learn_batch(
                key, X[start:end], y[start:end], None if offsets is None else offsets[start:end])]
        return rejected

    def advance(self, key: Key, offset: int, last: int | None = None,
                clock: int | None = None) -> None:
        """Partition ``key``'s records before ``offset`` are handled: its state moves there
        (never back), decaying at the points it passes; ``last`` is the :func:`fingerprint`
        of the record at ``offset - 1``, ``clock`` the largest timestamp read (``by_time``)."""
        state = self.own[key]
        clock = max(state.clock, clock or 0)
        if self.forgetting.decay_every:
            self._decay_to(key, clock if self.by_time else offset)
            self.forgetting.settled(key)
        if offset > state.offset:
            state.offset, state.last, state.clock = offset, last, clock

    def _decay_to(self, key: Key, position: int) -> None:
        state = self.own[key]
        if (self.forgetting.decay_to(key, state.model, state.clock if self.by_time
                                     else state.offset, position)
                and state.model is not self.model):
            self._stale = True  # the sum holds the undecayed counts: re-summed later

    def _learn_batch(self, key: Key, X: Sequence[dict], y: Sequence[Any],
                     offsets: Sequence[int] | None) -> list[tuple[int, InvalidRecord]]:
        """:meth:`learn` between two decay points."""
        state = self.own[key]
        self._separate(state)
        rows = list(range(len(X)))
        rejected: list[tuple[int, InvalidRecord]] = []
        if self.shared:
            due = self.candidates.due(state.model)
            while rows:
                part, rows = rows[:due], rows[due:]
                due -= self._learn_rows(key, X, y, part, offsets, rejected)
                if offsets is not None and part:
                    self.candidates.cut(key, offsets[part[-1]] + 1)
                if due == 0:
                    self._adopt_next(key, state)
                    due = self.candidates.due(state.model)
        elif self.relearn_every and hasattr(self.model, "relearn"):
            every = self.relearn_every
            due = next_relearn(self.model.n_learned, every) - self.model.n_learned
            while rows:
                part, rows = rows[:due], rows[due:]
                due -= self._learn_rows(key, X, y, part, offsets, rejected)
                if due == 0:
                    self._relearn()
                    due = next_relearn(self.model.n_learned, every) - self.model.n_learned
        else:
            self._learn_rows(key, X, y, rows, offsets, rejected)
        return rejected

    def _targets(self, state: PartitionState) -> list[CountClassifier]:
        """The models a batch of ``state``'s records goes into: the sum first (a rejection
        leaves it unchanged) unless it cannot take them (shared candidates: it is at another
        list, or already misses some of the state's records), then the state's model."""
        if state.model is self.model:
            return [state.model]
        if self.shared and (self._stale or self.model.candidate_version
                            != state.model.candidate_version):
            self._stale = True  # rebuilt later, from the states
            return [state.model]
        return [self.model, state.model]

    def _learn_rows(self, key: Key, X: Sequence[dict], y: Sequence[Any], rows: list[int],
                    offsets: Sequence[int] | None, rejected: list[tuple[int, InvalidRecord]]
                    ) -> int:
        """Learn ``rows`` of the batch, dropping the rows the model rejects; how many learned."""
        state = self.own[key]
        first, *rest = self._targets(state)
        if first is state.model and self.drift is not None:
            return self._learn_watched(key, X, y, rows, offsets, rejected)
        if rest and self._once is not None and self.drift is None and self._once.learn(
                key, state.model, self.model, [X[i] for i in rows], [y[i] for i in rows]):
            return len(rows)
        while rows:
            xs, ys = [X[i] for i in rows], [y[i] for i in rows]
            try:
                first.learn_many(xs, ys)
            except InvalidRecord as exc:
                row = rejected_row(exc)
                rejected.append((rows[row], exc))
                rows = rows[:row] + rows[row + 1:]
                continue
            for model in rest:
                if model is state.model and self.drift is not None:
                    self._learn_watched(key, X, y, rows, offsets, [])
                else:
                    model.learn_many(xs, ys)
            return len(rows)
        return 0

    def _learn_watched(self, key: Key, X: Sequence[dict], y: Sequence[Any], rows: list[int],
                       offsets: Sequence[int] | None,
                       rejected: list[tuple[int, InvalidRecord]]) -> int:
        """Learn ``rows`` into partition ``key``'s state, watched for drift; how many."""
        state = self.own[key]
        return self.drift.learn(key, state, X, y, rows, offsets, rejected,
                                lambda offset: self._react(key, state, offset))

    def _react(self, key: Key, state: PartitionState, offset: int | None) -> None:
        """A drift in ``key``'s records: forget harder, re-learn the structure."""
        react_to_drift(state.model, self.drift.decay, relearn=not self.shared)
        if state.model is not self.model:
            self._stale = True  # the sum holds the counts before the reaction: re-summed later
        elif self.shared and hasattr(self.model, "relearn"):
            self._relearn()
        if self.on_drift is not None:
            self.on_drift(key, offset)

    def _adopt_next(self, key: Key, state: PartitionState) -> None:
        """``state`` reached the point of its next candidate list: adopt it (choose and record
        it first if no partition reached that point before), and so does the sum if it was
        at the state's list and has every record of it."""
        version = state.model.candidate_version + 1
        names = self.candidates.decide(version, state.model, self.states())
        follow = state.model is not self.model and not self._stale and (
            self.model.candidate_version == version - 1)
        state.model.adopt_candidates(names)
        if follow:
            self.model.adopt_candidates(names)
        if (follow or state.model is self.model) and hasattr(self.model, "relearn"):
            self._relearn()
