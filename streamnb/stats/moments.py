"""Per-class moments of numeric attributes: weight, mean and centred second moment.

The triple (w, mean, M2) is the sufficient statistic of a Gaussian. It adds exactly like counts
under Chan et al.'s parallel formula (merge and batch updates), and forgetting scales w and M2
while keeping the mean (an exponentially weighted mean and variance).
"""

from __future__ import annotations

import numpy as np

__all__ = ["Moments", "combine_moments"]


def combine_moments(w1: np.ndarray, m1: np.ndarray, s1: np.ndarray, w2: np.ndarray,
                    m2: np.ndarray, s2: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Chan, Golub & LeVeque's pairwise update of (weight, mean, M2), elementwise."""
    w = w1 + w2
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(w > 0, w2 / np.where(w > 0, w, 1.0), 0.0)
    delta = m2 - m1
    mean = m1 + delta * share
    m2_new = s1 + s2 + delta * delta * w1 * share
    return w, mean, m2_new


class Moments:
    """(weight, mean, M2) arrays of shape (classes, numeric attributes)."""

    def __init__(self, n_classes: int = 0, n_attributes: int = 0) -> None:
        self.weight = np.zeros((n_classes, n_attributes))
        self.mean = np.zeros((n_classes, n_attributes))
        self.m2 = np.zeros((n_classes, n_attributes))

    @property
    def shape(self) -> tuple[int, int]:
        return self.weight.shape

    def resize(self, n_classes: int, n_attributes: int) -> None:
        k, p = self.weight.shape
        if (n_classes, n_attributes) == (k, p):
            return
        for name in ("weight", "mean", "m2"):
            grown = np.zeros((n_classes, n_attributes))
            grown[:k, :p] = getattr(self, name)
            setattr(self, name, grown)

    def update(self, c: int, slots: list[int], values: list[float]) -> None:
        """Welford's update for one record of class ``c``."""
        w, mean, m2 = self.weight[c], self.mean[c], self.m2[c]
        for s, v in zip(slots, values, strict=True):
            w[s] += 1.0
            d = v - mean[s]
            mean[s] += d / w[s]
            m2[s] += d * (v - mean[s])

    def update_many(self, classes: np.ndarray, slots: np.ndarray, values: np.ndarray) -> None:
        """Add a batch of (class, slot, value) observations via their batch moments."""
        if len(values) == 0:
            return
        k, p = self.weight.shape
        flat = classes * p + slots
        w = np.bincount(flat, minlength=k * p).astype(np.float64)
        sums = np.bincount(flat, weights=values, minlength=k * p)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(w > 0, sums / np.where(w > 0, w, 1.0), 0.0)
        dev = values - mean[flat]
        m2 = np.bincount(flat, weights=dev * dev, minlength=k * p)
        self.combine(w.reshape(k, p), mean.reshape(k, p), m2.reshape(k, p))

    def combine(self, w: np.ndarray, mean: np.ndarray, m2: np.ndarray,
                rows: np.ndarray | None = None, cols: np.ndarray | None = None) -> None:
        """Merge moments given for ``rows`` × ``cols`` (all when None) into these."""
        index = np.ix_(rows, cols) if rows is not None else (slice(None), slice(None))
        self.weight[index], self.mean[index], self.m2[index] = combine_moments(
            self.weight[index], self.mean[index], self.m2[index], w, mean, m2)

    def decay(self, factor: float) -> None:
        self.weight *= factor
        self.m2 *= factor

    def variance(self) -> np.ndarray:
        """Maximum-likelihood variance M2 / w (0 where nothing was observed)."""
        # divided only where w > 0 (no errstate: it costs more than the division at k·p cells)
        return np.divide(self.m2, self.weight, out=np.zeros(self.weight.shape),
                         where=self.weight > 0)
