"""Exponential forgetting, one arithmetic for the models' ``half_life`` and the service's
``--half-life``: counts halve every ``half_life`` positions, as a staircase.

A position is a count of records (a model's learned records, a partition's offsets) or a clock
(the service's ``--by-time``: a partition's largest record timestamp in milliseconds). At every
position that is a multiple of ``decay_every``, the records before it are multiplied by
``2 ** (-decay_every / half_life)``: the weight of a record at position ``p`` in a state at
position ``P`` is ``2 ** (-decay_every * (P // decay_every - p // decay_every) / half_life)``,
a function of the positions only, so a restart, a rebalance or another batching gives the same
state. Every statistic's ``decay(factor)`` accepts the factors :func:`check_decay_factor` does.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterator, Sequence
from typing import Protocol

__all__ = ["Decaying", "Forgetting", "check_decay_factor"]

Key = Hashable  # whose state: the service's (topic, partition)


def check_decay_factor(factor: float) -> float:
    """``factor`` if it is in (0, 1] (1 keeps everything), else ValueError.

    >>> check_decay_factor(0.5)
    0.5
    >>> check_decay_factor(float("nan"))
    Traceback (most recent call last):
    ...
    ValueError: decay factor must be in (0, 1], got nan
    """
    if not 0.0 < factor <= 1.0:
        raise ValueError(f"decay factor must be in (0, 1], got {factor!r}")
    return factor


class Decaying(Protocol):
    """What forgetting acts on: a model (its learned records and its ``decay``)."""

    n_learned: int

    def decay(self, factor: float) -> None: ...


class Forgetting:
    """The decay points of a half-life, and where each state is decayed to.

    Parameters
    ----------
    half_life
        Positions over which a count halves (0: never forget).
    decay_every
        Positions between two decays (0: ``half_life / 16``, at least 1).
    by_time
        Positions are a clock (milliseconds) instead of counts of records (the service's).

    Examples
    --------
    >>> f = Forgetting(half_life=40, decay_every=5)
    >>> list(f.segments([3, 4, 5, 9, 12, 16]))
    [(0, 2), (2, 4), (4, 5), (5, 6)]
    >>> f.points(3, 16), f.factor == 2 ** (-5 / 40)
    (3, True)
    >>> Forgetting(0).decay_every, Forgetting(0).factor
    (0, 1.0)

    """

    def __init__(self, half_life: float = 0.0, decay_every: int = 0,
                 by_time: bool = False) -> None:
        if not (half_life == 0 or 1 <= half_life < math.inf):
            raise ValueError(f"half_life must be 0 (no forgetting) or a finite number of "
                             f"offsets >= 1, got {half_life!r}")
        if not (isinstance(decay_every, int) and decay_every >= 0):
            raise ValueError(f"decay_every must be a non-negative int, got {decay_every!r}")
        self.half_life = half_life
        self.by_time = by_time
        self.decay_every = (decay_every or max(1, int(half_life / 16))) if half_life else 0
        self.factor = (check_decay_factor(2.0 ** (-self.decay_every / half_life))
                       if half_life else 1.0)
        self._decayed: dict[Key, int] = {}  # position a keyed state is decayed to, mid-batch

    def points(self, done: int, position: int) -> int:
        """How many decay points lie in ``(done, position]``."""
        if not self.decay_every or position <= done:
            return 0
        return position // self.decay_every - done // self.decay_every

    def decay(self, state: Decaying, done: int, position: int) -> bool:
        """Apply the decays of the points in ``(done, position]`` to ``state``; whether its
        counts changed. One ``decay`` per point, never ``factor ** n``: the last bits of the
        counts must not depend on how many points one batch happened to pass."""
        points = self.points(done, position) if state.n_learned else 0
        for _ in range(points):
            state.decay(self.factor)
        return points > 0

    def segments(self, positions: Sequence[int]) -> Iterator[tuple[int, int]]:
        """``(start, end)`` runs of a batch's records, split at the decay points between
        their ``positions``: each run is learned after decaying to its first record's."""
        start = 0
        while start < len(positions):
            end = start + 1
            point = (positions[start] // self.decay_every + 1) * self.decay_every
            while end < len(positions) and positions[end] < point:
                end += 1
            yield start, end
            start = end

    def decay_to(self, key: Key, state: Decaying, start: int, position: int) -> bool:
        """:meth:`decay` ``key``'s ``state`` from where it was decayed to (``start``: its
        position when nothing of this batch was decayed yet) to ``position``."""
        done = self._decayed.get(key, start)
        if position <= done:
            return False
        self._decayed[key] = position
        return self.decay(state, done, position)

    def settled(self, key: Key) -> None:
        """``key``'s state moved to the position it is decayed to (or left this member)."""
        self._decayed.pop(key, None)
