"""Averaged one-dependence estimators (AODE) on live pairwise counts."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from streamnb.estimators import Estimator
from streamnb.models.pairwise import PairwiseNaiveBayes
from streamnb.models.params import RELEARN_EVERY, Integer, validate_params
from streamnb.models.schedule import relearn_pieces
from streamnb.stats.frames import records_of
from streamnb.stats.pairs import CandidateRows, PairCounts
from streamnb.stats.persist import header_int
from streamnb.stats.values import TOKEN

__all__ = ["AODE"]


class AODE(PairwiseNaiveBayes, state_name="AODE", presets={"aode": {}}):
    """AODE (Webb, Boughton & Wang 2005): the average of the one-dependence models in which one
    attribute is the parent of all others, read from the same pairwise counts as TAN.

    P(c, x) ∝ Σ_{i: N(x_i) ≥ m} P(c, x_i) Π_{j ≠ i} P(x_j | c, x_i), with
    P(c, x_i) = (N(c, x_i) + a)/(N_i + a·k·#A_i) and
    P(x_j | c, x_i) = (N(c, x_i, x_j) + a)/(N(c, x_i) + a·#A_j), a the estimator's pseudo-count
    (1: Webb's Laplace estimates). N_i counts the records where attribute i was observed and
    N(c, x_i) in the conditional counts those where both i and j were. Missing attributes are
    skipped as parents and children; when no attribute is frequent enough to be a parent the
    prediction is naive Bayes. Attributes outside the candidate set (see ``max_candidates``)
    enter every one-dependence model through their naive factor P(x_j | c).

    Parameters
    ----------
    min_frequency
        ``m``: an attribute value seen fewer times is not a parent.
    max_candidates
        Attributes that enter the one-dependence models (the others stay naive): the first
        ones seen, then every ``refresh_every`` records the top ones by class information
        I(X; C), so that a text vocabulary is represented by its informative tokens. A
        prediction costs O(max_candidates²) numpy work (default 50).
    refresh_every
        Re-choose the candidates every this many records (0: never), and after 1, 2, 4, 8, …
        records while the stream is young. A newly chosen
        candidate's pair counts start then; its one-dependence factors read the records since.
    estimator, nominal, domains, var_smoothing
        As in :class:`~streamnb.models.tan.TAN`.
    half_life, drift_detector, drift_decay
        Forgetting, as every model takes it (:class:`~streamnb.NaiveBayes`;
        docs/recipes/forgetting.md).

    Notes
    -----
    A text attribute (a bag of tokens) is used with the text event model, as in
    :class:`~streamnb.models.tan.TAN`: its candidate tokens are binary attributes of the
    one-dependence models (parents and children), its other tokens multinomial
    (docs/tan.md, "On the text event model").

    Examples
    --------
    >>> from streamnb import AODE
    >>> model = AODE()
    >>> data = [({"a": "x", "b": "x"}, "+"), ({"a": "y", "b": "y"}, "+"),
    ...         ({"a": "x", "b": "y"}, "-"), ({"a": "y", "b": "x"}, "-"),
    ...         ({"a": "x", "b": "x"}, "+")]
    >>> for x, y in data:
    ...     model.learn_one(x, y)
    >>> round(model.predict_proba_one({"a": "x", "b": "x"})["+"], 4)
    0.7714

    References
    ----------
    G. I. Webb, J. R. Boughton, Z. Wang. Not so naive Bayes: aggregating one-dependence
    estimators. Machine Learning 58, 2005.

    """

    _parameter_constraints: ClassVar[dict[str, list]] = {
        "min_frequency": [Integer(0)], "refresh_every": RELEARN_EVERY}

    def __init__(self, min_frequency: int = 1, estimator: str | Estimator = "laplace",
                 max_candidates: int = 50, refresh_every: int = 1000,
                 nominal: Iterable | None = None, domains: Mapping | None = None,
                 var_smoothing: float = 1e-9, numeric: str = "mdl",
                 half_life: float | None = None, drift_detector: Any = None,
                 drift_decay: float = 0.5) -> None:
        super().__init__(estimator=estimator, max_candidates=max_candidates, nominal=nominal,
                         domains=domains, var_smoothing=var_smoothing, numeric=numeric,
                         half_life=half_life, drift_detector=drift_detector,
                         drift_decay=drift_decay)
        self.min_frequency = min_frequency
        self.refresh_every = refresh_every
        validate_params(self)
        self._since_refresh = 0

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"min_frequency": 3, "refresh_every": 20, "max_candidates": 3}

    # -- learning -------------------------------------------------------------------------------
    def learn_one(self, x: Mapping, y: Any) -> None:
        self._count_one(x, y)
        self._learn_coarse_one(x, y)
        self._count_towards_refresh(1)

    def _pieces(self, X: Any, labels: list) -> tuple[Any, list[int]]:
        return X, relearn_pieces(self._since_refresh, self.refresh_every, self.n_learned,
                                 len(labels))

    def learn_many(self, X: Any, y: Any) -> None:
        """Learn a batch: what ``learn_one`` on each record in order learns (in pieces that
        end where the candidates are refreshed)."""
        # one piece (models/base.py cuts the batch at the points of _pieces)
        super().learn_many(X, y)
        self._recoarsen()
        self._count_towards_refresh(len(y))

    def relearn(self) -> None:
        """Refresh the candidates and the numeric attributes' intervals from the counts now
        (what the ``refresh_every`` schedule does)."""
        self._since_refresh = 0
        self.refresh_candidates()
        self.rediscretise()

    def _count_towards_refresh(self, n: int) -> None:
        self._since_refresh += n
        if self._due(self._since_refresh, self.refresh_every):
            self.relearn()

    # -- prediction ----------------------------------------------------------------------------
    def _candidate_index(self) -> _CandidateIndex:
        return self._cache.get("candidate_index", (self.stats.schema, self.stats.schema.version,
                                                   tuple(self.pairs.candidates)),
                               lambda: _CandidateIndex(self.pairs))

    def _counts(self) -> _Counts:
        """The counts every prediction reads, over each candidate snapshot's period."""
        return _Counts(self.stats, self.pairs)

    def _spode_log_likelihood(self, x: Mapping, counts: _Counts) -> np.ndarray | None:
        """log Σ_i P(c, x_i) Π_j P(x_j | c, x_i) − log(#parents) over the candidates observed in
        ``x``, per class, minus the naive factors of those candidates (None when no attribute
        can be a parent). All cells are read from the pairwise counts at once: a token's
        absent cells by inclusion–exclusion, N(¬p, q) = N(q) − N(p, q) and
        N(¬p, ¬q) = N − N(p) − N(q) + N(p, q), each over the pair's own period."""
        index = self._candidate_index()
        observed = index.observe(x)
        if observed is None:
            return None
        p, neg, token, rank, size, nominal = observed
        stats, est = self.stats, self._estimator
        k = stats.n_classes
        a, _ = est.cell_pseudocounts(stats)
        L = len(p)
        at = np.arange(L)
        s = np.where(neg, -1.0, 1.0)
        present = counts.columns[:, :, p]  # (periods, k, L): N(column of x_l)
        classes = counts.classes  # (periods, k)
        period = np.maximum(rank[:, None], rank[None, :])  # (L, L): the pair's later snapshot
        n_i = present[period, :, at[:, None]]  # (L, L, k)
        n_j = present[period, :, at[None, :]]
        n = classes[period]
        co = counts.co[:, p][:, :, p].transpose(1, 2, 0)  # (L, L, k)
        ni, nj = neg[:, None, None], neg[None, :, None]
        si, sj = s[:, None, None], s[None, :, None]
        joint = si * sj * co + nj * si * n_i + ni * sj * n_j + (ni & nj) * n
        # N(x_i, c; j observed): every record of the period for a token j, the records where
        # the nominal j was observed otherwise
        own = np.where(ni, n - n_i, n_i)
        given = np.broadcast_to(own, joint.shape).copy()
        if len(nominal):
            q, starts, members = nominal
            with_j = np.add.reduceat(counts.co[:, p][:, :, q], starts, axis=2)  # (k, L, Ln)
            seen_j = np.add.reduceat(counts.columns[:, :, q], starts, axis=2)  # (periods, k, Ln)
            seen = seen_j[period[:, members], :, np.arange(len(members))[None, :]]
            given[:, members] = (s[:, None, None] * with_j.transpose(1, 2, 0)
                                 + neg[:, None, None] * seen)
        np.maximum(joint, 0.0, out=joint)  # differences of decayed counts can round below 0
        np.maximum(given, 0.0, out=given)
        conditional = np.log(joint + a) - np.log(given + a * size[None, :, None])
        conditional[at, at] = 0.0
        whole = present[0]  # (k, L) over the whole stream (period 0 is "since the start")
        whole = np.where(neg[None, :], classes[0][:, None] - whole, whole)
        parents = np.flatnonzero(whole.sum(axis=0) >= self.min_frequency)
        if not len(parents):
            return None
        observed_total = np.where(token, classes[0].sum(), counts.attribute_totals(nominal, L))
        log_joint = (np.log(whole[:, parents] + a)
                     - np.log(observed_total[parents] + a * k * size[parents])).T
        spodes = log_joint + conditional[parents].sum(axis=1)  # (parents, k)
        top = spodes.max(axis=0)
        average = top + np.log(np.exp(spodes - top).sum(axis=0)) - math.log(len(parents))
        naive = self._candidate_log_theta(counts.schema_columns[p], neg)  # (k, L): θ(x | c)
        return average - naive.sum(axis=1)

    def _fine_log_likelihood_one(self, x: Mapping):
        scores = super()._fine_log_likelihood_one(x)
        if scores is not None:
            spode = self._spode_log_likelihood(x, self._counts())
            if spode is not None:  # replace the class prior and candidates' naive factors
                finite = np.frombuffer(scores[0])
                prior, _ = self._estimator.log_class_prior(self.stats)
                finite += spode - prior
        return scores

    def _fine_joint_log_likelihood(self, records: Sequence[Mapping], where: str
                                   ) -> tuple[np.ndarray, np.ndarray]:
        finite, zeros = super()._fine_joint_log_likelihood(records, where)
        prior, _ = self._estimator.log_class_prior(self.stats)
        counts = self._counts()
        for r, x in enumerate(records_of(records)):
            spode = self._spode_log_likelihood(x, counts)
            if spode is not None:
                finite[r] += spode - prior
        return finite, zeros

    # -- persistence ---------------------------------------------------------------------------
    def _extra_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        meta, arrays = super()._extra_state()
        return {**meta, "since_refresh": self._since_refresh}, arrays

    def _restore_extra(self, meta: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> None:
        super()._restore_extra(meta, arrays)
        self._since_refresh = header_int(meta.get("since_refresh", 0), "since_refresh")


class _CandidateIndex:
    """The candidate attributes in arrays: how a record's observed values map to pair
    positions (a token's present column stands for both of its values)."""

    def __init__(self, pairs: PairCounts) -> None:
        schema = pairs.schema
        epochs = sorted({pairs.epoch[a] for a in pairs.candidates} | {-1})  # as in _Counts
        # tokens, then text tokens grouped by text attribute, then nominal attributes: the
        # order of a record's cells, which fixes the order of the sums below
        tokens, nominal = [], []
        text: dict[Any, list[int]] = {}
        for a in pairs.candidates:
            if a < 0:
                text.setdefault(pairs.name_of(a)[0], []).append(a)
            elif schema.kinds[a] == TOKEN:
                tokens.append(a)
            else:
                nominal.append(a)
        keys = tokens + [a for group in text.values() for a in group] + nominal
        self.rows = CandidateRows(pairs, keys)
        columns = [pairs.attribute_columns(a) for a in keys]
        width = max([len(c) for c in columns], default=1)
        # position of each (candidate, value row); a token's absent row shares its column's
        self.position = np.zeros((len(keys), max(width, 2)), dtype=np.int64)
        for i, cs in enumerate(columns):
            self.position[i, : len(cs)] = [pairs.position[j] for j in cs]
            if len(cs) == 1 and i < len(keys) - len(nominal):
                self.position[i, 1] = self.position[i, 0]
        self.is_token = np.arange(len(keys)) < len(keys) - len(nominal)
        self.rank = np.array([epochs.index(pairs.epoch[a]) for a in keys], dtype=np.int64)
        self.size = np.array([2 if t else len(c) for t, c in zip(self.is_token, columns,
                                                                 strict=True)], dtype=float)
        self.groups = [np.array(self.position[i, : len(c)]) for i, c in enumerate(columns)]

    def observe(self, x: Mapping) -> tuple | None:
        """Arrays over the candidates observed in ``x``: position, token absent, is a token,
        snapshot rank, #A, and the nominal ones' value positions (for reduceat)."""
        rows = self.rows.record(x)
        seen = np.flatnonzero(rows >= 0)
        if not len(seen):
            return None
        row = rows[seen]
        token = self.is_token[seen]
        nominal: tuple = ()
        members = np.flatnonzero(~token)
        if len(members):
            groups = [self.groups[i] for i in seen[members].tolist()]
            starts = np.cumsum([0] + [len(g) for g in groups[:-1]])
            nominal = (np.concatenate(groups), starts, members)
        return (self.position[seen, row], token & (row == 1), token, self.rank[seen],
                self.size[seen], nominal)


class _Counts:
    """Class counts and candidate-column counts over each snapshot's period (period 0: the
    whole stream, then one per snapshot in use, in increasing order), and the pair counts."""

    def __init__(self, stats: Any, pairs: PairCounts) -> None:
        k, m = stats.n_classes, pairs.n_positions
        epochs = sorted({pairs.epoch[a] for a in pairs.candidates} | {-1})
        since = [pairs.since(stats, e) for e in epochs]
        self.classes = np.stack([c for c, _ in since])  # (periods, k)
        self.columns = np.stack([v for _, v in since])  # (periods, k, m)
        self.co = pairs.co[:k, :m, :m]
        self.schema_columns = np.asarray(pairs.columns, dtype=np.int64)
        self._whole_columns = self.columns[0]

    def attribute_totals(self, nominal: tuple, L: int) -> np.ndarray:
        """Records where each observed nominal candidate was observed (whole stream)."""
        out = np.zeros(L)
        if len(nominal):
            q, starts, members = nominal
            out[members] = np.add.reduceat(self._whole_columns[:, q].sum(axis=0), starts)
        return out
