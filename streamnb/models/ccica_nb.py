"""Naive Bayes on a class-conditional ICA representation (Bressan & Vitrià 2002).

Per class k the record is projected on that class's independent components
s = W_k (x − x̄_k) (eq. 3) and p(x | C_k) is the product of the components' marginal densities
(eq. 4), restricted to the ``n_features`` components of class k with the largest divergence
(eq. 10–12; by default chosen among the principal components, then rotated by ICA within them:
``reduction``). W_k = R_k V_k: V_k whitens class k (from its exact, mergeable moments,
:class:`~streamnb.stats.covariance.ClassCovariance`), R_k is the FastICA rotation of the whitened
class sample (a bounded per-class priority sample, :class:`~streamnb.stats.vector_sample.
ClassSample`). Whitening, rotation, marginal densities and selection are the *structure*: it is
re-learned on the project's one schedule (:func:`~streamnb.models.schedule.relearn_due`), when a
class or attribute appears, after ``merge``, and on demand (``relearn``). See docs/ccica.md.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from streamnb.models.discriminant import GaussianDiscriminant
from streamnb.models.factors import Factors
from streamnb.models.params import RELEARN_EVERY, Integer, OneOf, Real
from streamnb.models.schedule import relearn_due, relearn_pieces
from streamnb.stats.cache import StateCache
from streamnb.stats.covariance import ClassCovariance
from streamnb.stats.encoder import encode_batch
from streamnb.stats.kde import log_mixture_density, silverman_bandwidth
from streamnb.stats.persist import header_int
from streamnb.stats.values import RecordName
from streamnb.stats.vector_sample import ClassSample

__all__ = ["CCICANB", "fast_ica", "fit_gaussian_mixtures", "fit_kernel_densities"]

REPRESENTATIONS = ("cc-ica", "cc-pca", "ica", "original")
DENSITIES = ("mixture", "kde", "gaussian")
SELECTIONS = ("transformed", "divergence", "order")
REDUCTIONS = ("divergence", "none")
CONTRASTS = ("logcosh", "exp", "cube")
# Swain & Davis's transformed divergence 2 (1 − exp(−D/8)) with D ≈ 2 D' (D_ij = D'_ij + D'_ji,
# eq. 10): a pair's term is 1 − exp(−D'/_TRANSFORM_SCALE), the constant factor 2 dropped
_TRANSFORM_SCALE = 4.0
_LOG_2PI = math.log(2.0 * math.pi)
# eigenvalues below this fraction of a class's largest are dropped from its whitening (M_k < N,
# eq. 2): a direction in which the class does not vary has no density to estimate
_RANK_TOL = 1e-6
# FastICA rotates only the leading min(r, n / _PER_DIMENSION) whitened components of a sample of
# n records (ICA after a PCA reduction): with fewer records per dimension the fixed point is
# ill-determined (it then depends on rounding: batch and one-by-one learning would disagree)
_PER_DIMENSION = 5
# the shortest relaxed FastICA step (fast_ica) before giving up on a cycling fixed point
_MIN_STEP = 1.0 / 64
# records per prediction chunk: (records × classes × components × mixture terms) floats stay
# near _BUDGET (a kernel estimate has as many terms as its class sample has records)
_BUDGET = 1 << 21
# kernel-estimate bins per bandwidth h (Silverman §3.5, binned estimates). A kernel at the mean
# of its bin's values cancels their first-order error, so a bin of width δ changes the estimate
# at z bandwidths from it by a factor within 1 ± |z² − 1| δ²/(2h²): ±2.3 % at z = 2, δ = h/8
_KDE_BINS_PER_H = 8
_EM_ITER = 200
_STRUCTURE = ("centre", "unmixing", "valid", "selected", "log_jacobian", "mix_weight",
              "mix_mean", "mix_var", "divergence", "active")
# with reduction="divergence": the class-conditional principal components and their marginals,
# from which ``select`` rotates each class's selected subspace
_PCA_STRUCTURE = ("pca_unmixing", "pca_mix_weight", "pca_mix_mean", "pca_mix_var")


def _sym_decorrelate(w: np.ndarray) -> np.ndarray:
    """(W Wᵀ)^(−1/2) W: the closest orthogonal matrix (FastICA's symmetric decorrelation)."""
    values, vectors = np.linalg.eigh(w @ w.T)
    return (vectors / np.sqrt(np.maximum(values, 1e-300))) @ vectors.T @ w


def _contrast(fun: str, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """g(u) and g'(u) of FastICA's contrast G (Hyvärinen, Karhunen & Oja 2001, eq. 8.43–8.45)."""
    if fun == "logcosh":
        g = np.tanh(u)
        return g, 1.0 - g * g
    if fun == "exp":
        e = np.exp(-0.5 * u * u)
        return u * e, (1.0 - u * u) * e
    if fun == "cube":
        return u ** 3, 3.0 * u * u
    raise ValueError(f"unknown FastICA contrast {fun!r}")


def fast_ica(z: np.ndarray, w_init: np.ndarray, max_iter: int = 200, tol: float = 1e-4,
             fun: str = "logcosh") -> np.ndarray:
    """Symmetric FastICA (Hyvärinen, Karhunen & Oja 2001, §8.4.3) with G = log cosh on
    whitened data ``z`` (n, r): the orthogonal W (r, r) whose rows make W z maximally
    non-Gaussian. Fixed point W⁺ = E[g(Wz) zᵀ] − diag(E[g'(Wz)]) W, g = tanh, then
    symmetric decorrelation; stops when no row turns by more than ``tol`` (|diag W⁺Wᵀ| ≥ 1 − tol),
    returning W⁺, as scikit-learn's ``FastICA(algorithm="parallel", whiten=False)``.

    If ``max_iter`` iterations do not converge, up to ``max_iter`` more take half steps,
    W ← decorrelate(½ W + ½ W⁺) (rows of W⁺ signed to agree with W; shorter where the half step
    is near-singular, and none below ``_MIN_STEP``: W is kept): symmetric FastICA can
    cycle without converging (on Letter's 16,000 training records it did for about half of the
    26 classes, rows still turning by up to 0.98 after 200 iterations, so W was wherever the cycle
    stopped); a fixed point of W⁺ is one of the half step, and the half steps reach one (all 26
    classes). Half steps stop on the same test of the full step W⁺, not on how far the
    (possibly shortened) half step itself moved W."""
    w = _sym_decorrelate(w_init)
    n = z.shape[0]
    for it in range(2 * max_iter):
        g, g_prime = _contrast(fun, z @ w.T)                   # (n, r)
        w_new = _sym_decorrelate(g.T @ z / n - g_prime.mean(axis=0)[:, None] * w)
        # convergence is judged on the full step W → W⁺ in both phases: a shortened half step
        # turns W by little even where W⁺ swaps two of its rows, so its own size says nothing
        # about a fixed point
        turn = float(np.max(np.abs(np.abs(np.einsum("ij,ij->i", w_new, w)) - 1.0)))
        if turn < tol:
            return w_new
        if it >= max_iter:
            sign = np.where(np.einsum("ij,ij->i", w_new, w) < 0.0, -1.0, 1.0)
            step = sign[:, None] * w_new - w
            # a cycle that swaps two rows makes their average one row twice (singular):
            # shorten the step until every singular value of W + μ·step is ≥ ½
            mu = 0.5
            while mu > _MIN_STEP and np.linalg.eigvalsh(
                    (w + mu * step) @ (w + mu * step).T)[0] < 0.25:
                mu /= 2
            if mu <= _MIN_STEP:
                break
            w_new = _sym_decorrelate(w + mu * step)
        w = w_new
    return w


def _mixture_log_pdf(s: np.ndarray, weight: np.ndarray, mean: np.ndarray, var: np.ndarray
                     ) -> np.ndarray:
    """log Σ_j π_j N(s; μ_j, σ_j²), elementwise over ``s`` (..., q) with parameters (q, M)
    (a kernel estimate is the mixture of its centres: π_j = 1/n, σ_j = h)."""
    return log_mixture_density(s, np.log(weight), mean, np.sqrt(var))


def _chunk(*shape: int) -> int:
    """Records per chunk when each record needs ``prod(shape)`` floats."""
    return max(1, _BUDGET // max(1, math.prod(shape)))


def fit_kernel_densities(s: np.ndarray, var_floor: float
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gaussian kernel density estimates of each column of ``s`` (n, q), n ≥ 1, as mixtures
    (weights, means, variances), each (q, B): bandwidth h Silverman's of the column
    (:func:`~streamnb.stats.kde.silverman_bandwidth`, h² ≥ ``var_floor`` × the column's
    variance, as the mixtures'), the values binned (Silverman 1986 §3.5, as
    :class:`~streamnb.KernelNB`) in bins of width h / ``_KDE_BINS_PER_H``: one kernel at the
    mean of each non-empty bin, weight its share of the values. B ≤ n, and far fewer than n
    where the values crowd (the cost of a prediction); columns with fewer bins are padded with
    weight 1e-300 (no mass)."""
    n, q = s.shape
    total = s.var(axis=0)
    h2 = np.maximum(silverman_bandwidth(np.sqrt(total), n) ** 2,
                    np.maximum(var_floor * total, 1e-12))
    width = np.sqrt(h2) / _KDE_BINS_PER_H
    columns = []
    for j in range(q):
        _, bin_of, counts = np.unique(np.floor(s[:, j] / width[j]), return_inverse=True,
                                      return_counts=True)
        columns.append((counts / n, np.bincount(bin_of, weights=s[:, j]) / counts))
    size = max(len(c) for c, _ in columns)
    weight, mean = np.full((q, size), 1e-300), np.zeros((q, size))
    for j, (c, centre) in enumerate(columns):
        weight[j, : len(c)], mean[j, : len(c)] = c, centre
    return weight, mean, np.broadcast_to(h2[:, None], (q, size)).copy()


def fit_gaussian_mixtures(s: np.ndarray, n_components: int, var_floor: float
                          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """EM for a ``n_components``-Gaussian mixture on each column of ``s`` (n, q), all columns at
    once: (weights, means, variances), each (q, M). Starts from the column's quantiles; every
    variance is kept ≥ ``var_floor`` × the column's variance (a component collapsing on one
    value of a discrete attribute would give an unbounded likelihood). Fewer than 2 records per
    component: one Gaussian."""
    n, q = s.shape
    total = s.var(axis=0) if n else np.ones(q)
    floor = np.maximum(var_floor * total, 1e-12)
    m = n_components if n >= 2 * n_components else 1
    if n == 0:
        return np.ones((q, 1)), np.zeros((q, 1)), np.ones((q, 1))
    weight = np.full((q, m), 1.0 / m)
    mean = np.quantile(s, (np.arange(m) + 0.5) / m, axis=0).T              # (q, M)
    var = np.maximum(np.broadcast_to(total[:, None], (q, m)), floor[:, None]).copy()
    previous = -math.inf
    for _ in range(_EM_ITER):
        d = s[..., None] - mean                                           # (n, q, M)
        e = np.log(weight) - 0.5 * (_LOG_2PI + np.log(var) + d * d / var)
        top = e.max(axis=-1, keepdims=True)
        norm = np.exp(e - top).sum(axis=-1, keepdims=True)
        resp = np.exp(e - top) / norm
        loglik = float((top + np.log(norm)).sum())
        mass = resp.sum(axis=0) + 1e-300                                  # (q, M)
        weight = mass / n
        mean = (resp * s[..., None]).sum(axis=0) / mass
        d = s[..., None] - mean
        var = np.maximum((resp * d * d).sum(axis=0) / mass, floor[:, None])
        if loglik - previous < 1e-6 * n:
            break
        previous = loglik
    return np.maximum(weight, 1e-300), mean, var


def _rotated(white: np.ndarray, centred: np.ndarray) -> np.ndarray:
    """The whitening rows ``white`` (r, p) with the FastICA rotation of the sample ``centred``
    (n, p) applied to the leading min(r, n / _PER_DIMENSION) of them."""
    q = min(len(white), len(centred) // _PER_DIMENSION)
    if q < 2:
        return white
    out = white.copy()
    out[:q] = fast_ica(centred @ white[:q].T, np.eye(q)) @ white[:q]
    return out


def _place(fits: Mapping[int, tuple[np.ndarray, np.ndarray, np.ndarray]],
           arrays: tuple[np.ndarray, np.ndarray, np.ndarray], rows: Mapping[int, np.ndarray]
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Copies of the mixture arrays (weight, mean, var), each (k, p, M), with class c's
    ``rows[c]`` replaced by ``fits[c]``; M grows to the widest fit (a kernel estimate has one
    term per bin), padding with weight 1e-300 (no mass)."""
    width = max([arrays[0].shape[2], *(f[0].shape[1] for f in fits.values())])
    pad = width - arrays[0].shape[2]
    weight, mean, var = (np.pad(a, ((0, 0), (0, 0), (0, pad)), constant_values=fill)
                         for a, fill in zip(arrays, (1e-300, 0.0, 1.0), strict=True))
    for c, (fw, fm, fv) in fits.items():
        r = rows[c]
        weight[c, r], mean[c, r], var[c, r] = 1e-300, 0.0, 1.0
        weight[c, r, : fw.shape[1]], mean[c, r, : fw.shape[1]], var[c, r, : fw.shape[1]] = (
            fw, fm, fv)
    return weight, mean, var


class CCICANB(GaussianDiscriminant, state_name="CCICANB", presets={"ccica-nb": {}}):
    """Naive Bayes on class-conditional independent components (CC-ICA), or on the
    class-conditional PCA, global ICA or original representations, with divergence-based
    per-class component selection.

    Per class k (Bressan & Vitrià, eq. 3–5): s = W_k (x − x̄_k), log p(x | C_k) =
    Σ_{m ∈ S_k} log p_k(s_m) + ½ log det(W_{S_k} W_{S_k}ᵀ), and P(C_k | x) ∝ π_k p(x | C_k).
    The last term is the Jacobian of the projection onto the selected rows (|det W_k| when all
    are kept), so that classes whose components have different scales are comparable (the
    paper's normalising constant ν_k). S_k holds the ``n_features`` components of class k with
    the largest average transformed divergence mean_{j≠k} (1 − exp(−max(D'^m_kj, 0) / 4)),
    D'^m_kj = mean_{C_k} log p_k(s_m) − mean_{C_j} log p_k(s_m) (eq. 11) over the class samples:
    the Swain–Davis transform the paper's §4 names, which saturates on pairs that are already
    apart, so that the average is not carried by them; ``selection="divergence"`` ranks by the
    untransformed average D'_{A_k}^m (eq. 12).

    Representations: ``"cc-ica"`` W_k = R_k D_k^(−½) E_kᵀ (class k's covariance
    E_k D_k E_kᵀ, R_k from FastICA on the whitened class sample; by default ICA after a PCA
    reduction: S_k is chosen among the principal components by the rule above, and R_k rotates
    within them, see ``reduction``); ``"cc-pca"`` W_k = D_k^(−½)
    E_kᵀ (the paper's second-order baseline; its components in order of variance unless
    ``selection="divergence"``); ``"ica"`` one W = R D^(−½) Eᵀ from the covariance and sample
    of all records, centred on the global mean, class-specific marginals; ``"original"``
    W = I (naive Bayes on the attributes).

    Parameters
    ----------
    n_features
        Components kept per class (``None``: all).
    representation
        ``"cc-ica"``, ``"cc-pca"``, ``"ica"`` or ``"original"``.
    density
        The components' marginals. ``"mixture"``: ``n_mixture`` Gaussians per component fitted
        by EM on the class sample's projections (the paper's); ``"kde"``: a Gaussian kernel
        density estimate on them (one kernel per sample record, Silverman's bandwidth, the
        rule of :class:`~streamnb.KernelNB`; prediction O(k · p · capacity) per record);
        ``"gaussian"``: one Gaussian from the exact moments (mean W_k (μ_k − centre), variance
        diag(W_k Σ_k W_kᵀ)), no sample needed.
    n_mixture
        Gaussians per mixture (the paper: 2 on Letter, 3 on MNIST).
    selection
        ``"transformed"`` (the average transformed divergence), ``"divergence"`` (eq. 12's
        average divergence) or ``"order"`` (the representation's own order: decreasing
        variance for PCA, attribute order for ``"original"``). ``None``: ``"order"`` for
        ``"cc-pca"`` (the paper's baseline) and ``"transformed"`` for the others (chosen on a
        validation split of Letter, checked on the digits: docs/ccica.md).
    reduction
        ``"cc-ica"`` only. ``"divergence"``: each class keeps the ``n_features`` principal
        components of largest score (the CC-PCA selection) and FastICA rotates within that
        subspace (ICA after a PCA reduction, Hyvärinen et al. §13.2.2; the paper's M_k ≤ N,
        eq. 2), so ``select`` re-estimates the rotation and marginals of the new subspaces from
        the class samples. ``"none"``: FastICA rotates all components, then the selection
        chooses among the independent components (the paper's order). Equal when every
        component is kept; ``"divergence"`` was chosen by 4-fold cross-validation on Letter's
        training records; on the digits (~120 records per class in 64 dimensions, where ICA
        over-fits the low-variance subspaces the selection picks) ``"none"`` is better
        (docs/ccica.md).
    capacity
        Records kept per class for the rotation, the mixtures and the divergences.
    relearn_every
        Records between structure updates after the first ones (see
        :func:`~streamnb.models.schedule.relearn_due`; 0: only on demand, on ``merge`` and when
        a class or attribute appears).
    var_floor
        Each mixture variance is kept ≥ this fraction of its component's variance.
    seed
        Seed of the samples' priorities (``None``: from the operating system; samples to be
        merged must draw independent priorities). FastICA starts from a fixed rotation, so the
        structure is a function of the samples and moments.
    half_life, drift_detector, drift_decay
        Forgetting, as every model takes it (:class:`~streamnb.NaiveBayes`;
        docs/recipes/forgetting.md).

    Attributes
    ----------
    stats : streamnb.stats.covariance.ClassCovariance
        Exact per-class moments (the whitening).
    sample : streamnb.stats.vector_sample.ClassSample
        The bounded per-class sample (rotation, mixtures, divergences).

    Examples
    --------
    Two classes that differ only in the *shape* of their distributions along a rotated axis:
    equal means, equal (identity) covariances, so Gaussian naive Bayes, LDA and QDA cannot
    separate them; CC-ICA finds each class's independent directions and their non-Gaussian
    marginals.

    >>> import numpy as np
    >>> from streamnb import CCICANB
    >>> rng = np.random.default_rng(0)
    >>> rotate = np.array([[0.8, -0.6], [0.6, 0.8]])
    >>> def draw(n, c):   # class "sub": uniform sources, "super": Laplace sources
    ...     s = (rng.uniform(-3**0.5, 3**0.5, (n, 2)) if c == "sub"
    ...          else rng.laplace(0, 2**-0.5, (n, 2)))
    ...     return [{"a": u, "b": v} for u, v in s @ rotate.T]
    >>> train = [(draw(1, c)[0], c) for c in ("sub", "super") * 300]
    >>> test = [(x, c) for c in ("sub", "super") for x in draw(500, c)]
    >>> def accuracy(**params):
    ...     model = CCICANB(seed=0, **params)
    ...     for x, c in train:
    ...         model.learn_one(x, c)
    ...     return float(np.mean([model.predict_one(x) == c for x, c in test]))
    >>> ica, original = accuracy(), accuracy(representation="original")
    >>> gaussian = accuracy(representation="original", density="gaussian")
    >>> bool(ica > original + 0.03 and original > gaussian + 0.05), round(gaussian, 1)
    (True, 0.5)

    Batches learn the same statistics (and, with the same seed, the same sample):

    >>> import pandas as pd
    >>> batch = CCICANB(representation="original", density="gaussian")
    >>> batch.learn_many(pd.DataFrame({"x": [0.0, 2.0, 4.0, 6.0]}), pd.Series(list("aabb")))
    >>> batch.predict_proba_many(pd.DataFrame({"x": [2.0, 3.0]})).round(3)
           a      b
    0  0.982  0.018
    1  0.500  0.500

    References
    ----------
    M. Bressan and J. Vitrià, "Improving naive Bayes using class-conditional ICA", IBERAMIA
    2002, LNAI 2527: eq. 3–5 (the classifier), §3.1 (Gaussian-mixture marginals), eq. 10–12
    (divergence selection). A. Hyvärinen, J. Karhunen, E. Oja, *Independent Component
    Analysis*, Wiley 2001, §8.4 (FastICA).

    """

    _statistics = ClassCovariance
    _parameter_constraints: ClassVar[dict[str, list]] = {
        "n_features": [None, Integer(1)], "representation": [OneOf(REPRESENTATIONS)],
        "density": [OneOf(DENSITIES)], "selection": [None, OneOf(SELECTIONS)],
        "reduction": [OneOf(REDUCTIONS)],
        "n_mixture": [Integer(1)], "capacity": [Integer(1)], "relearn_every": RELEARN_EVERY,
        "var_floor": [Real(0, 1, closed="right")], "seed": [None, Integer()]}

    def __init__(self, n_features: int | None = None, representation: str = "cc-ica",
                 density: str = "mixture", n_mixture: int = 2, selection: str | None = None,
                 reduction: str = "divergence", capacity: int = 1000,
                 relearn_every: int = 1000, var_floor: float = 1e-2,
                 seed: int | None = None, half_life: float | None = None,
                 drift_detector: Any = None, drift_decay: float = 0.5) -> None:
        self.n_features = n_features
        self.representation = representation
        self.reduction = reduction
        self.density = density
        self.n_mixture = n_mixture
        self.selection = selection
        self.capacity = capacity
        self.relearn_every = relearn_every
        self.var_floor = var_floor
        self.seed = seed
        self._adapt(half_life, drift_detector, drift_decay)
        self.stats = ClassCovariance()
        self.sample = ClassSample(capacity, None if seed is None else int(seed))
        self.n_learned = 0
        self.factors = Factors()
        self._since = 0
        self._structure: dict[str, np.ndarray] | None = None
        self._structure_version = 0  # the cache's key: the structure dict has no identity ==
        self._cache = StateCache()

    @classmethod
    def _unit_test_params(cls):
        yield {"seed": 1}
        yield {"representation": "cc-pca", "n_features": 2, "density": "gaussian"}
        yield {"representation": "original", "relearn_every": 10, "seed": 2}
        yield {"reduction": "none", "n_features": 1, "seed": 3}

    @property
    def _order_selection(self) -> bool:
        return self._selection == "order"

    @property
    def _reduced(self) -> bool:
        """FastICA rotates each class's selected principal subspace (in ``select``)."""
        return self.representation == "cc-ica" and self.reduction == "divergence"

    @property
    def _selection(self) -> str:
        return self.selection or ("order" if self.representation == "cc-pca" else
                                  "transformed")

    # -- learning -------------------------------------------------------------------------------
    def learn_one(self, x: Mapping, y: Any) -> None:
        """Add one record: O(p²) for the moments; the structure is re-learned when due.
        Invalid input raises :class:`~streamnb.InvalidRecord` and changes nothing."""
        record = f"record {self.n_learned + 1}"
        label = self._label(y, record)
        vector = self._encode_learning(x, record, label)
        slots = np.flatnonzero(~np.isnan(vector))
        c = self.stats.labels.add(label)
        self.stats.update(c, slots, vector[slots])
        self.sample.add_many(np.array([c]), vector[None, :])
        self._learned(1)

    def _pieces(self, X: Any, labels: list) -> tuple[Any, list[int]]:
        """Where ``learn_one`` of the rows in order would re-learn the structure: the
        schedule's points, and after each row that brings a class, or an attribute to a class,
        for the first time (the structure grows). The batch is checked whole here (it is
        encoded to see its attributes), so a bad row rejects it before any piece."""
        values = self._checked_values(X, labels)
        index = dict(self.stats.labels.index)  # a new label numbered as its piece will number it
        classes = np.array([index.setdefault(self._label(v, RecordName("row", i)), len(index))
                            for i, v in enumerate(labels)], dtype=np.int64)
        self.stats.resize()
        k0, p0 = self.stats.n_classes, self.stats.n_attributes
        seen = np.zeros((len(index), values.shape[1]), dtype=bool)
        seen[:k0, :p0] = np.diagonal(self.stats.weight, axis1=1, axis2=2) > 0
        brings = np.zeros(len(labels), dtype=bool)
        for c in np.unique(classes):
            rows = np.flatnonzero(classes == c)
            brings[rows[0]] |= c >= k0
            observed = ~np.isnan(values[rows]) & ~seen[c]
            brings[rows[observed.argmax(axis=0)[observed.any(axis=0)]]] = True
        ends = relearn_pieces(self._since, self.relearn_every, self.n_learned, len(labels))
        return X, sorted({*ends, *(self.n_learned + 1 + np.flatnonzero(brings)).tolist()})

    def learn_many(self, X: Any, y: Any) -> None:
        """Add a batch: the model ``learn_one`` on each row in order gives (moments up to
        rounding). The batch is learned in pieces that end where ``learn_one`` would re-learn
        the structure (:meth:`_pieces`). A bad row rejects the whole batch and changes
        nothing."""
        classes, values = self._learn_batch(X, y)
        self.sample.add_many(classes, values)
        self._learned(len(classes))

    def _learned(self, n: int) -> None:
        self.n_learned += n
        self._since += n
        s = self._structure
        grown = s is None or s["centre"].shape[0] != self.stats.n_classes or len(
            s["active"]) != len(self._active())
        if n and (grown or relearn_due(self._since, self.relearn_every, self.n_learned)):
            self.relearn()

    def decay(self, factor: float) -> None:
        """Forget exponentially: moments scaled by ``factor`` (exact), later sample records
        boosted by 1/``factor``; the structure follows at the next re-learning."""
        self.stats.decay(factor)
        self.sample.decay(factor)
        self.factors.decay(factor)

    def merge(self, other: CCICANB) -> CCICANB:
        """Add ``other``'s moments (exact) and sample (a priority sample of both streams, if
        the two drew independent priorities), then re-learn the structure. The models' seeds
        may differ; every other parameter must agree."""
        mine = {k: v for k, v in self._get_params().items() if k != "seed"}
        theirs = {k: v for k, v in other._get_params().items() if k != "seed"} if isinstance(
            other, CCICANB) else None
        if type(other) is not type(self) or mine != theirs:
            raise ValueError(f"cannot merge {other!r} into {self!r}: models differ")
        factors = self.factors.merged(other.factors, self.stats.attributes,
                                      other.stats.attributes)
        self.stats.merge(other.stats)
        self.factors = factors
        class_map = np.array([self.stats.labels.index[v] for v in other.stats.labels.values],
                             dtype=np.int64)
        column_map = np.array([self.stats.attributes.get(v)
                               for v in other.stats.attributes.names()], dtype=np.int64)
        self.sample.merge(other.sample, class_map, column_map, self.stats.n_attributes)
        self.n_learned += other.n_learned
        if self.stats.n_classes:
            self.relearn()
        return self

    # -- the structure --------------------------------------------------------------------------
    def _active(self) -> np.ndarray:
        """Attributes every class has observed, in canonical order (by name)."""
        s = self.stats
        s.resize()
        if not s.n_classes:
            return np.zeros(0, dtype=np.int64)
        diag = np.diagonal(s.weight, axis1=1, axis2=2)
        names = s.attributes.names()
        seen = np.flatnonzero((diag > 0).all(axis=0))
        return np.array(sorted(seen, key=lambda j: (type(names[j]).__name__, repr(names[j]))),
                        dtype=np.int64)

    def _whitening(self, cov: np.ndarray) -> tuple[np.ndarray, int]:
        """D^(−½) Eᵀ (p, p; eigenvalues in decreasing order, rows beyond the rank zero) and
        the rank r: eigenvalues below ``_RANK_TOL`` × the largest are dropped."""
        p = cov.shape[0]
        if not p:  # no numeric attribute (a record of nominal fields only)
            return np.zeros((0, 0)), 0
        values, vectors = np.linalg.eigh(cov)
        values, vectors = values[::-1], vectors[:, ::-1]
        top = float(values[0]) if p else 0.0
        r = int(np.sum(values > _RANK_TOL * top)) if top > 0 else 0
        out = np.zeros((p, p))
        out[:r] = vectors[:, :r].T / np.sqrt(values[:r])[:, None]
        # a fixed sign (largest loading positive), so the structure does not depend on LAPACK
        flip = np.sign(out[np.arange(p), np.argmax(np.abs(out), axis=1)])
        return out * np.where(flip == 0, 1.0, flip)[:, None], r

    def relearn(self) -> None:
        """Re-learn the structure now: whitening from the moments; rotation, mixtures and
        divergences from the sample; the selected components."""
        self._since = 0
        s = self.stats
        active = self._active()
        k, p = s.n_classes, len(active)
        means = s.means()[:, active]
        ix = np.ix_(active, active)
        covs = np.stack([s.covariance(c)[ix] for c in range(k)]) if k else np.zeros((0, p, p))
        x, classes = self._sample_matrix(active, means)

        unmixing = np.zeros((k, p, p))
        valid = np.zeros((k, p), dtype=bool)
        if self.representation == "original":
            unmixing[:] = np.eye(p)
            valid[:] = True
            centre = means.copy()
        elif self.representation == "ica":
            weight = s.class_weight.sum()
            grand = (s.class_weight @ means) / weight if weight > 0 else np.zeros(p)
            total = np.einsum("c,cij->ij", s.class_weight, covs) + np.einsum(
                "c,ci,cj->ij", s.class_weight, means - grand, means - grand)
            white, r = self._whitening(total / max(weight, 1e-300))
            w = _rotated(white[:r], x - grand)
            unmixing[:, :r] = w
            valid[:, :r] = True
            centre = np.broadcast_to(grand, (k, p)).copy()
        else:
            centre = means.copy()
            for c in range(k):
                white, r = self._whitening(covs[c])
                w = white[:r]
                if self.representation == "cc-ica" and not self._reduced:
                    w = _rotated(w, x[classes == c] - means[c])
                unmixing[c, :r] = w
                valid[c, :r] = True

        # a component constant within its class (an attribute that never varies in a class, a
        # dropped eigen-direction) has no density to estimate: it is not a feature of the class
        component_var = np.einsum("kqi,kij,kqj->kq", unmixing, covs, unmixing)
        valid &= component_var > _RANK_TOL * component_var.max(axis=1, initial=0.0)[:, None]

        m = self.n_mixture if self.density == "mixture" else 1
        fits = {c: self._fit_marginals((x[classes == c] - centre[c]) @ unmixing[c].T, m)
                for c in range(k) if self.density != "gaussian" and (classes == c).any()}
        # without sample records (or density="gaussian"): one Gaussian from the exact moments
        moments = (np.ones((k, p, 1)), np.einsum("kqi,ki->kq", unmixing, means - centre)[..., None],
                   np.maximum(component_var, 1e-12)[..., None])
        mix_weight, mix_mean, mix_var = _place(fits, moments, {c: np.arange(p) for c in fits})

        divergence = self._divergence(x, classes, centre, unmixing, mix_weight, mix_mean, mix_var)
        self._structure_version += 1
        self._structure = {"centre": centre, "unmixing": unmixing, "valid": valid,
                           "mix_weight": mix_weight, "mix_mean": mix_mean, "mix_var": mix_var,
                           "divergence": np.where(valid, divergence, -np.inf), "active": active}
        if self._reduced:
            self._structure.update(zip(_PCA_STRUCTURE, (unmixing, mix_weight, mix_mean, mix_var),
                                       strict=True))
        self.select(self.n_features)

    def _sample_matrix(self, active: np.ndarray, means: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray]:
        """The class sample over the ``active`` attributes (n, p) and its classes; a missing
        value is its class's mean (``means``, (k, p)): no information."""
        values, classes = self.sample.arrays()
        x = np.full((len(classes), len(active)), math.nan)
        inside = active < values.shape[1]
        x[:, inside] = values[:, active[inside]]
        return np.where(np.isnan(x), means[classes], x), classes

    def _rotate_subspaces(self, s: Mapping[str, np.ndarray], selected: np.ndarray
                          ) -> dict[str, np.ndarray]:
        """``reduction="divergence"``: FastICA on each class's selected principal components
        (ICA after a PCA reduction, the reduction chosen by the selection rule) and the
        marginals of the rotated components, from the class sample; the structure's other rows
        stay principal components. The rotation is orthogonal in the whitened coordinates, so
        the Jacobian term and, with Gaussian marginals, the densities are those of CC-PCA."""
        base = s["pca_unmixing"]
        unmixing = base.copy()
        x, classes = self._sample_matrix(s["active"], s["centre"])
        m = self.n_mixture if self.density == "mixture" else 1
        fits, rows = {}, {}
        for c in range(len(base)):
            r = np.flatnonzero(selected[c])
            centred = x[classes == c] - s["centre"][c]
            if len(r) < 2 or not len(centred):
                continue
            unmixing[c, r] = _rotated(base[c, r], centred)
            if self.density != "gaussian":    # Gaussian marginals of whitened rows: unchanged
                fits[c], rows[c] = self._fit_marginals(centred @ unmixing[c, r].T, m), r
        weight, mean, var = _place(fits, tuple(s[f"pca_{name}"] for name in (
            "mix_weight", "mix_mean", "mix_var")), rows)
        return {"unmixing": unmixing, "mix_weight": weight, "mix_mean": mean, "mix_var": var}

    def _fit_marginals(self, proj: np.ndarray, m: int
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The marginal density of each column of one class's projections ``proj`` (n, q)."""
        if self.density == "kde":
            return fit_kernel_densities(proj, self.var_floor)
        return fit_gaussian_mixtures(proj, m, self.var_floor)

    def select(self, n_features: int | None) -> None:
        """Keep ``n_features`` components per class (``None``: all) from the current structure,
        without re-learning it (the divergences and densities do not depend on the number
        kept, so a curve over feature counts needs one structure)."""
        if n_features is not None and not (isinstance(n_features, numbers.Integral)
                                           and not isinstance(n_features, bool)
                                           and n_features >= 1):
            raise ValueError(f"n_features must be an integer >= 1, got {n_features!r}")
        self.n_features = n_features
        s = self._structure
        if s is None:
            return
        k, p = s["valid"].shape
        n_keep = p if n_features is None else min(n_features, p)
        if self._order_selection:
            rank = np.broadcast_to(np.arange(p), (k, p))
        else:
            rank = np.argsort(np.argsort(-s["divergence"], axis=1, kind="stable"), axis=1)
        selected = s["valid"] & (rank < n_keep)
        if self._reduced:
            s = {**s, **self._rotate_subspaces(s, selected)}
        log_jacobian = np.zeros(k)
        for c in range(k):
            rows = s["unmixing"][c, selected[c]]
            if len(rows):
                log_jacobian[c] = 0.5 * np.linalg.slogdet(rows @ rows.T)[1]
        # a new dict: the prediction cache is keyed on the structure's identity
        self._structure_version += 1
        self._structure = {**s, "selected": selected, "log_jacobian": log_jacobian}

    def _component_log_pdf(self, x: np.ndarray, centre: np.ndarray, unmixing: np.ndarray,
                           weight: np.ndarray, mean: np.ndarray, var: np.ndarray) -> np.ndarray:
        """log p_k(s_m) for records ``x`` (n, p) in every class's representation: (n, k, p);
        a missing value is each class's own centre (no evidence for or against it)."""
        out = np.empty((x.shape[0], *unmixing.shape[:2]))
        step = _chunk(*weight.shape)
        for start in range(0, x.shape[0], step):
            chunk = x[start: start + step, None, :]
            d = np.where(np.isnan(chunk), 0.0, chunk - centre[None])            # (b, k, p)
            proj = np.einsum("bkp,kqp->bkq", d, unmixing)
            out[start: start + step] = _mixture_log_pdf(proj, weight, mean, var)
        return out

    def _divergence(self, x: np.ndarray, classes: np.ndarray, centre: np.ndarray,
                    unmixing: np.ndarray, weight: np.ndarray, mean: np.ndarray,
                    var: np.ndarray) -> np.ndarray:
        """The selection score of every class i and component m, from the class samples: the
        mean over j ≠ i of D'^m_ij = mean_{C_i} log p_i(s_m) − mean_{C_j} log p_i(s_m) (eq. 11),
        transformed (1 − exp(−max(D'^m_ij, 0) / 4)) unless ``selection="divergence"``."""
        k, p = unmixing.shape[:2]
        if k < 2 or not len(classes):
            return np.zeros((k, p))
        logp = self._component_log_pdf(x, centre, unmixing, weight, mean, var)   # (n, k, p)
        counts = np.bincount(classes, minlength=k).astype(float)
        onehot = np.zeros((k, len(classes)))
        onehot[classes, np.arange(len(classes))] = 1.0
        sums = (onehot @ logp.reshape(len(classes), -1)).reshape(k, k, p)   # [j, i, m]: Σ_{C_j}
        present = counts > 0
        avg = sums[present] / counts[present, None, None]                          # (k', k, p)
        own = np.einsum("iim->im", sums) / np.where(present, counts, 1.0)[:, None]  # (k, p)
        pair = own[None] - avg                                    # [j', i, m] = D'^m_ij
        if self._selection != "divergence":
            # a true divergence is ≥ 0: a negative estimate separates nothing
            pair = 1.0 - np.exp(-np.maximum(pair, 0.0) / _TRANSFORM_SCALE)
        # the j = i terms are 0 in both forms, so the sum over present j is the sum over j ≠ i
        return pair.sum(axis=0) / np.maximum(present.sum() - present, 1)[:, None]

    # -- prediction -----------------------------------------------------------------------------
    def _terms(self) -> dict[str, Any]:
        return self._cache.get("terms", (self.stats, self.stats.version,
                                         self._structure_version),
                               self._compute_terms)

    def _compute_terms(self) -> dict[str, Any]:
        s = self.stats
        total = float(s.class_weight.sum())
        with np.errstate(divide="ignore"):
            log_prior = np.log(s.class_weight / total) if total > 0 else np.zeros(
                s.n_classes)
        structure = self._structure
        selected = structure["selected"]
        used = selected.any(axis=0)                  # components some class keeps
        return {"log_prior": log_prior, "used": used,
                "unmixing": structure["unmixing"][:, used], "mask": selected[:, used],
                **{name: structure[name][:, used] for name in
                   ("mix_weight", "mix_mean", "mix_var")}}

    def _numeric_log_likelihood_one(self, x: Mapping) -> tuple[Any, Any]:
        # its terms are not a Gaussian's precisions: one record is the batch path on one row
        finite, zeros = self._numeric_joint_log_likelihood([x], "record to predict")
        return finite[0], zeros[0]

    def _numeric_joint_log_likelihood(self, records: Any, where: str
                                      ) -> tuple[np.ndarray, np.ndarray]:
        values = encode_batch(self.stats.attributes, records, where, grow=False).numeric_matrix(
            len(self.stats.attributes))
        structure = self._structure
        terms = self._terms()
        active = structure["active"]
        k = structure["centre"].shape[0]
        x = np.full((values.shape[0], len(active)), math.nan)
        inside = active < values.shape[1]
        x[:, inside] = values[:, active[inside]]
        finite = np.tile(terms["log_prior"], (len(x), 1))
        step = _chunk(*terms["mix_weight"].shape)
        for start in range(0, len(x), step):
            chunk = x[start: start + step]
            # a missing value is each class's own centre: no evidence for or against it
            d = np.where(np.isnan(chunk)[:, None, :], 0.0, chunk[:, None, :]
                         - structure["centre"][None])
            proj = np.einsum("bkp,kqp->bkq", d, terms["unmixing"])
            logp = _mixture_log_pdf(proj, terms["mix_weight"], terms["mix_mean"],
                                    terms["mix_var"])
            finite[start: start + step, :k] += np.where(terms["mask"], logp, 0.0).sum(
                axis=2) + structure["log_jacobian"]
        zeros = np.zeros(finite.shape, dtype=np.int64)
        bad = ~np.isfinite(finite)
        zeros[bad] = 1
        finite[bad] = 0.0
        return finite, zeros

    # -- derived, for users ---------------------------------------------------------------------
    def component_log_densities(self, X: Any) -> np.ndarray:
        """log p_k(s_m) of records ``X`` for every class k and component m, (n, k, p): the
        terms that eq. 5 sums over the selected components (missing values at the centre;
        fields other than numbers, the factors', left out)."""
        numeric, _ = self.factors.split_many(self.stats.attributes, X, grow=False)
        values = encode_batch(self.stats.attributes, numeric, "row", grow=False).numeric_matrix(
            len(self.stats.attributes))
        s = self._structure
        active = s["active"]
        x = np.full((values.shape[0], len(active)), math.nan)
        inside = active < values.shape[1]
        x[:, inside] = values[:, active[inside]]
        return self._component_log_pdf(x, s["centre"], s["unmixing"], s["mix_weight"],
                                       s["mix_mean"], s["mix_var"])

    def selected_components(self, label: Any) -> np.ndarray:
        """Rows of W_k (over the active attributes, in canonical order) kept for class
        ``label``, by decreasing divergence (``reduction="divergence"``: the independent
        components of the selected subspace, in FastICA's order)."""
        s = self._structure
        c = self.stats.labels.index[label]
        rows = np.flatnonzero(s["selected"][c])
        if self._reduced:
            return s["unmixing"][c, rows]
        return s["unmixing"][c, rows[np.argsort(-s["divergence"][c, rows], kind="stable")]]

    def covariance(self, label: Any | None = None) -> np.ndarray:  # pragma: no cover
        raise AttributeError("CCICANB has no covariance; see stats.covariance")

    # -- persistence ----------------------------------------------------------------------------
    def _extra_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        meta, arrays = self.sample.to_state()
        factors, out = self.factors.to_state()
        out.update({f"sample.{k}": v for k, v in arrays.items()})
        if self._structure is not None:
            out.update({f"structure.{k}": np.asarray(self._structure[k])
                        for k in (*_STRUCTURE, *_PCA_STRUCTURE) if k in self._structure})
        return {"sample": meta, "since": self._since, **factors}, out

    def _restore_extra(self, meta: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> None:
        self.factors = Factors.from_state(meta, arrays)
        self.sample = ClassSample.from_state(
            meta["sample"], {k[len("sample."):]: v for k, v in arrays.items()
                             if k.startswith("sample.")})
        self._since = header_int(meta["since"], "since")
        if "structure.centre" in arrays:
            self._structure_version += 1
            self._structure = {k: np.array(arrays[f"structure.{k}"])
                               for k in (*_STRUCTURE, *_PCA_STRUCTURE)
                               if f"structure.{k}" in arrays}
            k, p = self._structure["centre"].shape
            if self._structure["unmixing"].shape != (k, p, p) or k != self.stats.n_classes:
                raise ValueError(f"structure of {k} classes × {p} attributes does not fit "
                                 f"{self.stats.n_classes} classes")
        self._cache.clear()

