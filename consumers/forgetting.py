"""Forgetting of the service's partition states: each partition's counts halve every
``half_life`` positions of its log, as a staircase.

A position is an offset, or (``by_time``) the partition's *clock*, the largest record timestamp
it has read in milliseconds (:attr:`~streamnb.consumers.state.PartitionState.clock`). At every
position that is a multiple of ``decay_every``, the records before it are multiplied by
``2 ** (-decay_every / half_life)``: the weight of a record at position ``p`` in a state at
position ``P`` is ``2 ** (-decay_every * (P // decay_every - p // decay_every) / half_life)``,
a function of the partition's records only (offsets, or timestamps in log order, never the
wall clock), so a restart, a rebalance or another batching gives the same state. A record
older than one read before it moves the clock nowhere.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterator, Sequence

from streamnb.models.base import CountClassifier
from streamnb.stats.forgetting import check_decay_factor

__all__ = ["Forgetting"]

Key = Hashable  # (topic, partition)


class Forgetting:
    """The decay points of the own partitions, and where each one's state is decayed to.

    Parameters
    ----------
    half_life
        Positions over which a count halves (0: never forget).
    decay_every
        Positions between two decays (0: ``half_life / 16``, at least 1).
    by_time
        Positions are the partition's clock (milliseconds) instead of offsets.

    Examples
    --------
    >>> f = Forgetting(half_life=40, decay_every=5)
    >>> list(f.segments([3, 4, 5, 9, 12, 16]))
    [(0, 2), (2, 4), (4, 5), (5, 6)]
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
        self._decayed: dict[Key, int] = {}  # position an own state is decayed to, mid-batch

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

    def decay_to(self, key: Key, model: CountClassifier, start: int, position: int) -> bool:
        """Apply the decays of the points in ``(decayed, position]`` to ``key``'s ``model``
        (``start``: the state's position when nothing of this batch was decayed yet); whether
        its counts changed. One ``decay`` per point, never ``factor ** n``: the last bits of
        the counts must not depend on how many points one batch happened to pass."""
        done = self._decayed.get(key, start)
        if position <= done:
            return False
        self._decayed[key] = position
        if not model.n_learned:
            return False
        points = position // self.decay_every - done // self.decay_every
        for _ in range(points):
            model.decay(self.factor)
        return points > 0

    def settled(self, key: Key) -> None:
        """``key``'s state moved to the position it is decayed to (or left this member)."""
        self._decayed.pop(key, None)
