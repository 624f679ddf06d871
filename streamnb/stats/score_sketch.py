"""Per-class histograms of a classifier's scores on fixed bins: a count statistic that adds
across shards, forgets by scaling and reads off the threshold that keeps a class's share of
scores above it at or below a target (SpamFilter's ``max_ham_rate``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from streamnb.stats.forgetting import check_decay_factor

__all__ = ["ScoreSketch"]


class ScoreSketch:
    """Counts of scores per (row, bin), bins of ``width`` on [``low``, ``high``) plus one open
    bin below and one above. Rows are the classes a caller tracks (SpamFilter: spam, ham).
    With a ``half_life``, each row forgets as it counts: a score weighs ``2 ** (-k /
    half_life)`` once ``k`` later scores of its row are counted, so a row holds about the last
    ``1.44 · half_life`` scores of its class whatever the mix of classes.

    Everything is a count: two sketches of the same bins add (``merge``), ``decay`` scales
    them, and a threshold is read off the counts alone. :meth:`threshold` is the lowest bin
    edge ``t`` such that the row's count of scores at or above ``t`` is at most ``rate`` times
    its total: a score in bin ``[e, e + width)`` is counted above every edge up to ``e``, so
    the share read off the counts is never below the share of the scores themselves
    (conservative by at most one bin).

    Examples
    --------
    >>> sketch = ScoreSketch(rows=1, low=-2.0, high=2.0, width=1.0)
    >>> sketch.add_many(np.array([-1.5, -0.5, -0.2, 0.3, 1.7]), np.zeros(5, dtype=np.int64))
    >>> sketch.threshold(0, 0.2)  # one of five at or above 1.0 (1.7): 1 ≤ 0.2 × 5
    1.0
    >>> sketch.threshold(0, 0.0)  # none: above the top score's bin
    2.0

    At rate 0.2 the edge 0.0 would leave two of five scores (0.3, 1.7) at or above it; the
    edge 1.0 leaves one, so the threshold is 1.0.
    """

    __slots__ = ("counts", "half_life", "high", "low", "version", "width")

    def __init__(self, rows: int, low: float = -40.0, high: float = 40.0,
                 width: float = 0.05, half_life: float | None = None) -> None:
        if not (np.isfinite(low) and np.isfinite(high) and low < high):
            raise ValueError(f"ScoreSketch needs finite low < high, got {low!r}, {high!r}")
        if not (np.isfinite(width) and width > 0):
            raise ValueError(f"ScoreSketch needs a finite width > 0, got {width!r}")
        if half_life is not None and not (np.isfinite(half_life) and half_life > 0):
            raise ValueError(f"ScoreSketch needs a finite half_life > 0, got {half_life!r}")
        self.low, self.high, self.width = float(low), float(high), float(width)
        self.half_life = None if half_life is None else float(half_life)
        n = round((self.high - self.low) / self.width)
        self.counts = np.zeros((rows, n + 2))  # bin 0: below low; bin n + 1: at or above high
        self.version = 0

    @property
    def n_bins(self) -> int:
        return self.counts.shape[1]

    def bins(self, scores: np.ndarray) -> np.ndarray:
        """The bin of each score (NaN is refused by the caller; ±inf land in the open bins)."""
        inner = np.floor((np.asarray(scores, dtype=np.float64) - self.low) / self.width)
        return (np.clip(inner, -1, self.n_bins - 2) + 1).astype(np.int64)

    def add_many(self, scores: np.ndarray, rows: np.ndarray) -> None:
        """Count each score in its row (``rows[i]`` for ``scores[i]``), in order: with a
        half-life, the counts of one score at a time (to rounding)."""
        if not len(scores):
            return
        rows = np.asarray(rows, dtype=np.int64)
        weights = 1.0
        if self.half_life is not None:
            # later[i]: the scores of row[i] counted after scores[i] in this batch
            later = np.zeros(len(rows), dtype=np.int64)
            for r in np.unique(rows):
                mine = rows == r
                n = int(mine.sum())
                later[mine] = np.arange(n - 1, -1, -1)
                self.counts[r] *= 2.0 ** (-n / self.half_life)
            weights = 2.0 ** (-later / self.half_life)
        np.add.at(self.counts, (rows, self.bins(scores)), weights)
        self.version += 1

    def total(self, row: int) -> float:
        return float(self.counts[row].sum())

    def threshold(self, row: int, rate: float) -> float:
        """The lowest bin edge with at most ``rate`` of ``row``'s count at or above it: ``low``
        for an empty row, ``high`` (the floor of the open top bin) when no edge below it
        qualifies."""
        counts = self.counts[row]
        at_or_above = np.cumsum(counts[::-1])[::-1]  # at_or_above[b]: bins b and up
        allowed = rate * at_or_above[0]
        # bins 1..n are [low + (b-1)·width, …); the first edge whose tail is small enough
        fits = np.flatnonzero(at_or_above[1:] <= allowed * (1 + 1e-12))
        if not len(fits):  # even the open top bin holds too many: no edge can do better
            return self.high
        return self.low + float(fits[0]) * self.width

    def share_above(self, row: int, threshold: float) -> float:
        """The share of ``row``'s count in the bins at or above ``threshold``'s bin (0 for an
        empty row): the rate :meth:`threshold` bounds."""
        total = self.total(row)
        if not total:
            return 0.0
        return float(self.counts[row, self.bins(np.array([threshold]))[0]:].sum()) / total

    def merge(self, other: ScoreSketch) -> ScoreSketch:
        """Add ``other``'s counts (same bins and rows). Returns ``self``."""
        if (other.low, other.high, other.width, other.half_life) != (
                self.low, self.high, self.width, self.half_life) or (
                other.counts.shape != self.counts.shape):
            raise ValueError("cannot merge score sketches of different bins or rows")
        self.counts += other.counts
        self.version += 1
        return self

    def decay(self, factor: float) -> None:
        """Multiply every count by ``factor`` in (0, 1]."""
        self.counts *= check_decay_factor(factor)
        self.version += 1

    def copy(self) -> ScoreSketch:
        new = ScoreSketch(self.counts.shape[0], self.low, self.high, self.width, self.half_life)
        new.counts[:] = self.counts
        return new

    def to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        return ({"low": self.low, "high": self.high, "width": self.width,
                 "half_life": self.half_life},
                {"counts": self.counts.copy()})

    @classmethod
    def from_state(cls, meta: Mapping[str, Any], arrays: Mapping[str, np.ndarray]
                   ) -> ScoreSketch:
        counts = np.asarray(arrays["counts"], dtype=np.float64)
        half_life = meta.get("half_life")
        sketch = cls(counts.shape[0] if counts.ndim == 2 else 0, float(meta["low"]),
                     float(meta["high"]), float(meta["width"]),
                     None if half_life is None else float(half_life))
        if counts.shape != sketch.counts.shape:
            raise ValueError(f"score sketch counts of shape {counts.shape}, expected "
                             f"{sketch.counts.shape}")
        if not (np.isfinite(counts).all() and (counts >= 0).all()):
            raise ValueError("score sketch counts must be finite and non-negative")
        sketch.counts[:] = counts
        return sketch
