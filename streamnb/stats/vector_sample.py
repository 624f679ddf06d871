"""A bounded, decayable, mergeable per-class sample of numeric attribute vectors.

:class:`~streamnb.stats.reservoir.Reservoir` keeps discrete records (schema columns); the
class-conditional ICA of :class:`~streamnb.CCICANB` needs the numeric vectors themselves, per
class. :class:`ClassSample` keeps, for every class, the ``capacity`` records of highest priority
log w − log u (u uniform in (0, 1], w the record's weight): the same priority sampling as the
reservoir (Duffield, Lund & Thorup 2007) with forward decay (Cormode et al. 2009): ``decay(f)``
raises the weight of every later record by 1/f (O(1)), so recent records are kept preferentially.

The kept set is the top ``capacity`` priorities of each class among everything offered, whatever
the order or batching (records are offered to a buffer and pruned when it is read or grows past
twice the capacity), and it is stored in a canonical order (class, then priority descending): so
learning one record at a time or in batches gives the same sample, bit for bit, when the
priorities are the same random draws. ``merge`` keeps the top priorities of both samples (shifted
to a common decay scale); it is a priority sample of the concatenated streams provided the two
samples drew independent priorities (different seeds, or ``None``). While no record of a class
was ever dropped, that class's sample is every record it learned (``exact``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from streamnb.stats.forgetting import check_decay_factor
from streamnb.stats.persist import header_int

__all__ = ["ClassSample"]


class ClassSample:
    """At most ``capacity`` numeric vectors (NaN = missing) per class.

    Examples
    --------
    >>> s = ClassSample(capacity=2, seed=0)
    >>> s.add_many(np.array([0, 0, 1, 0]), np.array([[1.0], [2.0], [3.0], [4.0]]))
    >>> s.size, s.exact                     # class 0 offered 3 records: one was dropped
    (3, False)
    >>> sorted(s.values_of(1)[:, 0].tolist())
    [3.0]

    """

    def __init__(self, capacity: int = 1000, seed: int | None = None) -> None:
        if not (isinstance(capacity, int) and not isinstance(capacity, bool) and capacity >= 1):
            raise ValueError(f"capacity must be an int >= 1, got {capacity!r}")
        self.capacity = capacity
        self.seed = seed
        self._rng = np.random.default_rng(seed)
        self._values = np.zeros((0, 0))
        self._classes = np.zeros(0, dtype=np.int64)
        self._log_priority = np.zeros(0)
        self._pending: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self._n_pending = 0
        self._boost = 0.0
        self.n_dropped = 0

    # -- views -------------------------------------------------------------------------------
    @property
    def size(self) -> int:
        self._prune()
        return len(self._classes)

    @property
    def exact(self) -> bool:
        """True while no record was ever dropped: the sample is every record learned."""
        self._prune()
        return self.n_dropped == 0

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """The kept ``values`` (m, p) and ``classes`` (m,), in canonical order."""
        self._prune()
        return self._values, self._classes

    def values_of(self, c: int) -> np.ndarray:
        values, classes = self.arrays()
        return values[classes == c]

    # -- learning ----------------------------------------------------------------------------
    def add_many(self, classes: np.ndarray, values: np.ndarray) -> None:
        """Offer records ``values`` (n, p) of class indices ``classes`` (n,)."""
        n = len(classes)
        if not n:
            return
        log_priority = self._boost - np.log(1.0 - self._rng.random(n))
        self._pending.append((np.asarray(classes, dtype=np.int64),
                              np.asarray(values, dtype=np.float64), log_priority))
        self._n_pending += n
        if self._n_pending > 2 * self.capacity + 64:
            self._prune()

    def _prune(self) -> None:
        if not self._pending:
            return
        parts = [(self._classes, self._values, self._log_priority), *self._pending]
        width = max(v.shape[1] for _, v, _ in parts)
        values = np.concatenate([np.pad(v, ((0, 0), (0, width - v.shape[1])),
                                        constant_values=math.nan) for _, v, _ in parts])
        classes = np.concatenate([c for c, _, _ in parts])
        log_priority = np.concatenate([p for _, _, p in parts])
        order = np.lexsort((-log_priority, classes))
        sorted_classes = classes[order]
        # rank of each record within its class, by priority
        rank = np.arange(len(order)) - np.searchsorted(sorted_classes, sorted_classes)
        kept = rank < self.capacity
        keep = order[kept]
        self.n_dropped += len(order) - len(keep)
        self._values, self._classes = values[keep], sorted_classes[kept]
        self._log_priority = log_priority[keep]
        self._pending, self._n_pending = [], 0

    # -- monoid operations -------------------------------------------------------------------
    def decay(self, factor: float) -> None:
        """Multiply every kept record's weight by ``factor`` in (0, 1] (O(1): later records
        are boosted instead)."""
        check_decay_factor(factor)
        self._boost -= math.log(factor)

    def merge(self, other: ClassSample, class_map: np.ndarray, column_map: np.ndarray,
              width: int) -> None:
        """Add ``other``'s sample: its class ``c`` is this sample's ``class_map[c]``, its column
        ``j`` this one's ``column_map[j]``; ``width`` is this model's number of attributes."""
        values, classes = other.arrays()
        moved = np.full((len(classes), width), math.nan)
        moved[:, column_map[: values.shape[1]]] = values
        self._pending.append((np.asarray(class_map, dtype=np.int64)[classes], moved,
                              other._log_priority + (self._boost - other._boost)))
        self._n_pending += len(classes)
        self.n_dropped += other.n_dropped
        self._prune()

    # -- persistence -------------------------------------------------------------------------
    def to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        self._prune()
        meta = {"capacity": self.capacity, "seed": self.seed,
                "rng": self._rng.bit_generator.state, "boost": self._boost,
                "n_dropped": self.n_dropped}
        return meta, {"values": self._values, "classes": self._classes,
                      "log_priority": self._log_priority}

    @classmethod
    def from_state(cls, meta: Mapping[str, Any], arrays: Mapping[str, np.ndarray]
                   ) -> ClassSample:
        sample = cls(capacity=header_int(meta["capacity"], "capacity"), seed=meta["seed"])
        state = meta["rng"]
        if state.get("bit_generator") != type(sample._rng.bit_generator).__name__:
            raise ValueError(f"sample random state of an unknown generator: "
                             f"{state.get('bit_generator')!r}")
        sample._rng.bit_generator.state = state
        values = np.array(arrays["values"], dtype=np.float64)
        n = values.shape[0]
        for name in ("classes", "log_priority"):
            if arrays[name].shape != (n,):
                raise ValueError(f"sample array {name!r}: expected shape ({n},), got "
                                 f"{arrays[name].shape}")
        sample._values = values.reshape(n, -1) if values.ndim == 2 else values.reshape(0, 0)
        sample._classes = np.array(arrays["classes"], dtype=np.int64)
        sample._log_priority = np.array(arrays["log_priority"], dtype=np.float64)
        sample._boost = float(meta["boost"])
        sample.n_dropped = header_int(meta["n_dropped"], "n_dropped")
        return sample
