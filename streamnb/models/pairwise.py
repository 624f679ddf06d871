"""Naive Bayes plus pairwise counts over candidate attributes: the state TAN and AODE share."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from streamnb.estimators import Estimator
from streamnb.models.naive_bayes import NaiveBayes
from streamnb.stats.pairs import PairCounts
from streamnb.stats.schema import TOKEN, Schema
from streamnb.structure import PairwiseCounts, attribute_class_information

__all__ = ["PairwiseNaiveBayes"]

_MISSING = object()


def _by_information(stats: Any, by_name: bool) -> list[int]:
    """The discrete attributes of ``stats`` by decreasing I(X; C) (none before a class),
    ties by name after rounding to 12 decimals (a function of the counts alone, whatever the
    order of registration or summation) or, without ``by_name``, by registration."""
    schema = stats.schema
    discrete = [a for a, kind in enumerate(schema.kinds) if kind != 2]
    if not discrete or not stats.n_classes:
        return []
    information = attribute_class_information(stats, discrete)
    if by_name:
        rounded = np.round(information, 12)
        names = [str(schema.attributes.values[a]) for a in discrete]
        order = sorted(range(len(discrete)), key=lambda i: (-rounded[i], names[i]))
    else:
        order = np.lexsort((np.arange(len(discrete)), -information)).tolist()
    return [discrete[i] for i in order]


class PairwiseNaiveBayes(NaiveBayes):
    """Single-attribute counts (the naive Bayes part) and pairwise counts N_ij(u, v, c) of at
    most ``max_candidates`` attributes (the first ones seen, then the most informative about
    the class at each :meth:`refresh_candidates`). Subclasses say how they use the pairs."""

    def __init__(self, estimator: str | Estimator = "indifferent", max_candidates: int = 200,
                 nominal: Iterable | None = None, domains: Mapping | None = None,
                 var_smoothing: float = 1e-9) -> None:
        super().__init__(estimator=estimator, nominal=nominal, domains=domains,
                         var_smoothing=var_smoothing)
        a, a_absent = self._estimator.cell_pseudocounts(self.stats)
        if not (isinstance(a, float) and a > 0 and a == a_absent):
            raise ValueError(f"{type(self).__name__} needs an estimator with one positive "
                             f"pseudo-count per cell; {estimator!r} has {a!r}")
        if not (isinstance(max_candidates, int) and max_candidates >= 2):
            raise ValueError(f"max_candidates must be an int >= 2, got {max_candidates!r}")
        self.max_candidates = max_candidates
        self.pairs = PairCounts(self.stats.schema, limit=max_candidates)
        self.candidate_version = 0  # candidate lists adopted (adopt_candidates)
        self._shared = False

    # -- counting ------------------------------------------------------------------------------
    def _count_one(self, x: Mapping, y: Any) -> int:
        """Count a record in the single and pairwise statistics; its class index."""
        stats = self.stats
        stats.update(x, y, self.n_learned + 1)
        self.pairs.observe_schema(stats)
        c = stats.labels.index[stats.encode_label(y, "label")]
        self.pairs.update(c, stats.schema.encode(x, "record", grow=False))
        self.n_learned += 1
        return c

    def learn_one(self, x: Mapping, y: Any) -> None:
        self._count_one(x, y)

    def learn_many(self, X: Any, y: Any) -> None:
        labels = list(y)
        batch = self.stats.update_many(X, labels, record="row")
        self.pairs.observe_schema(self.stats)
        if self._refresh_due(len(labels)):
            # candidates chosen now count this batch's pairs too: chosen after it, they would
            # start with empty pair tables and replace their naive factors by uniform ones
            self.refresh_candidates()
        index = self.stats.labels.index
        classes = np.array([index[v] if type(v) is str else
                            index[self.stats.encode_label(v, "label")] for v in labels],
                           dtype=np.int64)
        self.pairs.update_batch(classes, batch)
        self.n_learned += len(labels)

    def _due(self, since: int, every: int, learned: int | None = None) -> bool:
        """Whether a periodic structure update is due, ``since`` records after the last one
        (``learned`` records in all, default ``n_learned``): after 1, 2, 4, 8, … records, then
        every ``every`` (0: never). The first structure comes as soon as there are counts (a
        batch-trained model is never left without one) and is refined while the counts are
        young, for log2(every) extra updates."""
        if not every:
            return False
        learned = self.n_learned if learned is None else learned
        return since >= min(every, max(learned - since, 1))

    def _refresh_due(self, n: int) -> bool:
        """Whether the batch of ``n`` records being learned ends with a candidate refresh."""
        return False

    def merge(self, other: PairwiseNaiveBayes) -> PairwiseNaiveBayes:
        """Add the single and pairwise counts ``other`` learned (exact when both track the
        same candidate attributes since their first appearance)."""
        if type(other) is not type(self):
            raise ValueError(f"cannot merge {other!r} into {self!r}: models differ")
        self.pairs.check_mergeable(other.pairs)
        super().merge(other)
        self.pairs.observe_schema(self.stats)
        index = self.stats.labels.index
        classes = np.array([index[label] for label in other.stats.labels.values], dtype=np.int64)
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
        """The candidate attributes' names, pending ones (adopted, not seen yet) included."""
        names = self.stats.schema.attributes.values
        return [names[a] for a in self.pairs.candidates] + list(self.pairs.pending)

    def choose_candidates(self, stats: Any = None) -> list:
        """The shared candidate policy's choice from ``stats`` (default: this model's): the
        ``max_candidates`` discrete attributes with the highest I(X; C), all of them if there
        are no more, in order of decreasing information, ties (after rounding to 12 decimals,
        so that the order of summation does not matter) by name: a function of the counts
        alone, whatever order the attributes were registered in."""
        stats = self.stats if stats is None else stats
        names = stats.schema.attributes.values
        return [names[a] for a in _by_information(stats, by_name=True)[: self.max_candidates]]

    def refresh_candidates(self) -> None:
        """Keep the ``max_candidates`` attributes with the highest I(X; C) (ties: first
        registered) as candidates; new ones start counting pairs now. Nothing when the
        candidates are shared (:meth:`share_candidates`)."""
        if self._shared:
            return
        schema, pairs = self.stats.schema, self.pairs
        ranked = _by_information(self.stats, by_name=False)
        if len(ranked) <= self.max_candidates:
            return
        chosen = set(ranked[: self.max_candidates])
        pairs.remove_candidates([a for a in pairs.candidates if a not in chosen])
        new = [schema.attributes.values[a] for a in sorted(chosen) if a not in pairs.epoch]
        pairs.add_candidates(self.stats, new)

    def pairwise_counts(self) -> PairwiseCounts | None:
        """The candidate attributes' class, marginal and pairwise counts (None before two
        discrete attributes and a class have been seen)."""
        stats, pairs = self.stats, self.pairs
        schema = stats.schema
        names = [schema.attributes.values[a] for a in pairs.candidates]
        if len(names) < 2 or not stats.n_classes:
            return None
        marginals = [self._marginal(a) for a in pairs.candidates]
        return PairwiseCounts(class_counts=stats.class_counts.copy(), marginals=marginals,
                              joints=pairs.joint_tables(stats), names=names)

    def _marginal(self, a: int) -> np.ndarray:
        stats, schema = self.stats, self.stats.schema
        if schema.kinds[a] == TOKEN:
            present = stats.value_counts[:, schema.slots[a]]
            return np.stack([present, stats.class_counts - present])
        columns = list(schema.nominal_values[schema.slots[a]].values())
        return stats.value_counts[:, columns].T

    # -- prediction ----------------------------------------------------------------------------
    def _naive_log_theta(self, a: int, values: Sequence) -> np.ndarray:
        """log θ(x | c) of the naive Bayes part, per value row: (r, k)."""
        stats, schema = self.stats, self.stats.schema
        if schema.kinds[a] == TOKEN:
            column = np.array([schema.slots[a]])
            present, _ = self._estimator.log_theta(stats, column)
            odds, _ = self._estimator.token_corrections(stats, column)
            return np.stack([present[:, 0], present[:, 0] - odds[:, 0]])
        columns = np.array([schema.nominal_values[schema.slots[a]][v] for v in values])
        logs, _ = self._estimator.log_theta(stats, columns)
        return logs.T

    def _value_row(self, x: Mapping, a: int, rows: dict) -> Any:
        schema = self.stats.schema
        name = schema.attributes.values[a]
        value = x.get(name, _MISSING) if isinstance(x, Mapping) else _MISSING
        if schema.kinds[a] == TOKEN:
            return rows[value is not _MISSING and Schema._token_present(value, "record", name)]
        if value is _MISSING or value is None or (isinstance(value, float) and value != value):
            return None
        return rows.get(value)

    # -- persistence ---------------------------------------------------------------------------
    def _extra_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        meta, arrays = self.pairs.to_state(self.stats.n_classes)
        return {"pairs": meta, "candidate_version": self.candidate_version,
                "shared": self._shared}, arrays

    def _restore_extra(self, meta: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> None:
        self.pairs = PairCounts.from_state(self.stats.schema, meta["pairs"], arrays)
        self.candidate_version = int(meta.get("candidate_version", 0))
        self._shared = bool(meta.get("shared", False))
