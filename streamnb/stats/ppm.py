"""Per-class byte-context counts of two classes: the statistic of a PPM (prediction by partial
matching) compression model, scored as interpolated PPM-D within a fixed memory budget."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from streamnb._accel.ppm import CONTEXT_FLAG, MAX_ORDER, ppm_learn, ppm_score

__all__ = ["SLOT_BYTES", "ByteContexts"]

#: memory per table slot: its key (int64), c or n per class (float64) and d per class (uint16)
SLOT_BYTES = 8 + 2 * 8 + 2 * 2
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_BYTE_BITS = np.int64(8)
_ORDER_SHIFT = np.int64(56)
_PACKED = np.int64((1 << 56) - 1)


class ByteContexts:
    """c(h, s), n(h) and d(h) per class (0, 1) for every context h of 0..``order`` bytes that
    the learned messages hold: how often byte s followed h, how often h occurred, and how many
    distinct bytes followed it. A message x is scored by its log-likelihood under each class's
    interpolated PPM-D model::

        P_k(s | h) = max(c(h, s) − ½, 0) / n(h)  +  d(h) / (2 n(h)) · P_{k−1}(s | h')
        P_k(s | h) = P_{k−1}(s | h')   where n(h) = 0,        P_{−1}(s) = 1/256

    (h' the context one byte shorter), each class's model also learning x as it codes it (the
    adaptive reading: a message that repeats itself pays for its content once). Learning and
    scoring cost O(bytes · (order + 1)) (streamnb/_accel/_ppm.c).

    **Memory.** The counts live in one open-addressing table of exact keys whose size is fixed
    by ``memory`` (bytes): the largest power of two of slots of ``SLOT_BYTES`` each that fits;
    the table never grows. A message of L bytes claims at most 2 (order + 1) L slots; before a
    message could fill more than half the table, the table forgets its rarest contexts: it
    drops every (context, byte) count of at most t (both classes together), t = 1, 2, 4, …
    until at most a quarter of the slots are in use, then recounts n and d from the counts
    that remain and drops the contexts left empty. Scores then rest on the frequent contexts;
    below the budget nothing is forgotten.

    **Monoid.** ``merge`` adds another table's counts (c and n add, d is recounted from the
    merged c): two shards merged equal one model that learned both, unless either had to
    forget. ``decay`` multiplies c and n; d stays (no byte becomes unseen).
    """

    __slots__ = ("counts", "distinct", "keys", "order", "used", "version")

    def __init__(self, order: int, memory: int) -> None:
        if not 0 <= order <= MAX_ORDER:
            raise ValueError(f"order must be in 0..{MAX_ORDER}, got {order}")
        slots = 1 << max(1, (int(memory) // SLOT_BYTES).bit_length() - 1)
        if slots * SLOT_BYTES > memory or slots < 1024:
            raise ValueError(f"a memory budget of {memory} bytes holds fewer than 1024 slots "
                             f"of {SLOT_BYTES} bytes")
        self.order = order
        self.keys = np.full(slots, -1, dtype=np.int64)
        self.counts = np.zeros((2, slots), dtype=np.float64)
        self.distinct = np.zeros((2, slots), dtype=np.uint16)
        self.used = 0  # slots holding a key
        self.version = 0

    @property
    def slots(self) -> int:
        return len(self.keys)

    @property
    def nbytes(self) -> int:
        """The table's memory (its three arrays): fixed, at most the budget."""
        return self.keys.nbytes + self.counts.nbytes + self.distinct.nbytes

    def max_bytes(self) -> int:
        """The longest message the table takes: one that claims at most a quarter of it."""
        return self.slots // (8 * (self.order + 1))

    # -- learning and scoring -----------------------------------------------------------------
    def learn(self, data: bytes, cls: int) -> None:
        """Add ``data``'s bytes to class ``cls`` (0 or 1)."""
        if len(data) > self.max_bytes():
            raise ValueError(f"a message of {len(data)} bytes is longer than the table takes "
                             f"({self.max_bytes()}): raise the memory budget or read fewer")
        if self.used + 2 * (self.order + 1) * len(data) > self.slots // 2:
            self.forget()
        self.used += ppm_learn(data, self.order, cls, self.keys, self.counts, self.distinct)
        self.version += 1

    def score(self, data: bytes) -> tuple[float, float]:
        """(ln P_0(data), ln P_1(data)), the adaptive reading; the counts are unchanged."""
        if len(data) > self.max_bytes():
            raise ValueError(f"a message of {len(data)} bytes is longer than the table takes "
                             f"({self.max_bytes()}): raise the memory budget or read fewer")
        return ppm_score(data, self.order, self.keys, self.counts, self.distinct)

    # -- the table ----------------------------------------------------------------------------
    def entries(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The keys in use (ascending) with their counts and distinct-byte counts per class."""
        live = np.flatnonzero(self.keys >= 0)
        order = np.argsort(self.keys[live], kind="stable")
        at = live[order]
        return self.keys[at], self.counts[:, at], self.distinct[:, at]

    def forget(self) -> None:
        """Drop the rarest (context, byte) counts until at most a quarter of the slots are in
        use (the class docstring's rule)."""
        keys, counts, _ = self.entries()
        self._rebuild(*self._rarest_dropped(keys, counts))

    def _rarest_dropped(self, keys: np.ndarray, counts: np.ndarray
                        ) -> tuple[np.ndarray, np.ndarray]:
        """``keys`` and ``counts`` without the (context, byte) counts of at most t, t = 1, 2,
        4, … until the rest and their contexts fill at most a quarter of the table; the
        contexts' n recounted from what remains."""
        symbol = (keys & CONTEXT_FLAG) == 0
        total = counts.sum(axis=0)
        limit = 1.0
        keep = symbol.copy()
        # every kept (context, byte) key brings at most its context key along
        while 2 * int(keep.sum()) > self.slots // 4:
            keep = symbol & (total > limit)
            limit *= 2
        keys, counts = keys[keep], counts[:, keep]
        contexts, inverse = np.unique(_context_of(keys), return_inverse=True)
        n = np.zeros((2, len(contexts)))
        for c in (0, 1):
            np.add.at(n[c], inverse, counts[c])
        return np.concatenate([keys, contexts]), np.concatenate([counts, n], axis=1)

    def _rebuild(self, keys: np.ndarray, counts: np.ndarray) -> None:
        """The table holding exactly ``keys`` (unique; every (context, byte) key's context
        among them) with ``counts``, d recounted from the (context, byte) counts."""
        order = np.argsort(keys, kind="stable")
        keys, counts = keys[order], counts[:, order]
        distinct = np.zeros(counts.shape, dtype=np.int64)
        symbol = (keys & CONTEXT_FLAG) == 0
        at = np.searchsorted(keys, _context_of(keys[symbol]))
        for c in (0, 1):
            np.add.at(distinct[c], at, (counts[c, symbol] > 0).astype(np.int64))
        slots = _place(keys, self.slots)
        self.keys.fill(-1)
        self.counts.fill(0.0)
        self.distinct.fill(0)
        self.keys[slots] = keys
        self.counts[:, slots] = counts
        self.distinct[:, slots] = distinct
        self.used = len(keys)
        self.version += 1

    # -- monoid -------------------------------------------------------------------------------
    def merge(self, other: ByteContexts) -> ByteContexts:
        if other.order != self.order or other.slots != self.slots:
            raise ValueError(f"cannot merge byte contexts of order {other.order} in "
                             f"{other.slots} slots into order {self.order} in {self.slots}")
        mine, theirs = self.entries(), other.entries()
        keys, inverse = np.unique(np.concatenate([mine[0], theirs[0]]), return_inverse=True)
        counts = np.zeros((2, len(keys)))
        both = np.concatenate([mine[1], theirs[1]], axis=1)
        for c in (0, 1):
            np.add.at(counts[c], inverse, both[c])
        if len(keys) > self.slots // 4:  # more than forgetting leaves: forget now
            keys, counts = self._rarest_dropped(keys, counts)
        self._rebuild(keys, counts)
        return self

    def decay(self, factor: float) -> None:
        self.counts *= factor
        self.version += 1

    # -- persistence --------------------------------------------------------------------------
    def to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        keys, counts, _ = self.entries()
        return ({"order": self.order, "slots": self.slots},
                {"keys": keys, "counts": counts})

    @classmethod
    def from_state(cls, meta: Mapping[str, Any], arrays: Mapping[str, np.ndarray]
                   ) -> ByteContexts:
        model = cls(int(meta["order"]), int(meta["slots"]) * SLOT_BYTES)
        keys = np.asarray(arrays["keys"], dtype=np.int64)
        counts = np.asarray(arrays["counts"], dtype=np.float64)
        if keys.ndim != 1 or counts.shape != (2, len(keys)):
            raise ValueError(f"byte-context state: {len(keys)} keys but counts of shape "
                             f"{counts.shape}")
        if len(keys) > model.slots // 2 or len(np.unique(keys)) != len(keys) or (
                keys < 0).any():
            raise ValueError("byte-context state: keys must be distinct, non-negative and "
                             "fill at most half the table")
        if not (np.isfinite(counts).all() and (counts >= 0).all()):
            raise ValueError("byte-context state: counts must be finite and non-negative")
        model._rebuild(keys, counts)
        return model


def _context_of(keys: np.ndarray) -> np.ndarray:
    """The context key of each (context, byte) key: its bytes but the last, order and flag."""
    order = keys >> _ORDER_SHIFT
    return ((keys & _PACKED) >> _BYTE_BITS) | (order << _ORDER_SHIFT) | np.int64(CONTEXT_FLAG)


def _place(keys: np.ndarray, slots: int) -> np.ndarray:
    """A slot for each of the distinct ``keys`` in an empty table of ``slots`` (a power of
    two) as the kernels' linear probing finds it: each key at its home slot or the first free
    one after it."""
    shift = np.uint64(64 - (slots.bit_length() - 1))
    position = ((keys.astype(np.uint64) * _GOLDEN) >> shift).astype(np.int64)
    taken = np.zeros(slots, dtype=bool)
    found = np.empty(len(keys), dtype=np.int64)
    pending = np.arange(len(keys))
    while len(pending):
        at = position[pending]
        free = ~taken[at]
        claim, first = np.unique(at[free], return_index=True)
        winners = pending[free][first]
        taken[claim] = True
        found[winners] = claim
        lost = np.ones(len(pending), dtype=bool)
        lost[np.flatnonzero(free)[first]] = False
        pending = pending[lost]
        position[pending] = (position[pending] + 1) & (slots - 1)
    return found
