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
(:class:`_SumColumns`): the same counts, registrations and rejections as encoding the records
for each model, which the other models still do (:func:`learns_counts_only`).

Pairwise models (TAN, AODE) keep pair counts of a few candidate attributes only, and states
add up only if they track the same candidates since the same points. They share them: candidate
list ``v`` (1, 2, ...) is adopted by every partition's state when that partition's state has
learned :func:`candidate_point` ``(v)`` records, a point of its own stream, so that where a state
adopts a list depends on its partition's records only (not on batching, timing or which member
owns it), and a replay after a crash adopts it at the same record. The list itself is chosen
once, by whichever partition reaches point ``v`` first, from the single-attribute counts summed
over every partition's state at that moment (:meth:`~streamnb.models.pairwise.PairwiseNaiveBayes
.choose_candidates`), and recorded (the ``propose`` callback: the service writes it to the
changelog, where the first record of each version wins); every other state, now or in a replay,
adopts the recorded list. A state that has not reached the sum's latest list yet is summed as if
it adopted it at its current offset (which adds nothing to the new pairs: exactly its
contribution until it really adopts it).

Nothing here reads Kafka or files: the service feeds records in and the persistence layer
(:mod:`streamnb.consumers.snapshots`, :mod:`streamnb.consumers.changelog`) moves states out.
"""

from __future__ import annotations

import logging
import math
import time
import zlib
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from streamnb.consumers.drift import DETECTORS, detector_state, load_detector, make_detector
from streamnb.models.aode import AODE
from streamnb.models.base import CountClassifier
from streamnb.models.pairwise import PairwiseNaiveBayes
from streamnb.models.registry import MODELS
from streamnb.models.schedule import learn_watching_drift, next_relearn, relearn_point
from streamnb.models.tan import TAN
from streamnb.stats import EncodedBatch, InvalidRecord, Schema
from streamnb.stats.encoded import Registrations
from streamnb.stats.forgetting import check_decay_factor
from streamnb.stats.schema import NOMINAL, NUMERIC, TEXT, TOKEN

__all__ = ["PartitionState", "PartitionedModel", "candidate_point", "copy_model",
           "fingerprint", "learns_counts_only", "model_factory"]

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
        return lambda: _shared(TAN(relearn_every=0, max_candidates=max_candidates))
    if name == "aode":
        return lambda: _shared(AODE(max_candidates=max_candidates, refresh_every=0))
    if name not in MODELS:
        raise ValueError(f"unknown model {name!r}; choose one of "
                         f"{sorted([*MODELS, 'tan', 'aode'])}")
    return MODELS[name]


def candidate_point(version: int, every: int) -> int:
    """The number of learned records at which a partition's state adopts candidate list
    ``version`` (1, 2, ...): the models' own schedule,
    :func:`~streamnb.models.schedule.relearn_point` (1, 2, 4, … while below ``every``, then
    every ``every`` records); ``every`` 0: only the first list, after the first record (the
    service re-learns nothing on its own, but a pairwise model needs one list).

    Examples
    --------
    >>> [candidate_point(v, 100) for v in range(1, 11)]
    [1, 2, 4, 8, 16, 32, 64, 100, 200, 300]
    >>> candidate_point(1, 0), candidate_point(2, 0) > 10**18
    (1, True)

    """
    if version < 1:
        raise ValueError(f"version must be >= 1, got {version!r}")
    if not every:
        return 1 if version == 1 else 2**62
    return relearn_point(version, every)


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


def _row(exc: InvalidRecord) -> int:
    """The batch row a model's batch error names (``InvalidRecord.row``; every batch path of
    every model sets it: tests/test_invalid_rows.py). One without is a defect of the model,
    raised rather than guessed around."""
    if exc.row is None:
        raise RuntimeError(f"a batch error that names no row: {exc}") from exc
    return exc.row


def learns_counts_only(model: CountClassifier) -> bool:
    """Whether ``model``'s ``learn_many`` is its statistics' ``update_many`` and nothing else
    (the count-only models: NaiveBayes and IndifferentNB), so that learning a batch encoded
    for another model's schema, translated to this one's (:class:`_SumColumns`), is learning
    the records. Models that keep more than counts (pair tables, reservoirs, schedules) or
    read texts (SpamFilter) learn the records themselves."""
    kind = type(model)
    return (kind.learn_many is CountClassifier.learn_many
            and kind.encode_many is CountClassifier.encode_many)


class _Unmapped(Exception):
    """The sum cannot take a state's batch as encoded: it misses an attribute or value the
    state knew before the batch, or knows an attribute as another kind (it encodes the records
    itself then, and decides what to reject)."""


class _SumColumns:
    """Where one partition state's columns and slots are in the sum, so that a batch encoded
    once for the state (``encode_many``) is also the batch the sum learns: the same cells in
    the sum's columns, and the sum's own registrations, in the order the sum would make them.

    The sum holds every attribute and value of the state (it is the sum of the states), so what
    a batch registers in the sum is a subset of what it registers in the state, in the same
    record order: the state's registrations, without those the sum has. Both schemas only grow
    while the pair lasts (what a model learned is never unregistered), so the map only grows:
    O(the batch's new columns) a batch, O(the state's columns) once per (state, sum) pair, i.e.
    after each :meth:`PartitionedModel.rebuild`, which is O(vocabulary) itself."""

    def __init__(self, state: CountClassifier, total: CountClassifier) -> None:
        self.state, self.total = state, total
        self.columns = np.zeros(64, dtype=np.int64)  # state column -> sum column (a buffer)
        self.n_columns = 0  # how many of ``columns`` are mapped
        # state slot -> sum slot, per kind of attribute with slots of its own
        self.slots: dict[int, list[int]] = {NOMINAL: [], NUMERIC: [], TEXT: []}
        self._pending: tuple[int, dict[int, list[int]]] | None = None

    @staticmethod
    def _kind_slots(schema: Schema) -> dict[int, list[int]]:
        return {NOMINAL: schema.nominal_attributes, NUMERIC: schema.numeric_attributes,
                TEXT: schema.text_attributes}

    def _attribute(self, name: Any, kind: int) -> int:
        """The sum's attribute ``name``, of kind ``kind``."""
        total = self.total.stats.schema
        a = total.attributes.get(name)
        if a is None or total.kinds[a] != kind:
            raise _Unmapped(name)
        return a

    def _reserve(self, n: int) -> None:
        if n > len(self.columns):
            grown = np.zeros(max(n, 2 * len(self.columns)), dtype=np.int64)
            grown[: self.n_columns] = self.columns[: self.n_columns]
            self.columns = grown

    def _catch_up(self) -> None:
        """Map the state's columns and slots registered since the map last grew (every one,
        for a new pair)."""
        state, total = self.state.stats.schema, self.total.stats.schema
        name, kinds = state.attributes.name, state.kinds
        n = state.n_columns
        self._reserve(n)
        for j in range(self.n_columns, n):
            a = state.column_attribute[j]
            mine = self._attribute(name(a), kinds[a])
            column = (total.slots[mine] if kinds[a] == TOKEN
                      else total.values_of(mine).get(state.column_value[j]))
            if column is None:
                raise _Unmapped(name(a))
            self.columns[j] = column
            self.n_columns = j + 1
        for kind, attributes in self._kind_slots(state).items():
            slots = self.slots[kind]
            for a in attributes[len(slots):]:
                slots.append(total.slots[self._attribute(name(a), kind)])

    def translate(self, batch: EncodedBatch) -> EncodedBatch:
        """``batch`` (the state's ``encode_many``, not learned yet) as the sum's
        ``encode_many`` of the same records would give it, to learn into the sum once the state
        learned ``batch``; then :meth:`commit`. Raises :class:`_Unmapped` if the sum cannot
        take it so."""
        state, total = self.state.stats.schema, self.total.stats.schema
        if batch.schema_version != state.version or batch.registrations is None:
            raise ValueError("a batch to translate comes from the state's encode_many, "
                             "before the state learns anything else")
        self._catch_up()
        first_attribute, first_column = state.n_attributes, state.n_columns
        new_attributes, new_columns = batch.registrations
        # the sum's attribute of each of the state's new ones (past the sum's for one new to it)
        known, kinds, places = total.attributes.get, total.kinds, total.slots
        n_attributes, n_columns = total.n_attributes, total.n_columns
        where: list[int] = []
        added: list[tuple[Any, int]] = []
        counts = {kind: len(a) for kind, a in self._kind_slots(total).items()}
        slots = {kind: list(s) for kind, s in self.slots.items()}
        for name, kind in new_attributes:
            mine = known(name)
            if mine is None:
                mine = n_attributes + len(added)
                added.append((name, kind))
                if kind != TOKEN:
                    slots[kind].append(counts[kind])
                    counts[kind] += 1
            elif kinds[mine] != kind:
                raise _Unmapped(name)
            elif kind != TOKEN:
                slots[kind].append(places[mine])
            where.append(mine)
        # the sum's column of each of the state's new ones: the sum's registrations are the
        # state's that are new to it, in the state's order (the order of the records)
        registered: list[tuple[int, Any]] = []
        columns: list[int] = []
        for a, value in new_columns:
            if a >= first_attribute:
                kind, mine = new_attributes[a - first_attribute][1], where[a - first_attribute]
            else:
                kind = state.kinds[a]
                mine = self._attribute(state.attributes.name(a), kind)
            column = None
            if mine < n_attributes:  # an attribute the sum has: maybe the value too
                column = places[mine] if kind == TOKEN else total.values_of(mine).get(value)
            if column is None:
                column = n_columns + len(registered)
                registered.append((mine, value))
            columns.append(column)
        n = first_column + len(columns)
        self._reserve(n)
        self.columns[first_column:n] = columns  # past n_columns until commit: scratch entries
        self._pending = (n, slots)
        columns = self.columns
        arrays = {kind: np.asarray(s, dtype=np.int64) for kind, s in slots.items()}
        shared = EncodedBatch.from_arrays(
            batch.n, token_rows=batch.token_rows, token_columns=columns[batch.token_columns],
            nominal_rows=batch.nominal_rows, nominal_columns=columns[batch.nominal_columns],
            nominal_slots=arrays[NOMINAL][batch.nominal_slots],
            numeric_rows=batch.numeric_rows, numeric_slots=arrays[NUMERIC][batch.numeric_slots],
            numeric_values=batch.numeric_values,
            text_rows=batch.text_rows, text_columns=columns[batch.text_columns],
            text_counts=batch.text_counts, text_slots=arrays[TEXT][batch.text_slots])
        shared.registrations = Registrations(added, registered)
        shared.schema_version = total.version
        shared.known_columns, shared.known_numeric = total.n_columns, total.n_numeric
        return shared

    def commit(self) -> None:
        """Both models learned the translated batch: its new columns and slots are mapped."""
        if self._pending is not None:
            self.n_columns, self.slots = self._pending
            self._pending = None


class PartitionedModel:
    """Per-partition states and the model that predicts: their sum.

    Parameters
    ----------
    factory
        Makes an empty model (every state and the sum are made by it, so they merge).
    relearn_every
        Re-learn the sum's structure (models with ``relearn()``) at the points of the models'
        one schedule, :func:`~streamnb.models.schedule.relearn_point` of the sum's learned
        records (1, 2, 4, … below it, then its multiples): a batch is split there, so the points
        do not depend on how the records were batched. For models with shared candidates, the
        points of :func:`candidate_point` of each partition's records (the same schedule; the
        tree is re-learned when the sum adopts a list).
    on_relearn
        Called with the duration in seconds after each re-learning.
    half_life
        Forget exponentially (0: never): a partition's counts halve every ``half_life`` offsets
        of its log, as a staircase: at every offset that is a multiple of ``decay_every``, the
        records before it are multiplied by ``2 ** (-decay_every / half_life)``. The weight of
        a record at offset ``o`` in a state at offset ``b`` is then
        ``2 ** (-decay_every * (b // decay_every - o // decay_every) / half_life)``: a function
        of offsets only, so a restart, a rebalance or another batching gives the same state.
    decay_every
        Offsets between two decays (0: ``half_life / 16``, at least 1).
    by_time
        ``half_life`` and ``decay_every`` are milliseconds of the partition's **clock**, the
        largest record timestamp it has read (:attr:`PartitionState.clock`), instead of
        offsets: a record weighs ``2 ** (-decay_every * (C // decay_every - c // decay_every)
        / half_life)`` when the clock was ``c`` at the record and is ``C`` now. The clock is a
        function of the partition's records (their timestamps, in log order), never of the
        wall clock, so restarts and rebalances still give the same state; a record older than
        one read before it moves nothing.
    drift_detector
        ``""`` (none) or a name of :data:`streamnb.consumers.drift.DETECTORS`: each own partition's
        state predicts every record before it learns it (one by one, so that the errors are
        those of the partition's own records, whatever the batching), and a detector of that
        kind reads the errors (0 or 1). When it detects a drift, the partition's counts are
        multiplied by ``drift_decay`` and its structure re-learned (models with ``relearn``;
        shared candidates: the sum's, at the next rebuild), and ``on_drift(key, offset)`` is
        called with the offset of the record that revealed it.
    drift_decay
        The factor of a drift reaction, in (0, 1] (1: re-learn the structure only).
    propose
        Shared candidates: called as ``propose(version, names, cut)`` by the first partition
        to reach a list's point, with the list chosen now and the offsets of the states it was
        chosen from (``{"topic:partition": offset}``); returns the list to adopt, the recorded
        one if another proposal came first. Default: the proposed list (one process).

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
        if not (half_life == 0 or 1 <= half_life < math.inf):
            raise ValueError(f"half_life must be 0 (no forgetting) or a finite number of "
                             f"offsets >= 1, got {half_life!r}")
        if not (isinstance(decay_every, int) and decay_every >= 0):
            raise ValueError(f"decay_every must be a non-negative int, got {decay_every!r}")
        if drift_detector and drift_detector not in DETECTORS:
            raise ValueError(f"unknown drift detector {drift_detector!r}; choose one of "
                             f"{sorted(DETECTORS)}")
        self.drift_detector = drift_detector
        self.drift_decay = check_decay_factor(drift_decay)
        self.on_drift = on_drift
        self._detectors: dict[Key, Any] = {}  # own partitions' live detectors
        self.half_life = half_life
        self.by_time = by_time
        self.decay_every = (decay_every or max(1, int(half_life / 16))) if half_life else 0
        self.decay_factor = (check_decay_factor(2.0 ** (-self.decay_every / half_life))
                             if half_life else 1.0)
        self.factory = factory
        self.relearn_every = relearn_every
        self.on_relearn = on_relearn
        self.propose = propose or (lambda version, names, cut: names)
        self.own: dict[Key, PartitionState] = {}
        self.others: dict[Key, PartitionState] = {}
        self.model = factory()
        self.model_class = type(self.model)
        self.shared = isinstance(self.model, PairwiseNaiveBayes) and self.model.shared_candidates
        # A structure re-learned by the service for the sum (TAN's tree with shared candidates)
        # belongs to the sum only: the sum is then never a partition state's own model, so no
        # state carries a tree learned while it stood for the sum (which would depend on when
        # another partition started, i.e. on batching); a state keeps the structure it was
        # built with, and its own predictions (drift detection) are a function of its records.
        self._own_sum = self.shared and hasattr(self.model, "relearn")
        self.decisions: dict[int, list] = {}  # candidate list of each version (shared)
        self._summed: dict[Key, PartitionState] = {}  # what ``model`` is the sum of
        self._alias: PartitionState | None = None  # the state whose model *is* the sum
        self._stale = False  # an own state learned records the sum could not take
        self._cut: dict[Key, int] = {}  # own states' offsets in the middle of a batch
        self._decayed: dict[Key, int] = {}  # position an own state is decayed to, mid-batch
        # a batch is encoded once, for the state, and the sum learns it translated
        self._once = learns_counts_only(self.model)
        self._sum_columns: dict[Key, _SumColumns] = {}  # own states' maps into the sum

    # -- which states ---------------------------------------------------------------------------
    def states(self) -> dict[Key, PartitionState]:
        return {**self.others, **self.own}

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
        self._cut.pop(key, None)
        self._decayed.pop(key, None)
        self._sum_columns.pop(key, None)
        self.own[key] = state
        if self.drift_detector:
            saved = state.drift or {}
            try:
                if saved.get("detector") != self.drift_detector:
                    raise ValueError(f"a {saved.get('detector')} detector's state")
                self._detectors[key] = load_detector(self.drift_detector, saved["state"])
            except ValueError as exc:
                # none yet, another kind (a restart with another option), or fields another
                # river version does not have: a fresh detector
                if state.drift is not None:
                    log.warning("partition %s: a new %s drift detector (the saved one cannot "
                                "go on: %s)", key, self.drift_detector, exc)
                self._detectors[key] = make_detector(self.drift_detector)
                self._watched(key, state)

    def release(self, key: Key) -> PartitionState | None:
        """Stop owning ``key``; its state stays in the sum as another member's until that
        member publishes a newer one."""
        state = self.own.pop(key, None)
        self._cut.pop(key, None)
        self._decayed.pop(key, None)
        self._detectors.pop(key, None)
        self._sum_columns.pop(key, None)
        if state is not None:
            self.others[key] = state
        return state

    def offer(self, key: Key, state: PartitionState) -> bool:
        """Another member's state of ``key`` (from the changelog); kept if ``key`` is not ours
        and it is further than the one we have (at the same position it is the same state).
        Returns whether it was kept."""
        if key in self.own or not self.compatible(state):
            return False
        mine = self.others.get(key)
        if mine is not None and mine.position >= state.position:
            return False
        self.others[key] = state
        return True

    def restore_candidate(self, key: Key) -> PartitionState | None:
        """The state we hold for ``key`` (another member's, or ours before a rebalance)."""
        return self.own.get(key) or self.others.get(key)

    # -- the sum ----------------------------------------------------------------------------------
    def rebuild(self) -> None:
        """Make the predicting model the sum of all states again (with shared candidates: each
        state advanced to the latest list, as if it adopted the lists it has not reached at its
        current offset; a state past the lists known here waits for them)."""
        states = self.states()
        if self.shared:
            # the latest list the non-empty states can all be advanced to with the lists known
            versions = [s.model.candidate_version for s in states.values() if s.model.n_learned]
            top = min(versions, default=0)
            while top < max(versions, default=0) and top + 1 in self.decisions:
                top += 1
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
                total.structure_version = max(total.structure_version, previous + 1)
        self._summed = dict(states)
        self._stale = False
        self._sum_columns.clear()  # maps into the previous sum

    def _advanced(self, model: CountClassifier, version: int, copy: bool = False
                  ) -> CountClassifier:
        """``model`` having adopted the candidate lists up to ``version`` (a copy if that
        changes it, or if ``copy``)."""
        behind = self.shared and model.candidate_version < version
        if copy or behind:
            model = copy_model(model)
        while behind and model.candidate_version < version:
            model.adopt_candidates(self.decisions[model.candidate_version + 1])
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
            self._sum_columns.clear()
        elif self._alias is not None:
            self.model, self._alias = copy_model(self.model), None
            self._sum_columns.clear()

    # -- learning and prediction -----------------------------------------------------------------
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
        if not self.decay_every:
            return self._learn_batch(key, X, y, offsets)
        positions = clocks if self.by_time else offsets
        if positions is None:
            raise ValueError("learning with a half-life needs the records' "
                             + ("clocks" if self.by_time else "offsets"))
        rejected: list[tuple[int, InvalidRecord]] = []
        start = 0
        while start < len(X):
            # the records before the next decay point after positions[start] go in together
            end = start + 1
            point = (positions[start] // self.decay_every + 1) * self.decay_every
            while end < len(X) and positions[end] < point:
                end += 1
            self._decay_to(key, positions[start])
            rejected += [(start + j, exc) for j, exc in self._learn_batch(
                key, X[start:end], y[start:end], None if offsets is None else offsets[start:end])]
            start = end
        return rejected

    def advance(self, key: Key, offset: int, last: int | None = None,
                clock: int | None = None) -> None:
        """Partition ``key``'s records before ``offset`` are handled: its state moves there
        (never back), decaying at the points it passes; ``last`` is the :func:`fingerprint`
        of the record at ``offset - 1``, ``clock`` the largest timestamp read (``by_time``)."""
        state = self.own[key]
        clock = max(state.clock, clock or 0)
        if self.decay_every:
            self._decay_to(key, clock if self.by_time else offset)
            self._decayed.pop(key, None)
        if offset > state.offset:
            state.offset, state.last, state.clock = offset, last, clock

    def _decay_to(self, key: Key, offset: int) -> None:
        """Apply the decays of the points in ``(decayed, offset]`` to ``key``'s state. One
        ``decay`` per point, never ``factor ** n``: the last bits of the counts must not depend
        on how many points one batch happened to pass."""
        state = self.own[key]
        done = self._decayed.get(key, state.clock if self.by_time else state.offset)
        if offset <= done:
            return
        self._decayed[key] = offset
        if not state.model.n_learned:
            return
        points = offset // self.decay_every - done // self.decay_every
        for _ in range(points):
            state.model.decay(self.decay_factor)
        if points and state.model is not self.model:
            self._stale = True  # the sum holds the undecayed counts: re-summed later

    def _learn_batch(self, key: Key, X: Sequence[dict], y: Sequence[Any],
                     offsets: Sequence[int] | None) -> list[tuple[int, InvalidRecord]]:
        """:meth:`learn` between two decay points."""
        state = self.own[key]
        self._separate(state)
        rows = list(range(len(X)))
        rejected: list[tuple[int, InvalidRecord]] = []
        if self.shared:
            every = self.relearn_every
            due = candidate_point(state.model.candidate_version + 1, every) - state.model.n_learned
            while rows:
                part, rows = rows[:due], rows[due:]
                due -= self._learn_rows(key, X, y, part, offsets, rejected)
                if offsets is not None and part:
                    self._cut[key] = offsets[part[-1]] + 1
                if due == 0:
                    self._adopt_next(key, state)
                    due = (candidate_point(state.model.candidate_version + 1, every)
                           - state.model.n_learned)
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
        if first is state.model and self.drift_detector:
            return self._learn_watched(key, X, y, rows, offsets, rejected)
        if rest and self._once and not self.drift_detector:
            learned = self._learn_once(key, state, X, y, rows)
            if learned is not None:
                return learned
        while rows:
            xs, ys = [X[i] for i in rows], [y[i] for i in rows]
            try:
                first.learn_many(xs, ys)
            except InvalidRecord as exc:
                row = _row(exc)
                rejected.append((rows[row], exc))
                rows = rows[:row] + rows[row + 1:]
                continue
            for model in rest:
                if model is state.model and self.drift_detector:
                    self._learn_watched(key, X, y, rows, offsets, [])
                else:
                    model.learn_many(xs, ys)
            return len(rows)
        return 0

    def _learn_once(self, key: Key, state: PartitionState, X: Sequence[dict],
                    y: Sequence[Any], rows: list[int]) -> int | None:
        """Learn ``rows`` into the state and the sum with one encoding of the records (the
        state's, translated to the sum's columns: :class:`_SumColumns`); how many learned.
        ``None``, with nothing learned, when a row is invalid or the sum cannot take the
        state's encoding: the caller then learns the records into each model, the sum first
        (which decides what to reject, as it always has)."""
        sums = self._sum_columns.get(key)
        if sums is None or sums.state is not state.model or sums.total is not self.model:
            sums = self._sum_columns[key] = _SumColumns(state.model, self.model)
        xs, ys = [X[i] for i in rows], [y[i] for i in rows]
        try:
            batch = state.model.encode_many(xs)
            shared = sums.translate(batch)
            state.model.learn_many(batch, ys)  # a bad label raises before anything changes
        except (InvalidRecord, _Unmapped):
            return None
        self.model.learn_many(shared, ys)
        sums.commit()
        return len(rows)

    def _learn_watched(self, key: Key, X: Sequence[dict], y: Sequence[Any], rows: list[int],
                       offsets: Sequence[int] | None,
                       rejected: list[tuple[int, InvalidRecord]]) -> int:
        """Learn ``rows`` into partition ``key``'s state one by one, each predicted first and
        its error given to the drift detector; how many learned."""
        state, detector = self.own[key], self._detectors[key]
        learned = 0
        for i in rows:
            try:
                drifted = learn_watching_drift(state.model, detector, X[i], y[i],
                                               lambda i=i: state.model.learn_one(X[i], y[i]))
            except InvalidRecord as exc:
                rejected.append((i, exc))
                continue
            learned += 1
            if drifted:
                self._react(key, state, None if offsets is None else offsets[i])
        self._watched(key, state)
        return learned

    def _watched(self, key: Key, state: PartitionState) -> None:
        state.drift = {"detector": self.drift_detector,
                       "state": detector_state(self._detectors[key])}

    def _react(self, key: Key, state: PartitionState, offset: int | None) -> None:
        """A drift in ``key``'s records: forget harder, re-learn the structure."""
        if self.drift_decay < 1:
            state.model.decay(self.drift_decay)
        if not self.shared and hasattr(state.model, "relearn"):
            state.model.relearn()
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
        names = self.decisions.get(version)
        if names is None:
            stats, cut = self._summed_stats()
            names = list(self.propose(version, state.model.choose_candidates(stats), cut))
            self.decisions[version] = names
        follow = state.model is not self.model and not self._stale and (
            self.model.candidate_version == version - 1)
        state.model.adopt_candidates(names)
        if follow:
            self.model.adopt_candidates(names)
        if (follow or state.model is self.model) and hasattr(self.model, "relearn"):
            self._relearn()

    def _summed_stats(self) -> tuple[Any, dict[str, int]]:
        """The single-attribute counts of every state now, summed, and the offsets they
        reflect (an own state's in the middle of a batch: past its last learned record)."""
        states = {k: s for k, s in self.states().items() if s.model.n_learned}
        total = None
        for key in sorted(states, key=str):
            stats = states[key].model.stats
            total = stats.copy() if total is None else total.merge(stats)
        cut = {f"{k[0]}:{k[1]}" if isinstance(k, tuple) else str(k):
               max(s.offset, self._cut.get(k, 0)) for k, s in sorted(states.items(), key=str)}
        return total, cut

    def _relearn(self) -> None:
        start = time.perf_counter()
        self.model.relearn()
        if self.on_relearn is not None:
            self.on_relearn(time.perf_counter() - start)

    def predict_proba(self, X: Sequence[dict]
                      ) -> tuple[np.ndarray, list, list[int], list[tuple[int, InvalidRecord]]]:
        """Class probabilities of ``X`` by the sum: ``(proba, classes, rows, rejected)``, with
        ``proba[j]`` the row of ``X[rows[j]]`` and the records the model rejects left out."""
        return self.classify(X)[:4]

    @property
    def reads_token_sets(self) -> bool:
        """Whether the model takes a text message as its token set (:class:`~streamnb.SpamFilter`:
        no ``{token: True}`` dict built for it and read back into a set, twice a message)."""
        return self.model.reads_token_sets

    @property
    def scored(self) -> bool:
        """Whether the model also gives a score (``score_many``: the spam log-odds of
        :class:`~streamnb.SpamFilter`), published beside the probabilities."""
        return callable(getattr(self.model, "score_many", None))

    def classify(self, X: Sequence[dict]) -> tuple[np.ndarray, list, list[int],
                                                   list[tuple[int, InvalidRecord]],
                                                   np.ndarray | None]:
        """:meth:`predict_proba` and the model's scores of the same rows (``score_many``;
        None for a model without): ``(proba, classes, rows, rejected, scores)``.

        A model with ``proba_of_scores`` (:class:`~streamnb.SpamFilter`) is scored once: its
        probabilities are read from those scores by the model itself (what its
        ``predict_proba_many`` gives), which halves its classification cost."""
        rows = list(range(len(X)))
        rejected: list[tuple[int, InvalidRecord]] = []
        model = self.model
        proba_of_scores = getattr(model, "proba_of_scores", None)
        while rows:
            batch = [X[i] for i in rows]
            try:
                if proba_of_scores is not None:
                    scores = np.asarray(model.score_many(batch), dtype=np.float64)
                    proba, classes = proba_of_scores(scores)
                    return proba, classes, rows, rejected, scores
                frame = model.predict_proba_many(batch)
                scores = (np.asarray(model.score_many(batch), dtype=np.float64)
                          if self.scored else None)
            except InvalidRecord as exc:
                row = _row(exc)
                rejected.append((rows[row], exc))
                rows = rows[:row] + rows[row + 1:]
                continue
            return frame.to_numpy(dtype=np.float64), list(frame.columns), rows, rejected, scores
        return np.zeros((0, 0)), [], [], rejected, np.zeros(0) if self.scored else None
