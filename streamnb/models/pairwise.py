"""Naive Bayes plus pairwise counts over candidate attributes: the state TAN and AODE share.

**Text attributes** (a bag of tokens, the multinomial kind of :mod:`streamnb.stats.schema`):
the candidates can be tokens of a text attribute (at most ``max_candidates`` candidates in all,
the most informative about the class, see :class:`~streamnb.stats.pairs.PairCounts`), each
modelled as a binary attribute "the token occurs in the message" with the model's dependences,
and every other token of the message through the text attribute's multinomial restricted to the
non-candidate vocabulary V∖K::

    log P(x | c) = log P(x_K | c; tree or one-dependence models)          (binary, |K| terms)
                 + Σ_{w ∈ x, w ∉ K} n_w log θ'_{w,c}                     (O(tokens))
    θ'_{w,c} = (N(w, c) + a) / (N(c) − Σ_{v∈K} N(v, c) + a (|V| − |K|))

with N(w, c) the draws of w in class c, N(c) the class's draws, a the estimator's pseudo-count
(θ' is the multinomial θ renormalised over V∖K). The candidates' naive factors are Bernoulli,
θ(w present | c) = (M(w, c) + a) / (N(c) + 2a), M(w, c) the class-c records containing w (the
presence counts of :class:`~streamnb.stats.pairs.PairCounts`), N(c) every class-c record: a
record without the text attribute has its candidate tokens absent. A prediction costs
O(tokens in the message + candidates), never O(vocabulary): the candidates' "all absent" sum
and the per-class renormalisation are computed once per state. Non-text attributes are
modelled as before.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from streamnb.estimators import Estimator
from streamnb.models.naive_bayes import NaiveBayes
from streamnb.models.params import NUMERIC_INTERVALS, Integer, validate_params
from streamnb.models.schedule import relearn_due
from streamnb.stats.binning import coarse_pair_state
from streamnb.stats.encoder import encode
from streamnb.stats.frames import labels_of
from streamnb.stats.pairs import PairCounts
from streamnb.stats.persist import header_int
from streamnb.stats.values import NOMINAL, TOKEN
from streamnb.structure import PairwiseCounts, attribute_class_information

__all__ = ["PairwiseNaiveBayes"]

def _presence_information(class_counts: np.ndarray, present: np.ndarray) -> np.ndarray:
    """I(X; C) of binary attributes from their presence counts ``(k, T)`` and N(c)."""
    table = np.stack([present, class_counts[:, None] - present])  # (2, k, T)
    np.maximum(table, 0.0, out=table)
    p = table / max(float(class_counts.sum()), 1e-300)
    expected = p.sum(axis=1, keepdims=True) * p.sum(axis=0, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * np.log(p / expected), 0.0)
    return terms.sum(axis=(0, 1))


def _by_information(stats: Any, by_name: bool, pairs: PairCounts | None = None) -> list[int]:
    """The candidate keys (discrete attributes and the tokens of text attributes) by
    decreasing I(X; C) (none before a class), ties by name after rounding to 12 decimals (a
    function of the counts alone, whatever the order of registration or summation) or,
    without ``by_name``, by registration (text tokens after the attributes, by column). A text
    token's presence counts come from ``pairs``; without them (bare counts, such as the sum of
    a stream's partitions) from its draws capped at N(c): exact when the bags are sets (the
    binary multinomial), a proxy when they hold counts."""
    schema = stats.schema
    discrete = [a for a, kind in enumerate(schema.kinds) if kind in (NOMINAL, TOKEN)]
    text: np.ndarray = np.zeros(0, dtype=np.int64)
    if schema.n_text:
        text = np.flatnonzero(schema.text_slots(np.arange(schema.n_columns)) >= 0)
    if not (discrete or len(text)) or not stats.n_classes:
        return []
    counted = pairs is not None
    if pairs is None:
        pairs = PairCounts(schema, text_tokens=True)  # names only
    information = attribute_class_information(stats, discrete) if discrete else np.zeros(0)
    keys = discrete
    if len(text):
        if counted:
            present = pairs.column_counts(stats, text)
        else:
            present = np.minimum(stats.cells(text), stats.class_counts[:, None])
        information = np.concatenate([information,
                                      _presence_information(stats.class_counts, present)])
        keys = discrete + (-1 - text).tolist()
    if by_name:
        rounded = np.round(information, 12)
        names = [str(pairs.name_of(a)) for a in keys]
        order = sorted(range(len(keys)), key=lambda i: (-rounded[i], names[i]))
    else:
        order = np.lexsort((np.arange(len(keys)), -information)).tolist()
    return [keys[i] for i in order]


class PairwiseNaiveBayes(NaiveBayes):
    """Single-attribute counts (the naive Bayes part) and pairwise counts N_ij(u, v, c) of at
    most ``max_candidates`` attributes (the first ones seen, then the most informative about
    the class at each :meth:`refresh_candidates`). Subclasses say how they use the pairs."""

    _parameter_constraints: ClassVar[dict[str, list]] = {"max_candidates": [Integer(2)],
                                                         "numeric": NUMERIC_INTERVALS}

    def __init__(self, estimator: str | Estimator = "indifferent", max_candidates: int = 200,
                 nominal: Iterable | None = None, domains: Mapping | None = None,
                 var_smoothing: float = 1e-9, numeric: str = "mdl",
                 half_life: float | None = None, drift_detector: Any = None,
                 drift_decay: float = 0.5) -> None:
        # dependences among discrete values: a float is counted in its fine bin (the grid of
        # stats/binning.py), and read in MDL intervals of them (the coarse layer, models/coarse.py)
        super().__init__(estimator=estimator, nominal=nominal, domains=domains,
                         var_smoothing=var_smoothing, numeric="bins", half_life=half_life,
                         drift_detector=drift_detector, drift_decay=drift_decay)
        self.numeric = numeric
        a, a_absent = self._estimator.cell_pseudocounts(self.stats)
        if not (isinstance(a, float) and a > 0 and a == a_absent):
            raise ValueError(f"{type(self).__name__} needs an estimator with one positive "
                             f"pseudo-count per cell; {estimator!r} has {a!r}")
        self.max_candidates = max_candidates
        validate_params(self)
        self.pairs = PairCounts(self.stats.schema, limit=max_candidates, text_tokens=True)
        self.candidate_version = 0  # candidate lists adopted (adopt_candidates)
        self._shared = False

    # -- the coarse layer (models/coarse.py) ----------------------------------------------------
    def _coarse_extra(self, coarse_stats: Any, to: np.ndarray
                      ) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        extra, arrays = self._extra_state()
        pairs, arrays = coarse_pair_state(extra["pairs"], arrays, to, coarse_stats.n_classes)
        return {**extra, "pairs": pairs}, arrays

    # -- counting ------------------------------------------------------------------------------
    def _count_one(self, x: Mapping, y: Any) -> int:
        """Count a record in the single and pairwise statistics; its class index."""
        stats = self.stats
        stats.update(x, y, self.n_learned + 1)
        self.pairs.observe_schema(stats)
        c = stats.labels.index[stats.encode_label(y, "label")]
        self.pairs.update(c, encode(stats.schema, x, "record", grow=False))
        self.n_learned += 1
        return c

    def learn_one(self, x: Mapping, y: Any) -> None:
        self._count_one(x, y)

    def learn_many(self, X: Any, y: Any) -> None:
        labels = labels_of(y)
        batch = self.stats.update_many(X, labels, record="row")
        self.pairs.observe_schema(self.stats)
        index = self.stats.labels.index
        classes = np.array([index[v] if type(v) is str else
                            index[self.stats.encode_label(v, "label")] for v in labels],
                           dtype=np.int64)
        # text tokens' presence, like the single-attribute counts
        self.pairs.count_presence(classes, batch)
        self.pairs.update_batch(classes, batch, presence=False)
        self.n_learned += len(labels)

    def _due(self, since: int, every: int, learned: int | None = None) -> bool:
        """:func:`~streamnb.models.schedule.relearn_due` with ``learned`` defaulting to
        ``n_learned``."""
        return relearn_due(since, every, self.n_learned if learned is None else learned)

    def merge(self, other: PairwiseNaiveBayes) -> PairwiseNaiveBayes:
        """Add the single and pairwise counts ``other`` learned (exact when both track the
        same candidate attributes since their first appearance); the coarse counts are
        derived again from the summed fine ones, in this model's intervals."""
        if type(other) is not type(self):
            raise ValueError(f"cannot merge {other!r} into {self!r}: models differ")
        self.pairs.check_mergeable(other.pairs)
        with self._regrid_after():  # the pair tables summed into wider bins with the counts
            super().merge(other)
            self.pairs.observe_schema(self.stats)
            index = self.stats.labels.index
            classes = np.array([index[label] for label in other.stats.labels.values],
                               dtype=np.int64)
            self.pairs.merge(other.pairs, classes)
        return self

    def decay(self, factor: float) -> None:
        super().decay(factor)
        self.pairs.decay(factor)

    @property
    def shared_candidates(self) -> bool:
        """Whether the candidates come only from :meth:`adopt_candidates`."""
        return self._shared

    def share_candidates(self) -> None:
        """From now on the candidates are only those given to :meth:`adopt_candidates` (none
        until the first list): models learned apart from each other (one per partition of a
        stream) that adopt the same lists, each at points of its own stream, merge exactly.
        The model's own refreshes (:meth:`refresh_candidates`) do nothing any more; current
        candidates are dropped."""
        self._shared = True
        self.pairs.adopt(self.stats, [])

    def adopt_candidates(self, names: Sequence[Any]) -> None:
        """Track exactly the attributes ``names`` (see :meth:`PairCounts.adopt`): the shared
        candidate policy of models that must add up. Increments ``candidate_version``."""
        self._shared = True
        self.pairs.adopt(self.stats, names)
        self.candidate_version += 1

    def candidate_names(self) -> list:
        """The candidate attributes' names (a text token's: ``(text attribute, token)``),
        pending ones (adopted, not seen yet) included."""
        return [self.pairs.name_of(a) for a in self.pairs.candidates] + list(self.pairs.pending)

    def choose_candidates(self, stats: Any = None) -> list:
        """The shared candidate policy's choice from ``stats`` (default: this model's): the
        ``max_candidates`` discrete attributes with the highest I(X; C), all of them if there
        are no more, in order of decreasing information, ties (after rounding to 12 decimals,
        so that the order of summation does not matter) by name: a function of the counts
        alone, whatever order the attributes were registered in."""
        if stats is None or stats is self.stats:  # text tokens from their presence counts
            ranked = _by_information(self.stats, by_name=True, pairs=self.pairs)
            return [self.pairs.name_of(a) for a in ranked[: self.max_candidates]]
        names = PairCounts(stats.schema, text_tokens=True).name_of
        return [names(a) for a in _by_information(stats, by_name=True)[: self.max_candidates]]

    def refresh_candidates(self) -> None:
        """Keep the ``max_candidates`` attributes with the highest I(X; C) (ties: first
        registered) as candidates; new ones start counting pairs now. Nothing when the
        candidates are shared (:meth:`share_candidates`)."""
        if self._shared:
            return
        pairs = self.pairs
        ranked = _by_information(self.stats, by_name=False, pairs=pairs)
        if len(ranked) <= self.max_candidates and (
                not self.stats.schema.n_text or len(pairs.candidates) == len(ranked)):
            return
        chosen = set(ranked[: self.max_candidates])
        pairs.remove_candidates([a for a in pairs.candidates if a not in chosen])
        new = [pairs.name_of(a) for a in sorted(chosen) if a not in pairs.epoch]
        pairs.add_candidates(self.stats, new)

    def pairwise_counts(self) -> PairwiseCounts | None:
        """The candidate attributes' class, marginal and pairwise counts (None before two
        discrete attributes and a class have been seen), in order of name (``repr``): a
        structure learned from them, whose ties go to the lowest index, does not depend on the
        order in which the attributes were first seen (nor do the weights' sums)."""
        stats, pairs = self.stats, self.pairs
        names = [pairs.name_of(a) for a in pairs.candidates]
        if len(names) < 2 or not stats.n_classes:
            return None
        order = sorted(range(len(names)), key=lambda i: repr(names[i]))
        at = {old: new for new, old in enumerate(order)}
        joints = {}
        for (i, j), table in pairs.joint_tables(stats).items():
            p, q = at[i], at[j]
            joints[(p, q) if p < q else (q, p)] = table if p < q else table.swapaxes(0, 1)
        marginals = [self._marginal(pairs.candidates[i]) for i in order]
        return PairwiseCounts(class_counts=stats.class_counts.copy(), marginals=marginals,
                              joints=joints, names=[names[i] for i in order])

    def _marginal(self, a: int) -> np.ndarray:
        stats, schema = self.stats, self.stats.schema
        if a < 0:  # a text token: present in M(w, c) records
            present = self.pairs.column_counts(stats, [-1 - a])[:, 0]
            return np.stack([present, stats.class_counts - present])
        if schema.kinds[a] == TOKEN:
            present = stats.value_counts[:, schema.slots[a]]
            return np.stack([present, stats.class_counts - present])
        columns = list(schema.nominal_values[schema.slots[a]].values())
        return stats.cells(columns).T

    # -- prediction ----------------------------------------------------------------------------
    def _candidate_log_theta(self, columns: np.ndarray, absent: np.ndarray) -> np.ndarray:
        """log θ(x | c) of candidate cells: ``columns`` are schema columns (a nominal value, a
        token's or a text token's present column), ``absent`` marks a token's absent cell;
        ``(k, len(columns))``. A text token's θ is Bernoulli on its presence counts."""
        stats, est = self.stats, self._estimator
        columns = np.asarray(columns, dtype=np.int64)
        absent = np.asarray(absent, dtype=bool)
        text = (stats.schema.text_slots(columns) >= 0) if stats.schema.n_text else None
        if text is None or not text.any():
            logs, _ = est.log_theta(stats, columns)
            if absent.any():
                odds, _ = est.token_corrections(stats, columns[absent])
                logs[:, absent] -= odds
            return logs
        logs = np.empty((stats.n_classes, len(columns)))
        other = ~text
        if other.any():
            logs[:, other] = self._candidate_log_theta(columns[other], absent[other])
        a, _ = est.cell_pseudocounts(stats)
        n = stats.class_counts[:, None]
        present = self.pairs.column_counts(stats, columns[text])
        cells = np.where(absent[text][None, :], np.maximum(n - present, 0.0), present)
        logs[:, text] = np.log(cells + a) - np.log(n + 2.0 * a)
        return logs

    # -- the text event model (module docstring) -------------------------------------------------
    def _text_terms(self) -> tuple | None:
        """Per state: the candidate text columns (sorted), per class and candidate the term
        that replaces its multinomial factor when present, log θ(present|c) − log θ(absent|c),
        the candidates' "all absent" sum per class, and log θ/θ' per class and text slot (the
        renormalisation of non-candidate draws). None without text candidates."""
        stats, pairs = self.stats, self.pairs
        return self._cache.get("text_terms", (stats, stats.version, pairs, self.n_learned,
                                              tuple(pairs.candidates)), self._compute_text_terms)

    def _compute_text_terms(self) -> tuple | None:
        stats, pairs = self.stats, self.pairs
        text_keys = [a for a in pairs.candidates if a < 0]
        terms = None
        if text_keys and stats.n_classes:
            est, schema = self._estimator, stats.schema
            columns = np.sort(-1 - np.asarray(text_keys, dtype=np.int64))
            k, K = stats.n_classes, len(columns)
            both = self._candidate_log_theta(np.concatenate([columns, columns]),
                                             np.repeat([False, True], K))
            present, absent = both[:, :K], both[:, K:]
            slots = schema.text_slots(columns)
            n_text = schema.n_text
            a, _ = est.cell_pseudocounts(stats)
            draws = stats.draw_counts  # (k, n_text)
            in_candidates = np.zeros((k, n_text))
            np.add.at(in_candidates.T, slots, stats.cells(columns).T)
            n_candidates = np.bincount(slots, minlength=n_text).astype(float)
            vocabulary = np.array([schema.attribute_size(t) for t in schema.text_attributes],
                                  dtype=float)
            full = draws + a * vocabulary
            rest = np.maximum(draws - in_candidates, 0.0) + a * (vocabulary - n_candidates)
            with np.errstate(divide="ignore", invalid="ignore"):
                renormalise = np.where((rest > 0) & (full > 0),
                                       np.log(full) - np.log(rest), 0.0)
            terms = (columns, present - absent, absent.sum(axis=1), renormalise)
        return terms

    def _text_log_theta(self, columns: np.ndarray, counts: np.ndarray
                        ) -> tuple[np.ndarray, np.ndarray]:
        """Per drawn text token: a candidate's log θ(present|c) − log θ(absent|c) (its absent
        term is in the per-state sum), another token's n_w log θ'_{w,c}."""
        f, z = super()._text_log_theta(columns, counts)
        terms = self._text_terms()
        if terms is None or not len(columns):
            return f, z
        candidates, present, _, renormalise = terms
        at = np.minimum(np.searchsorted(candidates, columns), len(candidates) - 1)
        hit = candidates[at] == columns
        f[:, hit] = present[:, at[hit]]
        z[:, hit] = 0
        miss = ~hit
        if miss.any():
            slots = self.stats.schema.text_slots(columns[miss])
            f[:, miss] += counts[miss] * renormalise[:, slots]
        return f, z

    def _fine_log_likelihood_one(self, x: Mapping):
        scores = super()._fine_log_likelihood_one(x)
        if scores is not None:
            terms = self._text_terms()
            if terms is not None:
                np.frombuffer(scores[0])[:] += terms[2]
        return scores

    def _add_batch_terms(self, batch: Any, finite: np.ndarray) -> None:
        terms = self._text_terms()
        if terms is not None:
            finite += terms[2]

    def _naive_log_theta(self, a: int, values: Sequence) -> np.ndarray:
        """log θ(x | c) of the naive Bayes part, per value row: (r, k)."""
        stats, schema = self.stats, self.stats.schema
        if a < 0:
            return self._candidate_log_theta(np.array([-1 - a, -1 - a]),
                                             np.array([False, True])).T
        if schema.kinds[a] == TOKEN:
            column = np.array([schema.slots[a]])
            present, _ = self._estimator.log_theta(stats, column)
            odds, _ = self._estimator.token_corrections(stats, column)
            return np.stack([present[:, 0], present[:, 0] - odds[:, 0]])
        columns = np.array([schema.nominal_values[schema.slots[a]][v] for v in values])
        logs, _ = self._estimator.log_theta(stats, columns)
        return logs.T

    # -- persistence ---------------------------------------------------------------------------
    def _extra_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        meta, arrays = self.pairs.to_state(self.stats.n_classes)
        return {"pairs": meta, "candidate_version": self.candidate_version,
                "shared": self._shared, "coarse_cuts": self._intervals_state()}, arrays

    def _restore_extra(self, meta: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> None:
        self.pairs = PairCounts.from_state(self.stats.schema, meta["pairs"], arrays)
        self.pairs.text_tokens = True  # states saved before text tokens could be candidates
        self.candidate_version = header_int(meta.get("candidate_version", 0), "candidate_version")
        self._shared = bool(meta.get("shared", False))
        self._restore_intervals(meta)
