"""Per-class second-order (and Ledoit–Wolf fourth-order) moments of numeric attribute vectors.

The sufficient statistics of the Gaussian discriminants (LDA, QDA) and of Fisher's discriminant:
per class ``c`` and attribute pair ``(i, j)``, over the class-c records in which *both* i and j
were observed (pairwise-complete, so a missing value costs only its own pairs; with complete
records every pair sees the same records and these are the ordinary count, mean vector and
co-moment matrix):

==============  =========================================================================
``weight``      W_ij = Σ 1 (decayed: Σ w), the records that observed i and j
``mean``        M_ij = mean of x_i over those records (M_ii is attribute i's class mean)
``comoment``    C_ij = Σ a b, with a = x_i − M_ij and b = x_j − M_ji (Σ/W = covariance)
``square``      V_ij = Σ a²   (V_ii = C_ii; off the diagonal, a² over pair ij's records)
``cube``        T_ij = Σ a² b
``fourth``      Q_ij = Σ a² b²
==============  =========================================================================

plus ``class_weight[c]``, the class's records (with or without numeric values): its prior.

V, T and Q exist only for the Ledoit–Wolf shrinkage intensity: its β̄² term is
(1/n²) Σ_k ‖x_k x_kᵀ − S‖²_F = (1/n²) Σ_ij (Q_ij − n S_ij²) (x_k centred), which the second
moments alone cannot give. Keeping Q as a central sum (not Σ x_i² x_j², which cancels
catastrophically) needs T and V to move it to a new centre, hence the three.

Updates are Chan, Golub & LeVeque's pairwise formula extended to third and fourth order: a part
centred on its own means (Σa = Σb = 0) is moved to the combined means by α = M − M_part
(attribute i of pair ij) and β = αᵀ (attribute j):

    C' = C + W αβ
    V' = V + W α²
    T' = T − βV − 2αC − W α²β
    Q' = Q − 2βT − 2αTᵀ + β²V + α²Vᵀ + 4αβC + W α²β²

and the moved parts add. ``update`` (one record) merges a part of weight one (the kernel
``covariance_add_one`` of streamnb/_accel, C when built); ``update_many``
computes each (class, missing-pattern) group's central sums in two passes and merges them; so
both give the same statistics up to rounding, ``merge`` is exact (the statistics of the
concatenated streams), and ``decay(f)`` scales everything but the means by f (exponentially
weighted moments). A record costs O(p²), a class's derived covariance O(p²), never a re-scan.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from streamnb._accel.kernels import covariance_add_one
from streamnb.stats.domain import Domain
from streamnb.stats.forgetting import check_decay_factor

__all__ = ["ClassCovariance", "ledoit_wolf_intensity"]

_SUMS = ("comoment", "square", "cube", "fourth")
_ARRAYS = ("weight", "mean", *_SUMS)


def _shifted(w: np.ndarray, c: np.ndarray, v: np.ndarray, t: np.ndarray, q: np.ndarray,
             alpha: np.ndarray) -> tuple[np.ndarray, ...]:
    """Central sums of a part (centred on its own pair means) about means moved by ``alpha``
    (the module docstring's formulas; ``alpha`` and the sums are (..., p, p))."""
    beta = np.swapaxes(alpha, -1, -2)
    ab = alpha * beta
    a2 = alpha * alpha
    c2 = c + w * ab
    v2 = v + w * a2
    t2 = t - beta * v - 2.0 * alpha * c - w * a2 * beta
    q2 = (q - 2.0 * beta * t - 2.0 * alpha * np.swapaxes(t, -1, -2) + beta * beta * v
          + a2 * np.swapaxes(v, -1, -2) + 4.0 * ab * c + w * a2 * beta * beta)
    return c2, v2, t2, q2


def _combine(a: tuple[np.ndarray, ...], b: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
    """(W, M, C, V, T, Q) of the union of two parts, elementwise (Chan et al.)."""
    w1, m1, *s1 = a
    w2, m2, *s2 = b
    w = w1 + w2
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(w > 0, w2 / np.where(w > 0, w, 1.0), 0.0)
    mean = m1 + (m2 - m1) * share
    mean = np.where(w > 0, mean, 0.0)
    moved1 = _shifted(w1, *s1, mean - m1)
    moved2 = _shifted(w2, *s2, mean - m2)
    return (w, mean, *(x + y for x, y in zip(moved1, moved2, strict=True)))


def _block(values: np.ndarray) -> tuple[np.ndarray, ...]:
    """(W, M, C, V, T, Q) of a block of complete rows ``values`` (n, q), two passes."""
    n, q = values.shape
    centre = values.mean(axis=0)
    d = values - centre
    d2 = d * d
    ones = np.ones((q, q))
    return (n * ones, centre[:, None] * ones, d.T @ d, d2.sum(axis=0)[:, None] * ones,
            d2.T @ d, d2.T @ d2)


def ledoit_wolf_intensity(weight: np.ndarray, cov: np.ndarray, fourth: np.ndarray) -> float:
    """Ledoit & Wolf's (2004) shrinkage intensity towards (tr S / p)·I, in [0, 1].

    ``cov`` is the ML covariance S, ``fourth`` the matrix of sums Q_ij = Σ a²b² and ``weight``
    the records W_ij behind each pair (all n with complete records). With μ = tr S / p:
    δ² = ‖S − μI‖²/p, β̄² = Σ_ij (Q_ij/W_ij − S_ij²) / (W_ij p), α = min(β̄², δ²) / δ²
    (0 if β̄² = 0): scikit-learn's ``ledoit_wolf_shrinkage`` on the same (complete) records
    (Ledoit & Wolf, Lemmas 3.2–3.4, with their normalised Frobenius norm).
    """
    p = cov.shape[0]
    seen = weight > 0
    if p == 0 or not seen.any():
        return 0.0
    mu = float(np.trace(cov)) / p
    delta = float(np.sum(cov * cov) - 2.0 * mu * np.trace(cov) + p * mu * mu) / p
    w = np.where(seen, weight, 1.0)
    beta = float(np.sum(np.where(seen, (fourth / w - cov * cov) / w, 0.0))) / p
    beta = min(max(beta, 0.0), delta)
    return 0.0 if beta == 0.0 else beta / delta


class ClassCovariance:
    """Per-class pairwise-complete moments up to fourth order over growing attributes/classes.

    ``attributes`` and ``labels`` are :class:`~streamnb.stats.Domain` s (indices never change);
    arrays are ``class_weight`` (k,) and ``weight``, ``mean``, ``comoment``, ``square``,
    ``cube``, ``fourth`` (k, p, p). ``version`` is bumped by every change, so derived matrices
    (covariances, Cholesky factors) can be cached per version.

    Examples
    --------
    >>> s = ClassCovariance()
    >>> slots = [s.attributes.add("x"), s.attributes.add("y")]
    >>> s.update(s.labels.add("a"), slots, [1.0, 2.0])
    >>> s.update(s.labels.add("a"), slots, [3.0, 6.0])
    >>> s.mean[0].diagonal().tolist(), s.covariance(0).tolist()   # (x − x̄)(x − x̄)ᵀ / 2
    ([2.0, 4.0], [[1.0, 2.0], [2.0, 4.0]])

    """

    def __init__(self) -> None:
        self.labels = Domain()
        self.attributes = Domain()
        self.class_weight = np.zeros(0)
        for name in _ARRAYS:
            setattr(self, name, np.zeros((0, 0, 0)))
        self.version = 0

    @property
    def n_classes(self) -> int:
        return len(self.class_weight)

    @property
    def n_attributes(self) -> int:
        return self.weight.shape[1]

    def _parts(self, c: Any = slice(None)) -> tuple[np.ndarray, ...]:
        return tuple(getattr(self, name)[c] for name in _ARRAYS)

    def resize(self) -> None:
        """Grow the arrays to the current ``labels`` and ``attributes`` (zeros for new cells)."""
        k, p = len(self.labels), len(self.attributes)
        k0, p0 = self.n_classes, self.n_attributes
        if (k, p) == (k0, p0):
            return
        grown = np.zeros(k)
        grown[:k0] = self.class_weight
        self.class_weight = grown
        for name in _ARRAYS:
            array = np.zeros((k, p, p))
            array[:k0, :p0, :p0] = getattr(self, name)
            setattr(self, name, array)

    # -- learning -------------------------------------------------------------------------------
    def update(self, c: int, slots: Sequence[int] | None, values: Sequence[float]) -> None:
        """Add one record of class ``c`` with ``values`` for attributes ``slots`` (others
        missing; ``None``: every attribute, in order); grows the arrays if ``c`` or a slot is
        new."""
        self.resize()
        x = np.array(values, dtype=np.float64)
        if slots is None and len(x) != self.n_attributes:
            raise ValueError(f"{len(x)} values for {self.n_attributes} attributes")
        self.class_weight[c] += 1.0
        if slots is None or (len(slots) == self.n_attributes
                             and np.array_equal(slots, np.arange(len(slots)))):
            if len(x):  # a complete record in slot order: the class's (p, p) slices, in place
                covariance_add_one(self.weight[c], self.mean[c], self.comoment[c],
                                   self.square[c], self.cube[c], self.fourth[c], x)
        elif len(slots):
            ix = np.ix_(slots, slots)
            current = [a[c][ix] for a in self._parts()]  # copies, contiguous
            covariance_add_one(*current, x)
            for name, value in zip(_ARRAYS, current, strict=True):
                getattr(self, name)[c][ix] = value
        self.version += 1

    def update_many(self, classes: np.ndarray, values: np.ndarray) -> None:
        """Add a batch: ``values`` (n, p) with NaN for missing, ``classes`` (n,) indices.

        Rows are grouped by (class, pattern of observed attributes); each group's central sums
        come from two passes over its rows and are merged in (Chan), so the result equals
        ``update`` on every row up to rounding."""
        self.resize()
        classes = np.asarray(classes, dtype=np.int64)
        self.class_weight += np.bincount(classes, minlength=self.n_classes)
        if not values.size:
            self.version += 1
            return
        observed = ~np.isnan(values)
        patterns, inverse = np.unique(np.column_stack([classes, observed]), axis=0,
                                      return_inverse=True)
        for g, pattern in enumerate(patterns):
            c, mask = int(pattern[0]), pattern[1:].astype(bool)
            if not mask.any():
                continue
            slots = np.flatnonzero(mask)
            rows = values[np.ix_(inverse.ravel() == g, slots)]
            ix = np.ix_(slots, slots)
            current = tuple(a[c][ix] for a in self._parts())
            for name, value in zip(_ARRAYS, _combine(current, _block(rows)), strict=True):
                getattr(self, name)[c][ix] = value
        self.version += 1

    # -- monoid operations ----------------------------------------------------------------------
    def merge(self, other: ClassCovariance) -> ClassCovariance:
        """Add ``other``'s records (labels and attributes reconciled by value). Exact: the
        statistics of the two streams concatenated, up to rounding. Returns ``self``."""
        rows = np.array([self.labels.add(v) for v in other.labels.values], dtype=np.int64)
        cols = np.array([self.attributes.add(v) for v in other.attributes.names()],
                        dtype=np.int64)
        self.resize()
        self.class_weight[rows] += other.class_weight
        if len(rows) and len(cols):
            ix = np.ix_(rows, cols, cols)
            current = tuple(a[ix] for a in self._parts())
            for name, value in zip(_ARRAYS, _combine(current, other._parts()), strict=True):
                getattr(self, name)[ix] = value
        self.version += 1
        return self

    def decay(self, factor: float) -> None:
        """Multiply every weight and central sum by ``factor`` in (0, 1] (means unchanged)."""
        check_decay_factor(factor)
        self.class_weight *= factor
        for name in ("weight", *_SUMS):
            getattr(self, name)[...] *= factor
        self.version += 1

    def copy(self) -> ClassCovariance:
        meta, arrays = self.to_state()
        return ClassCovariance.from_state(meta, arrays)

    # -- derived quantities ---------------------------------------------------------------------
    def means(self) -> np.ndarray:
        """(k, p) class means (0 where a class never observed an attribute)."""
        return np.diagonal(self.mean, axis1=1, axis2=2).copy()

    def covariance(self, c: int, ddof: int = 0) -> np.ndarray:
        """Class ``c``'s covariance C / (W − ddof) (0 for pairs with W ≤ ddof)."""
        w = self.weight[c] - ddof
        return np.where(w > 0, self.comoment[c] / np.where(w > 0, w, 1.0), 0.0)

    def within_scatter(self) -> np.ndarray:
        """Pooled within-class scatter S_W = Σ_c C_c (p, p)."""
        return self.comoment.sum(axis=0)

    def pooled_covariance(self) -> np.ndarray:
        """S_W divided pairwise by the records that observed each pair: with complete records
        S_W / N, the maximum-likelihood shared covariance of LDA."""
        w = self.weight.sum(axis=0)
        return np.where(w > 0, self.within_scatter() / np.where(w > 0, w, 1.0), 0.0)

    def between_scatter(self) -> np.ndarray:
        """Between-class scatter S_B = Σ_c W_c (μ_c − μ)(μ_c − μ)ᵀ (pairwise), where μ is the
        weighted mean of the class means; S_W + S_B is the total scatter of all records."""
        w = self.weight
        total = w.sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            grand = np.where(total > 0, (w * self.mean).sum(axis=0) / np.where(
                total > 0, total, 1.0), 0.0)
        dev = self.mean - grand
        return (w * dev * np.swapaxes(dev, 1, 2)).sum(axis=0)

    def ledoit_wolf(self, c: int | None = None) -> float:
        """Ledoit–Wolf intensity of class ``c``'s ML covariance, or (``c`` None) of the pooled
        covariance, i.e. of all records centred on their own class's mean."""
        if c is None:
            return ledoit_wolf_intensity(self.weight.sum(axis=0), self.pooled_covariance(),
                                         self.fourth.sum(axis=0))
        return ledoit_wolf_intensity(self.weight[c], self.covariance(c), self.fourth[c])

    # -- persistence ----------------------------------------------------------------------------
    def to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        self.resize()
        meta = {"labels": self.labels.to_json(), "attributes": self.attributes.to_json()}
        arrays = {"class_weight": self.class_weight,
                  **{name: getattr(self, name) for name in _ARRAYS}}
        return meta, arrays

    @classmethod
    def from_state(cls, meta: Mapping[str, Any], arrays: Mapping[str, np.ndarray]
                   ) -> ClassCovariance:
        stats = cls()
        stats.labels = Domain.from_json(meta["labels"], "label")
        stats.attributes = Domain.from_json(meta["attributes"], "attribute name")
        k, p = len(stats.labels), len(stats.attributes)
        expected = {"class_weight": (k,), **{name: (k, p, p) for name in _ARRAYS}}
        for name, shape in expected.items():
            if name not in arrays or tuple(arrays[name].shape) != shape:
                got = tuple(arrays[name].shape) if name in arrays else "nothing"
                raise ValueError(f"array {name!r}: expected shape {shape}, got {got}")
            setattr(stats, name, np.array(arrays[name], dtype=np.float64))
        return stats
