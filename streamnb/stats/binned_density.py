"""Per class and attribute, a binned sketch of a numeric attribute's values (for KernelNB).

Each (class, attribute) cell keeps counts of its values in at most ``n_bins`` consecutive bins
of width 2^e, anchored at multiples of 2^e (bin i holds [i·2^e, (i+1)·2^e)), together with the
cell's Gaussian moments (weight, mean, M2) for the bandwidth. The exponent e is the *smallest*
e ≥ −40 such that every value seen fits in ``n_bins`` consecutive bins (and |i| < 2^62); a wider
range halves the resolution by adding pairs of aligned bins, which is exact. So the sketch is a
function of the multiset of values only: learning one by one, in a batch, in any order, or
merging two sketches (both coarsened to the larger exponent, then added) give the same bins;
``decay`` scales the counts. Cost: memory ``n_bins`` floats per cell; a record O(p) (a
re-binning, O(n_bins), only when a value falls outside the current bins); a density O(n_bins).
The one-record update and the densities are C kernels of streamnb/_accel (``binned_add_one``,
``kde_log_likelihood``; Python twins beside them).

The kernel density estimate over the bins (Silverman's *binned KDE*: every value moved to its
bin's centre) differs from the exact one by at most a shift of half a bin per value; with the
range spanning more than ``n_bins / 2`` bins, half a bin is < range / n_bins.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from streamnb._accel.kernels import binned_add_one
from streamnb.stats.binning import E_MIN, exponent_for, fitting_shift
from streamnb.stats.domain import Domain
from streamnb.stats.forgetting import check_decay_factor
from streamnb.stats.moments import Moments

__all__ = ["BinnedDensity"]


def _exponent_for(values: np.ndarray) -> int:
    """The smallest exponent keeping |floor(x / 2^e)| < 2^62 for every value."""
    return exponent_for(float(np.max(np.abs(values), initial=0.0)), 62)


class BinnedDensity:
    """Binned value counts and moments per (class, attribute); see the module docstring.

    Examples
    --------
    >>> s = BinnedDensity(n_bins=4)
    >>> s.add_values(s.labels.add("a"), s.attributes.add("x"), np.array([0.0, 1.0, 3.0]))
    >>> s.add_values(0, 0, np.array([6.0]))   # range 0..6 needs width 2: 0-2, 2-4, 4-6, 6-8
    >>> int(s.exponent[0, 0]), s.bins(0, 0)[0].tolist(), s.bins(0, 0)[1].tolist()
    (1, [1.0, 3.0, 5.0, 7.0], [2.0, 1.0, 0.0, 1.0])

    """

    def __init__(self, n_bins: int = 128) -> None:
        self.n_bins = n_bins
        self.labels = Domain()
        self.attributes = Domain()
        self.class_weight = np.zeros(0)
        self.moments = Moments()
        self.exponent = np.zeros((0, 0), dtype=np.int64)
        self.origin = np.zeros((0, 0), dtype=np.int64)
        self.counts = np.zeros((0, 0, n_bins))
        self.version = 0

    @property
    def n_classes(self) -> int:
        return len(self.class_weight)

    def resize(self) -> None:
        k, p = len(self.labels), len(self.attributes)
        k0, p0 = self.exponent.shape
        if (k, p) == (k0, p0):
            return
        grown = np.zeros(k)
        grown[:k0] = self.class_weight
        self.class_weight = grown
        self.moments.resize(k, p)
        exponent = np.full((k, p), E_MIN, dtype=np.int64)
        exponent[:k0, :p0] = self.exponent
        origin = np.zeros((k, p), dtype=np.int64)
        origin[:k0, :p0] = self.origin
        counts = np.zeros((k, p, self.n_bins))
        counts[:k0, :p0] = self.counts
        self.exponent, self.origin, self.counts = exponent, origin, counts

    # -- the bins of one cell -------------------------------------------------------------------
    def _place(self, c: int, a: int, e_new: int, index: np.ndarray, weight: np.ndarray) -> None:
        """Add ``weight`` at bins ``index`` (of width 2^e_new) to cell (c, a), coarsening to the
        smallest exponent that holds the union in ``n_bins`` bins."""
        row = self.counts[c, a]
        held = np.flatnonzero(row)
        e_old = int(self.exponent[c, a])
        e = max(e_old, e_new)
        old = (self.origin[c, a] + held) >> (e - e_old)
        index = np.asarray(index, dtype=np.int64) >> (e - e_new)
        every = np.concatenate([old, index])
        lo, hi = int(every.min()), int(every.max())
        shift = fitting_shift(lo, hi, self.n_bins)
        every >>= shift
        lo >>= shift
        self.counts[c, a] = np.bincount(every - lo, np.concatenate([row[held], weight]),
                                        minlength=self.n_bins)
        self.exponent[c, a] = e + shift
        self.origin[c, a] = lo

    def add_values(self, c: int, a: int, values: np.ndarray) -> None:
        """Count ``values`` (finite floats) in cell (c, a): bins and moments."""
        self.resize()
        if not len(values):
            return
        values = np.asarray(values, dtype=np.float64)
        e = max(int(self.exponent[c, a]), _exponent_for(values))
        index = np.floor(np.ldexp(values, -e)).astype(np.int64)
        self._place(c, a, e, index, np.ones(len(values)))
        self.moments.update_many(np.full(len(values), c), np.full(len(values), a), values)
        self.version += 1

    def update(self, c: int, slots: np.ndarray | None, values: np.ndarray) -> None:
        """One record of class ``c`` (``values`` of attributes ``slots``; ``None``: every
        attribute, in order): one kernel call (streamnb/_accel ``binned_add_one``) counts the
        values that fall in their cells' bins and updates every cell's moments; a value outside
        its bins re-places that cell's bins here (O(n_bins), rare once the range is seen)."""
        self.resize()
        if slots is None:
            x = np.ascontiguousarray(values, dtype=np.float64)
        else:
            x = np.full(self.counts.shape[1], np.nan)
            x[slots] = values
        self.class_weight[c] += 1.0
        m = self.moments
        for a in binned_add_one(self.counts, self.origin, self.exponent, m.weight, m.mean, m.m2,
                                c, x):
            e = max(int(self.exponent[c, a]), _exponent_for(x[a: a + 1]))
            self._place(c, a, e, np.floor(np.ldexp(x[a: a + 1], -e)).astype(np.int64),
                        np.ones(1))
        self.version += 1

    def update_many(self, classes: np.ndarray, values: np.ndarray) -> None:
        """A batch: ``values`` (n, p) with NaN for missing, ``classes`` (n,)."""
        self.resize()
        self.class_weight += np.bincount(classes, minlength=self.n_classes)
        for c in np.unique(classes):
            rows = values[classes == c]
            for a in range(rows.shape[1]):
                column = rows[:, a]
                column = column[~np.isnan(column)]
                if len(column):
                    self.add_values(int(c), a, column)
        self.version += 1

    # -- monoid ---------------------------------------------------------------------------------
    def merge(self, other: BinnedDensity) -> BinnedDensity:
        if other.n_bins != self.n_bins:
            raise ValueError(f"cannot merge sketches of {other.n_bins} and {self.n_bins} bins")
        rows = [self.labels.add(v) for v in other.labels.values]
        cols = [self.attributes.add(v) for v in other.attributes.names()]
        self.resize()
        self.class_weight[rows] += other.class_weight
        for i, c in enumerate(rows):
            for j, a in enumerate(cols):
                held = np.flatnonzero(other.counts[i, j])
                if len(held):
                    self._place(c, a, int(other.exponent[i, j]), other.origin[i, j] + held,
                                other.counts[i, j, held])
        if rows and cols:
            om = other.moments
            self.moments.combine(om.weight, om.mean, om.m2, np.array(rows), np.array(cols))
        self.version += 1
        return self

    def decay(self, factor: float) -> None:
        check_decay_factor(factor)
        self.class_weight *= factor
        self.counts *= factor
        self.moments.decay(factor)
        self.version += 1

    # -- reading --------------------------------------------------------------------------------
    def bins(self, c: int, a: int) -> tuple[np.ndarray, np.ndarray]:
        """(centres, counts) of cell (c, a)'s bins."""
        e = int(self.exponent[c, a])
        centres = np.ldexp(self.origin[c, a] + np.arange(self.n_bins) + 0.5, e)
        return centres, self.counts[c, a]

    def canonical(self) -> dict[tuple[Any, Any], tuple[int, dict[int, float]]]:
        """Cell (label, attribute) → (exponent, {bin index: count}): equal for equal multisets
        of values, whatever the order or the batching they were learned in."""
        out = {}
        for c, label in enumerate(self.labels.values):
            for a, name in enumerate(self.attributes.names()):
                held = np.flatnonzero(self.counts[c, a])
                if len(held):
                    out[(label, name)] = (int(self.exponent[c, a]), dict(zip(
                        (self.origin[c, a] + held).tolist(), self.counts[c, a, held].tolist(),
                        strict=True)))
        return out

    # -- persistence ----------------------------------------------------------------------------
    def to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        self.resize()
        meta = {"labels": self.labels.to_json(), "attributes": self.attributes.to_json(),
                "n_bins": self.n_bins}
        m = self.moments
        return meta, {"class_weight": self.class_weight, "moment_weight": m.weight,
                      "moment_mean": m.mean, "moment_m2": m.m2, "exponent": self.exponent,
                      "origin": self.origin, "bin_counts": self.counts}

    @classmethod
    def from_state(cls, meta: Mapping[str, Any], arrays: Mapping[str, np.ndarray]
                   ) -> BinnedDensity:
        s = cls(int(meta["n_bins"]))
        s.labels = Domain.from_json(meta["labels"], "label")
        s.attributes = Domain.from_json(meta["attributes"], "attribute name")
        k, p = len(s.labels), len(s.attributes)
        expected = {"class_weight": (k,), "moment_weight": (k, p), "moment_mean": (k, p),
                    "moment_m2": (k, p), "exponent": (k, p), "origin": (k, p),
                    "bin_counts": (k, p, s.n_bins)}
        for name, shape in expected.items():
            if name not in arrays or tuple(arrays[name].shape) != shape:
                got = tuple(arrays[name].shape) if name in arrays else "nothing"
                raise ValueError(f"array {name!r}: expected shape {shape}, got {got}")
        s.class_weight = np.array(arrays["class_weight"], dtype=np.float64)
        s.moments.weight = np.array(arrays["moment_weight"], dtype=np.float64)
        s.moments.mean = np.array(arrays["moment_mean"], dtype=np.float64)
        s.moments.m2 = np.array(arrays["moment_m2"], dtype=np.float64)
        s.exponent = np.array(arrays["exponent"], dtype=np.int64)
        s.origin = np.array(arrays["origin"], dtype=np.int64)
        s.counts = np.array(arrays["bin_counts"], dtype=np.float64)
        return s

