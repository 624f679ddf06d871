"""Fisher's linear discriminant as a streaming river transformer."""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np
from river import base
from scipy.linalg import eigh

from streamnb.stats.cache import StateCache
from streamnb.stats.covariance import ClassCovariance
from streamnb.stats.encoder import encode
from streamnb.stats.schema import InvalidRecord

__all__ = ["FisherDiscriminant"]


class FisherDiscriminant(base.SupervisedTransformer):
    """Project numeric records on Fisher's discriminant directions, learned from streaming
    moments.

    The directions a maximise aᵀ S_B a / aᵀ S_W a: the generalised eigenproblem
    S_B a = λ S_W a (``scipy.linalg.eigh``), with S_W the pooled within-class scatter and S_B
    the between-class scatter, both read from a
    :class:`~streamnb.stats.covariance.ClassCovariance` (so it merges and decays like the
    models). The eigenvectors (sign: largest component positive) are recomputed once per state
    version, O(p³). A missing value is
    replaced by the overall mean (it contributes nothing). S_W is regularised by ε·tr(S_W)/p·I
    (ε = 10⁻⁹) so that the problem is definite.

    Parameters
    ----------
    n_components
        Directions kept (default: min(k − 1, p)), largest λ first.

    Examples
    --------
    Two classes that differ along x only: S_W = diag(4, 1), S_B = diag(16, 0), so the single
    direction is a = (½, 0) (normalised so that aᵀ S_W a = 1): the output is x / 2.

    >>> from streamnb.features.fisher import FisherDiscriminant
    >>> fisher = FisherDiscriminant()
    >>> for x, y in [((0, 0), "a"), ((2, 1), "a"), ((4, 1), "b"), ((6, 0), "b")]:
    ...     fisher.learn_one({"x": float(x[0]), "y": float(x[1])}, y)
    >>> a = fisher.transform_one({"x": 2.0, "y": 0.0})["fisher_0"]
    >>> b = fisher.transform_one({"x": 4.0, "y": 0.0})["fisher_0"]
    >>> round(b - a, 3)   # moving x by 2 moves the output by 2/2
    1.0

    References
    ----------
    S. Jaroszewicz, *Bayesian classification* (lecture notes): Fisher's discriminant.
    R. A. Fisher, "The use of multiple measurements in taxonomic problems" (1936).

    """

    def __init__(self, n_components: int | None = None) -> None:
        if n_components is not None and not (isinstance(n_components, numbers.Integral)
                                             and not isinstance(n_components, bool)
                                             and n_components >= 1):
            raise ValueError(f"n_components must be None or an integer >= 1, got "
                             f"{n_components!r}")
        self.n_components = n_components
        self.stats = ClassCovariance()
        self.n_learned = 0
        self._cache = StateCache()

    def learn_one(self, x: Mapping, y: Any) -> None:
        record = f"record {self.n_learned + 1}"
        if y is None or (isinstance(y, float) and not np.isfinite(y)):
            raise InvalidRecord(record, "label", f"label {y!r} is not a class")
        attributes = self.stats.attributes
        vector = encode(attributes, x, record, grow=True).vector(len(attributes))
        slots = np.flatnonzero(~np.isnan(vector))
        self.stats.update(self.stats.labels.add(y), slots, vector[slots])
        self.n_learned += 1

    def merge(self, other: FisherDiscriminant) -> FisherDiscriminant:
        self.stats.merge(other.stats)
        self.n_learned += other.n_learned
        return self

    def decay(self, factor: float) -> None:
        self.stats.decay(factor)

    def _directions(self) -> tuple[np.ndarray, np.ndarray]:
        stats = self.stats
        return self._cache.get("directions", (stats, stats.version), self._compute_directions)

    def _compute_directions(self) -> tuple[np.ndarray, np.ndarray]:
        s = self.stats
        p = s.n_attributes
        within, between = s.within_scatter(), s.between_scatter()
        scale = float(np.trace(within)) / p if p else 1.0
        within = within + 1e-9 * (scale if scale > 0 else 1.0) * np.eye(p)
        vectors, order = np.zeros((p, 0)), np.zeros(0, dtype=np.int64)
        if p:
            # canonical attribute order and sign (largest component positive), so that the
            # output does not depend on the order attributes first appeared in
            names = s.attributes.names()
            canon = np.array(sorted(range(p), key=lambda j: (type(names[j]).__name__,
                                                             repr(names[j]))))
            ix = np.ix_(canon, canon)
            values, found = eigh(between[ix], within[ix])
            order = np.argsort(values)[::-1]
            vectors = np.empty_like(found)
            vectors[canon] = found
            big = np.argmax(np.abs(found), axis=0)
            vectors *= np.where(found[big, np.arange(p)] < 0, -1.0, 1.0)
        m = self.n_components or max(min(s.n_classes - 1, p), 1 if p else 0)
        w = s.weight.sum(axis=0)
        grand = np.diagonal((w * s.mean).sum(axis=0) / np.where(w > 0, w, 1.0)).copy()
        return vectors[:, order[:m]], grand

    def transform_one(self, x: Mapping) -> dict[str, float]:
        attributes = self.stats.attributes
        vector = encode(attributes, x, "record to transform", grow=False).vector(len(attributes))
        directions, grand = self._directions()
        if not directions.shape[0]:
            return {}
        vector = np.where(np.isnan(vector), grand, vector)
        out = vector @ directions
        return {f"fisher_{i}": float(v) for i, v in enumerate(out)}
