"""Shared mechanics of the Gaussian discriminants (LDA, QDA): learning, shrinkage, Cholesky
factors cached per state version, prediction with missing values marginalised.

A model's state is a :class:`~streamnb.stats.covariance.ClassCovariance` (per class counts,
means and co-moments); the discriminant of class y (Jaroszewicz, *Bayesian classification*,
"discriminant functions"; Hastie, Tibshirani & Friedman eq. 4.12) is

    d_y(x) = −½ (x − μ_y)ᵀ Σ_y⁻¹ (x − μ_y) − ½ log |Σ_y| − (p/2) log 2π + log π_y

and P(y | x) = softmax_y d_y(x). Subclasses say what Σ_y is (pooled for LDA, per class for QDA).

Conventions (documented in docs/continuous.md):

- **Estimates**: μ_y the class mean, Σ the maximum-likelihood covariance (divide by the records,
  as scikit-learn), π_y = N(y)/N.
- **Shrinkage** ``α`` (the lecture's Σ_s = (1 − α) Σ̂ + α (tr Σ̂ / p) I): ``None`` (0), a number
  in [0, 1], or ``"ledoit-wolf"``: Ledoit & Wolf's intensity computed from the same moments (the
  statistics keep the needed fourth-order sums).
- **Missing values**: a record's missing attributes are marginalised out (exact for a
  Gaussian: drop their rows and columns of μ and Σ); an attribute enters the discriminants once
  every class has observed it (before that it is marginalised for all classes alike). Learning
  uses the pairwise-complete statistics.
- **Singular covariances**: the Cholesky factor is taken of the correlation matrix R plus
  ε I, with the smallest ε in 0, 10⁻¹⁰, …, 1 that leaves no pivot² below 10⁻¹⁰ (scale-free;
  see :func:`cholesky_with_jitter`).
- **Caching**: everything that depends only on the state (the shrunk covariances, their
  Cholesky factors, precision matrices and log-determinants, the means and log-priors) is
  derived, never state, and computed once per state version; a missing-value pattern's
  marginal factors once per (version, pattern). Prediction then costs O(k·p²) per record,
  learning O(p²).
- **One by one**: without shrinkage, ``learn_one`` of a complete record carries the cached
  precision matrices and log-determinants over to the new state by a rank-one update
  (:func:`rank_one_update`) where that gives the batch path's numbers (an unregularised
  factor, tr R⁻¹ ≤ 10⁶, a fresh factorisation every max(32, p) updates), so alternating
  ``predict_proba_one`` and ``learn_one`` costs O(k·p²) per record; ``learn_one`` of the
  record just predicted reuses its encoding (see ``_encode_to_learn``). Shrinkage changes the
  covariance in every direction with every record (tr Σ moves the identity term): those
  models refactorise once per state version a prediction asks for.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from operator import is_
from typing import Any, ClassVar

import numpy as np
from scipy.linalg import solve_triangular
from scipy.linalg.blas import dtrsv
from scipy.linalg.lapack import dtrtri

from streamnb.models.base import CountClassifier
from streamnb.models.factors import Factors
from streamnb.models.params import OneOf, Real
from streamnb.stats.cache import StateCache
from streamnb.stats.codec import normalize_label
from streamnb.stats.covariance import ClassCovariance, ledoit_wolf_intensity
from streamnb.stats.encoder import encode, encode_batch
from streamnb.stats.schema import InvalidRecord, RecordName

__all__ = ["GaussianDiscriminant", "cholesky_with_jitter", "rank_one_update", "shrink"]

_LOG_2PI = math.log(2.0 * math.pi)
_JITTER = (0.0, 1e-10, 1e-8, 1e-6, 1e-4, 1e-2, 1.0)
_MIN_PIVOT = 1e-10
_MAX_PATTERNS = 64
# tr R⁻¹ (R the correlation matrix) above which the precision matrices are not used: every
# pivot² of R's factor is then ≥ 1/tr R⁻¹ = 10⁻⁶, far from the 10⁻¹⁰ that triggers the jitter,
# and rounding in δᵀ Σ⁻¹ δ stays below ~10⁻¹⁰ relative
_MAX_TRACE = 1e6
# rank-one updates between fresh factorisations (at least p of them, so that the O(p³)
# factorisation costs O(p²) per record amortised): bounds the drift of repeated updates
_REFRESH = 32
# rows up to which a triangular solve takes them one at a time (see _solve)
_VECTOR_SOLVES = 8


def rank_one_update(precision: np.ndarray, logdet: float, diag: np.ndarray, u: np.ndarray,
                    scale: float) -> tuple[np.ndarray, float, np.ndarray]:
    """Σ⁻¹, log |Σ| and diag Σ of Σ' = scale · (Σ + u uᵀ), from those of Σ, in O(p²):
    Sherman–Morrison, (Σ + u uᵀ)⁻¹ = Σ⁻¹ − (Σ⁻¹u)(Σ⁻¹u)ᵀ / (1 + uᵀΣ⁻¹u), and the matrix
    determinant lemma, |Σ + u uᵀ| = |Σ| (1 + uᵀΣ⁻¹u). Adding a record to a class moves the ML
    covariance exactly so (see ``GaussianDiscriminant._updated_terms``); the denominator is
    ≥ 1, so the update is stable."""
    pu = precision @ u
    gain = 1.0 + float(u @ pu)
    updated = (precision - np.outer(pu, pu / gain)) / scale
    return (updated, logdet + math.log(gain) + len(u) * math.log(scale),
            scale * (diag + u * u))


def _solve(factor: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """L⁻¹ rowsᵀ (q, m) for a lower triangular L (q, q): a few rows one at a time (BLAS level
    2, never threaded: a multi-column solve of a small matrix can wait milliseconds for BLAS
    threads on a busy host), many in one solve."""
    if len(rows) <= _VECTOR_SOLVES:
        out = np.empty((factor.shape[0], len(rows)))
        for i, row in enumerate(rows):
            out[:, i] = dtrsv(factor, row, lower=1)
        return out
    return solve_triangular(factor, rows.T, lower=True)


def shrink(sigma: np.ndarray, alpha: float) -> np.ndarray:
    """(1 − α) Σ + α (tr Σ / p) I (the lecture's shrinkage towards a scaled identity)."""
    p = sigma.shape[0]
    if alpha == 0.0 or p == 0:
        return sigma
    return (1.0 - alpha) * sigma + alpha * (np.trace(sigma) / p) * np.eye(p)


def cholesky_with_jitter(sigma: np.ndarray) -> tuple[np.ndarray, float, bool]:
    """Lower Cholesky factor L of Σ (regularised only if singular), log |L Lᵀ|, and whether
    L Lᵀ = Σ (no regularisation or scale substitution was needed).

    The factor is taken of the correlation matrix R = D⁻¹ Σ D⁻¹ (D = the standard deviations),
    so the regularisation is scale-free: R + ε I for the smallest ε in 0, 10⁻¹⁰, 10⁻⁸, …, 1
    whose factor has no pivot² below 10⁻¹⁰ (an exactly collinear attribute set, whose factor
    would otherwise be rounding noise); if none works (an indefinite pairwise-complete
    estimate) R's eigenvalues are clipped at 10⁻⁶. Then L = D L_R. An attribute with (relatively,
    < 10⁻¹² of the largest) zero variance gets the scale √(tr Σ / p) (1 if that is 0) in D, and
    R is clipped to [−1, 1] (pairwise-complete estimates can leave it).
    """
    p = sigma.shape[0]
    if p == 0:
        return np.zeros((0, 0)), 0.0, True
    diag = np.diagonal(sigma).copy()
    scale = float(diag.sum()) / p
    fallback = math.sqrt(scale) if scale > 0 else 1.0
    varies = diag > 1e-12 * float(diag.max())
    d = np.where(varies, np.sqrt(np.where(varies, diag, 1.0)), fallback)
    r = np.clip(sigma / np.outer(d, d), -1.0, 1.0)  # pairwise-complete estimates can exceed 1
    factor, exact = None, False
    for eps in _JITTER:
        try:
            f = np.linalg.cholesky(r + eps * np.eye(p) if eps else r)
        except np.linalg.LinAlgError:
            continue
        pivots = np.diagonal(f)
        if np.all(np.isfinite(pivots)) and float(np.min(pivots)) ** 2 >= _MIN_PIVOT:
            factor, exact = f, eps == 0.0 and bool(varies.all())
            break
    if factor is None:
        values, vectors = np.linalg.eigh(r)
        floor = 1e-6 * max(float(values.max()), 1.0)
        factor = np.linalg.cholesky((vectors * np.maximum(values, floor)) @ vectors.T
                                    + floor * np.eye(p))
    logdet = 2.0 * float(np.log(d).sum() + np.log(np.diagonal(factor)).sum())
    return d[:, None] * factor, logdet, exact


def _plain(precision: np.ndarray, diag: np.ndarray) -> bool:
    """Whether :func:`cholesky_with_jitter` factors the covariance of diagonal ``diag`` and
    inverse ``precision`` exactly and far from its regularisation: every attribute varies and
    tr R⁻¹ ≤ ``_MAX_TRACE`` (so λ_min(R), a lower bound of every pivot², is ≥ 10⁻⁶)."""
    return bool(diag.min() > 1e-12 * diag.max()) and float(
        np.dot(np.diagonal(precision), diag)) <= _MAX_TRACE


class GaussianDiscriminant(CountClassifier):
    """Base of :class:`~streamnb.LDA` and :class:`~streamnb.QDA` (see the module docstring)."""

    _statistics = ClassCovariance
    _continuous = True

    _parameter_constraints: ClassVar[dict[str, list]] = {
        "shrinkage": [None, OneOf(("ledoit-wolf",)), Real(0, 1)]}

    def __init__(self, shrinkage: float | str | None = None, half_life: float | None = None,
                 drift_detector: Any = None, drift_decay: float = 0.5) -> None:
        self.shrinkage = shrinkage
        self._adapt(half_life, drift_detector, drift_decay)
        self.stats = ClassCovariance()
        self.factors = Factors()
        self.n_learned = 0
        self._cache = StateCache()

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"shrinkage": "ledoit-wolf"}
        yield {"shrinkage": 0.25}

    # -- learning -------------------------------------------------------------------------------
    def _label(self, y: Any, record: str) -> Any:
        try:
            return normalize_label(y)
        except (TypeError, ValueError) as exc:
            raise InvalidRecord(record, "label", str(exc)) from None

    def learn_one(self, x: Mapping, y: Any) -> None:
        """Add one record: O(p²). Invalid input raises :class:`~streamnb.InvalidRecord` and
        changes nothing."""
        record = f"record {self.n_learned + 1}"
        label = self._label(y, record)
        vector = self._encode_learning(x, record, label)
        stats = self.stats
        terms = self._cache.peek("terms", (stats, stats.version))
        c = stats.labels.add(label)
        missing = np.isnan(vector)
        complete = not missing.any()
        if complete:
            stats.update(c, None, vector)
        else:
            slots = np.flatnonzero(~missing)
            stats.update(c, slots, vector[slots])
        self.n_learned += 1
        if terms is not None and complete:
            self._updated_terms(terms, c, vector)

    def _encode_learning(self, x: Mapping, record: str, label: Any) -> np.ndarray:
        """``x``'s numeric fields as a vector (attributes grown by their new names), its other
        fields counted by the factors: all or nothing (what a bad field registered is taken
        back). The caller adds the vector to the numeric block, which cannot fail."""
        attributes = self.stats.attributes
        size = len(attributes)
        numeric, other = self.factors.split_one(attributes, x, grow=True)
        vector = self._encode_to_learn(numeric, record)
        try:
            self.factors.learn_one(other, label, self.n_learned + 1)
        except BaseException:
            attributes.truncate(size)
            raise
        return vector

    def _encode_learning_many(self, X: Any, labels: Sequence) -> np.ndarray:
        """A batch's numeric fields as an (n, p) array, its other fields counted by the
        factors: all or nothing, as :meth:`_encode_learning`."""
        attributes = self.stats.attributes
        size = len(attributes)
        numeric, other = self.factors.split_many(attributes, X, grow=True)
        values = encode_batch(attributes, numeric, "row", grow=True).numeric_matrix(len(attributes))
        try:
            self.factors.learn_many(other, labels)
        except BaseException:
            attributes.truncate(size)
            raise
        return values

    def _encode_to_predict(self, x: Mapping) -> np.ndarray:
        """``x`` encoded over the known attributes, remembered for a ``learn_one`` of the same
        record (the prequential pattern: predict, then learn) when every field of it was a
        known attribute with a number, i.e. when learning would encode it the same."""
        attributes = self.stats.attributes
        vector = encode(attributes, x, "record to predict", grow=False).vector(len(attributes))
        if len(x) == np.count_nonzero(vector == vector):  # no NaN, no field left out
            self._cache.put("record", (), (attributes, tuple(x), tuple(x.values()), vector))
        return vector

    def _encode_to_learn(self, x: Mapping, record: str) -> np.ndarray:
        """``x`` encoded over the attributes (grown by its new names): the vector
        ``_encode_to_predict`` made of it, when the mapping holds the very same key and value
        objects (compared by identity, so a mapping changed in between, even to an equal value
        of another type, is encoded afresh) and the attributes are the ones it was encoded
        over; numbers are immutable, so equal identities mean equal encodings."""
        attributes = self.stats.attributes
        last = self._cache.peek("record", ())
        if last is not None:
            domain, keys, values, vector = last
            if (domain is attributes and len(vector) == len(attributes)
                    and isinstance(x, Mapping) and len(x) == len(keys)
                    and all(map(is_, x, keys)) and all(map(is_, x.values(), values))):
                return vector
        return encode(attributes, x, record, grow=True).vector(len(attributes))

    def learn_many(self, X: Any, y: Any) -> None:
        """Add a batch (DataFrame or sequence of mappings): the statistics of ``learn_one`` on
        each row, up to rounding. A bad row rejects the whole batch and changes nothing."""
        self.n_learned += len(self._learn_batch(X, y)[0])

    def _learn_batch(self, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
        """Add a batch to the statistics and factors (not to ``n_learned``), all or nothing:
        its rows' class indices and numeric matrix."""
        labels = self._labels(X, y)
        values = self._encode_learning_many(X, labels)
        add = self.stats.labels.add
        classes = np.array([add(v) for v in labels], dtype=np.int64)
        self.stats.update_many(classes, values)
        return classes, values

    def _labels(self, X: Any, y: Any) -> list:
        ys = list(y)
        if len(ys) != len(X):
            raise ValueError(f"{len(X)} records but {len(ys)} labels")
        # a bool, an int or an ASCII str is its own normal form (no NaN, no lone surrogate):
        # only the other labels, and the rows that go wrong, pay for normalising and naming
        return [v if type(v) is bool or type(v) is int or (type(v) is str and v.isascii())
                else self._label(v, RecordName("row", i)) for i, v in enumerate(ys)]

    def _check_many(self, X: Any, labels: list) -> Any:
        """Raise what ``learn_many`` of the batch would, changing nothing: a batch learned in
        pieces is refused whole. The batch as it was (its pieces encode their own rows)."""
        self._checked_values(X, labels)
        return X

    def _checked_values(self, X: Any, labels: list) -> np.ndarray:
        """:meth:`_check_many`, and the batch's numeric matrix over the attributes as learning
        it would grow them (those it registers here are taken back)."""
        labels = self._labels(X, labels)
        attributes = self.stats.attributes
        size = len(attributes)
        numeric, other = self.factors.split_many(attributes, X, grow=True)
        try:
            values = encode_batch(attributes, numeric, "row", grow=True).numeric_matrix(
                len(attributes))
        finally:
            attributes.truncate(size)
        self.factors.check_many(other, labels)
        return values

    # -- the factors beside the numeric block (models/factors.py) --------------------------------
    def _log_likelihood_one(self, x: Mapping) -> tuple[Any, Any] | None:
        self._check_record(x, "record to predict")
        if not self.stats.n_classes:
            return None
        numeric, other = self.factors.split_one(self.stats.attributes, x, grow=False)
        finite, zeros = self._numeric_log_likelihood_one(numeric)
        return self.factors.add_one(self.stats.labels.values, other, finite, zeros)

    def _joint_log_likelihood(self, records: Sequence[Mapping], where: str
                              ) -> tuple[np.ndarray, np.ndarray]:
        numeric, other = self.factors.split_many(self.stats.attributes, records, grow=False)
        finite, zeros = self._numeric_joint_log_likelihood(numeric, where)
        return self.factors.add_many(self.stats.labels.values, other, where, finite, zeros)

    def decay(self, factor: float) -> None:
        super().decay(factor)
        self.factors.decay(factor)

    def merge(self, other: CountClassifier) -> CountClassifier:
        factors = self.factors.merged(other.factors, self.stats.attributes,
                                      other.stats.attributes) if isinstance(
            other, GaussianDiscriminant) else self.factors
        super().merge(other)
        self.factors = factors
        return self

    def _extra_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        return self.factors.to_state()

    def _restore_extra(self, meta: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> None:
        self.factors = Factors.from_state(meta, arrays)

    # -- what a subclass defines ----------------------------------------------------------------
    def _covariances(self, active: np.ndarray) -> tuple[np.ndarray, bool]:
        """The (shrunk) covariances over ``active`` attributes, (k, a, a), and whether they are
        one shared matrix (LDA)."""
        raise NotImplementedError

    def _alpha(self, weight: np.ndarray, cov: np.ndarray, fourth: np.ndarray) -> float:
        if self.shrinkage is None:
            return 0.0
        if isinstance(self.shrinkage, str):
            return ledoit_wolf_intensity(weight, cov, fourth)
        return float(self.shrinkage)

    def _pooled(self, active: np.ndarray) -> np.ndarray:
        ix = np.ix_(active, active)
        s = self.stats
        cov = s.pooled_covariance()[ix]
        return shrink(cov, self._alpha(s.weight.sum(axis=0)[ix], cov, s.fourth.sum(axis=0)[ix]))

    # -- the per-state-version terms ------------------------------------------------------------
    def _updated_terms(self, terms: dict[str, Any], c: int, x: np.ndarray) -> None:
        """Carry the terms of the state before ``learn_one`` added the complete record ``x``
        to class ``c`` over to the new state by a rank-one update, when that is exact (see
        :func:`rank_one_update`); otherwise leave them, to be recomputed if a prediction asks.
        The terms belong to the cache alone, so they are updated in place and re-keyed."""
        s = self.stats
        active = terms["active"]
        if (not terms["rank_one"] or c >= len(terms["log_prior"]) or len(x) != len(active)
                or terms["updates"] >= max(_REFRESH, len(active))):
            return  # not exact, or due a fresh factorisation
        n_c = float(s.class_weight[c]) - 1.0  # the class's records before x
        m = 0 if terms["shared"] else c
        # Σ' = (W / (W + 1)) (Σ + u uᵀ): W the records behind Σ (all of them for the pooled
        # covariance, the class's own otherwise), u = (x − μ_c) √(n_c / ((n_c + 1) W))
        total = float(s.class_weight.sum())
        weight = total - 1.0 if terms["shared"] else n_c
        u = (x[active] - terms["means"][c]) * math.sqrt(n_c / ((n_c + 1.0) * weight))
        precision, logdet, diag = rank_one_update(terms["precisions"][m], terms["logdets"][m],
                                                  terms["diag"][m], u, weight / (weight + 1.0))
        if not _plain(precision, diag):
            return  # near the regularised regime: refactorised when a prediction asks
        terms["precisions"][m] = precision
        terms["logdets"][m] = logdet
        terms["diag"][m] = diag
        terms["means"][c] = np.diagonal(s.mean[c])[active]
        terms["log_prior"] = np.log(s.class_weight / total)
        terms.update(sigma=None, factors=None, patterns={}, updates=terms["updates"] + 1)
        self._cache.put("terms", (s, s.version), terms)

    def _terms(self) -> dict[str, Any]:
        """Means, covariances, Cholesky factors, log-determinants and log-priors; computed once
        per state version (one cache key: the statistics object and its version)."""
        stats = self.stats
        return self._cache.get("terms", (stats, stats.version), self._compute_terms)

    def _compute_terms(self) -> dict[str, Any]:
        s = self.stats
        diag = np.diagonal(s.weight, axis1=1, axis2=2)
        seen = np.flatnonzero((diag > 0).all(axis=0)) if s.n_classes else []
        # canonical order (by name), so that the factors, hence predictions, are the same
        # bits whatever order the attributes first appeared in: the statistics' cells are
        # updated elementwise and do not depend on it either
        names = s.attributes.names()
        active = np.array(sorted(seen, key=lambda j: (type(names[j]).__name__,
                                                      repr(names[j]))), dtype=np.int64)
        sigma, shared = self._covariances(active)
        factors, logdets, exact = [], [], True
        for c in range(1 if shared else s.n_classes):
            factor, logdet, plain = cholesky_with_jitter(sigma[c])
            factors.append(factor)
            logdets.append(logdet)
            exact &= plain
        total = float(s.class_weight.sum())
        with np.errstate(divide="ignore"):
            log_prior = np.log(s.class_weight / total) if total > 0 else np.zeros(
                s.n_classes)
        # the precision matrices, for the one-record path and the rank-one updates, only where
        # no regularisation was needed (there a prediction takes the factors: same numbers)
        a = len(active)
        diag = np.diagonal(sigma, axis1=1, axis2=2).copy()
        precisions = None
        if a and s.n_classes and exact:
            # LAPACK's triangular inverse: solve_triangular with an identity right-hand side
            # goes through trsm, orders of magnitude slower on small matrices
            inverses = [dtrtri(f, lower=1)[0] for f in factors]
            precisions = np.array([v.T @ v for v in inverses])
            if not all(_plain(v, d) for v, d in zip(precisions, diag, strict=True)):
                precisions = None
        complete = bool(np.all(s.weight == s.class_weight[:, None, None]))
        rank_one = (precisions is not None and complete and a == s.n_attributes
                    and self.shrinkage is None and bool(np.all(s.class_weight > 0))
                    and (shared or bool(np.all(s.class_weight > a))))
        return {"active": active, "means": s.means()[:, active], "sigma": sigma,
                "shared": shared, "factors": factors, "logdets": np.array(logdets),
                "log_prior": log_prior, "patterns": {}, "precisions": precisions,
                "diag": diag, "rank_one": rank_one, "updates": 0}

    def _sigma(self, terms: dict[str, Any]) -> np.ndarray:
        """The covariances of ``terms`` (recomputed from the state after rank-one updates)."""
        if terms["sigma"] is None:
            terms["sigma"] = self._covariances(terms["active"])[0]
        return terms["sigma"]

    def _pattern_factors(self, terms: dict[str, Any], observed: np.ndarray
                         ) -> tuple[list[np.ndarray], np.ndarray]:
        """Cholesky factors of the marginal covariances over ``observed`` (positions within the
        active attributes), cached per (state version, pattern)."""
        if observed.all():
            if terms["factors"] is None:  # after rank-one updates: a fresh factorisation
                terms["factors"] = [cholesky_with_jitter(m)[0] for m in self._sigma(terms)]
            return terms["factors"], terms["logdets"]
        patterns = terms["patterns"]
        key = observed.tobytes()
        if key not in patterns:
            if len(patterns) >= _MAX_PATTERNS:
                patterns.pop(next(iter(patterns)))
            ix = np.ix_(observed, observed)
            pairs = [cholesky_with_jitter(sigma[ix]) for sigma in self._sigma(terms)]
            patterns[key] = ([f for f, _, _ in pairs], np.array([d for _, d, _ in pairs]))
        return patterns[key]

    # -- prediction -----------------------------------------------------------------------------
    def _numeric_log_likelihood_one(self, x: Mapping) -> tuple[Any, Any] | None:
        """One record: with every active attribute observed, −½ δᵀ Σ⁻¹ δ from the precision
        matrices (O(k·p²), no factorisation); otherwise the batch path on one row."""
        self._check_record(x, "record to predict")
        if not self.stats.n_classes:
            return None
        terms = self._terms()
        vector = self._encode_to_predict(x)
        v = vector[terms["active"]]
        precisions = terms["precisions"]
        if precisions is None or np.isnan(v).any():
            finite, zeros = self._encoded_log_likelihood(terms, vector[None])
            return finite[0], zeros[0]
        d = v - terms["means"]
        if terms["shared"]:
            mahal = ((d @ precisions[0]) * d).sum(axis=1)
        else:
            mahal = np.einsum("ka,kab,kb->k", d, precisions, d)
        finite = terms["log_prior"] - 0.5 * (mahal + terms["logdets"] + len(v) * _LOG_2PI)
        finite, zeros = self._zero_classes(terms, finite[None])
        return finite[0], zeros[0]

    @staticmethod
    def _zero_classes(terms: dict[str, Any], finite: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray]:
        """A class decayed or merged to weight 0 (log prior −inf) as a zero factor."""
        empty = ~np.isfinite(terms["log_prior"])
        zeros = np.zeros(finite.shape, dtype=np.int64)
        zeros[:, empty] = 1
        finite[:, empty] = 0.0
        return finite, zeros

    def _numeric_joint_log_likelihood(self, records: Any, where: str
                                      ) -> tuple[np.ndarray, np.ndarray]:
        terms = self._terms()
        values = encode_batch(self.stats.attributes, records, where, grow=False).numeric_matrix(
            len(self.stats.attributes))
        return self._encoded_log_likelihood(terms, values)

    def _encoded_log_likelihood(self, terms: dict[str, Any], values: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
        k, n = self.stats.n_classes, values.shape[0]
        finite = np.tile(terms["log_prior"], (n, 1))
        active = terms["active"]
        if len(active) and n:
            x = values[:, active]
            observed = ~np.isnan(x)
            patterns, inverse = np.unique(observed, axis=0, return_inverse=True)
            inverse = inverse.ravel()
            for g, pattern in enumerate(patterns):
                if not pattern.any():
                    continue
                rows = np.flatnonzero(inverse == g)
                factors, logdets = self._pattern_factors(terms, pattern)
                d = x[np.ix_(rows, np.flatnonzero(pattern))]
                means = terms["means"][:, pattern]
                const = -0.5 * (logdets + pattern.sum() * _LOG_2PI)
                if terms["shared"]:
                    zx = _solve(factors[0], d)                                 # L⁻¹x  (q, m)
                    zm = _solve(factors[0], means)                             # L⁻¹μ_y (q, k)
                    mahal = ((zx * zx).sum(axis=0)[:, None] - 2.0 * zx.T @ zm
                             + (zm * zm).sum(axis=0)[None, :])
                    finite[rows] += -0.5 * mahal + const[0]
                else:
                    for c in range(k):
                        z = _solve(factors[c], d - means[c])
                        finite[rows, c] += -0.5 * (z * z).sum(axis=0) + const[c]
        return self._zero_classes(terms, finite)

    def _check_record(self, x: Any, where: str) -> None:
        if not isinstance(x, Mapping):
            raise InvalidRecord(where, None, f"expected a mapping of features, got "
                                f"{type(x).__name__}")

    # -- derived, for users ---------------------------------------------------------------------
    @property
    def means(self) -> dict[Any, dict[Any, float]]:
        """Class → attribute → mean."""
        s = self.stats
        m = s.means()
        return {label: dict(zip(s.attributes.names(), m[c].tolist(), strict=True))
                for c, label in enumerate(s.labels.values)}

    def covariance(self, label: Any | None = None) -> np.ndarray:
        """The covariance the model uses for class ``label`` (shrunk; the pooled one for LDA),
        over the attributes every class has observed, in ``stats.attributes`` order."""
        terms = self._terms()
        sigma = self._sigma(terms)
        if terms["shared"] or label is None:
            return sigma[0]
        return sigma[self.stats.labels.index[label]]

