"""Shared candidate lists of the service's pairwise models (TAN, AODE).

Pairwise models keep pair counts of a few candidate attributes only, and states add up only if
they track the same candidates since the same points. They share them: candidate list ``v``
(1, 2, ...) is adopted by every partition's state when that partition's state has learned
:func:`candidate_point` ``(v)`` records, a point of its own stream, so that where a state
adopts a list depends on its partition's records only (not on batching, timing or which member
owns it), and a replay after a crash adopts it at the same record. The list itself is chosen
once, by whichever partition reaches point ``v`` first, from the single-attribute counts summed
over every partition's state at that moment (:meth:`~streamnb.models.pairwise.PairwiseNaiveBayes
.choose_candidates`), and recorded (the ``propose`` callback: the service writes it to the
changelog, where the first record of each version wins); every other state, now or in a replay,
adopts the recorded list. A state that has not reached the sum's latest list yet is summed as if
it adopted it at its current offset (which adds nothing to the new pairs: exactly its
contribution until it really adopts it).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import Any

from streamnb.models.base import CountClassifier
from streamnb.models.schedule import relearn_point

__all__ = ["SharedCandidates", "candidate_point"]

Key = Hashable  # (topic, partition)


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


class SharedCandidates:
    """The recorded candidate lists, and where the own states stand in a batch.

    Parameters
    ----------
    every
        The schedule's period (:func:`candidate_point`).
    propose
        Called as ``propose(version, names, cut)`` by the first partition to reach a list's
        point, with the list chosen now and the offsets of the states it was chosen from
        (``{"topic:partition": offset}``); returns the list to adopt, the recorded one if
        another proposal came first. Default: the proposed list (one process).

    Attributes
    ----------
    decisions : dict
        The candidate list of each version recorded so far.

    """

    def __init__(self, every: int = 0,
                 propose: Callable[[int, list, dict[str, int]], list] | None = None) -> None:
        self.every = every
        self.propose = propose or (lambda version, names, cut: names)
        self.decisions: dict[int, list] = {}
        self._cut: dict[Key, int] = {}  # own states' offsets in the middle of a batch

    def due(self, model: CountClassifier) -> int:
        """Records ``model`` learns before it adopts its next list."""
        return candidate_point(model.candidate_version + 1, self.every) - model.n_learned

    def cut(self, key: Key, offset: int | None = None) -> None:
        """``key``'s state learned the records before ``offset`` of its batch (``None``: it
        moved past the batch, or left this member)."""
        if offset is None:
            self._cut.pop(key, None)
        else:
            self._cut[key] = offset

    def latest(self, versions: list[int]) -> int:
        """The latest list states at ``versions`` can all be advanced to with the lists
        recorded here."""
        top = min(versions, default=0)
        while top < max(versions, default=0) and top + 1 in self.decisions:
            top += 1
        return top

    def adopt_up_to(self, model: CountClassifier, version: int) -> None:
        """Have ``model`` adopt the recorded lists up to ``version``."""
        while model.candidate_version < version:
            model.adopt_candidates(self.decisions[model.candidate_version + 1])

    def decide(self, version: int, model: CountClassifier, states: Mapping[Key, Any]) -> list:
        """List ``version``: the recorded one, or (reached first here) chosen by ``model``
        from the counts of every state of ``states`` summed now, proposed and recorded."""
        names = self.decisions.get(version)
        if names is None:
            stats, cut = self._summed_stats(states)
            names = list(self.propose(version, model.choose_candidates(stats), cut))
            self.decisions[version] = names
        return names

    def _summed_stats(self, states: Mapping[Key, Any]) -> tuple[Any, dict[str, int]]:
        """The single-attribute counts of ``states`` now, summed, and the offsets they
        reflect (an own state's in the middle of a batch: past its last learned record)."""
        states = {k: s for k, s in states.items() if s.model.n_learned}
        total = None
        for key in sorted(states, key=str):
            stats = states[key].model.stats
            total = stats.copy() if total is None else total.merge(stats)
        cut = {f"{k[0]}:{k[1]}" if isinstance(k, tuple) else str(k):
               max(s.offset, self._cut.get(k, 0)) for k, s in sorted(states.items(), key=str)}
        return total, cut
