"""Averaged one-dependence estimators (AODE) on live pairwise counts."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from streamnb.estimators import Estimator
from streamnb.kernels import posterior
from streamnb.models.pairwise import PairwiseNaiveBayes
from streamnb.stats.frames import records_of

__all__ = ["AODE"]


class AODE(PairwiseNaiveBayes):
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
        Attributes that enter the one-dependence models (the others stay naive). A prediction
        costs O(max_candidates²), and the pair tables are re-read after every learned record,
        so keep it small for one-by-one use on text (default 50).
    estimator, nominal, domains, var_smoothing
        As in :class:`~streamnb.models.tan.TAN`.

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

    def __init__(self, min_frequency: int = 1, estimator: str | Estimator = "laplace",
                 max_candidates: int = 50, nominal: Iterable | None = None,
                 domains: Mapping | None = None, var_smoothing: float = 1e-9) -> None:
        super().__init__(estimator=estimator, max_candidates=max_candidates, nominal=nominal,
                         domains=domains, var_smoothing=var_smoothing)
        if not (isinstance(min_frequency, int) and min_frequency >= 0):
            raise ValueError(f"min_frequency must be a non-negative int, got {min_frequency!r}")
        self.min_frequency = min_frequency
        self._tables_key: tuple[Any, int] | None = None
        self._tables: dict[tuple[int, int], tuple[np.ndarray, dict, dict]] = {}

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"min_frequency": 3}

    def _pair_tables(self) -> dict[tuple[int, int], tuple[np.ndarray, dict, dict]]:
        """N(x_i, x_j, c) for every ordered pair of candidates, per state version."""
        stats = self.stats
        key = (stats, stats.version)
        if self._tables_key != key:
            names = stats.schema.attributes.values
            candidates = self.pairs.candidates
            tables = {}
            for n, i in enumerate(candidates):
                for j in candidates[n + 1:]:
                    table, values_i, values_j = self.pairs.joint_table(stats, names[i], names[j])
                    rows_i = {v: r for r, v in enumerate(values_i)}
                    rows_j = {v: r for r, v in enumerate(values_j)}
                    tables[i, j] = (table, rows_i, rows_j)
                    tables[j, i] = (table.transpose(1, 0, 2), rows_j, rows_i)
            self._tables, self._tables_key = tables, key
        return self._tables

    def _spode_log_likelihood(self, x: Mapping) -> np.ndarray | None:
        """log Σ_i P(c, x_i) Π_j P(x_j | c, x_i) − log(#parents) over the candidates, per class,
        minus the naive factors of those candidates (None when no attribute can be a parent)."""
        stats = self.stats
        k = stats.n_classes
        a_cell, _ = self._estimator.cell_pseudocounts(stats)
        tables = self._pair_tables()
        observed = []
        for a in self.pairs.candidates:
            rows = {True: 0, False: 1} if stats.schema.kinds[a] == 1 else {
                v: r for r, v in enumerate(stats.schema.nominal_values[stats.schema.slots[a]])}
            row = self._value_row(x, a, rows)
            if row is not None:
                observed.append((a, row, rows))
        spodes = []
        naive_total = np.zeros(k)
        for a, row, rows in observed:
            naive_total += self._naive_log_theta(a, list(rows))[row]
        for i, u, rows_i in observed:
            marginal = self._marginal(i)  # (r_i, k), records where i was observed
            if marginal[u].sum() < self.min_frequency:
                continue
            total = marginal.sum()
            log_joint = np.log(marginal[u] + a_cell) - math.log(
                total + a_cell * k * len(rows_i))
            for j, v, rows_j in observed:
                if j == i:
                    continue
                table = tables[i, j][0][:, :, :k]  # (r_i, r_j, k)
                log_joint = log_joint + np.log(table[u, v] + a_cell) - np.log(
                    table[u].sum(axis=0) + a_cell * len(rows_j))
            spodes.append(log_joint)
        if not spodes:
            return None
        spodes = np.array(spodes)
        top = spodes.max(axis=0)
        average = top + np.log(np.exp(spodes - top).sum(axis=0)) - math.log(len(spodes))
        return average - naive_total

    def _log_likelihood_one(self, x: Mapping):
        scores = super()._log_likelihood_one(x)
        if scores is not None:
            spode = self._spode_log_likelihood(x)
            if spode is not None:  # replace the class prior and candidates' naive factors
                finite = np.frombuffer(scores[0])
                prior, _ = self._estimator.log_class_prior(self.stats)
                finite += spode - prior
        return scores

    def predict_proba_one(self, x: Mapping) -> dict[Any, float]:
        scores = self._log_likelihood_one(x)
        return posterior(self.stats.labels.values, *scores) if scores else {}

    def _add_batch_terms(self, batch: Any, finite: np.ndarray) -> None:
        """Per record (the one-dependence sums do not factor over a batch)."""

    def _joint_log_likelihood(self, records: Sequence[Mapping], where: str
                              ) -> tuple[np.ndarray, np.ndarray]:
        finite, zeros = super()._joint_log_likelihood(records, where)
        prior, _ = self._estimator.log_class_prior(self.stats)
        for r, x in enumerate(records_of(records)):
            spode = self._spode_log_likelihood(x)
            if spode is not None:
                finite[r] += spode - prior
        return finite, zeros
